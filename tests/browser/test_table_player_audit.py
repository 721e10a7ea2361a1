"""The table after a second outside player audit (2026-12, phone and desktop, English and
Italian): the away banner keeps the whole table on a phone's screen, the score is told to a
screen reader as a sentence and only when it changed, the resign question names the
opponent of a 2-player match, the last trick says who played each card, the clock of a
match that is over shows no rule, and the end of a match says when a bot played for the
person.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.clocks.services import TimeControl
from games.matches.services import SeatSpec, match_create
from games.models import Match, Seat
from tests.browser.conftest import DESKTOP, PHONE, boxes_outside_viewport, session_context
from tests.browser.test_play_pages import MY_TURN, TABLE_PARTS, errors_of
from tests.browser.test_table_audit import forget_snapshots

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"phone": PHONE, "desktop": DESKTOP}


def bot_table(user: User, *, players: int = 2, format: str = "first_to_2", **kw: Any) -> Match:
    seats = [SeatSpec("bot", "random") for _ in range(players - 1)]
    return match_create(creator=user, players=players, format=format, seats=seats, **kw)


def scroll_height(page: Any) -> list[int]:
    return list(page.evaluate("[document.scrollingElement.scrollHeight, window.innerHeight]"))


# --- The away banner on a phone -----------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("held", [False, True], ids=["bot-played", "bot-holds"])
def test_the_away_banner_keeps_the_whole_table_on_a_phone(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    held: bool,
) -> None:
    """A 4-player live match with "a bot plays their cards", at the person's turn: their time
    just ran out (the bot is to play their card, the turn line at its longest) or the bot
    holds their seat. The banner and its "Take my seat back" are shown, and the hand and
    the action buttons are still on a 390x844 screen, with no scrolling."""
    vera = people(username="vera9569")
    control = TimeControl(per_move_seconds=60, on_timeout="bot", bot_level="random")
    match = bot_table(vera, players=4, format="single", time_control=control)
    context = session_context(chromium, live_server, vera, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    page.wait_for_selector(MY_TURN, state="attached")
    # As the clock leaves it (the bot's card itself is not sent for here).
    Seat.objects.filter(match=match, number=0).update(
        away=True, bot_holds=held, timeouts_in_row=3 if held else 1
    )
    Match.objects.filter(pk=match.pk).update(deadline=None)
    forget_snapshots()
    page.reload()
    page.wait_for_selector("#away-note:not([hidden])", timeout=10000)
    assert page.locator("#take-back").is_visible()
    assert page.get_attribute("#play", "data-my-turn") == "0"
    turn = {
        ("en", False): "Your time ran out: a bot is playing this card for you",
        ("it", False): "Tempo scaduto: un bot gioca questa carta per te",
        ("en", True): "A bot is playing your card",
        ("it", True): "Un bot gioca la tua carta",
    }[language, held]
    assert page.inner_text("#turn") == turn
    shots(page, f"{language}-away")
    parts = f"{TABLE_PARTS}, #away, #take-back"
    assert boxes_outside_viewport(page, parts) == [], (language, held)
    height, screen = scroll_height(page)
    assert height <= screen, (height, screen)
    assert errors == []
    context.close()
