"""The admin's match and deal pages after a second outside audit (2026-12), at desktop
size: the match's deals fit the page (the commitment wraps), "Partners last hand" only for
a match of four, an icon named (none) on every admin page, so that no /favicon.ico is
asked for and missed, and a live deal's replay link says the hands stay hidden until
asked for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.matches.services import SeatSpec, match_create
from games.models import Deal, Match
from tests.browser.conftest import DESKTOP, errors_of, session_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_admins_match_and_deal_pages(
    chromium: Any, live_server: Any, people: Callable[..., User], games: Any, shots: Any
) -> None:
    alice = people(username="alice")
    two = games.person_match(alice, people(username="bob"))
    games.play(two, 40)
    two = Match.objects.get(pk=two.pk)
    four = match_create(
        creator=alice, players=4, format="first_to_3", seats=[SeatSpec("bot", "greedy")] * 3
    )
    root = people(username="root", is_staff=True, is_superuser=True)
    context = session_context(chromium, live_server, root, **DESKTOP)
    page = context.new_page()
    errors = errors_of(page)
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)

    page.goto(f"{live_server.url}/admin/games/match/{two.pk}/change/")
    width = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width
    assert page.locator(".field-partners_last_hand").count() == 0
    shots(page, "match-2p", full_page=True)
    page.goto(f"{live_server.url}/admin/games/match/{four.pk}/change/")
    assert page.locator(".field-partners_last_hand").count() == 1
    width = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width
    shots(page, "match-4p", full_page=True)

    live = Deal.objects.get(match=four, number=1)
    page.goto(f"{live_server.url}/admin/games/deal/{live.pk}/change/")
    assert page.locator(f'a[href="/replay/{live.pk}/"]').count() == 1
    assert "stay hidden until you ask" in page.inner_text(".field-replay_link")
    shots(page, "live-deal", full_page=True)
    # Headless Chromium asks for no icon; a browser with a window asks for /favicon.ico
    # unless the page names one: every admin page names one (none, data:).
    for url in [
        "/admin/",
        "/admin/accounts/user/",
        "/admin/games/match/",
        "/admin/games/deal/",
        f"/admin/games/deal/{live.pk}/change/",
    ]:
        page.goto(live_server.url + url)
        assert page.get_attribute('link[rel="icon"]', "href") == "data:,", url
    assert not [url for url in missing if url.endswith("/favicon.ico")], missing
    assert errors == []
    context.close()
