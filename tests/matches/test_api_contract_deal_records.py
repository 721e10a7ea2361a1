"""GET /api/v1/deals/{id}: secret until the deal ends, then a record that replays."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from games.models import Deal, Move
from games.rules import DealRecord

if TYPE_CHECKING:
    from conftest import Player

DEALS = "/api/v1/deals"


def _duel(player: Callable[..., Player], *, public: bool) -> tuple[str, Player, Player]:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(seats=[{"user": "bob"}], public=public)["id"]
    bob.join(match_id)
    return match_id, alice, bob


@pytest.mark.django_db
def test_private_match_deal_record(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    match_id, alice, bob = _duel(player, public=False)
    eve = player("eve")
    admin = player("admin", is_staff=True, is_superuser=True)
    deal_row = Deal.objects.get(match_id=match_id)
    url = f"{DEALS}/{deal_row.pk}"

    play_out(match_id, [alice, bob], stop=lambda d: d["current_deal"]["ply"] >= 7)
    for person in (alice, bob):
        error = person.error("get", url, None, 403, "deal_not_over")
        assert "seed" not in str(error) and deal_row.seed not in str(error)
    eve.error("get", url, None, 404, "deal_not_found")  # as a deal that does not exist
    early = admin.get(url)  # an administrator may look at any time
    assert early["record"]["seed"] == deal_row.seed and len(early["record"]["moves"]) == 7
    assert early["complete"] is False

    final = play_out(match_id, [alice, bob])
    assert final["status"] == "finished"
    deal_row.refresh_from_db()
    for person in (alice, bob, admin):
        body = person.get(url)
        assert body["id"] == deal_row.pk and body["match"] == match_id
        assert body["status"] == "finished" and body["complete"] is True
        assert body["seed"] == deal_row.seed and body["commitment"] == deal_row.commitment
        record = body["record"]
        assert record["format"] == "briscola-deal/1"
        assert record["players"] == 2 and record["dealer"] == deal_row.dealer
        assert len(record["deck"]) == 40 and len(set(record["deck"])) == 40
        assert len(record["moves"]) == 40
        assert record["moves"] == list(
            Move.objects.filter(deal=deal_row).order_by("ply").values_list("card", flat=True)
        )
        assert hashlib.sha256(record["seed"].encode()).hexdigest() == deal_row.commitment
        replay = DealRecord.from_dict(record).replay()
        assert replay.complete
        points = [deal_row.points_team0, deal_row.points_team1]
        assert list(replay.deal.points) == points == body["points"] == body["final_points"]
        assert sum(points) == 120
        assert replay.deal.winner == deal_row.winner_team == body["winner"]
        assert len(body["tricks"]) == 20 and len(body["draws"]) == 34
        assert sorted(c for h in body["initial_hands"] for c in h) == sorted(record["deck"][:6])
    eve.error("get", url, None, 404, "deal_not_found")  # as a deal that does not exist


@pytest.mark.django_db
def test_public_match_deal_record(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    match_id, alice, bob = _duel(player, public=True)
    eve = player("eve")
    deal_row = Deal.objects.get(match_id=match_id)
    url = f"{DEALS}/{deal_row.pk}"
    eve.error("get", url, None, 403, "deal_not_over")
    alice.error("get", url, None, 403, "deal_not_over")
    play_out(match_id, [alice, bob])
    body = eve.get(url)
    assert body["seed"] == Deal.objects.get(pk=deal_row.pk).seed
    assert DealRecord.from_dict(body["record"]).replay().deal.points == body["final_points"]


@pytest.mark.django_db
def test_unknown_deal_is_404(player: Callable[..., Player]) -> None:
    alice = player("alice")
    alice.error("get", f"{DEALS}/987654", None, 404, "deal_not_found")
    alice.error("get", f"{DEALS}/0", None, 404, "deal_not_found")
    # An id that cannot be one names no deal either (not the generic not_found).
    alice.error("get", f"{DEALS}/abc", None, 404, "deal_not_found")
    alice.error("get", f"{DEALS}/-1", None, 404, "deal_not_found")
