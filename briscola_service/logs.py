"""Logs: one JSON object per line in production, plain lines under ``make run``; and a
request id on every line, from the HTTP request into the Celery tasks it queues.

The id is the client's ``X-Request-ID`` when it sends a sane one (letters, digits and
``._-``, at most 64), else a fresh one; it is answered back in ``X-Request-ID``. A task
queued while a request (or another task) runs carries the id in its message headers, and
the worker sets it while the task runs: a move and the bot's reply it caused log the
same id, as does the bot's next reply.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse

REQUEST_ID: ContextVar[str] = ContextVar("request_id", default="-")
HEADER = "X-Request-ID"
_SANE = re.compile(r"[A-Za-z0-9._-]{1,64}")


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record (``%(request_id)s``): the request's
    being served, or the one a record names (Django logs a request's 4xx and 5xx, the
    ``django.request`` lines, with the request, once the middleware is done: the operator
    audit found all of them with ``-``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        current = REQUEST_ID.get()
        if current == "-":
            current = getattr(getattr(record, "request", None), "request_id", current)
        record.request_id = current
        return True


IDLE_RESULTS = frozenset({"0", "None", "False"})
"""What a periodic task returns when it found nothing to do (a sweep's count, nothing)."""


class QuietRoutineFilter(logging.Filter):
    """Drops the INFO lines of the periodic tasks (``CELERY_BEAT_SCHEDULE``) that did
    nothing: beat's "Sending due task", the worker's "received", and "succeeded" with an
    idle result (:data:`IDLE_RESULTS`). The clocks' sweep runs every second: an idle
    service wrote three such lines a second, about 100 MB a day (the operator audit). A
    sweep that found something (a count above 0), and every warning or error, are kept;
    ``LOG_ROUTINE_TASKS=true`` keeps them all."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not record.name.startswith("celery."):
            return True
        if record.name == "celery.beat":
            args = record.args if isinstance(record.args, tuple) else ()
            return not (
                str(record.msg).startswith("Scheduler: Sending due task")
                and len(args) == 2
                and args[1] in _periodic_tasks()
            )
        data = getattr(record, "data", None)
        if not isinstance(data, dict) or data.get("name") not in _periodic_tasks():
            return True
        if "return_value" in data:  # "succeeded"
            return str(data["return_value"]) not in IDLE_RESULTS
        return record.name != "celery.worker.strategy"  # "received"


def _periodic_tasks() -> set[str]:
    from django.conf import settings

    return {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}


def _incoming(request: HttpRequest) -> str:
    sent = request.headers.get(HEADER, "")
    return sent if _SANE.fullmatch(sent) else uuid.uuid4().hex


class RequestIdMiddleware:
    """Sets the request id for the request's duration and answers it in ``X-Request-ID``.
    Works in both modes, so that async views (the streams) keep theirs."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        request.request_id = request_id = _incoming(request)  # type: ignore[attr-defined]
        token = REQUEST_ID.set(request_id)
        try:
            response: HttpResponse = self.get_response(request)
        finally:
            REQUEST_ID.reset(token)
        response[HEADER] = request_id
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        request.request_id = request_id = _incoming(request)  # type: ignore[attr-defined]
        token = REQUEST_ID.set(request_id)
        try:
            handler: Callable[[HttpRequest], Awaitable[HttpResponse]] = self.get_response
            response = await handler(request)
        finally:
            REQUEST_ID.reset(token)
        response[HEADER] = request_id
        return response


# --- Celery: the id travels in the task's headers --------------------------------------


def task_headers_add(headers: dict[str, Any] | None = None, **_: Any) -> None:
    """before_task_publish: the id of the request or task that queues this one."""
    current = REQUEST_ID.get()
    if headers is not None and current != "-":
        headers.setdefault("request_id", current)


def task_request_id_set(task: Any = None, **_: Any) -> None:
    """task_prerun: run the task under the id it was queued with (when it has one; a task
    run in-process, without a broker, already runs under its request's)."""
    sent = getattr(getattr(task, "request", None), "request_id", None)
    if isinstance(sent, str) and _SANE.fullmatch(sent):
        task.request.request_id_token = REQUEST_ID.set(sent)


def task_request_id_reset(task: Any = None, **_: Any) -> None:
    """task_postrun: back to no id (a worker's process runs many tasks)."""
    token = getattr(getattr(task, "request", None), "request_id_token", None)
    if token is not None:
        REQUEST_ID.reset(token)
        task.request.request_id_token = None
