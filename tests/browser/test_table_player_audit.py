"""The table after a second outside player audit (2026-12, phone and desktop, English and
Italian): the away banner keeps the whole table on a phone's screen, the score is told to a
screen reader as a sentence and only when it changed, the resign question names the
opponent of a 2-player match, the last trick says who played each card, the clock of a
match that is over shows no rule, and the end of a match says when a bot played for the
person.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games import rules
from games.clocks.services import TimeControl
from games.matches.services import SeatSpec, match_create
from games.models import Match, Seat
from tests.browser.conftest import DESKTOP, PHONE, boxes_outside_viewport, session_context
from tests.browser.test_play_pages import (
    MY_TURN,
    TABLE_PARTS,
    errors_of,
    play_card,
    wait_turn_or_end,
)
from tests.browser.test_play_table_flow import run_out_of_time, timed_table_after_a_card
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


# --- The score, as a screen reader hears it -------------------------------------------------

# Each time one of the score's numbers is written: [id, text before, text after]; and each
# text the score's live region is given.
WATCH_SCORE = """() => {
  window.rewrites = [];
  window.scoreSaid = [];
  for (const id of ['score-us', 'score-them', 'points-us', 'points-them']) {
    const el = document.getElementById(id);
    let before = el.textContent;
    new MutationObserver(() => {
      window.rewrites.push([id, before, el.textContent]);
      before = el.textContent;
    }).observe(el, {childList: true, characterData: true, subtree: true});
  }
  const news = document.getElementById('score-news');
  if (news) {
    new MutationObserver(() => window.scoreSaid.push(news.textContent))
      .observe(news, {childList: true, characterData: true, subtree: true});
  }
}"""

# Whether an element is in a live region (its own role or aria-live, or an ancestor's).
IN_LIVE_REGION = """(id) => {
  for (let el = document.getElementById(id); el; el = el.parentElement) {
    const live = el.getAttribute('aria-live');
    if (live === 'off') return false;
    if (live) return true;
    if (el.matches('output, [role=status], [role=log], [role=alert]')) return true;
  }
  return false;
}"""


@pytest.mark.parametrize(
    ("language", "points", "deals"),
    [
        ("en", "Points so far: you {}, bob {}.", "Deals won: you {}, bob {}."),
        ("it", "Punti finora: tu {}, bob {}.", "Mani vinte: tu {}, bob {}."),
    ],
    ids=["en", "it"],
)
def test_the_score_is_told_as_a_sentence_only_when_it_changes(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    monkeypatch: pytest.MonkeyPatch,
    language: str,
    points: str,
    deals: str,
) -> None:
    """The numbers of the score and of the points so far are no live regions of their own
    (a screen reader said a bare "13", "0"), and none is rewritten unchanged; one polite
    live region says, as a sentence, the points after a trick that changed them and the
    deals won after a deal."""
    # One deal for both languages, which one side wins (a drawn deal changes no score).
    monkeypatch.setattr(rules, "new_seed", lambda: "score-told-1")
    alice, bob = people(username="alice"), people(username="bob")
    match = games.person_match(alice, bob, format="first_to_2")
    games.play(match, 34)
    context = session_context(chromium, live_server, alice, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    page.wait_for_selector('#play[data-state="playing"]', state="attached")
    for number in ("score-us", "score-them", "points-us", "points-them"):
        assert not page.evaluate(IN_LIVE_REGION, number), number
    snapshot = page.locator("#play").aria_snapshot()
    assert not re.search(r'^\s*- status( "[^"]*")?: "?\d+"?\s*$', snapshot, re.M), snapshot
    assert page.get_attribute("#score-news", "aria-live") == "polite"
    page.evaluate(WATCH_SCORE)
    # The points shown at first, then after each ply.
    seen = [(page.inner_text("#points-us"), page.inner_text("#points-them"))]
    for _ply in range(34, 40):
        ply = page.get_attribute("#play", "data-ply")
        if page.get_attribute("#play", "data-my-turn") == "1":
            page.locator('#hand button[aria-disabled="false"]').first.click()
        else:
            games.play(match, 1)
        page.wait_for_function(
            "ply => document.getElementById('play').dataset.ply !== ply"
            " || document.getElementById('play').dataset.state !== 'playing'",
            arg=ply,
            timeout=15000,
        )
        page.wait_for_selector('#play:not([data-held="1"])', state="attached")
        seen.append((page.inner_text("#points-us"), page.inner_text("#points-them")))
    page.wait_for_selector('#play[data-state="deal-over"]', state="attached", timeout=15000)
    rewrites = page.evaluate("window.rewrites")
    assert [r for r in rewrites if r[1] == r[2]] == [], rewrites
    said = " ".join(page.evaluate("window.scoreSaid"))
    # Each change of the points (a trick with points taken) is said, with both sides.
    changes = [p for i, p in enumerate(seen) if i and p != seen[i - 1]]
    assert changes, seen
    for us, them in changes:
        assert points.format(us, them) in said, (said, seen)
    won = (page.inner_text("#score-us"), page.inner_text("#score-them"))
    assert won in {("1", "0"), ("0", "1")}, won
    assert deals.format(*won) in said, said
    assert re.fullmatch(r"[^\d]*(\d+[^\d]+){2,}", said), said  # sentences, no bare numbers
    assert errors == []
    context.close()


# --- The resign question ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "players", "asked"),
    [
        ("en", 2, "Resign the match? bot-random wins it."),
        ("it", 2, "Abbandonare la partita? La vince bot-random."),
        ("en", 4, "Resign the match? The other team wins it."),
        ("it", 4, "Abbandonare la partita? La vince la squadra avversaria."),
    ],
    ids=["en-2", "it-2", "en-4", "it-4"],
)
def test_the_resign_question_names_who_wins(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    language: str,
    players: int,
    asked: str,
) -> None:
    """Once everyone has played a card, resigning asks first: in a 2-player match the
    opponent wins it (not "the other team"); with 4 players the other team does. Saying
    no leaves the match as it was."""
    alice = people(username="alice")
    match = bot_table(alice, players=players)
    context = session_context(chromium, live_server, alice, locale=language, **DESKTOP)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
    assert wait_turn_or_end(page) == "playing"
    questions: list[str] = []

    def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", answer)
    page.click("#resign")
    assert questions == [asked]
    match.refresh_from_db()
    assert match.status == "active"
    assert errors == []
    context.close()


# --- The last trick ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "size", "players"),
    [("en", "desktop", 2), ("it", "phone", 4), ("en", "phone", 4), ("it", "desktop", 2)],
    ids=["en-desktop-2", "it-phone-4", "en-phone-4", "it-desktop-2"],
)
def test_the_last_trick_says_who_played_each_card(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    size: str,
    players: int,
) -> None:
    """The "Last trick" dialog shows each card over the name of the seat that played it,
    in the order played, the card that took the trick marked, and who took it."""
    alice = people(username="alice")
    match = bot_table(alice, players=players, format="single")
    context = session_context(chromium, live_server, alice, locale=language, **SIZES[size])
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    play_card(page, page.locator('#hand button[aria-disabled="false"]').first.click)
    assert wait_turn_or_end(page) == "playing"
    detail = page.evaluate(
        "async (url) => (await fetch(url, {credentials: 'same-origin'})).json()",
        f"/api/v1/matches/{match.pk}",
    )
    trick = detail["current_deal"]["tricks"][-1]
    names = [detail["seats"][seat]["user"] for seat in trick["seats"]]
    assert "alice" in names and len(names) == players
    page.click("#show-last")
    page.wait_for_selector("#last-dialog[open]")
    figures = page.locator("#last-cards figure")
    assert figures.count() == players
    captions = page.locator("#last-cards figure figcaption")
    assert [c.inner_text() for c in captions.all()] == names
    cards = page.locator("#last-cards figure .card")
    assert [c.get_attribute("data-card") for c in cards.all()] == trick["cards"]
    winner = page.locator("#last-cards figure.winner figcaption")
    assert winner.count() == 1
    assert winner.inner_text() == detail["seats"][trick["winner"]]["user"]
    taken = {"en": "Taken by {}, {} points", "it": "Presa da {}, {} punti"}[language]
    assert page.inner_text("#last-caption") == taken.format(winner.inner_text(), trick["points"])
    assert boxes_outside_viewport(page, "#last-dialog, #last-dialog figure") == []
    shots(page, "last-trick")
    page.keyboard.press("Escape")
    assert errors == []
    context.close()


# --- The clock of a match that is over --------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "size", "rule"),
    [("en", "phone", "per move"), ("it", "desktop", "a mossa")],
    ids=["en-phone", "it-desktop"],
)
def test_the_clock_shows_no_rule_once_the_match_is_over(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    size: str,
    rule: str,
) -> None:
    """A match lost on time: the clock area no longer says "60 s per move, or the match is
    lost" (a rule of a match still played) with no time beside it; after a reload too."""
    match, context, page, errors = timed_table_after_a_card(
        chromium, live_server, people, TimeControl(per_move_seconds=60), language
    )
    page.set_viewport_size(SIZES[size]["viewport"])
    assert page.locator("#clock").is_visible()
    assert rule in page.inner_text("#clock-rule")
    assert run_out_of_time(match) == "forfeit"
    page.wait_for_selector('#play[data-state="match-over"]', state="attached", timeout=15000)
    page.keyboard.press("Escape")
    page.wait_for_selector("#end-dialog:not([open])", state="attached")
    assert page.locator("#clock").is_hidden()
    assert rule not in page.inner_text("#play")
    shots(page, "after-the-end")
    page.reload()
    page.wait_for_selector('#play[data-state="match-over"]', state="attached")
    assert page.locator("#clock").is_hidden()
    assert rule not in page.inner_text(".status")
    assert errors == []
    context.close()


# --- The end of a match a bot played for the person -----------------------------------------


def time_out_when_due(match: Match) -> str | None:
    """The person's (seat 0's) deadline, once it is their turn with one, passes now."""
    import time

    for _ in range(100):
        match.refresh_from_db()
        if match.status != "active":
            return None
        if match.to_move_seat == 0 and match.deadline is not None:
            return run_out_of_time(match)
        time.sleep(0.1)
    raise AssertionError("the person's turn never came")


@pytest.mark.parametrize(
    ("language", "timeouts", "said"),
    [
        ("en", 1, "A bot played for you after your time ran out."),
        ("it", 1, "Un bot ha giocato per te dopo che il tuo tempo era scaduto."),
        ("en", 3, "A bot played for you after your time ran out."),
    ],
    ids=["en-once", "it-once", "en-three-times"],
)
def test_the_end_says_a_bot_played_for_the_person(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    quick_tricks: None,
    language: str,
    timeouts: int,
    said: str,
) -> None:
    """With "a bot plays their cards": the person's time runs out once, or three times in
    a row (against bots alone the bot still plays only each turn whose time ran out, and
    never holds the seat: games.clocks.services._someone_waits), then they resign. The end
    dialog and, once it is closed, the table say a bot played for them, beside the result;
    a match with no timeout says nothing of the kind. (The words for a seat the bot held,
    with another person at the table, are the same code path, ``T.end_bot_held``.)"""
    match, context, page, errors = timed_table_after_a_card(
        chromium,
        live_server,
        people,
        TimeControl(per_move_seconds=60, on_timeout="bot", bot_level="random"),
        language,
    )
    for _ in range(timeouts):
        assert time_out_when_due(match) == "bot"
    assert not Seat.objects.get(match=match, number=0).bot_holds
    wait_turn_or_end(page)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#resign")
    page.wait_for_selector('#play[data-state="match-over"]', state="attached", timeout=30000)
    assert page.inner_text("#end-bot-note") == said
    assert page.locator("#end-bot-note").is_visible()
    shots(page, f"{language}-end-dialog")
    page.keyboard.press("Escape")
    page.wait_for_selector("#end-dialog:not([open])", state="attached")
    assert page.inner_text("#bot-note") == said
    assert boxes_outside_viewport(page, "#bot-note, .actions button, .actions a") == []
    shots(page, f"{language}-after-the-dialog")
    assert errors == []
    context.close()


def test_the_end_of_a_match_without_timeouts_says_no_bot_played(
    chromium: Any, live_server: Any, people: Callable[..., User]
) -> None:
    match, context, page, errors = timed_table_after_a_card(
        chromium, live_server, people, TimeControl(per_move_seconds=60, on_timeout="bot")
    )
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#resign")
    page.wait_for_selector('#play[data-state="match-over"]', state="attached")
    assert "You lost the match." in page.inner_text("#end-result")
    assert page.locator("#end-bot-note").is_hidden()
    assert page.locator("#bot-note").is_hidden()
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "This match is private to its players."),
        ("it", "Questa partita è riservata ai suoi giocatori."),
    ],
    ids=["en", "it"],
)
def test_a_stranger_at_a_private_table_is_told_so_under_403(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    said: str,
) -> None:
    """The page answers 403 as the API does (it answered 200), and still says why."""
    from games.matches.services import SeatSpec, match_create

    alice, carol = people(username="alice"), people(username="carol")
    people(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    context = session_context(chromium, live_server, carol, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    response = page.goto(f"{live_server.url}/play/{match.pk}/")
    assert response is not None and response.status == 403
    page.get_by_text(said).wait_for()
    # No empty table with a "you 0" score that is nobody's; the way back to the lobby.
    assert page.locator("#felt").is_hidden() and page.locator(".status").is_hidden()
    assert page.locator("#table-lobby").is_visible()
    shots(page, f"{language}-stranger")
    assert errors == []
    context.close()
