"""What one move costs the shared parts, for capacity planning: database time, queries and
Redis commands per move, and database size per thousand finished matches.

    .venv/bin/python bench/ops_costs.py [--matches 40]

In-process (Django's test client, the whole request path: token, throttles, snapshot
cache) against a scratch PostgreSQL database ``briscola_load_costs`` on 127.0.0.1 (dropped
at the end) and Redis database 14 (flushed first). Person-vs-person single-deal matches:
each move is the mover's POST and the opponent's GET of the match (the poll that shows it),
as a client does. Database time is the time the queries took as the app saw it (round
trips included), summed with a connection execute wrapper; Redis commands are read off
INFO commandstats.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DB = "briscola_load_costs"
PG = ["-h", "127.0.0.1", "-U", "postgres"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=40)
    args = parser.parse_args(argv)
    subprocess.run(["dropdb", *PG, "--if-exists", "--force", DB], check=True)
    subprocess.run(["createdb", *PG, DB], check=True)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="briscola_service.settings",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB}",
        REDIS_URL="redis://127.0.0.1:6379/14",
        DEBUG="false",
        SECRET_KEY="bench-only-not-secret-" + "x" * 40,
        ALLOWED_HOSTS="testserver",
        SECURE_SSL_REDIRECT="false",
        LOG_LEVEL="WARNING",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    try:
        call_command("migrate", verbosity=0)
        return measure(args.matches)
    finally:
        from django.db import connections

        connections.close_all()
        subprocess.run(["dropdb", *PG, "--if-exists", "--force", DB], check=True)


def measure(matches: int) -> int:
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
    size_after = _database_size(connection)
    per_thousand = (size_after - size_before) / matches * 1000 / 2**20
    print(f"ops_costs: {matches} matches, {moves} moves (each a POST and the other's GET)")
    print(f"  database time per move       {1000 * spent['seconds'] / moves:8.2f} ms")
    print(f"  queries per move             {spent['queries'] / moves:8.2f}")
    print(f"  Redis commands per move      {calls / moves:8.2f}")
    print(f"  wall time per move           {1000 * wall / moves:8.2f} ms (in-process, 1 client)")
    print(f"  database growth per 1,000 finished matches  {per_thousand:8.1f} MiB")
    return 0


def _database_size(connection: Any) -> int:
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
        cursor.execute("SELECT pg_database_size(current_database())")
        return int(cursor.fetchone()[0])


if __name__ == "__main__":
    sys.exit(main())
