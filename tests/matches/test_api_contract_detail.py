"""GET /api/v1/matches/{id}: what a player, a stranger and a spectator see (issue #3)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from games.matches.selectors import deal_state
from games.models import Deal

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"
CARD = re.compile(r"^[A3RCF2-7][cdsb]$")


def _cards_in(value: Any) -> set[str]:
    """Every string in the JSON that is exactly a card code."""
    if isinstance(value, dict):
        return set().union(*(_cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_cards_in(v) for v in value)) if value else set()
    if isinstance(value, str) and CARD.match(value):
        return {value}
    return set()


@pytest.fixture
def duel(player: Callable[..., Player]) -> dict[str, Any]:
    """Alice and Bob, a private 2-player match that has started."""
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    at = {0: alice, 1: bob}
    return {"id": match_id, "at": at, "alice": alice, "bob": bob}


@pytest.mark.django_db
def test_a_player_sees_the_deal_from_the_seat(duel: dict[str, Any]) -> None:
    match_id, at = duel["id"], duel["at"]
    deal_row = Deal.objects.get(match_id=match_id)
    state = deal_state(deal_row)
    first = (deal_row.dealer + 1) % 2
    for seat, person in at.items():
        body = person.detail(match_id)
        assert body["your_seat"] == seat
        assert body["deals_won"] == [0, 0]
        assert body["deals"] == [
            {
                "id": deal_row.pk,
                "number": 1,
                "dealer": deal_row.dealer,
                "status": "active",
                "commitment": deal_row.commitment,
                "seed": None,
                "points": None,
                "winner": None,
            }
        ]
        deal = body["current_deal"]
        assert deal["id"] == deal_row.pk and deal["number"] == 1
        assert deal["commitment"] == deal_row.commitment and deal["seed"] is None
        assert deal["seat"] == seat and deal["team"] == seat
        assert deal["hand"] == [c.code for c in state.hands[seat]]
        assert deal["hand_sizes"] == [3, 3]
        assert deal["briscola"] == state.briscola.code and deal["trump"] == state.trump
        assert deal["briscola_on_table"] is True and deal["briscola_holder"] is None
        assert deal["stock_count"] == 34
        assert deal["table"] == [] and deal["tricks"] == []
        assert deal["points"] == [0, 0]
        assert deal["turn"] == deal["leader"] == first
        assert deal["ply"] == 0 and deal["over"] is False
        assert deal["partner_hand"] is None
        assert deal["legal"] == (deal["hand"] if seat == first else [])
        # The other hand is nowhere in the body.
        assert not _cards_in(body) & {c.code for c in state.hands[1 - seat]}


@pytest.mark.django_db
def test_table_tricks_points_and_turn_follow_the_moves(duel: dict[str, Any]) -> None:
    match_id, at = duel["id"], duel["at"]
    leader = at[0].detail(match_id)["current_deal"]["turn"]
    led = at[leader].detail(match_id)["current_deal"]["legal"]
    lead = at[leader].play_first_legal(match_id)["current_deal"]
    assert lead["ply"] == 1 and lead["turn"] == 1 - leader
    assert lead["table"] == [{"seat": leader, "card": led[0]}]
    assert led[0] not in lead["hand"] and len(lead["hand"]) == 2
    assert lead["legal"] == []
    follower = at[1 - leader].detail(match_id)["current_deal"]
    assert follower["legal"] == follower["hand"] and follower["table"] == lead["table"]
    after = at[1 - leader].play_first_legal(match_id)["current_deal"]
    assert after["ply"] == 2 and after["table"] == []
    (trick,) = after["tricks"]
    assert trick["leader"] == leader and trick["seats"] == [leader, 1 - leader]
    assert trick["cards"] == [led[0], follower["hand"][0]]
    assert after["turn"] == after["leader"] == trick["winner"]
    assert sum(after["points"]) == trick["points"]
    assert after["points"][trick["winner"]] == trick["points"]
    assert after["stock_count"] == 32 and after["hand_sizes"] == [3, 3]
    assert len(after["hand"]) == 3


@pytest.mark.django_db
def test_a_private_match_is_forbidden_to_strangers(
    duel: dict[str, Any], player: Callable[..., Player]
) -> None:
    eve = player("eve")
    eve.error("get", f"{URL}/{duel['id']}", None, 403, "match_private")
    eve.error("get", f"{URL}/{duel['id']}/events", None, 403, "match_private")


@pytest.mark.django_db
def test_a_public_match_shows_strangers_no_hand_and_no_seed(player: Callable[..., Player]) -> None:
    alice, bob, eve = player("alice"), player("bob"), player("eve")
    match_id = alice.create(seats=[{"user": "bob"}], public=True)["id"]
    bob.join(match_id)
    state = deal_state(Deal.objects.get(match_id=match_id))
    body = eve.detail(match_id)
    assert body["your_seat"] is None
    deal = body["current_deal"]
    assert deal["seat"] is None and deal["team"] is None
    assert deal["hand"] == [] and deal["legal"] == [] and deal["partner_hand"] is None
    assert deal["seed"] is None and all(d["seed"] is None for d in body["deals"])
    assert deal["hand_sizes"] == [3, 3] and deal["briscola"] == state.briscola.code
    secret = {c.code for h in state.hands for c in h} | {c.code for c in state.stock}
    secret.discard(state.briscola.code)
    assert not _cards_in(body) & secret
    events = eve.events(match_id)["events"]
    assert [e["cards"] for e in events if e["type"] == "hand_dealt"] == [None, None]
    assert not _cards_in(events) & secret
    # A spectator cannot play.
    eve.error("post", f"{URL}/{match_id}/moves", {"card": "Ad", "ply": 0}, 403, "not_a_player")


@pytest.mark.django_db
def test_an_invitee_may_look_before_joining_without_a_hand(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(players=4, seats=[{"user": "bob"}, "open", "open"])["id"]
    body = bob.detail(match_id)
    assert body["your_seat"] is None and body["status"] == "waiting"
    assert body["current_deal"] is None


@pytest.mark.django_db
def test_a_waiting_match_with_an_open_seat_is_visible_to_anyone(
    player: Callable[..., Player],
) -> None:
    alice, eve = player("alice"), player("eve")
    match_id = alice.create(seats=["open"])["id"]
    assert eve.detail(match_id)["status"] == "waiting"
    invite_only = alice.create(seats=[{"user": "eve"}])["id"]
    player("mallory").error("get", f"{URL}/{invite_only}", None, 403, "match_private")


@pytest.mark.django_db
def test_unknown_match_is_404(player: Callable[..., Player]) -> None:
    alice = player("alice")
    for unknown in (str(uuid.uuid4()), "not-a-uuid"):
        alice.error("get", f"{URL}/{unknown}", None, 404, "match_not_found")
        alice.error("get", f"{URL}/{unknown}/events", None, 404, "match_not_found")
