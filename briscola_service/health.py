"""Liveness and readiness, for Docker Compose, a load balancer or an orchestrator.

- ``/healthz``: the process answers (no database, no Redis): restart it if this fails.
- ``/readyz``: this process can serve: PostgreSQL (or SQLite) reachable and every
  migration applied. Stop sending it traffic while it fails.
- ``/statusz``: the service as a whole, for monitoring and alerts, not for routing: the
  same checks, plus Redis reachable when configured and a Celery worker seen within
  ``WORKER_SEEN_SECONDS`` (beat queues :func:`worker_heartbeat` every 10 s; the worker
  that runs it marks itself seen in the cache).

Why Redis and the workers are not readiness: every web process shares them, so a probe
that failed with them took every replica out of the load balancer at once, while the web
still served (an operator's audit: with Redis stopped 30 s, or every worker stopped, all
API requests answered 200 and moves were accepted; play between people needs neither).
A Redis restart also forgets the workers' mark (Redis keeps nothing on disk here), so
``/statusz`` says no worker was seen until the next heartbeat, up to 10 s.

The checks are django-health-check's (``Database``, ``Redis``) plus two of ours, run
concurrently by its view; the answer is JSON, ``{"status": "ok"|"unavailable",
"checks": {name: "OK" or what failed}}``, 200 or 503. Without a broker (``make run``)
tasks run in-process, so there is no worker to wait for.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from django.http import HttpRequest, JsonResponse
from health_check.base import HealthCheck
from health_check.checks import Database
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

WORKER_SEEN_KEY = "briscola:worker-seen"


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: this process runs and answers."""
    return JsonResponse({"status": "ok"})


@dataclasses.dataclass
class MigrationsApplied(HealthCheck):
    """Every migration this code knows is applied (a new release before ``migrate`` is
    not ready). Once seen applied, a process does not look again."""

    alias: str = "default"
    _applied = False

    def run(self) -> None:
        if MigrationsApplied._applied:
            return
        from django.db.migrations.executor import MigrationExecutor

        connection = connections[self.alias]
        with connection.temporary_connection():  # the check runs in a pool's thread
            executor = MigrationExecutor(connection)
            pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if pending:
            raise ServiceUnavailable("Migrations are not all applied.")
        MigrationsApplied._applied = True


@dataclasses.dataclass
class WorkerSeen(HealthCheck):
    """A Celery worker ran the heartbeat task within ``WORKER_SEEN_SECONDS``."""

    def run(self) -> None:
        try:
            seen = cache.get(WORKER_SEEN_KEY)
        except Exception as exc:  # the cache is Redis: down is checked by the Redis check
            raise ServiceUnavailable("The cache cannot be read.") from exc
        if not seen:
            raise ServiceUnavailable(
                f"No Celery worker seen in the last {settings.WORKER_SEEN_SECONDS} s."
            )


@dataclasses.dataclass
class RedisPing(HealthCheck):
    """Redis answers PING (django-health-check's Redis check, which reports a refused
    connection only; any failure to connect counts here)."""

    url: str = dataclasses.field(default="", repr=False)

    async def run(self) -> None:
        from redis.asyncio import Redis

        client = Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=2)
        try:
            await client.ping()
        except Exception as exc:
            raise ServiceUnavailable("Redis does not answer.") from exc
        finally:
            await client.aclose()


def worker_heartbeat() -> None:
    """Run by a worker (queued by beat): mark a worker seen, for WORKER_SEEN_SECONDS."""
    cache.set(WORKER_SEEN_KEY, 1, timeout=settings.WORKER_SEEN_SECONDS)


def _readiness_checks() -> list[Any]:
    return [Database, MigrationsApplied]


def _status_checks() -> list[Any]:
    checks = _readiness_checks()
    if settings.REDIS_URL:
        checks += [(RedisPing, {"url": settings.REDIS_URL}), WorkerSeen]
    return checks


class ReadinessView(HealthCheckView):
    """django-health-check's view, answering JSON with 503 when a check fails."""

    checks_of = staticmethod(_readiness_checks)

    def get_checks(self) -> Any:
        self.checks = self.checks_of()
        return super().get_checks()

    def render_to_response_json(self, status: int) -> JsonResponse:
        failed = any(result.error for result in self.results)
        return JsonResponse(
            {
                "status": "unavailable" if failed else "ok",
                "checks": {
                    type(result.check).__name__: (
                        getattr(result.error, "message", str(result.error))
                        if result.error
                        else "OK"
                    )
                    for result in self.results
                },
            },
            status=503 if failed else 200,
        )

    async def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        response = await super().get(request, *args, **kwargs)
        return self.render_to_response_json(response.status_code)


readyz = ReadinessView.as_view()
statusz = ReadinessView.as_view(checks_of=_status_checks)
