"""Reading live streams in tests: in process (Django's ASGI test client) and over HTTP.

In process, a test runs one coroutine (``run``) on an event loop of its own: the streams
are opened with ``AsyncClient`` (the ASGI path, so they stay open), and the writes are
made with ``sync_to_async``, which runs them in the test's own thread. The streams read
the database from their own threads, so these tests need committed data
(``transactional_db``), which also makes ``transaction.on_commit`` publish for real.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from asgiref.sync import async_to_sync, sync_to_async
from django.test import AsyncClient

from accounts.models import User
from games.live.events import position
from games.matches import selectors

T = TypeVar("T")
SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    """Run ``scenario`` to its end on an event loop (from a synchronous test)."""
    return async_to_sync(scenario)()


def in_test_thread(fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """``fn`` made awaitable, run in the test's thread (its database connection)."""
    return sync_to_async(fn, thread_sensitive=True)


def parse_sse(block: str) -> dict[str, Any] | None:
    """One SSE block: its event (id and type checked against the JSON), or None (a comment,
    a ``retry``)."""
    fields: dict[str, str] = {}
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        fields[name] = value.removeprefix(" ")
    if "data" not in fields:
        return None
    event: dict[str, Any] = json.loads(fields["data"])
    assert fields["id"] == str(event["id"]), block
    assert fields["event"] == event["type"], block
    return event


class Stream:
    """An open stream's events, read one at a time; heartbeats counted."""

    def __init__(self, response: Any, wire: str) -> None:
        self.response = response
        self.wire = wire
        self.status = response.status_code
        self._chunks: AsyncIterator[bytes] = (
            response.streaming_content.__aiter__() if response.streaming else _nothing()
        )
        self._buffer = ""
        self.heartbeats = 0
        self.ended = False
        self.raw: list[str] = []  # every block or line as received

    async def next(self, timeout: float = 20.0) -> dict[str, Any] | None:
        """The next event; None once the server ended the stream. TimeoutError when none
        came within ``timeout`` seconds (heartbeats do not count)."""
        separator = "\n\n" if self.wire == SSE else "\n"
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            while separator in self._buffer:
                block, self._buffer = self._buffer.split(separator, 1)
                self.raw.append(block)
                if self.wire == SSE:
                    if block.startswith(": "):
                        self.heartbeats += 1
                    event = parse_sse(block)
                else:
                    if block == "":
                        self.heartbeats += 1
                    event = json.loads(block) if block else None
                if event is not None:
                    return event
            if self.ended:
                return None
            try:
                left = deadline - asyncio.get_running_loop().time()
                chunk = await asyncio.wait_for(self._chunks.__anext__(), max(left, 0.001))
            except StopAsyncIteration:
                self.ended = True
                continue
            self._buffer += chunk.decode()

    async def until(self, last_id: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """Events up to the one with id ``last_id`` (or the stream's end)."""
        events = []
        while True:
            event = await self.next(timeout)
            if event is None:
                return events
            events.append(event)
            if event["id"] >= last_id:
                return events

    async def rest(self, timeout: float = 20.0) -> list[dict[str, Any]]:
        """Every event until the server ends the stream."""
        events = []
        while (event := await self.next(timeout)) is not None:
            events.append(event)
        return events

    async def close(self) -> None:
        """Hang up as Django's ASGI handler does when the client goes away: the body's
        iterator is closed, then the response (its closers: a stream never read still
        gives its slot back)."""
        if self.response.streaming:
            await self._chunks.aclose()  # type: ignore[attr-defined]
            await self.response._iterator.aclose()
        await sync_to_async(self.response.close)()


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""


def headers_for(user: User | None, wire: str, **extra: str) -> dict[str, str]:
    headers = {"Accept": wire, **extra}
    if user is not None:
        headers["Authorization"] = f"Token {user.auth_token.key}"
    return headers


class _ClientAt(AsyncClient):
    """An AsyncClient whose requests come from ``address`` (the ASGI scope's ``client``;
    its keyword arguments all become headers)."""

    def __init__(self, address: str) -> None:
        super().__init__()
        self.address = address

    async def request(self, **request: Any) -> Any:
        return await super().request(**request, client=[self.address, 0])


async def open_stream(
    path: str,
    user: User | None,
    wire: str = SSE,
    *,
    cookies: Any = None,
    address: str = "127.0.0.1",
    **headers: str,
) -> Stream:
    """``cookies``: a test client's (a signed-in browser's session), else none;
    ``address``: the client's (the ASGI scope's ``client``)."""
    client = _ClientAt(address)
    if cookies is not None:
        client.cookies = cookies
    response = await client.get(path, headers=headers_for(user, wire, **headers))
    return Stream(response, wire)


def match_position(match_id: Any) -> int:
    """The match's position now (the id of the event that leads to it)."""
    found = selectors.match_version(match_id=match_id)
    assert found is not None
    return position(found[1])


def timeless_detail(detail: dict[str, Any]) -> dict[str, Any]:
    """A match detail without ``seconds_left``, which counts down between two builds of
    one version (the ``deadline`` it counts to is compared)."""
    return {k: v for k, v in detail.items() if k != "seconds_left"}


def timeless(event: dict[str, Any]) -> dict[str, Any]:
    """An event whose detail is without ``seconds_left`` (:func:`timeless_detail`)."""
    detail = event.get("detail")
    if not isinstance(detail, dict):
        return event
    return {**event, "detail": timeless_detail(detail)}


def ids_strictly_increase(events: list[dict[str, Any]]) -> bool:
    ids = [e["id"] for e in events]
    return all(a < b for a, b in zip(ids, ids[1:], strict=False))


def sse_lines(events: Iterator[dict[str, Any]]) -> list[str]:
    return [json.dumps(e, sort_keys=True) for e in events]
