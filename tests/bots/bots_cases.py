"""Positions and budgets shared by the bot tests (a helper module, not a test module)."""

import random

from games.rules import Card, Deal, replay_moves, seat_view, shuffled_deck

TEST_BUDGET_MS = 20
"""Thinking budget for tests that only look at *which kind* of card comes back (legality,
strength over many deals): small, so searching levels keep the suite fast."""

CAPPED = {"budget_ms": 60_000, "max_iterations": 24}
"""Search limits for tests that compare two choices (determinism, no peeking): a small
iteration cap and a budget far beyond it, so the cap, not the clock, ends a searching
level's search and its choice is a pure function of the view and the seed."""

SIMPLE_LEVELS = frozenset({"random", "greedy", "strong", "learned", "neural"})
"""Levels that cost nothing per move, so tests may run them over many positions."""


def random_play_positions(players, seed, *, rng_seed=0, partners_last_hand=True):
    """(deal, seat, view) for the seat to play at every ply of one deal of random legal play."""
    deal = Deal(players, hash_dealer(seed, players), shuffled_deck(seed))
    rng = random.Random(rng_seed)
    out = []
    while not deal.is_over:
        seat = deal.turn
        view = seat_view(deal, seat, partners_last_hand=partners_last_hand)
        out.append((deal.copy(), seat, view))
        deal.play(rng.choice(deal.legal_moves()))
    return out


def hash_dealer(seed, players):
    """A dealer that varies with the seed (deterministically)."""
    return sum(map(ord, str(seed))) % players


def hidden_cards(deal, seat, *, partners_last_hand=True):
    """The cards ``seat`` cannot see: other hands (but a visible partner's) and the stock,
    minus the face-up briscola, wherever it is (on the table or in its holder's hand)."""
    view = seat_view(deal, seat, partners_last_hand=partners_last_hand)
    known = set(deal.hands[seat]) | set(deal.moves) | {deal.briscola}
    if view.partner_hand is not None:
        known |= set(view.partner_hand)
    return [c for c in deal.deck if c not in known]


def permuted_deal(deal, seat, rng, *, partners_last_hand=True):
    """The same deal with the cards hidden from ``seat`` permuted among their places.

    Each hidden card's deck position gets another hidden card, everything else (the seat's
    own cards, every played card, the face-up briscola, a visible partner's hand) keeps its
    position, and the same moves are replayed: the result differs only in what ``seat``
    cannot see, with the same hand sizes and the same history.
    """
    hidden = hidden_cards(deal, seat, partners_last_hand=partners_last_hand)
    shuffled = hidden[:]
    rng.shuffle(shuffled)
    mapping: dict[Card, Card] = dict(zip(hidden, shuffled, strict=True))
    deck = tuple(mapping.get(c, c) for c in deal.deck)
    return replay_moves(deal.players, deal.dealer, deck, deal.moves)


def from_position(*, players=2, trump_card, hands, table=(), leader=0, points=(0, 0), dealer=None):
    """A hand-built position: the other cards go to the stock (canonical order).

    ``hands`` are card-code strings per seat ("Ac 2d Rs"); ``table`` the cards played so far
    in this trick from ``leader``; ``trump_card`` is the face-up briscola.
    """
    from games.rules import CARDS

    hand_cards = [[Card.from_code(c) for c in h.split()] for h in hands]
    table_cards = [Card.from_code(c) for c in table]
    briscola = Card.from_code(trump_card)
    used = {briscola, *table_cards, *(c for h in hand_cards for c in h)}
    assert len(used) == 1 + len(table_cards) + sum(map(len, hand_cards)), "a card twice"
    stock = [c for c in CARDS if c not in used]
    return Deal.from_position(
        players=players,
        dealer=(leader - 1) % players if dealer is None else dealer,
        briscola=briscola,
        hands=hand_cards,
        stock=stock,
        briscola_on_table=True,
        leader=leader,
        table=table_cards,
        points=points,
    )
