"""The two simple levels: ``random`` and ``greedy``."""

from __future__ import annotations

import random

from games.rules import Card, SeatView, team_of

from .base import beats, cheapness, table_winner


def random_bot(
    view: SeatView, rng: random.Random, budget_ms: float = 0, *, max_iterations: int | None = None
) -> Card:
    """Any legal card, uniformly."""
    return rng.choice(sorted(view.legal))


def greedy_bot(
    view: SeatView, rng: random.Random, budget_ms: float = 0, *, max_iterations: int | None = None
) -> Card:
    """A sensible rule-based player.

    Take a trick cheaply when it carries points; otherwise give away the cheapest card,
    keeping trumps. With a partner already winning the trick, add points to it when
    playing last, else play cheap.
    """
    hand = sorted(view.legal)
    trump = view.trump
    cheapest = min(hand, key=lambda c: cheapness(c, trump))
    current = table_winner(view)
    if current is None:
        return cheapest
    winner_seat, best = current
    table_points = sum(c.points for _, c in view.table)
    if view.seat is not None and team_of(winner_seat) == team_of(view.seat):
        last_to_play = len(view.table) == view.players - 1
        if last_to_play:
            # Safe to add points: give the richest card that is not a trump.
            plain = [c for c in hand if c.suit != trump]
            if plain:
                return max(plain, key=lambda c: (c.points, -c.strength))
        return cheapest
    winners = [c for c in hand if beats(c, best, trump)]
    if winners:
        cheapest_winner = min(winners, key=lambda c: cheapness(c, trump))
        if table_points > 0 or cheapest_winner.suit != trump:
            # Win when it is worth points, or when it costs no trump.
            return cheapest_winner
    return cheapest
