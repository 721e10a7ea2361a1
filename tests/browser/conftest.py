"""A live server and a headless Chromium for the replay page's browser tests.

Chromium is Debian's (``apt-get install chromium``), driven through the ``playwright``
package; tests here are marked ``browser`` and skipped, with the reason, when either is
missing (failed instead under BRISCOLA_REQUIRE_SERVICES=1; see tests/conftest.py).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.servers.basehttp import ThreadedWSGIServer
from pytest_django.live_server_helper import LiveServer

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


class OneAppCallAtATimeWSGIServer(ThreadedWSGIServer):
    """Threaded, but runs the application for one request at a time.

    tests/examples/conftest.py serves SQLite's shared in-memory connection by handling
    each connection in the server thread, one after another. A browser cannot be served
    so: Chromium opens spare connections ahead of need and leaves them idle, and the
    server would wait on one of them forever. Here each connection has its thread (idle
    ones wait alone) and only the application calls, which use the shared database
    connection, take turns.
    """

    def set_app(self, application: Callable[..., Any]) -> None:
        lock = threading.Lock()

        def one_at_a_time(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            with lock:
                return application(environ, start_response)

        super().set_app(one_at_a_time)


@pytest.fixture(scope="session")
def live_server(request: pytest.FixtureRequest, django_db_setup: None) -> Iterator[LiveServer]:
    """pytest-django's ``live_server``, made safe for SQLite in memory (see
    tests/examples/conftest.py for why it waits for ``django_db_setup``)."""
    addr = (
        request.config.getvalue("liveserver")
        or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    server = LiveServer(addr, start=False)
    if server.thread.connections_override:
        server.thread.server_class = OneAppCallAtATimeWSGIServer
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the module (the ``browser`` marker checked it exists).

    Playwright's sync API keeps an event loop running in this thread, which makes Django
    refuse database calls ("async context") from the test's own code: they are plain
    synchronous calls here, so that check is lifted while the browser runs.
    """
    from playwright.sync_api import sync_playwright

    saved = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
            )
            yield browser
            browser.close()
    finally:
        if saved is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = saved
