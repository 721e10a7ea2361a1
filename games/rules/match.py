"""A match: a series of deals between the same seats. See docs/rules.md, "A match"."""

from __future__ import annotations

from typing import Final

from .deal import PLAYER_COUNTS, Deal
from .errors import InvalidDealError, MatchOverError
from .shuffle import Seed, shuffled_deck

FORMATS: Final = {"single": 1, "first_to_2": 2, "first_to_3": 3}
"""Match format -> deals a team must win (``single`` ends after one deal, even drawn)."""


class Match:
    """Which deals were won by whom, and so whether the match is over.

    ``results`` holds one entry per finished deal: the winning team, or None for a
    60-60 draw (which counts for nobody).
    """

    __slots__ = ("players", "format", "first_dealer", "results", "resigned_team")

    def __init__(self, players: int, format: str, first_dealer: int) -> None:
        if type(players) is not int or players not in PLAYER_COUNTS:
            raise InvalidDealError(f"a match has 2 or 4 players, not {players!r}")
        if format not in FORMATS:
            raise InvalidDealError(f"unknown match format {format!r}: one of {', '.join(FORMATS)}")
        if type(first_dealer) is not int or not 0 <= first_dealer < players:
            raise InvalidDealError(f"the first dealer must be a seat, not {first_dealer!r}")
        self.players = players
        self.format = format
        self.first_dealer = first_dealer
        self.results: list[int | None] = []
        self.resigned_team: int | None = None

    @property
    def deals_won(self) -> tuple[int, int]:
        return (self.results.count(0), self.results.count(1))

    @property
    def is_over(self) -> bool:
        if self.resigned_team is not None:
            return True
        if self.format == "single":
            return len(self.results) >= 1
        return max(self.deals_won) >= FORMATS[self.format]

    @property
    def winner(self) -> int | None:
        """The winning team once over; None while playing or for a drawn single deal."""
        if self.resigned_team is not None:
            return 1 - self.resigned_team
        if not self.is_over:
            return None
        won = self.deals_won
        if won[0] == won[1]:
            return None
        return 0 if won[0] > won[1] else 1

    @property
    def next_dealer(self) -> int:
        """Each deal is dealt by the player to the previous dealer's right (seat + 1)."""
        return (self.first_dealer + len(self.results)) % self.players

    def new_deal(self, seed: Seed) -> Deal:
        if self.is_over:
            raise MatchOverError("the match is over: no more deals")
        return Deal(self.players, self.next_dealer, shuffled_deck(seed))

    def record_deal(self, deal: Deal) -> None:
        """Count a finished deal."""
        if self.is_over:
            raise MatchOverError("the match is over: no more deals")
        if not deal.is_over:
            raise InvalidDealError("only a finished deal can be counted")
        if deal.players != self.players or deal.dealer != self.next_dealer:
            raise InvalidDealError(
                f"not this match's next deal: expected {self.players} players dealt by seat "
                f"{self.next_dealer}, got {deal.players} dealt by seat {deal.dealer}"
            )
        self.results.append(deal.winner)

    def resign(self, team: int) -> None:
        """``team`` gives up: the match ends at once and the other team wins it."""
        if self.is_over:
            raise MatchOverError("the match is already over")
        if team not in (0, 1):
            raise InvalidDealError(f"a team is 0 or 1, not {team!r}")
        self.resigned_team = team
