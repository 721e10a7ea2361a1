"""Fixtures for ratings: finished matches written directly (no moves), and snapshots."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest

from accounts.models import PlayerStats, Rating, RatingChange, User
from games.models import Deal, DealStatus, EndReason, Match, MatchStatus, Seat


def _t0() -> datetime:
    from datetime import UTC

    return datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def finished_match() -> Callable[..., Match]:
    """`finished_match(users, winner=0, deals=[(71, 49, 0)], ...)`: a finished match.

    Seats take ``users`` in order (team = seat & 1); finish times advance one minute per
    call unless ``finished_at`` is given. No moves: ratings read only results.
    """
    minutes = itertools.count(1)

    def create(
        users: Sequence[User],
        *,
        winner: int | None = 0,
        deals: Sequence[tuple[int, int, int | None]] | None = None,
        rated: bool = True,
        status: str = MatchStatus.FINISHED,
        end_reason: str = EndReason.PLAYED,
        finished_at: datetime | None = None,
    ) -> Match:
        if deals is None:
            deals = (
                [(71, 49, 0)] if winner == 0 else [(49, 71, 1)] if winner == 1 else [(60, 60, None)]
            )
        when = finished_at or _t0() + timedelta(minutes=next(minutes))
        match = Match.objects.create(
            players=len(users),
            format="single" if len(deals) == 1 else "first_to_2",
            status=status,
            rated=rated,
            winner_team=winner,
            end_reason=end_reason,
            created_by=users[0],
            started_at=when - timedelta(minutes=1),
            finished_at=when,
            deals_won_team0=sum(1 for d in deals if d[2] == 0),
            deals_won_team1=sum(1 for d in deals if d[2] == 1),
        )
        for number, user in enumerate(users):
            Seat.objects.create(match=match, number=number, user=user, joined_at=when)
        for number, (p0, p1, w) in enumerate(deals, start=1):
            Deal.objects.create(
                match=match,
                number=number,
                dealer=0,
                seed=f"seed-{match.pk}-{number}",
                commitment="0" * 64,
                status=DealStatus.FINISHED,
                points_team0=p0,
                points_team1=p1,
                winner_team=w,
                finished_at=when,
            )
        return match

    return create


def ratings_snapshot() -> dict[str, Any]:
    """Everything the rating code wrote, in a comparable form (ids and times left out)."""
    return {
        "ratings": sorted(
            Rating.objects.values_list(
                "user_id",
                "category",
                "mu",
                "sigma",
                "games",
                "last_match_id",
                "last_match_finished_at",
            )
        ),
        "changes": sorted(
            RatingChange.objects.values_list(
                "user_id",
                "category",
                "match_id",
                "match_finished_at",
                "result",
                "mu_before",
                "sigma_before",
                "mu_after",
                "sigma_after",
                "rating_before",
                "rating_after",
            )
        ),
        "stats": sorted(
            PlayerStats.objects.values_list(
                "user_id",
                "category",
                "games",
                "wins",
                "draws",
                "losses",
                "deals_played",
                "deals_won",
                "points",
            )
        ),
    }


@pytest.fixture
def snapshot() -> Callable[[], dict[str, Any]]:
    return ratings_snapshot
