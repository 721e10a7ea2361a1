"""Errors raised by the rules engine.

Each error carries a stable machine-readable ``code`` (what clients switch on) and the
HTTP ``status`` a web service should answer with, so the service can render them
without a translation table. Bad *syntax* (a string that is not a card) and bad
*moves* (a real card that may not be played now) are distinct, as in python-chess.
"""

from __future__ import annotations

from typing import Any


class RulesError(Exception):
    """Base of every error the rules engine raises."""

    code: str = "rules_error"
    status: int = 400

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details


class InvalidCardError(RulesError, ValueError):
    """A string that is not a card code."""

    code = "invalid_card"
    status = 400


class IllegalMoveError(RulesError):
    """A real card that may not be played now."""

    code = "illegal_move"
    status = 409


class NotYourTurnError(IllegalMoveError):
    code = "not_your_turn"
    status = 409


class CardNotInHandError(IllegalMoveError):
    code = "card_not_in_hand"
    status = 400


class DealOverError(IllegalMoveError):
    code = "deal_over"
    status = 409


class MatchOverError(RulesError):
    code = "match_over"
    status = 409


class InvalidDealError(RulesError, ValueError):
    """Parameters that do not describe a deal (player count, dealer, deck)."""

    code = "invalid_deal"
    status = 400


class RecordError(RulesError, ValueError):
    """A deal record that cannot be read or replayed; ``where`` says which part."""

    code = "invalid_record"
    status = 400

    def __init__(self, message: str, *, where: str, **details: Any) -> None:
        super().__init__(f"{where}: {message}", where=where, **details)
        self.where = where
