"""The admin's pages after an outside audit of the admin, at 1280x800, in English and in
Italian: a match's events and seats, the match list with its stuck filter and clock
columns, the move, deal and rating-change lists, and the user form's errors."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import User
from games.clocks.services import event_add
from games.models import Match, Seat
from tests.browser.conftest import DESKTOP, errors_of, session_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def fits(page: Any) -> None:
    """Nothing wider than the window, and a list's columns inside its box (the admin
    scrolls a wide list inside it, which cut off its last columns)."""
    width = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], (page.url, width)
    results = page.locator(".results")
    if results.count():
        inner = results.evaluate(
            "e => [e.scrollWidth, e.clientWidth, [...e.querySelectorAll('thead th')].map("
            "th => th.className + ':' + Math.round(th.getBoundingClientRect().width)).join(' ')"
            ", getComputedStyle(e.querySelector('td')).paddingLeft]"
        )
        assert inner[0] <= inner[1], (page.url, inner)


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_admin_pages_of_the_audit(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
) -> None:
    alice = people(username="alice")
    match = games.person_match(alice, people(username="bob"))
    games.play(match, 6)
    match = Match.objects.get(pk=match.pk)
    event_add(match, "seat_timed_out", seat=1, action="bot")
    event_add(match, "seat_taken_by_bot", seat=1, bot="greedy")
    Seat.objects.filter(match=match, number=1).update(away=True, timeouts_in_row=3, bot_holds=True)
    Match.objects.filter(pk=match.pk).update(deadline=timezone.now() - timedelta(seconds=4))
    root = people(username="root", is_staff=True, is_superuser=True)
    context = session_context(chromium, live_server, root, **DESKTOP)
    context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page = context.new_page()
    errors = errors_of(page)

    page.goto(f"{live_server.url}/admin/games/match/{match.pk}/change/")
    fits(page)
    events = page.locator("#clock_events-group")
    assert events.locator("tbody tr.has_original, tbody tr.form-row").count() >= 2
    assert "seat_taken_by_bot" in events.inner_text()
    assert page.locator("td.field-bot_holds img").count() == 2
    shots(page, "match", full_page=True)

    page.goto(f"{live_server.url}/admin/games/match/?stuck=deadline")
    fits(page)
    assert page.locator("#result_list tbody tr").count() == 1
    assert "(passed)" in page.inner_text("#result_list") or "(superata)" in page.inner_text(
        "#result_list"
    )
    shots(page, "match-list-stuck")

    for url, name in [
        ("/admin/games/move/", "moves"),
        ("/admin/games/deal/", "deals"),
        ("/admin/accounts/ratingchange/", "rating-changes"),
    ]:
        page.goto(live_server.url + url)
        shots(page, name)
        fits(page)

    page.goto(f"{live_server.url}/admin/accounts/user/add/")
    page.fill("#id_username", "a1ice")
    page.locator('input[name="usable_password"][value="false"]').check()
    page.locator('input[name="_save"]').click()
    page.wait_for_selector(".errorlist")
    said = {
        "en": "That user name is taken: alice has it, or one that looks like it.",
        "it": "Questo nome utente è già preso: lo ha alice, o uno che gli somiglia.",
    }[language]
    assert said in page.inner_text(".field-username")
    fits(page)
    shots(page, "user-add-error", full_page=True)
    assert errors == []
    context.close()
