"""Rating writes: apply one rated game, aggregate statistics, rebuild everything.

The games app turns its matches into :class:`accounts.ratings.math.RatedGame` values and calls
these; accounts never imports games. Exactly once per player per match rests on three
things, in this order: the players' Rating rows are locked (``SELECT ... FOR UPDATE``, in
user id order, so two tasks never deadlock); a match that already has rating changes is
left alone; and UNIQUE (user, match_id) on RatingChange stops anything that slips past.
Everything a game changes is written in one transaction, so a worker that dies half-way
leaves nothing behind and the next run applies the whole match.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import PlayerStats, Rating, RatingChange
from accounts.ratings.math import (
    INITIAL_MU,
    INITIAL_SIGMA,
    RatedGame,
    Skill,
    StatsTally,
    display_rating,
    rate_game,
    result_for_team,
)

logger = logging.getLogger(__name__)

STATS_FIELDS = ("games", "wins", "draws", "losses", "deals_played", "deals_won", "points")


def _lock_ratings(user_ids: list[int], category: str) -> dict[int, Rating]:
    """Lock the players' Rating rows in user id order, creating the missing ones first.

    ``INSERT ... ON CONFLICT DO NOTHING`` in user id order too: two tasks inserting the
    same new players wait for each other instead of failing or deadlocking.
    """

    def lock() -> dict[int, Rating]:
        rows = (
            Rating.objects.select_for_update()
            .filter(user_id__in=user_ids, category=category)
            .order_by("user_id")
        )
        return {r.user_id: r for r in rows}

    ratings = lock()
    if len(ratings) == len(user_ids):
        return ratings
    Rating.objects.bulk_create(
        [
            Rating(user_id=u, category=category, mu=INITIAL_MU, sigma=INITIAL_SIGMA)
            for u in user_ids
            if u not in ratings
        ],
        ignore_conflicts=True,
    )
    return lock()


def _already_applied(match_id: uuid.UUID) -> bool:
    return RatingChange.objects.filter(match_id=match_id).exists()


def rated_game_apply(*, game: RatedGame) -> int:
    """Record each player's rating change for ``game``, once. Returns how many were written.

    Locks the players' Rating rows of the game's category for the transaction. Returns 0
    when the game was applied already (by an earlier run or a concurrent one).
    """
    user_ids = sorted(game.user_ids)
    try:
        with transaction.atomic():
            ratings = _lock_ratings(user_ids, game.category)
            if _already_applied(game.match_id):
                return 0
            before = {u: Skill(ratings[u].mu, ratings[u].sigma) for u in user_ids}
            after = rate_game(
                [[before[u] for u in team] for team in game.teams], game.winner, game.weight
            )
            changes = []
            for team_number, (team, skills) in enumerate(zip(game.teams, after, strict=True)):
                result = result_for_team(team_number, game.winner)
                for user_id, skill in zip(team, skills, strict=True):
                    rating = ratings[user_id]
                    changes.append(
                        _rating_change(user_id, game, result, Skill(rating.mu, rating.sigma), skill)
                    )
                    _advance(rating, skill, game)
            # Two statements for all the players; a crash between (or inside) them rolls
            # both back.
            RatingChange.objects.bulk_create(changes)
            Rating.objects.bulk_update(
                list(ratings.values()),
                ["mu", "sigma", "games", "last_match_id", "last_match_finished_at", "updated_at"],
            )
    except IntegrityError:
        # UNIQUE (user, match_id): another run recorded this match first; ours rolled back.
        logger.info("rating changes of match %s were already recorded", game.match_id)
        return 0
    return len(user_ids)


def _rating_change(
    user_id: int,
    game: RatedGame,
    result: str,
    old: Skill,
    new: Skill,
    *,
    counted_in_stats: bool = False,
) -> RatingChange:
    """One player's change for ``game`` (the same row from the task and the recompute)."""
    return RatingChange(
        user_id=user_id,
        category=game.category,
        match_id=game.match_id,
        match_finished_at=game.finished_at,
        result=result,
        mu_before=old.mu,
        sigma_before=old.sigma,
        mu_after=new.mu,
        sigma_after=new.sigma,
        rating_before=display_rating(old.mu),
        rating_after=display_rating(new.mu),
        counted_in_stats=counted_in_stats,
    )


def _advance(rating: Rating, skill: Skill, game: RatedGame) -> None:
    last = rating.last_match_finished_at
    if last is not None and (last, str(rating.last_match_id)) > game.order_key:
        logger.warning(
            "match %s is rated after a later-finished match of user %s (it committed late)",
            game.match_id,
            rating.user_id,
        )
    else:
        rating.last_match_id = game.match_id
        rating.last_match_finished_at = game.finished_at
    rating.mu, rating.sigma = skill.mu, skill.sigma
    rating.games += 1
    rating.updated_at = timezone.now()


# --- Statistics -------------------------------------------------------------------------


def player_stats_aggregate(
    *, load_games: Callable[[set[uuid.UUID]], dict[uuid.UUID, RatedGame]], limit: int = 5000
) -> int:
    """Add the rating changes not yet counted to PlayerStats; returns how many were added.

    Each change is counted exactly once: the changes are taken with ``FOR UPDATE SKIP
    LOCKED`` (two aggregations at once share the work instead of doing it twice) and
    marked counted in the same transaction that adds them. ``load_games`` gives the
    matches' facts (deals, points) by match id.
    """
    with transaction.atomic():
        changes = list(
            RatingChange.objects.select_for_update(skip_locked=True)
            .filter(counted_in_stats=False)
            .order_by("id")
            .values_list("id", "user_id", "category", "match_id")[:limit]
        )
        if not changes:
            return 0
        games = load_games({match_id for _, _, _, match_id in changes})
        tallies: dict[tuple[int, str], StatsTally] = {}
        for _, user_id, category, match_id in changes:
            tallies.setdefault((user_id, category), StatsTally()).add(games[match_id], user_id)
        PlayerStats.objects.bulk_create(
            [PlayerStats(user_id=u, category=c) for u, c in sorted(tallies)],
            ignore_conflicts=True,
        )
        stats = PlayerStats.objects.select_for_update().filter(user_id__in={u for u, _ in tallies})
        rows = []
        for row in stats.order_by("user_id", "category"):
            tally = tallies.get((row.user_id, row.category))
            if tally is None:
                continue
            for field in STATS_FIELDS:
                setattr(row, field, getattr(row, field) + getattr(tally, field))
            row.updated_at = timezone.now()
            rows.append(row)
        PlayerStats.objects.bulk_update(rows, [*STATS_FIELDS, "updated_at"], batch_size=1000)
        RatingChange.objects.filter(id__in=[c[0] for c in changes]).update(counted_in_stats=True)
    return len(changes)


# --- Rebuild ----------------------------------------------------------------------------


def ratings_tables_lock() -> None:
    """Block rating writes (not reads) until this transaction ends; PostgreSQL only.

    SQLite has one writer at a time anyway.
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "LOCK TABLE accounts_rating, accounts_ratingchange, accounts_playerstats "
            "IN SHARE ROW EXCLUSIVE MODE"
        )


@dataclass(frozen=True)
class RebuildSummary:
    games: int
    ratings: int
    changes: int


def ratings_rebuild(
    *,
    games: Iterable[RatedGame],
    progress: Callable[[int], None] | None = None,
    batch_size: int = 5000,
) -> RebuildSummary:
    """Replace every rating, rating change and statistic by a replay of ``games``.

    ``games`` must come in finish order. One pass in memory with the same math as
    :func:`rated_game_apply`, then bulk writes. Run it inside a transaction that took
    :func:`ratings_tables_lock` before reading the games.
    """
    skills: dict[tuple[int, str], Skill] = {}
    counts: dict[tuple[int, str], int] = {}
    last: dict[tuple[int, str], RatedGame] = {}
    tallies: dict[tuple[int, str], StatsTally] = {}
    changes: list[RatingChange] = []
    fresh = Skill()
    done = 0
    previous: tuple[Any, str] | None = None
    for game in games:
        if previous is not None and game.order_key < previous:
            raise ValueError("ratings_rebuild needs the games in finish order")
        previous = game.order_key
        category = game.category
        before = [[skills.get((u, category), fresh) for u in team] for team in game.teams]
        after = rate_game(before, game.winner, game.weight)
        for team_number, team in enumerate(game.teams):
            result = result_for_team(team_number, game.winner)
            for user_id, old, new in zip(
                team, before[team_number], after[team_number], strict=True
            ):
                key = (user_id, category)
                changes.append(
                    _rating_change(user_id, game, result, old, new, counted_in_stats=True)
                )
                skills[key] = new
                counts[key] = counts.get(key, 0) + 1
                last[key] = game
                tallies.setdefault(key, StatsTally()).add(game, user_id)
        done += 1
        if progress is not None:
            progress(done)
    RatingChange.objects.all().delete()
    Rating.objects.all().delete()
    PlayerStats.objects.all().delete()
    RatingChange.objects.bulk_create(changes, batch_size=batch_size)
    Rating.objects.bulk_create(
        [
            Rating(
                user_id=u,
                category=c,
                mu=skill.mu,
                sigma=skill.sigma,
                games=counts[(u, c)],
                last_match_id=last[(u, c)].match_id,
                last_match_finished_at=last[(u, c)].finished_at,
            )
            for (u, c), skill in sorted(skills.items())
        ],
        batch_size=batch_size,
    )
    PlayerStats.objects.bulk_create(
        [
            PlayerStats(user_id=u, category=c, **{f: getattr(t, f) for f in STATS_FIELDS})
            for (u, c), t in sorted(tallies.items())
        ],
        batch_size=batch_size,
    )
    return RebuildSummary(games=done, ratings=len(skills), changes=len(changes))
