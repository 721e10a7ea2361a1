"""The OpenAPI schema is enough to write a client from (issue 16): request bodies are
JSON only, every 2xx answer has a typed schema, every error code is in the enum, the
matches come first and no internal note leaks into public text."""

from __future__ import annotations

import inspect
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
    if node == {"enum": [None]}:  # null, as OpenAPI 3.0.3 can say it (NullEnum)
        return True
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
    raised: dict[str, str] = {}
    for name in files:
        if name.startswith(("tests/", "bench/", "examples/", "clients/")):
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        for pattern in _CODE_PATTERNS:
            raised.update((code, name) for code in re.findall(pattern, text, flags=re.M))
    # The ASGI server's guard answers these before Django sees the request; they were
    # missed when only error_body(...) was searched (serving.py writes error_json(...)).
    assert {"request_timeout", "uri_too_long", "headers_too_large", "timeout"} <= set(raised)
    assert raised and set(raised) <= enum, {c: f for c, f in raised.items() if c not in enum}


# Where an error code is written in the code base: an error class's ``code = "..."`` (or
# ``code: str = "..."``, DRF's ``default_code = "..."``), the first argument of any error
# body builder (``error_body("...")``, briscola_service.serving's ``error_json("...")``),
# a code chosen with its status (``status, code = 414, "..."``) and a literal body.
_CODE_PATTERNS = (
    r'^\s*(?:default_)?code(?:: str)? = "([a-z_]+)"$',
    r'\berror_\w*\(\s*"([a-z_]+)"',
    r'\bcode(?:, \w+)* = \d{3}, "([a-z_]+)"',
    r'"code": "([a-z_]+)"',
)


def _event_types_the_server_emits() -> set[str]:
    """Every ``type`` the event log (selectors.match_events_for_user) can answer,
    from the code: the kinds of MatchEvent, the rules engine's deal events (a deal played
    out and a 4-player one) and the types the selector writes itself."""
    from games import rules
    from games.matches import selectors
    from games.models import MatchEventKind

    types = set(MatchEventKind.values)
    for players in (2, 4):
        deal = rules.Deal(players=players, dealer=0, deck=rules.shuffled_deck("events"))
        while deal.turn is not None:
            deal.play(deal.legal_moves()[0])
        types |= {e["type"] for e in rules.deal_events(deal, 0)}
    source = inspect.getsource(selectors.match_events_for_user)
    types |= set(re.findall(r'"type": "([a-z_]+)"', source))
    return types


def test_the_event_schema_lists_every_event_type_the_server_emits(
    schema: dict[str, Any],
) -> None:
    event = schema["components"]["schemas"]["Event"]
    mapping = event["discriminator"]["mapping"]
    assert len(event["oneOf"]) == len(mapping)
    emitted = _event_types_the_server_emits()
    assert {"rematch_proposed", "seat_timed_out", "match_expired", "match_ended"} <= emitted
    assert emitted - set(mapping) == set()
    for kind, ref in mapping.items():
        component = _resolve(schema, {"$ref": ref})
        assert _resolve(schema, component["properties"]["type"])["enum"] == [kind]
        assert {"id", "at", "type"} <= set(component["required"]), kind
    # The clock's events with their data (games.clocks.services.event_add's keywords).
    props = {
        kind: set(_resolve(schema, {"$ref": mapping[kind]})["properties"])
        for kind in ("seat_timed_out", "invitation_declined", "rematch_proposed")
    }
    assert {"seat", "action", "deal", "ply"} <= props["seat_timed_out"]
    assert {"seat", "user", "reason"} <= props["invitation_declined"]
    assert {"match", "by"} <= props["rematch_proposed"]


def test_every_event_kind_recorded_is_a_declared_kind() -> None:
    """event_add refuses a kind the schema does not list, and every call names one."""
    from games.clocks.services import event_add
    from games.models import MatchEventKind

    with pytest.raises(ValueError):
        event_add(None, "something_new")  # type: ignore[arg-type]
    files = subprocess.run(
        ["git", "ls-files", "games/*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    kinds = set()
    for name in files:
        text = (ROOT / name).read_text(encoding="utf-8")
        kinds |= set(re.findall(r'event_add\(\s*\w+,\s*"([a-z_]+)"', text))
    assert kinds and kinds <= set(MatchEventKind.values), kinds - set(MatchEventKind.values)


def test_the_time_control_choices_of_a_new_match_are_typed(schema: dict[str, Any]) -> None:
    """``on_timeout`` and ``timeout_bot`` (taken as any JSON, checked by games.clocks) say
    what they take: an enum and a string, each or null."""
    create = schema["components"]["schemas"]["MatchCreateInputRequest"]["properties"]
    on_timeout = [_resolve(schema, n) for n in create["on_timeout"]["oneOf"]]
    assert on_timeout == [{"type": "string", "enum": ["bot", "forfeit"]}, {"enum": [None]}]
    assert create["timeout_bot"]["type"] == "string" and create["timeout_bot"]["nullable"]


def _inlined(schema: dict[str, Any], node: Any) -> Any:
    """``node`` with every ``$ref`` replaced by its component (the enum fields' schemas
    have no cycles), so a plain validator reads it without a reference registry."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inlined(schema, _resolve(schema, node))
        return {key: _inlined(schema, value) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(schema, value) for value in node]
    return node


def test_nullable_enums_accept_null_and_their_values_and_no_component_is_only_null(
    schema: dict[str, Any],
) -> None:
    """Generators make a model of every component: an enum component of the value null
    alone (the `NullEnum` the schema had) came out of OpenAPITools' Python generator as
    ``class NullEnum(, Enum):``, a client that does not import. Null is said inline, and
    each nullable enum field still accepts null and each of its values, and nothing else,
    under a strict OpenAPI 3.0 validator (the one openapi-core uses)."""
    from openapi_schema_validator import OAS30Validator

    components = schema["components"]["schemas"]
    only_null = [n for n, c in components.items() if "enum" in c and set(c["enum"]) <= {None}]
    assert only_null == []
    checked = set()
    for name, component in components.items():
        for field, prop in component.get("properties", {}).items():
            choices = [_resolve(schema, n) for n in prop.get("oneOf", ())]
            enums = [c["enum"] for c in choices if c.get("type") == "string" and "enum" in c]
            if not enums or {"enum": [None]} not in choices:
                continue
            validator = OAS30Validator(_inlined(schema, prop))
            for value in [None, *enums[0]]:
                assert validator.is_valid(value), (name, field, value)
            assert not validator.is_valid("not-a-choice"), (name, field)
            checked.add(f"{name}.{field}")
    assert {
        "MatchDetailOutput.end_reason",
        "MatchSummaryOutput.end_reason",
        "MatchEndedEvent.reason",
        "MatchCreateInputRequest.on_timeout",
    } <= checked


def test_a_record_check_needs_its_body_and_a_new_match_names_every_bot_level(
    schema: dict[str, Any], user_factory: Any, auth_client: Any
) -> None:
    """`POST /records/check` reads its body itself (drf-spectacular saw a free-form object
    and did not mark it required) and answers 400 without one; the description of
    `POST /matches` named three bot levels of the seven the server seats."""
    from games.matches.selectors import bot_levels_seatable

    check = schema["paths"]["/api/v1/records/check"]["post"]
    assert check["requestBody"].get("required") is True
    client = auth_client(user_factory(username="rita"))
    response = client.post("/api/v1/records/check", content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_record"

    create = schema["paths"]["/api/v1/matches"]["post"]["description"]
    levels = bot_levels_seatable()
    assert len(levels) > 3 and all(f"`{level}`" in create for level in levels)
    assert "random|greedy|expert" not in create.replace('"', "")


def _headers_declared(schema: dict[str, Any], path: str, method: str, code: int) -> set[str]:
    response = schema["paths"][path][method]["responses"][str(code)]
    return {name.lower() for name in response.get("headers", {})}


def test_the_response_headers_clients_rely_on_are_declared(schema: dict[str, Any]) -> None:
    """`ETag` on every answer that is a match detail (all built by
    games.matches.apis._detail_response) and on the 304 (which has no body), `Retry-After`
    on every 429 and 503, and `Idempotent-Replayed` on the success of every operation
    that takes an `Idempotency-Key` (only successes are recorded, so replayed)."""
    detail = "#/components/schemas/MatchDetailOutput"
    seen = {"etag": 0, "retry": 0, "replayed": 0}
    for path, method, operation in _operations(schema):
        idempotent = any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
        for code, response in operation["responses"].items():
            headers = set(response.get("headers", {}))
            if code in ("429", "503"):
                assert "Retry-After" in headers, (path, method, code)
                seen["retry"] += 1
            body = response.get("content", {}).get("application/json", {}).get("schema", {})
            if code.startswith("2") and body.get("$ref") == detail:
                assert response["headers"]["ETag"]["required"] is True, (path, method, code)
                seen["etag"] += 1
            if code.startswith("2") and idempotent:
                assert "Idempotent-Replayed" in headers, (path, method, code)
                seen["replayed"] += 1
    assert seen["etag"] >= 10 and seen["retry"] >= 20 and seen["replayed"] == 2, seen
    not_modified = schema["paths"]["/api/v1/matches/{match_id}"]["get"]["responses"]["304"]
    assert "content" not in not_modified and "ETag" in not_modified["headers"]


@pytest.mark.django_db
def test_the_headers_the_server_sends_are_the_declared_ones(
    schema: dict[str, Any], user_factory: Any, auth_client: Any
) -> None:
    """What the server answers, checked against the schema: a new match (and its replay)
    and its detail carry their declared `ETag` and `Idempotent-Replayed`, and the 304 of an
    `If-None-Match` that matches has no body."""
    relied_on = {"etag", "idempotent-replayed", "retry-after"}
    client = auth_client(user_factory(username="sara"))
    body = {"players": 2, "seats": [{"bot": "random"}]}
    headers = {"HTTP_IDEMPOTENCY_KEY": "the-first-match"}
    created = client.post("/api/v1/matches", body, format="json", **headers)
    replayed = client.post("/api/v1/matches", body, format="json", **headers)
    assert created.status_code == replayed.status_code == 201, created.content
    assert replayed["Idempotent-Replayed"] == "true"
    for response in (created, replayed):
        sent = {name.lower() for name in response.headers} & relied_on
        assert "etag" in sent
        assert sent <= _headers_declared(schema, "/api/v1/matches", "post", 201)
    url = f"/api/v1/matches/{created.json()['id']}"
    path = "/api/v1/matches/{match_id}"
    read = client.get(url)
    assert read.status_code == 200 and "etag" in _headers_declared(schema, path, "get", 200)
    unchanged = client.get(url, HTTP_IF_NONE_MATCH=read["ETag"])
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged["ETag"] == read["ETag"]
    assert "etag" in _headers_declared(schema, path, "get", 304)


STREAM_PATHS = ["/api/v1/matches/{match_id}/stream", "/api/v1/stream"]


def test_every_operation_that_answers_401_says_which_credentials_it_takes(
    schema: dict[str, Any],
) -> None:
    """A generated client sends a token only where the schema's ``security`` asks for one:
    the streams, which sign in by themselves (games.live.apis), declared none, and such
    clients were refused (401) on both."""
    missing = [
        f"{method.upper()} {path}"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "401" in operation.get("responses", {})
        and not any(requirement for requirement in operation.get("security", []))
        and operation["operationId"] != "auth_token_obtain"  # a password in its body
    ]
    assert missing == []
    streams = [schema["paths"][p]["get"] for p in STREAM_PATHS]
    detail = schema["paths"]["/api/v1/matches/{match_id}"]["get"]
    assert [op["security"] for op in streams] == [detail["security"]] * 2


def test_each_answer_of_an_operation_has_one_media_type_and_the_exports_have_their_own(
    schema: dict[str, Any],
) -> None:
    """A generated client reads an answer by its operation's one media type: the exports
    declared JSON and text on the same 200, so the clients parsed the text as JSON and
    failed. JSON at `.../export`, text at `.../export.txt`, each its own operation (errors
    JSON on both); `?format=text` is still answered at `.../export`, but not declared."""
    # (The streams answer NDJSON or server-sent events, as `Accept` asks: never JSON.)
    doubled = [
        (method, path, status, sorted(response["content"]))
        for path, method, operation in _operations(schema)
        for status, response in operation["responses"].items()
        if len(response.get("content", {})) > 1 and "application/json" in response["content"]
    ]
    assert doubled == []
    for kind, id_name, body in (
        ("deals", "deal_id", "DealRecordBody"),
        ("matches", "match_id", "MatchExportOutput"),
    ):
        json_op = schema["paths"][f"/api/v1/{kind}/{{{id_name}}}/export"]["get"]
        text_op = schema["paths"][f"/api/v1/{kind}/{{{id_name}}}/export.txt"]["get"]
        assert (json_op["operationId"], text_op["operationId"]) == (
            f"{kind}_export",
            f"{kind}_export_text",
        )
        assert json_op["responses"]["200"]["content"] == {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}
        }
        assert all(p["name"] != "format" for p in json_op.get("parameters", []))
        assert "`?format=text`" in json_op["description"]
        assert f"/api/v1/{kind}/{{{id_name}}}/export.txt" in json_op["description"]
        ok = text_op["responses"]["200"]
        assert ok["content"] == {"text/plain": {"schema": {"type": "string"}}}
        assert "Content-Disposition" in ok["headers"]
        assert [p["name"] for p in text_op.get("parameters", []) if p["in"] != "header"] == [
            id_name
        ]
        for status in ("400", "401", "403", "404"):
            errors = text_op["responses"][status]["content"]
            assert errors == json_op["responses"][status]["content"], status
            assert list(errors) == ["application/json"]


def _inline_objects(node: Any, where: str) -> list[str]:
    """Where ``node`` holds an object schema with properties written inline (not a
    ``$ref``): each is a class a generator has to name itself."""
    found = []
    if isinstance(node, dict):
        if node.get("properties"):
            found.append(where)
        for key, value in node.items():
            if key != "properties":
                found += _inline_objects(value, f"{where}.{key}")
            else:
                for name, prop in value.items():
                    found += _inline_objects(prop, f"{where}.{name}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _inline_objects(value, f"{where}[{i}]")
    return found


def test_the_components_have_stable_meaningful_names(schema: dict[str, Any]) -> None:
    """openapi-python-client named the inline time controls `TimeControl`..`TimeControl7`
    and the seats of a new match `MatchCreateInputRequestSeatsItemType0`..`2`, and the
    account's answers were named after their views (`MeApiOutput`, `RegisterApiOutput`):
    every object is a component, named for what it is."""
    components = schema["components"]["schemas"]
    inline = [
        spot
        for name, component in components.items()
        for field, prop in component.get("properties", {}).items()
        for spot in _inline_objects(prop, f"{name}.{field}")
    ]
    assert inline == []
    assert [name for name in components if "Api" in name] == []
    assert {
        "LiveTimeControl",
        "CorrespondenceTimeControl",
        "OpenSeat",
        "BotSeat",
        "UserSeat",
        "AccountOutput",
        "RegisteredAccountOutput",
        "RegisterInputRequest",
        "TokenObtainInputRequest",
        "TokenOutput",
        "AccessTokenCreateInputRequest",
        "AccessTokenCreatedOutput",
    } <= set(components)
    refs = {
        "#/components/schemas/LiveTimeControl",
        "#/components/schemas/CorrespondenceTimeControl",
    }
    for name in ("MatchCreateInputRequest", "MatchDetailOutput", "MatchSummaryOutput"):
        choices = components[name]["properties"]["time_control"]["oneOf"]
        assert {c.get("$ref") for c in choices} == refs | {None}, name
    seats = components["MatchCreateInputRequest"]["properties"]["seats"]["items"]["oneOf"]
    assert [c["$ref"].rsplit("/", 1)[1] for c in seats] == ["OpenSeat", "BotSeat", "UserSeat"]
    paths = schema["paths"]
    me = paths["/api/v1/auth/me"]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"
    ]
    assert me == {"$ref": "#/components/schemas/AccountOutput"}
    registered = paths["/api/v1/auth/register"]["post"]["responses"]["201"]["content"]
    assert registered["application/json"]["schema"]["$ref"].endswith("/RegisteredAccountOutput")


def test_a_draw_is_typed_as_the_seat_and_card_pair_it_is(schema: dict[str, Any]) -> None:
    """`draws` (a finished deal's record, a replay's full view, a record check) is sent as
    `[seat, card]` pairs; the schema said only "an array of integers or strings". OpenAPI
    3.0.3 has no tuples, so each item is the seat (0..3) or a card code, and there are two:
    what the server sends validates, a seat or card that cannot be does not."""
    from openapi_schema_validator import OAS30Validator

    from games import rules

    components = schema["components"]["schemas"]
    for name, field in (
        ("DealRecordOutput", "draws"),
        ("ReplayPositionOutput", "draws"),
        ("RecordCheckOutput", "draws"),
    ):
        draws = components[name]["properties"][field]
        assert draws["items"] == {"$ref": "#/components/schemas/Draw"}, name
    draw = components["Draw"]
    assert (draw["type"], draw["minItems"], draw["maxItems"]) == ("array", 2, 2)
    seat, card = draw["items"]["oneOf"]
    assert (seat["type"], seat["minimum"], seat["maximum"]) == ("integer", 0, 3)
    assert card["type"] == "string" and card["pattern"]
    validator = OAS30Validator(
        {"type": "array", "items": _inlined(schema, {"$ref": "#/components/schemas/Draw"})}
    )
    deal = rules.Deal(players=4, dealer=0, deck=rules.shuffled_deck("draws"))
    while deal.turn is not None:
        deal.play(deal.legal_moves()[0])
    sent = rules.Replay(deal, complete=True).to_dict()["draws"]
    assert len(sent) == 28 and validator.is_valid(sent)
    assert {code for _, code in sent} <= {c.code for c in rules.CARDS}
    for wrong in ([[4, "Ad"]], [[0, "Zz"]], [[0, "ad"]], [[0]], [[0, "Ad", 1]], [["0", "Ad"]]):
        assert not validator.is_valid(wrong), wrong


def test_returning_to_a_match_that_is_over_is_declared(schema: dict[str, Any]) -> None:
    operation = schema["paths"]["/api/v1/matches/{match_id}/return"]["post"]
    assert "`match_over`" in operation["description"]
    assert "`match_over`" in operation["responses"]["409"]["description"]
    assert "`seat_not_left`" in operation["responses"]["409"]["description"]
