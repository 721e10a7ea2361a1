"""A deadline enforced end to end (issue 14's target: within 2 s of passing when a worker
is free): a real Celery worker and Celery beat, PostgreSQL and Redis. Each live deadline
has its task due at it (``games.tasks.clock_deadline``), and the clocks sweep runs every
``CLOCK_SWEEP_SECONDS`` (1 s by default); whichever comes first applies it.

Each round creates ``--matches`` timed matches (a person against the greedy bot, 5 s per
move, forfeit), plays the person's first card (the worker plays the bot's reply), then
lets the person's real 5 s deadline pass. The lag of each match is the time from its
deadline to the moment its forfeit was written (``finished_at``), and, checked from
outside, to the first poll (every 10 ms, the database's ``clock_timestamp()``) that saw the
match finished. Prints the figures; asserts nothing but that every deadline was enforced.

Needs REDIS_URL and a scratch PostgreSQL database in DATABASE_URL (it migrates it and
starts its own worker and beat against them), for example:

    createdb -h 127.0.0.1 -U postgres briscola_e2e
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/briscola_e2e \\
    REDIS_URL=redis://127.0.0.1:6379/6 .venv/bin/python bench/deadlines_e2e.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from accounts.models import User  # noqa: E402
from games.clocks.services import TimeControl  # noqa: E402
from games.matches import services  # noqa: E402
from games.matches.selectors import deal_state  # noqa: E402
from games.matches.services import SeatSpec  # noqa: E402
from games.models import Deal, Match, MatchStatus  # noqa: E402

PREFIX = "e2e-"


def wait(what: str, check: Any, timeout: float = 30.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.01)
    sys.exit(f"timed out waiting for {what}")


def person_to_move(match: Match) -> bool:
    match.refresh_from_db()
    return match.to_move_seat == 0 and match.deadline is not None


def db_clock() -> Any:
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--matches", type=int, default=5, help="matches per round")
    args = parser.parse_args()
    if connection.vendor != "postgresql" or not os.environ.get("REDIS_URL"):
        sys.exit("needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL)")
    call_command("migrate", verbosity=0)
    call_command("ensure_bots", verbosity=0)
    if Match.objects.exclude(created_by__username__startswith=PREFIX).exists():
        sys.exit("refusing: the database holds matches that are not the bench's")
    env = {**os.environ, "MATCH_ACTIVE_LIMIT": "0"}
    logs = tempfile.mkdtemp(prefix="e2e-")
    celery = [sys.executable, "-m", "celery", "-A", "briscola_service"]
    worker = subprocess.Popen(
        [*celery, "worker", "--pool", "solo", "-l", "warning", "-n", "e2e@%h"],
        cwd=ROOT,
        env=env,
        stdout=open(f"{logs}/worker.log", "w"),  # noqa: SIM115
        stderr=subprocess.STDOUT,
    )
    beat = subprocess.Popen(
        [*celery, "beat", "-l", "warning", "-s", f"{logs}/beat-schedule"],
        cwd=ROOT,
        env=env,
        stdout=open(f"{logs}/beat.log", "w"),  # noqa: SIM115
        stderr=subprocess.STDOUT,
    )
    lags_written: list[float] = []
    lags_seen: list[float] = []
    try:
        person = User.objects.get_or_create(username=f"{PREFIX}person")[0]
        time.sleep(3)  # the worker and beat start
        for _ in range(args.rounds):
            matches = []
            for _ in range(args.matches):
                match = services.match_create(
                    creator=person,
                    players=2,
                    format="single",
                    seats=[SeatSpec("bot", "greedy")],
                    time_control=TimeControl(5, "forfeit", "greedy"),
                )
                wait("the person's turn", lambda m=match: person_to_move(m))
                deal = Deal.objects.get(match=match)
                state = deal_state(deal)
                card = state.legal_moves()[0].code
                services.move_play(match_id=match.pk, user=person, card=card, ply=state.ply)
                wait("the bot's reply", lambda m=match: person_to_move(m) and m.to_move_ply)
                matches.append(match)
            deadlines = {m.pk: Match.objects.get(pk=m.pk).deadline for m in matches}
            seen: dict[Any, Any] = {}
            end = time.monotonic() + 30
            while len(seen) < len(matches) and time.monotonic() < end:
                now = db_clock()
                for pk, status in Match.objects.filter(pk__in=deadlines).values_list(
                    "pk", "status"
                ):
                    if status != MatchStatus.ACTIVE and pk not in seen:
                        seen[pk] = now
                time.sleep(0.01)
            if len(seen) < len(matches):
                sys.exit(f"{len(matches) - len(seen)} deadlines were not enforced in 30 s")
            for m in Match.objects.filter(pk__in=deadlines):
                assert m.end_reason == "timeout", m.end_reason
                lags_written.append((m.finished_at - deadlines[m.pk]).total_seconds())
                lags_seen.append((seen[m.pk] - deadlines[m.pk]).total_seconds())
    finally:
        for process in (beat, worker):
            process.terminate()
        for process in (beat, worker):
            process.wait(timeout=20)
    print(
        f"{len(lags_written)} deadlines (5 s per move), a worker and beat "
        "(a task due at each deadline, the sweep every 1 s):"
    )
    for name, lags in (("written", lags_written), ("seen", lags_seen)):
        print(
            f"  deadline -> forfeit {name}: median {statistics.median(lags):.3f} s, "
            f"max {max(lags):.3f} s, min {min(lags):.3f} s"
        )


if __name__ == "__main__":
    main()
