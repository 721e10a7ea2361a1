"""The SQLite test database (tests/conftest.py's django_db_modify_db_settings): a file of the
pytest process's own, opened as make run opens its database (WAL, a busy timeout,
IMMEDIATE transactions), where connections wait for each other's locks instead of failing
("database table is locked", as in Django's default shared-cache database in memory), and
removed at the end of the session.

The test starts two pytest processes at once (as tests/lanes.py does), without
DATABASE_URL (so on SQLite, in CI too), on the ``probe_`` functions below, which only they
collect (``python_functions`` is ``probe_`` there, ``test`` everywhere else).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

from accounts.models import User
from tests.conftest import SQLITE_TEST_DIRECTORY_PREFIX

ROOT = Path(__file__).resolve().parents[1]
PROBE_DIRECTORY = "BRISCOLA_TEST_DB_PROBE_DIRECTORY"
"""Where each probing process writes what it found (a JSON file named by its pid)."""


def _describe_test_database() -> dict[str, object]:
    name = connection.settings_dict["NAME"]
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        (journal_mode,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout")
        (busy_timeout,) = cursor.fetchone()
    return {
        "pid": os.getpid(),
        "name": str(name),
        "is_file": os.path.isfile(name),
        "journal_mode": journal_mode,
        "busy_timeout": busy_timeout,
        "transaction_mode": connection.transaction_mode,
    }


@pytest.mark.usefixtures("transactional_db")
def probe_a_write_waits_for_another_connections_write_and_a_read_goes_on_beside_it() -> None:
    """Run only by the processes of the test below. What failed in the shared-cache
    database in memory: a thread's connection (as the live server's, a stream's, an
    in-process task's) writing while another reads or writes the same table. Here the read
    sees the last committed state and the write waits."""
    holding = threading.Event()
    release = threading.Event()
    errors: list[BaseException] = []

    def hold_a_write() -> None:
        try:
            with transaction.atomic():
                User.objects.create(username="holder")
                holding.set()
                release.wait(timeout=10)
        except BaseException as exc:  # reported below
            errors.append(exc)
            holding.set()
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_a_write, name="holder", daemon=True)
    holder.start()
    try:
        assert holding.wait(timeout=10)
        assert not errors, errors
        # A read beside the write: no "database table is locked"; the write is not seen yet.
        assert not User.objects.filter(username="holder").exists()
        threading.Timer(0.5, release.set).start()
        started = time.monotonic()
        with transaction.atomic():  # BEGIN IMMEDIATE: it waits for the holder's lock
            User.objects.create(username="waiter")
        waited = time.monotonic() - started
    finally:
        release.set()
        holder.join(timeout=10)
    assert not errors, errors
    assert waited >= 0.3, waited
    assert set(User.objects.values_list("username", flat=True)) == {"holder", "waiter"}


def probe_the_test_database(db: None) -> None:
    """Run only by the processes of the next test: writes what this process's test
    database is, then waits until the other process has written too, so that both test
    databases are seen to exist at the same time."""
    directory = Path(os.environ[PROBE_DIRECTORY])
    (directory / f"{os.getpid()}.json").write_text(json.dumps(_describe_test_database()))
    deadline = time.monotonic() + 120
    while len(list(directory.glob("*.json"))) < 2:
        assert time.monotonic() < deadline, "the other process never wrote its report"
        time.sleep(0.05)


def test_two_processes_at_once_have_test_databases_of_their_own_removed_after(
    tmp_path: Path,
) -> None:
    """As tests/lanes.py's two lanes on a newcomer's machine (no DATABASE_URL): each
    process's test database is its own file, and neither is left behind."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "BRISCOLA_REQUIRE_SERVICES", "PYTEST_ADDOPTS"}
    }
    env[PROBE_DIRECTORY] = str(tmp_path)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "python_functions=probe_",
        f"{Path(__file__).relative_to(ROOT)}::probe_the_test_database",
        f"{Path(__file__).relative_to(ROOT)}::"
        "probe_a_write_waits_for_another_connections_write_and_a_read_goes_on_beside_it",
    ]
    processes = [
        subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=300)[0] for process in processes]
    for process, output in zip(processes, outputs, strict=True):
        assert process.returncode == 0, output
        assert "2 passed" in output, output
    reports = [json.loads(path.read_text()) for path in sorted(tmp_path.glob("*.json"))]
    assert sorted(r["pid"] for r in reports) == sorted(p.pid for p in processes), reports
    names = [Path(r["name"]) for r in reports]
    assert names[0] != names[1] and names[0].parent != names[1].parent, names
    for report, name in zip(reports, names, strict=True):
        assert report["is_file"] and report["journal_mode"] == "wal", report
        # settings.py's options for make run's SQLite, which the test database keeps.
        assert report["busy_timeout"] == 20_000, report
        assert report["transaction_mode"] == "IMMEDIATE", report
        assert name.parent.name.startswith(f"{SQLITE_TEST_DIRECTORY_PREFIX}{report['pid']}-")
        # Gone at the end of the session: the file, its -wal and -shm, the directory.
        assert not name.parent.exists(), sorted(name.parent.iterdir())
