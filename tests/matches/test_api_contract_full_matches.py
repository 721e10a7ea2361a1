"""Whole matches played through the API only: against bots, four at a table, two people."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from games.matches.selectors import deal_state
from games.models import Deal, Move
from games.rules import DealRecord

if TYPE_CHECKING:
    from conftest import Player

DEALS = "/api/v1/deals"


def _check_finished_deals(person: Player, detail: dict[str, Any]) -> None:
    """Each finished deal: 40 moves, a record replaying to the stored result."""
    for summary in detail["deals"]:
        assert summary["status"] == "finished"
        assert Move.objects.filter(deal_id=summary["id"]).count() == 40
        body = person.get(f"{DEALS}/{summary['id']}")
        record = body["record"]
        assert len(record["moves"]) == 40 and record["players"] == detail["players"]
        replay = DealRecord.from_dict(record).replay()
        assert replay.complete
        assert list(replay.deal.points) == summary["points"]
        assert sum(summary["points"]) == 120
        assert replay.deal.winner == summary["winner"]


@pytest.mark.django_db
def test_first_to_2_against_the_greedy_bot(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    alice = player("alice")
    match_id = alice.create(format="first_to_2", seats=[{"bot": "greedy"}])["id"]
    final = play_out(match_id, [alice])
    assert final["status"] == "finished" and final["end_reason"] == "played"
    assert 2 in final["deals_won"] and sorted(final["deals_won"])[0] < 2
    assert final["winner"] == final["deals_won"].index(2)
    deals = final["deals"]
    assert [d["number"] for d in deals] == list(range(1, len(deals) + 1))
    for before, after in zip(deals, deals[1:], strict=False):
        assert after["dealer"] == (before["dealer"] + 1) % 2
    # Drawn deals (60-60) count for nobody.
    won = [d["winner"] for d in deals]
    assert final["deals_won"] == [won.count(0), won.count(1)]
    _check_finished_deals(alice, final)
    last = final["current_deal"]
    assert last["over"] is True and last["turn"] is None and last["legal"] == []
    alice.error(
        "post",
        f"/api/v1/matches/{match_id}/moves",
        {"card": "Ad", "ply": 0},
        409,
        "match_over",
    )


@pytest.mark.django_db
def test_four_players_one_person_three_bots(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    alice = player("alice")
    created = alice.create(
        players=4, seats=[{"bot": "random"}, {"bot": "greedy"}, {"bot": "greedy"}]
    )
    assert created["status"] == "active"
    match_id = created["id"]
    final = play_out(match_id, [alice])
    assert final["status"] == "finished"
    (deal,) = final["deals"]
    assert Move.objects.filter(deal_id=deal["id"]).count() == 40
    view = final["current_deal"]
    assert len(view["tricks"]) == 10
    assert all(len(t["cards"]) == 4 for t in view["tricks"])
    assert sum(view["points"]) == 120 == sum(deal["points"])
    assert sum(t["points"] for t in view["tricks"]) == 120
    seats_played = [s for t in view["tricks"] for s in t["seats"]]
    assert sorted(seats_played) == sorted(list(range(4)) * 10)
    expected_winner = 0 if deal["points"][0] >= 61 else 1 if deal["points"][1] >= 61 else None
    assert final["winner"] == deal["winner"] == expected_winner
    _check_finished_deals(alice, final)


@pytest.mark.django_db
def test_two_people_play_a_match_to_the_end(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(format="first_to_2", seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    final = play_out(match_id, [alice, bob], check_legal=True)
    assert final["status"] == "finished" and final["end_reason"] == "played"
    assert max(final["deals_won"]) == 2
    _check_finished_deals(bob, final)
    for before, after in zip(final["deals"], final["deals"][1:], strict=False):
        assert after["dealer"] == (before["dealer"] + 1) % 2
    # Both players see the same finished match.
    assert alice.detail(match_id)["deals"] == bob.detail(match_id)["deals"]


@pytest.mark.parametrize("option", [True, False])
@pytest.mark.django_db
def test_partners_last_hand_option(
    player: Callable[..., Player], play_out: Callable[..., Any], option: bool
) -> None:
    alice = player("alice")
    match_id = alice.create(
        players=4,
        seats=[{"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}],
        options={"partners_last_hand": option},
    )["id"]
    assert alice.detail(match_id)["options"] == {"partners_last_hand": option}
    deal_row = Deal.objects.get(match_id=match_id)
    shown = 0

    def look(detail: dict[str, Any]) -> bool:
        nonlocal shown
        view = alice.detail(match_id)["current_deal"]
        if view["over"]:
            assert view["partner_hand"] is None
            return False
        if option and view["stock_count"] == 0:
            partner = deal_state(deal_row).hands[2]
            assert view["partner_hand"] == [c.code for c in partner]
            shown += 1
        else:
            assert view["partner_hand"] is None
        return False

    final = play_out(match_id, [alice], stop=look)
    assert final["status"] == "finished"
    # Alice plays once in each of the last three tricks, the ones with an empty stock.
    assert shown == (3 if option else 0)
