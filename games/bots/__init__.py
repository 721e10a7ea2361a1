"""Bots: pure functions from one seat's view to a card. See :mod:`games.bots.base`."""

from __future__ import annotations

import random

from games.rules import Card, SeatView

from .base import Bot
from .expert import expert_bot
from .expert_v1 import expert_v1_bot
from .learned import learned_bot
from .neural import neural_bot
from .simple import greedy_bot, random_bot
from .strong import strong_bot

LEVELS: dict[str, Bot] = {
    "random": random_bot,
    "greedy": greedy_bot,
    "strong": strong_bot,
    "learned": learned_bot,
    "neural": neural_bot,
    "expert": expert_bot,
    "expert_v1": expert_v1_bot,
}


class UnknownBotLevelError(ValueError):
    code = "unknown_bot_level"
    status = 400


DEFAULT_BUDGET_MS = 100


def choose_card(
    level: str,
    view: SeatView,
    *,
    seed: int | str | None = None,
    budget_ms: float = DEFAULT_BUDGET_MS,
    max_iterations: int | None = None,
) -> Card:
    """The card the bot of ``level`` plays from ``view``.

    ``budget_ms`` bounds the thinking time of searching levels and ``max_iterations``
    their work; the simple levels ignore both. The choice is a pure function of the view
    and the seed whenever the iteration cap, not the clock, ends the search.
    """
    try:
        bot = LEVELS[level]
    except KeyError:
        raise UnknownBotLevelError(
            f"unknown bot level {level!r}: one of {', '.join(LEVELS)}"
        ) from None
    if not view.legal:
        raise ValueError("the view has no legal card: it is not this seat's turn")
    card = bot(view, random.Random(seed), budget_ms, max_iterations=max_iterations)
    assert card in view.legal, f"bot {level} chose an illegal card {card}"
    return card


__all__ = [
    "LEVELS",
    "Bot",
    "UnknownBotLevelError",
    "choose_card",
    "expert_bot",
    "expert_v1_bot",
    "greedy_bot",
    "learned_bot",
    "neural_bot",
    "random_bot",
    "strong_bot",
]
