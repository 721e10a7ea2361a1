"""The streams refuse what they do not know before they start, as every endpoint does:
an unknown query parameter is 400 ``invalid_input`` (``unknown_field`` under its name,
the body /events answers), and ``?after=`` is a plain whole number (400
``invalid_event_id`` otherwise: ``+3``, where ``+`` is a space, ``%2B3``, `` 3``).

Served by WSGI (the test client), a stream answers the events owed and ends at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User
from tests.hardening.conftest import assert_clean_error

pytestmark = pytest.mark.django_db

NDJSON = "application/x-ndjson"
SSE = "text/event-stream"


@pytest.fixture
def setup(
    user_factory: Callable[..., User], auth_client: Callable[[User], APIClient], games: Any
) -> tuple[APIClient, str]:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob)
    return auth_client(alice), str(match.pk)


def _paths(match_id: str) -> list[str]:
    return [f"/api/v1/matches/{match_id}/stream", "/api/v1/stream"]


def _open(client: APIClient, url: str, accept: str = NDJSON, **extra: Any) -> Any:
    response = client.get(url, HTTP_ACCEPT=accept, **extra)
    if response.streaming:
        b"".join(response.streaming_content)
    return response


@pytest.mark.parametrize("accept", [NDJSON, SSE])
@pytest.mark.parametrize("query", ["foo=1", "after=1&foo=1", "Foo=", "after=1&before=2"])
def test_an_unknown_query_parameter_is_refused_as_everywhere(
    setup: tuple[APIClient, str], query: str, accept: str
) -> None:
    client, match_id = setup
    events = client.get(f"/api/v1/matches/{match_id}/events?{query}")
    expected = assert_clean_error(events, 400, "invalid_input")
    for path in _paths(match_id):
        response = _open(client, f"{path}?{query}", accept)
        assert not response.streaming
        body = assert_clean_error(response, 400, "invalid_input")
        if "after=1" not in query or path == "/api/v1/stream":
            # the same refusal as /events (whose after=1 is fine)
            assert body == expected
        for name in body["details"]:
            assert body["details"][name] == [{"code": "unknown_field", "message": "Unknown field."}]


@pytest.mark.parametrize(
    "after", ["+3", "%2B3", "%203", "3%20", "-1", "3.0", "0x3", "", "%EF%BC%93"]
)
def test_after_is_a_plain_whole_number(setup: tuple[APIClient, str], after: str) -> None:
    client, match_id = setup
    for path in _paths(match_id):
        response = _open(client, f"{path}?after={after}")
        body = assert_clean_error(response, 400, "invalid_event_id")
        assert "last_event_id" in body["details"]


def test_the_format_switch_and_after_are_welcome(setup: tuple[APIClient, str]) -> None:
    client, match_id = setup
    for path in _paths(match_id):
        assert _open(client, f"{path}?after=0").status_code == 200
        assert _open(client, f"{path}?format=ndjson&after=0", accept="*/*").status_code == 200
    # the header's id may have spaces around it (EventSource's own)
    assert (
        _open(client, f"/api/v1/matches/{match_id}/stream", HTTP_LAST_EVENT_ID=" 0 ").status_code
        == 200
    )


def test_the_account_streams_refusal_speaks_of_the_account_stream(
    setup: tuple[APIClient, str],
) -> None:
    client, match_id = setup
    body = assert_clean_error(_open(client, "/api/v1/stream?after=x"), 400, "invalid_event_id")
    assert "match" not in body["message"], body
    body = assert_clean_error(
        _open(client, f"/api/v1/matches/{match_id}/stream?after=x"), 400, "invalid_event_id"
    )
    assert "the match's latest" in body["message"]
