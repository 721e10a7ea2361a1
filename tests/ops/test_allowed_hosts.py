"""The Host header: the probes answer whatever it says; the API refuses another in JSON.

An outside audit: with ALLOWED_HOSTS set to the public name, Django answered its HTML 400
on every path, /readyz included, so the Compose healthcheck (urlopen of
http://127.0.0.1:8000/readyz) failed and the service never became healthy. And settings.py
added "testserver" to ALLOWED_HOSTS in production too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

REPO_ROOT = Path(__file__).resolve().parents[2]
PUBLIC = "cards.example"


@pytest.fixture
def public_name_only(settings: Any) -> None:
    """ALLOWED_HOSTS as an operator sets it: the public name, nothing else."""
    settings.ALLOWED_HOSTS = [PUBLIC]
    settings.REDIS_URL = ""  # no worker to wait for in /readyz


def test_liveness_answers_whatever_the_host(public_name_only: None) -> None:
    for host in ("127.0.0.1:8000", "localhost", "anything.invalid", PUBLIC):
        response = Client(HTTP_HOST=host).get("/healthz")
        assert response.status_code == 200, (host, response.content)
        assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readiness_answers_whatever_the_host(public_name_only: None) -> None:
    response = Client(HTTP_HOST="127.0.0.1:8000").get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "ok"


@pytest.mark.django_db
def test_the_api_refuses_another_host_in_its_error_shape(public_name_only: None) -> None:
    for path in ("/api/v1/auth/me", "/api/v1/matches", "/api/v1/no-such-thing"):
        response = Client(HTTP_HOST="127.0.0.1:8000").get(path)
        assert response.status_code == 400, (path, response.content)
        assert response["Content-Type"] == "application/json"
        body = response.json()
        assert body["code"] == "invalid_host", body
        assert set(body) == {"code", "message", "details"}
    # The public name is served as before.
    assert Client(HTTP_HOST=PUBLIC).get("/api/v1/auth/me").status_code == 401


@pytest.mark.django_db
def test_pages_still_refuse_another_host(public_name_only: None) -> None:
    response = Client(HTTP_HOST="127.0.0.1:8000").get("/play/")
    assert response.status_code == 400
    assert Client(HTTP_HOST=PUBLIC).get("/play/").status_code != 400


def test_invalid_host_is_a_documented_error_code() -> None:
    from briscola_service.exceptions import error_codes

    assert "invalid_host" in error_codes()


def _settings(code: str, **env_overrides: str) -> subprocess.CompletedProcess[str]:
    """Import the settings in a fresh process, as a server would (not under pytest)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTEST") and k not in ("DEBUG", "ALLOWED_HOSTS")
    }
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "-c", f"import briscola_service.settings as s; {code}"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_testserver_is_not_an_allowed_host_in_production() -> None:
    result = _settings(
        "print(s.ALLOWED_HOSTS)", DEBUG="false", SECRET_KEY="x" * 50, ALLOWED_HOSTS=PUBLIC
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"['{PUBLIC}']"
    # DEBUG (make run) keeps it, for Django's test client in a shell.
    result = _settings("print(s.ALLOWED_HOSTS)", DEBUG="true", ALLOWED_HOSTS=PUBLIC)
    assert result.stdout.strip() == f"['{PUBLIC}', 'testserver']"


def test_the_probes_answer_over_plain_http_where_the_rest_redirects_to_https() -> None:
    """Production redirects plain HTTP to https (SECURE_SSL_REDIRECT); a probe that calls
    the server by its address over HTTP gets its answer, not a 301."""
    script = (
        "from django.test import Client; c = Client(HTTP_HOST='cards.example');"
        "print(c.get('/healthz').status_code, c.get('/api/v1/auth/me').status_code)"
    )
    result = _settings(
        "import django; django.setup(); " + script,
        DEBUG="false",
        SECRET_KEY="x" * 50,
        ALLOWED_HOSTS=PUBLIC,
        DJANGO_SETTINGS_MODULE="briscola_service.settings",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["200", "301"]
