"""The strong level on hand-built positions, its exact endgame, its two entry points
(a view, a bare deal) agreeing, and its strength against greedy (duplicate deals, not a
timing test)."""

import random

import pytest
from bots_cases import from_position, random_play_positions

from games.bots import choose_card
from games.bots.duel import duel
from games.bots.expert import _minimax
from games.bots.strong import decide, situation_of_view, strong_card
from games.rules import Deal, seat_view, shuffled_deck


def strong(deal):
    return choose_card("strong", seat_view(deal, deal.turn), seed=0).code


def test_last_to_play_it_banks_an_ace_on_the_suit_led():
    # Trump Denari; seat 0 led the Two of Cups: the Ace of Cups takes it, nothing can
    # overtake it, 11 points banked (greedy would play the cheapest winner, the King).
    deal = from_position(trump_card="7d", hands=["4s 2b", "Ac Rc 4d"], table=["2c"])
    assert strong(deal) == "Ac"


def test_it_spends_its_lowest_trump_on_a_carico():
    deal = from_position(trump_card="7d", hands=["4s 2b", "Ad 4d Rc"], table=["3s"])
    assert strong(deal) == "4d"


def test_it_keeps_its_trumps_on_a_liscio_and_gives_a_liscio():
    deal = from_position(trump_card="Rd", hands=["4s 2b", "2d 5s Cb"], table=["4c"])
    assert strong(deal) == "5s"


def test_it_leads_a_liscio_not_a_figure_nor_a_carico():
    deal = from_position(trump_card="Rd", hands=["Ac Fs 6b", "4s 2b 5b"])
    assert strong(deal) == "6b"


def test_it_wins_the_trick_that_takes_it_to_61():
    # 59 points and a Knave (2) led: its only trump, a low one, is not spent on 2 points
    # early in the deal, but here those 2 points win the deal.
    position = {"trump_card": "Rd", "hands": ["4s 2b 6c", "2d 6b 7c"], "table": ["Fs"]}
    assert strong(from_position(**position, points=(40, 50))) == "6b"
    assert strong(from_position(**position, points=(40, 59))) == "2d"


def test_it_stops_the_trick_that_would_take_the_other_side_to_61():
    # A Knight (3) led: not worth its only trump early, but the other side has 58 and
    # would reach 61 with it.
    position = {"trump_card": "Rd", "hands": ["4s 2b 6c", "2d 5b 7b"], "table": ["Cs"]}
    assert strong(from_position(**position, points=(50, 40))) == "5b"
    assert strong(from_position(**position, points=(58, 40))) == "2d"


@pytest.mark.parametrize("players", [2, 4])
def test_the_view_and_the_bare_deal_give_the_same_card(players):
    for game in range(8):
        for deal, seat, view in random_play_positions(players, f"same-{game}", rng_seed=game):
            assert choose_card("strong", view) is strong_card(deal, deal.hands[seat])


def test_the_last_tricks_of_a_two_player_deal_are_played_perfectly():
    """With an empty stock everything is known: strong's card is worth as much as the
    best card of a full minimax over the true deal."""
    rng = random.Random(4)
    checked = 0
    for game in range(40):
        deal = Deal(2, game % 2, shuffled_deck(f"endgame-{game}"))
        while deal.stock_count:
            deal.play(rng.choice(deal.legal_moves()))
        while deal.turn is not None and len(deal.hands[deal.turn]) >= 2:
            team = deal.turn & 1
            values = {}
            for card in deal.hands[deal.turn]:
                child = deal.copy()
                child.play(card)
                values[card] = _minimax(child, team, None)
            chosen = decide(situation_of_view(seat_view(deal, deal.turn)))
            assert values[chosen] == pytest.approx(max(values.values())), (game, values)
            checked += 1
            deal.play(rng.choice(deal.legal_moves()))
    assert checked >= 120


def test_strong_beats_greedy_over_duplicate_deals():
    result = duel("strong", "greedy", players=2, deals=800, seed="strong-test")
    assert result.score.low > 0.5, result.score
