"""The table's flow as a player sees it (an outside player audit, 2026-12): a trick a bot
takes stays in view before the bot's next lead, a deal's last trick before its end, the
end of a match told as it happened (a resignation, a loss on time), the table after the
end dialog, an invitation answered at the table, a late click after a bot played for a
player out of time, the lobby's errors on a phone, and what a screen reader is told.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from accounts.models import User
from games.clocks.services import TimeControl, timeout_enforce
from games.matches.services import SeatSpec, match_create
from games.models import Deal, Match
from tests.browser.conftest import PHONE, boxes_outside_viewport, errors_of, session_context
from tests.browser.test_play_pages import MY_TURN, play_card, wait_turn_or_end

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def bot_match(user: User, *, format: str = "first_to_2", **kw: Any) -> Match:
    return match_create(
        creator=user, players=2, format=format, seats=[SeatSpec("bot", "random")], **kw
    )


# Every state of the trick area as it is drawn (a MutationObserver's record, after each
# whole drawing): [ms, deal number, ["Ad/t/w", ...]] (t: taken, w: the trick's winner), and
# [ms, "open"] when the end dialog opens.
WATCH_TRICK = """() => {
  window.trickLog = [];
  const trick = document.getElementById('trick');
  const play = document.getElementById('play');
  const snap = () => {
    const cards = [...trick.querySelectorAll('.card')].map((c) => c.dataset.card
      + (c.classList.contains('taken') ? '/t' : '') + (c.classList.contains('winner') ? '/w' : ''));
    const last = window.trickLog[window.trickLog.length - 1];
    const key = JSON.stringify([play.dataset.deal, cards]);
    const at = performance.now();
    if (!last || last[3] !== key) window.trickLog.push([at, play.dataset.deal, cards, key]);
  };
  snap();
  new MutationObserver(snap).observe(trick, {childList: true, subtree: true, attributes: true});
  const dialog = document.getElementById('end-dialog');
  const opened = () => { if (dialog.open) window.trickLog.push([performance.now(), 'open']); };
  new MutationObserver(opened).observe(dialog, {attributes: true, attributeFilter: ['open']});
}"""


def tricks_of(deal: Deal, games: Any) -> list[tuple[list[str], list[int], int]]:
    """The deal's tricks: (cards, the seat of each, the winner)."""
    return [
        ([c.code for c in t.cards], [(t.leader + i) % 2 for i in range(len(t.cards))], t.winner)
        for t in games.state(deal).tricks
    ]


WATCH_MARKS_WHILE_HELD = """() => {
  // Every 50 ms while a trick taken is held in view: the seats marked to play.
  window.heldMarks = [];
  setInterval(() => {
    if (document.getElementById('play').dataset.held !== '1') return;
    window.heldMarks.push([...document.querySelectorAll('.seat-badge.turn')].map((e) => {
      const mark = e.querySelector('.turn-mark');
      return mark && mark.textContent ? e.dataset.seat : 'no mark';
    }));
  }, 50);
}"""


def test_a_trick_the_bot_takes_stays_in_view_before_its_next_lead(
    chromium: Any, live_server: Any, people: Callable[..., User], games: Any, shots: Any
) -> None:
    """Against a bot that takes a trick and leads the next at once: the trick taken is
    drawn whole, its winner marked, for about 1.5 s before the bot's lead (the person not
    acting); the trick area never mixes cards of two tricks; a deal's last trick shows
    before the end dialog covers it, and the next deal is not drawn under the dialog."""
    alice = people(username="alice")
    match = bot_match(alice)
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    page.wait_for_selector("#play[data-status]", state="attached")
    page.evaluate(WATCH_TRICK)
    held_shot = False
    page.evaluate(WATCH_MARKS_WHILE_HELD)
    for _turn in range(40):
        state = wait_turn_or_end(page)
        if state != "playing":
            break
        # The person waits for the table to settle (a trick taken given time to be seen).
        page.wait_for_selector('#play:not([data-held="1"])', state="attached")
        play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
        if not held_shot:
            # The first time the bot takes a trick and leads again: the table held.
            try:
                page.wait_for_selector('#play[data-held="1"]', state="attached", timeout=800)
            except PlaywrightTimeout:
                pass
            else:
                shots(page, "1-trick-taken-by-the-bot")
                held_shot = True
        if page.get_attribute("#play", "data-state") == "ending":
            page.wait_for_timeout(700)
            shots(page, "2-last-trick-before-the-deal-end")
    else:
        raise AssertionError("the first deal did not end")
    assert state == "deal-over", state
    shots(page, "3-deal-end-dialog")
    log = page.evaluate("window.trickLog")
    first = Deal.objects.get(match=match, number=1)
    tricks = tricks_of(first, games)
    bot_seat = 1

    # Never cards of two tricks at once: each drawing is (part of) one trick of its deal.
    trick_sets = [set(cards) for cards, _seats, _winner in tricks]
    drawings = [entry for entry in log if entry[1] != "open"]
    for _at, number, cards, _key in drawings:
        if number != "1":
            continue
        codes = {c.split("/")[0] for c in cards}
        assert any(codes <= s for s in trick_sets), (cards, log)

    # Each trick the bot took and then led from: drawn whole, taken, the bot's card marked,
    # and left in view at least about 1.5 s (the person did not act meanwhile).
    def taken_drawing(trick: Any) -> list[str]:
        cards, seats, winner = trick
        return sorted(
            c + "/t" + ("/w" if s == winner else "") for c, s in zip(cards, seats, strict=True)
        )

    checked = 0
    for index, trick in enumerate(tricks[:-1]):
        if trick[2] != bot_seat:
            continue
        wanted = taken_drawing(trick)
        at = [i for i, e in enumerate(drawings) if e[1] == "1" and sorted(e[2]) == wanted]
        assert at, (index, wanted, log)
        i = at[0]
        following = drawings[i + 1][0] if i + 1 < len(drawings) else float("inf")
        assert following - drawings[i][0] >= 1300, (index, drawings[i], drawings[i + 1])
        checked += 1
    assert checked >= 2, checked
    assert held_shot
    # While a trick taken is held, the seat marked to play is the bot that took it (it
    # leads next), not the person whose turn the bot's lead, waiting to be drawn, made it.
    held_marks = page.evaluate("window.heldMarks")
    assert held_marks and all(marks == [str(bot_seat)] for marks in held_marks), held_marks

    # The deal's last trick: drawn taken before the dialog opened, long enough to be seen,
    # and the dialog opened over the finished deal, not the next one.
    opened = next(i for i, e in enumerate(log) if e[1] == "open")
    last_drawing = log[opened - 1]
    assert last_drawing[1] == "1", log[opened - 3 : opened + 1]
    assert sorted(last_drawing[2]) == taken_drawing(tricks[-1]), log[opened - 3 : opened + 1]
    assert log[opened][0] - last_drawing[0] >= 1300, log[opened - 3 : opened + 1]
    assert page.locator("#hand button").count() == 0  # deal 2's hand is not drawn yet

    # Closed, the dialog gives way to the next deal.
    page.click("#next-deal")
    page.wait_for_selector('#play[data-deal="2"]', state="attached")
    page.wait_for_selector(MY_TURN, state="attached")
    assert page.locator("#hand button").count() == 3
    assert errors == []
    context.close()


def run_out_of_time(match: Match) -> str | None:
    """The seat to move's deadline passes now (as the clocks' sweep would find it)."""
    from django.db.models.functions import Now

    Match.objects.filter(pk=match.pk).update(deadline=Now() - timedelta(seconds=1))
    return timeout_enforce(match_id=match.pk)


def timed_table_after_a_card(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    time_control: TimeControl,
    language: str = "en",
) -> tuple[Match, Any, Any, list[str]]:
    """alice's table of a timed match against a bot, on a phone, once she has played a
    card (running out before one's first card calls the match off instead) and it is her
    turn again: the match, the browser context, the page and its errors."""
    alice = people(username="alice")
    match = bot_match(alice, time_control=time_control)
    context = session_context(chromium, live_server, alice, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
    assert wait_turn_or_end(page) == "playing"
    page.wait_for_selector('#play:not([data-held="1"])', state="attached")
    return match, context, page, errors


@pytest.mark.parametrize(
    ("language", "said", "taken_by_me"),
    [
        ("en", "Ended on time: you ran out of time. You lost the match.", "Cards you took"),
        (
            "it",
            "Finita per tempo: hai esaurito il tempo. Hai perso la partita.",
            "Carte prese da te",
        ),
    ],
    ids=["en", "it"],
)
def test_a_loss_on_time_is_told_as_such_and_the_end_stays_on_the_table(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    said: str,
    taken_by_me: str,
) -> None:
    """A match lost on time (end_reason "timeout") is not "ended by a resignation"; the
    cards one took are "Carte prese da te" (not "da Tu"); after Escape the status line
    says how the match ended (not the raw word "finished") and Rematch and Back to the
    lobby stay on the table."""
    match, context, page, errors = timed_table_after_a_card(
        chromium, live_server, people, TimeControl(per_move_seconds=60), language
    )

    assert run_out_of_time(match) == "forfeit"

    page.wait_for_selector('#play[data-state="match-over"]', state="attached", timeout=15000)
    match.refresh_from_db()
    assert (match.end_reason, match.winner_team) == ("timeout", 1)
    assert page.inner_text("#end-result") == said
    mine = page.locator("#end-sides .side.us .taken-cards")
    assert mine.get_attribute("aria-label") == taken_by_me
    shots(page, "1-end-dialog")

    page.keyboard.press("Escape")
    page.wait_for_selector("#end-dialog:not([open])", state="attached")
    assert page.inner_text("#turn") == said
    assert page.locator("#table-rematch").is_visible()
    assert page.locator("#table-lobby").is_visible()
    assert page.locator("#resign").is_hidden()
    assert boxes_outside_viewport(page, ".actions button, .actions a") == []
    shots(page, "2-after-escape")
    # Rematch from the table, as from the dialog.
    page.click("#table-rematch")
    page.wait_for_url(lambda url: str(match.pk) not in url and "/play/" in url)
    assert errors == []
    context.close()


def test_an_invited_player_joins_or_declines_at_the_table(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    """Bob, invited by Alice, opens the match (from "My matches"): he is drawn at the
    bottom as "you", Alice at the top as his opponent, and the table offers Join and
    Decline; Join seats him and the match starts; a declined invitation calls it off."""
    alice, bob = people(username="alice"), people(username="bob")
    invited = match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")]
    )
    context = session_context(chromium, live_server, bob, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{invited.pk}/")
    page.wait_for_selector("#join:not([hidden])")
    assert page.inner_text("#turn") == "alice invites you to this match: join or decline."
    assert page.inner_text("#me-row .seat-badge .name") == "bob"
    assert page.inner_text("#me-row .seat-badge .tags").startswith("you")
    assert page.inner_text("#pos-top .seat-badge .name") == "alice"
    assert page.inner_text("#pos-top .seat-badge .tags").startswith("opponent")
    assert page.locator("#decline").is_visible()
    shots(page, "1-invited")
    page.click("#join")
    page.wait_for_selector('#play[data-status="active"]', state="attached")
    assert page.locator("#join").is_hidden() and page.locator("#decline").is_hidden()
    invited.refresh_from_db()
    assert invited.status == "active"
    assert page.inner_text("#me-row .seat-badge .name") == "bob"
    shots(page, "2-joined")

    declined = match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")]
    )
    page.goto(f"{live_server.url}/play/{declined.pk}/")
    page.wait_for_selector("#decline:not([hidden])")
    page.click("#decline")
    page.wait_for_selector('#play[data-status="aborted"]', state="attached")
    assert page.inner_text("#turn") == "Called off: the invitation was declined"
    assert page.locator("#join").is_hidden() and page.locator("#table-lobby").is_visible()
    assert page.inner_text("#me-row .seat-badge .name") == "bob"  # still his side of it
    declined.refresh_from_db()
    assert (declined.status, declined.end_reason) == ("aborted", "declined")
    shots(page, "3-declined")
    assert errors == []
    context.close()


def test_a_late_click_after_a_bot_played_for_the_person_says_so(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    """With "a bot plays their cards" on timeout, the bot plays the late person's card;
    their click that comes after is told their time ran out and a bot played for them."""
    match, context, page, errors = timed_table_after_a_card(
        chromium, live_server, people, TimeControl(per_move_seconds=60, on_timeout="bot")
    )
    # The page keeps what it shows until the click: no stream, and reads answer "nothing
    # changed" (a phone that looked away, a slow network), while the bot plays alice's card.
    page.route("**/api/v1/matches/*/stream*", lambda route: route.abort())
    page.route(
        f"**/api/v1/matches/{match.pk}",
        lambda route: (
            route.fulfill(status=304) if route.request.method == "GET" else route.continue_()
        ),
    )
    page.wait_for_timeout(1000)  # a stream already open has ended, its reconnection refused
    assert run_out_of_time(match) == "bot"
    page.unroute(f"**/api/v1/matches/{match.pk}")
    page.locator('#hand button[aria-disabled="false"]').first.click()
    page.wait_for_selector("#toast:not([hidden])")
    assert page.inner_text("#toast") == (
        "Your time ran out: a bot played for you. Look again and choose."
    )
    shots(page, "late-click")
    assert errors == []
    context.close()


def test_the_lobby_says_what_is_wrong_next_to_the_button_on_a_phone(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    """An invitation to a user that does not exist, or to oneself: the error says which
    and why, beside the button pressed, on screen and focused (not at the page's top,
    screens above)."""
    people(username="alice")
    context = session_context(chromium, live_server, User.objects.get(username="alice"), **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/")
    page.wait_for_selector('#my-list[aria-busy="false"]')
    for name, said in (
        ("nosuchuser_zz", "No player is called nosuchuser_zz: check the user name."),
        ("alice", "You have a seat already: invite other people."),
    ):
        page.fill("#invite", name)
        page.click("#open-table")
        error = page.locator("#vs-people .form-error")
        # The line may still show the error before (the second name): wait for this one.
        page.wait_for_function(
            "([selector, said]) => document.querySelector(selector)?.innerText === said",
            arg=["#vs-people .form-error", said],
            timeout=10000,
        )
        assert error.is_visible() and error.inner_text() == said
        assert page.evaluate("document.activeElement.classList.contains('form-error')")
        assert boxes_on_screen(page, "#vs-people .form-error"), "the error is off screen"
        shots(page, f"error-{name}")
    assert page.locator("#lobby-error").is_hidden()
    assert errors == []
    context.close()


def boxes_on_screen(page: Any, selector: str) -> bool:
    """Whether the element is wholly inside the viewport as the page is scrolled now."""
    return bool(
        page.evaluate(
            """(selector) => {
              const r = document.querySelector(selector).getBoundingClientRect();
              return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
            }""",
            selector,
        )
    )


def test_a_screen_reader_hears_the_cards_others_play_and_who_takes_the_trick(
    chromium: Any, live_server: Any, people: Callable[..., User], games: Any
) -> None:
    """#trick-news, a polite live region, says the bot's card and who took the trick."""
    alice = people(username="alice")
    match = bot_match(alice, format="single")
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    start = int(page.get_attribute("#play", "data-ply") or 0)
    news = page.locator("#trick-news")
    assert news.get_attribute("aria-live") == "polite"
    page.evaluate(
        """() => { window.said = [];
          const el = document.getElementById('trick-news');
          new MutationObserver(() => window.said.push(el.textContent))
            .observe(el, {childList: true, characterData: true, subtree: true}); }"""
    )
    for _ in range(3):
        play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
        assert wait_turn_or_end(page) == "playing"
    said = " ".join(page.evaluate("window.said"))
    state = games.state(match)
    names = {0: "alice", 1: "bot-random"}
    ply = 0
    for trick in state.tricks[:3]:
        for i, card in enumerate(trick.cards):
            seat = (trick.leader + i) % 2
            # The cards played since the page opened (one on the table then is in view).
            if seat == 1 and ply >= start:
                assert f"{card_name(card.code)}, played by bot-random" in said, said
            ply += 1
        assert f"Taken by {names[trick.winner]}, {trick.points} points" in said, said
    assert errors == []
    context.close()


def card_name(code: str) -> str:
    ranks = {"A": "Ace", "3": "Three", "R": "King", "C": "Knight", "F": "Knave", "7": "Seven"}
    ranks.update({"6": "Six", "5": "Five", "4": "Four", "2": "Two"})
    suits = {"c": "Cups", "d": "Coins", "s": "Swords", "b": "Batons"}
    return f"{ranks[code[0]]} of {suits[code[1]]}"
