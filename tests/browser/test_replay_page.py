"""The replay page in a real headless Chromium: a finished deal stepped to its end shows
the record's final points; a phone-sized screen has no horizontal overflow; Italian as the
other pages speak it, and the switch back to English."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal
from tests.browser.conftest import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def finished_deal(
    user_factory: Callable[..., User], games: Any, deterministic_seeds: None, settings: Any
) -> tuple[Deal, User]:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    games.play(match, 40)
    deal = Deal.objects.select_related("match").get(match=match)
    assert deal.status == "finished"
    return deal, alice


def logged_in_context(browser: Any, live_server: Any, user: User, **options: Any) -> Any:
    client = Client()
    client.force_login(user)
    context = browser.new_context(**options)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    return context


def at_ply(page: Any, ply: int) -> None:
    page.wait_for_selector(f'#replay[data-ply="{ply}"]', timeout=5000)


def test_step_a_finished_deal_to_its_end(
    chromium: Any, live_server: Any, finished_deal: tuple[Deal, User]
) -> None:
    deal, alice = finished_deal
    context = logged_in_context(
        chromium, live_server, alice, viewport={"width": 1100, "height": 800}
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    at_ply(page, 0)
    # The whole table: both hands face up, the briscola on the stock, nothing captured.
    assert page.locator(".seat").count() == 2
    assert page.locator(".seat .card:not(.back)").count() == 6
    assert page.locator("#stock-count").inner_text() == "34"
    assert page.locator("#points-0").inner_text() == "0"

    for ply in range(1, 6):  # arrow keys
        page.keyboard.press("ArrowRight")
        at_ply(page, ply)
    page.click("#prev")
    at_ply(page, 4)
    page.click("#next")
    at_ply(page, 5)
    # The counter and the log count moves alike: the fifth card is move 5 in both.
    assert page.locator("#ply-label").inner_text() == "Move 5 / 40"
    lines = page.locator("#log li").all_inner_texts()
    played = [line for line in lines if " plays " in line]
    assert re.match(r"Move 5: (alice|bob) plays ", played[-1]), lines
    assert [line for line in lines if re.match(r"Move \d+:", line)] == played
    # The words the table uses: names, "You" and the other's name; no seat numbers.
    assert page.locator('.seat[data-seat="0"] .name').inner_text().startswith("alice")
    assert "you" in page.locator('.seat[data-seat="0"] .name').inner_text()
    assert "opponent" in page.locator('.seat[data-seat="1"] .name').inner_text()
    assert page.inner_text("#team-0-name") == "You"
    assert page.inner_text("#team-1-name") == "bob"
    text = page.inner_text("#replay")
    assert not re.search(r"\b(S[0-3]|Team [01]|ply)\b", text), text
    assert page.locator("#log").evaluate("el => el.tagName") == "UL"
    # Links to the match's other deals (a single deal: none) and to its table.
    assert page.get_attribute("#match-table", "href") == f"/play/{deal.match_id}/"
    assert page.locator("#next-deal").count() == 0
    assert page.locator("#trick .card").count() == 1  # the sixth card leads trick 3
    page.screenshot(path="/tmp/replay-desktop-mid.png")
    page.eval_on_selector(
        "#slider", "el => { el.value = 38; el.dispatchEvent(new Event('input')); }"
    )
    at_ply(page, 38)
    page.keyboard.press("ArrowRight")
    at_ply(page, 39)
    page.click("#next")
    at_ply(page, 40)
    assert page.locator("#next").is_disabled()
    assert page.locator("#points-0").inner_text() == str(deal.points_team0)
    assert page.locator("#points-1").inner_text() == str(deal.points_team1)
    assert sum(int(page.locator(f"#points-{t}").inner_text()) for t in (0, 1)) == 120
    winner = deal.winner_team
    assert (
        page.locator("#result")
        .inner_text()
        .startswith("Drawn" if winner is None else ("You win" if winner == 0 else "bob wins"))
    )
    href = page.get_attribute("#export-text", "href")
    assert href == f"/api/v1/deals/{deal.pk}/export.txt"
    page.screenshot(path="/tmp/replay-desktop.png", full_page=True)

    # One seat's view: the other hand is face down.
    page.goto(f"{live_server.url}/replay/{deal.pk}/?seat=1")
    at_ply(page, 0)
    assert page.locator('.seat[data-seat="0"] .card.back').count() == 3
    assert page.locator('.seat[data-seat="1"] .card:not(.back)').count() == 3
    page.keyboard.press("End")
    at_ply(page, 40)
    assert page.locator("#points-0").inner_text() == str(deal.points_team0)
    assert errors == []
    context.close()


def test_phone_sized_screen(
    chromium: Any, live_server: Any, finished_deal: tuple[Deal, User]
) -> None:
    deal, alice = finished_deal
    context = logged_in_context(
        chromium, live_server, alice, viewport={"width": 375, "height": 667}, is_mobile=True
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    at_ply(page, 0)

    def no_horizontal_overflow() -> None:
        width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
        assert width <= inner, (width, inner)

    no_horizontal_overflow()
    controls = page.locator(".controls").bounding_box()
    page.click("#next")
    at_ply(page, 1)
    page.click("#next")
    at_ply(page, 2)  # a trick is taken: the "last trick" row fills
    no_horizontal_overflow()
    # The controls stay where the thumb found them.
    assert page.locator(".controls").bounding_box() == controls
    # Seat badges are whole, not cut with an ellipsis.
    for badge in page.locator(".seat .name").all():
        width, scroll = badge.evaluate("el => [el.clientWidth, el.scrollWidth]")
        assert scroll <= width, badge.inner_text()
    page.click("#last")
    at_ply(page, 40)
    no_horizontal_overflow()
    assert page.locator("#points-0").inner_text() == str(deal.points_team0)
    assert page.locator("#points-1").inner_text() == str(deal.points_team1)
    page.screenshot(path="/tmp/replay-phone.png", full_page=True)
    context.close()


def test_the_replay_in_italian_and_the_switch_to_english(
    chromium: Any, live_server: Any, finished_deal: tuple[Deal, User], shots: Any
) -> None:
    """A browser that asks for Italian gets the replay in Italian (its words, the cards'
    names, the log), like the play pages; the top bar's switch turns it to English."""
    deal, alice = finished_deal
    context = logged_in_context(
        chromium, live_server, alice, locale="it-IT", viewport={"width": 390, "height": 844}
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    at_ply(page, 0)
    assert page.evaluate("document.documentElement.lang") == "it"
    assert page.inner_text("h1").startswith("Mano 1 di 1")
    assert page.locator("#seat-select option").first.inner_text() == "Tutto il tavolo"
    assert page.inner_text("#ply-label") == "Mossa 0 / 40"
    assert page.inner_text(".score .team-0").startswith("Tu")
    assert page.inner_text(".score .team-1").startswith("bob")
    assert "tu" in page.inner_text('.seat[data-seat="0"] .name')
    # Cards by their Italian names (as the table names them), the corners' letters Italian.
    card = page.locator('.seat[data-seat="0"] .card').first
    code = str(card.get_attribute("data-card"))
    assert " di " in str(card.get_attribute("aria-label")), card.get_attribute("aria-label")
    assert card.locator(".rank").first.inner_text() == code[0]  # A 3 R C F 7 6 5 4 2
    lines = page.locator("#log li").all_inner_texts()
    assert lines[0].startswith("Mazziere alice") or lines[0].startswith("Mazziere bob"), lines
    assert all(" riceve " in line and " di " in line for line in lines[1:3]), lines
    page.click("#next")
    at_ply(page, 1)
    # The first card is move 1, in the counter and in the log.
    assert page.inner_text("#ply-label") == "Mossa 1 / 40"
    assert re.match(r"Mossa 1: (alice|bob) gioca ", page.locator("#log li").last.inner_text())
    page.click("#last")
    at_ply(page, 40)
    winner = deal.winner_team
    result = page.inner_text("#result")
    assert result.startswith(
        "Pareggio" if winner is None else ("Vinci tu" if winner == 0 else "Vince bob")
    )
    assert axe_violations(page) == []
    shots(page, "it-replay-end", full_page=True)
    # The switch keeps English for the next pages, this one first, at the same move (the
    # address follows the position).
    page.click('button[name="language"][value="en"]')
    page.wait_for_selector('html[lang="en"]')
    at_ply(page, 40)
    assert page.inner_text("#ply-label") == "Move 40 / 40"
    page.keyboard.press("Home")
    at_ply(page, 0)
    assert re.match(r"Dealer (alice|bob);", page.locator("#log li").first.inner_text())
    assert errors == []
    context.close()


@pytest.mark.parametrize(
    ("options", "move"),
    [
        ({"viewport": {"width": 1280, "height": 800}}, "Move"),
        (
            {
                "viewport": {"width": 390, "height": 844},
                "is_mobile": True,
                "has_touch": True,
                "locale": "it-IT",
            },
            "Mossa",
        ),
    ],
    ids=["desktop-en", "phone-it"],
)
def test_every_press_counts_while_the_steps_load(
    chromium: Any,
    live_server: Any,
    finished_deal: tuple[Deal, User],
    shots: Any,
    options: dict[str, Any],
    move: str,
) -> None:
    """Each press moves one step from the step asked for, not from the one on screen: on
    a slow network (400 ms a request) ten right-arrow presses 150 ms apart end at move 10,
    and the counter says each step asked for at once; presses with no gap, the buttons,
    Home, End and the slider count alike, clamped to the deal's ends. (Each press used to
    count from the step shown, so presses made while one loaded were lost: the audit's
    ten presses ended at move 4, or at move 1 with no gap.)"""
    deal, alice = finished_deal
    context = logged_in_context(chromium, live_server, alice, **options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    at_ply(page, 0)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 400, "downloadThroughput": -1, "uploadThroughput": -1},
    )

    def label() -> str:
        return page.inner_text("#ply-label")

    def settled(ply: int) -> None:
        page.wait_for_selector(f'#replay[data-ply="{ply}"]', timeout=15000)
        page.wait_for_timeout(600)  # no late answer moves it on
        assert page.get_attribute("#replay", "data-ply") == str(ply)
        assert label() == f"{move} {ply} / 40"
        assert page.locator("#slider").input_value() == str(ply)

    for n in range(1, 11):
        page.keyboard.press("ArrowRight")
        assert label() == f"{move} {n} / 40"  # at once, before the step has come
        page.wait_for_timeout(150)
    shots(page, "pressed-ahead-of-the-network")
    settled(10)
    for _ in range(6):
        page.click("#next")
        page.wait_for_timeout(150)
    settled(16)
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    settled(13)
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    settled(38)
    page.keyboard.press("Home")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    settled(5)
    page.eval_on_selector(
        "#slider", "el => { el.value = 30; el.dispatchEvent(new Event('input')); }"
    )
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    settled(32)
    # Without the delay, presses with no gap at all; past either end they stop there.
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    for _ in range(12):
        page.keyboard.press("ArrowRight")
    settled(40)
    assert page.locator("#next").is_disabled()
    for _ in range(10):
        page.keyboard.press("ArrowLeft")
    settled(30)
    for _ in range(45):
        page.keyboard.press("ArrowLeft")
    settled(0)
    assert page.locator("#prev").is_disabled()
    assert page.locator("#points-0").inner_text() == "0"
    shots(page, "back-at-the-start")
    assert errors == []
    context.close()


@pytest.mark.parametrize("ply", ["41", "999"])
def test_an_address_past_the_deals_end_opens_at_the_end(
    chromium: Any, live_server: Any, finished_deal: tuple[Deal, User], ply: str
) -> None:
    """``?ply=`` past the last move (a hand-edited or old address) opens on the deal's last
    position, not on an error (the browser audit)."""
    deal, alice = finished_deal
    context = logged_in_context(chromium, live_server, alice)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/replay/{deal.pk}/?ply={ply}")
    at_ply(page, 40)
    assert page.get_attribute("#replay", "data-error") is None
    page.keyboard.press("ArrowLeft")
    at_ply(page, 39)
    assert errors == []
    context.close()
