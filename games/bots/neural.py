"""The ``neural`` level: a small network over hand-made features, the deal's state and the cards.

For each legal card its input is the ``learned`` level's 30 features of that card
(:func:`games.bots.learned.features`), then :data:`CONTEXT`, what the seat knows of the
deal as a whole (the stock, the points, the trumps and points still out, its place in
the trick...), then :data:`CARDS`, the cards themselves (the card scored, the seat's other
cards, the cards not seen yet, the card winning the trick, the face-up briscola) by rank,
trump or plain: one hidden layer of rectified units scores the card, and the seat plays
the card of highest score. Where the linear model adds up its features, the network can
weigh them differently in the opening and in the endgame, when ahead and when behind, and
tell which trumps and which carichi are still out where the features only count them.

The weights are in ``data/neural_weights.json`` (package data), fitted by
``bench/train_neural.py`` on the same kind of targets as the learned level (each legal
card of a self-play position played out by the learned level until 10 cards are left,
then the rest solved exactly on the deal's true cards; see that script for the recipe,
seeds and commands). The committed network is three such networks of 64 units averaged
(their units side by side in one layer of 192): averaging evens out what one fit gets
wrong by chance.

Standard library only: the hidden layer is the sum of the weights' columns of the inputs
that are not 0 (most of the card inputs are), in plain Python, about a millisecond and a
half a move. Deterministic (the rng is not used).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from games.rules import Card, Deal, SeatView
from games.rules.cards import RANKS

from .learned import FEATURES, features
from .strong import Situation, _winning_index, situation_of_deal, situation_of_view

CONTEXT = (
    "stock",
    "mine",
    "theirs",
    "margin",
    "points_out",
    "on_table",
    "position",
    "four_players",
    "hand_size",
    "my_trumps",
    "trumps_out",
    "briscola_points",
    "partner_winning",
    "follows_suit",
)
"""The inputs after the learned features: the deal's state (the last, of the card)."""


def _ranks(prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}_{rank}" for rank in RANKS)


CARDS = (
    *_ranks("card_trump"),
    *_ranks("card_plain"),
    *_ranks("trump_out"),
    *_ranks("plain_out"),
    *_ranks("suit_out"),
    *_ranks("held_trump"),
    *_ranks("held_plain"),
    *_ranks("table_best"),
    "table_best_trump",
    "table_best_follows",
    *_ranks("briscola_face_up"),
)
"""The inputs after the context: the cards themselves, by rank (strongest first) and with
the suits named only as trump or plain, so that the network can learn what a hand and the
cards still out are worth where the hand-made features only count them. ``card_*``: the
card scored; ``trump_out_*``: that trump not seen yet; ``plain_out_*``: how many of the
three plain cards of that rank are not seen yet (in thirds); ``suit_out_*``: that card
of the scored card's own suit not seen yet (none for a trump); ``held_*``: the seat's
other cards (plain ones in halves); ``table_best_*``: the card winning the trick so far,
whether it is a trump and of the scored card's suit; ``briscola_face_up_*``: the face-up
briscola while the stock lasts."""

INPUTS = FEATURES + CONTEXT + CARDS
WEIGHTS_FILE = "neural_weights.json"


class Model:
    """One hidden layer: ``score = w2 · relu(W1 x + b1)``."""

    __slots__ = ("b1", "columns", "w1", "w2")

    def __init__(self, w1: Sequence[Sequence[float]], b1: Sequence[float], w2: Sequence[float]):
        if any(len(row) != len(INPUTS) for row in w1) or not len(w1) == len(b1) == len(w2):
            raise ValueError("the network's shapes do not match its inputs")
        self.w1 = tuple(tuple(float(v) for v in row) for row in w1)
        self.b1 = tuple(float(v) for v in b1)
        self.w2 = tuple(float(v) for v in w2)
        # W1 by input: most inputs of a card are 0 (the CARDS ones nearly all), and the
        # hidden layer is the sum of the columns of those that are not.
        self.columns = tuple(zip(*self.w1, strict=True)) if self.w1 else ()

    def score(self, x: Sequence[float]) -> float:
        if not self.w1:
            return 0.0
        h = list(self.b1)
        for xi, column in zip(x, self.columns, strict=True):
            if xi:
                h = [a + xi * w for a, w in zip(h, column, strict=True)]
        return sum([a * out for a, out in zip(h, self.w2, strict=True) if a > 0])


def average(members: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Weights files' data averaged into one: the networks' hidden units side by side,
    each output weight divided by their number, so that its score is the mean of theirs
    (an ensemble, run as one wider layer). ``bench/train_neural.py --average`` writes it."""
    if not members or any(tuple(m["inputs"]) != INPUTS for m in members):
        raise ValueError("only networks fitted for these inputs can be averaged")
    k = len(members)
    return {
        "inputs": list(INPUTS),
        "w1": [row for m in members for row in m["w1"]],
        "b1": [b for m in members for b in m["b1"]],
        "w2": [round(w / k, 7) for m in members for w in m["w2"]],
        "trained_by": "bench/train_neural.py",
        "args": {
            "average": True,
            "seed": ",".join(m["args"]["seed"] for m in members),
            "hidden": sum(len(m["b1"]) for m in members),
        },
        "members": [{"args": m["args"], "history": m["history"]} for m in members],
    }


@cache
def model() -> Model:
    """The committed network (package data ``games/bots/data/neural_weights.json``)."""
    text = resources.files("games.bots").joinpath("data", WEIGHTS_FILE).read_text("utf-8")
    data = json.loads(text)
    if tuple(data["inputs"]) != INPUTS:
        raise ValueError("the network's weights were fitted for other inputs")
    return Model(data["w1"], data["b1"], data["w2"])


def inputs(s: Situation) -> list[tuple[Card, list[float]]]:
    """Each legal card of the seat with its input vector (in INPUTS order)."""
    trump = s.trump
    table = s.table
    on_table = sum(c.points for c in table)
    points_out = sum(c.points for c in s.out)
    led = table[0].suit if table else None
    shared = [
        s.stock_count / 34,
        s.mine / 120,
        s.theirs / 120,
        (s.mine - s.theirs) / 120,
        points_out / 120,
        on_table / 30,
        s.position / 3,
        float(s.players == 4),
        len(s.hand) / 3,
        sum(1 for c in s.hand if c.suit == trump) / 10,
        sum(1 for c in s.out if c.suit == trump) / 10,
        s.briscola.points / 11,
        float(s.partner_winning),
    ]
    cards = _cards(s)
    return [
        (card, [*f, *shared, float(card.suit == led), *c])
        for (card, f), c in zip(features(s), cards, strict=True)
    ]


def _cards(s: Situation) -> list[list[float]]:
    """The CARDS inputs of each card of the (sorted) hand."""
    trump = s.trump
    trump_out = [0.0] * 10
    plain_out = [0.0] * 10
    by_suit: dict[str, list[float]] = {}
    for c in s.out:
        if c.suit == trump:
            trump_out[c.strength - 1] = 1.0
        else:
            plain_out[c.strength - 1] += 1 / 3
            by_suit.setdefault(c.suit, [0.0] * 10)[c.strength - 1] = 1.0
    best = s.table[_winning_index(s.table, trump)] if s.table else None
    table_best = [0.0] * 10
    if best is not None:
        table_best[best.strength - 1] = 1.0
    face_up = [0.0] * 10
    if s.stock_count > 0:
        face_up[s.briscola.strength - 1] = 1.0
    none = [0.0] * 10
    rows = []
    for card in s.hand:
        is_trump = card.suit == trump
        scored = [0.0] * 20
        scored[card.strength - 1 + (0 if is_trump else 10)] = 1.0
        held_trump = [0.0] * 10
        held_plain = [0.0] * 10
        for c in s.hand:
            if c is not card:
                if c.suit == trump:
                    held_trump[c.strength - 1] = 1.0
                else:
                    held_plain[c.strength - 1] += 0.5
        rows.append(
            [
                *scored,
                *trump_out,
                *plain_out,
                *(none if is_trump else by_suit.get(card.suit, none)),
                *held_trump,
                *held_plain,
                *table_best,
                float(best is not None and best.suit == trump),
                float(best is not None and best.suit == card.suit),
                *face_up,
            ]
        )
    return rows


def choose(s: Situation, net: Model) -> Card:
    """The card of highest score (the first in card order on ties)."""
    if len(s.hand) == 1:
        return s.hand[0]
    best_card = s.hand[0]
    best_value = -1e18
    for card, x in inputs(s):
        value = net.score(x)
        if value > best_value:
            best_card, best_value = card, value
    return best_card


def neural_bot(
    view: SeatView,
    rng: random.Random,
    budget_ms: float = 0,
    *,
    max_iterations: int | None = None,
) -> Card:
    """The ``neural`` level (see the module docstring); the rng is not used."""
    return choose(situation_of_view(view), model())


def neural_view_card(view: SeatView) -> Card:
    """The ``neural`` choice from a seat's view."""
    return choose(situation_of_view(view), model())


def neural_card(deal: Deal, hand: Sequence[Card]) -> Card:
    """The ``neural`` choice of the seat to play in ``deal`` (for playouts)."""
    if len(hand) == 1:
        return hand[0]
    return choose(situation_of_deal(deal), model())
