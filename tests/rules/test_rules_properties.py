"""Properties over random deals (Hypothesis): card and point conservation, replay, copy,
and the information rule -- no view ever shows a seat a card it may not know.

Derandomized with no example database, so a CI run is the same run every time."""

import json
import re
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules import (
    CARDS,
    Card,
    Deal,
    DealRecord,
    deal_events,
    replay_moves,
    seat_view,
    shuffled_deck,
    spectator_view,
)

DETERMINISTIC = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# docs/rules.md's strength order, written out again independently of games.rules.
ORDER = "A3RCF76542"


@st.composite
def games(draw):
    """(players, dealer, seed, rng): a deal and a random but reproducible way to play it."""
    players = draw(st.sampled_from([2, 4]))
    dealer = draw(st.integers(0, players - 1))
    seed = draw(st.one_of(st.text(min_size=1, max_size=16), st.integers()))
    rng = draw(st.randoms(use_true_random=False))
    return players, dealer, seed, rng


def new_deal(game):
    players, dealer, seed, _ = game
    return Deal(players, dealer, shuffled_deck(seed))


def next_move(deal, rng):
    return rng.choice(deal.legal_moves())


def snapshot(deal):
    """Everything a replay must reproduce."""
    return (
        list(deal.points),
        [tuple(t) for t in deal.tricks],
        [tuple(d) for d in deal.draws],
        list(deal.moves),
        [list(h) for h in deal.hands],
        list(deal.table),
        deal.turn,
        deal.leader,
        deal.briscola_holder,
        deal.stock_count,
        deal.winner,
        deal.is_over,
    )


def reference_winner(cards, leader, trump, players):
    """docs/rules.md rule 6, independently: highest trump, else highest of the suit led."""
    led = cards[0].suit

    def rank(card):
        return (card.suit == trump, card.suit == led, -ORDER.index(card.rank))

    best = max(range(len(cards)), key=lambda i: rank(cards[i]))
    return (leader + best) % players


# A card code as a token anywhere in JSON text, in any letter case ("Ad", "aD", ...).
_CODE_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])[A3RCF2-7][cdsb](?![A-Za-z0-9])", re.IGNORECASE)


def cards_shown(payload):
    """Every card whose code appears anywhere in ``json.dumps(payload)``."""
    return {Card.from_code(code) for code in _CODE_IN_TEXT.findall(json.dumps(payload))}


def test_cards_shown_finds_codes_in_any_case_and_nothing_else():
    payload = {"hand": ["Ad", "3b"], "x": [{"card": "rs"}], "note": "played cC.", "trump": "d"}
    assert {c.code for c in cards_shown(payload)} == {"Ad", "3b", "Rs", "Cc"}
    names = {"players": 2, "seat": 0, "cards": [], "briscola_on_table": True, "points": [35, 0]}
    assert cards_shown(names) == set()
    assert cards_shown([c.code for c in CARDS]) == set(CARDS)


@DETERMINISTIC
@given(games())
def test_conservation_every_card_once_120_points_hands_of_three_20_or_10_tricks(game):
    players, _, _, rng = game
    deal = new_deal(game)
    while True:
        assert all(len(hand) <= 3 for hand in deal.hands)
        held = [c for hand in deal.hands for c in hand]
        everywhere = Counter(held + list(deal.stock) + list(deal.moves))
        assert everywhere == Counter(CARDS)  # each card in exactly one place
        assert deal.points == [
            sum(t.points for t in deal.tricks if t.winner % 2 == team) for team in (0, 1)
        ]
        if not deal.table:  # between tricks, every hand holds the same number of cards
            assert len({len(hand) for hand in deal.hands}) == 1
        if deal.is_over:
            break
        deal.play(next_move(deal, rng))
    assert sorted(deal.moves) == list(CARDS)
    assert sum(deal.points) == 120
    assert sum(t.points for t in deal.tricks) == 120
    assert len(deal.tricks) == {2: 20, 4: 10}[players]
    assert len(deal.draws) == 40 - 3 * players
    for trick in deal.tricks:
        assert trick.winner == reference_winner(trick.cards, trick.leader, deal.trump, players)
        assert trick.points == sum(c.points for c in trick.cards)
    assert deal.winner == (0 if deal.points[0] > 60 else 1 if deal.points[1] > 60 else None)


@DETERMINISTIC
@given(games())
def test_replaying_the_record_reproduces_the_state_at_every_prefix(game):
    _, _, seed, rng = game
    deal = new_deal(game)
    states = [snapshot(deal)]
    while not deal.is_over:
        deal.play(next_move(deal, rng))
        states.append(snapshot(deal))
    record = DealRecord.from_deal(deal, seed=seed)
    assert DealRecord.from_json(record.to_json()) == record
    for k, expected in enumerate(states):
        prefix = DealRecord(
            record.players, record.dealer, record.deck, record.moves[:k], record.seed
        )
        replay = DealRecord.from_json(prefix.to_json()).replay()
        assert snapshot(replay.deal) == expected
        assert replay.complete == (k == 40)
        assert snapshot(replay_moves(deal.players, deal.dealer, deal.deck, deal.moves[:k])) == (
            expected
        )


@DETERMINISTIC
@given(games())
def test_no_view_or_event_ever_shows_a_card_its_seat_may_not_know(game):
    players, _, _, rng = game
    deal = new_deal(game)
    while True:
        played = set(deal.moves)
        public = played | {deal.briscola}
        partners_see = players == 4 and deal.stock_count == 0
        for seat in range(players):
            own = set(deal.hands[seat])
            partner = set(deal.hands[(seat + 2) % players]) if partners_see else set()
            assert cards_shown(seat_view(deal, seat).to_dict()) <= own | public | partner
            without_option = seat_view(deal, seat, partners_last_hand=False).to_dict()
            assert cards_shown(without_option) <= own | public
            assert cards_shown(deal_events(deal, seat)) <= own | public
        assert cards_shown(spectator_view(deal).to_dict()) <= public
        assert cards_shown(deal_events(deal, None)) <= public
        if deal.is_over:
            break
        deal.play(next_move(deal, rng))


@DETERMINISTIC
@given(games(), st.integers(0, 40))
def test_a_copy_is_independent_of_the_original(game, split):
    _, _, _, rng = game
    deal = new_deal(game)
    while deal.ply < split and not deal.is_over:
        deal.play(next_move(deal, rng))
    at_split = snapshot(deal)
    copy = deal.copy()
    assert snapshot(copy) == at_split
    while not copy.is_over:  # playing on the copy leaves the original alone
        copy.play(next_move(copy, rng))
    assert snapshot(deal) == at_split
    for card in copy.moves[deal.ply :]:  # the same moves on the original: the same end
        deal.play(card)
    assert snapshot(deal) == snapshot(copy)
    copy_end = snapshot(copy)
    again = Deal(deal.players, deal.dealer, deal.deck)
    clone = again.copy()
    again.play(again.legal_moves()[0])
    assert clone.ply == 0 and sum(len(h) for h in clone.hands) == 3 * deal.players
    assert snapshot(copy) == copy_end
