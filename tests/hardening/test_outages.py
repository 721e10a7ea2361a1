"""Outages of Redis or the database answer cleanly (fast, in-process versions of the
process-level fault tests in tests/faults, so every run checks the code paths)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from rest_framework.test import APIClient

from accounts.models import User
from briscola_service import throttling

ME = "/api/v1/auth/me"

pytestmark = pytest.mark.django_db


def _redis_down(*args: Any, **kwargs: Any) -> Any:
    """The throttles' counters with Redis down."""
    raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def test_the_throttles_let_requests_through_when_their_cache_is_down(
    settings: Any, monkeypatch: pytest.MonkeyPatch, user_factory: Any, caplog: Any
) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "1/min", "user": "1/min"},
    }
    monkeypatch.setattr(throttling, "hit", _redis_down)
    client = APIClient()
    client.force_authenticate(user_factory())
    for _ in range(3):  # above the rate: the count is unknown, so nothing is refused
        assert client.get(ME).status_code == 200
    assert "throttle cache unavailable" in caplog.text


def test_a_database_outage_is_a_503_with_retry_after(
    monkeypatch: pytest.MonkeyPatch, user_factory: Any
) -> None:
    user: User = user_factory()
    client = APIClient()
    client.force_authenticate(user)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    monkeypatch.setattr("games.matches.selectors.matches_list", refuse)
    response = client.get("/api/v1/matches")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["code"] == "service_unavailable" and body["details"] == {"retry_after": 2}
    assert response["Retry-After"] == "2"
    assert "127.0.0.1" not in body["message"]  # the cause is logged, not shown


def test_a_database_outage_outside_the_api_is_a_plain_503(
    monkeypatch: pytest.MonkeyPatch, client: Any
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr("games.matches.selectors.deal_get", refuse)
    response = client.get("/replay/1/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/plain")
    assert response["Retry-After"] == "2"
    assert b"Retry shortly" in response.content
