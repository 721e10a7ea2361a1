"""The ``Idempotency-Key`` header for API views: parse it, document it, apply it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from briscola_service.exceptions import ErrorSerializer
from briscola_service.idempotency import services

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"

IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    HEADER,
    str,
    location=OpenApiParameter.HEADER,
    required=False,
    pattern=f"^{services.KEY_PATTERN.pattern}$",
    description=(
        "Makes a retry safe: a unique value per intended write (a UUID, say; 1 to 255 "
        "visible ASCII characters), kept for your account for at least 24 hours. Sending "
        "the same key with the same body again answers the first response (status and "
        f"body, with `{REPLAYED_HEADER}: true`) and writes nothing new; the same key with "
        "another body is 422 `idempotency_key_reused`; while the first request is still "
        "running, 409 `idempotency_key_in_flight`. Errors are not recorded: a request "
        "that failed can be retried with its key."
    ),
)
IDEMPOTENCY_ERRORS = {409: ErrorSerializer, 422: ErrorSerializer}


def replayed_header(*codes: int) -> OpenApiParameter:
    """`Idempotent-Replayed` as a response header of ``codes``: only a success is recorded,
    so only a success is ever replayed (an operation lists it beside
    IDEMPOTENCY_KEY_PARAMETER)."""
    return OpenApiParameter(
        REPLAYED_HEADER,
        str,
        location=OpenApiParameter.HEADER,
        response=list(codes),
        enum=["true"],
        description=(
            "`true` when this is the recorded answer to an earlier request with the same "
            "`Idempotency-Key`, replayed (nothing new was written); absent otherwise."
        ),
    )


def _body(request: Request) -> Any:
    data = request.data
    if hasattr(data, "getlist"):  # a form: a QueryDict
        return {name: data.getlist(name) for name in sorted(data)}
    return data


# Headers the renderer sets for each answer; every other header the view set is kept.
_RENDERED_HEADERS = {"content-type", "content-length"}


def idempotent(request: Request, handler: Callable[[], Response]) -> Response:
    """``handler()`` once per ``Idempotency-Key`` of the user; without the header, as is.

    The first answer is the handler's own response, and a replay carries the same headers
    as it did (ETag, Vary, Location, ...): a client cannot tell them apart but for
    ``Idempotent-Replayed: true``."""
    key = request.headers.get(HEADER)
    if key is None:
        return handler()
    method = request.method or "POST"
    first: list[Response] = []

    def call() -> tuple[int, Any, dict[str, str]]:
        response = handler()
        first.append(response)
        headers = {
            name: value for name, value in response.items() if name.lower() not in _RENDERED_HEADERS
        }
        return response.status_code, response.data, headers

    result = services.idempotent_call(
        user_id=request.user.pk,
        key=key,
        fingerprint=services.idempotency_fingerprint(
            method=method, path=request.path, body=_body(request)
        ),
        method=method,
        path=request.path,
        call=call,
    )
    if not result.replayed:
        return first[0]
    response = Response(result.body, status=result.status_code)
    for name, value in result.headers.items():
        response[name] = value
    response[REPLAYED_HEADER] = "true"
    return response
