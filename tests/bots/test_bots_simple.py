"""The simple levels on hand-built positions: what greedy plays, and that it is clearly
stronger than random (a strength test over duplicate deals, not a timing test)."""

import pytest
from bots_cases import from_position

from games.bots import choose_card
from games.bots.duel import duel
from games.rules import Card, Deal, seat_view, shuffled_deck


def greedy(deal, seed=0):
    return choose_card("greedy", seat_view(deal, deal.turn), seed=seed).code


# -- taking a trick --------------------------------------------------------------------


def test_greedy_takes_a_trick_with_points_with_its_cheapest_winner():
    # Trump is Denari. Seat 0 led the Knave of Cups (2 points): the King wins it, cheaper
    # than the Ace, and no trump is spent.
    deal = from_position(trump_card="7d", hands=["4s 2b", "Ac Rc 4d"], table=["Fc"])
    assert greedy(deal) == "Rc"


def test_greedy_trumps_an_ace_with_its_smallest_trump():
    deal = from_position(trump_card="7d", hands=["4s 2b", "Ad 4d Rc"], table=["As"])
    assert greedy(deal) == "4d"


def test_greedy_wins_a_pointless_trick_when_it_costs_no_trump():
    deal = from_position(trump_card="7d", hands=["4s 2b", "6c Ac 2d"], table=["5c"])
    assert greedy(deal) == "6c"


# -- giving cards away -----------------------------------------------------------------


def test_greedy_dumps_its_cheapest_non_trump_when_it_cannot_win():
    # The Ace of trumps cannot be beaten: give the Two of Spades, not the Three of Cups
    # (10 points) nor the Seven of trumps (no points, but a trump).
    deal = from_position(trump_card="Rd", hands=["4s 2b", "3c 7d 2s"], table=["Ad"])
    assert greedy(deal) == "2s"


def test_greedy_keeps_its_trumps_on_a_trick_without_points():
    # A trump would win the trick, but there is nothing in it: keep the trump.
    deal = from_position(trump_card="Rd", hands=["4s 2b", "2d 5s 6b"], table=["4c"])
    card = greedy(deal)
    assert card == "5s"
    assert Card.from_code(card).suit != deal.trump


def test_greedy_leads_its_cheapest_card_and_keeps_trumps():
    deal = from_position(trump_card="Rd", hands=["Ad 2c Rs", "4s 2b 5b"])
    assert greedy(deal) == "2c"
    only_points = from_position(trump_card="Rd", hands=["Ad 3c Rs", "4s 2b 5b"])
    assert greedy(only_points) == "Rs"


# -- four players: the partner ---------------------------------------------------------


def test_greedy_adds_points_when_its_partner_wins_and_it_plays_last():
    # Seats 0, 1, 2 have played; seat 3's partner (seat 1) wins with the Ace of Cups.
    deal = from_position(
        players=4,
        trump_card="Rd",
        hands=["5s 6s", "7s 6b", "7b 4b", "3s 2b 2d"],
        table=["4c", "Ac", "5c"],
    )
    assert deal.turn == 3
    assert greedy(deal) == "3s"


def test_greedy_adds_its_richest_plain_card_not_a_trump():
    deal = from_position(
        players=4,
        trump_card="Rd",
        hands=["5s 6s", "7s 6b", "7b 4b", "Ad Cb 2s"],
        table=["4c", "Ac", "5c"],
    )
    assert greedy(deal) == "Cb"


def test_greedy_plays_cheap_when_its_partner_wins_but_an_opponent_follows():
    # Seat 2 plays third: its partner (seat 0) wins, but seat 3 still has to play.
    deal = from_position(
        players=4,
        trump_card="Rd",
        hands=["5s 6s", "7s 6b", "3s 2b Ab", "7b 4b 6c"],
        table=["Ac", "4c"],
    )
    assert deal.turn == 2
    assert greedy(deal) == "2b"


def test_greedy_takes_an_opponents_trick_in_four_players():
    # Seat 1 (team 1) wins with the Three of Cups over seat 0's King; seat 2 beats it.
    deal = from_position(
        players=4,
        trump_card="Rd",
        hands=["5s 6s", "7s 6b", "Ac 2b 2d", "7b 4b 6c"],
        table=["Rc", "3c"],
    )
    assert greedy(deal) == "Ac"


def test_greedy_plays_from_the_views_of_a_real_deal():
    # A real deck: whatever greedy plays at the first trick is a card it holds, and on a
    # lead it never plays a trump while it holds a plain card.
    for seed in range(30):
        deal = Deal(2, seed % 2, shuffled_deck(f"greedy-real-{seed}"))
        card = Card.from_code(greedy(deal, seed))
        hand = deal.hands[deal.turn]
        assert card in hand
        if any(c.suit != deal.trump for c in hand):
            assert card.suit != deal.trump


# -- random ----------------------------------------------------------------------------


def test_random_plays_every_card_of_its_hand_over_seeds():
    deal = from_position(trump_card="Rd", hands=["4s 2b", "Ad 3c 7s"], table=["5s"])
    seen = {choose_card("random", seat_view(deal, 1), seed=s).code for s in range(40)}
    assert seen == {"Ad", "3c", "7s"}


# -- strength --------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 4])
def test_greedy_beats_random_clearly_over_200_duplicate_deals(players):
    summary = duel("greedy", "random", players=players, deals=200, seed="greedy-vs-random")
    assert summary.deals == 200 and summary.pairs == 100
    assert summary.score.mean > 0.75, summary.format()
    assert summary.score.low > 0.6, summary.format()
    assert summary.margin.mean > 20, summary.format()
