"""Run the whole suite in two lanes at once (what ``make test`` does).

    .venv/bin/python tests/lanes.py [pytest options for both lanes]

The tests marked ``processes`` (tests/faults/, tests/live/test_live_processes.py) start
their own PostgreSQL cluster, redis-server, gunicorn and Celery, and the ``browser`` ones
drive Chromium: both spend most of their time waiting on other programs. They run in one
pytest process (the side lane) while every other test runs in another, so the suite takes
about the time of the longer lane instead of the sum (measured: 462 s, the lanes 458 s and
372 s, where one process took 719 s for all but the browser tests). The no-leak audits
spent a day in the side lane (marked ``side_lane``); its browser tests grew, and on
2026-12-07 the lanes took 397 s and 580 s with them there, so they came back.

The lanes share no state: the side lane gets its own database name (so pytest-django's test
database is not the other lane's; on SQLite each pytest process's test database is a file
of its own anyway, see tests/conftest.py) and its own Redis database number. The other lane's
output streams to the terminal; the side lane's is printed when it ends. The exit status is
0 only if both lanes pass. (Options are passed to both lanes; to choose tests by marker
with ``-m``, run pytest itself.)

Why not pytest-xdist: it identifies tests by node id, and schemathesis's tests (one per
operation of the API schema) share one node id, so under xdist all but one of them were
silently not run (2,008 of 2,040 tests).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTEST = [sys.executable, "-m", "pytest"]
SIDE_LANE = "processes or browser"
"""The markers of the tests run in the side lane."""
NO_TESTS_COLLECTED = pytest.ExitCode.NO_TESTS_COLLECTED
"""pytest's exit status when the options selected no test (5)."""


def lane_env(env: dict[str, str]) -> dict[str, str]:
    """The side lane's environment: another database name, another Redis number."""
    lane = dict(env)
    database = env.get("DATABASE_URL")
    if database:
        parts = urlsplit(database)
        if parts.scheme.startswith("postgres"):
            lane["DATABASE_URL"] = urlunsplit(parts._replace(path=parts.path + "_side"))
    redis = env.get("REDIS_URL")
    if redis:
        parts = urlsplit(redis)
        number = parts.path.strip("/") or "0"
        if number.isdigit():
            lane["REDIS_URL"] = urlunsplit(parts._replace(path=f"/{(int(number) + 1) % 16}"))
    return lane


def main(args: list[str]) -> int:
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as log:
        side = subprocess.Popen(
            [*PYTEST, "-m", SIDE_LANE, *args],
            cwd=ROOT,
            env=lane_env(dict(os.environ)),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            rest = subprocess.call([*PYTEST, "-m", f"not ({SIDE_LANE})", *args], cwd=ROOT)
        except BaseException:  # Ctrl-C: the side lane stops too, its services with it
            side.terminate()
            raise
        print(f"\n===== the side lane (tests marked {SIDE_LANE}) =====", flush=True)
        status = side.wait()
        log.seek(0)
        sys.stdout.write(log.read())
    elapsed = time.monotonic() - started
    passed = all(lane_passed(code, filtered=bool(args)) for code in (rest, status))
    print(
        f"\n===== both lanes {'passed' if passed else 'FAILED'} in {elapsed:.0f} s "
        f"(the rest: exit {rest}, the side lane: exit {status}) =====",
        flush=True,
    )
    return 0 if passed else 1


def lane_passed(code: int, *, filtered: bool) -> bool:
    """Exit 0, or 5 (no test collected) when the options chose the tests (``-k auth``
    may select none of one lane's): the whole suite always has tests in both."""
    return code == 0 or (filtered and code == NO_TESTS_COLLECTED)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
