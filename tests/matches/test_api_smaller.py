"""The "Smaller" points of issue 16, each kept fixed: a trailing slash, strict integers,
JSON-only bodies, timestamps on events and matches, explicit pending ratings, messages
that are sentences, invitations listed as joinable for the invitee."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from tests.matches.conftest import Player, assert_error_shape

URL = "/api/v1/matches"


@pytest.mark.django_db
def test_a_trailing_slash_redirects_to_the_url_without_it_keeping_the_method(
    player: Callable[..., Player],
) -> None:
    alice = player("alice")
    got = alice.client.get(f"{URL}/?mine=true")
    assert got.status_code == 308 and got["Location"] == f"{URL}?mine=true"
    posted = alice.client.post(f"{URL}/", {"players": 2, "seats": ["open"]}, format="json")
    assert posted.status_code == 308 and posted["Location"] == URL
    followed = alice.client.post(
        f"{URL}/", {"players": 2, "seats": ["open"]}, format="json", follow=True
    )
    assert followed.status_code == 201 and followed.json()["status"] == "waiting"
    # A URL that does not exist either way is still a JSON 404.
    assert_error_shape(alice.client.get("/api/v1/nothing/"), 404, "not_found")


@pytest.mark.django_db
@pytest.mark.parametrize("ply", ["0", 0.0, True, None])
def test_ply_must_be_a_json_integer(player: Callable[..., Player], ply: Any) -> None:
    alice = player("alice")
    match = alice.create(seats=["open"])
    bob = player("bob")
    bob.join(match["id"])
    detail = alice.detail(match["id"])
    deal = detail["current_deal"]
    mover = alice if deal["turn"] == 0 else bob
    card = mover.detail(match["id"])["current_deal"]["legal"][0]
    error = mover.error(
        "post", f"{URL}/{match['id']}/moves", {"card": card, "ply": ply}, 400, "invalid_input"
    )
    assert list(error["details"]) == ["ply"]
    assert error["details"]["ply"][0]["code"] in ("invalid", "null")
    assert "ply" in error["message"]
    assert mover.detail(match["id"])["current_deal"]["ply"] == 0  # nothing was played


@pytest.mark.django_db
@pytest.mark.parametrize("url", [URL, "/api/v1/records/check", "/api/v1/auth/token"])
def test_a_form_body_is_415_on_every_write(player: Callable[..., Player], url: str) -> None:
    alice = player("alice")
    response = alice.client.post(url, {"players": "2", "seats": "open"})  # multipart
    assert_error_shape(response, 415, "unsupported_media_type")
    response = alice.client.post(url, "players=2", content_type="application/x-www-form-urlencoded")
    assert_error_shape(response, 415, "unsupported_media_type")
    # What to send instead, and what was sent (no Content-Type at all, too).
    error = response.json()
    assert "Content-Type: application/json" in error["message"]
    assert error["details"] == {
        "media_type": "application/x-www-form-urlencoded",
        "accepted": ["application/json"],
    }
    response = alice.client.generic("POST", url, b'{"players": 2}', content_type="")
    assert_error_shape(response, 415, "unsupported_media_type")
    assert "no Content-Type" in response.json()["message"]
    assert response.json()["details"]["media_type"] is None


@pytest.mark.django_db
def test_every_event_has_at_and_matches_have_last_move_at(player: Callable[..., Player]) -> None:
    alice = player("alice")
    match = alice.create(seats=["open"])
    assert match["last_move_at"] is None
    bob = player("bob")
    bob.join(match["id"])
    assert alice.detail(match["id"])["last_move_at"] is None
    people = {0: alice, 1: bob}
    for _ in range(3):
        deal = alice.detail(match["id"])["current_deal"]
        people[deal["turn"]].play_first_legal(match["id"])
    detail = alice.detail(match["id"])
    events = alice.events(match["id"])["events"]
    times = [datetime.fromisoformat(e["at"].replace("Z", "+00:00")) for e in events]
    assert times == sorted(times)
    played = [e for e in events if e["type"] == "card_played"]
    assert len(played) == 3 and detail["last_move_at"] == played[-1]["at"]
    listed = next(m for m in alice.get(URL)["results"] if m["id"] == match["id"])
    assert listed["last_move_at"] == detail["last_move_at"]


@pytest.mark.django_db
def test_ratings_pending_is_said_explicitly(player: Callable[..., Player]) -> None:
    alice = player("alice")
    unrated = alice.create()
    assert unrated["ratings"] == "unrated" and unrated["rating_changes"] == []
    rated = alice.create(rated=True)
    assert rated["ratings"] == "pending"
    alice.play_first_legal(rated["id"])  # resigning before one's first card aborts, unrated
    # The resignation's answer is made before the rating task runs (on commit).
    resigned = alice.post(f"{URL}/{rated['id']}/resign")
    assert resigned["status"] == "finished"
    assert resigned["ratings"] == "pending" and resigned["rating_changes"] == []
    later = alice.detail(rated["id"])
    assert later["ratings"] == "applied" and len(later["rating_changes"]) == 2


@pytest.mark.django_db
def test_not_your_turn_says_so_in_a_sentence(player: Callable[..., Player]) -> None:
    alice = player("alice")
    match = alice.create(seats=["open"])
    bob = player("bob")
    bob.join(match["id"])
    deal = alice.detail(match["id"])["current_deal"]
    waiter = bob if deal["turn"] == 0 else alice
    hand = waiter.detail(match["id"])["current_deal"]["hand"]
    error = waiter.error(
        "post", f"{URL}/{match['id']}/moves", {"card": hand[0], "ply": 0}, 409, "not_your_turn"
    )
    message = error["message"]
    assert message[0].isupper() and message.endswith(".") and "not your turn" in message


@pytest.mark.django_db
def test_an_invitation_is_listed_as_joinable_for_the_invitee_only(
    player: Callable[..., Player],
) -> None:
    alice, bob, carol = player("alice"), player("bob"), player("carol")
    invitation = alice.create(seats=[{"user": "bob"}])
    assert invitation["status"] == "waiting"
    assert invitation["id"] in [m["id"] for m in bob.get(URL, {"open": "true"})["results"]]
    assert invitation["id"] not in [m["id"] for m in carol.get(URL, {"open": "true"})["results"]]
    bob.join(invitation["id"])
    assert invitation["id"] not in [m["id"] for m in bob.get(URL, {"open": "true"})["results"]]
