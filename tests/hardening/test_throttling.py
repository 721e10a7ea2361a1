"""Throttling: anonymous requests per client IP, signed-in ones per account; a structured
429 that says when to retry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.cache import caches
from rest_framework.test import APIClient

from accounts.models import User
from tests.hardening.conftest import assert_clean_error

TOKEN = "/api/v1/auth/token"
ME = "/api/v1/auth/me"

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings: Any) -> Callable[..., None]:
    def set_rates(*, anon: str | None = None, user: str | None = None) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"anon": anon, "user": user},
        }

    return set_rates


def assert_throttled(response: Any) -> None:
    body = assert_clean_error(response, 429, "throttled")
    retry_after = body["details"]["retry_after"]
    assert isinstance(retry_after, int) and 1 <= retry_after <= 60
    assert response["Retry-After"] == str(retry_after)


def test_the_defaults_are_generous() -> None:
    assert django_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] == {
        "anon": "60/min",
        "user": "600/min",
    }


def test_anonymous_requests_are_throttled_per_ip(rates: Callable[..., None]) -> None:
    rates(anon="3/min")
    client = APIClient(REMOTE_ADDR="203.0.113.7")
    body = {"username": "nobody", "password": "wrong-password"}
    for _ in range(3):
        assert client.post(TOKEN, body, format="json").status_code == 401
    assert len(caches["throttle"].get("throttle_anon_203.0.113.7")) == 3  # the history
    assert_throttled(client.post(TOKEN, body, format="json"))
    # X-Forwarded-For is not trusted by default: it cannot pick another address.
    assert_throttled(client.post(TOKEN, body, format="json", HTTP_X_FORWARDED_FOR="198.51.100.9"))
    other = APIClient(REMOTE_ADDR="203.0.113.8")
    assert other.post(TOKEN, body, format="json").status_code == 401


def test_signed_in_requests_are_throttled_per_account(
    rates: Callable[..., None],
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
) -> None:
    rates(user="4/min")
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    client = auth_client(alice)
    for _ in range(4):
        assert client.get(ME).status_code == 200
    assert_throttled(client.get(ME))
    assert_throttled(client.post("/api/v1/matches", {"players": 2, "seats": ["open"]}))
    assert auth_client(bob).get(ME).status_code == 200


def test_a_rate_of_none_turns_a_throttle_off(
    rates: Callable[..., None], user_factory: Callable[..., User], auth_client: Any
) -> None:
    """More requests than the default rates allow (so a fallback to a default would be
    throttled), for each scope; no request history is kept for a throttle that is off."""
    defaults = django_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    beyond = {scope: int(rate.split("/")[0]) + 1 for scope, rate in defaults.items()}
    assert beyond == {"anon": 61, "user": 601}
    rates(anon=None, user=None)
    client = auth_client(user_factory())
    for _ in range(beyond["user"]):
        assert client.get(ME).status_code == 200
    anonymous = APIClient(REMOTE_ADDR="203.0.113.9")
    body = {"username": "nobody", "password": "wrong-password"}
    for _ in range(beyond["anon"]):
        assert anonymous.post(TOKEN, body, format="json").status_code == 401
    assert caches["throttle"].get("throttle_anon_203.0.113.9") is None
