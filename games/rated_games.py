"""Ratings of finished rated matches: the games side of accounts.ratings.services.

A rated match that finishes (played out or resigned) queues ``games.tasks.rate_match`` on
commit. The task applies the match's rating changes exactly once (see
:func:`accounts.ratings.services.rated_game_apply`).

**Finish order.** Matches are applied in the order they finished: (``finished_at``, id).
Before applying a match, the task looks for an earlier-finished rated match of the same
category that shares a player and has no rating changes yet (its task was lost, or is
still queued); it applies that one first, and so on back (the earlier match's own
predecessors first). So a lost or slow task never lets a later match overtake it, and
``ratings_recompute`` (one pass in finish order) gives the same numbers. The one case
left: a match whose transaction commits *after* a later-finished match of the same
player was already rated (two matches of one player, say a bot, ending within the same
instant). It is applied when it appears, after the other, and a warning is logged;
a recompute would put it first.

**Repeated results.** Rated results between the same two people in a short time count
less, then not at all (two accounts of one person trading wins, say): when a rated match
finishes, :func:`match_rating_weight` counts, for each two people on opposite teams, the
rated matches they finished against each other within ``RATING_REPEAT_WINDOW_HOURS``
before it; with ``n`` of them (the most of any two) the match's ratings move with weight
``REPEAT_WEIGHTS[n]``: 1, then 1/2, then 1/4, then 0. The weight is stored on the match
(``Match.rating_weight``), so the task and ``ratings_recompute`` apply the same one. Bots
are left out of it: they do not collude, and playing a bot again and again is ordinary
practice.

The periodic :func:`ratings_sweep` re-queues finished rated matches that still have no
rating changes, and adds the newly rated matches to the players' statistics.
"""

from __future__ import annotations

import logging
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, Protocol

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from accounts.models import Rating, RatingChange
from accounts.ratings import services as rating_services
from accounts.ratings.math import DealResult, RatedGame, category_for_players
from briscola_service import queueing
from games import live
from games.models import Deal, DealStatus, Match, MatchStatus, Seat

logger = logging.getLogger(__name__)


def _rated_finished() -> Any:
    return Match.objects.filter(status=MatchStatus.FINISHED, rated=True)


def _game(
    match_id: uuid.UUID,
    players: int,
    winner: int | None,
    finished_at: Any,
    seats: list[tuple[int, int]],
    deals: list[DealResult],
    weight: float = 1.0,
) -> RatedGame:
    by_seat = dict(seats)
    return RatedGame(
        weight=weight,
        match_id=match_id,
        category=category_for_players(players),
        finished_at=finished_at,
        teams=(
            tuple(by_seat[n] for n in range(0, players, 2)),
            tuple(by_seat[n] for n in range(1, players, 2)),
        ),
        winner=winner,
        deals=tuple(deals),
    )


def rated_games_load(match_ids: set[uuid.UUID]) -> dict[uuid.UUID, RatedGame]:
    """The finished rated matches among ``match_ids``, as accounts.ratings.math sees them."""
    seats: dict[uuid.UUID, list[tuple[int, int]]] = {}
    for match_id, number, user_id in (
        Seat.objects.filter(match_id__in=match_ids)
        .order_by()
        .values_list("match_id", "number", "user_id")
    ):
        seats.setdefault(match_id, []).append((number, user_id))
    deals: dict[uuid.UUID, list[DealResult]] = {}
    for match_id, p0, p1, winner in (
        Deal.objects.filter(match_id__in=match_ids, status=DealStatus.FINISHED)
        .order_by("match_id", "number")
        .values_list("match_id", "points_team0", "points_team1", "winner_team")
    ):
        deals.setdefault(match_id, []).append(DealResult((p0, p1), winner))
    return {
        match_id: _game(
            match_id, players, winner, finished_at, seats[match_id], deals.get(match_id, []), w
        )
        for match_id, players, winner, finished_at, w in _rated_finished()
        .filter(id__in=match_ids)
        .values_list("id", "players", "winner_team", "finished_at", "rating_weight")
    }


def rated_games_in_finish_order(*, chunk: int = 20000) -> tuple[int, Iterator[RatedGame]]:
    """Every finished rated match, oldest first: (how many, iterator). Reads seats and
    deals in bulk (a few queries per ``chunk`` matches)."""
    rows = list(
        _rated_finished()
        .order_by("finished_at", "id")
        .values_list("id", "players", "winner_team", "finished_at", "rating_weight")
    )

    def iterate() -> Iterator[RatedGame]:
        for start in range(0, len(rows), chunk):
            part = rows[start : start + chunk]
            ids = [r[0] for r in part]
            seats: dict[uuid.UUID, list[tuple[int, int]]] = {}
            for match_id, number, user_id in (
                Seat.objects.filter(match_id__in=ids)
                .order_by()
                .values_list("match_id", "number", "user_id")
            ):
                seats.setdefault(match_id, []).append((number, user_id))
            deals: dict[uuid.UUID, list[DealResult]] = {}
            for match_id, p0, p1, winner in (
                Deal.objects.filter(match_id__in=ids, status=DealStatus.FINISHED)
                .order_by("match_id", "number")
                .values_list("match_id", "points_team0", "points_team1", "winner_team")
            ):
                deals.setdefault(match_id, []).append(DealResult((p0, p1), winner))
            for match_id, players, winner, finished_at, weight in part:
                yield _game(
                    match_id,
                    players,
                    winner,
                    finished_at,
                    seats[match_id],
                    deals.get(match_id, []),
                    weight,
                )

    return len(rows), iterate()


# --- Repeated results --------------------------------------------------------------------

REPEAT_WEIGHTS = (1.0, 0.5, 0.25)  # then 0: see the module's docstring


def match_rating_weight(match: Match, *, now: Any) -> float:
    """The weight of ``match``'s rated result, as it finishes at ``now`` (in its
    transaction, under its lock): see "Repeated results" above. 1.0 for an unrated match.

    Each pair of people is locked for the transaction (a PostgreSQL advisory lock), so
    two of their matches finishing at once count each other.
    """
    if not match.rated:
        return 1.0
    seats = list(
        Seat.objects.filter(match=match, user__is_bot=False, user__isnull=False).values_list(
            "number", "user_id"
        )
    )
    pairs = sorted(
        (min(a, b), max(a, b))
        for number_a, a in seats
        for number_b, b in seats
        if number_a % 2 == 0 and number_b % 2 == 1
    )
    if not pairs:
        return 1.0
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for a, b in pairs:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [a, b])
    since = now - timedelta(hours=settings.RATING_REPEAT_WINDOW_HOURS)
    people = {user for pair in pairs for user in pair}
    recent: dict[uuid.UUID, dict[int, int]] = {}
    for match_id, number, user_id in (
        Seat.objects.filter(
            user_id__in=people,
            match__rated=True,
            match__status=MatchStatus.FINISHED,
            match__finished_at__gte=since,
            match__players=match.players,
        )
        .exclude(match=match)
        .values_list("match_id", "number", "user_id")
    ):
        recent.setdefault(match_id, {})[user_id] = number % 2
    repeats = max(
        sum(1 for teams in recent.values() if a in teams and b in teams and teams[a] != teams[b])
        for a, b in pairs
    )
    return REPEAT_WEIGHTS[repeats] if repeats < len(REPEAT_WEIGHTS) else 0.0


# --- Queueing ---------------------------------------------------------------------------


def match_rating_queue_on_commit(match: Match) -> None:
    """When ``match`` is rated, queue its rating task once this transaction commits.

    Without a broker the task runs in-process at the commit; its errors are logged, so
    the move or resignation that finished the match still answers normally."""
    if match.rated:
        match_id = str(match.pk)
        transaction.on_commit(lambda: match_rating_enqueue(match_id=match_id))


def match_rating_enqueue(*, match_id: str) -> bool:
    """Send the rating task; a failure is logged, not raised (the sweep queues it again)."""
    return queueing.task_send(
        "games.tasks.rate_match", match_id, what=f"rating of match {match_id}"
    )


# --- Applying ---------------------------------------------------------------------------


def _pending_predecessor(game: RatedGame, players: int) -> uuid.UUID | None:
    """The earliest rated match of the same category, finished before ``game``, with one
    of its players, that has no rating changes yet.

    Read from the players' seats (a few hundred rows each), and only after the players'
    last rated match: what finished before it was applied already.
    """
    earlier = Q(match__finished_at__lt=game.finished_at) | Q(
        match__finished_at=game.finished_at, match_id__lt=game.match_id
    )
    seats = Seat.objects.filter(
        earlier,
        user_id__in=game.user_ids,
        match__status=MatchStatus.FINISHED,
        match__rated=True,
        match__players=players,
    )
    lasts = list(
        Rating.objects.filter(user_id__in=game.user_ids, category=game.category).values_list(
            "last_match_finished_at", flat=True
        )
    )
    if len(lasts) == len(game.user_ids) and all(lasts):
        seats = seats.filter(match__finished_at__gte=min(lasts))
    return (
        seats.filter(~Exists(RatingChange.objects.filter(match_id=OuterRef("match_id"))))
        .order_by("match__finished_at", "match_id")
        .values_list("match_id", flat=True)
        .first()
    )


def match_ratings_apply(*, match_id: Any) -> int:
    """Apply the rating changes of a finished rated match, after any pending earlier ones.

    Safe to run twice, at once, or after a crash (accounts.ratings.services). Returns how
    many rating changes were written (0: nothing to do). Locks the players' Rating rows,
    one match at a time.
    """
    try:
        first = uuid.UUID(str(match_id))
    except ValueError:
        return 0
    written = 0
    stack = [first]
    seen = {first}
    while stack:
        games = rated_games_load({stack[-1]})
        game = games.get(stack[-1])
        if game is None:  # not finished, not rated, or gone
            stack.pop()
            continue
        predecessor = _pending_predecessor(game, len(game.user_ids))
        if predecessor is not None and predecessor not in seen:
            seen.add(predecessor)
            stack.append(predecessor)
            continue
        applied = rating_services.rated_game_apply(game=game)
        if applied:
            live.match_changed_on_commit(game.match_id, users=[*game.teams[0], *game.teams[1]])
        written += applied
        stack.pop()
    return written


def unrated_matches_queue(
    *, older_than: timedelta = timedelta(seconds=30), limit: int = 500
) -> int:
    """Queue again the finished rated matches without rating changes (oldest first)."""
    cutoff = timezone.now() - older_than
    ids = list(
        _rated_finished()
        .filter(finished_at__lt=cutoff)
        .filter(~Exists(RatingChange.objects.filter(match_id=OuterRef("pk"))))
        .order_by("finished_at", "id")
        .values_list("id", flat=True)[:limit]
    )
    return sum(match_rating_enqueue(match_id=str(i)) for i in ids)


def player_stats_aggregate(*, limit: int = 5000) -> int:
    """Add newly rated matches to PlayerStats; returns how many rating changes it counted."""
    return rating_services.player_stats_aggregate(load_games=rated_games_load, limit=limit)


def ratings_sweep() -> tuple[int, int]:
    """Periodic: (matches re-queued, rating changes added to the statistics)."""
    queued = unrated_matches_queue()
    counted = 0
    while True:
        added = player_stats_aggregate()
        counted += added
        if added == 0:
            break
    return queued, counted


# --- Recompute --------------------------------------------------------------------------


class _Stream(Protocol):
    def write(self, text: str, /) -> Any: ...
    def flush(self) -> Any: ...


class ProgressBar:
    """A progress bar on a terminal stream (stderr), redrawn at most ten times a second."""

    def __init__(self, total: int, *, stream: _Stream = sys.stderr, label: str = "matches"):
        self.total, self.stream, self.label = total, stream, label
        self.started = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if done < self.total and now - self._last < 0.1:
            return
        self._last = now
        fraction = done / self.total if self.total else 1.0
        bar = "#" * int(30 * fraction)
        self.stream.write(
            f"\r[{bar:<30}] {fraction:6.1%} {done}/{self.total} {self.label} "
            f"{now - self.started:5.1f}s"
        )
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def ratings_recompute(
    *, progress: Callable[[int], Callable[[int], None] | None] | None = None
) -> rating_services.RebuildSummary:
    """Rebuild every rating, rating change and statistic from the match history.

    One transaction: rating writes wait (table lock on PostgreSQL) while the history is
    read and replayed in finish order; readers see the old numbers until it commits.
    ``progress(total)`` may return a callback that gets the count of matches done.
    """
    with transaction.atomic():
        rating_services.ratings_tables_lock()
        total, games = rated_games_in_finish_order()
        callback = progress(total) if progress is not None else None
        return rating_services.ratings_rebuild(games=games, progress=callback)
