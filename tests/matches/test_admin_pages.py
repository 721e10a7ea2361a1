"""The admin's match, deal and move pages after an outside audit of the admin: what
happened to a match (its events, its seats' clock state, whom it waits on since when)
can be found out there, and stuck matches found by a filter; times to the second."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from games.clocks.services import event_add
from games.matches.services import SeatSpec, match_create
from games.models import Match, MatchEvent, Seat

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


@pytest.fixture
def root_client(user_factory: Callable[..., User]) -> Client:
    root = user_factory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    return client


def bot_match(user: User, **fields: Any) -> Match:
    match = match_create(
        creator=user, players=2, format="single", seats=[SeatSpec("bot", "greedy")]
    )
    if fields:
        Match.objects.filter(pk=match.pk).update(**fields)
        match.refresh_from_db()
    return match


def test_the_match_page_shows_its_events_in_order_and_the_seats_clock_state(
    root_client: Client, user_factory: Callable[..., User]
) -> None:
    alice = user_factory(username="alice")
    match = bot_match(alice)
    event_add(match, "seat_timed_out", seat=0, action="bot")
    event_add(match, "seat_taken_by_bot", seat=0, bot="greedy")
    event_add(match, "seat_returned", seat=0, by="alice")
    Seat.objects.filter(match=match, number=0).update(away=True, timeouts_in_row=3, bot_holds=True)
    first = MatchEvent.objects.filter(match=match).order_by("id").first()
    assert first is not None
    response = root_client.get(f"/admin/games/match/{match.pk}/change/")
    page = response.content.decode()
    order = [
        page.index("A seat&#x27;s deadline passed (seat_timed_out)"),
        page.index("The timeout bot holds a seat (seat_taken_by_bot)"),
        page.index("A person plays their seat again (seat_returned)"),
    ]
    assert order == sorted(order)
    assert "seat: S0 alice; action: bot" in page
    assert "seat: S0 alice; bot: greedy" in page
    deal = match.deals.get()
    assert f'href="/admin/games/deal/{deal.pk}/change/">deal {deal.pk}, before card 1</a>' in page
    # The time to the second.
    assert timezone.localtime(first.created_at).strftime("%H:%M:%S") in page
    # The seats' clock state.
    for field in ("away", "timeouts_in_row", "bot_holds"):
        assert f'class="field-{field}"' in page, field
    # Nothing of it can be changed: no form field for an event or a seat.
    assert 'name="clock_events-0-kind"' not in page and 'name="seats-0-away"' not in page
    assert "clock_events-TOTAL_FORMS" in page  # the inline is there, read-only


def test_the_match_list_shows_the_end_whom_it_waits_on_and_the_last_move(
    root_client: Client, user_factory: Callable[..., User]
) -> None:
    alice = user_factory(username="alice")
    late = timezone.now() - timedelta(seconds=5)
    match = bot_match(alice, deadline=late, to_move_seat=0)
    listing = root_client.get("/admin/games/match/").content.decode()
    assert f"S0 by {timezone.localtime(late):%Y-%m-%d %H:%M:%S} (passed)" in listing
    assert "column-state" in listing and "column-clock" in listing
    assert "last move -" in listing  # no card played yet
    Match.objects.filter(pk=match.pk).update(status="aborted", end_reason="abort_window")
    listing = root_client.get("/admin/games/match/").content.decode()
    assert "Aborted<br>(A person never played a first card)" in listing
    assert match.created_at.strftime("%H:%M:%S") in listing


def test_the_stuck_filter_finds_matches_past_their_deadline_or_waiting_on_a_bot(
    root_client: Client, user_factory: Callable[..., User]
) -> None:
    alice = user_factory(username="alice")
    now = timezone.now()
    deadline = bot_match(alice, deadline=now - timedelta(seconds=3), to_move_seat=0)
    bot = bot_match(alice, deadline=None, bot_to_move_since=now - timedelta(minutes=5))
    fresh_bot = bot_match(alice, deadline=None, bot_to_move_since=now)
    fine = bot_match(alice, deadline=now + timedelta(minutes=5))
    expired = bot_match(alice, status="waiting", deadline=None, expires_at=now - timedelta(1))

    def listed(stuck: str) -> set[str]:
        response = root_client.get("/admin/games/match/", {"stuck": stuck})
        return {str(m.pk) for m in response.context["cl"].result_list}

    assert listed("deadline") == {str(deadline.pk)}
    assert listed("bot") == {str(bot.pk)}
    assert listed("expired") == {str(expired.pk)}
    assert listed("any") == {str(deadline.pk), str(bot.pk), str(expired.pk)}
    assert str(fine.pk) not in listed("any") and str(fresh_bot.pk) not in listed("any")
    page = root_client.get("/admin/games/match/").content.decode()
    assert "deadline passed" in page and "bot to move for over 60 s" in page


def test_times_on_the_deal_and_move_pages_are_to_the_second(
    root_client: Client, user_factory: Callable[..., User]
) -> None:
    alice = user_factory(username="alice")
    match = bot_match(alice)
    deal = match.deals.get()
    seconds = timezone.localtime(deal.started_at).strftime("%H:%M:%S")
    assert seconds in root_client.get(f"/admin/games/deal/{deal.pk}/change/").content.decode()
    assert seconds in root_client.get("/admin/games/deal/").content.decode()
    page = root_client.get(f"/admin/games/match/{match.pk}/change/").content.decode()
    assert timezone.localtime(match.created_at).strftime("%H:%M:%S") in page


@pytest.mark.parametrize("model", ["move", "deal"])
def test_the_move_and_deal_lists_sort_by_their_key_and_the_seat_filter_reads_no_column(
    root_client: Client, user_factory: Callable[..., User], model: str
) -> None:
    """At 480,000 moves the move list took 1.8 s: it sorted every move through its deal
    and the match's creation time (the models' ordering), and the seat filter read
    SELECT DISTINCT seat over the whole log."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    alice = user_factory(username="alice")
    bot_match(alice)
    with CaptureQueriesContext(connection) as queries:
        response = root_client.get(
            f"/admin/games/{model}/", {"seat": "1"} if model == "move" else {}
        )
    assert response.status_code == 200
    sql = [q["sql"] for q in queries.captured_queries]
    table = f'"games_{model}"'
    rows = [q for q in sql if f"FROM {table}" in q and "ORDER BY" in q]
    assert len(rows) == 1, sql
    assert rows[0].endswith(f'ORDER BY {table}."id" DESC'), rows[0]
    assert not [q for q in sql if "DISTINCT" in q], sql
    counts = [q for q in sql if "COUNT(" in q and f"FROM {table}" in q]
    assert len(counts) == 1, counts  # the filtered rows', not a second of the whole table
    if model == "move":
        page = response.content.decode()
        for seat in range(4):
            assert f'href="?seat={seat}"' in page


def test_the_expiry_is_shown_only_for_a_waiting_match(
    root_client: Client, user_factory: Callable[..., User]
) -> None:
    alice = user_factory(username="alice")
    soon = timezone.now() + timedelta(hours=1)
    for status, shown in (
        ("waiting", True),
        ("active", False),
        ("finished", False),
        ("aborted", False),
    ):
        match = bot_match(alice, status=status, expires_at=soon)
        page = root_client.get(f"/admin/games/match/{match.pk}/change/").content.decode()
        assert ("A waiting match is called off then" in page) is shown, status
        assert ("field-expires_at" in page) is shown, status


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_add_and_delete_pages_are_the_admins_refusal_not_the_sites_403(
    root_client: Client, user_factory: Callable[..., User], language: str
) -> None:
    alice = user_factory(username="alice")
    match = bot_match(alice)
    deal = match.deals.get()
    said = {
        "en": "read-only in the admin: the service alone writes them (the move log is append-only)",
        "it": "sono di sola lettura nell'admin: le scrive solo il servizio",
    }[language]
    for model, pk in (("match", match.pk), ("deal", deal.pk), ("move", None)):
        urls = [f"/admin/games/{model}/add/"]
        if pk is not None:
            urls.append(f"/admin/games/{model}/{pk}/delete/")
        for url in urls:
            response = root_client.get(url, HTTP_ACCEPT_LANGUAGE=language)
            page = response.content.decode()
            assert response.status_code == 403, url
            assert said in page, (url, page[-1500:])
            assert "Not yours to see" not in page and "Non è roba tua" not in page
            assert f'href="/admin/games/{model}/"' in page  # back to the list
    assert root_client.get("/admin/accounts/ratingchange/add/").status_code == 403


def test_links_from_a_rating_change_to_its_match_and_from_a_user_to_their_lists(
    root_client: Client, user_factory: Callable[..., User]
) -> None:
    from accounts.models import RatingChange

    alice = user_factory(username="alice")
    bob = user_factory(username="bob")
    match = bot_match(alice)
    other = bot_match(bob)
    RatingChange.objects.create(
        user=alice,
        category="1v1",
        match_id=match.pk,
        match_finished_at=timezone.now(),
        result="win",
        mu_before=25,
        sigma_before=8,
        mu_after=27,
        sigma_after=7,
        rating_before=1000,
        rating_after=1040,
    )
    listing = root_client.get("/admin/accounts/ratingchange/").content.decode()
    assert f'<a href="/admin/games/match/{match.pk}/change/">{str(match.pk)[:8]}</a>' in listing
    page = root_client.get(f"/admin/accounts/user/{alice.pk}/change/").content.decode()
    matches = f"/admin/games/match/?seats__user__id__exact={alice.pk}"
    changes = f"/admin/accounts/ratingchange/?user__id__exact={alice.pk}"
    assert f'href="{matches}"' in page and f'href="{changes}"' in page
    response = root_client.get(matches)
    assert [m.pk for m in response.context["cl"].result_list] == [match.pk]
    assert other.pk not in [m.pk for m in response.context["cl"].result_list]
    response = root_client.get(changes)
    assert [c.user_id for c in response.context["cl"].result_list] == [alice.pk]
