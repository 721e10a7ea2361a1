"""The bot interface: a bot is a pure function of one seat's view.

A bot gets exactly what the API gives that seat (:class:`games.rules.SeatView`) and a
random generator, and returns a card from ``view.legal``. It never sees other hands,
the stock order or the seed, because nothing it is given contains them.
"""

from __future__ import annotations

import random
from typing import Protocol

from games.rules import Card, SeatView, trick_winner_index


class Bot(Protocol):
    """``bot(view, rng, budget_ms, max_iterations=None) -> card``.

    A pure function of the view and the rng: with ``max_iterations`` set (and a budget
    large enough not to cut it short), the same view and seed give the same card.
    """

    def __call__(
        self,
        view: SeatView,
        rng: random.Random,
        budget_ms: float,
        *,
        max_iterations: int | None = None,
    ) -> Card: ...


def table_winner(view: SeatView) -> tuple[int, Card] | None:
    """The (seat, card) currently winning the trick on the table, if any."""
    if not view.table:
        return None
    cards = [c for _, c in view.table]
    i = trick_winner_index(cards, view.trump)
    return view.table[i]


def beats(card: Card, best: Card, trump: str) -> bool:
    """Would ``card``, played after ``best`` (currently winning), take the trick?"""
    if card.suit == best.suit:
        return card.strength < best.strength
    return card.suit == trump


def cheapness(card: Card, trump: str) -> tuple[int, int, int]:
    """Sort key: cheapest card to give away first (non-trump, few points, weak)."""
    return (card.suit == trump, card.points, -card.strength)
