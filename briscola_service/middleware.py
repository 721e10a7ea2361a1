"""Middleware: the Host header checked (the probes exempt, JSON for the API); answers kept
out of shared caches; refuse oversized API bodies; answer a database outage with a clean
503; a throttled login form with a 429."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control
from rest_framework.exceptions import Throttled

from briscola_service.exceptions import error_body

logger = logging.getLogger(__name__)

# Seconds a client is told to wait when the database is unreachable.
DATABASE_RETRY_AFTER = 2


# Answered whatever the Host header says: they reveal nothing, and a container's or a load
# balancer's probe calls them by an address (127.0.0.1:8000) that ALLOWED_HOSTS, set to
# the public name, does not list.
PROBE_PATHS = frozenset({"/healthz", "/readyz", "/statusz"})


class AllowedHostsMiddleware:
    """The Host header against ``ALLOWED_HOSTS``, before anything else reads it.

    ``/healthz``, ``/readyz`` and ``/statusz`` are answered whatever the Host: with
    ALLOWED_HOSTS set to the public name only, Django refused the Compose healthcheck's
    ``http://127.0.0.1:8000/readyz`` with a 400 and the service never became healthy.
    Under ``/api/`` a Host not allowed is a 400 in the API's error shape, code
    ``invalid_host``; elsewhere (the pages, the admin) Django's own 400 page. Either way
    it is logged as Django logs it (``django.security.DisallowedHost``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info in PROBE_PATHS:
            # The probes never use the host: the raw one, not checked, for whoever asks.
            request.get_host = request._get_raw_host  # type: ignore[method-assign]
            return self.get_response(request)
        try:
            request.get_host()
        except DisallowedHost as exc:
            if not request.path.startswith("/api/"):
                raise  # Django's handler: its 400 page, logged
            logging.getLogger("django.security.DisallowedHost").error(
                str(exc), extra={"status_code": 400, "request": request}
            )
            return JsonResponse(
                error_body(
                    "invalid_host",
                    "The request's Host header names a host this service does not serve.",
                ),
                status=400,
            )
        return self.get_response(request)


class PrivateAnswersMiddleware:
    """Every answer the service computes (the API's, the pages') says ``Cache-Control:
    private, no-cache`` unless its view chose otherwise (the live streams: ``no-store``):
    a match's detail holds the viewer's hand, and no cache between the service and its
    user may keep it for anyone else, whatever that cache makes of ``Vary`` and of
    ``Authorization``. ``no-cache`` keeps the ETags useful: the browser revalidates and
    gets a bodiless 304. Static files (WhiteNoise, earlier in the chain) keep their own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Cache-Control" not in response:
            patch_cache_control(response, private=True, no_cache=True)
        return response


class RequestBodyLimitMiddleware:
    """An /api/ request whose Content-Length exceeds ``DATA_UPLOAD_MAX_MEMORY_SIZE`` gets a
    JSON 413 ``request_too_large``; a Content-Length that is not a number, 400.

    Django enforces the limit only when ``request.body`` is read, while DRF's parsers read
    the stream directly: without this, a client could make a worker parse any size.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and request.path.startswith("/api/"):
            raw = request.META.get("CONTENT_LENGTH") or "0"
            try:
                length = int(raw)
            except ValueError:
                return JsonResponse(
                    error_body("malformed_request", "Content-Length is not a number."),
                    status=400,
                )
            if length > limit:
                return JsonResponse(
                    error_body(
                        "request_too_large",
                        f"The request body is larger than {limit} bytes.",
                        {"max_bytes": limit, "content_length": length},
                    ),
                    status=413,
                )
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    """A request that fails because the database cannot be reached (a restart, a failover,
    a broken persistent connection), or because no pooled connection came free within
    ``DATABASE_POOL_TIMEOUT`` seconds (a burst larger than ``DATABASE_POOL_MAX_SIZE``),
    gets a 503 ``service_unavailable`` with Retry-After, in the API's error shape under
    /api/, instead of a 500.

    Nothing was written: the request's transaction, if any, never committed. With
    ``CONN_HEALTH_CHECKS`` the next request opens a fresh connection, so service resumes
    as soon as the database is back. Django's ``OperationalError`` also covers a few
    errors of a reachable database (a deadlock, a serialization failure); those are just
    as safe to retry, so they get the same answer.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        if _pool_exhausted(exception):
            logger.warning(
                "no database connection free for %s %s within %g s (DATABASE_POOL_MAX_SIZE %s)",
                request.method,
                request.path,
                settings.DATABASE_POOL_TIMEOUT,
                settings.DATABASE_POOL_MAX_SIZE,
            )
            message = (
                "The service is busy (no database connection came free in time); "
                "nothing was changed. Retry shortly."
            )
        else:
            logger.warning(
                "database unavailable for %s %s: %s", request.method, request.path, exception
            )
            message = (
                "The service is briefly unavailable (its database cannot be reached); "
                "nothing was changed. Retry shortly."
            )
        body = error_body("service_unavailable", message, {"retry_after": DATABASE_RETRY_AFTER})
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse(body, status=503)
        else:
            response = HttpResponse(
                body["message"], status=503, content_type="text/plain; charset=utf-8"
            )
        response["Retry-After"] = str(DATABASE_RETRY_AFTER)
        return response


def _pool_exhausted(exception: BaseException) -> bool:
    """Whether the database error is the connection pool's: every connection of this
    process (DATABASE_POOL_MAX_SIZE) stayed busy for DATABASE_POOL_TIMEOUT seconds
    (psycopg_pool's PoolTimeout, or TooManyRequests, under Django's OperationalError)."""
    try:
        from psycopg_pool import PoolTimeout, TooManyRequests
    except ImportError:  # pragma: no cover - the pool's package is a dependency
        return False
    cause: BaseException | None = exception
    while cause is not None:
        if isinstance(cause, PoolTimeout | TooManyRequests):
            return True
        cause = cause.__cause__
    return False


class ThrottledLoginMiddleware:
    """A login or sign-up form (the admin's, the browsable API's, the play pages') whose
    password checks are over their
    throttle (``Throttled`` from accounts.backends) answers 429 with Retry-After: a short
    page for people, or the API's error shape under /api/."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, Throttled):
            return None
        retry_after = max(1, math.ceil(exception.wait or 1))
        message = f"Too many attempts to sign in or sign up. Try again in {retry_after} seconds."
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse(
                error_body("throttled", message, {"retry_after": retry_after}), status=429
            )
        else:
            page = (
                "<!doctype html><html lang=en><meta charset=utf-8>"
                "<title>Too many attempts</title>"
                f"<h1>Too many attempts</h1><p>{message}</p></html>"
            )
            response = HttpResponse(page, status=429, content_type="text/html; charset=utf-8")
        response["Retry-After"] = str(retry_after)
        return response
