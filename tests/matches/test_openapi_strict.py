"""Real answers validate against /api/schema/ as a strict OpenAPI 3.0.3 validator reads it
(openapi-core: `nullable` counts only beside a `type`, null must match a `oneOf`): a
generated client, or a validating proxy, accepts what the server really sends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from rest_framework.test import APIClient

from games.models import MatchEvent
from tests.matches.conftest import Player

URL = "/api/v1/matches"


@pytest.fixture(scope="module")
def spec(django_db_setup: None, django_db_blocker: Any) -> OpenAPI:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return OpenAPI.from_dict(response.json())


def check(spec: OpenAPI, method: str, path: str, response: Any, **query: Any) -> Any:
    """The response validates (status, media type, body) against the operation."""
    request = MockRequest(
        "http://testserver", method, path, args={k: str(v) for k, v in query.items()}
    )
    answer = MockResponse(
        response.content,
        status_code=response.status_code,
        headers=dict(response.headers),
        content_type=response.headers["Content-Type"],
    )
    spec.validate_response(request, answer)
    return json.loads(response.content)


def test_a_played_match_answers_what_its_schema_says(
    spec: OpenAPI, player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    alice = player("alice")
    created = alice.request(
        "post", URL, {"players": 2, "format": "first_to_2", "seats": [{"bot": "greedy"}]}
    )
    detail = check(spec, "post", URL, created)
    match_id = detail["id"]
    assert detail["end_reason"] is None and detail["time_control"] is None

    view = alice.detail(match_id)["current_deal"]  # the bot may have led since
    moved = alice.request(
        "post", f"{URL}/{match_id}/moves", {"card": view["legal"][0], "ply": view["ply"]}
    )
    assert moved.status_code == 201
    check(spec, "post", f"{URL}/{match_id}/moves", moved)

    # Unrated: every player's rating_change is null in the player's match list.
    final = play_out(match_id, [alice])
    assert final["status"] == "finished"
    detail = check(spec, "get", f"{URL}/{match_id}", alice.request("get", f"{URL}/{match_id}"))
    assert detail["end_reason"] == "played"
    listed = check(spec, "get", URL, alice.request("get", URL, {"mine": "true"}), mine="true")
    assert listed["results"][0]["id"] == match_id
    events = check(
        spec, "get", f"{URL}/{match_id}/events", alice.request("get", f"{URL}/{match_id}/events")
    )
    assert events["events"][-1]["type"] == "match_ended"
    deal = detail["deals"][0]["id"]
    replay_path = f"/api/v1/deals/{deal}/replay"
    check(spec, "get", replay_path, alice.request("get", replay_path))
    matches_path = "/api/v1/players/alice/matches"
    played = check(spec, "get", matches_path, alice.request("get", matches_path))
    assert played["results"][0]["rating_change"] is None


def test_a_waiting_match_and_its_event_log_answer_what_the_schema_says(
    spec: OpenAPI, player: Callable[..., Player]
) -> None:
    """``current_deal`` null before the start, a time control and the clock's events
    (an invitation declined, a seat left) in the event log."""
    alice, bob, carol = player("alice"), player("bob"), player("carol")
    created = alice.request(
        "post",
        URL,
        {
            "players": 2,
            "seats": ["open"],
            "time_control": {"per_move_seconds": 30},
            "on_timeout": "bot",
        },
    )
    waiting = check(spec, "post", URL, created)
    assert waiting["current_deal"] is None and waiting["status"] == "waiting"
    bob.join(waiting["id"])  # ... starts it: another one to leave
    invited = alice.create(seats=[{"user": "carol"}])["id"]
    carol.post(f"{URL}/{invited}/decline", {"reason": "busy"})
    opened = alice.create(players=4, seats=["open", "open", "open"])["id"]
    carol.join(opened)
    carol.post(f"{URL}/{opened}/leave")

    kinds = set()
    for match_id in (invited, opened):
        path = f"{URL}/{match_id}/events"
        events = check(spec, "get", path, alice.request("get", path))["events"]
        kinds |= {e["type"] for e in events}
    assert {"invitation_declined", "seat_left"} <= kinds
    assert MatchEvent.objects.filter(kind__in=kinds).count() == 2
