"""The replay page after a second outside audit (2026-12), in a real headless Chromium:

- a deal still being played, to an administrator who holds no seat in its match (the
  API's ``staff_powers``): the page opens with the hands, the table and the record's
  links hidden, asking the API for none of them (a third audit: the hands were fetched
  for each position, only drawn face down); "Show them anyway" shows them under a
  warning, as the admin's deal page treats a live seed;
- an administrator who plays in the match is offered only their own seat (what the API
  gives them), and a refusal of the API is said in the page's words, never its raw
  message;
- "Verify" says the verification in the page, in its language;
- on a phone, the step controls (sticky at the bottom) never cover the score.

Screenshots go to test-artifacts/browser/<test>/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal
from tests.browser.conftest import DESKTOP, PHONE, axe_violations, errors_of, session_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = {
    "en": {
        "guard": "This deal is still being played",
        "ok": "Verified: everything checks.",
        "not_over": "This deal is still being played: its replay opens when it is over.",
    },
    "it": {
        "guard": "Questa mano è ancora in corso",
        "ok": "Verificata: tutto torna.",
        "not_over": "Questa mano è ancora in corso: si potrà rivedere quando sarà finita.",
    },
}


def a_deal(games: Any, people: list[User], moves: int, *, public: bool = False) -> Deal:
    creator, others = people[0], people[1:]
    match = match_create(
        creator=creator,
        players=len(people),
        format="single",
        seats=[SeatSpec("user", u.username) for u in others],
        public=public,
    )
    for user in others:
        match_join(match_id=match.pk, user=user)
    games.play(match, moves)
    return Deal.objects.select_related("match").get(match=match)


def options_of(language: str, viewport: str) -> dict[str, Any]:
    return {"locale": language, **(PHONE if viewport == "phone" else DESKTOP)}


def at_ply(page: Any, ply: int) -> None:
    page.wait_for_selector(f'#replay[data-ply="{ply}"]', timeout=5000)


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_a_live_deal_opens_hidden_to_an_administrator_and_shows_under_a_warning(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    alice, bob = people(username="alice"), people(username="bob")
    admin = people(username="root", is_staff=True, is_superuser=True)
    deal = a_deal(games, [alice, bob], 7)
    context = session_context(chromium, live_server, admin, **options_of(language, viewport))
    page = context.new_page()
    errors = errors_of(page)
    replays: list[str] = []
    page.on(
        "request",
        lambda r: replays.append(r.url) if "/replay" in r.url and "/api/" in r.url else None,
    )
    # Even asked for a seat in the address, the page opens with the hands hidden: it asks
    # the API for no position (each carries every hand) before "Show them anyway", and
    # shows no table, score or steps until then; a key pressed meanwhile asks for nothing.
    page.goto(f"{live_server.url}/replay/{deal.pk}/?seat=1&ply=3")
    page.wait_for_load_state("networkidle")
    assert replays == []
    assert page.locator("#table").is_hidden() and page.locator(".controls").is_hidden()
    assert page.locator(".seat").count() == 0
    assert page.locator("#seat-select").is_disabled()
    assert page.input_value("#seat-select") == "hidden"
    assert page.locator("#export-json").is_hidden() and page.locator("#verify").is_hidden()
    assert page.locator("#live-guard-hidden").inner_text().startswith(WORDS[language]["guard"])
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    assert replays == []
    assert axe_violations(page) == []
    shots(page, f"1-hidden-{language}-{viewport}", full_page=True)

    page.click("#show-anyway")
    page.wait_for_selector(".seat .card:not(.back)")
    at_ply(page, 3)  # the move in the address
    assert replays and all("seat=" not in url for url in replays), replays
    assert page.locator("#live-guard-shown").is_visible()
    assert page.locator("#live-guard-hidden").is_hidden()
    assert page.input_value("#seat-select") == ""
    assert not page.locator("#seat-select").is_disabled()
    assert page.locator("#export-json").is_visible()
    assert page.locator(".seat .card.back").count() == 0
    page.click("#last")
    at_ply(page, 7)
    assert page.locator("#trick .card, #last-trick .card").count() > 0
    assert axe_violations(page) == []
    shots(page, f"2-shown-{language}-{viewport}", full_page=True)
    # Back to the hands hidden, from the menu: the log says who was dealt and who drew,
    # not which cards.
    log = page.locator("#log").inner_text()
    page.select_option("#seat-select", "hidden")
    page.locator(".seat .card:not(.back)").first.wait_for(state="detached")
    assert page.locator("#log").inner_text() != log
    assert errors == []
    context.close()


@pytest.mark.parametrize("language", ["en", "it"])
def test_an_administrator_who_plays_is_offered_their_seat_and_refusals_are_words(
    chromium: Any, live_server: Any, people: Callable[..., User], games: Any, language: str
) -> None:
    alice = people(username="alice")
    bob = people(username="bob", is_staff=True, is_superuser=True)  # an administrator, playing
    carla = people(username="carla")
    deal = a_deal(games, [alice, bob], 5, public=True)
    context = session_context(chromium, live_server, bob, **options_of(language, "phone"))
    page = context.new_page()
    errors = errors_of(page)
    refused: list[int] = []
    page.on("response", lambda r: refused.append(r.status) if r.status >= 400 else None)
    # The other seat asked for in the address: not offered, not asked of the API.
    page.goto(f"{live_server.url}/replay/{deal.pk}/?seat=0")
    at_ply(page, 0)
    values = page.eval_on_selector_all("#seat-select option", "els => els.map(e => e.value)")
    assert values == ["1"]
    assert page.input_value("#seat-select") == "1"
    assert page.locator("#export-json").count() == 0 and page.locator("#verify").count() == 0
    assert page.locator("#error").is_hidden() and refused == []
    context.close()

    # Someone the API refuses (a public match's deal still being played, to a stranger):
    # the refusal in the page's words, in place of the table (test_replay_page_audit.py).
    context = session_context(chromium, live_server, carla, **options_of(language, "phone"))
    page = context.new_page()
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    page.wait_for_selector("#closed")
    assert page.inner_text("#closed") == WORDS[language]["not_over"]
    assert errors == []
    context.close()


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_verify_says_the_checks_in_the_page(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
    viewport: str,
) -> None:
    alice, bob = people(username="alice"), people(username="bob")
    deal = a_deal(games, [alice, bob], 40)
    context = session_context(chromium, live_server, alice, **options_of(language, viewport))
    page = context.new_page()
    errors = errors_of(page)
    url = f"{live_server.url}/replay/{deal.pk}/"
    page.goto(url)
    at_ply(page, 0)
    page.click("#verify")
    page.wait_for_selector('#verify-result[data-ok="1"]')
    assert page.url.split("?")[0] == url  # no raw API page (the address says the move)
    assert page.inner_text("#verify-result .verdict") == WORDS[language]["ok"]
    assert page.locator("#verify-result li.ok").count() == 5
    assert "sha256" not in page.inner_text("#verify-result")
    assert axe_violations(page) == []
    shots(page, f"verify-{language}-{viewport}")
    assert errors == []
    context.close()


@pytest.mark.parametrize("language", ["en", "it"])
def test_on_a_phone_the_step_controls_never_cover_the_score(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    games: Any,
    shots: Any,
    language: str,
) -> None:
    """A replay of four with long names (they wrap): scrolled anywhere, the sticky controls
    and the two score boxes do not overlap."""
    names = ["alessandra", "bartolomeo", "costantino", "donatella"]
    deal = a_deal(games, [people(username=n) for n in names], 40)
    context = session_context(
        chromium,
        live_server,
        people(username="root", is_staff=True, is_superuser=True),
        **options_of(language, "phone"),
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/replay/{deal.pk}/")
    at_ply(page, 0)
    page.keyboard.press("End")
    at_ply(page, 40)
    height = page.evaluate("document.documentElement.scrollHeight")
    overlaps = []
    for y in range(0, int(height), 40):
        page.evaluate(f"window.scrollTo(0, {y})")
        overlaps += page.evaluate(
            """() => {
              const c = document.querySelector('.controls').getBoundingClientRect();
              return Array.from(document.querySelectorAll('.score .team')).filter((t) => {
                const r = t.getBoundingClientRect();
                return r.bottom > c.top + 0.5 && r.top < c.bottom - 0.5
                  && r.right > c.left && r.left < c.right;
              }).map((t) => t.className);
            }"""
        )
    page.evaluate("window.scrollTo(0, 0)")
    shots(page, f"phone-4p-{language}")
    assert overlaps == []
    context.close()
