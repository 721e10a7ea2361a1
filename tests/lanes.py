"""Run the whole suite in three lanes at once (what ``make test`` does).

    .venv/bin/python tests/lanes.py [pytest options for every lane]

The tests marked ``processes`` (tests/faults/, tests/live/test_live_processes.py) start
their own PostgreSQL cluster, redis-server, gunicorn and Celery, and the ``browser`` ones
drive Chromium: both spend most of their time waiting on other programs. They run in
pytest processes of their own (the side lanes: the browser's, and the processes') while
every other test runs in another, so the suite takes about the time of the longest lane
instead of the sum (measured: 462 s, the lanes 458 s and 372 s, where one process took
719 s for all but the browser tests). The no-leak audits spent a day in the side lane
(marked ``side_lane``); its browser tests grew, and on 2026-12-07 the lanes took 397 s
and 580 s with them there, so they came back. By 2026-12-08 the one side lane took 835 s
against the other's 640 s: its tests of processes mostly wait (for deadlines, restarts,
visibility timeouts), so they run beside the browser's, in a third lane; on the slower
machine of 2026-12-08 that lane took 628 s, the browser's 1,091 s and the main lane 1,632 s,
so the main lane's longest tests, the no-leak audits (about 340 s, marked ``side_lane``),
went to the processes' lane.

The lanes share no state: each side lane gets its own database name (so pytest-django's test
database is not another lane's; on SQLite each pytest process's test database is a file
of its own anyway, see tests/conftest.py) and its own Redis database number. The main lane's
output streams to the terminal; the side lanes' are printed when they end. The exit status
is 0 only if every lane passes. (Options are passed to both lanes; to choose tests by marker
with ``-m``, run pytest itself.)

Why not pytest-xdist: it identifies tests by node id, and schemathesis's tests (one per
operation of the API schema) share one node id, so under xdist all but one of them were
silently not run (2,008 of 2,040 tests).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTEST = [sys.executable, "-m", "pytest"]
SIDE_LANE = "processes or browser or side_lane"
"""The markers of the tests run in the side lanes."""
SIDE_LANES = ("browser and not processes", "processes or (side_lane and not browser)")
"""Each side lane's markers: together, SIDE_LANE."""
NO_TESTS_COLLECTED = pytest.ExitCode.NO_TESTS_COLLECTED
"""pytest's exit status when the options selected no test (5)."""


def lane_env(env: dict[str, str], lane_number: int = 1) -> dict[str, str]:
    """Side lane ``lane_number``'s environment (1, 2...): another database name (``_side``,
    ``_side2``...), another Redis number (the main lane's plus ``lane_number``)."""
    lane = dict(env)
    database = env.get("DATABASE_URL")
    if database:
        parts = urlsplit(database)
        if parts.scheme.startswith("postgres"):
            suffix = "_side" if lane_number == 1 else f"_side{lane_number}"
            lane["DATABASE_URL"] = urlunsplit(parts._replace(path=parts.path + suffix))
    redis = env.get("REDIS_URL")
    if redis:
        parts = urlsplit(redis)
        number = parts.path.strip("/") or "0"
        if number.isdigit():
            other = (int(number) + lane_number) % 16
            lane["REDIS_URL"] = urlunsplit(parts._replace(path=f"/{other}"))
    return lane


def main(args: list[str]) -> int:
    started = time.monotonic()
    with contextlib.ExitStack() as files:
        logs = [files.enter_context(tempfile.TemporaryFile("w+")) for _ in SIDE_LANES]
        codes = _run(args, logs)
    elapsed = time.monotonic() - started
    passed = all(lane_passed(code, filtered=bool(args)) for code in codes)
    print(
        f"\n===== the {len(codes)} lanes {'passed' if passed else 'FAILED'} in {elapsed:.0f} s "
        f"(exit codes: the rest {codes[0]}, "
        + ", ".join(f"{m!r} {c}" for m, c in zip(SIDE_LANES, codes[1:], strict=True))
        + ") =====",
        flush=True,
    )
    return 0 if passed else 1


def _run(args: list[str], logs: list[Any]) -> list[int]:
    """Every lane's exit code, the main lane's first; each side lane's output is printed
    once it ends."""
    sides = [
        subprocess.Popen(
            [*PYTEST, "-m", markers, *args],
            cwd=ROOT,
            env=lane_env(dict(os.environ), number),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        for number, (markers, log) in enumerate(zip(SIDE_LANES, logs, strict=True), start=1)
    ]
    try:
        rest = subprocess.call([*PYTEST, "-m", f"not ({SIDE_LANE})", *args], cwd=ROOT)
    except BaseException:  # Ctrl-C: the side lanes stop too, their services with them
        for side in sides:
            side.terminate()
        raise
    codes = [rest]
    for markers, side, log in zip(SIDE_LANES, sides, logs, strict=True):
        codes.append(side.wait())
        print(f"\n===== a side lane (tests marked {markers}) =====", flush=True)
        log.seek(0)
        sys.stdout.write(log.read())
    return codes


def lane_passed(code: int, *, filtered: bool) -> bool:
    """Exit 0, or 5 (no test collected) when the options chose the tests (``-k auth``
    may select none of one lane's): the whole suite always has tests in both."""
    return code == 0 or (filtered and code == NO_TESTS_COLLECTED)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
