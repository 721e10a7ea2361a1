"""What the benches that start the service share: the production-like environment they
serve with, a free port, a program of the virtualenv, percentiles.

Imported by its name (``from _common import ...``): a bench is run as a script
(``.venv/bin/python bench/NAME.py``), so this folder is first on ``sys.path``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (nearest rank); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def ms(value: float | None, digits: int = 2) -> float | None:
    """Seconds as milliseconds, rounded (None stays None)."""
    return None if value is None else round(value * 1000, digits)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def venv_bin(name: str) -> str:
    """A program of the virtualenv running this bench (else on PATH)."""
    path = Path(sys.executable).parent / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"bench: {name} not found (install the project into .venv)")
    return found


def service_env(database_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    """The environment the service runs with in a bench: as in production (DEBUG off, a
    random SECRET_KEY, on 127.0.0.1 only), with the throttles off (a bench's few accounts
    make thousands of requests, and registers them from one address faster than the
    sign-in throttle allows) and quiet logs; ``extra`` on top."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "briscola_service.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
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
        **extra,
    }


def celery_worker_cmd(concurrency: int, name: str | None = None) -> list[str]:
    """The Celery worker of a bench (the bots' replies, the ratings): quiet logs."""
    cmd = [venv_bin("celery"), "-A", "briscola_service", "worker", "-l", "warning"]
    cmd += ["--concurrency", str(concurrency)]
    return cmd + (["-n", name] if name else [])


def gunicorn_cmd(port: int, workers: int, asgi: bool = True) -> list[str]:
    """A web server of a bench: gunicorn with production's uvicorn workers (``asgi``) or
    the old sync workers, on 127.0.0.1:``port``, quiet logs."""
    return [
        venv_bin("gunicorn"),
        "briscola_service.asgi" if asgi else "briscola_service.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "briscola_service.serving.Worker" if asgi else "sync",
        "--log-level",
        "warning",
    ]
