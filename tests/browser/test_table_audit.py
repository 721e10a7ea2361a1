"""The table after an outside browser audit (2026-12, phone and desktop, English and
Italian): no card played before the card led is seen, the timeout bot told and the seat
taken back, a resignation that calls the match off said so, a match lost by idling told
as a loss, a clock that never shows more time than there is (and the first card's own
window), a rematch proposed by the other person shown live, and the focus after the last
dialog.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.clocks.services import TimeControl, rematch_propose
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Match, Seat
from tests.browser.conftest import DESKTOP, PHONE, errors_of, session_context
from tests.browser.test_play_pages import MY_TURN, play_card, wait_turn_or_end
from tests.browser.test_play_table_flow import (
    bot_match,
    run_out_of_time,
    timed_table_after_a_card,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"phone": PHONE, "desktop": DESKTOP}


def forget_snapshots() -> None:
    """Rows changed behind the services' back: the details kept by version are dropped."""
    from django.core.cache import caches

    for cache in caches.all():
        cache.clear()


# Each moment the hand has a playable card while the table does not show every card on it
# (2 players: as many cards not yet taken as the ply says were led since the last trick),
# or while a trick taken holds the next lead back: a click then would play blind.
WATCH_BLIND = """() => {
  window.blind = [];
  window.heldSeen = 0;
  const play = document.getElementById('play');
  const check = () => {
    if (play.dataset.held === '1') window.heldSeen += 1;
    const playable = document.querySelectorAll('#hand button[aria-disabled="false"]').length;
    if (!playable) return;
    const shown = document.querySelectorAll('#trick .card:not(.taken)').length;
    const led = Number(play.dataset.ply) % 2;
    if (shown !== led || play.dataset.held === '1') {
      window.blind.push({ply: play.dataset.ply, shown, led, held: play.dataset.held,
                         turn: document.getElementById('turn').textContent});
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(play, {childList: true, subtree: true, attributes: true,
                          attributeFilter: ['aria-disabled', 'data-held', 'data-ply', 'class']});
}"""


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_no_card_can_be_played_before_the_card_led_is_shown(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any, size: str
) -> None:
    """A bot that takes a trick leads the next at once: the trick taken stays in view
    (1.5 s), and while it does the hand is not playable and the turn line says the turn
    comes next; once the hand is playable, the card the bot led is on the table."""
    alice = people(username="alice")
    match = bot_match(alice, format="single")
    context = session_context(chromium, live_server, alice, **SIZES[size])
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    page.wait_for_selector("#play[data-status]", state="attached")
    page.evaluate(WATCH_BLIND)
    held_shot = False
    for _turn in range(25):
        if not held_shot:
            try:
                page.wait_for_selector('#play[data-held="1"]', state="attached", timeout=400)
            except Exception:  # noqa: BLE001 - no hold this turn
                pass
            else:
                assert page.get_attribute("#play", "data-my-turn") == "0"
                assert "takes the trick" in page.inner_text("#turn")
                shots(page, f"{size}-1-trick-taken-hand-waits")
                held_shot = True
        state = wait_turn_or_end(page)
        if state != "playing":
            break
        play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
    assert page.evaluate("window.blind") == []
    assert page.evaluate("window.heldSeen") > 0, "the bot never led at once after a trick"
    assert held_shot
    assert errors == []
    context.close()


@pytest.mark.parametrize(("language", "size"), [("en", "phone"), ("it", "desktop")])
def test_the_timeout_bot_is_told_and_the_seat_taken_back(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    size: str,
) -> None:
    """With "a bot plays their cards": after a timeout the table says a bot played for
    the person and offers "Take my seat back"; once the bot holds the seat (three timeouts
    in a row), the turn line is not "Your turn" and the hand is not playable; taking the
    seat back (POST .../return) gives the turn back."""
    words = {
        "en": (
            "a bot played a card for you",
            "a bot holds your seat",
            "Your turn: choose a card",
            "A bot is playing your card",
        ),
        "it": (
            "un bot ha giocato una carta per te",
            "un bot occupa il tuo posto",
            "Tocca a te: scegli una carta",
            "Un bot gioca la tua carta",
        ),
    }[language]
    match, context, page, errors = timed_table_after_a_card(
        chromium,
        live_server,
        people,
        TimeControl(per_move_seconds=60, on_timeout="bot"),
        language,
    )
    page.set_viewport_size(SIZES[size]["viewport"])
    assert page.locator("#take-back").count() == 1 and page.locator("#take-back").is_hidden()
    assert run_out_of_time(match) == "bot"
    page.wait_for_selector("#away-note:not([hidden])", timeout=10000)
    assert words[0] in page.inner_text("#away-note")
    assert page.locator("#take-back").is_visible()
    shots(page, f"{language}-1-a-bot-played-for-you")

    # Three timeouts in a row: the bot holds the seat (set here as the clock leaves it).
    wait_turn_or_end(page)
    Seat.objects.filter(match=match, number=0).update(away=True, bot_holds=True, timeouts_in_row=3)
    forget_snapshots()
    page.reload()
    page.wait_for_selector("#away-note:not([hidden])", timeout=10000)
    assert words[1] in page.inner_text("#away-note")
    assert page.get_attribute("#play", "data-my-turn") == "0"
    assert page.locator('#hand button[aria-disabled="false"]').count() == 0
    assert page.inner_text("#turn") == words[3]
    shots(page, f"{language}-2-the-bot-holds-the-seat")

    page.click("#take-back")
    page.wait_for_selector("#away-note[hidden]", state="attached", timeout=10000)
    assert page.locator("#take-back").is_hidden()
    seat = Seat.objects.get(match=match, number=0)
    assert (seat.away, seat.bot_holds) == (False, False)
    page.wait_for_selector(MY_TURN, state="attached", timeout=10000)
    assert page.inner_text("#turn") == words[2]
    shots(page, f"{language}-3-seat-taken-back")
    assert errors == []
    context.close()


def test_another_person_away_is_marked_on_their_seat(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    """bob's seat played by the timeout bot (away), then held by it: alice's table marks
    his seat so."""
    alice, bob = people(username="alice"), people(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    Seat.objects.filter(match=match, number=1).update(away=True)
    forget_snapshots()
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    tags = page.locator("#pos-top .seat-badge .tags")
    page.wait_for_function(
        "() => document.querySelector('#pos-top .seat-badge .tags')?.textContent.includes('away')"
    )
    assert "away: a bot played for them" in tags.inner_text()
    assert page.locator("#away").is_hidden()  # alice's own seat is hers
    Seat.objects.filter(match=match, number=1).update(bot_holds=True)
    forget_snapshots()
    page.reload()
    page.wait_for_function(
        "() => document.querySelector('#pos-top .seat-badge .tags')?.textContent.includes('plays')"
    )
    assert "away: a bot plays for them" in tags.inner_text()
    shots(page, "bob-away")
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("language", "asked", "said"),
    [
        (
            "en",
            "Resign now? Not everyone has played a card yet, so the match will be called off: "
            "unrated, and nobody wins it.",
            "Called off: a player resigned before everyone had played a card",
        ),
        (
            "it",
            "Abbandonare ora? Non tutti hanno ancora giocato una carta, quindi la partita sarà "
            "annullata: non conta per la classifica e nessuno la vince.",
            "Annullata: un giocatore ha abbandonato prima che tutti giocassero una carta",
        ),
    ],
    ids=["en", "it"],
)
def test_resigning_before_everyone_played_says_the_match_is_called_off(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    asked: str,
    said: str,
) -> None:
    """Before every person has played a card the server calls a resigned match off: the
    confirmation says so, and the end says why."""
    alice = people(username="alice")
    match = bot_match(alice)
    context = session_context(chromium, live_server, alice, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    messages: list[str] = []

    def answer(dialog: Any) -> None:
        messages.append(dialog.message)
        dialog.accept()

    page.on("dialog", answer)
    page.click("#resign")
    page.wait_for_selector('#play[data-state="match-over"]', state="attached", timeout=10000)
    assert messages == [asked]
    match.refresh_from_db()
    assert (match.status, match.end_reason) == ("aborted", "aborted")
    assert page.inner_text("#end-result") == said
    shots(page, f"{language}-called-off")
    page.keyboard.press("Escape")
    page.wait_for_selector("#end-dialog:not([open])", state="attached")
    assert page.inner_text("#turn") == said
    # Focus on the table's next step (here the lobby: no rematch of a called-off match).
    focused = "(id) => document.activeElement && document.activeElement.id === id"
    page.wait_for_function(focused, arg="table-lobby", timeout=3000)
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("language", "size", "said"),
    [
        ("en", "phone", "Ended: you did not play for too long. You lost the match."),
        ("it", "desktop", "Finita: non hai giocato troppo a lungo. Hai perso la partita."),
    ],
    ids=["en-phone", "it-desktop"],
)
def test_a_match_lost_by_idling_is_told_as_a_loss_and_focus_stays_on_the_table(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    size: str,
    said: str,
) -> None:
    """An untimed match whose person did not play for MATCH_IDLE_HOURS is lost
    (end_reason "abandoned", the other side wins): not "called off". Closed with Escape,
    the dialog leaves the focus on the table's next step (Rematch), not on the page."""
    alice = people(username="alice")
    match = bot_match(alice)
    context = session_context(chromium, live_server, alice, locale=language, **SIZES[size])
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
    assert wait_turn_or_end(page) == "playing"
    assert run_out_of_time(match) == "forfeit"
    match.refresh_from_db()
    assert (match.status, match.end_reason, match.winner_team) == ("finished", "abandoned", 1)
    page.wait_for_selector('#play[data-state="match-over"]', state="attached", timeout=15000)
    assert page.inner_text("#end-result") == said
    shots(page, f"{language}-{size}-1-lost-by-idling")
    page.keyboard.press("Escape")
    page.wait_for_selector("#end-dialog:not([open])", state="attached")
    assert page.inner_text("#turn") == said
    focused = "(id) => document.activeElement && document.activeElement.id === id"
    page.wait_for_function(focused, arg="table-rematch", timeout=3000)
    shots(page, f"{language}-{size}-2-after-escape")
    assert errors == []
    context.close()


def test_the_live_clock_never_shows_more_time_than_there_is(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    """A 10 s clock counts down from the deadline, rounded down, redrawn often: it never
    shows more than the time left (the server's seconds_left is rounded up)."""
    match, context, page, errors = timed_table_after_a_card(
        chromium, live_server, people, TimeControl(per_move_seconds=10)
    )
    page.wait_for_selector(MY_TURN, state="attached")
    deadline = Match.objects.get(pk=match.pk).deadline
    assert deadline is not None
    samples = []
    for _ in range(25):
        before = time.time()
        text = page.inner_text("#clock-time")
        found = re.search(r"(\d+):(\d\d)", text)
        assert found, text
        shown = int(found.group(1)) * 60 + int(found.group(2))
        left = deadline.timestamp() - before
        samples.append((round(left, 2), shown))
        page.wait_for_timeout(130)
    # Drawn every 200 ms at most late: shown <= what was left when it was drawn.
    assert all(shown <= left + 0.25 for left, shown in samples), samples
    assert any(shown >= left - 1.3 for left, shown in samples), samples  # not far behind
    shots(page, "clock")
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("language", "first", "then"),
    [
        ("en", "First card: 30 s, else called off", "5 s per move, or the match is lost"),
        (
            "it",
            "Prima carta: 30 s, o è annullata",
            None,
        ),
    ],
    ids=["en", "it"],
)
def test_the_first_card_has_its_own_window_on_the_clock(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    first: str,
    then: str | None,
) -> None:
    """A 5 s clock gives a person's first card 30 s, and running out of it calls the match
    off: the clock's rule says so while that card is due, and the usual rule after."""
    alice = people(username="alice")
    match = bot_match(alice, time_control=TimeControl(per_move_seconds=5))
    context = session_context(chromium, live_server, alice, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    assert page.inner_text("#clock-rule") == first
    assert "0:2" in page.inner_text("#clock-time")  # about 30 s, not 5
    shots(page, f"{language}-first-card")
    play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
    if then:
        page.wait_for_function(
            "(t) => document.getElementById('clock-rule').textContent === t", arg=then
        )
    assert errors == []
    context.close()


@pytest.mark.parametrize(("language", "size"), [("en", "phone"), ("it", "desktop")])
def test_a_rematch_the_other_person_proposes_shows_live_and_is_accepted(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    size: str,
) -> None:
    """alice proposes a rematch of their finished match: bob's table (open on its end)
    shows it without a reload, with a button that accepts it (the API's rematch call)."""
    alice, bob = people(username="alice"), people(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    Match.objects.filter(pk=match.pk).update(
        status="finished", end_reason="resigned", winner_team=0
    )
    forget_snapshots()
    context = session_context(chromium, live_server, bob, locale=language, **SIZES[size])
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    page.wait_for_selector('#play[data-state="match-over"]', state="attached", timeout=10000)
    assert page.locator("#end-rematch-note").is_hidden()
    new = rematch_propose(match_id=match.pk, user=alice)
    page.wait_for_selector("#end-rematch-note:not([hidden])", timeout=10000)
    proposed, accept = {
        "en": ("alice proposes a rematch.", "Accept the rematch"),
        "it": ("alice propone la rivincita.", "Accetta la rivincita"),
    }[language]
    assert page.inner_text("#end-rematch-note") == proposed
    assert page.inner_text("#rematch") == accept
    shots(page, f"{language}-1-proposed-in-the-dialog")
    page.keyboard.press("Escape")
    assert page.inner_text("#rematch-note") == proposed
    assert page.inner_text("#table-rematch") == accept
    shots(page, f"{language}-2-proposed-on-the-table")
    page.click("#table-rematch")
    page.wait_for_url(f"**/play/{new.pk}/")
    new.refresh_from_db()
    assert new.status == "active"
    page.wait_for_selector('#play[data-status="active"]', state="attached")
    assert errors == []
    context.close()
