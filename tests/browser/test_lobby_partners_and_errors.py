"""The lobby after a second outside audit (2026-12): a match of four names the partner
apart from the opponents; inviting more people than there are seats is refused, before
anything is created, in the page's words; an error goes once the form changes; on a
phone a player who has matches finds them first. Screenshots go to
test-artifacts/browser/<test>/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.matches.services import SeatSpec, match_create
from games.models import Match
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    axe_violations,
    errors_of,
    open_lobby,
    session_context,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = {
    "en": {"with": "with", "vs": "vs", "too_many": "Too many names", "no_user": "No player is"},
    "it": {"with": "con", "vs": "contro", "too_many": "Troppi nomi", "no_user": "Nessun giocatore"},
}


def top(page: Any, selector: str) -> float:
    return float(page.evaluate(f"document.querySelector('{selector}').offsetTop"))


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_a_match_of_four_names_the_partner_and_the_list_comes_first_on_a_phone(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    alice = people(username="alice")
    match = match_create(
        creator=alice, players=4, format="first_to_2", seats=[SeatSpec("bot", "greedy")] * 3
    )
    names = {s.number: s.user.username for s in match.seats.select_related("user")}
    context = session_context(
        chromium, live_server, alice, locale=language, **(PHONE if viewport == "phone" else DESKTOP)
    )
    page = context.new_page()
    errors = errors_of(page)
    open_lobby(page, live_server)
    row = page.locator(f'#my-list li[data-match="{match.pk}"] > a')
    w = WORDS[language]
    # Partners face each other: seat 2 is alice's partner, seats 1 and 3 the other team.
    assert row.inner_text() == f"{w['with']} {names[2]} · {w['vs']} {names[1]}, {names[3]}"
    if viewport == "phone":
        # One column: the player's matches above the forms to create one.
        assert top(page, "#mine-title") < top(page, "#vs-bot-title")
        assert page.locator("#my-list").bounding_box()["y"] < 844
    else:
        # Two columns, as before: the forms first, the lists below them.
        assert top(page, "#mine-title") > top(page, "#vs-people-title")
    assert axe_violations(page) == []
    shots(page, f"lobby-4p-{language}-{viewport}")
    assert errors == []
    context.close()


def test_on_a_phone_the_forms_come_first_for_a_player_with_no_match(
    chromium: Any, live_server: Any, people: Callable[..., User]
) -> None:
    context = session_context(chromium, live_server, people(username="newcomer"), **PHONE)
    page = context.new_page()
    open_lobby(page, live_server)
    assert top(page, "#vs-bot-title") < top(page, "#mine-title")
    context.close()


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_too_many_names_unknown_names_and_stale_errors(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    alice = people(username="alice")
    people(username="bob")
    context = session_context(
        chromium, live_server, alice, locale=language, **(PHONE if viewport == "phone" else DESKTOP)
    )
    page = context.new_page()
    errors = errors_of(page)
    open_lobby(page, live_server)
    w = WORDS[language]
    form_error = page.locator("#vs-people .form-error")

    # Two players: one other seat, two names. Refused, nothing created, no name dropped.
    page.fill("#invite", "bob, nosuchuser")
    page.click("#open-table")
    form_error.wait_for(state="visible")
    assert form_error.inner_text().startswith(w["too_many"]), form_error.inner_text()
    assert "2" in form_error.inner_text()
    assert page.evaluate("document.activeElement.classList.contains('form-error')")
    shots(page, f"too-many-{language}-{viewport}")
    page.wait_for_timeout(300)
    assert Match.objects.count() == 0
    assert page.url.endswith("/play/")

    # The form changes: the old error goes.
    page.fill("#invite", "nosuchuser")
    assert form_error.is_hidden()
    # An unknown name: said clearly, and only that.
    page.click("#open-table")
    form_error.wait_for(state="visible")
    assert (
        form_error.inner_text().startswith(w["no_user"]) and "nosuchuser" in form_error.inner_text()
    )
    assert page.locator(".lobby .error:visible").count() == 1
    shots(page, f"no-such-user-{language}-{viewport}")

    # A name twice (four players), then the form changes and another problem is said alone.
    page.check('#vs-people input[name="players"][value="4"]')
    assert form_error.is_hidden()
    page.fill("#invite", "bob, bob")
    page.click("#open-table")
    form_error.wait_for(state="visible")
    assert "bob" in form_error.inner_text()
    page.fill("#invite", "bob, carol, dan, eve")
    assert form_error.is_hidden()
    page.click("#open-table")
    form_error.wait_for(state="visible")
    assert form_error.inner_text().startswith(w["too_many"])
    assert "bob" not in form_error.inner_text()
    assert Match.objects.count() == 0
    assert errors == []
    context.close()
