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
from django.utils.encoding import iri_to_uri
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, serializers
from rest_framework.exceptions import ErrorDetail
from rest_framework.response import Response
from rest_framework.settings import api_settings
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


# Codes answered by code paths other than an error class (middleware, Django's handlers).
_OTHER_CODES = {
    "not_found",
    "server_error",
    "malformed_request",
    "request_too_large",
    "service_unavailable",
    "not_acceptable",
    "insufficient_scope",
    "metrics_forbidden",  # /metrics (briscola_service.metrics), in the same shape
    "invalid_host",  # 400: a Host not in ALLOWED_HOSTS (briscola_service.middleware)
    # briscola_service.serving, the ASGI server's guard, before Django sees the request:
    "request_timeout",  # 408: headers or body too slow
    "uri_too_long",  # 414
    "headers_too_large",  # 431
    "timeout",  # 500: no answer within SERVE_REQUEST_TIMEOUT
}
# Bases of error hierarchies rendered by duck typing (an app registers its own base, e.g.
# games.errors registers the rules engine's RulesError): their subclasses' codes are listed.
_ERROR_BASES: list[type] = []


def register_error_base(base: type) -> None:
    """List the ``code`` of ``base`` and of all its subclasses among the API's error codes."""
    if base not in _ERROR_BASES:
        _ERROR_BASES.append(base)


def _codes_of(base: type) -> set[str]:
    codes = set()
    stack = [base]
    while stack:
        cls = stack.pop()
        code = cls.__dict__.get("code")
        if isinstance(code, str):
            codes.add(code)
        stack.extend(cls.__subclasses__())
    return codes


def error_codes() -> list[str]:
    """Every error ``code`` the API may answer, sorted (the schema's enum of ``Error.code``)."""
    codes = set(_DRF_CODES.values()) | _OTHER_CODES
    for base in [ServiceError, *_ERROR_BASES]:
        codes |= _codes_of(base)
    return sorted(codes)


class ErrorSerializer(serializers.Serializer):
    """Every error answer: a stable machine-readable `code` to switch on, a `message` for
    people, and `details`, an object whose keys depend on the code (for `invalid_input`:
    one entry per field that was refused, each a list of `{code, message}`)."""

    code = serializers.CharField(help_text="Stable and machine-readable: switch on it.")
    message = serializers.CharField(help_text="For people; may change between releases.")
    details = serializers.DictField(help_text="Machine-readable facts about the error.")


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


def field_errors(detail: Any, path: str = "") -> dict[str, list[dict[str, str]]]:
    """DRF's nested validation errors, flattened: one entry per field path (``ply``,
    ``seats[1]``, ``options.partners_last_hand``; ``non_field_errors`` for the body as a
    whole), each a list of ``{"code", "message"}`` with DRF's (or our) stable code."""
    out: dict[str, list[dict[str, str]]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
                sub = f"{path}[{key}]"
            else:
                sub = f"{path}.{key}" if path else str(key)
            for name, errors in field_errors(value, sub).items():
                out.setdefault(name, []).extend(errors)
    elif isinstance(detail, list) and all(isinstance(e, str) for e in detail):
        out[path or "non_field_errors"] = [
            {"code": str(getattr(e, "code", None) or "invalid"), "message": str(e)} for e in detail
        ]
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            if value:  # DRF lists one (possibly empty) entry per item of a list field
                sub = f"{path}[{index}]"
                for name, errors in field_errors(value, sub).items():
                    out.setdefault(name, []).extend(errors)
    else:
        out[path or "non_field_errors"] = [
            {"code": str(getattr(detail, "code", None) or "invalid"), "message": str(detail)}
        ]
    return out


def _drf_response(exc: exceptions.APIException) -> Response:
    code = _drf_code(exc)
    details: dict[str, Any] = {}
    headers: dict[str, str] = {}
    detail = exc.detail
    if isinstance(exc, exceptions.ValidationError):
        details = field_errors(detail)
        message = "Invalid input: " + "; ".join(
            f"{field}: {' '.join(e['message'] for e in errors)}"
            for field, errors in details.items()
        )
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


def _django_errors(errors: list[DjangoValidationError]) -> list[ErrorDetail]:
    """Django's validation errors as DRF's, keeping each one's code (``invalid`` if none)."""
    return [
        ErrorDetail(message, code=error.code or "invalid")
        for error in errors
        for message in error.messages
    ]


def _unknown_format(context: dict[str, Any]) -> Response | None:
    """DRF's content negotiation raises Http404 for a ``?format=`` that no renderer of the
    view has (``?format=xml``): the resource may well exist, so that is 406
    ``not_acceptable``, naming the formats there are. Negotiation is the one step before
    a view's handler that raises Http404, and it runs first: no renderer chosen yet."""
    request, view = context.get("request"), context.get("view")
    if request is None or view is None or getattr(request, "accepted_renderer", None):
        return None
    param = api_settings.URL_FORMAT_OVERRIDE
    wanted = getattr(view, "format_kwarg", None) or (
        request.query_params.get(param) if param else None
    )
    if not wanted:
        return None
    formats = sorted({r.format for r in view.get_renderers() if r.format})
    message = f"No such format: {wanted[:40]!r}; this resource is served as " + ", ".join(
        repr(f) for f in formats
    )
    details = {"format": wanted[:40], "formats": formats}
    return Response(error_body("not_acceptable", message + ".", details), status=406)


def _unsupported_media_type(context: dict[str, Any]) -> Response:
    """415 with what to send instead (DRF's message, 'Unsupported media type "" in
    request.', left a client without a Content-Type guessing)."""
    set_rollback()
    request = context.get("request")
    content_type = getattr(request, "content_type", "") or ""
    sent = content_type.split(";", 1)[0].strip()[:100]
    message = 'A request body is JSON: send it with "Content-Type: application/json"'
    message += f' (this one was "{sent}").' if sent else " (this one had no Content-Type)."
    details = {"media_type": sent or None, "accepted": ["application/json"]}
    return Response(error_body("unsupported_media_type", message, details), status=415)


def _foreign_scheme(context: dict[str, Any]) -> exceptions.NotAuthenticated | None:
    """``not_authenticated`` that says why when credentials came in a scheme the API does
    not read (``Authorization: Basic ...``): DRF's "credentials were not provided" read as
    if the header had been lost on the way."""
    request = context.get("request")
    header = getattr(request, "META", {}).get("HTTP_AUTHORIZATION", "")
    parts = header.split(None, 1)
    if not parts or parts[0].lower() in ("token", "bearer"):
        return None
    send = "send `Authorization: Bearer <token>` (or sign in, for a browser's session)."
    scheme = parts[0]
    # Only a scheme's name is repeated, never what could be a credential (a bare token
    # sent without a scheme is one word, and is not echoed).
    if len(parts) == 2 and scheme.isascii() and scheme.isalpha() and len(scheme) <= 20:
        return exceptions.NotAuthenticated(
            f"The Authorization scheme {scheme!r} is not one this API reads: {send}"
        )
    return exceptions.NotAuthenticated(
        f"The Authorization header is not one this API reads: {send}"
    )


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER. Returns None (a 500) for exceptions it does not know."""
    if isinstance(exc, Http404):
        unknown_format = _unknown_format(context)
        if unknown_format is not None:
            return unknown_format
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            exc = exceptions.ValidationError(
                {field: _django_errors(errors) for field, errors in exc.error_dict.items()}
            )
        else:
            exc = exceptions.ValidationError({"non_field_errors": _django_errors(exc.error_list)})

    if isinstance(exc, exceptions.UnsupportedMediaType):
        return _unsupported_media_type(context)
    if isinstance(exc, exceptions.NotAuthenticated):
        told = _foreign_scheme(context)
        if told is not None:
            told.auth_header = getattr(exc, "auth_header", None)  # type: ignore[attr-defined]
            exc = told

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


def not_found_page(request: HttpRequest, message: str) -> HttpResponse:
    """The site's 404 page (templates/404.html, status 404), whatever DEBUG is: a page view
    answers it itself rather than raising Http404, which DEBUG would answer with Django's
    technical page (every URL pattern of the service)."""
    return page_not_found(request, Http404(message))


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500 (used when DEBUG is false)."""
    if _is_api_path(request):
        return JsonResponse(
            error_body("server_error", "Internal server error."),
            status=500,
        )
    return defaults.server_error(request)


@csrf_exempt  # it changes nothing: an unknown URL is a JSON 404 for every method
def api_not_found(request: HttpRequest, path: str = "") -> HttpResponse:
    """Catch-all for unknown /api/ URLs, so they answer JSON even when DEBUG is true.

    Keeps CommonMiddleware's APPEND_SLASH behaviour for URLs that exist with a slash, and
    does the reverse for the API's own URLs, which have none: ``/api/v1/matches/`` answers
    a 308 to ``/api/v1/matches`` (308 keeps the method and the body, so a POST is resent
    as a POST).
    """
    if not request.path.endswith("/"):
        match = _resolves(request.path + "/")
        if match:
            return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
    elif _resolves(request.path.rstrip("/")):
        query = request.META.get("QUERY_STRING", "")
        location = iri_to_uri(request.path.rstrip("/")) + (f"?{query}" if query else "")
        return PermanentRedirectKeepingMethod(location)
    return page_not_found(request)


class PermanentRedirectKeepingMethod(HttpResponsePermanentRedirect):
    """308 Permanent Redirect: the client repeats the request, method and body, there."""

    status_code = 308


def _resolves(path: str) -> bool:
    """Whether ``path`` is one of the real URLs (not this catch-all)."""
    if not path:
        return False
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return match.func is not api_not_found
