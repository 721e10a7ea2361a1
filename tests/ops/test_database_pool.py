"""The PostgreSQL connections of a web process are capped (DATABASE_POOL_MAX_SIZE).

An outside audit: served by ASGI, each request runs in a thread of its own with a
connection of its own, and nothing capped them: 160 concurrent requests on two workers
opened connections until PostgreSQL refused more ("too many clients already"), the Celery
worker's sweeps included. Now each process takes its connections from a pool (Django's,
psycopg_pool): however many requests, the server holds at most the pool's size, and a
request that waits DATABASE_POOL_TIMEOUT seconds for one answers 503 `service_unavailable`
with Retry-After.

These tests start a real gunicorn (the production worker class) on the test database and
watch its connections in pg_stat_activity (by the application_name it connects with).
"""

from __future__ import annotations

import concurrent.futures
import os
import secrets
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests
from django.db import connection
from rest_framework.authtoken.models import Token

from games.matches.selectors import deal_state
from games.models import Deal
from tests.faults.stack import Process, free_port, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

POOL_MAX_SIZE = 3
APPLICATION_NAME = "briscola-pool-test"


def _dsn() -> str:
    db = connection.settings_dict
    user = db["USER"] or "postgres"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return (
        f"postgres://{user}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    )


class Server:
    """gunicorn (one uvicorn worker) on the test database, with a pool of POOL_MAX_SIZE."""

    def __init__(self, logdir: Path) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        env = {
            k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "REDIS_URL"
        }
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "briscola_service.settings",
                "DATABASE_URL": f"{_dsn()}?application_name={APPLICATION_NAME}",
                "DATABASE_POOL_MAX_SIZE": str(POOL_MAX_SIZE),
                "DATABASE_POOL_TIMEOUT": "1",
                "LIVE_DB_THREADS": "2",
                "DEBUG": "false",
                "SECRET_KEY": secrets.token_urlsafe(50),
                "ALLOWED_HOSTS": "127.0.0.1",
                "SECURE_SSL_REDIRECT": "false",
                "THROTTLE_USER_RATE": "none",
                "THROTTLE_ANON_RATE": "none",
                "LOG_LEVEL": "WARNING",
            }
        )
        bindir = Path(sys.executable).parent
        self.process = Process(
            "web-pool",
            [
                str(bindir / "gunicorn"),
                "briscola_service.asgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
                "--worker-class",
                "briscola_service.serving.Worker",
                "--log-level",
                "warning",
                "--no-control-socket",
            ],
            env,
            logdir,
        )

    def start(self) -> None:
        self.process.start()

        def answers() -> bool:
            try:
                return requests.get(self.base + "/api/v1/auth/me", timeout=2).status_code == 401
            except requests.RequestException:
                return False

        wait_for("the web service answers", answers, 30)


@pytest.fixture(scope="module")
def server(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("pool"))
    server.start()
    try:
        yield server
    finally:
        server.process.stop()


class ConnectionWatch:
    """The most connections the server held at once, polled in pg_stat_activity."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def count(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
            (connection.settings_dict["NAME"], APPLICATION_NAME),
        ).fetchone()
        return int(row[0]) if row else 0

    def _watch(self) -> None:
        with psycopg.connect(_dsn(), autocommit=True) as conn:
            while not self._stop.is_set():
                self.peak = max(self.peak, self.count(conn))
                self._stop.wait(0.005)

    def __enter__(self) -> ConnectionWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def _assert_answered(response: requests.Response, ok: set[int]) -> None:
    """A success, or the pool's 503: JSON service_unavailable with Retry-After."""
    if response.status_code == 503:
        assert response.json()["code"] == "service_unavailable", response.text
        assert int(response.headers["Retry-After"]) >= 1
        assert response.json()["details"]["retry_after"] == int(response.headers["Retry-After"])
    else:
        assert response.status_code in ok, response.text


def _token(user: Any) -> str:
    return str(Token.objects.get_or_create(user=user)[0].key)


def test_a_burst_far_above_the_pool_never_takes_more_connections(
    server: Server,
    user_factory: Callable[..., Any],
    games: Any,
) -> None:
    players = [user_factory() for _ in range(8)]
    matches = [games.person_match(a, b) for a, b in zip(players[::2], players[1::2], strict=True)]
    jobs = []
    for i in range(60):  # 20 times the pool: match details and event lists
        match = matches[i % len(matches)]
        viewer = players[(i % len(matches)) * 2]
        path = f"/api/v1/matches/{match.pk}" + ("/events" if i % 2 else "")
        jobs.append((path, _token(viewer)))

    def get(path: str, token: str) -> requests.Response:
        return requests.get(
            server.base + path, headers={"Authorization": f"Token {token}"}, timeout=60
        )

    with ConnectionWatch() as watch, concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        answers = list(pool.map(lambda job: get(*job), jobs))
    for response in answers:
        _assert_answered(response, {200})
    assert any(r.status_code == 200 for r in answers)
    assert 1 <= watch.peak <= POOL_MAX_SIZE, watch.peak


def test_requests_that_wait_too_long_for_a_connection_answer_503_with_retry_after(
    server: Server,
    user_factory: Callable[..., Any],
    games: Any,
) -> None:
    """Every pooled connection held by a move that waits for the match's row lock (held
    here): the other moves wait DATABASE_POOL_TIMEOUT for a connection, then answer 503
    service_unavailable with Retry-After; once the lock goes, the held ones are answered."""
    alice, bob = user_factory(), user_factory()
    match = games.person_match(alice, bob)
    state = deal_state(Deal.objects.filter(match_id=match.pk).latest("number"))
    mover = alice if state.turn == 0 else bob
    body = {"card": state.legal_moves()[0].code, "ply": state.ply}
    token = _token(mover)
    count = 4 * POOL_MAX_SIZE

    def move() -> requests.Response:
        return requests.post(
            f"{server.base}/api/v1/matches/{match.pk}/moves",
            json=body,
            headers={"Authorization": f"Token {token}"},
            timeout=60,
        )

    with ConnectionWatch() as watch, psycopg.connect(_dsn()) as blocker:
        blocker.execute("SELECT id FROM games_match WHERE id = %s FOR UPDATE", (match.pk,))
        with concurrent.futures.ThreadPoolExecutor(count) as pool:
            futures = [pool.submit(move) for _ in range(count)]
            # Those without a connection are answered while the lock is still held.
            wait_for(
                "the moves without a connection are answered",
                lambda: sum(f.done() for f in futures) >= count - POOL_MAX_SIZE,
                45,
            )
            waiting = watch.count(blocker)
            blocker.rollback()  # the lock goes: the moves holding connections go on
            answers = [f.result() for f in futures]

    assert waiting == POOL_MAX_SIZE  # every connection held, none more
    for response in answers:
        _assert_answered(response, {201, 409})
    statuses = sorted(r.status_code for r in answers)
    assert statuses.count(503) == count - POOL_MAX_SIZE, statuses
    assert statuses.count(201) == 1, statuses  # the first of the held moves; the others 409
    assert watch.peak <= POOL_MAX_SIZE, watch.peak
