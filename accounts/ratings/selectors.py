"""Rating reads: a player's ratings and statistics, rating history, leaderboards."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.db.models import Q, QuerySet

from accounts.models import PlayerStats, Rating, RatingChange, User
from accounts.ratings.math import (
    CATEGORIES,
    DISPLAY_SCALE,
    INITIAL_MU,
    INITIAL_SIGMA,
    PROVISIONAL_SIGMA,
    display_rating,
    is_provisional,
)
from accounts.selectors import user_by_name
from briscola_service.exceptions import ServiceError

JSON = dict[str, Any]


class PlayerNotFoundError(ServiceError):
    code = "player_not_found"
    status = 404
    message = "No such player."


class InvalidCategoryError(ServiceError):
    code = "invalid_category"
    status = 400
    message = f"Unknown rating category; one of {', '.join(CATEGORIES)}."


def category_check(category: str) -> str:
    if category not in CATEGORIES:
        raise InvalidCategoryError(details={"category": category})
    return category


def player_get(*, username: str) -> User:
    """An active account (person or bot) by user name, in any letter case (see
    accounts.selectors.user_by_name: a name with a NUL byte is a 400)."""
    user = user_by_name(username)
    if user is None:
        raise PlayerNotFoundError(details={"username": username})
    return user


def rating_json(mu: float, sigma: float, games: int) -> JSON:
    return {
        "rating": display_rating(mu),
        "deviation": round(DISPLAY_SCALE * sigma),
        "provisional": is_provisional(sigma),
        "games": games,
        "mu": mu,
        "sigma": sigma,
    }


def player_ratings(user: User) -> JSON:
    """Every category, a newcomer's rating where the player has no rated game yet."""
    rows = {r.category: r for r in Rating.objects.filter(user=user)}
    out: JSON = {}
    for category in CATEGORIES:
        row = rows.get(category)
        out[category] = (
            rating_json(row.mu, row.sigma, row.games)
            if row
            else rating_json(INITIAL_MU, INITIAL_SIGMA, 0)
        )
    return out


def player_stats(user: User) -> JSON:
    rows = {s.category: s for s in PlayerStats.objects.filter(user=user)}
    out: JSON = {}
    for category in CATEGORIES:
        row = rows.get(category) or PlayerStats(user=user, category=category)
        out[category] = {
            "games": row.games,
            "wins": row.wins,
            "draws": row.draws,
            "losses": row.losses,
            "deals_played": row.deals_played,
            "deals_won": row.deals_won,
            "points_per_deal": row.points_per_deal,
        }
    return out


def rating_history(*, user: User, category: str | None = None) -> QuerySet[RatingChange]:
    """The player's rating changes, newest first (in finish order)."""
    queryset = RatingChange.objects.filter(user=user)
    if category is not None:
        queryset = queryset.filter(category=category_check(category))
    return queryset.order_by("-match_finished_at", "-match_id")


def rating_change_json(change: RatingChange) -> JSON:
    return {
        "match": str(change.match_id),
        "category": change.category,
        "finished_at": change.match_finished_at,
        "result": change.result,
        "rating_before": change.rating_before,
        "rating_after": change.rating_after,
        "diff": change.rating_diff,
        "provisional": is_provisional(change.sigma_after),
    }


def leaderboard(*, category: str, bots: str = "include") -> QuerySet[Rating]:
    """Settled (non-provisional) players of ``category``, best first. ``bots``:
    ``include`` (default), ``exclude`` (people only) or ``only`` (bots, the service's own
    and third parties')."""
    queryset = (
        Rating.objects.filter(category=category_check(category), sigma__lt=PROVISIONAL_SIGMA)
        .select_related("user")
        .filter(user__is_active=True)
    )
    is_bot = Q(user__is_bot=True) | Q(user__third_party_bot=True)
    if bots == "exclude":
        queryset = queryset.exclude(is_bot)
    elif bots == "only":
        queryset = queryset.filter(is_bot)
    return queryset.order_by("-mu", "user_id")


def rating_changes_by_match(
    match_ids: Iterable[uuid.UUID], *, user_ids: Iterable[int] | None = None
) -> dict[uuid.UUID, dict[int, RatingChange]]:
    """{match id: {user id: change}} for the matches given (and only those users)."""
    queryset = RatingChange.objects.filter(match_id__in=list(match_ids))
    if user_ids is not None:
        queryset = queryset.filter(user_id__in=list(user_ids))
    out: dict[uuid.UUID, dict[int, RatingChange]] = {}
    for change in queryset:
        out.setdefault(change.match_id, {})[change.user_id] = change
    return out
