"""A headless Chromium for the replay page's browser tests (``live_server``: tests/conftest.py).

Chromium is Debian's (``apt-get install chromium``), driven through the ``playwright``
package; tests here are marked ``browser`` and skipped, with the reason, when either is
missing (failed instead under BRISCOLA_REQUIRE_SERVICES=1; see tests/conftest.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


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
