"""Ratings benchmark: recompute over a synthetic history, and one match's rating task.

Builds a history of rated, finished matches (1v1 and 2v2 mixed, a few thousand players,
1 to 3 finished deals each; no moves, which the ratings never read) directly in the
database with bulk_create, then times ``manage.py ratings_recompute`` (target: under
60 s for 100,000 matches on PostgreSQL) and the rating task of single new matches
(target: under 20 ms each). Prints figures; asserts nothing.

It runs against DATABASE_URL, on a scratch database of its own: it migrates it, and
refuses to touch a database that holds anything but its own data (accounts named
``bench-*``). For example:

    createdb -h 127.0.0.1 -U postgres briscola_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/briscola_bench \\
        .venv/bin/python bench/ratings_bench.py
    dropdb -h 127.0.0.1 -U postgres briscola_bench   # when done

A second run on the same database reuses the history if it has the size asked for.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from accounts.models import User  # noqa: E402
from games import rated_games  # noqa: E402
from games.models import Deal, DealStatus, EndReason, Match, MatchStatus, Seat  # noqa: E402
from games.tasks import rate_match  # noqa: E402

PREFIX = "bench-"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def refuse_foreign_data() -> int:
    """The number of bench matches present; exits if anything else is in the database."""
    foreign_users = User.objects.exclude(username__startswith=PREFIX).count()
    foreign_matches = Match.objects.exclude(created_by__username__startswith=PREFIX).count()
    if foreign_users or foreign_matches:
        sys.exit(
            f"refusing: {connection.settings_dict['NAME']!r} holds {foreign_users} accounts and "
            f"{foreign_matches} matches that are not the bench's; use a scratch database "
            "(see --help)"
        )
    return Match.objects.count()


def build_history(matches: int, players: int, share_2v2: float, seed: int) -> None:
    rng = random.Random(seed)
    started = time.perf_counter()
    User.objects.bulk_create(
        [User(username=f"{PREFIX}{i:05d}", password="!", is_bot=False) for i in range(players)],
        batch_size=5000,
    )
    ids = list(
        User.objects.filter(username__startswith=PREFIX).order_by("id").values_list("id", flat=True)
    )
    strength = {u: rng.gauss(0, 1) for u in ids}
    made = 0
    chunk = 10000
    while made < matches:
        count = min(chunk, matches - made)
        match_rows, seat_rows, deal_rows = [], [], []
        for i in range(made, made + count):
            four = rng.random() < share_2v2
            users = rng.sample(ids, 4 if four else 2)
            team_strength = [
                sum(strength[u] for u in users[t::2]) / len(users[t::2]) for t in (0, 1)
            ]
            single = rng.random() < 0.5
            results: list[int | None] = []
            wins = [0, 0]
            while (single and not results) or (not single and max(wins) < 2):
                p0 = max(
                    0,
                    min(
                        120,
                        round(60 + 15 * (team_strength[0] - team_strength[1]) + rng.gauss(0, 20)),
                    ),
                )
                winner = None if p0 == 60 else int(p0 < 60)
                results.append(winner)
                if winner is not None:
                    wins[winner] += 1
                deal_rows.append((i, len(results), p0, 120 - p0, winner))
            match_winner = None if wins[0] == wins[1] else int(wins[1] > wins[0])
            finished = T0 + timedelta(seconds=30 * i)
            match = Match(
                id=uuid.UUID(int=rng.getrandbits(128)),
                players=4 if four else 2,
                format="single" if single else "first_to_2",
                status=MatchStatus.FINISHED,
                rated=True,
                public=rng.random() < 0.2,
                deals_won_team0=wins[0],
                deals_won_team1=wins[1],
                winner_team=match_winner,
                end_reason=EndReason.PLAYED,
                created_by_id=users[0],
                started_at=finished - timedelta(minutes=5),
                finished_at=finished,
            )
            match_rows.append(match)
            seat_rows.extend(
                Seat(match=match, number=n, user_id=u, joined_at=match.started_at)
                for n, u in enumerate(users)
            )
        Match.objects.bulk_create(match_rows, batch_size=5000)
        Seat.objects.bulk_create(seat_rows, batch_size=5000)
        Deal.objects.bulk_create(
            [
                Deal(
                    match=match_rows[i - made],
                    number=n,
                    dealer=0,
                    seed=f"bench-{i}-{n}",
                    commitment="0" * 64,
                    status=DealStatus.FINISHED,
                    points_team0=p0,
                    points_team1=p1,
                    winner_team=w,
                    finished_at=match_rows[i - made].finished_at,
                )
                for i, n, p0, p1, w in deal_rows
            ],
            batch_size=5000,
        )
        made += count
        print(f"\rbuilt {made}/{matches} matches", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if connection.vendor == "postgresql":  # fresh planner statistics, as autovacuum would
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"history built in {time.perf_counter() - started:.1f}s")


def time_single_tasks(samples: int, seed: int) -> None:
    rng = random.Random(seed + 1)
    ids = list(User.objects.filter(username__startswith=PREFIX).values_list("id", flat=True)[:5000])
    last = Match.objects.order_by("-finished_at").values_list("finished_at", flat=True).first()
    assert last is not None
    durations = []
    for k in range(samples):
        four = k % 3 == 0
        users = rng.sample(ids, 4 if four else 2)
        finished = last + timedelta(seconds=k + 1)
        match = Match.objects.create(
            players=len(users),
            format="single",
            status=MatchStatus.FINISHED,
            rated=True,
            winner_team=k % 2,
            end_reason=EndReason.PLAYED,
            created_by_id=users[0],
            started_at=finished,
            finished_at=finished,
        )
        Seat.objects.bulk_create(
            Seat(match=match, number=n, user_id=u, joined_at=finished) for n, u in enumerate(users)
        )
        Deal.objects.create(
            match=match,
            number=1,
            dealer=0,
            seed="s",
            commitment="0" * 64,
            status=DealStatus.FINISHED,
            points_team0=70,
            points_team1=50,
            winner_team=0,
            finished_at=finished,
        )
        started = time.perf_counter()
        written = rate_match(str(match.pk))
        durations.append(time.perf_counter() - started)
        assert written == len(users), written
    durations.sort()
    print(
        f"rating task, one match ({samples} samples, 1v1 and 2v2): "
        f"median {1000 * statistics.median(durations):.2f} ms, "
        f"p95 {1000 * durations[int(0.95 * (samples - 1))]:.2f} ms, "
        f"max {1000 * durations[-1]:.2f} ms (target < 20 ms)"
    )
    started = time.perf_counter()
    queued, counted = rated_games.ratings_sweep()
    print(
        f"periodic sweep after them: {counted} rating changes added to statistics, "
        f"{queued} matches re-queued, {1000 * (time.perf_counter() - started):.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=3000)
    parser.add_argument("--share-2v2", type=float, default=0.4)
    parser.add_argument("--samples", type=int, default=200, help="single-match tasks timed")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()

    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    call_command("migrate", verbosity=0)
    present = refuse_foreign_data()
    if present == 0:
        build_history(args.matches, args.players, args.share_2v2, args.seed)
    elif present < args.matches:
        sys.exit(f"refusing: the database holds {present} bench matches, fewer than {args.matches}")
    else:
        # A previous run's timed single matches are part of the history now; fine.
        print(f"reusing the {present} bench matches present")
    rated = Match.objects.filter(status=MatchStatus.FINISHED, rated=True).count()
    print(f"history: {rated} rated matches, {User.objects.count()} players")

    started = time.perf_counter()
    call_command("ratings_recompute")
    print(f"ratings_recompute: {time.perf_counter() - started:.1f} s (target < 60 s)")
    time_single_tasks(args.samples, args.seed)


if __name__ == "__main__":
    main()
