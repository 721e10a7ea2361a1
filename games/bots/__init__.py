"""Bots: pure functions from one seat's view to a card. See :mod:`games.bots.base`."""

from __future__ import annotations

import random

from games.rules import Card, SeatView

from .base import Bot
from .simple import greedy_bot, random_bot

LEVELS: dict[str, Bot] = {"random": random_bot, "greedy": greedy_bot}


class UnknownBotLevelError(ValueError):
    code = "unknown_bot_level"
    status = 400


def choose_card(level: str, view: SeatView, *, seed: int | str | None = None) -> Card:
    """The card the bot of ``level`` plays from ``view`` (deterministic for a seed)."""
    try:
        bot = LEVELS[level]
    except KeyError:
        raise UnknownBotLevelError(
            f"unknown bot level {level!r}: one of {', '.join(LEVELS)}"
        ) from None
    if not view.legal:
        raise ValueError("the view has no legal card: it is not this seat's turn")
    card = bot(view, random.Random(seed))
    assert card in view.legal, f"bot {level} chose an illegal card {card}"
    return card


__all__ = ["LEVELS", "Bot", "UnknownBotLevelError", "choose_card", "greedy_bot", "random_bot"]
