"""The lobby and the pages around the table after an outside player audit (2026-12): the
lobby's lists kept current without a reload (the account stream, the open tables read
again), a waiting table called off from the table and from the lobby, a proper 404 page,
a finished match's replay reached from the lobby, and the turn line while a card is on its
way. Screenshots go to test-artifacts/browser/<test>/.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal, MatchStatus
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    axe_violations,
    boxes_outside_viewport,
    errors_of,
    open_lobby,
    session_context,
)
from tests.browser.test_play_pages import MY_TURN, wait_turn_or_end

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_lobby_shows_an_invitation_and_a_new_open_table_without_a_reload(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any
) -> None:
    """Alice's lobby is open: Bob's invitation appears in "My matches" through the account
    stream, and Carla's new open table in "Open tables" at the next periodic read (the
    page's clock moved on 20 s), neither after a reload."""
    alice, bob, carla = people(username="alice"), people(username="bob"), people(username="carla")
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.clock.install()
    open_lobby(page, live_server)
    loads = []
    page.on("load", lambda _p: loads.append(1))
    assert page.locator("#my-list li[data-match]").count() == 0
    assert any(url.endswith("/api/v1/stream") for url in asked)  # the account stream

    invitation = match_create(
        creator=bob, players=2, format="single", seats=[SeatSpec("user", "alice")]
    )
    row = page.locator(f'#my-list li[data-match="{invitation.pk}"]')
    # EventSource's reconnection delay (LIVE_RETRY_MS) runs on the page's clock.
    for _ in range(40):
        if row.count():
            break
        page.clock.run_for(500)
        page.wait_for_timeout(100)
    row.wait_for(timeout=5000)
    assert "bob" in row.inner_text() and "waiting" in row.inner_text()

    table = match_create(creator=carla, players=2, format="first_to_3", seats=[SeatSpec("open")])
    page.wait_for_timeout(1500)
    open_row = page.locator(f'#open-list li[data-match="{table.pk}"]')
    assert open_row.count() == 0  # not yet: other people's tables are read every 20 s
    page.clock.run_for(21000)
    open_row.wait_for(timeout=5000)
    assert "carla" in open_row.inner_text()
    assert loads == []  # no reload
    shots(page, "1-invitation-and-open-table-phone", full_page=True)
    assert errors == []
    context.close()


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_an_invitation_is_listed_once_in_my_matches_not_in_open_tables(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any, viewport: str
) -> None:
    """The API's open tables include those with a seat kept for the person (``open=true``):
    the lobby lists Alice's invitations in "My matches" only, a 2-player one and a
    4-player one with seats open besides hers, at load and after the lists are read again
    (an invitation arriving through the account stream, the open tables' next read);
    Carla's open table stays in "Open tables"."""
    alice, bob, carla = people(username="alice"), people(username="bob"), people(username="carla")
    invited = [
        match_create(creator=bob, players=2, format="single", seats=[SeatSpec("user", "alice")]),
        match_create(
            creator=bob,
            players=4,
            format="single",
            seats=[SeatSpec("user", "alice"), SeatSpec("open"), SeatSpec("open")],
        ),
    ]
    tables = [match_create(creator=carla, players=2, format="single", seats=[SeatSpec("open")])]
    options = PHONE if viewport == "phone" else DESKTOP
    context = session_context(chromium, live_server, alice, **options)
    page = context.new_page()
    errors = errors_of(page)
    page.clock.install()
    open_lobby(page, live_server)

    def listed_once() -> None:
        for match in invited:
            assert page.locator(f'#my-list li[data-match="{match.pk}"]').count() == 1
            assert page.locator(f'#open-list li[data-match="{match.pk}"]').count() == 0
        for match in tables:
            assert page.locator(f'#open-list li[data-match="{match.pk}"]').count() == 1

    listed_once()
    shots(page, f"1-at-load-{viewport}", full_page=True)

    # Live: a new invitation comes through the account stream, a new open table at the
    # open tables' next read (every 20 s, on the page's clock).
    invited.append(
        match_create(creator=bob, players=2, format="single", seats=[SeatSpec("user", "alice")])
    )
    tables.append(
        match_create(creator=carla, players=2, format="first_to_2", seats=[SeatSpec("open")])
    )
    row = page.locator(f'#my-list li[data-match="{invited[-1].pk}"]')
    for _ in range(40):  # EventSource's reconnection delay runs on the page's clock
        if row.count():
            break
        page.clock.run_for(500)
        page.wait_for_timeout(100)
    row.wait_for(timeout=5000)
    page.clock.run_for(21000)
    page.locator(f'#open-list li[data-match="{tables[-1].pk}"]').wait_for(timeout=5000)
    listed_once()
    shots(page, f"2-after-live-updates-{viewport}", full_page=True)
    assert errors == []
    context.close()


def test_a_lobby_without_a_stream_reads_its_matches_now_and_then(
    chromium: Any, live_server: Any, people: Callable[..., User]
) -> None:
    """The account stream refused (a proxy, a full server): "My matches" is read again
    every 15 s instead."""
    alice, bob = people(username="alice"), people(username="bob")
    context = session_context(chromium, live_server, alice, **DESKTOP)
    page = context.new_page()
    errors = errors_of(page)
    page.route(
        re.compile(r".*/api/v1/stream$"),
        lambda route: route.fulfill(
            status=503, content_type="application/json", body='{"code": "streams_full"}'
        ),
    )
    page.clock.install()
    open_lobby(page, live_server)
    page.wait_for_timeout(500)
    invitation = match_create(
        creator=bob, players=2, format="single", seats=[SeatSpec("user", "alice")]
    )
    row = page.locator(f'#my-list li[data-match="{invitation.pk}"]')
    page.clock.run_for(5000)
    page.wait_for_timeout(500)
    assert row.count() == 0
    page.clock.run_for(11000)
    row.wait_for(timeout=5000)
    assert errors == []
    context.close()


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_waiting_table_is_cancelled_at_the_table_and_in_the_lobby(
    chromium: Any, live_server: Any, people: Callable[..., User], shots: Any, language: str
) -> None:
    """A table waiting for players shows no stock count and no "Last trick", and its
    creator may cancel it (after confirming, as Resign asks); "My matches" offers the same
    for another waiting table; a dismissed confirmation changes nothing."""
    alice = people(username="alice")
    people(username="bob")
    first = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])
    context = session_context(chromium, live_server, alice, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{first.pk}/")
    page.wait_for_selector('#play[data-status="waiting"]', state="attached")
    assert page.locator("#stock").evaluate("el => getComputedStyle(el).visibility") == "hidden"
    assert page.locator("#pile").is_hidden()
    assert page.locator("#show-last").is_hidden()
    cancel = page.locator("#cancel")
    assert cancel.is_visible()
    assert cancel.inner_text() == ("Cancel" if language == "en" else "Annulla")
    shots(page, f"1-waiting-table-{language}")

    asked: list[str] = []

    def answer(dialog: Any, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda d: answer(d, False))
    cancel.click()
    page.wait_for_timeout(300)
    first.refresh_from_db()
    assert first.status == MatchStatus.WAITING
    page.once("dialog", lambda d: answer(d, True))
    cancel.click()
    page.wait_for_selector('#play[data-status="aborted"]', state="attached")
    first.refresh_from_db()
    assert first.status == MatchStatus.ABORTED
    assert asked[0] == (
        "Cancel this table? Nobody will be able to join it."
        if language == "en"
        else "Annullare questo tavolo? Nessuno potrà più sedersi."
    )
    assert page.inner_text("#turn") == ("Called off" if language == "en" else "Annullata")
    assert cancel.is_hidden()
    shots(page, f"2-cancelled-{language}")

    # In the lobby: another of Alice's waiting tables, and one of Bob's she is invited to
    # (not hers to cancel).
    second = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])
    bobs = match_create(
        creator=User.objects.get(username="bob"),
        players=2,
        format="single",
        seats=[SeatSpec("user", "alice")],
    )
    open_lobby(page, live_server)
    row = page.locator(f'#my-list li[data-match="{second.pk}"]')
    assert page.locator(f'#my-list li[data-match="{bobs.pk}"] button').count() == 0
    button = row.locator("button")
    assert button.inner_text() == ("Cancel" if language == "en" else "Annulla")
    shots(page, f"3-lobby-my-matches-{language}", full_page=True)
    page.once("dialog", lambda d: answer(d, True))
    button.click()
    row.locator("button").wait_for(state="detached")
    second.refresh_from_db()
    assert second.status == MatchStatus.ABORTED
    assert ("called off" if language == "en" else "annullata") in row.inner_text()
    assert axe_violations(page) == []
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("language", "lobby"),
    [("en", "Back to the lobby"), ("it", "Torna alla sala")],
    ids=["en", "it"],
)
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_a_match_called_off_offers_the_lobby_not_a_rematch(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    lobby: str,
    viewport: str,
) -> None:
    """A table cancelled before it started, and a match resigned before every person
    played (aborted, nothing played out), offer no Rematch (the API rematches only a
    finished match: 409 match_not_finished): the way back to the lobby, where a new table
    is opened, is the table's action, as it is the end dialog's."""
    alice = people(username="alice")
    waiting = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])
    options = PHONE if viewport == "phone" else DESKTOP
    context = session_context(chromium, live_server, alice, locale=language, **options)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{waiting.pk}/")
    page.wait_for_selector('#play[data-status="waiting"]', state="attached")
    page.once("dialog", lambda d: d.accept())
    page.click("#cancel")
    page.wait_for_selector('#play[data-status="aborted"]', state="attached")

    def only_the_lobby(name: str) -> None:
        assert page.locator("#table-rematch").is_hidden()
        back = page.locator("#table-lobby")
        assert back.is_visible() and back.inner_text() == lobby
        assert back.get_attribute("href") == "/play/"
        assert "primary" in str(back.get_attribute("class"))  # the one way on
        assert boxes_outside_viewport(page, ".actions button, .actions a") == []
        shots(page, name)

    only_the_lobby(f"1-cancelled-{language}-{viewport}")
    page.reload()  # a cancelled table opened again
    page.wait_for_selector('#play[data-status="aborted"]', state="attached")
    only_the_lobby(f"2-cancelled-reopened-{language}-{viewport}")
    assert axe_violations(page) == []

    # Resigned before a card of alice's: aborted; its end dialog has no Rematch either.
    early = match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("bot", "random")]
    )
    page.goto(f"{live_server.url}/play/{early.pk}/")
    assert wait_turn_or_end(page) == "playing"
    page.once("dialog", lambda d: d.accept())
    page.click("#resign")
    page.wait_for_selector('#play[data-state="match-over"]', state="attached")
    early.refresh_from_db()
    assert (early.status, early.end_reason) == (MatchStatus.ABORTED, "aborted")
    assert page.locator("#rematch").is_hidden()
    to_lobby = page.locator("#to-lobby")
    assert to_lobby.is_visible() and to_lobby.inner_text() == lobby
    assert "primary" in str(to_lobby.get_attribute("class"))
    assert page.evaluate("document.activeElement.id") == "to-lobby"
    shots(page, f"3-resigned-early-dialog-{language}-{viewport}")
    page.keyboard.press("Escape")
    page.wait_for_selector("#end-dialog:not([open])", state="attached")
    only_the_lobby(f"4-resigned-early-table-{language}-{viewport}")

    page.click("#table-lobby")
    page.wait_for_url(f"{live_server.url}/play/")
    page.wait_for_selector("#open-table")  # a new table is opened there
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("language", "title"), [("en", "Not found"), ("it", "Pagina non trovata")], ids=["en", "it"]
)
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_an_unknown_match_or_deal_is_a_404_page_in_the_sites_style(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    title: str,
    viewport: str,
) -> None:
    """``/play/<a uuid no match has>/`` and ``/replay/<no deal>/`` answer 404 with the
    site's page (its top bar, a way back to the lobby), in the browser's language."""
    alice = people(username="alice")
    options = PHONE if viewport == "phone" else DESKTOP
    context = session_context(chromium, live_server, alice, locale=language, **options)
    page = context.new_page()
    for n, url in enumerate([f"/play/{uuid.uuid4()}/", "/replay/999999/"]):
        response = page.goto(live_server.url + url)
        assert response.status == 404, url
        assert page.inner_text("h1") == title
        assert page.locator(".bar .brand").is_visible()
        assert page.get_attribute("main a.primary", "href") == "/play/"
        assert page.locator("#play").count() == 0  # no empty table
        assert axe_violations(page) == []
        shots(page, f"{n}-404-{language}-{viewport}")
    context.close()


def test_a_finished_matchs_replay_is_reached_from_the_lobby(
    chromium: Any, live_server: Any, people: Callable[..., User], games: Any, shots: Any
) -> None:
    """A finished match in "My matches" links to its replay: the match's first deal."""
    alice, bob = people(username="alice"), people(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    games.play(match, 40)
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED
    deal = Deal.objects.get(match=match, number=1)
    context = session_context(chromium, live_server, alice, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    open_lobby(page, live_server)
    link = page.locator(f'#my-list li[data-match="{match.pk}"] a.replay')
    assert link.inner_text() == "Replay"
    shots(page, "1-lobby-with-replay-link", full_page=True)
    link.click()
    # The address then says the move shown (?ply=0).
    page.wait_for_url(re.compile(rf"{re.escape(live_server.url)}/replay/{deal.pk}/(\?ply=0)?$"))
    page.wait_for_selector('#replay[data-ply="0"]', state="attached")
    # Nobody else's: an unknown match's replay is a 404 too.
    response = page.goto(f"{live_server.url}/play/{uuid.uuid4()}/replay/")
    assert response.status == 404
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("language", "said"),
    [("en", "Playing %s…"), ("it", "Stai giocando %s…")],
    ids=["en", "it"],
)
def test_the_turn_line_says_the_card_is_being_played_while_it_travels(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    said: str,
) -> None:
    """While the move's request has no answer, the turn line no longer asks to choose a
    card: it says which card is being played."""
    alice = people(username="alice")
    match = match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("bot", "random")]
    )
    context = session_context(chromium, live_server, alice, locale=language, **PHONE)
    page = context.new_page()
    errors = errors_of(page)
    page.goto(f"{live_server.url}/play/{match.pk}/")
    assert wait_turn_or_end(page) == "playing"
    page.wait_for_selector(MY_TURN, state="attached")
    held: list[Any] = []
    page.route(re.compile(r".*/moves$"), lambda route: held.append(route))
    card = page.locator('#hand button[aria-disabled="false"]').first
    code = str(card.get_attribute("data-card"))
    name = page.evaluate(
        "c => JSON.parse(document.getElementById('play-strings').textContent).cards[c]", code
    )
    card.click()
    page.wait_for_function("() => document.querySelector('#slot-bottom .card') !== null")
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the move was not sent"
    turn = page.inner_text("#turn")
    assert turn == said % name, turn
    assert page.get_attribute(f"#slot-bottom .card[data-card='{code}']", "aria-label")
    shots(page, f"card-on-its-way-{language}")
    held[0].continue_()
    page.unroute(re.compile(r".*/moves$"))
    page.wait_for_function(
        "t => document.getElementById('turn').textContent !== t", arg=turn, timeout=15000
    )
    assert errors == []
    context.close()


def test_the_403_and_500_pages_are_the_sites_own(
    people: Callable[..., User], games: Any, client: Any
) -> None:
    """A refusal (PermissionDenied): the site's 403 page; a server error: the site's 500
    page, which needs no request (Django renders it without one); both translated. A
    private match's replay, to someone else, is the 404 page of a deal that does not
    exist (deal ids are counted: a 403 would tell the deal is there)."""
    from django.core.exceptions import PermissionDenied
    from django.test import RequestFactory
    from django.utils import translation
    from django.views.defaults import permission_denied, server_error

    alice, bob, carla = people(username="alice"), people(username="bob"), people(username="carla")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    games.play(match, 4)
    deal = Deal.objects.get(match=match, number=1)
    client.force_login(carla)
    answer = client.get(f"/replay/{deal.pk}/", HTTP_ACCEPT_LANGUAGE="it")
    missing = client.get("/replay/999999/", HTTP_ACCEPT_LANGUAGE="it")
    assert answer.status_code == missing.status_code == 404
    h1 = re.compile(r"<h1>.*?</h1>", re.S)
    assert h1.findall(answer.content.decode()) == h1.findall(missing.content.decode()) != []
    assert "Not found" not in answer.content.decode()  # in Italian, as the missing one
    with translation.override("it"):
        answer = permission_denied(RequestFactory().get("/play/"), PermissionDenied())
    html = answer.content.decode()
    assert answer.status_code == 403
    assert "<h1>Non è visibile per te</h1>" in html and 'class="bar"' in html
    with translation.override("it"):
        answer = server_error(RequestFactory().get("/play/"))
    html = answer.content.decode()
    assert answer.status_code == 500
    assert "<h1>Qualcosa è andato storto</h1>" in html
    assert 'href="/play/"' in html and "play.css" in html
