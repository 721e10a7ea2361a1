"""Reads about one player that need the games: their matches, as a viewer may see them."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from accounts.models import RatingChange, User
from accounts.ratings.selectors import (
    rating_change_json,
    rating_changes_by_match,
    rating_history,
)
from games.matches.selectors import last_move_at_subquery, match_summary, matches_visible_to
from games.models import Match, Seat


def player_matches(*, player: User, viewer: User) -> QuerySet[Match]:
    """The matches ``player`` sits in that ``viewer`` may see, newest first."""
    seated = Seat.objects.filter(match=OuterRef("pk"), user=player, joined_at__isnull=False)
    return (
        matches_visible_to(viewer)
        .filter(Exists(seated))
        .select_related("created_by")
        .annotate(last_move_at=last_move_at_subquery())
        .prefetch_related("seats__user")
        .order_by("-created_at", "id")
    )


def player_rating_history(
    *, player: User, viewer: User, category: str | None = None
) -> QuerySet[RatingChange]:
    """``player``'s rating changes, newest first, of the matches ``viewer`` may see: the
    same matches as :func:`player_matches` lists (a private match's id, time and result
    are for its players and administrators)."""
    visible = matches_visible_to(viewer).values("pk")
    return rating_history(user=player, category=category).filter(match_id__in=visible)


def player_matches_json(*, player: User, matches: list[Match]) -> list[dict[str, Any]]:
    changes = rating_changes_by_match([m.pk for m in matches], user_ids=[player.pk])
    out = []
    for match in matches:
        data = match_summary(match, sorted(match.seats.all(), key=lambda s: s.number))
        change = changes.get(match.pk, {}).get(player.pk)
        data["rating_change"] = rating_change_json(change) if change else None
        out.append(data)
    return out


def user_has_played(user: User) -> bool:
    """Whether ``user`` has (or had) a seat in any match: settings.ACCOUNTS_HAS_PLAYED."""
    return Seat.objects.filter(user=user).exists()
