"""Rating math: OpenSkill's Weng-Lin Plackett-Luce model, and per-player statistics.

Pure Python over the ``openskill`` library: no Django, no I/O. The services feed it one
game at a time, in the order the games finished, so the incremental path (a Celery task
per match) and ``ratings_recompute`` (one pass over the history) call the very same
functions on the very same floats and end with identical numbers.

Why Plackett-Luce: it is openskill's default and recommended model, rates teams natively
(2v2 partnerships) and ties (a 60-60 single deal), and is the fastest of its models
(about 20 microseconds for a 1v1 update, 30 for a 2v2). For two teams the Weng-Lin
models differ little; Thurstone-Mosteller's draw margin would add a parameter we have
no data to tune. Glicko-2 (Lichess, 1v1) does not rate teams.

The display scale: ``1500 + K * (mu - 25)``, with ``K = 400 / (ln 10 * sqrt(2) * beta)``
(about 29.5). A newcomer shows 1500, and between settled players a difference of 400
points means about 10:1 odds in 1v1, as in Elo. The deviation shown is ``K * sigma``
(about 246 for a newcomer). A rating is provisional while ``sigma`` is at least
``PROVISIONAL_SIGMA`` (6.0, i.e. a shown deviation of about 177): roughly the first dozen
1v1 games, a few more in 2v2 where each game says less about one partner.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from openskill.models import PlackettLuce

CATEGORY_1V1 = "1v1"
CATEGORY_2V2 = "2v2"
CATEGORIES = (CATEGORY_1V1, CATEGORY_2V2)

MODEL = PlackettLuce()
INITIAL_MU: float = MODEL.mu
INITIAL_SIGMA: float = MODEL.sigma
DISPLAY_BASE = 1500
DISPLAY_SCALE: float = 400 / (math.log(10) * math.sqrt(2) * MODEL.beta)
PROVISIONAL_SIGMA = 6.0

Result = Literal["win", "draw", "loss"]


def category_for_players(players: int) -> str:
    """``1v1`` for 2-player matches, ``2v2`` for 4-player partnerships."""
    if players == 2:
        return CATEGORY_1V1
    if players == 4:
        return CATEGORY_2V2
    raise ValueError(f"no rating category for {players} players")


@dataclass(frozen=True, slots=True)
class Skill:
    """One player's belief: mean ``mu`` and uncertainty ``sigma`` (OpenSkill units)."""

    mu: float = INITIAL_MU
    sigma: float = INITIAL_SIGMA

    @property
    def display(self) -> int:
        return display_rating(self.mu)

    @property
    def deviation(self) -> int:
        return round(DISPLAY_SCALE * self.sigma)

    @property
    def provisional(self) -> bool:
        return is_provisional(self.sigma)


def display_rating(mu: float) -> int:
    return round(DISPLAY_BASE + DISPLAY_SCALE * (mu - INITIAL_MU))


def is_provisional(sigma: float) -> bool:
    return sigma >= PROVISIONAL_SIGMA


def rate_game(
    teams: Sequence[Sequence[Skill]], winner: int | None, weight: float = 1.0
) -> list[list[Skill]]:
    """New skills after one game between two teams; ``winner`` 0 or 1, None for a draw.

    A match counts as one game whatever its number of deals; a resignation is a loss for
    the team that resigned (the caller passes the other team as ``winner``). ``weight``
    (0 to 1) scales each player's change of ``mu`` and ``sigma``: 1 is the model's full
    update, 0 none (a repeated result between the same people, games.rated_games).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight is between 0 and 1")
    if len(teams) != 2 or len(teams[0]) != len(teams[1]) or not teams[0]:
        raise ValueError("a game is two teams of the same, non-zero size")
    if winner not in (0, 1, None):
        raise ValueError("winner is 0, 1 or None")
    ranks = [0.0, 0.0] if winner is None else [float(winner != 0), float(winner != 1)]
    rated = MODEL.rate(
        [[MODEL.rating(mu=s.mu, sigma=s.sigma) for s in team] for team in teams], ranks=ranks
    )
    full = [[Skill(float(r.mu), float(r.sigma)) for r in team] for team in rated]
    if weight == 1.0:
        return full
    return [
        [
            Skill(old.mu + weight * (new.mu - old.mu), old.sigma + weight * (new.sigma - old.sigma))
            for old, new in zip(before, after, strict=True)
        ]
        for before, after in zip(teams, full, strict=True)
    ]


def result_for_team(team: int, winner: int | None) -> Result:
    if winner is None:
        return "draw"
    return "win" if winner == team else "loss"


@dataclass(frozen=True, slots=True)
class DealResult:
    """A finished deal, as the statistics count it."""

    points: tuple[int, int]
    winner: int | None  # None for a 60-60 draw


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A finished rated match, as the rating code sees it (accounts never imports games).

    ``teams[t]`` lists the user ids of team ``t`` (seats ``t``, ``t + 2``); ``deals``
    lists its finished deals (a deal cut short by a resignation is not counted).
    """

    match_id: uuid.UUID
    category: str
    finished_at: datetime
    teams: tuple[tuple[int, ...], tuple[int, ...]]
    winner: int | None
    deals: tuple[DealResult, ...] = ()
    weight: float = 1.0  # how much it moves ratings (games.rated_games: repeated results)

    @property
    def order_key(self) -> tuple[datetime, str]:
        """The finish order: finish time, then match id (as the database sorts them)."""
        return (self.finished_at, str(self.match_id))

    @property
    def user_ids(self) -> list[int]:
        return [u for team in self.teams for u in team]

    def team_of(self, user_id: int) -> int:
        return 0 if user_id in self.teams[0] else 1


@dataclass(slots=True)
class StatsTally:
    """A player's statistics in one category, accumulated game by game."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    deals_played: int = 0
    deals_won: int = 0
    points: int = 0

    def add(self, game: RatedGame, user_id: int) -> None:
        team = game.team_of(user_id)
        result = result_for_team(team, game.winner)
        self.games += 1
        self.wins += result == "win"
        self.draws += result == "draw"
        self.losses += result == "loss"
        for deal in game.deals:
            self.deals_played += 1
            self.deals_won += deal.winner == team
            self.points += deal.points[team]

    @property
    def points_per_deal(self) -> float | None:
        return round(self.points / self.deals_played, 2) if self.deals_played else None
