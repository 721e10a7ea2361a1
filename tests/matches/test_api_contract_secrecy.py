"""No response tells a player a card it may not know (docs/rules.md, "What each seat may know").

Two people play a whole ``first_to_2`` match through the API. Every JSON body each of
them receives (match detail, events, the match list, move responses, refused moves) is
scanned for the cards of the opponent's hand and of the stock, and for the seed, as the
server's own replay (``games.matches.selectors.deal_state``) has them at that moment. The face-up
briscola is public and is left out of the secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from games.matches.selectors import deal_state
from games.models import Deal, DealStatus

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"
CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])([A3RCF2-7][cdsb])(?![0-9A-Za-z])")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _card_tokens(value: Any) -> set[str]:
    """Every card code in the JSON: whole strings, and codes inside messages."""
    return {m for s in _strings(value) for m in CARD_TOKEN.findall(s)}


class Scanner:
    """Checks each response as it arrives; counts what it has checked."""

    def __init__(self, match_id: str, seats: dict[str, int]) -> None:
        self.match_id = match_id
        self.seats = seats
        self.checked = 0
        self.hidden_draws = 0

    def __call__(self, person: Player, status: int, body: Any) -> None:
        deal = (
            Deal.objects.filter(match_id=self.match_id, status=DealStatus.ACTIVE)
            .select_related("match")
            .first()
        )
        if deal is None:
            return  # the match is over: everything is open
        seat = self.seats[person.name]
        state = deal_state(deal)
        secret = {c.code for c in state.hands[1 - seat]} | {c.code for c in state.stock}
        secret.discard(state.briscola.code)
        assert deal.seed not in str(body), (person.name, body)
        scanned = body
        if isinstance(body, dict) and "events" in body:
            # Earlier deals are over and open; scan this deal's events.
            scanned = [e for e in body["events"] if e.get("deal") == deal.pk]
            for event in scanned:
                if event["type"] == "card_drawn" and event["seat"] != seat:
                    if event["briscola"]:
                        assert event["card"] == state.briscola.code
                    else:
                        assert event["card"] is None
                        self.hidden_draws += 1
        leaked = _card_tokens(scanned) & secret
        assert not leaked, (person.name, status, leaked, body)
        self.checked += 1


@pytest.mark.django_db
def test_no_response_leaks_a_secret_card_or_the_seed(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(format="first_to_2", seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    scanner = Scanner(match_id, {"alice": 0, "bob": 1})
    alice.on_response = bob.on_response = scanner
    at = {0: alice, 1: bob}
    moves = f"{URL}/{match_id}/moves"
    errors_seen: set[str] = set()

    detail = alice.detail(match_id)
    deals_played = 0
    for _ in range(400):
        if detail["status"] != "active":
            break
        view = detail["current_deal"]
        turn = view["turn"]
        mover, waiter = at[turn], at[1 - turn]
        mine = mover.detail(match_id)["current_deal"]
        theirs = waiter.detail(match_id)["current_deal"]
        last_id = waiter.events(match_id)["last_id"]
        if mine["ply"] % 2:
            mover.events(match_id, after=max(0, last_id - 4))
        if mine["ply"] % 10 == 0:
            alice.get(URL)
            bob.get(URL, {"mine": "true"})
        # Refused moves: their messages and details must not leak either.
        stale = mine["ply"] - 1 if mine["ply"] else 1
        mover.error("post", moves, {"card": mine["hand"][0], "ply": stale}, 409, "stale_ply")
        errors_seen.add("stale_ply")
        if theirs["hand"] and mine["ply"] % 3 == 0:
            waiter.error(
                "post",
                moves,
                {"card": theirs["hand"][0], "ply": mine["ply"]},
                409,
                "not_your_turn",
            )
            errors_seen.add("not_your_turn")
        if mine["tricks"] and mine["ply"] % 3 == 1:
            spent = mine["tricks"][-1]["cards"][0]
            mover.error("post", moves, {"card": spent, "ply": mine["ply"]}, 400, "card_not_in_hand")
            errors_seen.add("card_not_in_hand")
        detail = mover.move(match_id, mine["legal"][0], mine["ply"])
        if detail["current_deal"]["number"] != view["number"]:
            deals_played += 1
    assert detail["status"] == "finished"
    assert deals_played + 1 == len(detail["deals"]) >= 2
    assert errors_seen == {"stale_ply", "not_your_turn", "card_not_in_hand"}
    # Each move is surrounded by several checked responses; the opponent's draws were
    # seen hidden many times over.
    assert scanner.checked >= 40 * len(detail["deals"]) * 4
    assert scanner.hidden_draws > 0

    # Once over, the last deal is open to both: the seed is in the events.
    last = Deal.objects.filter(match_id=match_id).order_by("-number").first()
    assert last is not None
    assert any(e.get("seed") == last.seed for e in alice.events(match_id)["events"])


@pytest.mark.django_db
def test_the_scanner_catches_a_leak(player: Callable[..., Player]) -> None:
    """The check above is not vacuous: an opponent's card or the seed is caught."""
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    scanner = Scanner(match_id, {"alice": 0, "bob": 1})
    deal = Deal.objects.select_related("match").get(match_id=match_id)
    state = deal_state(deal)
    bobs_card = state.hands[1][0].code
    stock_card = state.stock[0].code
    scanner(alice, 200, {"hand": [c.code for c in state.hands[0]], "briscola": "x"})
    for leak in (
        {"current_deal": {"hand": [bobs_card]}},
        {"message": f"{stock_card} is not in the hand of seat 0"},
        {"events": [{"type": "hand_dealt", "seat": 1, "cards": [bobs_card], "deal": deal.pk}]},
        {"deals": [{"seed": deal.seed}]},
    ):
        with pytest.raises(AssertionError):
            scanner(alice, 200, leak)
    # Bob may see his own card, and the face-up briscola is everyone's.
    scanner(bob, 200, {"hand": [bobs_card], "briscola": state.briscola.code})
