"""The ``learned`` level: a linear model over hand-made features, trained by self-play.

For each legal card it computes :data:`FEATURES` (what playing that card does: the points
it risks or banks, whether it wins the trick and surely, whether it spends a trump and how
many trumps are still out, whether it reaches 61, whether it is what the ``strong`` rules
would play, ...) from the seat's view only (:class:`games.bots.strong.Situation`), and
plays the card with the highest ``weights · features``. The weights are in
``data/learned_weights.json`` (package data), fitted by ``bench/train_learned.py``:
rollouts from self-play positions, each legal card played out to the end of the deal,
and least squares of the card's result (relative to the other cards of the position) on
its features; see that script for the exact recipe, seed and command.

Standard library only: the model is a dot product. Deterministic (the rng is not used).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from importlib import resources

from games.rules import Card, Deal, SeatView

from .strong import (
    WIN,
    Situation,
    _beats,
    _unbeatable,
    _winning_index,
    decide,
    situation_of_deal,
    situation_of_view,
)

FEATURES = (
    "strong_choice",
    "strong_choice_exact",
    "strong_choice_4p",
    "points",
    "trump",
    "trump_points",
    "strength",
    "lead_points",
    "lead_trump",
    "lead_low_trump",
    "lead_safe_points",
    "lead_higher_out",
    "wins",
    "last_win_gain",
    "last_lose_gain",
    "notlast_win_gain",
    "notlast_win_safe",
    "win_trump",
    "win_trump_stock",
    "partner_load",
    "partner_trump",
    "reaches_61",
    "gives_61",
    "want_briscola_win",
    "my_trumps_trump",
    "trumps_out_trump",
    "empty_stock_points",
    "four_players_points",
    "master_plain",
    "master_points",
)
"""The names of the features, in the order of the weights."""

WEIGHTS_FILE = "learned_weights.json"


@cache
def weights() -> tuple[float, ...]:
    """The committed weights (package data ``games/bots/data/learned_weights.json``)."""
    text = resources.files("games.bots").joinpath("data", WEIGHTS_FILE).read_text("utf-8")
    data = json.loads(text)
    names = tuple(data["features"])
    if names != FEATURES:
        raise ValueError("the learned weights were fitted for other features")
    return tuple(float(w) for w in data["weights"])


def features(s: Situation) -> list[tuple[Card, list[float]]]:
    """Each legal card of the seat with its feature vector (in FEATURES order)."""
    trump = s.trump
    hand = s.hand
    choice = decide(s)
    exact = float(s.players == 2 and s.stock_count == 0)
    four = float(s.players == 4)
    my_trumps = sum(1 for c in hand if c.suit == trump) / 10
    trumps_out = sum(1 for c in s.out if c.suit == trump) / 10
    stock = s.stock_count / 34
    empty = float(s.stock_count == 0)
    table = s.table
    leading = not table
    last = s.position == s.players - 1
    if table:
        best: Card | None = table[_winning_index(table, trump)]
        on_table = sum(c.points for c in table)
    else:
        best = None
        on_table = 0
    partner_safe = s.partner_winning and (
        last or (best is not None and _unbeatable(best, s.out, trump))
    )
    want_briscola = float(
        s.players == 2
        and s.stock_count == 2
        and (s.briscola.points >= 3 or s.briscola.strength <= 4)
        and s.briscola not in hand
    )
    out = []
    for card in hand:
        is_trump = card.suit == trump
        t = float(is_trump)
        pts = card.points / 10
        higher_out = sum(1 for c in s.out if c.suit == card.suit and c.strength < card.strength)
        master = higher_out == 0
        win = best is not None and not s.partner_winning and _beats(card, best, trump)
        sure = win and (last or _unbeatable(card, s.out, trump))
        gain = (on_table + card.points) / 10
        f = [
            float(card is choice),
            float(card is choice) * exact,
            float(card is choice) * four,
            pts,
            t,
            t * pts,
            card.strength / 10,
            pts * leading,
            t * leading,
            t * leading * (card.points == 0),
            pts * leading * _unbeatable(card, s.out, trump),
            leading * higher_out / 10,
            float(win),
            gain * (win and last),
            gain * (not win and last and not s.partner_winning),
            gain * (win and not last),
            float(sure and not last),
            t * win,
            t * win * stock,
            pts * partner_safe * (not is_trump),
            t * s.partner_winning,
            float(sure and s.mine + on_table + card.points >= WIN),
            float(
                not win
                and not s.partner_winning
                and best is not None
                and s.theirs + on_table + card.points >= WIN
            ),
            want_briscola * win,
            t * my_trumps,
            t * trumps_out,
            empty * pts,
            four * pts,
            float(master and not is_trump),
            float(master) * pts,
        ]
        out.append((card, f))
    return out


def choose(s: Situation, w: Sequence[float]) -> Card:
    """The card of highest value ``w · features`` (the first in card order on ties)."""
    if len(s.hand) == 1:
        return s.hand[0]
    best_card = s.hand[0]
    best_value = -1e18
    for card, f in features(s):
        value = 0.0
        for x, wi in zip(f, w, strict=True):
            value += x * wi
        if value > best_value:
            best_card, best_value = card, value
    return best_card


def learned_bot(
    view: SeatView,
    rng: random.Random,
    budget_ms: float = 0,
    *,
    max_iterations: int | None = None,
) -> Card:
    """The ``learned`` level (see the module docstring); the rng is not used."""
    return choose(situation_of_view(view), weights())


def learned_view_card(view: SeatView) -> Card:
    """The ``learned`` choice from a seat's view."""
    return choose(situation_of_view(view), weights())


def learned_card(deal: Deal, hand: Sequence[Card]) -> Card:
    """The ``learned`` choice of the seat to play in ``deal`` (for playouts)."""
    if len(hand) == 1:
        return hand[0]
    return choose(situation_of_deal(deal), weights())
