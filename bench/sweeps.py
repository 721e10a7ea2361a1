"""Sweeps at scale (issues 14 and 19.2): the bot sweep and the deadline sweep.

Builds active matches in bulk (bulk_create: a person and a bot per match, one active deal
each, the clock columns as moves leave them) and times, at each size:

- the bot sweep (``games.clocks.services.bot_turns_sweep``) over N active matches, of which
  half wait on their bot for a moment (replies in flight) and ``--lost`` replies were
  lost (waiting for longer than ``BOT_SWEEP_AFTER_SECONDS``): it must find exactly the
  lost ones in one run, and take no longer at 100,000 matches than twice its time at
  1,000 (the tasks it queues are recorded, not sent);
- the deadline sweep (``deadlines_sweep``) over N *timed* matches with a person to move,
  ``--expired`` of them past their deadline (each one is then aborted: nobody played a
  card): the one query that finds them, and the whole sweep.

Each figure is the median of ``--repeat`` runs with its range. Also prints PostgreSQL's
EXPLAIN (ANALYZE) of each sweep's query at the largest size. Asserts nothing but that the
sweeps found what was planted.

Runs against DATABASE_URL, on a scratch database of its own, which it migrates; it
refuses a database holding anything but its own data. For example:

    createdb -h 127.0.0.1 -U postgres briscola_sweeps
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/briscola_sweeps \\
        .venv/bin/python bench/sweeps.py
    dropdb -h 127.0.0.1 -U postgres briscola_sweeps   # when done
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")
os.environ.pop("REDIS_URL", None)  # no broker: the queued tasks are recorded below

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models.functions import Now  # noqa: E402

from accounts.models import User  # noqa: E402
from accounts.services import bot_account_ensure  # noqa: E402
from briscola_service import queueing  # noqa: E402
from games import rules  # noqa: E402
from games.clocks import selectors as clock_selectors  # noqa: E402
from games.clocks import services as clocks  # noqa: E402
from games.models import Deal, Match, MatchStatus, Seat  # noqa: E402

PREFIX = "sweep-"
# A reply counts as lost after this long (BOT_SWEEP_AFTER_SECONDS is 10 s; building and
# planting 100,000 rows on a busy machine takes longer than that, and the query is the
# same whatever the constant).
LOST_AFTER = 3600.0
SENT: list[tuple[str, tuple[Any, ...]]] = []


def record(name: str, *args: Any, what: str) -> bool:
    SENT.append((name, args))
    return True


queueing.task_send = record  # type: ignore[assignment]


def refuse_foreign_data() -> None:
    foreign = User.objects.exclude(username__startswith=PREFIX).exclude(is_bot=True).count()
    if foreign or Match.objects.exclude(created_by__username__startswith=PREFIX).exists():
        sys.exit(
            f"refusing: {connection.settings_dict['NAME']!r} holds data that is not the "
            "bench's; use a scratch database (see --help)"
        )


def add_matches(count: int, *, timed: bool, person: User, bot: User, start: int) -> None:
    """``count`` active matches: even ones wait on the person (a deadline ahead), odd ones
    on the bot (a reply in flight, a second ago). Timed: every one waits on the person."""
    seed = "0" * 32
    commitment = rules.seed_commitment(seed)
    chunk = 5000
    for offset in range(0, count, chunk):
        n = min(chunk, count - offset)
        matches = []
        for i in range(start + offset, start + offset + n):
            bot_turn = not timed and i % 2 == 1
            matches.append(
                Match(
                    id=uuid.uuid4(),
                    players=2,
                    format="single",
                    status=MatchStatus.ACTIVE,
                    created_by=person,
                    per_move_seconds=60 if timed else None,
                    to_move_ply=1 if bot_turn else 0,
                    to_move_seat=1 if bot_turn else 0,
                )
            )
        Match.objects.bulk_create(matches)
        Seat.objects.bulk_create(
            [Seat(match=m, number=0, user=person, joined_at=m.created_at) for m in matches]
            + [Seat(match=m, number=1, user=bot, joined_at=m.created_at) for m in matches]
        )
        deals = [
            Deal(match=m, number=1, dealer=1, seed=seed, commitment=commitment) for m in matches
        ]
        Deal.objects.bulk_create(deals)
        ids = [m.pk for m in matches]
        for m, d in zip(matches, deals, strict=True):
            m.to_move_deal = d.pk
        Match.objects.bulk_update(matches, ["to_move_deal"])
        waiting_on_bot = [m.pk for m in matches if m.to_move_seat == 1]
        Match.objects.filter(pk__in=waiting_on_bot).update(
            bot_to_move_since=Now() - timedelta(seconds=1)
        )
        Match.objects.filter(pk__in=ids).exclude(pk__in=waiting_on_bot).update(
            deadline=Now() + timedelta(minutes=10)
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def vacuum() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM (ANALYZE) {Match._meta.db_table}")


def timed_runs(prepare: Callable[[], Any], run: Callable[[], Any], repeat: int) -> list[float]:
    """``repeat`` timed runs, after one untimed (warm-up) run."""
    times = []
    for n in range(repeat + 1):
        prepare()
        started = time.perf_counter()
        run()
        if n:
            times.append((time.perf_counter() - started) * 1000)
    return times


def figure(times: list[float]) -> str:
    return f"median {statistics.median(times):7.2f} ms (range {min(times):.2f} to {max(times):.2f})"


def explain(queryset: Any) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql, params)
        return "\n".join("    " + row[0] for row in cursor.fetchall())


def bench_bot_sweep(total: int, lost: int, repeat: int) -> list[float]:
    """Plant ``lost`` lost replies among the matches waiting on a bot; time the sweep."""
    waiting = Match.objects.filter(bot_to_move_since__isnull=False)

    def prepare() -> None:
        # The others are "in flight": marked when built, or just now by the last sweep.
        planted = list(waiting.order_by("?").values_list("pk", flat=True)[:lost])
        Match.objects.filter(pk__in=planted).update(
            bot_to_move_since=Now() - timedelta(seconds=2 * LOST_AFTER)
        )
        SENT.clear()

    def run() -> None:
        found = clocks.bot_turns_sweep(older_than=LOST_AFTER)
        assert found == lost == len(SENT), (found, lost, len(SENT))

    return timed_runs(prepare, run, repeat)


def bench_deadline_sweep(expired: int, repeat: int) -> tuple[list[float], list[float]]:
    """Plant ``expired`` passed deadlines; time the query that finds them, then the sweep
    that applies them (the planted matches are put back as they were after each run)."""
    timed = Match.objects.filter(per_move_seconds__isnull=False)
    planted: list[Any] = []

    def restore() -> None:
        Match.objects.filter(pk__in=planted).update(
            status=MatchStatus.ACTIVE,
            end_reason="",
            finished_at=None,
            deadline=Now() + timedelta(minutes=10),
            to_move_seat=0,
            to_move_ply=0,
        )
        Deal.objects.filter(match_id__in=planted).update(status="active", finished_at=None)
        clocks.MatchEvent.objects.filter(match_id__in=planted).delete()

    def prepare() -> None:
        restore()
        planted[:] = list(
            timed.filter(status=MatchStatus.ACTIVE)
            .order_by("?")
            .values_list("pk", flat=True)[:expired]
        )
        Match.objects.filter(pk__in=planted).update(deadline=Now() - timedelta(seconds=1))
        vacuum()  # the runs before left dead index entries, as autovacuum would clear

    def query() -> None:
        found = list(clock_selectors.deadlines_due().values_list("pk", flat=True)[:500])
        assert len(found) == expired, (len(found), expired)

    query_times = timed_runs(prepare, query, repeat)

    def sweep() -> None:
        done = clocks.deadlines_sweep()
        assert done == expired, (done, expired)

    sweep_times = timed_runs(prepare, sweep, repeat)
    restore()
    return query_times, sweep_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="active matches (bots)")
    parser.add_argument("--timed", default="1000,10000", help="timed matches (deadlines)")
    parser.add_argument("--lost", type=int, default=3, help="lost bot replies planted")
    parser.add_argument("--expired", type=int, default=3, help="passed deadlines planted")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("needs PostgreSQL (DATABASE_URL=postgres://...)")
    call_command("migrate", verbosity=0)
    refuse_foreign_data()
    Match.objects.all().delete()
    person = User.objects.get_or_create(username=f"{PREFIX}person")[0]
    bot = bot_account_ensure(level="greedy")

    print(f"bot sweep: {args.lost} lost replies among N active matches (half wait on a bot)")
    print("  (the lost ones planted before each run; the plan is that of an empty find)")
    made = 0
    last_bot = None
    for size in (int(s) for s in args.sizes.split(",")):
        add_matches(size - made, timed=False, person=person, bot=bot, start=made)
        made = size
        times = bench_bot_sweep(size, args.lost, args.repeat)
        print(f"  N = {size:>7,}: {figure(times)}")
        last_bot = clock_selectors.bot_turns_waiting(older_than_seconds=LOST_AFTER)
    if last_bot is not None:
        print("  plan of the bot sweep's query (largest N):")
        query = last_bot.values_list("pk", "to_move_deal", "to_move_ply", "to_move_seat")[:500]
        print(explain(query))

    Match.objects.all().delete()
    print(f"deadline sweep: {args.expired} passed deadlines among N timed active matches")
    made = 0
    for size in (int(s) for s in args.timed.split(",")):
        add_matches(size - made, timed=True, person=person, bot=bot, start=made)
        made = size
        query_times, sweep_times = bench_deadline_sweep(args.expired, args.repeat)
        print(f"  N = {size:>7,}: query {figure(query_times)}; sweep {figure(sweep_times)}")
    Match.objects.filter(pk__in=list(Match.objects.values_list("pk", flat=True)[:3])).update(
        deadline=Now() - timedelta(seconds=1)
    )
    print("  plan of the deadline sweep's query (largest N):")
    print(explain(clock_selectors.deadlines_due().values_list("pk", flat=True)[:500]))
    Match.objects.all().delete()


if __name__ == "__main__":
    main()
