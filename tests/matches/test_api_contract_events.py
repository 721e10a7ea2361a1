"""GET /api/v1/matches/{id}/events?after=N (issue #3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from games.matches.selectors import deal_state
from games.models import Deal

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"


def _check_numbering(feed: dict[str, Any]) -> None:
    ids = [e["id"] for e in feed["events"]]
    assert ids == list(range(1, feed["last_id"] + 1))


@pytest.mark.django_db
def test_events_through_a_whole_deal(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(seats=[{"user": "bob"}])["id"]
    at = {0: alice, 1: bob}
    assert [e["type"] for e in alice.events(match_id)["events"]] == ["match_created"]
    bob.join(match_id)
    deal_row = Deal.objects.get(match_id=match_id)
    state = deal_state(deal_row)

    feeds = {seat: person.events(match_id) for seat, person in at.items()}
    for seat, feed in feeds.items():
        _check_numbering(feed)
        types = [e["type"] for e in feed["events"]]
        assert types == ["match_created", "match_started", "deal_started"] + ["hand_dealt"] * 2
        started = feed["events"][2]
        assert started["commitment"] == deal_row.commitment and started["deal"] == deal_row.pk
        assert started["briscola"] == state.briscola.code
        assert started["dealer"] == deal_row.dealer
        assert "seed" not in started
        dealt = {e["seat"]: e["cards"] for e in feed["events"] if e["type"] == "hand_dealt"}
        assert dealt[seat] == [c.code for c in state.hands[seat]]
        assert dealt[1 - seat] is None
    assert feeds[0]["last_id"] == feeds[1]["last_id"] == 5

    # Play until the face-up briscola has been drawn (after trick 17: ply 34).
    play_out(match_id, [alice, bob], stop=lambda d: d["current_deal"]["ply"] >= 34)
    feeds = {seat: person.events(match_id) for seat, person in at.items()}
    assert feeds[0]["last_id"] == feeds[1]["last_id"]
    assert [e["type"] for e in feeds[0]["events"]] == [e["type"] for e in feeds[1]["events"]]
    state = deal_state(deal_row)
    for seat, feed in feeds.items():
        _check_numbering(feed)
        draws = [e for e in feed["events"] if e["type"] == "card_drawn"]
        assert len(draws) == 34
        assert [e["seat"] for e in draws] == [d.seat for d in state.draws]
        (face_up,) = [e for e in draws if e["briscola"]]
        assert face_up["card"] == state.briscola.code  # public to everyone
        for event, draw in zip(draws, state.draws, strict=True):
            if event["briscola"]:
                continue
            expected = draw.card.code if draw.seat == seat else None
            assert event["card"] == expected
        plays = [e for e in feed["events"] if e["type"] == "card_played"]
        assert [e["card"] for e in plays] == [c.code for c in state.moves]
        assert [e["ply"] for e in plays] == list(range(34))
        tricks = [e for e in feed["events"] if e["type"] == "trick_won"]
        assert [(t["winner"], t["points"]) for t in tricks] == [
            (t.winner, t.points) for t in state.tricks
        ]

    # after=N: only the later events, with the same ids.
    full = feeds[0]
    for after in (0, 3, full["last_id"] - 1, full["last_id"], full["last_id"] + 10):
        part = alice.events(match_id, after)
        assert part["last_id"] == full["last_id"]
        assert part["events"] == full["events"][after:]

    final = play_out(match_id, [alice, bob])
    assert final["status"] == "finished"
    deal_row.refresh_from_db()
    state = deal_state(deal_row)
    feeds = {seat: person.events(match_id) for seat, person in at.items()}
    assert feeds[0] == feeds[1]  # after the deal, everyone knows everything
    events = feeds[0]["events"]
    _check_numbering(feeds[0])
    assert all(e["cards"] is not None for e in events if e["type"] == "hand_dealt")
    draws = [e for e in events if e["type"] == "card_drawn"]
    assert [e["card"] for e in draws] == [d.card.code for d in state.draws]
    ended = next(e for e in events if e["type"] == "deal_ended")
    assert ended["seed"] == deal_row.seed and ended["points"] == list(state.points)
    assert events[-1]["type"] == "match_ended" and events[-1]["reason"] == "played"
    assert len([e for e in events if e["type"] == "card_played"]) == 40


@pytest.mark.django_db
@pytest.mark.parametrize("after", ["-1", "x", "1.5", "true"])
def test_bad_after_is_invalid_input(player: Callable[..., Player], after: str) -> None:
    alice = player("alice")
    match_id = alice.create()["id"]
    error = alice.error("get", f"{URL}/{match_id}/events", {"after": after}, 400, "invalid_input")
    assert "after" in error["details"]


@pytest.mark.django_db
def test_unknown_query_parameter_is_invalid_input(player: Callable[..., Player]) -> None:
    alice = player("alice")
    match_id = alice.create()["id"]
    alice.error("get", f"{URL}/{match_id}/events", {"since": 3}, 400, "invalid_input")
