"""A headless Chromium for the replay and play pages' tests (``live_server``: tests/conftest.py).

Chromium is Debian's (``apt-get install chromium``), driven through the ``playwright``
package; tests here are marked ``browser`` and skipped, with the reason, when either is
missing (failed instead under BRISCOLA_REQUIRE_SERVICES=1; see tests/conftest.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from accounts.models import User

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


# --- Shared by the play pages' tests -------------------------------------------------------

ARTIFACTS = Path(
    os.environ.get("BRISCOLA_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts")
)
AXE_JS = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"


PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}


def errors_of(page: Any) -> list[str]:
    """The page's uncaught script errors, as they come."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Callable[[Any, str], Path]:
    """``shots(page, "name")`` writes a screenshot under test-artifacts/browser/<test>/
    (gitignored; BRISCOLA_TEST_ARTIFACTS moves it) and returns its path."""
    folder = ARTIFACTS / "browser" / request.node.name.replace("[", "-").rstrip("]")
    folder.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str, *, full_page: bool = False) -> Path:
        """``page`` may also be a locator: a screenshot of that element."""
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), **({"full_page": True} if full_page else {}))
        return path

    return take


def session_context(browser: Any, live_server: Any, user: Any, **options: Any) -> Any:
    """A browser context signed in as ``user`` (the session cookie of a forced login)."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    context = browser.new_context(**options)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    _watch_requests(context)
    return context


# The requests each context has sent and not yet had answered: what a wait that timed out
# was waiting behind (``page_diagnosis``).
_IN_FLIGHT: dict[int, dict[Any, tuple[str, float]]] = {}


def _watch_requests(context: Any) -> None:
    pending: dict[Any, tuple[str, float]] = {}
    _IN_FLIGHT[id(context)] = pending
    context.on(
        "request", lambda r: pending.__setitem__(r, (f"{r.method} {r.url}", time.monotonic()))
    )
    context.on("requestfinished", lambda r: pending.pop(r, None))
    context.on("requestfailed", lambda r: pending.pop(r, None))
    context.on("close", lambda _c: _IN_FLIGHT.pop(id(context), None))


def page_diagnosis(page: Any) -> str:
    """What the table shows (``#play``'s data attributes, the end dialog, the toast) and
    which of its context's requests are still unanswered, and for how long: said when a
    wait for the page times out."""
    shown = page.evaluate(
        """() => {
          const play = document.getElementById('play');
          const dialog = document.getElementById('end-dialog');
          const toast = document.getElementById('toast');
          const shown = play ? {...play.dataset} : null;
          if (shown) delete shown.csrf;
          return {
            play: shown,
            end_dialog_open: dialog ? dialog.open : null,
            toast: toast && !toast.hidden ? toast.textContent : null,
          };
        }"""
    )
    now = time.monotonic()
    pending = _IN_FLIGHT.get(id(page.context), {})
    waiting = sorted((f"{what} ({now - since:.1f} s)" for what, since in pending.values()))
    return f"page: {shown}; requests unanswered: {waiting or 'none'}"


def axe_violations(page: Any, impacts: tuple[str, ...] = ("serious", "critical")) -> list[Any]:
    """axe-core's violations of the page as it is now, of the given impacts."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Evaluated by the browser's debugging protocol, not added as an inline <script>,
        # which the pages' Content-Security-Policy refuses (as it should).
        page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;undefined")
    result = page.evaluate("async () => await axe.run(document)")
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [n["html"][:160] for n in v["nodes"][:5]],
        }
        for v in result["violations"]
        if v["impact"] in impacts
    ]


def boxes_outside_viewport(page: Any, selector: str) -> list[Any]:
    """The visible elements matching ``selector`` whose box is not wholly inside the
    viewport (each with its box), measured at scroll 0."""
    return page.evaluate(
        """(selector) => {
          window.scrollTo(0, 0);
          const out = [];
          const w = window.innerWidth, h = window.innerHeight;
          for (const el of document.querySelectorAll(selector)) {
            const r = el.getBoundingClientRect();
            if (r.width === 0 && r.height === 0) continue;
            if (r.left < -0.5 || r.top < -0.5 || r.right > w + 0.5 || r.bottom > h + 0.5) {
              const name = el.id || el.className || el.tagName;
              out.push({el: name, box: [r.left, r.top, r.right, r.bottom]});
            }
          }
          return out;
        }""",
        selector,
    )


@pytest.fixture
def people(
    user_factory: Callable[..., User], fast_password_hashing: None, deterministic_seeds: None
) -> Callable[..., User]:
    """The accounts of a browser test: fast password hashing, the deals' seeds fixed."""
    return user_factory


def open_lobby(page: Any, live_server: Any) -> None:
    """The lobby, both of its lists read."""
    page.goto(f"{live_server.url}/play/")
    page.wait_for_selector('#my-list[aria-busy="false"]', state="attached")
    page.wait_for_selector('#open-list[aria-busy="false"]', state="attached")


@pytest.fixture
def quick_tricks(settings: Any) -> None:
    """A trick taken stays in view 0.2 s instead of 1.5 s (PLAY_TRICK_HOLD_SECONDS), for the
    tests that play whole deals through and look at something else than that pause: a
    deal's 20 tricks held 1.5 s each are half a minute of waiting a deal. The tests of the
    pause itself (tests/browser/test_play_table_flow.py, test_table_audit.py) keep 1.5 s."""
    settings.PLAY_TRICK_HOLD_SECONDS = 0.2


@pytest.fixture(autouse=True)
def _streams_reconnect_at_once(settings: Any) -> None:
    """``live_server`` serves WSGI, where a stream answers the events owed and ends (see
    games/live/apis.py); the page's EventSource then reconnects after the stream's
    ``retry`` (LIVE_RETRY_MS, 2 s), so each bot reply the page waits for would come up to
    2 s late. Reconnecting after 250 ms, the page sees it almost at once, as under ASGI,
    where the stream stays open."""
    settings.LIVE_RETRY_MS = 250
