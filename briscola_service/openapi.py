"""OpenAPI schema generation (drf-spectacular)."""

import copy
import re
from collections.abc import Iterator
from typing import Any

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import ComponentIdentity, ResolvedComponent, is_serializer
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.negotiation import DefaultContentNegotiation

from briscola_service.exceptions import ErrorSerializer, error_codes

# `Retry-After`, which the server sends with a 429 (throttled: exceptions.py and
# middleware.py; a refused stream: games.live) and a 503 (a database outage:
# middleware.py; a full stream server), declared on every such answer.
RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    int,
    OpenApiParameter.HEADER,
    response=[429, 503],
    description="Seconds to wait before trying again (as `details.retry_after`).",
)


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=ErrorSerializer, description=description)


THROTTLED = _error(
    "`throttled`: over the request rate (see `details.retry_after` and the `Retry-After` header)."
)
AUTHENTICATION_FAILED = _error("`authentication_failed`: the token sent is not valid.")
TOO_LARGE = _error("`request_too_large`: the request body is larger than the server accepts.")
UNSUPPORTED_MEDIA_TYPE = _error("`unsupported_media_type`: a body of a media type not accepted.")
NOT_ACCEPTABLE = _error(
    "`not_acceptable`: `?format=` names a format this resource is not served in "
    "(`details.formats` lists those it is)."
)
UNAVAILABLE = _error(
    "`service_unavailable`: the database cannot be reached right now; nothing was changed. "
    "Retry after `details.retry_after` seconds (also in `Retry-After`)."
)


# Schemas written by hand (a field's ``extend_schema_field``) that are components of their
# own: generators name a class after each inline object or enum they meet (the time
# controls came out as `TimeControl`..`TimeControl7` of openapi-python-client, the seats of
# a new match as `MatchCreateInputRequestSeatsItemType0`..`2`); a component has its own,
# stable name. A field's schema refers to one with :func:`schema_component`, and the
# component is written wherever a field that uses it is in the schema.
_NAMED_SCHEMAS: dict[str, dict[str, Any]] = {}


def schema_component(name: str, schema: dict[str, Any]) -> dict[str, str]:
    """``schema`` as the component ``name``; returns the reference to it, to use in a
    field's hand-written schema (``extend_schema_field``)."""
    if _NAMED_SCHEMAS.setdefault(name, schema) != schema:
        raise ValueError(f"two schemas named {name}")
    return {"$ref": f"#/components/schemas/{name}"}


def _named_refs(node: Any) -> Iterator[str]:
    """The names of the components of :func:`schema_component` that ``node`` refers to,
    and those they refer to."""
    prefix = "#/components/schemas/"
    for item in _walk(node):
        ref = item.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix) :] in _NAMED_SCHEMAS:
            name = ref[len(prefix) :]
            yield name
            yield from _named_refs(_NAMED_SCHEMAS[name])


class AutoSchema(openapi.AutoSchema):
    """Names nested serializers after their view (`RegisterApi.OutputSerializer` would be
    `RegisterApiOutput`), so one-view-per-operation classes with nested
    InputSerializer/OutputSerializer do not collide in the schema. That is only the
    fallback: a class a client sees is named for what it is, not for its view, with
    ``extend_schema_serializer(component_name=...)`` (accounts.apis; the account's answer
    is `AccountOutput`), and tests/test_openapi_contract.py refuses a name with `Api`.
    Hand-written field schemas name their objects with :func:`schema_component`.

    Adds the error responses that any operation may answer whatever its view declares, in
    the one error shape: 429 where the view is throttled, 401 where it reads a token, 406
    for a GET's unknown `?format=` (briscola_service.exceptions), 413
    for a body too large (briscola_service.middleware) and 415 for one of another media
    type where the operation takes a body, and 503 for a database outage.
    """

    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        qualname: str = type(serializer).__qualname__
        if "." in qualname and "<locals>" not in qualname:
            return qualname.replace(".", "")
        return str(super().get_serializer_name(serializer, direction))

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> Any:
        """A field's schema; the components of :func:`schema_component` it refers to are
        registered, so they are written."""
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        for name in _named_refs(schema):
            self.registry.register_on_missing(
                ResolvedComponent(
                    name=name,
                    type=ResolvedComponent.SCHEMA,
                    schema=copy.deepcopy(_NAMED_SCHEMAS[name]),
                    object=ComponentIdentity(f"schema_component:{name}"),
                )
            )
        return schema

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        """A request body whose serializer refuses unknown fields (`rejects_unknown_fields`,
        e.g. games.matches.serializers.StrictSerializer) has ``additionalProperties: false``."""
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and getattr(serializer, "rejects_unknown_fields", False):
            schema["additionalProperties"] = False
        return schema

    def get_auth(self) -> list[Any]:
        """A view that signs its requests in by itself names its authenticator classes in
        ``authenticators`` and none in DRF's (the streams, games.live.apis: in their own
        threads): the schema says which, as for any view. Without, generated clients
        sent no token to the streams and got 401."""
        own = getattr(self.view, "authenticators", None)
        if not own or self.view.get_authenticators():
            return list(super().get_auth())
        self.view.get_authenticators = lambda: [cls() for cls in own]  # type: ignore[method-assign]
        try:
            return list(super().get_auth())
        finally:
            del self.view.get_authenticators

    def _get_request_body(self, direction: Any = "request") -> dict[str, Any] | None:
        """A view that reads its body itself (a free-form object: drf-spectacular marks
        only a serializer with required fields as a required body) and refuses a request
        without one says so with ``request_body_required = True``."""
        body: dict[str, Any] | None = super()._get_request_body(direction)
        if body is not None and getattr(self.view, "request_body_required", False):
            body["required"] = True
        return body

    def get_override_parameters(self) -> list[Any]:
        """The view's own, and the response headers every operation may answer with
        (`Retry-After` on 429 and 503)."""
        return [*super().get_override_parameters(), RETRY_AFTER]

    def _global_errors(self) -> dict[str, OpenApiResponse]:
        errors: dict[str, OpenApiResponse] = {}
        if self.view.get_authenticators():
            errors["401"] = AUTHENTICATION_FAILED
        if self.method in ("POST", "PUT", "PATCH"):
            errors["413"] = TOO_LARGE
            if is_serializer(self.get_request_serializer()):  # parsed by DRF's parsers
                errors["415"] = UNSUPPORTED_MEDIA_TYPE
        negotiator = self.view.get_content_negotiator()
        if self.method == "GET" and type(negotiator) is DefaultContentNegotiation:
            errors["406"] = NOT_ACCEPTABLE
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


# Enum components that drf-spectacular's enum hook names after the field alone (the
# settings' ENUM_NAME_OVERRIDES name the others): named after their event here, as the
# other events' `type` enums are (`CardPlayedTypeEnum`).
_ENUM_RENAMES = {"ActionEnum": "SeatTimedOutActionEnum", "ByEnum": "SeatReturnedByEnum"}
_EVENT_TYPE_ENUM = re.compile(r"(?P<event>[A-Za-z]+)EventTypeEnum")


def _null() -> dict[str, Any]:
    """`null` as OpenAPI 3.0.3 can say it: an enum of the one value null, written inline at
    each use (a new one each time: a shared one would be a YAML alias). Not a component: a
    generator makes a model of every component, and an enum of no type and no non-null
    value is none it can write (OpenAPITools' Python generator wrote `class NullEnum(,
    Enum):`, a module that does not import); inline, every generator reads the choice as
    "or null" (OpenAPITools, openapi-python-client, openapi-typescript) and every
    validator accepts null."""
    return {"enum": [None]}


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every object of the schema, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _rename_components(result: dict[str, Any], renames: dict[str, str]) -> None:
    schemas = result.get("components", {}).get("schemas", {})
    renames = {old: new for old, new in renames.items() if old in schemas and new not in schemas}
    if not renames:
        return
    refs = {
        f"#/components/schemas/{old}": f"#/components/schemas/{new}" for old, new in renames.items()
    }
    for node in _walk(result):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in refs:
            node["$ref"] = refs[ref]
        mapping = node.get("mapping")
        if isinstance(mapping, dict):
            for key, value in mapping.items():
                if value in refs:
                    mapping[key] = refs[value]
    renamed = {renames.get(name, name): schema for name, schema in schemas.items()}
    result["components"]["schemas"] = dict(sorted(renamed.items()))


def _strict_nullables(result: dict[str, Any]) -> None:
    """OpenAPI 3.0.3 reads `nullable` only beside a `type`: a strict validator refuses null
    for ``{"allOf": [{"$ref": ...}], "nullable": true}`` (what drf-spectacular writes for a
    nullable nested serializer or enum) and for ``{"oneOf": [...], "nullable": true}``,
    since null matches none of the schemas combined. Each becomes a ``oneOf`` with
    ``{"enum": [null]}`` (:func:`_null`, inline) as one more choice, which every reading accepts."""
    for node in list(_walk(result.get("paths", {}))) + list(_walk(result.get("components", {}))):
        if node.get("nullable") is not True or "type" in node:
            continue
        if len(node.get("allOf", ())) == 1:
            node["oneOf"] = [node.pop("allOf")[0], _null()]
        elif "oneOf" in node and _null() not in node["oneOf"]:
            node["oneOf"].append(_null())
        else:
            continue
        del node["nullable"]


def postprocess(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular's last hook: the error `code` becomes an enum of every code the API
    may answer (briscola_service.exceptions.error_codes), nullable combinations are made
    strict OpenAPI 3.0.3, the event log's enums are named, and the matches come first."""
    schemas = result.get("components", {}).get("schemas", {})
    error = schemas.get("Error")
    if error is not None:
        error["properties"]["code"]["enum"] = error_codes()
    renames = dict(_ENUM_RENAMES)
    for name in schemas:
        found = _EVENT_TYPE_ENUM.fullmatch(name)
        if found:
            renames[name] = f"{found['event']}TypeEnum"
    _rename_components(result, renames)
    _strict_nullables(result)
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
