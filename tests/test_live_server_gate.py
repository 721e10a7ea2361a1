"""The live server's gate between tests (tests/conftest.py ``_Gate``): a request that comes
while no test runs is refused without the application, and the end of a test waits for
the requests inside, a streamed body counting until the server closes it."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from typing import Any

import pytest


def _streaming_app(reads: list[str]) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> Any:
        start_response("200 OK", [("Content-Type", "text/plain")])

        def body() -> Any:
            reads.append("first")
            yield b"one"
            reads.append("second")
            yield b"two"

        return body()

    return app


def _call(app: Any) -> tuple[list[str], Any]:
    statuses: list[str] = []
    body = app({"PATH_INFO": "/"}, lambda status, headers: statuses.append(status))
    return statuses, body


def test_a_closed_gate_answers_503_without_calling_the_application(live_server_gate: Any) -> None:
    reads: list[str] = []
    gate = type(live_server_gate)()
    statuses, body = _call(gate.wrap(_streaming_app(reads)))
    assert statuses == ["503 Service Unavailable"]
    assert list(body) == [b""]
    assert reads == []
    assert gate.wait_empty(timeout=0) == 0


def test_an_open_gate_counts_a_streamed_answer_until_its_body_is_closed(
    live_server_gate: Any,
) -> None:
    reads: list[str] = []
    gate = type(live_server_gate)()
    gate.set_open(True)
    statuses, body = _call(gate.wrap(_streaming_app(reads)))
    assert statuses == ["200 OK"]
    iterator = iter(body)
    assert next(iterator) == b"one"
    gate.set_open(False)  # the test ends while the stream is still being read
    assert gate.wait_empty(timeout=0.05) == 1

    finished = threading.Event()

    def finish() -> None:
        assert list(iterator) == [b"two"]
        body.close()
        finished.set()

    threading.Timer(0.05, finish).start()
    assert gate.wait_empty(timeout=10) == 0
    assert finished.is_set()
    assert reads == ["first", "second"]
    body.close()  # closing twice counts once
    assert gate.wait_empty(timeout=0) == 0


def test_an_application_error_leaves_the_gate_empty(live_server_gate: Any) -> None:
    gate = type(live_server_gate)()
    gate.set_open(True)

    def broken(environ: dict[str, Any], start_response: Any) -> Any:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        _call(gate.wrap(broken))
    assert gate.wait_empty(timeout=0) == 0


def test_the_live_server_is_open_during_a_test(live_server: Any) -> None:
    with urllib.request.urlopen(f"{live_server.url}/healthz", timeout=10) as answer:
        assert answer.status == 200


def test_the_live_server_refuses_requests_between_tests(
    live_server: Any, live_server_gate: Any
) -> None:
    """Closed (as after a test): 503 without the application."""
    live_server_gate.set_open(False)
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{live_server.url}/healthz", timeout=10)
        assert refused.value.code == 503
    finally:
        live_server_gate.set_open(True)
