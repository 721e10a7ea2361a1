"""A JSON string with an unpaired UTF-16 surrogate (``"\\ud800"``) is refused by the
parser: 400 ``invalid_input``, with DRF's code for the character
(``surrogate_characters_not_allowed``, as a CharField already said it) under the string's
path, never a 500.

Such a string decodes in Python to a ``str`` that cannot be encoded (UTF-8 refuses a lone
surrogate): it was a 500 wherever it went on, into a Redis key (the password throttle,
with Redis), or back out in an error's details (``invalid_match`` echoing a bot level or a
format), which the JSON renderer could not encode. The parser now refuses it, in keys
and values alike, before any view sees it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from accounts.models import User
from games.matches.services import SeatSpec
from tests.conftest import DEFAULT_PASSWORD
from tests.hardening.conftest import assert_clean_error

pytestmark = pytest.mark.django_db

INVALID = "invalid_input"


def _post(client: APIClient, url: str, raw: str) -> Any:
    return client.post(url, raw.encode("ascii"), content_type="application/json")


def _refused(response: Any) -> dict[str, Any]:
    body = assert_clean_error(response, 400, INVALID)
    [entries] = body["details"].values()
    assert [e["code"] for e in entries] == ["surrogate_characters_not_allowed"], body
    assert "Surrogate" in body["message"], body
    response.content.decode("utf-8")  # encodable, of course
    return body


@pytest.fixture
def client() -> APIClient:
    return APIClient(raise_request_exception=False)


@pytest.fixture
def signed_in(user_factory: Callable[..., User]) -> APIClient:
    from rest_framework.authtoken.models import Token

    user = user_factory(username="carol")
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
    return client


@pytest.mark.parametrize(
    "raw",
    [
        f'{{"username":"\\ud800abc","password":"{DEFAULT_PASSWORD}"}}',
        f'{{"username":"abc\\udfff","password":"{DEFAULT_PASSWORD}"}}',
        f'{{"username":"abc","password":"\\ud800{DEFAULT_PASSWORD}"}}',
        f'{{"\\ud800":"abc","username":"abc","password":"{DEFAULT_PASSWORD}"}}',
    ],
)
@pytest.mark.parametrize("url", ["/api/v1/auth/register", "/api/v1/auth/token"])
def test_sign_up_and_sign_in_refuse_a_lone_surrogate(client: APIClient, url: str, raw: str) -> None:
    _refused(_post(client, url, raw))
    assert not User.objects.exists()


@pytest.mark.parametrize(
    "raw",
    [
        '{"players":2,"seats":[{"bot":"\\ud800"}]}',
        '{"players":2,"seats":["open"],"format":"\\ud800"}',
        '{"players":2,"seats":["open"],"options":{"\\udc00x":true}}',
        '[{"a":["x","y\\ud83d"]}]',
    ],
)
def test_creating_a_match_refuses_a_lone_surrogate(signed_in: APIClient, raw: str) -> None:
    body = _refused(_post(signed_in, "/api/v1/matches", raw))
    assert "U+D" in body["message"]  # names the code point, does not echo it


def test_the_record_check_refuses_a_lone_surrogate(signed_in: APIClient) -> None:
    _refused(_post(signed_in, "/api/v1/records/check", '{"seed":"\\ud800"}'))


def test_a_surrogate_pair_is_one_character_and_welcome(signed_in: APIClient) -> None:
    """An escaped pair (``\\ud83d\\ude00``, an emoji) is a character like any other: the
    request goes on, and is refused (or not) for what it says."""
    response = _post(
        signed_in, "/api/v1/matches", '{"players":2,"seats":[{"bot":"\\ud83d\\ude00"}]}'
    )
    assert_clean_error(response, 400)
    assert "surrogate" not in response.content.decode("utf-8")
    assert "\U0001f600" in response.content.decode("utf-8")


def test_the_refusal_names_where_the_string_is(signed_in: APIClient) -> None:
    body = _refused(
        _post(signed_in, "/api/v1/matches", '{"players":2,"seats":[{"bot":"\\ud800"}]}')
    )
    assert body["details"] == {
        "seats[0].bot": [
            {
                "code": "surrogate_characters_not_allowed",
                "message": "Surrogate characters are not allowed: U+D800.",
            }
        ]
    }
    body = _refused(_post(signed_in, "/api/v1/matches", '{"a":{"\\ud800":1}}'))
    assert list(body["details"]) == ["a.\\ud800"]  # the key, escaped: encodable
    body = _refused(_post(signed_in, "/api/v1/matches", '"\\udfff"'))
    assert list(body["details"]) == ["non_field_errors"]


def _post_routes() -> list[str]:
    """Every route of the URLconf under /api/ whose view answers POST, its parameters filled
    with ``{name}`` placeholders."""
    routes: list[str] = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                view_class = getattr(pattern.callback, "view_class", None)
                if view_class is not None and hasattr(view_class, "post"):
                    routes.append(route)

    walk(get_resolver().url_patterns, "/")
    return sorted(r for r in routes if r.startswith("/api/"))


POST_ROUTES = _post_routes()


def test_the_sweep_sees_every_write() -> None:
    for route in ["/api/v1/matches", "/api/v1/auth/register", "/api/v1/records/check"]:
        assert route in POST_ROUTES
    assert len(POST_ROUTES) >= 15, POST_ROUTES
    assert _takes_a_body("/api/v1/matches/<str:match_id>/moves")
    assert not _takes_a_body("/api/v1/matches/<str:match_id>/resign")


@pytest.mark.parametrize("route", POST_ROUTES)
@pytest.mark.parametrize("raw", ['{"x":"\\ud800"}', '{"\\udfff":1}', '["\\ud800"]'])
def test_every_post_endpoint_refuses_a_lone_surrogate(
    route: str,
    raw: str,
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    games: Any,
) -> None:
    """On every POST route, signed in, with ids that exist (a match of the caller's and its
    deal): never a 500. A route whose operation takes a body refuses it (400); one that
    takes none (``request=None``: abort, resign, ...) does not read it, and answers as it
    would without it, never a 5xx."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob)
    deal = games.current_deal(match)
    url = (
        route.replace("<str:match_id>", str(match.pk))
        .replace("<str:deal_id>", str(deal.pk))
        .replace("<str:token_id>", "1")
        .replace("<str:username>", "alice")
    )
    assert "<" not in url, url
    client = auth_client(alice)
    client.raise_request_exception = False
    response = _post(client, url, raw)
    if _takes_a_body(route):
        _refused(response)
    else:
        assert response.status_code < 500, (response.status_code, response.content[:300])
        if response.status_code >= 400:
            assert_clean_error(response)


@cache
def _operations_with_a_body() -> frozenset[str]:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return frozenset(
        path for path, item in schema["paths"].items() if "requestBody" in item.get("post", {})
    )


def _takes_a_body(route: str) -> bool:
    path = re.sub(r"<str:(\w+)>", r"{\1}", route)
    return path in _operations_with_a_body()


@pytest.mark.parametrize(
    ("field", "seats"),
    # (a user name with a surrogate is refused before: no control characters in names)
    [("format", [SeatSpec("open")]), ("bot", [SeatSpec("bot", "\ud800")])],
)
def test_the_match_errors_never_echo_what_cannot_be_encoded(
    user_factory: Callable[..., User], field: str, seats: list[SeatSpec]
) -> None:
    """Whatever reaches the service (the parser keeps such strings out of JSON bodies),
    ``invalid_match`` shows a client's value back encodable: the surrogate escaped."""
    from games.errors import InvalidMatchError
    from games.matches.services import match_create

    alice = user_factory(username="alice")
    fmt = "\ud800" if field == "format" else "single"
    with pytest.raises(InvalidMatchError) as caught:
        match_create(creator=alice, players=2, format=fmt, seats=seats)
    json.dumps(caught.value.details, ensure_ascii=False).encode("utf-8")
    assert "\\ud800" in caught.value.details[field]
