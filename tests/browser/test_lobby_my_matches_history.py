"""The lobby's "My matches" after a third outside audit: every past match is reachable
("More matches" reads the API's next page, 20 at a time) and each match that is over says
when it ended and its result, so that rows alike ("vs bob") can be told apart. At
1280x800 and 390x844, in English and Italian; screenshots in test-artifacts/browser/<test>/.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join, match_resign
from games.models import Match, MatchStatus
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
    "en": {"more": "More matches", "won": "won", "lost": "lost"},
    "it": {"more": "Altre partite", "won": "vinta", "lost": "persa"},
}


def finished_matches(games: Any, alice: User, bob: User, count: int) -> list[Match]:
    """``count`` matches of alice against bob, over (each resigned after both played a
    card: alice won the odd ones), the i-th ended on 2026-03-<i> at noon (UTC): newest last."""
    matches = []
    for i in range(1, count + 1):
        match = match_create(
            creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")]
        )
        match_join(match_id=match.pk, user=bob)
        games.play(match, 2)
        match_resign(match_id=match.pk, user=bob if i % 2 else alice)
        when = datetime(2026, 3, i, 12, tzinfo=UTC)
        Match.objects.filter(pk=match.pk).update(created_at=when, finished_at=when)
        matches.append(Match.objects.get(pk=match.pk))
        assert matches[-1].status == MatchStatus.FINISHED
    return matches


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_every_past_match_is_reached_with_its_date_and_result(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    """25 matches over: the 20 newest, then "More matches" adds the 5 older ones (and is
    gone: there are no more); every row says its date and whether alice won. (The list
    stopped at the 20 newest, with no date: 20 rows all reading "vs bob".)"""
    alice, bob = people(username="alice"), people(username="bob")
    matches = finished_matches(games, alice, bob, 25)
    words = WORDS[language]
    options = {
        "locale": language,
        "timezone_id": "UTC",
        **(PHONE if viewport == "phone" else DESKTOP),
    }
    context = session_context(chromium, live_server, alice, **options)
    page = context.new_page()
    errors = errors_of(page)
    open_lobby(page, live_server)
    rows = page.locator("#my-list li[data-match]")
    assert rows.count() == 20
    more = page.locator("#my-more")
    assert more.is_visible() and more.inner_text() == words["more"]

    def check_rows() -> None:
        shown = rows.evaluate_all("els => els.map((e) => e.dataset.match)")
        newest_first = [str(m.pk) for m in reversed(matches)]
        assert shown == newest_first[: len(shown)]
        for match in matches[-len(shown) :]:
            row = page.locator(f'#my-list li[data-match="{match.pk}"]')
            day = match.finished_at.day
            time = row.locator("time.ended-at")
            assert time.get_attribute("datetime") == match.finished_at.isoformat().replace(
                "+00:00", "Z"
            )
            text = time.inner_text()
            assert "2026" in text and str(day) in text, text
            result = words["won"] if match.winner_team == 0 else words["lost"]
            assert row.locator(".whose-turn").inner_text() == result
        infos = rows.locator(".info").all_inner_texts()
        assert len(set(infos)) == len(infos), infos  # rows alike told apart

    check_rows()
    shots(page, f"1-newest-{language}-{viewport}")
    more.click()
    page.locator(f'#my-list li[data-match="{matches[0].pk}"]').wait_for()
    assert more.is_hidden()
    check_rows()
    # The focus is on the first of the older matches.
    assert page.evaluate("document.activeElement.closest('li').dataset.match") == str(matches[4].pk)
    assert axe_violations(page) == []
    page.locator(f'#my-list li[data-match="{matches[0].pk}"]').scroll_into_view_if_needed()
    shots(page, f"2-all-{language}-{viewport}")
    # Read again (as the stream or the poll does), the older matches stay.
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    page.wait_for_timeout(500)
    assert rows.count() == 25
    assert errors == []
    context.close()
