"""POST /api/v1/matches/{id}/resign (issue #3)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from games.models import Deal, Move
from games.rules import DealRecord

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"


@pytest.mark.django_db
def test_resigning_ends_the_match_for_the_other_team(player: Callable[..., Player]) -> None:
    alice, bob, eve = player("alice"), player("bob"), player("eve")
    match_id = alice.create(seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    turn = alice.detail(match_id)["current_deal"]["turn"]
    at = {0: alice, 1: bob}
    at[turn].play_first_legal(match_id)
    at[1 - turn].play_first_legal(match_id)
    eve.error("post", f"{URL}/{match_id}/resign", None, 403, "not_a_player")

    body = bob.post(f"{URL}/{match_id}/resign")
    assert body["status"] == "finished"
    assert body["winner"] == 0 and body["end_reason"] == "resigned"
    assert body["finished_at"] is not None
    assert body["deals_won"] == [0, 0]
    (summary,) = body["deals"]
    assert summary["status"] == "abandoned" and summary["winner"] is None
    deal_row = Deal.objects.get(pk=summary["id"])
    assert summary["seed"] == deal_row.seed
    assert summary["points"] == [deal_row.points_team0, deal_row.points_team1]
    assert body["current_deal"]["seed"] == deal_row.seed
    # Nobody is to play any more: no turn, no legal card, for either player.
    for person in (alice, bob):
        view = person.detail(match_id)["current_deal"]
        assert view["status"] == "abandoned"
        assert view["turn"] is None and view["legal"] == [] and view["ply"] == 2

    # The abandoned deal's record is open to the players; it replays to where it stopped.
    record_body = alice.get(f"/api/v1/deals/{deal_row.pk}")
    record = record_body["record"]
    assert record["format"] == "briscola-deal/1" and len(record["deck"]) == 40
    assert record["moves"] == list(
        Move.objects.filter(deal=deal_row).order_by("ply").values_list("card", flat=True)
    )
    assert len(record["moves"]) == 2
    assert hashlib.sha256(record["seed"].encode()).hexdigest() == deal_row.commitment
    replay = DealRecord.from_dict(record).replay()
    assert replay.complete is False and record_body["complete"] is False
    assert list(replay.deal.points) == summary["points"]

    events = alice.events(match_id)["events"]
    assert events[-2] == {
        "id": len(events) - 1,
        "type": "deal_abandoned",
        "at": events[-2]["at"],
        "deal": deal_row.pk,
        "seed": deal_row.seed,
    }
    assert events[-2]["at"] == events[-1]["at"]  # the resignation ended both at once
    assert events[-1]["type"] == "match_ended" and events[-1]["reason"] == "resigned"
    assert events[-1]["winner"] == 0

    bob.error("post", f"{URL}/{match_id}/resign", None, 409, "match_over")
    alice.error("post", f"{URL}/{match_id}/resign", None, 409, "match_over")
    eve.error("post", f"{URL}/{match_id}/resign", None, 403, "not_a_player")


@pytest.mark.django_db
def test_the_creator_resigning_against_a_bot(player: Callable[..., Player]) -> None:
    alice = player("alice")
    match_id = alice.create(format="first_to_3")["id"]
    alice.play_first_legal(match_id)  # every person has played a card: a real resignation
    body = alice.post(f"{URL}/{match_id}/resign")
    assert body["status"] == "finished" and body["winner"] == 1
    assert body["end_reason"] == "resigned"
    assert [d["status"] for d in body["deals"]] == ["abandoned"]
    assert body["current_deal"]["legal"] == [] and body["current_deal"]["turn"] is None


@pytest.mark.django_db
def test_resigning_before_playing_a_card_aborts_the_match(player: Callable[..., Player]) -> None:
    """Issue 19, item 14: before every person at the table has played a card, resigning
    aborts the match: no winner, never rated."""
    alice = player("alice")
    match_id = alice.create(format="first_to_3", rated=True)["id"]
    body = alice.post(f"{URL}/{match_id}/resign")
    assert (body["status"], body["end_reason"], body["winner"]) == ("aborted", "aborted", None)
    assert [d["status"] for d in body["deals"]] == ["abandoned"]
    assert body["current_deal"]["legal"] == [] and body["current_deal"]["turn"] is None
    assert len(body["current_deal"]["hand"]) == 3
    assert body["rating_changes"] == []


@pytest.mark.django_db
def test_resign_errors(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    waiting = alice.create(seats=["open"])["id"]
    alice.error("post", f"{URL}/{waiting}/resign", None, 409, "match_not_started")
    bob.error("post", f"{URL}/{waiting}/resign", None, 403, "not_a_player")
    for unknown in (str(uuid.uuid4()), "nope"):
        alice.error("post", f"{URL}/{unknown}/resign", None, 404, "match_not_found")
