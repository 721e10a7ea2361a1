"""Prometheus metrics, and the ``/metrics`` endpoint that serves them to the allow-list.

One registry per process; with several processes per host (web workers under gunicorn,
a Celery worker's pool) set ``PROMETHEUS_MULTIPROC_DIR`` to a directory the processes
share and that is emptied at start: prometheus-client then keeps each process's values in
files there, and whoever serves them (``/metrics`` in the web tier, the worker's own
exporter on ``CELERY_METRICS_PORT``) adds them up.

Who may read them: addresses in ``METRICS_ALLOWED_IPS`` (default: loopback only), or a
request carrying ``Authorization: Bearer <METRICS_TOKEN>`` when that is set. Anyone else
gets 403 ``metrics_forbidden``: the numbers describe the service's load and its players'
activity, which is not public.
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client import REGISTRY as DEFAULT_REGISTRY

from briscola_service.exceptions import error_body

# Seconds; from a cached 304 to a move that ends a deal, and a bot's think time.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUEST_SECONDS = Histogram(
    "briscola_http_request_duration_seconds",
    "Time to answer an HTTP request, by route pattern, method and status.",
    ["route", "method", "status"],
    buckets=_LATENCY_BUCKETS,
)
MOVES = Counter(
    "briscola_moves_total",
    "Moves sent to POST /api/v1/matches/{id}/moves, by outcome: accepted, or the error code.",
    ["outcome"],
)
BOT_REPLY_SECONDS = Histogram(
    "briscola_bot_reply_seconds",
    "From a person's card (as stored) to the bot's answering card, by bot level.",
    ["level"],
    buckets=_LATENCY_BUCKETS,
)
BOT_THINK_SECONDS = Histogram(
    "briscola_bot_think_seconds",
    "Time a bot spent choosing its card, by level.",
    ["level"],
    buckets=_LATENCY_BUCKETS,
)
BOT_FAIR = Counter(
    "briscola_bot_fair_total",
    "Bot reply tasks sent fairly, by task and what each found in the fair queues: taken (a"
    " reply in turn), deferred (every account with replies waiting was at its limit), idle"
    " (nothing waiting), unreachable (Redis failed: the task's own reply was played).",
    ["task", "outcome"],
)
BOT_FAIR_WAIT_SECONDS = Histogram(
    "briscola_bot_fair_wait_seconds",
    "Time a bot reply waited in its account's fair queue before a worker took it, by task.",
    ["task"],
    buckets=_LATENCY_BUCKETS,
)
TASKS = Counter(
    "briscola_tasks_total",
    "Celery tasks by name and what happened: queued, run, retried, failed.",
    ["task", "state"],
)
SWEEPS = Counter("briscola_sweeps_total", "Periodic sweeps run, by sweep.", ["sweep"])
SWEEP_FOUND = Counter(
    "briscola_sweep_found_total",
    "Work a periodic sweep found undone and queued again, by sweep.",
    ["sweep"],
)
RATINGS_APPLIED = Counter(
    "briscola_rating_changes_applied_total",
    "Rating changes written by the rating task (one per player of a rated match).",
)
OPEN_STREAMS = Gauge(
    "briscola_open_streams",
    "Live streams (SSE or NDJSON) open now.",
    multiprocess_mode="livesum",
)


def registry() -> Any:
    """What to serve: every process's values when they share a directory, else ours."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        collected = CollectorRegistry()
        multiprocess.MultiProcessCollector(collected)  # type: ignore[no-untyped-call]
        return collected
    return DEFAULT_REGISTRY


def _client_ip(request: HttpRequest) -> str:
    """The client's address as the throttles see it (``NUM_PROXIES`` trusted proxies)."""
    from rest_framework.throttling import BaseThrottle

    return str(BaseThrottle().get_ident(request))  # type: ignore[arg-type]


def _allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        sent = request.headers.get("Authorization", "")
        if hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            return True
    return _client_ip(request) in settings.METRICS_ALLOWED_IPS


def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format, for the allow-list only."""
    if not _allowed(request):
        return JsonResponse(
            error_body("metrics_forbidden", "Metrics are served to the operators only."),
            status=403,
        )
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)


class RequestMetricsMiddleware:
    """Times every request by route pattern (``api/v1/matches/<str:match_id>``, never the
    raw path, so the label set stays small) and counts the outcome of every move. Works in
    both modes, so an async view (a stream) is not pushed through a thread for it."""

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
        started = time.perf_counter()
        response: HttpResponse = self.get_response(request)
        _observe(request, response, started)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response: HttpResponse = await self.get_response(request)
        _observe(request, response, started)
        return response


def _observe(request: HttpRequest, response: HttpResponse, started: float) -> None:
    match = getattr(request, "resolver_match", None)
    route = str(match.route) if match is not None else "unmatched"
    REQUEST_SECONDS.labels(route, request.method or "", str(response.status_code)).observe(
        time.perf_counter() - started
    )
    if match is not None and match.url_name == "match-moves" and request.method == "POST":
        MOVES.labels(_move_outcome(response)).inc()


def _move_outcome(response: HttpResponse) -> str:
    if response.status_code == 201:
        return "accepted"
    data = getattr(response, "data", None)
    if isinstance(data, dict) and isinstance(data.get("code"), str):
        return data["code"]
    return f"http_{response.status_code}"


def start_worker_exporter(port: int) -> None:
    """Serve this Celery worker's metrics (its pool's too, in multiprocess mode)."""
    from prometheus_client import start_http_server

    start_http_server(port, addr=settings.CELERY_METRICS_ADDR, registry=registry())
