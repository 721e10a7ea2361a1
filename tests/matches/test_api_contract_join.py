"""POST /api/v1/matches/{id}/join and /abort (issue #3)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from games.models import Deal, Match, Seat

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"


@pytest.mark.django_db
def test_join_an_open_seat_starts_a_full_match(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(seats=["open"])["id"]
    body = bob.join(match_id)
    assert body["your_seat"] == 1
    assert body["status"] == "active" and body["started_at"] is not None
    assert body["seats"][1] == {
        "seat": 1,
        "team": 1,
        "user": "bob",
        "is_bot": False,
        "bot_level": None,
        "joined": True,
        "away": False,
        "bot_holds": False,
    }
    assert body["current_deal"]["seat"] == 1 and len(body["current_deal"]["hand"]) == 3
    assert Deal.objects.filter(match_id=match_id).count() == 1


@pytest.mark.django_db
def test_join_with_a_seat_number(player: Callable[..., Player]) -> None:
    alice, bob, carol = player("alice"), player("bob"), player("carol")
    match_id = alice.create(players=4, seats=["open", "open", {"bot": "random"}])["id"]
    assert bob.join(match_id, {"seat": 2})["your_seat"] == 2
    # Seat 2 is bob's now, seat 3 a bot's, seat 0 alice's.
    for taken in (0, 2, 3):
        error = carol.error(
            "post", f"{URL}/{match_id}/join", {"seat": taken}, 409, "seat_unavailable"
        )
        assert error["details"] == {"seat": taken}
    body = carol.join(match_id)
    assert body["your_seat"] == 1 and body["status"] == "active"


@pytest.mark.django_db
def test_invited_seat_is_kept_for_the_invitee(player: Callable[..., Player]) -> None:
    alice, bob, carol, dave = player("alice"), player("bob"), player("carol"), player("dave")
    match_id = alice.create(players=4, seats=[{"user": "bob"}, "open", {"bot": "greedy"}])["id"]
    join = f"{URL}/{match_id}/join"
    carol.error("post", join, {"seat": 1}, 409, "seat_unavailable")
    # Bob may not take the open seat instead of the one he is invited to.
    bob.error("post", join, {"seat": 2}, 409, "seat_unavailable")
    assert carol.join(match_id)["your_seat"] == 2
    carol.error("post", join, {}, 409, "already_seated")
    # The last seat is bob's: nobody else can get in, nor learn how the match stands (a
    # private match with no seat for dave: 403, as his GET would be).
    dave.error("post", join, {}, 403, "match_private")
    assert Match.objects.get(pk=match_id).status == "waiting"
    body = bob.join(match_id, {"seat": 1})
    assert body["your_seat"] == 1 and body["status"] == "active"
    assert Seat.objects.filter(match_id=match_id, joined_at__isnull=True).count() == 0


@pytest.mark.django_db
def test_join_errors(player: Callable[..., Player]) -> None:
    alice, bob, carol = player("alice"), player("bob"), player("carol")
    waiting = alice.create(players=4, seats=["open", "open", "open"])["id"]
    alice.error("post", f"{URL}/{waiting}/join", {}, 409, "already_seated")
    alice.error("post", f"{URL}/{waiting}/join", {"seat": 1}, 409, "already_seated")
    bob.error("post", f"{URL}/{waiting}/join", {"seat": 4}, 400, "invalid_input")
    bob.error("post", f"{URL}/{waiting}/join", {"seat": "one"}, 400, "invalid_input")
    bob.error("post", f"{URL}/{waiting}/join", {"table": 1}, 400, "invalid_input")
    two = alice.create(seats=["open"])["id"]
    error = bob.error("post", f"{URL}/{two}/join", {"seat": 3}, 409, "seat_unavailable")
    assert error["details"] == {"seat": 3}
    started = alice.create()["id"]
    # A stranger to a private match that has started: 403, as GET; a player: 409.
    bob.error("post", f"{URL}/{started}/join", {}, 403, "match_private")
    bob.join(two)
    carol.error("post", f"{URL}/{two}/join", {}, 403, "match_private")
    bob.error("post", f"{URL}/{two}/join", {}, 409, "match_not_joinable")
    public = alice.create(public=True)["id"]
    carol.error("post", f"{URL}/{public}/join", {}, 409, "match_not_joinable")
    for unknown in (str(uuid.uuid4()), "not-a-uuid", "123"):
        bob.error("post", f"{URL}/{unknown}/join", {}, 404, "match_not_found")
    assert Seat.objects.filter(user=carol.user).count() == 0


@pytest.mark.django_db
def test_abort_by_the_creator_only(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(players=4, seats=["open", {"user": "bob"}, "open"])["id"]
    bob.error("post", f"{URL}/{match_id}/abort", None, 403, "not_match_creator")
    assert Match.objects.get(pk=match_id).status == "waiting"
    body = alice.post(f"{URL}/{match_id}/abort")
    assert body["status"] == "aborted" and body["end_reason"] == "aborted"
    assert body["finished_at"] is not None and body["winner"] is None
    alice.error("post", f"{URL}/{match_id}/abort", None, 409, "match_over")
    bob.error("post", f"{URL}/{match_id}/join", {}, 409, "match_not_joinable")
    events = alice.events(match_id)["events"]
    assert [e["type"] for e in events] == ["match_created", "match_ended"]
    assert events[-1]["status"] == "aborted"


@pytest.mark.django_db
def test_abort_errors(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    started = alice.create()["id"]
    body = alice.error("post", f"{URL}/{started}/abort", None, 409, "match_started")
    assert "resign" in body["message"]
    assert Match.objects.get(pk=started).status == "active"
    bob.error("post", f"{URL}/{started}/abort", None, 403, "not_match_creator")
    for unknown in (str(uuid.uuid4()), "nope"):
        alice.error("post", f"{URL}/{unknown}/abort", None, 404, "match_not_found")
    alice.post(f"{URL}/{started}/resign")
    assert Match.objects.get(pk=started).status in ("finished", "aborted")  # over, either way
    alice.error("post", f"{URL}/{started}/abort", None, 409, "match_over")
