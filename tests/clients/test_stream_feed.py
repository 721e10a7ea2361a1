"""The client package's stream reader (``briscola_client.StreamFeed``) against a scripted
server: the answers a real one may give to an opening, one after another."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# The package as a client installs it (tests/clients/test_clients_play.py installs it
# alone); here its source, as examples/bot_client.py finds it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))

from briscola_client import BriscolaError, Client, StreamFeed  # noqa: E402

THROTTLED = (
    429,
    {"Retry-After": "7"},
    {"code": "throttled", "message": "Slow down.", "details": {"retry_after": 7}},
)


def _event(number: int) -> str:
    return json.dumps({"id": number, "type": "card_played", "detail": {"id": "m1", "n": number}})


@pytest.fixture
def scripted() -> Iterator[tuple[str, list[Any], list[str]]]:
    """A server answering each request with the next of ``script`` (status, headers, body:
    a dict as JSON, bytes as they are); the paths asked for go to ``seen``."""
    script: list[Any] = []
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen.append(self.path)
            status, headers, body = script.pop(0)
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script, seen
    finally:
        server.shutdown()
        server.server_close()


def _stream(*numbers: int) -> tuple[int, dict[str, str], bytes]:
    lines = [_event(n).encode() for n in numbers] + [b'{"type": "stream_closed"}']
    return 200, {"Content-Type": "application/x-ndjson"}, b"\n".join(lines) + b"\n"


def test_an_opening_over_the_request_rate_is_waited_out_and_opened_again(
    scripted: tuple[str, list[Any], list[str]],
) -> None:
    url, script, seen = scripted
    script += [_stream(1), THROTTLED, _stream(2)]
    slept: list[float] = []
    client = Client(url, "a-token", sleep=slept.append)
    changes = StreamFeed().changes(client, "m1")
    assert [next(changes)["n"], next(changes)["n"]] == [1, 2]
    assert slept == [7.0]  # Retry-After, and nothing else waited
    # Reopened after the last event seen, so nothing is missed or repeated.
    assert seen == ["/api/v1/matches/m1/stream", *["/api/v1/matches/m1/stream?after=1"] * 2]


def test_a_client_that_does_not_wait_when_throttled_gets_the_error(
    scripted: tuple[str, list[Any], list[str]],
) -> None:
    url, script, _seen = scripted
    script += [THROTTLED]
    client = Client(url, "a-token", wait_when_throttled=False, sleep=lambda s: None)
    with pytest.raises(BriscolaError) as raised:
        next(StreamFeed().changes(client, "m1"))
    assert (raised.value.status, raised.value.code) == (429, "throttled")


def test_too_many_streams_falls_back_to_polling(
    scripted: tuple[str, list[Any], list[str]],
) -> None:
    url, script, seen = scripted
    too_many = {"code": "too_many_streams", "message": "Too many streams.", "details": {}}

    class Fallback:
        def changes(self, client: Any, match_id: str) -> Iterator[Any]:
            yield {"id": match_id, "polled": True}

    script += [(429, {"Retry-After": "3"}, too_many)]
    client = Client(url, "a-token", sleep=lambda s: None)
    assert next(StreamFeed(Fallback()).changes(client, "m1")) == {"id": "m1", "polled": True}
    assert seen == ["/api/v1/matches/m1/stream"]
