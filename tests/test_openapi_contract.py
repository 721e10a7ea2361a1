"""The OpenAPI schema is enough to write a client from (issue 16): request bodies are
JSON only, every 2xx answer has a typed schema, every error code is in the enum, the
matches come first and no internal note leaks into public text."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from briscola_service.exceptions import error_codes

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _is_typed(schema: dict[str, Any], node: dict[str, Any]) -> bool:
    """An object with properties (or a oneOf of such), an array of typed items, or a
    scalar: never a bare ``{"type": "object"}`` with nothing said about its content."""
    node = _resolve(schema, node)
    for combined in ("oneOf", "allOf"):
        if combined in node:
            return all(_is_typed(schema, n) for n in node[combined])
    if node.get("type") == "array":
        return _is_typed(schema, node["items"])
    if node.get("type") == "object" or "properties" in node:
        return bool(node.get("properties")) and all(
            _is_typed(schema, p) for p in node["properties"].values()
        )
    return "type" in node


def test_every_request_body_is_json_only(schema: dict[str, Any]) -> None:
    bodies = [(p, m, o["requestBody"]) for p, m, o in _operations(schema) if "requestBody" in o]
    assert bodies
    for path, method, body in bodies:
        assert list(body["content"]) == ["application/json"], (method, path)


def test_every_2xx_answer_has_a_typed_schema(schema: dict[str, Any]) -> None:
    untyped = []
    for path, method, operation in _operations(schema):
        for status, response in operation["responses"].items():
            if not status.startswith("2") or status == "204":
                continue
            for media, content in response.get("content", {}).items():
                if media == "text/plain":
                    assert content["schema"]["type"] == "string"
                    continue
                if not _is_typed(schema, content["schema"]):
                    untyped.append((method, path, status, media))
    assert untyped == []


def test_every_operation_is_described_and_matches_come_first(schema: dict[str, Any]) -> None:
    operations = _operations(schema)
    assert all(o.get("summary") or o.get("description") for _, _, o in operations)
    assert next(iter(schema["paths"])).startswith("/api/v1/matches")
    assert [t["name"] for t in schema["tags"]][0] == "matches"


def test_no_internal_note_leaks_into_public_text(schema: dict[str, Any]) -> None:
    text = str(schema)
    for note in ("AllowAny", "ErrorSerializer", "for the OpenAPI schema", "selectors"):
        assert note not in text


def test_the_view_fields_are_described_enumerated_and_nullable(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    view = components["DealViewOutput"]["properties"]
    for name in ("turn", "legal", "leader", "ply", "table", "hand", "briscola_holder"):
        assert view[name].get("description"), name
    for name in ("turn", "partner_hand", "briscola_holder"):
        assert view[name].get("nullable") is True, name
    match = components["MatchDetailOutput"]["properties"]
    for name, values in [
        ("status", {"waiting", "active", "finished", "aborted"}),
        ("format", {"single", "first_to_2", "first_to_3"}),
        ("end_reason", {"played", "resigned", "aborted"}),
        ("ratings", {"unrated", "pending", "applied"}),
    ]:
        enum = _resolve(schema, match[name]["allOf"][0] if "allOf" in match[name] else match[name])
        if "oneOf" in match[name]:  # nullable enum
            enum = _resolve(schema, match[name]["oneOf"][0])
        assert set(enum["enum"]) >= values, name
    seat = components["SeatOutput"]["properties"]["bot_level"]
    assert seat.get("nullable") is True


def test_the_error_code_enum_lists_every_code_the_code_base_raises(
    schema: dict[str, Any],
) -> None:
    enum = set(schema["components"]["schemas"]["Error"]["properties"]["code"]["enum"])
    assert enum == set(error_codes())
    files = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    raised: set[str] = set()
    for name in files:
        if name.startswith(("tests/", "bench/", "examples/", "clients/")):
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        # Error classes: ``code = "..."`` (or ``code: str = "..."``) in a class body.
        raised |= set(re.findall(r'^    code(?:: str)? = "([a-z_]+)"$', text, flags=re.M))
        raised |= set(re.findall(r'error_body\(\s*"([a-z_]+)"', text))
    assert raised and raised <= enum, raised - enum
