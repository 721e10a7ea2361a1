"""How the service is served: an ASGI server (uvicorn workers under gunicorn) with limits.

Why an ASGI server: a synchronous worker (gunicorn's sync or gthread) is held for as long
as its client takes to send the request, so a few connections that trickle their headers
or an announced body hold every worker (issue 19, item 1), and a live stream (issue 13)
would hold one for its whole life. Under uvicorn a connection is a coroutine on an event
loop: reading headers and body costs no thread, Django's ASGI handler reads the whole body
asynchronously before it hands the request to a (synchronous) view in a thread, and a
stream waits without a thread. gunicorn stays the process manager (worker restarts, its
``--timeout`` watchdog on a blocked event loop, graceful reloads), with uvicorn's own
worker class from the ``uvicorn-worker`` package (``uvicorn.workers`` is deprecated).

What this module adds, the limits a front proxy would otherwise enforce:

- ``Protocol`` (uvicorn's h11 protocol): a connection must deliver a request's headers
  within ``SERVE_HEADER_TIMEOUT`` seconds of opening (or of its previous answer), however
  it trickles them, else 408; an invalid request (a NUL in a header, say) is 400, a request
  line or headers above uvicorn's 16 KB buffer 414 or 431: all in the API's error shape.
- ``guard`` (an ASGI wrapper around Django): a request's body must arrive within
  ``SERVE_BODY_TIMEOUT`` seconds of its headers (else 408) and be at most
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (else 413 ``request_too_large``: at once when its
  Content-Length says so, as soon as that many bytes came when it is sent in chunks,
  which Django would otherwise spool to disk whatever their size, and which REST
  framework would take for an empty body: a chunked body within the limit reaches Django
  whole, with its Content-Length), a URL above
  ``SERVE_MAX_URL_LENGTH`` bytes is 414, headers above ``SERVE_MAX_HEADERS_BYTES`` 431,
  an answer that has not started within ``SERVE_REQUEST_TIMEOUT`` seconds is a 500
  ``timeout`` and an unexpected exception a 500 ``server_error``: always JSON
  ``{code, message, details}``, never uvicorn's plain text.
- ``Worker``: gunicorn's worker class for all this (``-k briscola_service.serving.Worker``),
  with gunicorn's ``--keep-alive`` as uvicorn's idle keep-alive timeout.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn_worker import UvicornWorker

logger = logging.getLogger("briscola_service.serving")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _seconds(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


# Read at import, in each worker (the environment is the configuration, as in settings.py).
HEADER_TIMEOUT = _seconds("SERVE_HEADER_TIMEOUT", 10.0)
BODY_TIMEOUT = _seconds("SERVE_BODY_TIMEOUT", 20.0)
REQUEST_TIMEOUT = _seconds("SERVE_REQUEST_TIMEOUT", 30.0)
MAX_URL_LENGTH = int(os.environ.get("SERVE_MAX_URL_LENGTH", 8190))
MAX_HEADERS_BYTES = int(os.environ.get("SERVE_MAX_HEADERS_BYTES", 32768))
# The largest request body, Django's own limit (settings.DATA_UPLOAD_MAX_MEMORY_SIZE).
MAX_BODY_BYTES = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", 256 * 1024))

_REASONS = {
    400: b"Bad Request",
    408: b"Request Timeout",
    413: b"Content Too Large",
    414: b"URI Too Long",
    431: b"Request Header Fields Too Large",
    500: b"Internal Server Error",
}


def error_json(code: str, message: str, details: dict[str, Any] | None = None) -> bytes:
    """The API's error body (as briscola_service.exceptions.error_body, without Django)."""
    return json.dumps({"code": code, "message": message, "details": details or {}}).encode()


def _raw_response(status: int, body: bytes) -> bytes:
    head = (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n" % (status, _REASONS[status], len(body))
    )
    return head + body


class Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on request headers and JSON protocol errors."""

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        self._arm_header_timer()  # the next request's headers: the same deadline
        super().on_response_complete()

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._header_timeout)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or not self._waiting_for_headers():
            return
        received = bool(self.conn.trailing_data[0])
        if received:  # a request began but its headers did not arrive in time: say so
            message = f"The request's headers did not arrive within {HEADER_TIMEOUT:g} s."
            self.transport.write(_raw_response(408, error_json("request_timeout", message)))
        self.transport.close()  # an idle connection is just closed, as keep-alive does

    def send_400_response(self, msg: str) -> None:
        """An invalid request (h11 refused it): 400, or 414/431 when too large to buffer."""
        status, code, message = 400, "malformed_request", "The HTTP request is invalid."
        pending = self.conn.trailing_data[0]
        limit = self.conn._max_incomplete_event_size  # type: ignore[attr-defined]
        if len(pending) > limit:
            if b"\r\n" not in pending[: limit + 2]:
                status, code = 414, "uri_too_long"
                message = "The request's URL is too long."
            else:
                status, code = 431, "headers_too_large"
                message = "The request's headers are too large."
        self.logger.warning("%s (%d)", msg, status)
        self.transport.write(_raw_response(status, error_json(code, message)))
        self.transport.close()


async def _send_error(send: Send, status: int, body: bytes) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def guard(app: ASGIApp) -> ASGIApp:
    """Wrap an ASGI app with the request limits above (see the module's docstring)."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        url_length = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if url_length > MAX_URL_LENGTH:
            message = f"The request's URL is longer than {MAX_URL_LENGTH} bytes."
            body = error_json("uri_too_long", message, {"max_bytes": MAX_URL_LENGTH})
            await _send_error(send, 414, body)
            return
        headers_bytes = sum(len(name) + len(value) + 4 for name, value in scope["headers"])
        if headers_bytes > MAX_HEADERS_BYTES:
            message = f"The request's headers are larger than {MAX_HEADERS_BYTES} bytes."
            body = error_json("headers_too_large", message, {"max_bytes": MAX_HEADERS_BYTES})
            await _send_error(send, 431, body)
            return

        # With Transfer-Encoding the body is framed in chunks whatever Content-Length says
        # (RFC 9112, 6.3; h11 reads it so): its length is counted here, never believed.
        chunked = _header(scope, b"transfer-encoding") is not None
        declared = None if chunked else _content_length(scope)
        if declared is not None and declared > MAX_BODY_BYTES:
            await _send_error(send, 413, _too_large({"content_length": declared}))
            return
        started = time.monotonic()
        body_done = False
        body_timed_out = False
        response_started = False
        answered = False

        async def limited_receive() -> Message:
            """The body must be complete BODY_TIMEOUT s after the headers; after that the
            app is told the client left (Django then gives up on the request)."""
            nonlocal body_done, body_timed_out
            if body_done:
                return await receive()
            remaining = BODY_TIMEOUT - (time.monotonic() - started)
            try:
                message = await asyncio.wait_for(receive(), max(0.0, remaining))
            except TimeoutError:
                body_timed_out = True
                return {"type": "http.disconnect"}
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal response_started
            if answered:  # the guard answered already (a timeout): the late answer is dropped
                return
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        if chunked:
            # Chunked: read it whole here (within the limits), then hand it on as one.
            chunks: list[bytes] = []
            size = 0
            while True:
                message = await limited_receive()
                if message["type"] != "http.request":
                    break
                chunks.append(message.get("body", b""))
                size += len(chunks[-1])
                if size > MAX_BODY_BYTES:
                    await _send_error(send, 413, _too_large({}))
                    return
                if not message.get("more_body", False):
                    break
            if body_timed_out:
                message = f"The request's body did not arrive within {BODY_TIMEOUT:g} s."
                await _send_error(send, 408, error_json("request_timeout", message))
                return
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
            scope = {**scope, "headers": [*headers, (b"content-length", b"%d" % size)]}
            whole: list[Message] = [{"type": "http.request", "body": b"".join(chunks)}]

            async def buffered_receive() -> Message:
                return whole.pop() if whole else await receive()

            task = asyncio.ensure_future(app(scope, buffered_receive, tracked_send))
        else:
            task = asyncio.ensure_future(app(scope, limited_receive, tracked_send))
        try:
            # Shielded: a timeout stops waiting for the answer, not the request's thread
            # (a synchronous view cannot be interrupted; it finishes on its own).
            await asyncio.wait_for(asyncio.shield(task), REQUEST_TIMEOUT)
        except TimeoutError:
            if response_started:  # a stream, say: it may run as long as it likes
                await task
                return
            logger.error(
                "%s %s: no answer within %g s", scope["method"], scope["path"], REQUEST_TIMEOUT
            )
            answered = True
            task.add_done_callback(_log_late_failure)
            message = (
                f"The server did not answer within {REQUEST_TIMEOUT:g} s. A write may or may "
                "not have been applied: retry it with the same Idempotency-Key."
            )
            await _send_error(send, 500, error_json("timeout", message))
            return
        except Exception:
            logger.exception("%s %s: unhandled error", scope["method"], scope["path"])
            if not response_started:
                await _send_error(send, 500, error_json("server_error", "Internal server error."))
            return
        if body_timed_out and not response_started:
            message = f"The request's body did not arrive within {BODY_TIMEOUT:g} s."
            await _send_error(send, 408, error_json("request_timeout", message))

    return guarded


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value)
    return None


def _content_length(scope: Scope) -> int | None:
    """The body's announced length (None: none announced, or not a number, which Django's
    middleware answers with its own 400)."""
    raw = _header(scope, b"content-length")
    if raw is None or not raw.strip().isdigit():
        return None
    return int(raw)


def _too_large(details: dict[str, Any]) -> bytes:
    message = f"The request body is larger than {MAX_BODY_BYTES} bytes."
    return error_json("request_too_large", message, {"max_bytes": MAX_BODY_BYTES, **details})


def _log_late_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("a request that timed out failed later", exc_info=task.exception())


class Worker(UvicornWorker):
    """gunicorn's worker class: uvicorn on asyncio with ``Protocol``."""

    # proxy_headers off: uvicorn would otherwise take a client's address from its own
    # X-Forwarded-For whenever it connects from 127.0.0.1 (its forwarded_allow_ips), under
    # the throttles' feet; NUM_PROXIES alone decides whom to believe (DRF's client IP).
    CONFIG_KWARGS = {
        "loop": "asyncio",
        "http": Protocol,
        "server_header": False,
        "proxy_headers": False,
    }


__all__ = ["Protocol", "Worker", "guard"]
