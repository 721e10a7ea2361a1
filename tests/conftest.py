"""Shared fixtures, and the policy for tests that need real services.

Tests marked `postgres` run only on PostgreSQL (DATABASE_URL=postgres://...), tests marked
`redis` only when REDIS_URL answers PING. Elsewhere they are skipped with the reason, unless
BRISCOLA_REQUIRE_SERVICES=1 (as in CI), where a missing service fails them.
"""

import itertools
import os
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User

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


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    checks: list[tuple[str, Callable[[], str | None]]] = [
        ("postgres", _postgres_unavailable_reason),
        ("redis", _redis_unavailable_reason),
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
