"""The play pages' clocks and layout in a real headless Chromium: a clock only for a match
with a time control (an untimed match's idle expiry is no clock), the lobby's time
controls as the API takes them, a rematch keeping its match's clock, and the table's rows
(the status line and the action buttons) the same in English and Italian, on a phone
(390x844) and at 1280x800, where a 4-player table fits whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.clocks.services import TimeControl
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Match, MatchStatus
from tests.browser.conftest import boxes_outside_viewport, session_context
from tests.browser.test_play_pages import (
    DESKTOP,
    MY_TURN,
    PHONE,
    TABLE_PARTS,
    errors_of,
    wait_turn_or_end,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}


def bot_match(
    user: User, *, players: int = 2, time_control: TimeControl | None = None, **kw: Any
) -> Match:
    seats = [SeatSpec("bot", "random") for _ in range(players - 1)]
    return match_create(
        creator=user, players=players, format="first_to_2", seats=seats, time_control=time_control
    )


def open_table(page: Any, live_server: Any, match: Match) -> None:
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"


# --- The clock ------------------------------------------------------------------------------


def test_an_untimed_match_shows_no_clock(
    chromium: Any, live_server: Any, people: Callable[..., User]
) -> None:
    """Its deadline is the idle expiry (MATCH_IDLE_HOURS, 72 h): no countdown ("4319:58")."""
    alice = people(username="alice")
    match = bot_match(alice)
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    open_table(page, live_server, match)
    detail = page.evaluate(
        "async (url) => (await fetch(url, {credentials: 'same-origin'})).json()",
        f"/api/v1/matches/{match.pk}",
    )
    assert detail["time_control"] is None and detail["seconds_left"] > 3600  # the idle expiry
    assert page.locator("#clock").is_hidden()
    text = page.inner_text("#play")
    assert "Time left" not in text and not re.search(r"\d{3,}:\d\d", text), text
    assert errors == []
    context.close()


def test_a_live_clock_counts_down_the_seat_to_play(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    alice = people(username="alice")
    match = bot_match(alice, time_control=TimeControl(per_move_seconds=60))
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    open_table(page, live_server, match)
    assert page.locator("#clock").is_visible()
    # Before alice's first card: its own window, and running out of it calls the match off.
    assert page.inner_text("#clock-rule") == "First card: 60 s, else called off"
    first = page.inner_text("#clock-time")
    found = re.fullmatch(r"Time left (\d+):(\d\d)", first)
    assert found, first
    assert 0 < int(found.group(1)) * 60 + int(found.group(2)) <= 60
    # It counts down between two reads of the match (no request needed for that).
    page.wait_for_function(
        "first => document.getElementById('clock-time').textContent !== first", arg=first
    )
    shots(page, "live-clock")
    assert errors == []
    context.close()


def test_a_correspondence_clock_says_the_time_to_play_by(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    alice = people(username="alice")
    control = TimeControl(per_move_seconds=24 * 3600, on_timeout="bot")
    match = bot_match(alice, time_control=control)
    context = session_context(chromium, live_server, alice, locale="it", **DESKTOP)
    page = context.new_page()
    open_table(page, live_server, match)
    assert page.inner_text("#clock-rule") == "Prima carta: 24 h, o è annullata"
    assert page.inner_text("#clock-time").startswith("Gioca entro ")
    assert ":" in page.inner_text("#clock-time")  # a time of day, not a countdown of hours
    shots(page, "correspondence-clock")
    context.close()


# --- The lobby's time controls ------------------------------------------------------------


def test_the_lobby_starts_timed_matches_as_the_api_takes_them(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    """No clock by default (one click); live (seconds a move) or correspondence (hours a
    move), and what a timeout does, in two or three more; the lists say the clock."""
    alice = people(username="alice")
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    url = f"{live_server.url}/play/"

    page.goto(url)
    # The clock's own fields are out of the form until their clock is chosen.
    assert page.locator("#bot-seconds").is_hidden() and page.locator("#bot-seconds").is_disabled()
    page.click("#play-bot")
    page.wait_for_url(re.compile(r".*/play/[0-9a-f-]{36}/$"))
    untimed = Match.objects.get(pk=page.url.rstrip("/").rsplit("/", 1)[1])
    assert untimed.per_move_seconds is None

    page.goto(url)
    page.check('#vs-bot input[name="clock"][value="live"]')
    assert page.locator("#bot-seconds").is_enabled() and page.locator("#bot-hours").is_hidden()
    page.fill("#bot-seconds", "45")
    page.check('#vs-bot input[name="on_timeout"][value="bot"]')
    # The bot that would play for a player out of time: Medium (greedy) unless chosen.
    assert page.locator("#bot-timeout-bot").input_value() == "greedy"
    page.select_option("#bot-timeout-bot", "random")
    shots(page, "lobby-live", full_page=True)
    page.click("#play-bot")
    page.wait_for_url(lambda u: str(untimed.pk) not in u and re.search(r"/play/[0-9a-f-]{36}/$", u))
    live = Match.objects.get(pk=page.url.rstrip("/").rsplit("/", 1)[1])
    assert (live.per_move_seconds, live.on_timeout, live.timeout_bot_level) == (45, "bot", "random")
    page.wait_for_selector("#play[data-status]", state="attached")
    # The table opens before alice's first card, which has its own window (at least 30 s;
    # running out of it calls the match off): the clock's line says that one first.
    assert page.inner_text("#clock-rule") == "First card: 45 s, else called off"

    page.goto(url)
    page.check('#vs-people input[name="clock"][value="correspondence"]')
    page.fill("#people-hours", "48")
    page.click("#open-table")
    page.wait_for_url(re.compile(r".*/play/[0-9a-f-]{36}/$"))
    page.wait_for_selector('#play[data-status="waiting"]', state="attached")
    table = Match.objects.get(pk=page.url.rstrip("/").rsplit("/", 1)[1])
    assert (table.per_move_seconds, table.on_timeout) == (48 * 3600, "forfeit")
    assert table.timeout_bot_level == "greedy"  # the API's default: no bot level was sent

    # Out of range: the browser's own check, and nothing is created.
    page.goto(url)
    page.check('#vs-bot input[name="clock"][value="live"]')
    page.fill("#bot-seconds", "2")
    page.click("#play-bot")
    assert page.evaluate("document.getElementById('bot-seconds').validity.rangeUnderflow")
    assert page.url == url and Match.objects.count() == 3

    # Bob sees the open table with its clock, and what running out of time does.
    bob = people(username="bob")
    bob_ctx = session_context(chromium, live_server, bob, **PHONE)
    other = bob_ctx.new_page()
    other.goto(url)
    row = other.locator(f'#open-list li[data-match="{table.pk}"]')
    row.wait_for()
    assert "48 h per move, or the match is lost" in row.inner_text()
    assert row.locator("a").inner_text() == "vs alice"
    shots(other, "lobby-open-tables", full_page=True)
    assert errors == []
    bob_ctx.close()
    context.close()


def test_a_rematch_keeps_the_clock_of_its_match(
    chromium: Any, live_server: Any, people: Callable[..., User], games: Any
) -> None:
    """Alice's Rematch proposes it (the API's rematch: bob invited, seats rotated); bob's
    Rematch at his own table accepts it, and both tables open the new match."""
    alice, bob = people(username="alice"), people(username="bob")
    control = TimeControl(per_move_seconds=90, on_timeout="bot", bot_level="random")
    match = match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("user", "bob")],
        time_control=control,
    )
    match_join(match_id=match.pk, user=bob)
    games.play(match, 40)
    tables = []
    for person in (alice, bob):
        context = session_context(chromium, live_server, person, **DESKTOP)
        page = context.new_page()
        page.goto(f"{live_server.url}/play/{match.pk}/")
        page.wait_for_selector('#play[data-state="match-over"]', state="attached")
        tables.append((context, page))
    (alice_context, alice_page), (bob_context, bob_page) = tables
    alice_page.click("#rematch")
    alice_page.wait_for_url(
        lambda u: str(match.pk) not in u and re.search(r"/play/[0-9a-f-]{36}/$", u)
    )
    rematch = Match.objects.exclude(pk=match.pk).get()
    assert (rematch.per_move_seconds, rematch.on_timeout, rematch.timeout_bot_level) == (
        90,
        "bot",
        "random",
    )
    assert rematch.rematch_of_id == match.pk and rematch.status == MatchStatus.WAITING
    bob_page.click("#rematch")
    bob_page.wait_for_url(f"**/play/{rematch.pk}/")
    rematch.refresh_from_db()
    assert rematch.status == MatchStatus.ACTIVE
    seated = {s.number: s.user.username for s in rematch.seats.select_related("user")}
    assert seated == {0: "bob", 1: "alice"}
    assert Match.objects.count() == 2  # bob accepted alice's; no third match
    alice_context.close()
    bob_context.close()


# --- The table's rows in both languages ---------------------------------------------------


def row_boxes(page: Any) -> dict[str, Any]:
    """Where the status line, the hand and the action buttons are, and each button's box."""
    boxes = page.evaluate(
        """() => {
          window.scrollTo(0, 0);
          const box = (el) => {
            const r = el.getBoundingClientRect();
            return [r.left, r.top, r.width, r.height].map(Math.round);
          };
          const shown = [...document.querySelectorAll('.actions > *')].filter((el) => !el.hidden);
          return {
            status: box(document.querySelector('.status')),
            felt: box(document.getElementById('felt')),
            hand: box(document.getElementById('hand')),
            actions: box(document.querySelector('.actions')),
            buttons: shown.map(box),
            // A label on two lines (or more): its text's line boxes have two tops.
            wrapped: shown.filter((el) => {
              const range = document.createRange();
              range.selectNodeContents(el);
              return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
            }).map((el) => el.id),
          };
        }"""
    )
    return dict(boxes)


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_table_keeps_its_rows_in_english_and_italian(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any, size: str
) -> None:
    """The same 4-player table in English and in Italian: the action buttons in one row,
    nothing cut in them, and every row in the same place in both languages; at 1280x800
    the whole table is on the screen."""
    alice = people(username="alice")
    match = bot_match(alice, players=4)
    seen: dict[str, Any] = {}
    for language in ("en", "it"):
        context = session_context(chromium, live_server, alice, locale=language, **VIEWPORTS[size])
        page = context.new_page()
        open_table(page, live_server, match)
        page.wait_for_selector(MY_TURN, state="attached")
        assert page.evaluate("document.documentElement.lang") == language
        shots(page, f"{language}-table")
        boxes = row_boxes(page)
        buttons = boxes["buttons"]
        assert len(buttons) == 3, boxes
        assert len({top for _, top, _, _ in buttons}) == 1, (language, buttons)  # one row
        assert boxes["wrapped"] == [], (language, boxes)  # each label on one line
        assert boxes_outside_viewport(page, TABLE_PARTS) == [], (language, size)
        width = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        seen[language] = {k: boxes[k] for k in ("status", "felt", "hand", "actions")}
        context.close()
    assert seen["en"] == seen["it"], seen
