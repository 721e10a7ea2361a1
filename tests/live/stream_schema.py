"""The streams' events checked against the published OpenAPI schema.

The schema is the one the app serves (/api/schema/, as JSON: what a client generator
reads). An event is validated against its component (``MatchStreamEvent``,
``AccountStreamEvent``) with openapi-schema-validator's OpenAPI 3.0 validator, which reads
``nullable`` and follows the ``discriminator`` (an event's ``type`` picks its schema), every
``$ref`` resolved in the whole schema. Closed here, though the schema leaves them open:
every object the schema declares (the events, their items, the detail they carry) must
hold nothing it does not declare, so a field the streams send and the schema does not
name fails too, not only a field missing or mistyped.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from jsonschema.exceptions import ValidationError
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4
from rest_framework.test import APIClient

SCHEMA_URI = "urn:briscola:openapi"
MATCH_EVENT = "MatchStreamEvent"
ACCOUNT_EVENT = "AccountStreamEvent"


def served_schema() -> dict[str, Any]:
    """The OpenAPI schema as the app serves it."""
    response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200, response.status_code
    schema: dict[str, Any] = response.json()
    return schema


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``additionalProperties: false`` on each object that declares its
    properties and says nothing of others."""
    closed = copy.deepcopy(schema)
    for component in closed["components"]["schemas"].values():
        for node in _objects(component):
            node.setdefault("additionalProperties", False)
    return closed


def _objects(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("properties"):
            found.append(node)
        for value in node.values():
            found += _objects(value)
    elif isinstance(node, list):
        for value in node:
            found += _objects(value)
    return found


class EventSchemas:
    """Validators of the stream events' components, in one schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        resource = Resource.from_contents(_closed(schema), default_specification=DRAFT4)
        self._registry: Registry[Any] = Registry().with_resource(SCHEMA_URI, resource)
        self._validators: dict[str, Any] = {}
        self.checked: dict[str, int] = {}

    def component(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.schema["components"]["schemas"][name]
        return found

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """``node``, its ``$ref`` (or a lone ``allOf`` of one, as for a described field)
        followed."""
        while True:
            if "$ref" in node:
                node = self.component(node["$ref"].rsplit("/", 1)[1])
            elif len(node.get("allOf", ())) == 1:
                node = node["allOf"][0]
            else:
                return node

    def _validator(self, name: str) -> Any:
        if name not in self._validators:
            self.component(name)  # a KeyError names the missing component
            self._validators[name] = OAS30Validator(
                {"$ref": f"{SCHEMA_URI}#/components/schemas/{name}"},
                registry=self._registry,
                format_checker=OAS30Validator.FORMAT_CHECKER,
            )
        return self._validators[name]

    def check(self, name: str, event: dict[str, Any]) -> None:
        """``event`` is a valid ``name`` (an AssertionError saying where, if not)."""
        errors = sorted(self._validator(name).iter_errors(event), key=lambda e: list(e.path))
        if errors:
            raise AssertionError(_explain(name, event, errors))
        key = f"{name}:{event.get('type')}"
        self.checked[key] = self.checked.get(key, 0) + 1

    def check_match(self, event: dict[str, Any]) -> None:
        self.check(MATCH_EVENT, event)

    def check_account(self, event: dict[str, Any]) -> None:
        self.check(ACCOUNT_EVENT, event)


def _explain(name: str, event: dict[str, Any], errors: list[ValidationError]) -> str:
    shown = json.dumps(event, default=str)
    lines = [f"an event is not a valid {name}: {shown[:600]}"]
    for error in errors[:10]:
        where = "/".join(str(p) for p in error.absolute_path) or "(the event)"
        lines.append(f"  at {where}: {error.message[:300]}")
    return "\n".join(lines)


@cache
def event_schemas() -> EventSchemas:
    """The served schema's validators (built once: the schema does not change in a run)."""
    return EventSchemas(served_schema())
