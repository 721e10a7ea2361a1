"""Hostile input gets a clean 4xx: the one JSON error shape, never a 5xx or an HTML page;
each case pins its status and its code.

Table-driven over the main endpoints: oversized bodies, malformed JSON, wrong types,
unknown fields, huge page sizes and ids, malformed tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from accounts.models import User
from tests.hardening.conftest import assert_clean_error

pytestmark = pytest.mark.django_db

LIMIT = 256 * 1024
INVALID = "invalid_input"
MALFORMED = "malformed_request"
HUGE = "9" * 40


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    url: str  # {match} and {deal}: a match of the caller's, and its deal
    body: Any = None  # JSON-encoded unless raw
    raw: bytes | None = None
    content_type: str = "application/json"
    # Every case says its status and code (None: a 200, no error).
    status: int = field(kw_only=True)
    code: str | None = field(kw_only=True)
    extra: dict[str, str] = field(default_factory=dict)


def big_json(size: int) -> bytes:
    return json.dumps({"players": 2, "seats": ["open"], "pad": "x" * size}).encode()


WRITES = [
    "/api/v1/matches",
    "/api/v1/matches/{match}/moves",
    "/api/v1/matches/{match}/join",
    "/api/v1/auth/register",
    "/api/v1/auth/token",
]

CASES: list[Case] = [
    # -- oversized and malformed bodies, on every write --------------------------------
    *[
        Case(f"too large {u}", "post", u, raw=big_json(LIMIT), status=413, code="request_too_large")
        for u in WRITES
    ],
    *[
        Case(
            f"bad json {u}", "post", u, raw=b'{"players": 2,', status=400, code="malformed_request"
        )
        for u in WRITES
    ],
    *[
        Case(
            f"deep json {u}",
            "post",
            u,
            raw=b"[" * 100_000 + b"]" * 100_000,
            status=400,
            code=MALFORMED,
        )
        for u in WRITES
    ],
    *[
        Case(f"not utf-8 {u}", "post", u, raw=b'{"card": "\xff\xfe"}', status=400, code=MALFORMED)
        for u in WRITES
    ],
    *[
        Case(
            f"text/plain {u}",
            "post",
            u,
            raw=b"hello",
            content_type="text/plain",
            status=415,
            code="unsupported_media_type",
        )
        for u in WRITES
    ],
    Case(
        "record over 64 kB",
        "post",
        "/api/v1/records/check",
        raw=big_json(70_000),
        status=413,
        code="record_too_large",
    ),
    Case(
        "record over the body limit",
        "post",
        "/api/v1/records/check",
        raw=big_json(LIMIT),
        status=413,
        code="request_too_large",
    ),
    # -- wrong types -----------------------------------------------------------------------
    Case(
        "players a string",
        "post",
        "/api/v1/matches",
        {"players": "two", "seats": ["open"]},
        status=400,
        code=INVALID,
    ),
    Case(
        "players huge",
        "post",
        "/api/v1/matches",
        {"players": 10**40, "seats": ["open"]},
        status=400,
        code=INVALID,
    ),
    Case(
        "seats a string",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": "open"},
        status=400,
        code=INVALID,
    ),
    Case(
        "seats nested",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": [[["open"]]]},
        status=400,
        code=INVALID,
    ),
    Case(
        "seat an int",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": [7]},
        status=400,
        code=INVALID,
    ),
    Case(
        "too many seats",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": ["open"] * 50},
        status=400,
        code=INVALID,
    ),
    Case(
        "public a list",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": ["open"], "public": []},
        status=400,
        code=INVALID,
    ),
    Case("body a list", "post", "/api/v1/matches", [1, 2, 3], status=400, code=INVALID),
    Case("body a number", "post", "/api/v1/matches", 42, status=400, code=INVALID),
    Case("body null", "post", "/api/v1/matches", None, raw=b"null", status=400, code=INVALID),
    Case(
        "card a number",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": 5, "ply": 0},
        status=400,
        code=INVALID,
    ),
    Case(
        "card huge",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "A" * 10_000, "ply": 0},
        status=400,
        code=INVALID,
    ),
    Case(
        "card unicode",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "A\u2660", "ply": 0},
        status=400,
        code="invalid_card",
    ),
    Case(
        "ply a string",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "Ad", "ply": "zero"},
        status=400,
        code=INVALID,
    ),
    Case(
        "ply negative",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "Ad", "ply": -1},
        status=400,
        code=INVALID,
    ),
    Case(
        "ply huge",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "Ad", "ply": 10**40},
        status=400,
        code=INVALID,
    ),
    Case(
        "ply float",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "Ad", "ply": 1.5},
        status=400,
        code=INVALID,
    ),
    Case(
        "ply inf",
        "post",
        "/api/v1/matches/{match}/moves",
        raw=b'{"card": "Ad", "ply": 1e999}',
        status=400,
        code=INVALID,
    ),
    Case(
        "ply NaN",
        "post",
        "/api/v1/matches/{match}/moves",
        raw=b'{"card": "Ad", "ply": NaN}',
        status=400,
        code=MALFORMED,
    ),
    Case(
        "join seat a string",
        "post",
        "/api/v1/matches/{match}/join",
        {"seat": "one"},
        status=400,
        code=INVALID,
    ),
    Case(
        "join seat 99",
        "post",
        "/api/v1/matches/{match}/join",
        {"seat": 99},
        status=400,
        code=INVALID,
    ),
    Case(
        "username a list",
        "post",
        "/api/v1/auth/register",
        {"username": [], "password": "x"},
        status=400,
        code=INVALID,
    ),
    Case(
        "username too long",
        "post",
        "/api/v1/auth/register",
        {"username": "u" * 10_000, "password": "a-long-password-1"},
        status=400,
        code=INVALID,
    ),
    # -- unknown fields --------------------------------------------------------------------
    Case(
        "unknown create field",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": ["open"], "admin": True},
        status=400,
        code="invalid_input",
    ),
    Case(
        "unknown option",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": ["open"], "options": {"cheat": True}},
        status=400,
        code="invalid_input",
    ),
    Case(
        "unknown move field",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "Ad", "ply": 0, "seat": 1},
        status=400,
        code="invalid_input",
    ),
    Case(
        "unknown query field",
        "get",
        "/api/v1/matches?evil=1",
        status=400,
        code="invalid_input",
    ),
    # -- huge page sizes, pages and ids ----------------------------------------------------
    Case("matches page_size -1", "get", "/api/v1/matches?page_size=-1", status=400, code=INVALID),
    Case("matches page huge", "get", f"/api/v1/matches?page={HUGE}", status=404, code="not_found"),
    Case("matches page zero", "get", "/api/v1/matches?page=0", status=400, code=INVALID),
    Case(
        "leaderboard page_size text",
        "get",
        "/api/v1/leaderboard?page_size=lots",
        status=400,
        code=INVALID,
    ),
    Case(
        "leaderboard page huge",
        "get",
        f"/api/v1/leaderboard?page={HUGE}",
        status=404,
        code="not_found",
    ),
    Case(
        "events after huge",
        "get",
        f"/api/v1/matches/{{match}}/events?after={HUGE}",
        status=200,  # a fair answer: nothing after it
        code=None,
    ),
    Case(
        "events after text",
        "get",
        "/api/v1/matches/{match}/events?after=x",
        status=400,
        code=INVALID,
    ),
    Case(
        "events after negative",
        "get",
        "/api/v1/matches/{match}/events?after=-5",
        status=400,
        code=INVALID,
    ),
    Case(
        "match id garbage", "get", "/api/v1/matches/' OR 1=1 --", status=404, code="match_not_found"
    ),
    Case(
        "match id long", "get", "/api/v1/matches/" + "a" * 5000, status=404, code="match_not_found"
    ),
    Case("deal id huge", "get", f"/api/v1/deals/{HUGE}", status=404, code="deal_not_found"),
    Case(
        "replay ply huge",
        "get",
        f"/api/v1/deals/{{deal}}/replay?ply={HUGE}",
        status=400,
        code=INVALID,
    ),
    Case(
        "replay seat text", "get", "/api/v1/deals/{deal}/replay?seat=me", status=400, code=INVALID
    ),
    # A number in a query is its ASCII digits: DRF took these as 0 or 3 (the outside audit).
    *[
        Case(
            f"query number {spelling!r}: {url}",
            "get",
            url.format(n=quote(spelling)),
            status=400,
            code=INVALID,
        )
        for spelling in ("0.0", "+0", " 0", "0 ", "\u0660", "\u0663", "1e0", "0x1")
        for url in (
            "/api/v1/deals/{{deal}}/replay?seat={n}",
            "/api/v1/deals/{{deal}}/replay?ply={n}",
            "/api/v1/matches?page={n}",
            "/api/v1/leaderboard?page_size={n}",
            "/api/v1/matches/{{match}}/events?after={n}",
        )
    ],
    Case(
        "player name long",
        "get",
        "/api/v1/players/" + "p" * 5000,
        status=404,
        code="player_not_found",
    ),
    # -- issue 19, item 11: NUL bytes (PostgreSQL refuses them in text) and deep JSON ------
    *[
        Case(
            f"nul in player name{page}",
            "get",
            f"/api/v1/players/a%00b{page}",
            status=400,
            code="invalid_input",
        )
        for page in ("", "/rating-history", "/matches")
    ],
    Case(
        "nul in an invitation",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": [{"user": "a\u0000b"}]},
        status=400,
        code="invalid_input",
    ),
    Case(
        "nul in a bot level",
        "post",
        "/api/v1/matches",
        {"players": 2, "seats": [{"bot": "gr\u0000eedy"}]},
        status=400,
        code="invalid_input",
    ),
    *[
        Case(
            f"nul in {field} {u}",
            "post",
            u,
            {"username": "a\u0000b" if field == "username" else "alice", "password": "p\u0000"},
            status=400,
            code="invalid_input",
        )
        for u in ("/api/v1/auth/register", "/api/v1/auth/token")
        for field in ("username", "password")
    ],
    Case(
        "nul in a card",
        "post",
        "/api/v1/matches/{match}/moves",
        {"card": "A\u0000d", "ply": 0},
        status=400,
        code="invalid_input",
    ),
    # JSON nested deeper than briscola_service.parsers.MAX_JSON_DEPTH: 400 before it is
    # decoded (1,000 levels, 2 kB, exhausted Python's stack: a RecursionError, a 500).
    *[
        Case(
            f"json {depth} deep {u}",
            "post",
            u,
            raw=b"[" * depth + b"]" * depth,
            status=400,
            code="malformed_request",
        )
        for u in WRITES
        for depth in (1_000, 5_000)
    ],
    *[
        Case(
            f"json {depth} deep /api/v1/records/check",
            "post",
            "/api/v1/records/check",
            raw=b"[" * depth + b"]" * depth,
            status=400,
            code="invalid_record",  # as any body that is not a JSON record there
        )
        for depth in (33, 1_000, 5_000)
    ],
    Case(
        "json 1000 deep in a record",
        "post",
        "/api/v1/records/check",
        raw=b'{"format": "briscola-deal/1", "moves": ' + b"[" * 1000 + b"]" * 1000 + b"}",
        status=400,
        code="invalid_record",
    ),
]


@pytest.fixture
def alice_client(
    user_factory: Callable[..., User], auth_client: Callable[[User], APIClient], games: Any
) -> tuple[APIClient, dict[str, Any]]:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob)
    ids = {"match": match.pk, "deal": games.current_deal(match).pk}
    return auth_client(alice), ids


def send(client: APIClient, case: Case, ids: dict[str, Any]) -> Any:
    url = case.url.format(**ids)
    headers = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in case.extra.items()}
    if case.method == "get":
        return client.get(url, **headers)
    raw = case.raw if case.raw is not None else json.dumps(case.body).encode()
    return client.generic("POST", url, raw, content_type=case.content_type, **headers)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input_gets_a_clean_4xx(
    case: Case, alice_client: tuple[APIClient, dict[str, Any]]
) -> None:
    client, ids = alice_client
    response = send(client, case, ids)
    if case.status == 200:
        assert response.status_code == 200, response.content[:300]
        assert response.json() == {"last_id": response.json()["last_id"], "events": []}
        return
    assert case.code is not None
    assert_clean_error(response, case.status, case.code)


@pytest.mark.parametrize(
    "url",
    [
        f"/api/v1/matches?page_size={HUGE}",
        "/api/v1/matches?page_size=101",
        f"/api/v1/leaderboard?page_size={HUGE}",
        "/api/v1/players/alice/matches?page_size=1000",
    ],
)
def test_a_page_size_above_100_is_served_as_100(
    url: str, alice_client: tuple[APIClient, dict[str, Any]]
) -> None:
    """Issue 16: clamped to the maximum, as most APIs do (not an error)."""
    client, _ = alice_client
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert len(body["results"]) <= 100 and body["count"] >= len(body["results"])


def test_the_body_limit_is_256_kb() -> None:
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == LIMIT


def test_a_body_just_under_the_limit_is_parsed(
    alice_client: tuple[APIClient, dict[str, Any]],
) -> None:
    client, ids = alice_client
    raw = big_json(LIMIT - 1000)
    assert len(raw) < LIMIT
    response = client.generic("POST", "/api/v1/matches", raw, content_type="application/json")
    body = assert_clean_error(response, 400, "invalid_input")
    assert "pad" in body["details"]  # parsed, then refused as an unknown field


# -- malformed tokens, on the main endpoints ---------------------------------------------

BAD_AUTHORIZATIONS = [
    ("no key", "Token", "authentication_failed"),
    ("no key, space", "Token ", "authentication_failed"),
    ("two parts", "Token a b", "authentication_failed"),
    ("unknown key", "Token " + "0" * 40, "authentication_failed"),
    ("latin-1 key", "Token caf\u00e9", "authentication_failed"),
    ("non-latin-1 key", "Token \u2603\u2603", "authentication_failed"),
    ("nul byte", "Token abc\x00def", "authentication_failed"),
    ("very long key", "Token " + "a" * 10_000, "authentication_failed"),
    ("bearer", "Bearer x", "authentication_failed"),  # Bearer is a scheme we read
    ("basic", "Basic Zm9vOmJhcg==", "not_authenticated"),
    ("empty", "", "not_authenticated"),
]

AUTHENTICATED_ENDPOINTS = [
    ("get", "/api/v1/auth/me"),
    ("post", "/api/v1/auth/token/revoke"),
    ("get", "/api/v1/matches"),
    ("post", "/api/v1/matches"),
    ("get", "/api/v1/matches/{match}"),
    ("post", "/api/v1/matches/{match}/moves"),
    ("get", "/api/v1/matches/{match}/events"),
    ("get", "/api/v1/deals/{deal}"),
]


@pytest.mark.parametrize("endpoint", AUTHENTICATED_ENDPOINTS, ids=lambda e: f"{e[0]} {e[1]}")
@pytest.mark.parametrize("auth", BAD_AUTHORIZATIONS, ids=lambda a: a[0])
def test_malformed_tokens_get_401(
    auth: tuple[str, str, str],
    endpoint: tuple[str, str],
    alice_client: tuple[APIClient, dict[str, Any]],
) -> None:
    _, ids = alice_client
    _, header, code = auth
    method, url = endpoint
    client = APIClient()
    url = url.format(**ids)
    if method == "get":
        response = client.get(url, HTTP_AUTHORIZATION=header)
    else:
        response = client.post(url, {}, format="json", HTTP_AUTHORIZATION=header)
    assert_clean_error(response, 401, code)
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_json_depth_limit_counts_only_nesting() -> None:
    """The limit is on nesting: brackets in strings, and many side by side, are fine."""
    from briscola_service.parsers import MAX_JSON_DEPTH, JSONTooDeepError, json_loads

    tricky = {"s": "[" * 10_000, "t": '\\"]{'}
    assert json_loads(json.dumps(tricky)) == tricky
    assert len(json_loads(json.dumps([[1]] * 10_000))) == 10_000
    deepest = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_loads(deepest) is not None
    with pytest.raises(JSONTooDeepError):
        json_loads("[" + deepest + "]")
    with pytest.raises(JSONTooDeepError):
        json_loads('{"a": ' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1))
    # Brackets that do not pair up, nested past Python's stack: refused, not a crash.
    with pytest.raises((JSONTooDeepError, ValueError)):
        json_loads("[" * 5000 + "}" * 5000)


def test_a_value_not_among_the_choices_is_named_as_sent_with_the_choices(
    alice_client: tuple[APIClient, dict[str, Any]],
) -> None:
    """DRF answered '"3" is not a valid choice.' for the integer 3 (the outside audit)."""
    client, _ = alice_client
    response = client.post(
        "/api/v1/matches", {"players": 3, "seats": ["open"], "format": "best"}, format="json"
    )
    body = response.json()
    assert response.status_code == 400 and body["code"] == "invalid_input", body
    assert body["details"]["players"] == [
        {"code": "invalid_choice", "message": "3 is not one of the choices: 2, 4."}
    ]
    assert body["details"]["format"][0]["message"].startswith(
        '"best" is not one of the choices: "single", '
    )
