"""The Content-Security-Policy (settings.CONTENT_SECURITY_POLICY) in a real Chromium: every
kind of page the service serves keeps to it, and the browser enforces it.

Each page is opened and used a little (a card played, the API's docs drawn, an admin
change form opened) while the page records every ``securitypolicyviolation`` event the
browser fires; a page that needed an inline script, an inline style or another origin
would report one, and would be broken for its users."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.models import Deal
from tests.browser.conftest import DESKTOP, session_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Recorded from the document's first moment (Playwright's init scripts are not subject to
# the page's policy).
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") +
                    " at " + e.sourceFile + ":" + e.lineNumber);
});
"""


def watched_page(context: Any, errors: list[str]) -> Any:
    """A new page of ``context`` recording its policy violations and its script errors."""
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page


def violations(page: Any) -> list[str]:
    return list(page.evaluate("window.__csp || []"))


def visit(page: Any, url: str, ready: str) -> dict[str, str]:
    """Opens ``url``, waits for ``ready`` and returns the response's headers."""
    response = page.goto(url)
    assert response is not None and response.ok, (url, response and response.status)
    page.wait_for_selector(ready, state="attached", timeout=15000)
    return dict(response.headers)


def test_every_page_keeps_to_the_content_security_policy(
    chromium: Any,
    live_server: Any,
    user_factory: Callable[..., User],
    fast_password_hashing: None,
    deterministic_seeds: None,
    games: Any,
    shots: Any,
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    finished = games.person_match(alice, bob)
    games.play(finished, 40)
    deal = Deal.objects.get(match=finished)
    ongoing = games.person_match(alice, bob)
    root = user_factory(username="root", is_staff=True, is_superuser=True)

    context = session_context(chromium, live_server, alice, **DESKTOP)
    errors: list[str] = []
    page = watched_page(context, errors)
    seen: dict[str, list[str]] = {}

    headers = visit(page, f"{live_server.url}/play/", "#play-bot")
    policy = headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, headers
    seen["lobby"] = violations(page)

    # The table: the stream opens, a card is played and the answer drawn.
    visit(page, f"{live_server.url}/play/{ongoing.pk}/", '#play[data-state="playing"]')
    if page.get_attribute("#play", "data-my-turn") != "1":
        games.play(ongoing, 1)  # bob leads: his card comes to the page over the stream
    page.wait_for_selector('#play[data-my-turn="1"]', state="attached", timeout=15000)
    ply = page.get_attribute("#play", "data-ply")
    page.locator("#hand button").first.click()
    page.wait_for_function(
        "(ply) => document.getElementById('play').dataset.ply !== ply", arg=ply, timeout=15000
    )
    seen["table"] = violations(page)

    visit(page, f"{live_server.url}/replay/{deal.pk}/", '#replay[data-ply="0"]')
    page.click("#last")
    page.wait_for_selector('#replay[data-ply="40"]', state="attached", timeout=15000)
    seen["replay"] = violations(page)

    # The API's own pages: the docs (Swagger UI drawn from the schema) and the browsable API.
    visit(page, f"{live_server.url}/api/docs/", ".swagger-ui .opblock")
    page.locator(".swagger-ui .opblock-summary").first.click()  # an operation opened
    page.locator(".swagger-ui .try-out__btn").first.click()
    page.locator(".swagger-ui .execute").first.click()  # and run: its answer drawn
    page.wait_for_selector(".swagger-ui .responses-table.live-responses-table", timeout=15000)
    seen["api docs"] = violations(page)
    shots(page, "api-docs")
    page.set_extra_http_headers({"Accept": "text/html"})
    visit(page, f"{live_server.url}/api/v1/matches/", ".response-info")
    shots(page, "browsable-api")
    seen["browsable api"] = violations(page)
    # Its sign-out is a form's button (REST framework's own link ran an inline onclick,
    # which the policy stops): it signs out.
    page.click(".sign-out button")
    page.wait_for_selector("a[href*='/api-auth/login/']", timeout=15000)
    seen["browsable api signed out"] = violations(page)
    page.set_extra_http_headers({})
    context.close()

    # Signed out: the sign-in and sign-up forms; then the admin: its index, a list with
    # filters, change forms with their widgets.
    pages = {
        chromium.new_context(**DESKTOP): [
            ("sign in", "/play/signin/", "form"),
            ("sign up", "/play/signup/", "form"),
            ("admin sign in", "/admin/login/", "#login-form"),
            ("browsable api sign in", "/api-auth/login/", "form"),
        ],
        session_context(chromium, live_server, root, **DESKTOP): [
            ("admin index", "/admin/", "#content"),
            ("admin lists", "/admin/games/match/", "#result_list"),
            ("admin deal", f"/admin/games/deal/{deal.pk}/change/", "table.deal-tricks"),
            ("admin match", f"/admin/games/match/{finished.pk}/change/", "#content-main"),
            ("admin user", f"/admin/accounts/user/{alice.pk}/change/", "#user_form"),
        ],
    }
    for browser_context, visits in pages.items():
        page = watched_page(browser_context, errors)
        for name, path, ready in visits:
            visit(page, live_server.url + path, ready)
            seen[name] = violations(page)
        browser_context.close()

    assert {name: found for name, found in seen.items() if found} == {}
    assert errors == []


def test_the_browsable_apis_own_sign_in_page_signs_in(
    chromium: Any,
    live_server: Any,
    user_factory: Callable[..., User],
    fast_password_hashing: None,
    shots: Any,
) -> None:
    """REST framework's sign-in page, replaced by one without style attributes
    (briscola_service/templates/rest_framework/login.html), still does its job: a wrong
    password is said so, the right one signs in and goes on to ``next``."""
    from tests.conftest import DEFAULT_PASSWORD

    user_factory(username="alice")
    context = chromium.new_context(**DESKTOP)
    errors: list[str] = []
    page = watched_page(context, errors)
    visit(page, f"{live_server.url}/api-auth/login/?next=/api/v1/auth/me", "form")
    # Named for password managers, as the service's own sign-in page is.
    assert page.get_attribute("#id_username", "autocomplete") == "username"
    assert page.get_attribute("#id_password", "autocomplete") == "current-password"
    page.fill("#id_username", "alice")
    page.fill("#id_password", "not-her-password")
    page.click("form button[type=submit]")
    page.wait_for_selector(".text-danger", timeout=15000)
    assert page.input_value("#id_username") == "alice"
    shots(page, "wrong-password")
    page.fill("#id_password", DEFAULT_PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_url("**/api/v1/auth/me", timeout=15000)
    assert '"username": "alice"' in page.inner_text("body")
    assert violations(page) == []
    assert errors == []
    context.close()
