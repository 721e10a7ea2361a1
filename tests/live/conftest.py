"""Fixtures for the live stream tests: an in-process bus, committed data, no throttles."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User
from games.live import bus as live_bus
from games.live.events import reader
from games.live.streams import slots


@pytest.fixture
def live(settings: Any) -> Iterator[live_bus.LocalBus]:
    """An in-process bus of the test's own; stream threads close their connections after
    each read (the test database is flushed and dropped with no session left on it)."""
    settings.LIVE_DB_KEEP_CONNECTIONS = False
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    bus = live_bus.LocalBus()
    live_bus.set_bus(bus)
    reader.clear()
    yield bus
    live_bus.set_bus(None)
    reader.clear()
    # Every stream the test opened was closed (as the ASGI handler closes it), and gave
    # its place under the caps back.
    assert slots.open_in_all() == 0, dict(slots._open)


@pytest.fixture
def api_for() -> Callable[[User | None], APIClient]:
    def make(user: User | None) -> APIClient:
        client = APIClient()
        if user is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {user.auth_token.key}")
        return client

    return make
