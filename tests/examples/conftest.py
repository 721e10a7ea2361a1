"""The live server for the example clients' tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.servers.basehttp import ThreadedWSGIServer
from pytest_django.live_server_helper import LiveServer


class OneRequestAtATimeWSGIServer(ThreadedWSGIServer):
    """Handles each request in the server thread, one after another."""

    def process_request(self, request: Any, client_address: Any) -> None:
        self.process_request_thread(request, client_address)


@pytest.fixture(scope="session")
def live_server(request: pytest.FixtureRequest, django_db_setup: None) -> Iterator[LiveServer]:
    """pytest-django's ``live_server``, made safe for SQLite in memory.

    It waits for ``django_db_setup``: started before the test database exists (as the
    plain fixture may be), the server finds the configured database, not an in-memory
    one, shares no connection, and each request thread opens its own connection to the
    in-memory test database, whose shared cache then refuses concurrent writes
    ("database table is locked").

    With the connection shared, as Django shares an in-memory SQLite connection with its
    live server, two requests at once would run on one connection and interleave their
    transactions (Django documents the limitation): so the server handles one request at
    a time. On PostgreSQL each request has its own connection and the server stays
    threaded.
    """
    addr = (
        request.config.getvalue("liveserver")
        or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    server = LiveServer(addr, start=False)
    if server.thread.connections_override:
        server.thread.server_class = OneRequestAtATimeWSGIServer
    server.start()
    yield server
    server.stop()
