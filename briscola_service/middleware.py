"""Refuse oversized API request bodies before any view reads them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from briscola_service.exceptions import error_body


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
