"""The lobby's words for tables (the player audit, 2026-12): an open table of four one has
no seat at names its two pairs as they sit, not everybody as an opponent ("vs yara, zack"
called the future partner an opponent); the form to invite people to a table of four says
which seat each name takes; a table called off before anybody joined is titled so in My
matches, not "Waiting for players to join". Screenshots go to
test-artifacts/browser/<test>/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.matches.services import SeatSpec, match_abort, match_create
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
    "en": {
        "pairs": "yara & open seat vs zack (waiting) & open seat",
        "seats": "At a table of 4 the names take the seats in order: the first plays against "
        "you, the second is your partner, the third plays against you. A seat with no name "
        "is left open.",
        "called_off": "Table called off: nobody joined",
        "did_not_join": "vs zack (did not join)",
        "partner": "partner",
    },
    "it": {
        "pairs": "yara & posto libero contro zack (in attesa) & posto libero",
        "seats": "A un tavolo da 4 i nomi prendono i posti in ordine: il primo gioca contro di "
        "te, il secondo è il tuo compagno, il terzo gioca contro di te. Un posto senza nome "
        "resta libero.",
        "called_off": "Tavolo annullato: non si è unito nessuno",
        "did_not_join": "contro zack (non si è unito)",
        "partner": "compagno",
    },
}

CASES = [("en", DESKTOP), ("it", PHONE)]
IDS = ["desktop-en", "phone-it"]


@pytest.mark.parametrize(("language", "options"), CASES, ids=IDS)
def test_an_open_table_of_four_names_its_pairs_not_opponents(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    options: dict[str, Any],
) -> None:
    yara, _zack, abel = people(username="yara"), people(username="zack"), people(username="abel")
    # yara invites zack: the first name invited takes seat 1, the other pair's.
    match = match_create(
        creator=yara,
        players=4,
        format="single",
        seats=[SeatSpec("user", "zack"), SeatSpec("open"), SeatSpec("open")],
    )
    context = session_context(chromium, live_server, abel, locale=language, **options)
    page = context.new_page()
    errors = errors_of(page)
    open_lobby(page, live_server)
    w = WORDS[language]
    row = page.locator(f'#open-list li[data-match="{match.pk}"]')
    assert row.locator("> a").inner_text() == w["pairs"]
    join = row.locator('button[data-role="join"]')
    assert str(join.get_attribute("aria-label")).endswith(": " + w["pairs"])
    assert axe_violations(page) == []
    shots(page, "open-table-of-four", full_page=True)
    # Joined (the first open seat, seat 2), yara is abel's partner, as the row allowed.
    join.click()
    page.wait_for_url(f"**/play/{match.pk}/")
    badge = page.locator("#pos-top .seat-badge")
    badge.filter(has_text="yara").wait_for()
    assert page.inner_text("#pos-top .seat-badge .tags").startswith(w["partner"])
    shots(page, "joined-yara-is-the-partner")
    assert errors == []
    context.close()


@pytest.mark.parametrize(("language", "options"), CASES, ids=IDS)
def test_the_invite_form_says_where_the_names_sit_at_a_table_of_four(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    options: dict[str, Any],
) -> None:
    from playwright.sync_api import expect

    context = session_context(
        chromium, live_server, people(username="yara"), locale=language, **options
    )
    page = context.new_page()
    errors = errors_of(page)
    open_lobby(page, live_server)
    hint = page.locator("#invite-seats")
    assert hint.is_hidden()  # two players: the one name is the opponent
    page.check('#vs-people input[name="players"][value="4"]')
    assert hint.is_visible()
    assert hint.inner_text() == WORDS[language]["seats"]
    expect(page.locator("#invite")).to_have_accessible_description(WORDS[language]["seats"])
    assert axe_violations(page) == []
    page.locator("#vs-people").scroll_into_view_if_needed()
    shots(page, "invite-form-of-four")
    shots(page.locator("#vs-people"), "invite-form-of-four-only")
    page.check('#vs-people input[name="players"][value="2"]')
    assert hint.is_hidden()
    assert page.get_attribute("#invite", "aria-describedby") is None
    assert errors == []
    context.close()


@pytest.mark.parametrize(("language", "options"), CASES, ids=IDS)
def test_a_table_called_off_is_titled_so_in_my_matches(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    options: dict[str, Any],
) -> None:
    yara = people(username="yara")
    people(username="zack")
    alone = match_create(creator=yara, players=2, format="single", seats=[SeatSpec("open")])
    match_abort(match_id=alone.pk, user=yara)
    invited = match_create(
        creator=yara, players=2, format="single", seats=[SeatSpec("user", "zack")]
    )
    match_abort(match_id=invited.pk, user=yara)
    context = session_context(chromium, live_server, yara, locale=language, **options)
    page = context.new_page()
    errors = errors_of(page)
    open_lobby(page, live_server)
    w = WORDS[language]
    title = page.locator(f'#my-list li[data-match="{alone.pk}"] > a')
    assert title.inner_text() == w["called_off"]
    # An invited person who never came is not "waiting" on a table called off.
    other = page.locator(f'#my-list li[data-match="{invited.pk}"] > a')
    assert other.inner_text() == w["did_not_join"]
    page.locator("#my-list").scroll_into_view_if_needed()
    shots(page, "my-matches-called-off")
    assert errors == []
    context.close()
