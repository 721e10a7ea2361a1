"""Every level in LEVELS (collected when the tests are, so a new level is tested at once):
always a legal card, deterministic for a seed, and blind to what its seat cannot see."""

import json
import random

import pytest
from bots_cases import (
    CAPPED,
    SIMPLE_LEVELS,
    TEST_BUDGET_MS,
    hidden_cards,
    permuted_deal,
    random_play_positions,
)

from games.bots import LEVELS, UnknownBotLevelError, choose_card
from games.rules import SeatView, seat_view

ALL_LEVELS = sorted(LEVELS)

SAMPLE_PLIES = (0, 7, 14, 21, 27, 30, 33, 34, 35, 37)
"""Plies a searching level is checked at where comparing choices (each run to its iteration
cap, so a few): the opening, the middle, the last draws with the briscola in a hand, and the
endgame with an empty stock (a visible partner's hand in 4-player deals)."""


def sample(level, positions):
    """All positions for the free levels, SAMPLE_PLIES of them for searching levels."""
    if level in SIMPLE_LEVELS:
        return list(enumerate(positions))
    return [(ply, positions[ply]) for ply in SAMPLE_PLIES]


def deals_for(level):
    """Random deals to check a level over: many for the free levels, a few for searches."""
    return 12 if level in SIMPLE_LEVELS else 1


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("level", ALL_LEVELS)
def test_every_level_plays_a_legal_card_in_random_positions(level, players):
    checked = 0
    for game in range(deals_for(level)):
        partners = game % 3 != 2  # 4 players: now and then without the partners' option
        positions = random_play_positions(
            players, f"legal-{level}-{game}", rng_seed=game, partners_last_hand=partners
        )
        for ply, (deal, seat, view) in enumerate(positions):
            card = choose_card(level, view, seed=f"{game}:{ply}", budget_ms=TEST_BUDGET_MS)
            assert card in view.legal, (level, ply, card, view.legal)
            assert card in deal.hands[seat]
            checked += 1
    assert checked == deals_for(level) * 40


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("level", ALL_LEVELS)
def test_every_level_reads_a_view_from_json_like_the_api_sends_it(level, players):
    """A view through JSON (with the API's extra keys) gives the same choice."""
    positions = random_play_positions(players, f"json-{level}", rng_seed=7)
    for ply, (_, _, view) in sample(level, positions)[::3]:
        data = view.to_dict()
        data.update(id=12, number=1, status="active", commitment="ab" * 32, seed=None)
        data["points"] = list(view.points)
        again = SeatView.from_dict(json.loads(json.dumps(data)))
        assert again == view
        first = choose_card(level, view, seed=ply, **CAPPED)
        assert choose_card(level, again, seed=ply, **CAPPED) is first


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("level", ALL_LEVELS)
def test_choose_card_is_deterministic_for_a_seed(level, players):
    positions = random_play_positions(players, f"determinism-{level}", rng_seed=3)
    for ply, (_, _, view) in sample(level, positions)[::2]:
        for seed in (ply, f"s{ply}"):
            first = choose_card(level, view, seed=seed, **CAPPED)
            again = choose_card(level, view, seed=seed, **CAPPED)
            assert first is again, (level, ply, seed)


def test_random_level_uses_its_seed():
    """Different seeds do give different cards (the seed is not ignored)."""
    positions = random_play_positions(2, "seeded", rng_seed=1)
    view = positions[0][2]
    chosen = {choose_card("random", view, seed=s) for s in range(50)}
    assert chosen == set(view.legal)


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("level", ALL_LEVELS)
def test_no_peeking_a_level_plays_the_same_whatever_the_hidden_cards(level, players):
    """Permute what the seat cannot see (other hands and stock, keeping the face-up
    briscola, the briscola holder's card and a visible partner's hand): the view is the
    same, so the card must be the same."""
    rng = random.Random(f"peek-{level}-{players}")
    games = 6 if level in SIMPLE_LEVELS else 1
    checked = changed = with_partner = with_holder = 0
    for game in range(games):
        positions = random_play_positions(players, f"peek-{level}-{game}", rng_seed=game)
        for _, (deal, seat, view) in sample(level, positions):
            other = permuted_deal(deal, seat, rng)
            other_view = seat_view(other, seat)
            assert other_view.to_dict() == view.to_dict()
            assert other.hands[seat] == deal.hands[seat]
            assert [len(h) for h in other.hands] == [len(h) for h in deal.hands]
            assert other.briscola is deal.briscola
            assert other.briscola_holder == deal.briscola_holder
            if view.partner_hand is not None:
                partner = (seat + 2) % players
                assert other.hands[partner] == deal.hands[partner]
                with_partner += 1
            if deal.briscola_holder not in (None, seat):
                assert deal.briscola in other.hands[deal.briscola_holder]
                with_holder += 1
            changed += other.hands != deal.hands or other.stock != deal.stock
            seed = f"peek:{view.ply}"
            mine = choose_card(level, view, seed=seed, **CAPPED)
            theirs = choose_card(level, other_view, seed=seed, **CAPPED)
            if mine is not theirs:
                again = choose_card(level, view, seed=seed, **CAPPED)
                cause = "not deterministic" if again is not mine else "it peeks"
                pytest.fail(f"{level} at ply {view.ply}: {mine} vs {theirs} ({cause})")
            checked += 1
    assert checked >= 10
    # The permutations did hide different cards, in the cases that matter.
    assert changed >= checked // 2
    assert with_holder > 0
    if players == 4:
        assert with_partner > 0


@pytest.mark.parametrize(("players", "partners"), [(2, True), (4, True), (4, False)])
def test_hidden_cards_are_what_the_seat_cannot_know(players, partners):
    """At every ply of a deal: the other hands (not a partner's the rules show) and the
    stock, but the face-up briscola, and nothing else; at the first ply that is 40 minus
    the seat's 3 cards and the briscola."""
    positions = random_play_positions(players, "hidden", rng_seed=5, partners_last_hand=partners)
    assert len(positions) == 40
    shown_partner = 0
    for deal, seat, view in positions:
        hidden = hidden_cards(deal, seat, partners_last_hand=partners)
        assert len(set(hidden)) == len(hidden)
        not_shown = {s for s in range(players) if s != seat}
        if view.partner_hand is not None:
            not_shown.discard((seat + 2) % players)
            shown_partner += 1
        expected = {c for s in not_shown for c in deal.hands[s]} | set(deal.stock)
        expected.discard(deal.briscola)
        assert set(hidden) == expected, (deal.ply, seat)
        visible = set(view.hand) | set(view.played) | {view.briscola}
        visible |= set(view.partner_hand or ())
        assert set(hidden).isdisjoint(visible)
        assert len(hidden) + len(visible) == 40
    assert len(hidden_cards(*positions[0][:2], partners_last_hand=partners)) == 36
    assert (shown_partner > 0) is (players == 4 and partners)


def test_an_unknown_level_is_refused():
    view = random_play_positions(2, "unknown")[0][2]
    with pytest.raises(UnknownBotLevelError):
        choose_card("grandmaster", view)


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_a_view_without_a_legal_card_is_refused(level):
    deal, seat, _ = random_play_positions(2, "not-my-turn")[0]
    with pytest.raises(ValueError):
        choose_card(level, seat_view(deal, 1 - seat))
