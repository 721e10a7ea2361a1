"""What one move costs the shared parts, for capacity planning: database time, queries and
Redis commands per move, and database bytes per move and per thousand finished matches.

    .venv/bin/python bench/ops_costs.py [--matches 40] [--private]
        [--db briscola_load_costs] [--redis-url redis://127.0.0.1:6379/14]

In-process (Django's test client, the whole request path: token, throttles, snapshot
cache). With ``--private``, against a PostgreSQL cluster and a redis-server of its own
(started on free loopback ports as tests/faults/stack.py does, ``fsync`` off, removed at the
end), so that the WAL and the Redis commands counted are this run's alone. Otherwise against
a scratch database on 127.0.0.1:5432 (``briscola_load_costs`` by default, dropped at the end)
and a Redis database (14 by default, flushed first: give one that is yours).
Person-vs-person single-deal matches: each move is the mover's POST and the opponent's GET of
the match (the poll that shows it), as a client does. The throttles count as in production,
with limits too high to refuse.

Database time two ways:

- as the app saw it: the time the queries took in the app, round trips included, summed
  with a connection execute wrapper (it counts the client's own waits for the CPU too);
- as PostgreSQL spent it: ``pg_stat_database.active_time`` of the scratch database (time its
  sessions spent running statements, server side; PostgreSQL 14 and later), with the
  transactions committed and the rows written from the same view. This is the
  figure that sizes a primary. On a busy machine it still counts a backend's waits for the
  CPU, so it is an upper bound of the CPU a move costs there.

Bytes: the database's growth (``pg_database_size`` after a CHECKPOINT) per move and per
1,000 finished matches, and the WAL written during the moves (``pg_current_wal_lsn``; on a
shared cluster other databases' writes count too: an upper bound). Redis commands are read
off INFO commandstats (on a shared server, other users' commands count too: an upper bound).
Opening a database connection is not in those figures (the test client keeps its own), but
with ``DATABASE_CONN_MAX_AGE=0``, the default under ASGI, every request opens one: its time
(connect, ``SELECT 1``, close; the median of 100, as the client saw it) is printed on its own.
With ``--private``, ``fsync`` is off: a move's writing commit waits for no disk.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PG = ["-h", "127.0.0.1", "-U", "postgres"]
STAT_COLUMNS = ("active_time", "xact_commit", "tup_inserted", "tup_updated")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument(
        "--private",
        action="store_true",
        help="a PostgreSQL cluster and a redis-server of its own (tests/faults/stack.py)",
    )
    parser.add_argument("--db", default="briscola_load_costs", help="scratch (briscola_load*)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14", help="flushed first")
    args = parser.parse_args(argv)
    if not args.db.startswith("briscola_load") or not args.db.replace("_", "").isalnum():
        parser.error(f"refusing database {args.db!r}: the scratch name must start briscola_load")
    if not args.redis_url.startswith(("redis://127.0.0.1", "redis://localhost")):
        parser.error("--redis-url must be on the loopback")
    sys.path.insert(0, str(ROOT))
    with contextlib.ExitStack() as cleanup:
        if args.private:
            from tests.faults.stack import Postgres, Redis

            postgres, workdir = Postgres(), Path(tempfile.mkdtemp(prefix="briscola-costs-"))
            cleanup.callback(shutil.rmtree, workdir, ignore_errors=True)
            cleanup.callback(postgres.close)
            postgres.init()
            redis_server = Redis(workdir)
            cleanup.callback(redis_server.stop)
            redis_server.start()
            database_url, redis_url = postgres.url, redis_server.url
        else:
            subprocess.run(["dropdb", *PG, "--if-exists", "--force", args.db], check=True)
            subprocess.run(["createdb", *PG, args.db], check=True)
            cleanup.callback(
                subprocess.run, ["dropdb", *PG, "--if-exists", "--force", args.db], check=True
            )
            database_url = f"postgres://postgres@127.0.0.1:5432/{args.db}"
            redis_url = args.redis_url
        os.environ.update(
            DJANGO_SETTINGS_MODULE="briscola_service.settings",
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            DEBUG="false",
            SECRET_KEY="bench-only-not-secret-" + "x" * 40,
            ALLOWED_HOSTS="testserver",
            SECURE_SSL_REDIRECT="false",
            LOG_LEVEL="WARNING",
            # The throttles count (their Redis commands are part of a move's cost) but never
            # refuse: one client making moves back to back is far over a person's 600/min.
            THROTTLE_USER_RATE="1000000/min",
            THROTTLE_ANON_RATE="1000000/min",
        )
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connections

        cleanup.callback(connections.close_all)
        call_command("migrate", verbosity=0)
        return measure(args.matches, shared=not args.private)
    return 1


def server_stats() -> dict[str, float]:
    """The scratch database's counters as PostgreSQL keeps them, read from a session of
    its own once the app's session has ended (a session's counters are flushed by then)."""
    import psycopg
    from django.db import connection

    connection.close()
    time.sleep(1.5)
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            f"SELECT {', '.join(STAT_COLUMNS)}, pg_current_wal_lsn() - '0/0'::pg_lsn "
            "FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return {**dict(zip(STAT_COLUMNS, map(float, row[:-1]), strict=True)), "wal": float(row[-1])}


def measure(matches: int, shared: bool) -> int:
    import redis
    from django.db import connection
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from accounts.models import User

    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    r.flushdb()

    def client(name: str) -> APIClient:
        user = User.objects.create_user(username=name, password="a-long-password-1")
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        return api

    players = [client(f"cost{n}") for n in range(2)]
    spent = {"seconds": 0.0, "queries": 0}

    def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent["seconds"] += time.perf_counter() - started
            spent["queries"] += 1

    def redis_calls() -> int:
        stats = r.info("commandstats")
        return sum(int(v["calls"]) for v in stats.values())

    size_before = _database_size(connection)
    server_before = server_stats()
    calls_before = redis_calls()
    moves = 0
    wall = time.perf_counter()
    with connection.execute_wrapper(timed):
        for _ in range(matches):
            created = (
                players[0]
                .post("/api/v1/matches", {"players": 2, "seats": ["open"]}, format="json")
                .json()
            )
            match_id = created["id"]
            players[1].post(f"/api/v1/matches/{match_id}/join", {}, format="json")
            details = [p.get(f"/api/v1/matches/{match_id}").json() for p in players]
            while details[0]["status"] == "active":
                deal = details[0]["current_deal"]
                mover = deal["turn"]
                seat_of = {d["your_seat"]: n for n, d in enumerate(details)}
                n = seat_of[mover]
                mine = details[n]["current_deal"]
                played = players[n].post(
                    f"/api/v1/matches/{match_id}/moves",
                    {"card": mine["legal"][0], "ply": mine["ply"]},
                    format="json",
                )
                assert played.status_code == 201, played.content
                details[n] = played.json()
                details[1 - n] = players[1 - n].get(f"/api/v1/matches/{match_id}").json()
                moves += 1
    wall = time.perf_counter() - wall
    calls = redis_calls() - calls_before
    server = {k: v - server_before[k] for k, v in server_stats().items()}
    size_after = _database_size(connection)
    grown = size_after - size_before
    per_thousand = grown / matches * 1000 / 2**20
    print(f"ops_costs: {matches} matches, {moves} moves (each a POST and the other's GET)")
    print(
        f"  database time per move, as the app saw it   {1000 * spent['seconds'] / moves:8.2f} ms"
    )
    print(f"  database time per move, PostgreSQL's own    {server['active_time'] / moves:8.2f} ms")
    print(f"  queries per move                            {spent['queries'] / moves:8.2f}")
    print(f"  transactions committed per move             {server['xact_commit'] / moves:8.2f}")
    print(
        f"  rows inserted / updated per move            {server['tup_inserted'] / moves:.2f} / "
        f"{server['tup_updated'] / moves:.2f}"
    )
    redis_calls_label = "Redis commands per move" + (" (the server's: <=)" if shared else "")
    print(f"  {redis_calls_label:<43} {calls / moves:8.2f}")
    print(f"  wall time per move                          {1000 * wall / moves:8.2f} ms (1 client)")
    print(f"  database growth per move                    {grown / moves:8.0f} bytes")
    wal = "WAL per move (the whole cluster's: <=)" if shared else "WAL per move"
    print(f"  {wal:<43} {server['wal'] / moves:8.0f} bytes")
    print(f"  database growth per 1,000 finished matches  {per_thousand:8.1f} MiB")
    print(
        f"  opening a database connection               {connect_ms():8.2f} ms "
        "(as a client saw it; not in the figures above)"
    )
    return 0


def connect_ms(count: int = 100) -> float:
    """The time to open a connection, run one query and close it (the median of ``count``),
    as a client sees it: what a request pays with ``DATABASE_CONN_MAX_AGE=0``."""
    import statistics

    import psycopg

    times = []
    for _ in range(count):
        started = time.perf_counter()
        with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
            conn.execute("SELECT 1")
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def _database_size(connection: Any) -> int:
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
        cursor.execute("SELECT pg_database_size(current_database())")
        return int(cursor.fetchone()[0])


if __name__ == "__main__":
    sys.exit(main())
