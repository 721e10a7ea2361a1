"""A private copy of the whole deployment, in real processes, for the fault tests.

Its own PostgreSQL cluster (initdb into a temporary directory), its own redis-server, the
web service as production serves it (gunicorn with the ASGI worker of
briscola_service.serving) and a Celery worker, each on a free loopback port, so a test
can stop, kill and restart any of them without touching the services the rest of the
suite uses. Everything is torn down (process groups killed) when the stack closes.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a-long-password-1"


def free_port() -> int:
    """A port free now, below the kernel's ephemeral range (Linux: 32768 and up). A port
    the kernel hands out for ``bind(0)`` is an ephemeral one, which any outgoing connection
    may take before the server binds it (seen once: gunicorn "Address already in use")."""
    while True:
        port = 20000 + secrets.randbelow(12000)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def wait_for(what: str, predicate: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    """Poll ``predicate`` until it returns something truthy; AssertionError after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


def postgres_bindir() -> Path | None:
    """Where initdb and pg_ctl are (Debian keeps them out of PATH)."""
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def missing_tools() -> str | None:
    """Why this machine cannot run the stack, or None."""
    if postgres_bindir() is None:
        return "PostgreSQL's initdb/pg_ctl are not installed"
    if shutil.which("redis-server") is None:
        return "redis-server is not installed"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser (PostgreSQL refuses to run as root)"
    return None


class Process:
    """One long-running child in its own process group, logging to a file."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str], logdir: Path) -> None:
        self.name, self.cmd, self.env = name, cmd, env
        self.log = logdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                self.cmd,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, signum: int) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signum)

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 10.0) -> None:
        """Signal the whole group, wait, then SIGKILL whatever is left."""
        if self.proc is None:
            return
        self.send(signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=timeout)
        self.send(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.proc = None

    def tail(self, lines: int = 40) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


class Postgres:
    """A throw-away PostgreSQL cluster (fsync off), run as the postgres user under root."""

    def __init__(self) -> None:
        self.bindir = postgres_bindir()
        assert self.bindir is not None
        # Its own directory under the system temp dir: the postgres user must reach it.
        self.workdir = Path(tempfile.mkdtemp(prefix="briscola-pg-"))
        self.data = self.workdir / "data"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/briscola"
        if os.geteuid() == 0:
            shutil.chown(self.workdir, "postgres")

    def _run(self, tool: str, *args: str) -> None:
        cmd = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)

    def init(self, template: Path | None = None) -> None:
        """A new cluster with an empty database ``briscola``; or, given a ``template`` (a
        stopped cluster's data directory, see :class:`Templates`), a copy of that one."""
        if template is not None:
            # cp -a keeps the files' owner (postgres, under root) and modes (0700).
            subprocess.run(["cp", "-a", str(template), str(self.data)], check=True, timeout=60)
            self.start()
            return
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self.start()
        subprocess.run(
            ["createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "briscola"],
            check=True,
            capture_output=True,
            timeout=30,
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=50"
        )
        log = str(self.workdir / "postgres.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def stop(self) -> None:
        """A fast shutdown: open connections are cut, as in a restart or failover."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def close(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.workdir, ignore_errors=True)


class Redis:
    """A redis-server without persistence: stopping it loses whatever it held."""

    def __init__(self, logdir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        cmd = [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        self.process = Process("redis", cmd, dict(os.environ), logdir)

    def client(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=2)

    def ping(self) -> bool:
        import redis

        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    def start(self) -> None:
        self.process.start()
        wait_for("redis-server answers PING", self.ping, 15)

    def stop(self) -> None:
        self.process.stop(signal.SIGKILL)


def setup_database(env: dict[str, str]) -> None:
    """Migrate the database of ``env``'s DATABASE_URL and make the bots' accounts."""
    for command in (["migrate", "--noinput", "-v", "0"], ["ensure_bots"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )


class Templates:
    """Stopped PostgreSQL clusters, migrated and with the bots' accounts, that stacks copy
    instead of running initdb, migrate and ensure_bots each time (a copy of 50 MB takes a
    fraction of a second; the three, many seconds).

    A stack gets a copy of a cluster made exactly as its own would have been: migrations
    depend on no setting, and ensure_bots reads only BOT_LEVELS, so there is one template
    per value of BOT_LEVELS among the stacks' settings. A copy is the whole data directory
    of a cleanly stopped cluster: the stack's PostgreSQL starts from it as from its own.
    """

    KEYS = ("BOT_LEVELS",)

    def __init__(self) -> None:
        self.made: dict[tuple[str | None, ...], Postgres] = {}

    def data_for(self, env: dict[str, str]) -> Path:
        key = tuple(env.get(name) for name in self.KEYS)
        if key not in self.made:
            postgres = Postgres()
            try:
                postgres.init()
                setup_database({**env, "DATABASE_URL": postgres.url})
                postgres.stop()
            except BaseException:
                postgres.close()
                raise
            self.made[key] = postgres
        return self.made[key].data

    def close(self) -> None:
        for postgres in self.made.values():
            postgres.close()
        self.made.clear()


class Stack:
    """PostgreSQL + Redis + gunicorn + a Celery worker (+ beat when asked), all private."""

    def __init__(self, workdir: Path, **settings: str) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.postgres = Postgres()
        self.redis = Redis(workdir)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
            "DJANGO_SETTINGS_MODULE": "briscola_service.settings",
            "DATABASE_URL": self.postgres.url,
            "REDIS_URL": self.redis.url,
            "DEBUG": "false",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "false",
            "THROTTLE_USER_RATE": "none",
            "THROTTLE_ANON_RATE": "none",
            "THROTTLE_LOGIN_IP_RATE": "none",
            "THROTTLE_LOGIN_USER_RATE": "none",
            "THROTTLE_AUTH_FAILURE_RATE": "none",
            "LOG_LEVEL": "WARNING",
            **settings,
        }
        bindir = Path(sys.executable).parent
        self.web = Process(
            "web",
            [
                str(bindir / "gunicorn"),
                "briscola_service.asgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                self.env.get("WEB_WORKERS", "1"),
                "--worker-class",
                "briscola_service.serving.Worker",
                "--log-level",
                "warning",
            ],
            self.env,
            workdir,
        )
        self.celery = str(bindir / "celery")
        self.worker = self._celery_process("worker", "worker", "--pool", "solo", "-n", "w@%h")
        self.beat = self._celery_process(
            "beat", "beat", "--schedule", str(workdir / "beat-schedule")
        )

    def _celery_process(self, name: str, *args: str) -> Process:
        cmd = [self.celery, "-A", "briscola_service", *args, "-l", "info"]
        return Process(name, cmd, self.env, self.workdir)

    # -- life cycle ----------------------------------------------------------------------

    def start(self, templates: Templates | None = None) -> None:
        self.prepare(templates)
        self.web.start()
        wait_for("the web service answers", self._web_answers, 30)

    def prepare(self, templates: Templates | None = None) -> None:
        """PostgreSQL with the database migrated and the bots' accounts made (a copy of the
        session's template for these settings, when ``templates`` is given), and Redis."""
        self.redis.start()
        template = templates.data_for(self.env) if templates is not None else None
        self.postgres.init(template)
        if template is None:
            setup_database(self.env)

    def _web_answers(self) -> bool:
        try:
            return requests.get(self.base + "/api/v1/auth/me", timeout=2).status_code == 401
        except requests.RequestException:
            return False

    def start_worker(self) -> None:
        """Start the worker and wait until it consumes (it says 'ready' in its log)."""
        size = self.worker.log.stat().st_size if self.worker.log.exists() else 0
        self.worker.start()

        def ready() -> bool:
            if not self.worker.running:
                raise AssertionError(f"the worker exited:\n{self.worker.tail()}")
            with open(self.worker.log, "rb") as log:
                log.seek(size)
                return b"ready." in log.read()

        wait_for("the Celery worker is ready", ready, 45)

    def close(self) -> None:
        """Kill everything: the test is over, nothing of the stack is checked any more."""
        for process in (self.beat, self.worker, self.web):
            process.stop(signal.SIGKILL)
        self.redis.stop()
        self.postgres.close()

    def logs(self) -> str:
        parts = [f"--- {p.name} ---\n{p.tail()}" for p in (self.web, self.worker, self.beat)]
        return "\n".join(parts)

    # -- the API, as a client sees it ------------------------------------------------------

    def register(self, username: str) -> Client:
        response = requests.post(
            self.base + "/api/v1/auth/register",
            json={"username": username, "password": PASSWORD},
            timeout=10,
        )
        assert response.status_code == 201, response.text
        return Client(self.base, response.json()["token"])

    def connect(self) -> Any:
        """A direct connection to the private database (psycopg, a transaction open)."""
        import psycopg

        return psycopg.connect(self.postgres.url, connect_timeout=5)

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        """Read the private database directly (the move log as stored)."""
        with self.connect() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(query, params).fetchall()
            return rows

    def lock_waiters(self) -> int:
        """How many sessions wait for a row or table lock right now."""
        rows = self.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
        return int(rows[0][0])


class Client:
    """A player of the private stack, through its HTTP API."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    def get(self, path: str) -> requests.Response:
        return self.session.get(self.base + path, timeout=10)

    def post(self, path: str, body: dict[str, Any] | None = None) -> requests.Response:
        return self.session.post(self.base + path, json=body or {}, timeout=10)
