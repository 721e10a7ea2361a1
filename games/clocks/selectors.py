"""Reads of the clocks: what a viewer sees of a match's time, the invitations a user has,
and the indexed queries the sweeps run (each one range scan of a partial index, oldest
first, bounded)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from accounts.models import User
from games.models import Match, MatchStatus, Seat

JSON = dict[str, Any]


def time_control_json(match: Match) -> JSON | None:
    """The match's time control as it was asked for, or None when untimed."""
    seconds = match.per_move_seconds
    if seconds is None:
        return None
    if seconds % 3600 == 0 and seconds >= 3600:
        return {"per_move_hours": seconds // 3600}
    return {"per_move_seconds": seconds}


def clock_summary(match: Match) -> JSON:
    """The clock fields of a match's summary (``seconds_left`` is added when it is shown:
    see :func:`seconds_left`)."""
    return {
        "time_control": time_control_json(match),
        "on_timeout": match.on_timeout,
        "timeout_bot": match.timeout_bot_level,
        "to_move": match.to_move_seat if match.status == MatchStatus.ACTIVE else None,
        "deadline": match.deadline,
        "expires_at": match.expires_at if match.status == MatchStatus.WAITING else None,
        "rematch_of": str(match.rematch_of_id) if match.rematch_of_id else None,
    }


def instant(value: datetime | str | None) -> datetime | None:
    """A summary's moment: a datetime, or its ISO text once the summary went through JSON."""
    if isinstance(value, str):
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value


def seconds_left(deadline: datetime | str | None, now: datetime | None = None) -> int | None:
    """Whole seconds until ``deadline`` (rounded up, never below 0), or None."""
    deadline = instant(deadline)
    if deadline is None:
        return None
    left = (deadline - (now or timezone.now())).total_seconds()
    return max(0, math.ceil(left))


def invitations_for_user(*, user: User) -> QuerySet[Match]:
    """Waiting matches with a seat reserved for ``user`` that they have not taken yet."""
    return (
        Match.objects.filter(
            status=MatchStatus.WAITING,
            seats__user=user,
            seats__joined_at__isnull=True,
        )
        .select_related("created_by")
        .prefetch_related("seats__user")
        .order_by("-created_at", "id")
    )


def active_matches_count(*, user: User) -> int:
    """Matches waiting or being played that ``user`` sits in or created."""
    return (
        Match.objects.filter(status__in=[MatchStatus.WAITING, MatchStatus.ACTIVE])
        .filter(pk__in=Seat.objects.filter(user=user, joined_at__isnull=False).values("match_id"))
        .count()
    )


def deadlines_due() -> QuerySet[Match]:
    """Active matches whose deadline has passed by the database's clock, oldest first
    (the partial index ``match_deadline``)."""
    return Match.objects.filter(deadline__lte=Now()).order_by("deadline")


def waiting_expired() -> QuerySet[Match]:
    """Waiting matches past their expiry by the database's clock, oldest first (the
    partial index ``match_waiting_expiry``)."""
    return Match.objects.filter(status=MatchStatus.WAITING, expires_at__lte=Now()).order_by(
        "expires_at"
    )


def bot_turns_waiting(*, older_than_seconds: float) -> QuerySet[Match]:
    """Matches waiting on a bot for longer than ``older_than_seconds`` (database clock),
    oldest first (the partial index ``match_bot_to_move``)."""
    from datetime import timedelta

    return Match.objects.filter(
        bot_to_move_since__lte=Now() - timedelta(seconds=older_than_seconds)
    ).order_by("bot_to_move_since")
