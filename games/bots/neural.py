"""The ``neural`` level: a small network over the learned level's features and the deal's state.

For each legal card its input is the ``learned`` level's 30 features of that card
(:func:`games.bots.learned.features`) followed by :data:`CONTEXT`, what the seat knows of
the deal as a whole (the stock, the points, the trumps and points still out, its place in
the trick...): one hidden layer of rectified units scores the card, and the seat plays the
card of highest score. Where the linear model adds up its features, the network can weigh
them differently in the opening and in the endgame, when ahead and when behind.

The weights are in ``data/neural_weights.json`` (package data), fitted by
``bench/train_neural.py`` on the same kind of targets as the learned level (each legal
card of a self-play position played out by the learned level until 10 cards are left,
then the rest solved exactly on the deal's true cards; see that script for the recipe,
seeds and commands). The committed network is three such networks of 64 units averaged
(their units side by side in one layer of 192): averaging evens out what one fit gets
wrong by chance.

Standard library only: two small matrix products in plain Python (about a millisecond a
move). Deterministic (the rng is not used).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from games.rules import Card, Deal, SeatView

from .learned import FEATURES, features
from .strong import Situation, situation_of_deal, situation_of_view

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

INPUTS = FEATURES + CONTEXT
WEIGHTS_FILE = "neural_weights.json"


class Model:
    """One hidden layer: ``score = w2 · relu(W1 x + b1)``."""

    __slots__ = ("b1", "w1", "w2")

    def __init__(self, w1: Sequence[Sequence[float]], b1: Sequence[float], w2: Sequence[float]):
        if any(len(row) != len(INPUTS) for row in w1) or not len(w1) == len(b1) == len(w2):
            raise ValueError("the network's shapes do not match its inputs")
        self.w1 = tuple(tuple(float(v) for v in row) for row in w1)
        self.b1 = tuple(float(v) for v in b1)
        self.w2 = tuple(float(v) for v in w2)

    def score(self, x: Sequence[float]) -> float:
        total = 0.0
        for row, b, out in zip(self.w1, self.b1, self.w2, strict=True):
            h = b + sum([xi * wi for xi, wi in zip(x, row, strict=True)])
            if h > 0:
                total += h * out
        return total


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
    return [(card, [*f, *shared, float(card.suit == led)]) for card, f in features(s)]


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
