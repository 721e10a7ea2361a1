"""OpenAPI schema generation (drf-spectacular)."""

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import is_serializer
from drf_spectacular.utils import OpenApiResponse

from briscola_service.exceptions import ErrorSerializer, error_codes


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=ErrorSerializer, description=description)


THROTTLED = _error(
    "`throttled`: over the request rate (see `details.retry_after` and the `Retry-After` header)."
)
AUTHENTICATION_FAILED = _error("`authentication_failed`: the token sent is not valid.")
TOO_LARGE = _error("`request_too_large`: the request body is larger than the server accepts.")
UNSUPPORTED_MEDIA_TYPE = _error("`unsupported_media_type`: a body of a media type not accepted.")
UNAVAILABLE = _error(
    "`service_unavailable`: the database cannot be reached right now; nothing was changed. "
    "Retry after `details.retry_after` seconds (also in `Retry-After`)."
)


class AutoSchema(openapi.AutoSchema):
    """Names nested serializers after their view: `RegisterApi.OutputSerializer` becomes the
    component `RegisterApiOutput`, so one-view-per-operation classes with nested
    InputSerializer/OutputSerializer do not collide in the schema.

    Adds the error responses that any operation may answer whatever its view declares, in
    the one error shape: 429 where the view is throttled, 401 where it reads a token, 413
    for a body too large (briscola_service.middleware) and 415 for one of another media
    type where the operation takes a body, and 503 for a database outage.
    """

    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        qualname: str = type(serializer).__qualname__
        if "." in qualname and "<locals>" not in qualname:
            return qualname.replace(".", "")
        return str(super().get_serializer_name(serializer, direction))

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        """A request body whose serializer refuses unknown fields (`rejects_unknown_fields`,
        e.g. games.matches.serializers.StrictSerializer) has ``additionalProperties: false``."""
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and getattr(serializer, "rejects_unknown_fields", False):
            schema["additionalProperties"] = False
        return schema

    def _global_errors(self) -> dict[str, OpenApiResponse]:
        errors: dict[str, OpenApiResponse] = {}
        if self.view.get_authenticators():
            errors["401"] = AUTHENTICATION_FAILED
        if self.method in ("POST", "PUT", "PATCH"):
            errors["413"] = TOO_LARGE
            if is_serializer(self.get_request_serializer()):  # parsed by DRF's parsers
                errors["415"] = UNSUPPORTED_MEDIA_TYPE
        if self.view.get_throttles():
            errors["429"] = THROTTLED
        errors["503"] = UNAVAILABLE
        return errors

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, error in self._global_errors().items():
            if code not in responses:
                responses[code] = self._get_response_for_code(error, code, direction=direction)
        return responses


# The order of the paths in the schema (and so in generated docs): the core first.
_PATH_ORDER = ("/api/v1/matches", "/api/v1/deals", "/api/v1/records", "/api/v1/players")


def _path_rank(path: str) -> int:
    for rank, prefix in enumerate(_PATH_ORDER):
        if path.startswith(prefix):
            return rank
    return len(_PATH_ORDER)


def postprocess(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular's last hook: the error `code` becomes an enum of every code the API
    may answer (briscola_service.exceptions.error_codes), and the matches come first."""
    schemas = result.get("components", {}).get("schemas", {})
    error = schemas.get("Error")
    if error is not None:
        error["properties"]["code"]["enum"] = error_codes()
    paths = result.get("paths", {})
    result["paths"] = dict(sorted(paths.items(), key=lambda item: _path_rank(item[0])))
    return result


class BearerTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """briscola_service.authentication.TokenAuthentication, as the schema declares it:
    HTTP bearer, which generated clients send as ``Authorization: Bearer <token>``."""

    target_class = "briscola_service.authentication.TokenAuthentication"
    name = "bearerAuth"
    priority = 1

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "`Authorization: Bearer <token>` (`Token <token>` works too): the account's "
                "token, or a personal access token with its scopes (`read`: GET; `play`: "
                "writes too; else 403 `insufficient_scope`)."
            ),
        }
