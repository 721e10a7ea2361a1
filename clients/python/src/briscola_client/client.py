"""The client: one object per account (its token), one method per API operation."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Protocol, cast

from briscola_client.errors import BriscolaError, error_for
from briscola_client.types import (
    AccessToken,
    Account,
    Events,
    Match,
    MatchFormat,
    MatchStatus,
    MatchSummary,
    Scope,
)

USER_AGENT = "briscola-client/0.1"
SeatSpec = str | dict[str, str]  # "open", {"bot": "greedy"} or {"user": "alice"}


class Response:
    """What :meth:`Client.request` answers: the status, the headers and the decoded body
    (None for a 204 or a 304)."""

    def __init__(self, status: int, headers: Any, body: Any) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def etag(self) -> str | None:
        value = self.headers.get("ETag") if self.headers is not None else None
        return str(value) if value else None


class MatchFeed(Protocol):
    """How :meth:`Client.watch` learns that a match changed. :class:`StreamFeed` waits on
    the service's match stream; :class:`PollingFeed` (the default) polls with the match's
    ``ETag``."""

    def changes(self, client: Client, match_id: str) -> Iterator[Match]:
        """Yield the match each time it changed (the first time: as it is now)."""
        ...


class PollingFeed:
    """Polls ``GET /matches/{id}`` every ``interval`` seconds, sending the last ``ETag``
    back: while nothing changed the answer is a bodiless 304, which costs the server one
    small query (it still counts against the request rate: keep ``interval`` at or above
    0.2 s for a long game)."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval

    def changes(self, client: Client, match_id: str) -> Iterator[Match]:
        etag: str | None = None
        while True:
            response = client.request("GET", f"/matches/{_seg(match_id)}", etag=etag)
            if response.status != 304:
                etag = response.etag
                yield cast(Match, response.body)
            client.sleep(self.interval)


class StreamFeed:
    """Waits on the match's live stream (``GET /matches/{id}/stream``, NDJSON): each event
    carries the match as this account sees it (``detail``), so nothing is polled. When the
    stream ends (the server closed it, a proxy cut it, a restart) it reconnects with
    ``?after=`` the last event's id and misses nothing; an empty line is a heartbeat. A
    server without streams (404) or with too many open for this account (429
    ``too_many_streams``) is polled instead (``fallback``); an opening over the account's
    request rate (429 ``throttled``) is waited out (``Retry-After``), as the client's other
    requests are, unless ``wait_when_throttled`` is false."""

    def __init__(self, fallback: MatchFeed | None = None, *, read_timeout: float = 60.0) -> None:
        self.fallback: MatchFeed = fallback if fallback is not None else PollingFeed()
        self.read_timeout = read_timeout  # above the server's 15 s heartbeat

    def changes(self, client: Client, match_id: str) -> Iterator[Match]:
        last: int | None = None
        while True:
            query = "" if last is None else f"?after={last}"
            url = f"{client.base_url}/api/v1/matches/{_seg(match_id)}/stream{query}"
            headers = {"Accept": "application/x-ndjson", "User-Agent": USER_AGENT}
            if client.token:
                headers["Authorization"] = f"Bearer {client.token}"
            request = urllib.request.Request(url, headers=headers)
            seen = last
            try:
                with urllib.request.urlopen(request, timeout=self.read_timeout) as answer:
                    for line in answer:
                        if not line.strip():
                            continue  # a heartbeat
                        event = json.loads(line)
                        if event.get("type") == "stream_closed":
                            break
                        last = int(event["id"])
                        yield cast(Match, event["detail"])
                if last == seen:  # ended with nothing new (a server that cannot hold it)
                    client.sleep(0.2)
            except urllib.error.HTTPError as exc:
                error = error_for(exc.code, _json(exc.read()), str(exc.reason))
                if exc.code in (404, 406) or error.code == "too_many_streams":
                    yield from self.fallback.changes(client, match_id)
                    return
                if exc.code == 429 and client.wait_when_throttled:
                    # An opening counts in the account's request rate (``throttled``):
                    # waited out as any request is, then the stream is opened again.
                    client.sleep(_retry_after(exc.headers, error))
                    continue
                raise error from None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                client.sleep(0.5)  # cut off: reconnect after the last event seen


class Client:
    """A client of the Briscola API for one account.

    >>> client = Client.register("http://127.0.0.1:8000", "carla", "a-long-password-1")
    >>> match = client.create_match(players=2, seats=[{"bot": "greedy"}])
    >>> deal = match["current_deal"]
    >>> client.play(match["id"], deal["legal"][0], deal["ply"])  # doctest: +SKIP

    Every error answer raises a :class:`~briscola_client.errors.BriscolaError` subclass
    carrying the answer's ``code``. A 429 is waited out (``Retry-After``) unless
    ``wait_when_throttled`` is false.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        wait_when_throttled: bool = True,
        feed: MatchFeed | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.wait_when_throttled = wait_when_throttled
        self.feed: MatchFeed = feed if feed is not None else PollingFeed()
        self._sleep = sleep

    # -- sessions ---------------------------------------------------------------------

    @classmethod
    def register(
        cls, base_url: str, username: str, password: str, *, bot: bool = False, **kwargs: Any
    ) -> Client:
        """Create an account (``bot``: a bot you run) and a client with its token."""
        client = cls(base_url, **kwargs)
        body = {"username": username, "password": password, "bot": bot}
        client.token = str(client.call("POST", "/auth/register", body)["token"])
        return client

    @classmethod
    def login(cls, base_url: str, username: str, password: str, **kwargs: Any) -> Client:
        """A client with the account's token, obtained with its password."""
        client = cls(base_url, **kwargs)
        body = {"username": username, "password": password}
        client.token = str(client.call("POST", "/auth/token", body)["token"])
        return client

    def me(self) -> Account:
        return cast(Account, self.call("GET", "/auth/me"))

    def become_bot(self) -> Account:
        """Mark this account a bot's (only before its first match)."""
        return cast(Account, self.call("POST", "/auth/me/bot"))

    def revoke_account_token(self) -> None:
        """Revoke the account's token (the one ``login`` gives); personal ones stay."""
        self.call("POST", "/auth/token/revoke")

    # -- personal access tokens -------------------------------------------------------

    def tokens(self) -> list[AccessToken]:
        return cast(list[AccessToken], self.call("GET", "/auth/tokens"))

    def create_token(self, name: str, scopes: list[Scope] | None = None) -> AccessToken:
        """A new personal access token; its key is in ``["token"]``, shown this once."""
        body: dict[str, Any] = {"name": name}
        if scopes is not None:
            body["scopes"] = list(scopes)
        return cast(AccessToken, self.call("POST", "/auth/tokens", body))

    def revoke_token(self, token_id: int) -> None:
        self.call("DELETE", f"/auth/tokens/{int(token_id)}")

    # -- matches ----------------------------------------------------------------------

    def create_match(
        self,
        *,
        players: int = 2,
        format: MatchFormat = "single",
        seats: list[SeatSpec],
        public: bool = False,
        rated: bool = False,
        partners_last_hand: bool = True,
        idempotency_key: str | None = None,
    ) -> Match:
        """Create a match; you take seat 0. ``seats`` lists seats 1 onwards."""
        body = {
            "players": players,
            "format": format,
            "seats": seats,
            "public": public,
            "rated": rated,
            "options": {"partners_last_hand": partners_last_hand},
        }
        key = idempotency_key or str(uuid.uuid4())
        return cast(Match, self.call("POST", "/matches", body, idempotency_key=key))

    def matches(
        self, *, status: MatchStatus | None = None, mine: bool = False, open: bool = False
    ) -> Iterator[MatchSummary]:
        """Every match you may see (newest first), page after page. ``open``: those you
        can join (an open seat, or one you are invited to)."""
        query: dict[str, str] = {"page_size": "100"}
        if status:
            query["status"] = status
        if mine:
            query["mine"] = "true"
        if open:
            query["open"] = "true"
        path: str | None = "/matches?" + urllib.parse.urlencode(query)
        while path is not None:
            page = self.call("GET", path)
            yield from cast(list[MatchSummary], page["results"])
            following = page.get("next")
            path = _relative(following) if following else None

    def match(self, match_id: str) -> Match:
        return cast(Match, self.call("GET", f"/matches/{_seg(match_id)}"))

    def join(self, match_id: str, seat: int | None = None) -> Match:
        body = {} if seat is None else {"seat": seat}
        return cast(Match, self.call("POST", f"/matches/{_seg(match_id)}/join", body))

    def abort(self, match_id: str) -> Match:
        return cast(Match, self.call("POST", f"/matches/{_seg(match_id)}/abort"))

    def resign(self, match_id: str) -> Match:
        return cast(Match, self.call("POST", f"/matches/{_seg(match_id)}/resign"))

    def play(
        self,
        match_id: str,
        card: str,
        ply: int,
        *,
        deal: int | None = None,
        idempotency_key: str | None = None,
    ) -> Match:
        """Play ``card`` at the deal's ``ply`` you saw (in deal ``deal``, the
        ``current_deal.id`` you saw: recommended, so a move meant for a deal that is over
        is refused with ``stale_deal`` instead of landing in the next one); answers the
        match as the move left it. Sent with an ``Idempotency-Key``, so a retry after a
        lost answer is safe."""
        key = idempotency_key or str(uuid.uuid4())
        body: dict[str, Any] = {"card": card, "ply": ply}
        if deal is not None:
            body["deal"] = deal
        path = f"/matches/{_seg(match_id)}/moves"
        return cast(Match, self.call("POST", path, body, idempotency_key=key))

    def events(self, match_id: str, after: int = 0) -> Events:
        path = f"/matches/{_seg(match_id)}/events?after={int(after)}"
        return cast(Events, self.call("GET", path))

    def watch(self, match_id: str) -> Iterator[Match]:
        """The match each time it changes, through this client's :class:`MatchFeed`."""
        return self.feed.changes(self, match_id)

    def wait_for_turn(self, match_id: str) -> Match:
        """The match once it is your turn, or once it is over."""
        for match in self.watch(match_id):
            deal = match["current_deal"]
            if match["status"] in ("finished", "aborted"):
                return match
            if match["status"] == "active" and deal is not None and deal["turn"] == deal["seat"]:
                return match
        raise AssertionError("a match feed never ends")  # pragma: no cover

    # -- HTTP -------------------------------------------------------------------------

    def call(
        self, method: str, path: str, body: Any = None, *, idempotency_key: str | None = None
    ) -> Any:
        """The decoded body of the answer to ``method path`` (under ``/api/v1``)."""
        return self.request(method, path, body, idempotency_key=idempotency_key).body

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        etag: str | None = None,
        idempotency_key: str | None = None,
    ) -> Response:
        """Send one request; an error answer raises. Connection failures are retried (3
        times) for reads and for writes sent with an ``Idempotency-Key``."""
        url = f"{self.base_url}/api/v1{path}"
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if etag:
            headers["If-None-Match"] = etag
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        retryable = method == "GET" or idempotency_key is not None
        failures = 0
        while True:
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                    raw = answer.read()
                    return Response(answer.status, answer.headers, json.loads(raw) if raw else None)
            except urllib.error.HTTPError as exc:
                if exc.code == 304:
                    return Response(304, exc.headers, None)
                error = error_for(exc.code, _json(exc.read()), str(exc.reason))
                if exc.code == 429 and self.wait_when_throttled:
                    self.sleep(_retry_after(exc.headers, error))
                    continue
                raise error from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                failures += 1
                if not retryable or failures > 3:
                    raise BriscolaError(0, "connection_error", str(exc)) from None
                self.sleep(0.5 * failures)

    def sleep(self, seconds: float) -> None:
        self._sleep(seconds)


def _seg(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


def _relative(url: str) -> str:
    """``next`` links are absolute: the part after ``/api/v1``."""
    parsed = urllib.parse.urlsplit(url)
    path = parsed.path.split("/api/v1", 1)[-1]
    return path + (f"?{parsed.query}" if parsed.query else "")


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return {}


def _retry_after(headers: Any, error: BriscolaError) -> float:
    for value in (
        headers.get("Retry-After") if headers else None,
        error.details.get("retry_after"),
    ):
        try:
            return max(0.1, float(str(value)))
        except ValueError:
            continue
    return 1.0
