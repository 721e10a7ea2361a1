"""POST /api/v1/matches/{id}/moves: a card played, and every way a move is refused.

After each refused move the move log (the Move rows) must be exactly as before.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from games.matches.selectors import deal_state
from games.models import Deal, Move

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"


def _log() -> list[tuple[int, int, int, str]]:
    return list(
        Move.objects.order_by("deal_id", "ply").values_list("deal_id", "ply", "seat", "card")
    )


@pytest.fixture
def duel(player: Callable[..., Player]) -> dict[str, Any]:
    """Alice (seat 0) and Bob (seat 1) in a started private match; who is to play."""
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    at = {0: alice, 1: bob}
    turn = alice.detail(match_id)["current_deal"]["turn"]
    return {"id": match_id, "mover": at[turn], "waiter": at[1 - turn], "turn": turn}


@pytest.mark.django_db
def test_a_move_is_201_with_the_callers_new_view(duel: dict[str, Any]) -> None:
    match_id, mover = duel["id"], duel["mover"]
    hand = mover.detail(match_id)["current_deal"]["hand"]
    body = mover.move(match_id, hand[1], 0)
    assert body["your_seat"] == duel["turn"]
    deal = body["current_deal"]
    assert deal["ply"] == 1 and deal["turn"] == 1 - duel["turn"]
    assert deal["table"] == [{"seat": duel["turn"], "card": hand[1]}]
    assert deal["hand"] == [hand[0], hand[2]]
    assert _log() == [(deal["id"], 0, duel["turn"], hand[1])]


@pytest.mark.django_db
def test_card_codes_are_accepted_in_any_case(duel: dict[str, Any]) -> None:
    match_id, mover = duel["id"], duel["mover"]
    card = mover.detail(match_id)["current_deal"]["hand"][0]
    body = mover.move(match_id, card.swapcase(), 0)
    assert body["current_deal"]["table"][0]["card"] == card
    assert Move.objects.get().card == card


@pytest.mark.django_db
def test_refused_moves_leave_the_log_unchanged(
    duel: dict[str, Any], player: Callable[..., Player]
) -> None:
    match_id, mover, waiter = duel["id"], duel["mover"], duel["waiter"]
    moves = f"{URL}/{match_id}/moves"
    # One legal move first, so the log is not empty and ply 0 is stale.
    mover.play_first_legal(match_id)
    mover, waiter = waiter, mover
    before = _log()
    assert len(before) == 1
    deal_row = Deal.objects.get(match_id=match_id)
    state = deal_state(deal_row)
    hand = mover.detail(match_id)["current_deal"]["hand"]
    not_in_hand = next(c.code for c in state.stock if c is not state.briscola)
    played = before[0][3]
    eve = player("eve")

    cases: list[tuple[Player, str, Any, int, str]] = [
        (mover, moves, {"card": "Zz", "ply": 1}, 400, "invalid_card"),
        (mover, moves, {"card": "1d", "ply": 1}, 400, "invalid_card"),
        (mover, moves, {"card": "", "ply": 1}, 400, "invalid_input"),
        (mover, moves, {"card": hand[0], "ply": 0}, 409, "stale_ply"),
        (mover, moves, {"card": hand[0], "ply": 2}, 409, "stale_ply"),
        (waiter, moves, {"card": hand[0], "ply": 1}, 409, "not_your_turn"),
        (mover, moves, {"card": not_in_hand, "ply": 1}, 400, "card_not_in_hand"),
        (mover, moves, {"card": played, "ply": 1}, 400, "card_not_in_hand"),
        (eve, moves, {"card": hand[0], "ply": 1}, 403, "not_a_player"),
        (mover, f"{URL}/{uuid.uuid4()}/moves", {"card": hand[0], "ply": 1}, 404, "match_not_found"),
        (mover, f"{URL}/nope/moves", {"card": hand[0], "ply": 1}, 404, "match_not_found"),
        (mover, moves, {"card": hand[0]}, 400, "invalid_input"),
        (mover, moves, {"ply": 1}, 400, "invalid_input"),
        (mover, moves, {"card": hand[0], "ply": 40}, 400, "invalid_input"),
        (mover, moves, {"card": hand[0], "ply": -1}, 400, "invalid_input"),
        (mover, moves, {"card": hand[0], "ply": "one"}, 400, "invalid_input"),
        (mover, moves, {"card": hand[0], "ply": None}, 400, "invalid_input"),
        (mover, moves, {"card": 5, "ply": 1}, 400, "invalid_input"),
        (mover, moves, {"card": ["Ad"], "ply": 1}, 400, "invalid_input"),
        (mover, moves, {"card": hand[0], "ply": 1, "seat": 0}, 400, "invalid_input"),
        (mover, moves, None, 400, "invalid_input"),
    ]
    for who, url, body, status, code in cases:
        error = who.error("post", url, body, status, code)
        assert _log() == before, (body, code)
        if code == "stale_ply":
            assert error["details"]["current_ply"] == 1
        if body is not None and code == "invalid_input" and "ply" not in body:
            assert "ply" in error["details"]
    # Still the mover's turn at ply 1: the refused moves changed nothing.
    assert mover.move(match_id, hand[0], 1)["current_deal"]["ply"] == 2


@pytest.mark.django_db
def test_moves_in_a_waiting_or_finished_match(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    waiting = alice.create(seats=["open"])["id"]
    alice.error(
        "post", f"{URL}/{waiting}/moves", {"card": "Ad", "ply": 0}, 409, "match_not_started"
    )
    bob.error("post", f"{URL}/{waiting}/moves", {"card": "Ad", "ply": 0}, 403, "not_a_player")
    match_id = alice.create()["id"]
    deal = alice.detail(match_id)["current_deal"]
    alice.post(f"{URL}/{match_id}/resign")
    before = _log()
    error = alice.error(
        "post",
        f"{URL}/{match_id}/moves",
        {"card": deal["hand"][0], "ply": deal["ply"]},
        409,
        "match_over",
    )
    assert error["message"]
    assert _log() == before


@pytest.mark.django_db
def test_a_move_prepared_in_one_deal_is_refused_in_the_next(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> None:
    """Issue 19, item 9: a move names its deal (``deal``). One prepared during deal 1 and
    sent once deal 2 has reached the same ply is refused with 409 ``stale_deal``, instead
    of being played in deal 2; the same move naming deal 2 is played."""
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(format="first_to_2", seats=[{"user": "bob"}])["id"]
    bob.join(match_id)
    at = {0: alice, 1: bob}
    first = alice.detail(match_id)["current_deal"]["id"]
    detail = play_out(
        match_id,
        [alice, bob],
        stop=lambda d: d["current_deal"]["id"] != first and d["current_deal"]["ply"] >= 5,
    )
    deal = detail["current_deal"]
    assert deal["id"] != first and detail["deals"][0]["status"] == "finished"
    mover = at[deal["turn"]]
    view = mover.detail(match_id)["current_deal"]
    before = _log()
    moves = f"{URL}/{match_id}/moves"
    stale = {"card": view["legal"][0], "ply": view["ply"], "deal": first}
    error = mover.error("post", moves, stale, 409, "stale_deal")
    assert error["details"] == {"current_deal": deal["id"], "your_deal": first}
    assert _log() == before
    for bad in (0, -1, "one", None, 2**63):
        body = {"card": view["legal"][0], "ply": view["ply"], "deal": bad}
        assert "deal" in mover.error("post", moves, body, 400, "invalid_input")["details"]
    assert _log() == before
    played = mover.move_in_deal(match_id, view["legal"][0], view["ply"], deal["id"])
    assert played["current_deal"]["ply"] == view["ply"] + 1
    # Without ``deal`` a move is still taken (older clients): only the ply is checked.
    mover = at[played["current_deal"]["turn"]]
    view = mover.detail(match_id)["current_deal"]
    assert mover.move(match_id, view["legal"][0], view["ply"])["current_deal"]["ply"] == (
        view["ply"] + 1
    )
