"""The one API error handler: every error leaves the server as {code, message, details}.

`code` is stable and machine-readable, `message` is for people, `details` is an object
(field errors for invalid input, `retry_after` for throttling, ...).

Services raise `ServiceError` subclasses. Any other exception with a string `code` and an
integer `status` attribute is rendered the same way, so an app can keep its own error
hierarchy without importing this module.
"""

import math
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.urls import Resolver404, resolve
from django.views import defaults
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import set_rollback


class ServiceError(Exception):
    """Base class for errors that services raise on purpose; subclasses set code/status."""

    code: str = "error"
    status: int = 400
    message: str = "The request could not be completed."

    def __init__(self, message: str | None = None, *, details: dict[str, Any] | None = None):
        self.message = message if message is not None else type(self).message
        self.details: dict[str, Any] = details if details is not None else {}
        super().__init__(self.message)


class ErrorSerializer(serializers.Serializer):
    """The error shape, for the OpenAPI schema (`responses={400: ErrorSerializer}`)."""

    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField()


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details or {}}


# DRF exceptions whose code we name ourselves; all others use their `default_code`.
_DRF_CODES: dict[type[exceptions.APIException], str] = {
    exceptions.ValidationError: "invalid_input",
    exceptions.ParseError: "malformed_request",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
}


def _is_duck_typed_error(exc: Exception) -> bool:
    code = getattr(exc, "code", None)
    status = getattr(exc, "status", None)
    return (
        isinstance(code, str)
        and isinstance(status, int)
        and not isinstance(status, bool)
        and 400 <= status <= 599
    )


def _drf_code(exc: exceptions.APIException) -> str:
    for cls in type(exc).__mro__:
        if cls in _DRF_CODES:
            return _DRF_CODES[cls]
    return str(exc.default_code)


def _drf_response(exc: exceptions.APIException) -> Response:
    code = _drf_code(exc)
    details: dict[str, Any] = {}
    headers: dict[str, str] = {}
    detail = exc.detail
    if isinstance(exc, exceptions.ValidationError):
        message = "Invalid input."
        details = detail if isinstance(detail, dict) else {"non_field_errors": detail}
    elif isinstance(detail, str):
        message = str(detail)
    else:
        message = str(exc.default_detail)
        details = detail if isinstance(detail, dict) else {"errors": detail}

    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        retry_after = max(1, math.ceil(exc.wait))
        details["retry_after"] = retry_after
        headers["Retry-After"] = str(retry_after)
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        headers["WWW-Authenticate"] = auth_header

    return Response(error_body(code, message, details), status=exc.status_code, headers=headers)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER. Returns None (a 500) for exceptions it does not know."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            exc = exceptions.ValidationError(exc.message_dict)
        else:
            exc = exceptions.ValidationError({"non_field_errors": exc.messages})

    if isinstance(exc, exceptions.APIException):
        set_rollback()
        return _drf_response(exc)

    if isinstance(exc, ServiceError) or _is_duck_typed_error(exc):
        set_rollback()
        message = getattr(exc, "message", None)
        if not isinstance(message, str) or not message:
            message = str(exc) or "The request could not be completed."
        details = getattr(exc, "details", None)
        if not isinstance(details, dict):
            details = {}
        code: str = exc.code  # type: ignore[attr-defined]
        status: int = exc.status  # type: ignore[attr-defined]
        return Response(error_body(code, message, details), status=status)

    return None


# --- Django's own error pages: JSON under /api/ ------------------------------------------


def _is_api_path(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404 (used when DEBUG is false)."""
    if _is_api_path(request):
        return JsonResponse(
            error_body("not_found", "No such resource."),
            status=404,
        )
    return defaults.page_not_found(request, exception or Http404())


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500 (used when DEBUG is false)."""
    if _is_api_path(request):
        return JsonResponse(
            error_body("server_error", "Internal server error."),
            status=500,
        )
    return defaults.server_error(request)


def api_not_found(request: HttpRequest, path: str = "") -> HttpResponse:
    """Catch-all for unknown /api/ URLs, so they answer JSON even when DEBUG is true.

    Keeps CommonMiddleware's APPEND_SLASH behaviour for URLs that exist with a slash.
    """
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
    return page_not_found(request)
