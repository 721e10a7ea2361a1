"""The replay page after a third outside audit, in a real headless Chromium, at 1280x800
and 390x844, in English and in Italian:

- the address follows the position (``?ply=N``, the seat kept, replaced rather than
  pushed), so that a copied address opens at the same move;
- an abandoned deal says why it ended (lost on time by whom, resigned by whom), and
  nobody is "to play" at its end;
- a public match's deal still being played, to someone with no seat in it, says that its
  replay opens when it is over in place of an empty table and controls.

Screenshots go to test-artifacts/browser/<test>/."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from accounts.models import User
from games.clocks.services import TimeControl, timeout_enforce
from games.matches.services import SeatSpec, match_create, match_join, match_resign
from games.models import Deal, Match
from tests.browser.conftest import DESKTOP, PHONE, errors_of, session_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = ["en", "it"]
VIEWPORTS = ["desktop", "phone"]


def options_of(language: str, viewport: str) -> dict[str, Any]:
    return {"locale": language, **(PHONE if viewport == "phone" else DESKTOP)}


def a_deal(
    games: Any,
    people: list[User],
    moves: int,
    *,
    public: bool = False,
    time_control: TimeControl | None = None,
) -> Deal:
    creator, others = people[0], people[1:]
    match = match_create(
        creator=creator,
        players=len(people),
        format="single",
        seats=[SeatSpec("user", u.username) for u in others],
        public=public,
        time_control=time_control,
    )
    for user in others:
        match_join(match_id=match.pk, user=user)
    games.play(match, moves)
    return Deal.objects.select_related("match").get(match=match)


def at_ply(page: Any, ply: int) -> None:
    page.wait_for_selector(f'#replay[data-ply="{ply}"]', timeout=5000)


def query_of(page: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def shown(page: Any) -> dict[str, Any]:
    """What the table shows: the cards in each hand and on the table, the points."""
    return page.evaluate(
        """() => ({
          ply: document.getElementById('replay').dataset.ply,
          cards: Array.from(document.querySelectorAll('#table .card')).map(
            (c) => c.dataset.card || 'back'),
          points: [0, 1].map((t) => document.getElementById('points-' + t).textContent),
          label: document.getElementById('ply-label').textContent,
        })"""
    )


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_address_follows_the_position_and_opens_there(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    """Arrows, ▶, End, the slider: each position shown is in the address (?ply=N), the
    seat kept, with no new entry in the history; the address copied into a fresh page
    opens the same position, and the language switch comes back to it. (The address used
    to stay /replay/<id>/, or the ?ply= it was opened with.)"""
    alice, bob = people(username="alice"), people(username="bob")
    deal = a_deal(games, [alice, bob], 40)
    context = session_context(chromium, live_server, alice, **options_of(language, viewport))
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/replay/{deal.pk}/?seat=1")
    at_ply(page, 0)
    history = page.evaluate("history.length")
    page.keyboard.press("ArrowRight")
    at_ply(page, 1)
    assert query_of(page) == {"seat": ["1"], "ply": ["1"]}
    page.click("#next")
    at_ply(page, 2)
    assert query_of(page)["ply"] == ["2"]
    page.keyboard.press("End")
    at_ply(page, 40)
    assert query_of(page)["ply"] == ["40"]
    page.eval_on_selector(
        "#slider", "el => { el.value = 12; el.dispatchEvent(new Event('input')); }"
    )
    at_ply(page, 12)
    assert query_of(page)["ply"] == ["12"]
    page.keyboard.press("ArrowRight")
    at_ply(page, 13)
    assert query_of(page) == {"seat": ["1"], "ply": ["13"]}
    assert page.evaluate("history.length") == history  # replaced, not pushed
    before = shown(page)
    shots(page, f"1-at-13-{language}-{viewport}")
    address = page.url

    # The address in a fresh page: the same position, from the same seat.
    fresh = context.new_page()
    fresh_errors = errors_of(fresh)
    fresh.goto(address)
    at_ply(fresh, 13)
    assert shown(fresh) == before
    assert fresh.input_value("#seat-select") == "1"
    shots(fresh, f"2-opened-{language}-{viewport}")
    fresh.close()

    # The language switch comes back to the same move.
    other = "it" if language == "en" else "en"
    page.click(f'button[name="language"][value="{other}"]')
    page.wait_for_selector(f'html[lang="{other}"]')
    at_ply(page, 13)
    assert query_of(page) == {"seat": ["1"], "ply": ["13"]}
    assert errors == [] and fresh_errors == []
    context.close()


def run_out_of_time(match: Match) -> str | None:
    """The seat to move's deadline passes now (as the clocks' sweep would find it)."""
    from django.db.models.functions import Now

    Match.objects.filter(pk=match.pk).update(deadline=Now() - timedelta(seconds=1))
    return timeout_enforce(match_id=match.pk)


ABANDONED = {
    "en": {
        "timeout": "Abandoned: lost on time by {name}",
        "resigned": "Abandoned: resigned by {name}",
        "old": "Abandoned (the match ended during the deal)",
        "to_play": "to play",
    },
    "it": {
        "timeout": "Interrotta: persa per tempo da {name}",
        "resigned": "Interrotta: abbandono di {name}",
        "old": "Interrotta (la partita è finita durante la mano)",
        "to_play": "di turno",
    },
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_an_abandoned_deal_says_why_it_ended(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    """A deal lost on time and one resigned: the header, the result at the end and the
    log's last line say which and by whom (the match's end_reason, its winner, its
    seat_timed_out event), and nobody is "to play" at the end. (Both used to read
    "Abandoned (the match ended during the deal)" and "alice to play".)"""
    alice, bob = people(username="alice"), people(username="bob")
    words = ABANDONED[language]
    timed = a_deal(games, [alice, bob], 5, time_control=TimeControl(per_move_seconds=60))
    late = games.seat_users(timed.match)[games.state(timed).turn].username
    assert run_out_of_time(timed.match) == "forfeit"
    resigned = a_deal(games, [alice, bob], 5)
    match_resign(match_id=resigned.match_id, user=bob)
    assert Match.objects.get(pk=timed.match_id).end_reason == "timeout"
    assert Match.objects.get(pk=resigned.match_id).end_reason == "resigned"

    context = session_context(chromium, live_server, alice, **options_of(language, viewport))
    page = context.new_page()
    errors = errors_of(page)
    for deal, reason, why in (
        (timed, "timeout", words["timeout"].format(name=late)),
        (resigned, "resigned", words["resigned"].format(name="bob")),
    ):
        page.goto(f"{live_server.url}/replay/{deal.pk}/")
        at_ply(page, 0)
        header = page.inner_text("h1 small")
        assert why in header and words["old"] not in header, header
        assert page.inner_text("#result") == ""
        page.keyboard.press("End")
        at_ply(page, 5)
        assert page.inner_text("#result") == why
        assert page.locator("#log li").last.inner_text() == why
        assert page.locator(".seat.turn").count() == 0
        tags = page.locator(".seat .tag").all_inner_texts()
        assert words["to_play"] not in tags, tags
        shots(page, f"{reason}-{language}-{viewport}", full_page=True)
        # One move back, the deal was still being played: its player to play is marked.
        page.keyboard.press("ArrowLeft")
        at_ply(page, 4)
        assert page.locator(".seat.turn").count() == 1
        assert page.inner_text("#result") == ""
    assert errors == []
    context.close()


NOT_OVER = {
    "en": "This deal is still being played: its replay opens when it is over.",
    "it": "Questa mano è ancora in corso: si potrà rivedere quando sarà finita.",
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_live_deal_to_a_stranger_says_so_in_place_of_the_table(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    """carla, with no seat in a public match, opens its deal still being played: the
    message in place of the table, the View menu, the score and the step controls, and no
    request to the replay API (which would refuse it). (She saw an empty table, a stock of
    "0", an empty View menu, unnamed 0-0 scores and step buttons that did nothing, and
    the message only at the bottom.)"""
    alice, bob, carla = people(username="alice"), people(username="bob"), people(username="carla")
    deal = a_deal(games, [alice, bob], 5, public=True)
    context = session_context(chromium, live_server, carla, **options_of(language, viewport))
    page = context.new_page()
    errors = errors_of(page)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/" in r.url else None)
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    page.wait_for_load_state("networkidle")
    closed = page.locator("#closed")
    assert closed.is_visible() and closed.inner_text() == NOT_OVER[language]
    for gone in ("#table", "#seat-select", ".score", ".controls", "#stock-count", "#log"):
        assert page.locator(gone).count() == 0, gone
    assert page.locator("h1").is_visible()
    # Where the message is: right under the heading, in the first screen.
    box = closed.bounding_box()
    assert box is not None and box["y"] + box["height"] <= page.viewport_size["height"]
    assert asked == []
    shots(page, f"stranger-{language}-{viewport}")
    assert errors == []
    context.close()

    # Its players still step through it from their seat.
    context = session_context(chromium, live_server, bob, **options_of(language, viewport))
    page = context.new_page()
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    at_ply(page, 0)
    assert page.locator("#closed").count() == 0
    context.close()


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_dock_never_covers_your_own_cards_in_a_replay_of_four(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    """A deal of four near its end (move 37), from a player's seat: on load, the score
    and step controls (on a phone, sticky at the bottom) cover none of the player's own
    cards. (On a phone in Italian they covered about 7 px of them.)"""
    names = ["alessandra", "bartolomeo", "costantino", "donatella"]
    players = [people(username=n) for n in names]
    deal = a_deal(games, players, 40)
    context = session_context(chromium, live_server, players[0], **options_of(language, viewport))
    page = context.new_page()
    errors = errors_of(page)
    covered: dict[int, list[float]] = {}
    for ply in range(34, 40):  # each opened afresh: "on load"
        page.goto(f"{live_server.url}/replay/{deal.pk}/?ply={ply}")
        at_ply(page, ply)
        covered[ply] = page.evaluate(
            """() => {
              const dock = document.querySelector('.dock').getBoundingClientRect();
              return Array.from(document.querySelectorAll('.seat.pos-bottom .card')).map((c) => {
                const r = c.getBoundingClientRect();
                const bottom = Math.min(r.bottom, window.innerHeight);
                return Math.max(0, bottom - Math.max(r.top, dock.top));
              });
            }"""
        )
        if ply == 37:
            shots(page, f"move-37-{language}-{viewport}")
    assert any(covered.values()), covered  # some of those positions hold own cards
    assert all(c < 0.5 for cards in covered.values() for c in cards), covered
    assert errors == []
    context.close()
