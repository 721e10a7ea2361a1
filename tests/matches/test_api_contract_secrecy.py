"""No response tells a player a card it may not know, or the seed (RULES.md, "What each
seat may know").

Two people play a whole ``first_to_2`` match through the API. Every response each of them
receives (match detail, events, the match list, move responses, refused moves) is put as
it arrives through the one secrecy detector, :mod:`leak_audit` (the audit of
``tests/hardening/test_no_leaks.py``): every key and string value of the JSON body and
every header is searched for the cards of the opponent's hand and of the stock (the face-up
briscola is public), whole codes wherever they stand, inside messages too, and for any
piece of the live deal's seed in any letter case; what is about a deal that is over is
checked against that deal's truth and the rest searched like the live deal's. The events
of the live deal must show the opponent's draws hidden (``card`` null but the briscola).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from django.http import JsonResponse
from leak_audit import Audit, Viewer
from rest_framework.test import APIClient

from games.models import Deal

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"


class Scanner:
    """Checks each response as it arrives with the detector; counts what it has checked."""

    def __init__(self, audit: Audit, match_id: str, seats: dict[str, int]) -> None:
        self.audit = audit
        self.truth = audit.follow(match_id)
        self.seats = seats
        self.checked = 0
        self.with_secrets = 0
        self.hidden_draws = 0

    def __call__(self, person: Player, response: Any) -> None:
        truth = self.truth
        truth.refresh()  # the state the response was built from (no bot moves here)
        seat = self.seats[person.name]
        viewer = Viewer(person.name, APIClient(), person.user, seat)
        self.audit.check(viewer, response, f"{response.status_code}")
        self.checked += 1
        self.with_secrets += bool(truth.hidden(seat))
        body = json.loads(response.content)
        if truth.active is not None and isinstance(body, dict) and "events" in body:
            briscola = truth.active.state.briscola.code
            for event in body["events"]:
                if (
                    event.get("deal") == truth.active.pk
                    and event["type"] == "card_drawn"
                    and event["seat"] != seat
                ):
                    if event["briscola"]:
                        assert event["card"] == briscola
                    else:
                        assert event["card"] is None
                        self.hidden_draws += 1


@pytest.mark.django_db
def test_no_response_leaks_a_secret_card_or_the_seed(
    player: Callable[..., Player], audit: Audit, unrelated_seeds: None
) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(format="first_to_2", seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    scanner = Scanner(audit, match_id, {"alice": 0, "bob": 1})
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
    assert scanner.with_secrets >= 0.8 * scanner.checked, (scanner.with_secrets, scanner.checked)
    assert scanner.hidden_draws > 0

    # Once over, the last deal is open to both: the seed is in the events.
    last = Deal.objects.filter(match_id=match_id).order_by("-number").first()
    assert last is not None
    assert any(e.get("seed") == last.seed for e in alice.events(match_id)["events"])


@pytest.fixture
def audit(django_capture_on_commit_callbacks: Any) -> Audit:
    return Audit(django_capture_on_commit_callbacks)


@pytest.mark.django_db
def test_the_scanner_catches_a_leak(
    player: Callable[..., Player], audit: Audit, unrelated_seeds: None
) -> None:
    """The scanner is the detector (proved in ``test_leak_detector.py``): an opponent's
    card in a message or a key, or a piece of the seed, fails it; a seat's own cards and
    the briscola do not."""
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    scanner = Scanner(audit, match_id, {"alice": 0, "bob": 1})
    assert scanner.truth.active is not None
    state, seed = scanner.truth.active.state, scanner.truth.active.seed
    bobs_card, stock_card = state.hands[1][0].code, state.stock[0].code
    own = [c.code for c in state.hands[0]]
    scanner(alice, JsonResponse({"hand": own, "briscola": state.briscola.code}))
    for leak in (
        {"current_deal": {"hand": [bobs_card]}},
        {"message": f"{stock_card} is not in the hand of seat 0"},
        {"hands": {bobs_card: 1}},
        {"note": seed[5:15].upper()},
    ):
        with pytest.raises(AssertionError, match="card |seed piece"):
            scanner(alice, JsonResponse(leak))
    scanner(bob, JsonResponse({"hand": [bobs_card], "briscola": state.briscola.code}))
