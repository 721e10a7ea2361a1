"""Shared fixtures, and the policy for tests that need real services.

Tests marked `postgres` run only on PostgreSQL (DATABASE_URL=postgres://...), tests marked
`redis` only when REDIS_URL answers PING, tests marked `browser` only with Chromium at
/usr/bin/chromium and the playwright package, tests marked `processes` (they start their
own PostgreSQL, redis-server, gunicorn and Celery) only where those programs are installed.
Elsewhere they are skipped with the reason, unless BRISCOLA_REQUIRE_SERVICES=1 (as in CI),
where a missing service fails them.

On PostgreSQL the test database, and only it, lets TRUNCATE through the move log's
trigger (see django_db_setup), so `django_db(transaction=True)` tests work there. On
SQLite it is a file of the pytest process's own, not Django's in-memory database (see
django_db_modify_db_settings).
"""

import hashlib
import itertools
import os
import random
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from django.conf import settings
from django.core.servers.basehttp import ThreadedWSGIServer
from django.db import connection, connections
from django.db.backends.base.creation import TEST_DATABASE_PREFIX
from pytest_django import DjangoDbBlocker
from pytest_django.live_server_helper import LiveServer
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User
from games import rules
from games.matches.selectors import deal_state
from games.matches.services import SeatSpec, match_create, match_join, move_play
from games.models import Deal, MatchStatus, Move

DEFAULT_PASSWORD = "a-long-password-1"


def _services_required() -> bool:
    return os.environ.get("BRISCOLA_REQUIRE_SERVICES", "") == "1"


@cache
def _redis_unavailable_reason() -> str | None:
    url = settings.REDIS_URL
    if not url:
        return "REDIS_URL is not set"
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2).ping()
    except redis.RedisError as exc:
        return f"Redis at {url} does not answer PING: {exc}"
    return None


def _postgres_unavailable_reason() -> str | None:
    if connection.vendor != "postgresql":
        return f"the database is {connection.vendor}, not PostgreSQL (set DATABASE_URL)"
    return None


CHROMIUM = "/usr/bin/chromium"


@cache
def _browser_unavailable_reason() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


def _processes_unavailable_reason() -> str | None:
    from tests.faults.stack import missing_tools

    return missing_tools()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    checks: list[tuple[str, Callable[[], str | None]]] = [
        ("postgres", _postgres_unavailable_reason),
        ("redis", _redis_unavailable_reason),
        ("browser", _browser_unavailable_reason),
        ("processes", _processes_unavailable_reason),
    ]
    for marker, unavailable_reason in checks:
        if item.get_closest_marker(marker) is None:
            continue
        reason = unavailable_reason()
        if reason is None:
            continue
        if _services_required():
            pytest.fail(
                f"needs {marker}, but {reason}; BRISCOLA_REQUIRE_SERVICES=1 makes this a failure",
                pytrace=False,
            )
        pytest.skip(f"needs {marker}: {reason}")


@pytest.fixture
def api_client() -> APIClient:
    """An anonymous DRF test client."""
    return APIClient()


@pytest.fixture
def user_factory(db: None) -> Callable[..., User]:
    """Create a person's account with an API token: `user_factory(username="bob")`.

    The password is DEFAULT_PASSWORD unless given; the token is `user.auth_token.key`.
    """
    numbers = itertools.count(1)

    def create(
        *, username: str | None = None, password: str = DEFAULT_PASSWORD, **fields: Any
    ) -> User:
        user = User(username=username or f"player{next(numbers)}", **fields)
        user.set_password(password)
        user.save()
        Token.objects.create(user=user)
        return user

    return create


@pytest.fixture
def auth_client() -> Iterator[Callable[[User], APIClient]]:
    """`auth_client(user)` returns a client that sends the user's token."""

    def make(user: User) -> APIClient:
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    yield make


# --- The test database ---------------------------------------------------------------------

# A schema that only the test database has: the move log's trigger lets TRUNCATE through
# where it exists (games migration 0005), and nowhere else.
TRUNCATE_SCHEMA = "briscola_test_truncate"


def _is_test_database(settings_dict: dict[str, Any]) -> bool:
    name = settings_dict["NAME"]
    return bool(name) and (
        name == (settings_dict.get("TEST") or {}).get("NAME")
        or name.startswith(TEST_DATABASE_PREFIX)
    )


SQLITE_TEST_DIRECTORY_PREFIX = "briscola-test-db-"
"""The start of the name of the temporary directory that holds a process's SQLite test
database (followed by the process id)."""


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None,
) -> Iterator[None]:
    """SQLite: the test database is a file in a temporary directory of this process's own,
    removed with everything in it at the end of the session.

    Django's default test database on SQLite is in memory, "file:memorydb_default?mode=
    memory&cache=shared": every connection of the process (the test's, the live server's
    request threads, the streams' reading threads, in-process tasks) shares one cache,
    where SQLite locks tables, and a statement that meets another connection's lock fails
    at once ("database table is locked"), whatever the busy timeout, which does not apply
    to those locks. A stream's read or a bot's reply during the test's write failed so,
    now and then, where PostgreSQL waits. A file is opened with settings.py's SQLite
    options, make run's (WAL: reads go on beside a write; a write waits up to 20 s for
    another; transactions begin IMMEDIATE), so connections wait for each other instead.

    The directory comes from mkdtemp: unique to the process, so tests/lanes.py's two lanes
    (and pytest-xdist's workers, were it used) each have their own database. Django
    removes the file when it destroys the test database; the directory, with WAL's -wal
    and -shm files that a thread's connection still open may leave, goes after that.
    A TEST NAME set in the settings (a file someone chose) is left alone.
    """
    directory: str | None = None
    for alias, db_settings in settings.DATABASES.items():
        if db_settings["ENGINE"] != "django.db.backends.sqlite3":
            continue
        test_settings = db_settings.setdefault("TEST", {})
        if test_settings.get("NAME") not in (None, "", ":memory:"):
            continue
        if directory is None:
            directory = tempfile.mkdtemp(prefix=f"{SQLITE_TEST_DIRECTORY_PREFIX}{os.getpid()}-")
        test_settings["NAME"] = os.path.join(directory, f"test_{alias}.sqlite3")
    try:
        yield
    finally:
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> None:
    """pytest-django's test databases, where the move log may be emptied (PostgreSQL).

    Django empties the tables after each transactional test with TRUNCATE, which the
    trigger on games_move refuses unless the database has the schema
    ``briscola_test_truncate`` (games migration 0005). It is created here, in the test
    database only: no session setting can open that door anywhere else.
    """
    with django_db_blocker.unblock():
        for conn in connections.all():
            if conn.vendor != "postgresql":
                continue
            if not _is_test_database(conn.settings_dict):
                raise RuntimeError(
                    f"refusing to allow TRUNCATE in {conn.settings_dict['NAME']!r}, "
                    "which is not a test database"
                )
            with conn.cursor() as cursor:
                cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {TRUNCATE_SCHEMA}")


@pytest.fixture
def fast_password_hashing(settings: Any) -> None:
    """MD5 instead of PBKDF2 for the accounts a test creates (about 0.4 s each otherwise)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- Games: matches driven through the services --------------------------------------------


@pytest.fixture
def deterministic_seeds(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deals get seeds derived from the test's id instead of fresh random ones."""
    prefix = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:32]
    numbers = itertools.count(1)
    monkeypatch.setattr(rules, "new_seed", lambda: f"{prefix}-{next(numbers)}")


@pytest.fixture
def unrelated_seeds(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproducible seeds of 128 random bits each, for the leak searches.
    (``deterministic_seeds`` gives seeds that share a prefix: a finished deal's public seed
    would hold a piece of the live one's.)"""
    rng = random.Random(request.node.nodeid)
    monkeypatch.setattr(rules, "new_seed", lambda: f"{rng.getrandbits(128):032x}")


class Games:
    """Helpers to play matches through games.matches.services (moves are never written by hand)."""

    @staticmethod
    def person_match(creator: User, opponent: User, *, format: str = "single") -> Any:
        """A started 2-player match, `creator` in seat 0 and `opponent` in seat 1."""
        match = match_create(
            creator=creator, players=2, format=format, seats=[SeatSpec("user", opponent.username)]
        )
        match = match_join(match_id=match.pk, user=opponent)
        assert match.status == MatchStatus.ACTIVE
        return match

    @staticmethod
    def current_deal(match: Any) -> Any:
        return Deal.objects.select_related("match").filter(match_id=match.pk).latest("number")

    @classmethod
    def state(cls, match_or_deal: Any) -> Any:
        """The rules engine's replay of the match's current deal (or of the deal given)."""
        if isinstance(match_or_deal, Deal):
            return deal_state(match_or_deal)
        return deal_state(cls.current_deal(match_or_deal))

    @staticmethod
    def seat_users(match: Any) -> dict[int, User]:
        return {s.number: s.user for s in match.seats.select_related("user").order_by("number")}

    @classmethod
    def play(cls, match: Any, count: int) -> list[Any]:
        """Play `count` moves, each the first legal card of whoever is to play."""
        users = cls.seat_users(match)
        played = []
        for _ in range(count):
            state = cls.state(match)
            assert state.turn is not None, "the deal is over"
            deal_id = move_play(
                match_id=match.pk,
                user=users[state.turn],
                card=state.legal_moves()[0].code,
                ply=state.ply,
            ).deal_id
            played.append(Move.objects.get(deal_id=deal_id, ply=state.ply))
        return played

    @staticmethod
    def move_log(deal: Any) -> list[tuple[int, int, str]]:
        return list(
            Move.objects.filter(deal=deal).order_by("ply").values_list("ply", "seat", "card")
        )

    @classmethod
    def assert_log_consistent(cls, deal: Any) -> list[tuple[int, int, str]]:
        """The deal's moves are plies 0..n-1, each made by the seat whose turn it was."""
        log = cls.move_log(deal)
        assert [ply for ply, _, _ in log] == list(range(len(log))), log
        replay = rules.Deal(deal.match.players, deal.dealer, rules.shuffled_deck(deal.seed))
        for ply, seat, card in log:
            assert replay.turn == seat, f"ply {ply} was played by seat {seat}, not {replay.turn}"
            replay.play(card, seat=seat)
        return log


@pytest.fixture
def games() -> type[Games]:
    return Games


# --- Threads, each with its own database connection ----------------------------------------


@dataclass
class Outcome:
    value: Any = None
    error: BaseException | None = None


def run_together(jobs: Sequence[Callable[[], Any]], *, timeout: float = 30.0) -> list[Outcome]:
    """Run each job in its own thread, all released at once by a barrier.

    Each thread opens its own database connection before the barrier (so the race is
    about the jobs, not about connecting) and closes it at the end. Returns what each job
    returned or raised, in order.
    """
    barrier = threading.Barrier(len(jobs))
    outcomes = [Outcome() for _ in jobs]

    def run(index: int, job: Callable[[], Any]) -> None:
        try:
            connection.ensure_connection()
            barrier.wait(timeout=timeout)
            outcomes[index].value = job()
        except BaseException as exc:  # reported to the test, which decides
            outcomes[index].error = exc
            barrier.abort()
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=run, args=(i, job), name=f"together-{i}", daemon=True)
        for i, job in enumerate(jobs)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"threads still running after {timeout}s: {stuck}"
    return outcomes


@pytest.fixture
def together() -> Callable[..., list[Outcome]]:
    """`together([job, ...])`: see run_together."""
    return run_together


def poll_until(
    predicate: Callable[[], Any], *, timeout: float = 10.0, interval: float = 0.02
) -> Any:
    """Poll `predicate` until it returns something truthy (returned); fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"gave up waiting after {timeout}s", pytrace=True)
        time.sleep(interval)


@pytest.fixture
def wait_until() -> Callable[..., Any]:
    """`wait_until(predicate, timeout=10.0)`: see poll_until."""
    return poll_until


def other_backends() -> list[tuple[Any, ...]]:
    """PostgreSQL sessions on the test database other than this thread's."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, application_name, state, query FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'"
        )
        return list(cursor.fetchall())


@pytest.fixture
def no_stray_connections(transactional_db: None) -> Iterator[None]:
    """PostgreSQL: after the test, no other session is left on the test database.

    Threads and embedded workers must close their connections, or the teardown's TRUNCATE
    waits on them and the test database cannot be dropped at the end of the session.
    """
    yield
    deadline = time.monotonic() + 5.0
    while (left := other_backends()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not left, f"connections left open on the test database: {left}"


@contextmanager
def celery_conf(**values: Any) -> Iterator[Any]:
    """Override some of the Celery app's configuration for a while; yields the app."""
    from briscola_service.celery import app

    # The app reads the Django settings under the CELERY namespace, and Celery 5.5 looks up
    # the prefixed name there (CELERY_TASK_ALWAYS_EAGER) before a change made under the plain
    # one: override both, or the change does not take.
    values = {**values, **{f"CELERY_{key.upper()}": value for key, value in values.items()}}
    saved = {key: app.conf.get(key) for key in values}
    app.conf.update(values)
    try:
        yield app
    finally:
        app.conf.update(saved)


@pytest.fixture
def celery_settings() -> Callable[..., Any]:
    """`with celery_settings(key=value, ...):` overrides the Celery app's configuration."""
    return celery_conf


@pytest.fixture
def celery_eager() -> Iterator[None]:
    """Celery tasks run in-process at .delay() (the default without REDIS_URL), even in CI.

    Every test not marked `redis` has this already (see the autouse fixture below); ask for
    it to say that a test depends on it.
    """
    with celery_conf(task_always_eager=True, task_eager_propagates=True):
        yield


@pytest.fixture(autouse=True)
def _celery_in_process_unless_redis(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test runs Celery tasks in-process, as without REDIS_URL, also in CI.

    CI sets REDIS_URL for the tests marked `redis`, which get the configured broker; the
    others must behave as on a laptop (bot replies played at .delay()), not leave tasks on
    a queue that no worker reads.
    """
    if request.node.get_closest_marker("redis") is not None:
        yield
        return
    with celery_conf(task_always_eager=True, task_eager_propagates=True):
        yield


class _Gate:
    """The live server's door between tests: open while a test runs; closed, a request is
    answered 503 at once, without the application (so without the database).

    A page the test left open may still be polling, or its stream reconnecting, when the
    test ends; its request, served while the test database is flushed, made the flush fail
    (a stream's read holding a lock; CI of 2f94e86) and, having outlived the test's
    settings and database access, failed itself. ``_live_server_quiet_between_tests``
    closes the door and waits for the requests inside to finish, a streamed answer
    counting until its body is closed (that is where a stream reads).
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._inside = 0
        self.open = False

    def wrap(self, application: Callable[..., Any]) -> Callable[..., Any]:
        def gated(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            with self._changed:
                if not self.open:
                    start_response("503 Service Unavailable", [("Content-Length", "0")])
                    return [b""]
                self._inside += 1
            try:
                body = application(environ, start_response)
            except BaseException:
                self._leave()
                raise
            return _ClosingBody(body, self._leave)

        return gated

    def _leave(self) -> None:
        with self._changed:
            self._inside -= 1
            self._changed.notify_all()

    def set_open(self, value: bool) -> None:
        with self._changed:
            self.open = value

    def wait_empty(self, timeout: float) -> int:
        """Wait until no request is inside; the number still inside at the timeout."""
        with self._changed:
            self._changed.wait_for(lambda: self._inside == 0, timeout=timeout)
            return self._inside


class _ClosingBody:
    """A WSGI answer's body that calls ``done`` once, when the server closes it."""

    def __init__(self, body: Any, done: Callable[[], None]) -> None:
        self._body = body
        self._done: Callable[[], None] | None = done

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._body)

    def close(self) -> None:
        try:
            if hasattr(self._body, "close"):
                self._body.close()
        finally:
            done, self._done = self._done, None
            if done is not None:
                done()


_LIVE_SERVER_GATE = _Gate()


@pytest.fixture
def live_server_gate() -> _Gate:
    """The live server's gate (tests/test_live_server_gate.py; a test module importing
    this conftest would get a second copy of it, not the server's)."""
    return _LIVE_SERVER_GATE


class _GatedWSGIServer(ThreadedWSGIServer):
    """Django's threaded test server behind ``_LIVE_SERVER_GATE``."""

    def set_app(self, application: Callable[..., Any]) -> None:
        super().set_app(_LIVE_SERVER_GATE.wrap(application))


class _OneAppCallAtATimeWSGIServer(_GatedWSGIServer):
    """Threaded, but runs the application for one request at a time: only for a SQLite
    test database in memory, which a TEST NAME in the settings may still ask for (the
    default is a file, see ``django_db_modify_db_settings``).

    Each connection keeps its own thread (a browser opens spare connections and leaves
    them idle; they wait alone), while the application calls, which share SQLite's
    in-memory test connection with the tests, take turns: two requests at once on one
    connection would interleave their transactions (a limitation Django documents).
    """

    def set_app(self, application: Callable[..., Any]) -> None:
        lock = threading.Lock()

        def one_at_a_time(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            with lock:
                return application(environ, start_response)

        super().set_app(one_at_a_time)


@pytest.fixture(scope="session")
def live_server(request: pytest.FixtureRequest, django_db_setup: None) -> Iterator[LiveServer]:
    """pytest-django's ``live_server``, started after the test database exists, and closed
    between tests (``_Gate``).

    It waits for ``django_db_setup``: started before the test database exists (as the
    plain fixture may be), the server would find the configured database rather than the
    test one. Each request has its own connection and the server is fully threaded, on
    PostgreSQL and on SQLite's test file (``django_db_modify_db_settings``); only a SQLite
    test database in memory is shared with the tests, one request at a time.
    """
    addr = (
        request.config.getvalue("liveserver")
        or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    server = LiveServer(addr, start=False)
    server.thread.server_class = (
        _OneAppCallAtATimeWSGIServer if server.thread.connections_override else _GatedWSGIServer
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _live_server_quiet_between_tests(
    request: pytest.FixtureRequest, settings: Any
) -> Iterator[None]:
    """The live server takes requests only while a test that uses it runs: set up after the
    test database and the test's settings, this is torn down before them, and waits for
    the requests being served to finish (``_Gate``)."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    request.getfixturevalue("live_server")
    _LIVE_SERVER_GATE.set_open(True)
    try:
        yield
    finally:
        _LIVE_SERVER_GATE.set_open(False)
        left = _LIVE_SERVER_GATE.wait_empty(timeout=30.0)
    assert left == 0, f"{left} live-server request(s) still running 30 s after the test ended"


@pytest.fixture(autouse=True)
def _no_clocks_sweep_on_requests(settings: Any) -> None:
    """Tasks run in-process in tests, so each API request would run the clocks' sweep
    (games.clocks.middleware) once a second had passed: a test's request would then make
    a query more or less depending on the machine's speed. Tests of the clocks run the
    sweep themselves (tests/clocks/ turns this back on where it is the subject)."""
    settings.CLOCK_IN_PROCESS_SWEEP_SECONDS = 10**9


@pytest.fixture(autouse=True)
def _stream_threads_close_their_connections(settings: Any) -> None:
    """A stream's thread keeps its database connection for its next read in production
    (``LIVE_DB_KEEP_CONNECTIONS``); in tests it closes it after each read, so that no test
    leaves a session on the test database behind it (the database is flushed and dropped,
    and tests/hardening checks that no other session is open). bench/streams.py measures
    both."""
    settings.LIVE_DB_KEEP_CONNECTIONS = False


@pytest.fixture(autouse=True)
def _fresh_throttle_history(settings: Any) -> None:
    """Each test's API requests are counted from zero by the throttles.

    Their history is in the `throttle` cache, shared by the whole run (and by every run
    on one Redis); the ids and addresses that key it repeat from test to test. A prefix of
    its own per test starts the count afresh without flushing the cache (on Redis, that
    would flush the Celery broker too).
    """
    prefixed = {**settings.CACHES["throttle"], "KEY_PREFIX": f"throttle-{uuid.uuid4().hex}"}
    settings.CACHES = {**settings.CACHES, "throttle": prefixed}


@pytest.fixture(autouse=True)
def _fresh_fair_queues(settings: Any) -> None:
    """Each test's bot replies wait in fair queues of their own (briscola_service.fair_queues):
    the Redis keys of a test that stopped half-way are never taken by the next one."""
    settings.BOT_FAIR_KEY_PREFIX = f"test-fair-{uuid.uuid4().hex}:"
