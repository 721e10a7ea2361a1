"""The match stream's contract (issue 13): the first event, one event per change of each
kind, ids strictly increasing, SSE and NDJSON carrying the same events, each event's
detail the REST detail of that moment; the errors before a stream starts; the cap; a
revoked token; heartbeats; a match that turns private; the WSGI fallback."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from django.conf import settings as django_settings
from django.core.cache import caches
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import access_token_create, access_token_revoke, token_revoke
from games.clocks.services import TimeControl, match_leave, timeout_enforce
from games.live import events as live_events
from games.matches.services import SeatSpec, match_abort, match_create, match_join, match_resign
from games.models import MatchStatus, OnTimeout
from tests.clocks.conftest import db_travel
from tests.live.streams import (
    NDJSON,
    SSE,
    in_test_thread,
    match_position,
    open_stream,
    parse_sse,
    run,
    timeless,
    timeless_detail,
)
from tests.matches.conftest import assert_error_shape

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live")]

ApiFor = Callable[[User | None], APIClient]


def _rest(api: APIClient, match_id: Any) -> tuple[dict[str, Any], str]:
    response = api.get(f"/api/v1/matches/{match_id}")
    assert response.status_code == 200, response.content
    return response.json(), response["ETag"]


def _path(match_id: Any) -> str:
    return f"/api/v1/matches/{match_id}/stream"


def test_every_change_is_one_event_with_the_rest_detail_in_both_formats(
    user_factory: Callable[..., User], api_for: ApiFor, games: Any, deterministic_seeds: None
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(
        creator=alice,
        players=2,
        format="first_to_2",
        seats=[SeatSpec("user", "bob")],
        rated=True,
    )
    api = {alice.pk: api_for(alice), bob.pk: api_for(bob)}

    async def scenario() -> dict[str, Any]:
        streams = {
            (who.username, wire): await open_stream(_path(match.pk), who, wire)
            for who in (alice, bob)
            for wire in (SSE, NDJSON)
        }
        seen: dict[tuple[str, str], list[dict[str, Any]]] = {key: [] for key in streams}
        checked = 0

        async def step(change: Callable[[], Any]) -> None:
            nonlocal checked
            await in_test_thread(change)()
            target = await in_test_thread(match_position)(match.pk)
            for (name, wire), stream in streams.items():
                who = alice if name == "alice" else bob
                events = await stream.until(target)
                # One change, one event (a rating follows a finished rated match at once).
                assert len(events) == 1, [e["type"] for e in events]
                event = events[0]
                if event["type"] == "match_finished":
                    continue
                detail, etag = await in_test_thread(_rest)(api[who.pk], match.pk)
                assert timeless_detail(event["detail"]) == timeless_detail(detail)
                assert event["etag"] == etag
                assert event["id"] == target
                seen[(name, wire)].append(event)
                checked += 1

        for (name, wire), stream in streams.items():
            assert stream.status == 200
            first = await stream.next()
            assert first is not None and first["type"] == "match"
            who = alice if name == "alice" else bob
            detail, etag = await in_test_thread(_rest)(api[who.pk], match.pk)
            assert timeless_detail(first["detail"]) == timeless_detail(detail)
            assert first["etag"] == etag
            seen[(name, wire)].append(first)

        await step(lambda: match_join(match_id=match.pk, user=bob))
        while (await in_test_thread(_status_and_deal)(match.pk)) == ("active", 1):
            await step(lambda: games.play(match, 1))
        # The second deal: three cards, then bob resigns; the rating follows.
        for _ in range(3):
            await step(lambda: games.play(match, 1))
        await in_test_thread(lambda: match_resign(match_id=match.pk, user=bob))()
        tails = {key: await stream.rest() for key, stream in streams.items()}
        return {"seen": seen, "tails": tails, "checked": checked}

    result = run(scenario)
    seen, tails = result["seen"], result["tails"]
    for key in seen:
        events = seen[key] + tails[key]
        ids = [e["id"] for e in events]
        assert ids == sorted(set(ids)), key
        types = [e["type"] for e in events]
        assert types[0] == "match"
        assert types[1] == "match_started"
        assert types.count("deal_finished") == 1
        assert types[-2:] == ["match_finished", "rating_changed"], types[-4:]
        # 40 cards in the first deal (the last one ends it), then 3.
        played = [e for e in events if "card_played" in e["changes"]]
        assert len(played) == 43
        assert [(e["move"]["deal"], e["move"]["ply"]) for e in played] == [
            (played[0]["move"]["deal"], ply) for ply in range(40)
        ] + [(played[-1]["move"]["deal"], ply) for ply in range(3)]
        final = events[-1]["detail"]
        assert final["status"] == MatchStatus.FINISHED and final["rating_changes"]
    # SSE and NDJSON carry the same events (but the seconds left, counted down as each
    # stream built its copy: the deadline they count to is compared).
    for name in ("alice", "bob"):
        sse = [timeless(e) for e in seen[(name, SSE)] + tails[(name, SSE)]]
        assert sse == [timeless(e) for e in seen[(name, NDJSON)] + tails[(name, NDJSON)]]
    assert result["checked"] >= 4 * 44


def _status_and_deal(match_id: Any) -> tuple[str, int]:
    from games.models import Match

    match = Match.objects.get(pk=match_id)
    return match.status, match.deals.count()


def test_seats_joined_match_started_and_aborted(
    user_factory: Callable[..., User], deterministic_seeds: None
) -> None:
    alice, bob, carol, dave = (user_factory(username=n) for n in ("alice", "bob", "carol", "dave"))
    four = match_create(
        creator=alice, players=4, format="single", seats=[SeatSpec("open")] * 3, public=True
    )
    waiting = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        stream = await open_stream(_path(four.pk), alice, NDJSON)
        events = [await stream.next()]
        for user in (bob, carol, dave):
            await in_test_thread(lambda u=user: match_join(match_id=four.pk, user=u))()
            events += await stream.until(await in_test_thread(match_position)(four.pk))
        await stream.close()
        other = await open_stream(_path(waiting.pk), alice, SSE)
        aborted = [await other.next()]
        await in_test_thread(lambda: match_abort(match_id=waiting.pk, user=alice))()
        aborted += await other.rest()  # an aborted match's stream ends
        return events, aborted

    events, aborted = run(scenario)
    assert [e["type"] for e in events] == ["match", "seat_joined", "seat_joined", "match_started"]
    assert events[-1]["changes"] == ["seat_joined", "match_started", "deal_started"]
    assert [e["detail"]["seats"][s]["joined"] for e in events[1:3] for s in (1, 2)] == [
        True,
        False,
        True,
        True,
    ]
    assert [e["type"] for e in aborted] == ["match", "match_aborted"]
    assert aborted[-1]["detail"]["status"] == MatchStatus.ABORTED


def test_a_seat_left_is_an_event_and_the_position_grows(
    user_factory: Callable[..., User], deterministic_seeds: None
) -> None:
    alice, bob, carol = (user_factory(username=n) for n in ("alice", "bob", "carol"))
    four = match_create(
        creator=alice, players=4, format="single", seats=[SeatSpec("open")] * 3, public=True
    )
    match_join(match_id=four.pk, user=bob)

    async def scenario() -> tuple[list[dict[str, Any]], list[int]]:
        stream = await open_stream(_path(four.pk), alice, NDJSON)
        events = [await stream.next()]
        positions = [await in_test_thread(match_position)(four.pk)]
        await in_test_thread(lambda: match_leave(match_id=four.pk, user=bob))()
        positions.append(await in_test_thread(match_position)(four.pk))
        events += await stream.until(positions[-1])
        await in_test_thread(lambda: match_join(match_id=four.pk, user=carol))()
        positions.append(await in_test_thread(match_position)(four.pk))
        events += await stream.until(positions[-1])
        await stream.close()
        return events, positions

    events, positions = run(scenario)
    assert positions[0] < positions[1] < positions[2]
    assert [e["type"] for e in events] == ["match", "match_event", "seat_joined"]
    assert [int(e["id"]) for e in events] == positions
    left, joined = events[1]["detail"]["seats"], events[2]["detail"]["seats"]
    assert [s["joined"] for s in left] == [True, False, False, False]
    assert [s["joined"] for s in joined] == [True, True, False, False]
    assert joined[1]["user"] == "carol"


def test_errors_before_the_stream_starts(
    user_factory: Callable[..., User], api_for: ApiFor, settings: Any
) -> None:
    alice, bob, eve = (user_factory(username=n) for n in ("alice", "bob", "eve"))
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    latest = match_position(match.pk)
    path = _path(match.pk)
    sse = {"HTTP_ACCEPT": SSE}

    assert_error_shape(api_for(None).get(path, **sse), 401, "not_authenticated")
    assert_error_shape(api_for(None).get("/api/v1/stream", **sse), 401, "not_authenticated")
    assert_error_shape(api_for(eve).get(path, **sse), 403, "match_private")
    missing = "/api/v1/matches/00000000-0000-0000-0000-000000000000/stream"
    assert_error_shape(api_for(alice).get(missing, **sse), 404, "match_not_found")
    assert_error_shape(
        api_for(alice).get("/api/v1/matches/nope/stream", **sse), 404, "match_not_found"
    )
    for bad in ("abc", "-1", "1.5", "1e3", "9" * 16):
        response = api_for(alice).get(path, HTTP_LAST_EVENT_ID=bad, **sse)
        assert_error_shape(response, 400, "invalid_event_id")
    # An empty Last-Event-ID is none at all (as EventSource reads it): the whole match.
    for empty in ("", " "):
        response = api_for(alice).get(path, HTTP_LAST_EVENT_ID=empty, **sse)
        assert response.status_code == 200, response.status_code
        text = b"".join(response.streaming_content).decode()
        assert [e["type"] for b in text.split("\n\n") if (e := parse_sse(b))] == ["match"]
    assert_error_shape(api_for(alice).get(path + "?after=x", **sse), 400, "invalid_event_id")
    response = api_for(alice).get(path + f"?after={latest + 1}", **sse)
    assert_error_shape(response, 400, "invalid_event_id")
    response = api_for(alice).get(path, HTTP_ACCEPT="application/json")
    assert_error_shape(response, 406, "not_acceptable")
    assert response["Content-Type"].startswith("application/json")
    for response in (
        api_for(alice).get(path, **sse),
        api_for(alice).get(f"{path}?after={latest}", **sse),
    ):
        assert response.status_code == 200 and response["Content-Type"] == SSE
        b"".join(response.streaming_content)


def test_the_cap_on_open_streams_per_account(
    user_factory: Callable[..., User], settings: Any
) -> None:
    settings.LIVE_MAX_STREAMS_PER_ACCOUNT = 2
    settings.LIVE_STREAMS_RETRY_AFTER = 7
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])

    async def scenario() -> list[Any]:
        first = await open_stream(_path(match.pk), alice)
        second = await open_stream("/api/v1/stream", alice)
        refused = await open_stream(_path(match.pk), alice)
        refused_account = await open_stream("/api/v1/stream", alice, NDJSON)
        others = await open_stream(_path(match.pk), bob)  # the cap is per account
        await first.next()
        await first.close()
        again = await open_stream("/api/v1/stream", alice)
        statuses = [first.status, second.status, refused.status, others.status, again.status]
        for stream in (second, others, again):
            await stream.close()
        return [statuses, refused.response, refused_account.response]

    statuses, *refusals = run(scenario)
    assert statuses == [200, 200, 429, 200, 200]
    for response in refusals:  # either route, either format: the one JSON error shape
        assert not response.streaming
        assert response["Content-Type"].startswith("application/json")
        body = assert_error_shape(response, 429, "too_many_streams")
        assert body["details"] == {"limit": 2, "per": "account", "retry_after": 7}
        assert response["Retry-After"] == "7"


def test_the_cap_on_open_streams_per_address(
    user_factory: Callable[..., User], settings: Any
) -> None:
    """Over ``LIVE_MAX_STREAMS_PER_ADDRESS`` (every account from one address together) a
    stream is 429 ``too_many_streams`` saying so; another address is not concerned, and a
    stream that ends gives its place back."""
    settings.LIVE_MAX_STREAMS_PER_ADDRESS = 2
    settings.LIVE_STREAMS_RETRY_AFTER = 6
    alice, bob, carol = (user_factory(username=n) for n in ("alice", "bob", "carol"))
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    here, there = "203.0.113.90", "198.51.100.91"

    async def scenario() -> list[Any]:
        held = [
            await open_stream(_path(match.pk), alice, address=here),
            await open_stream("/api/v1/stream", bob, address=here),
        ]
        refused = await open_stream("/api/v1/stream", carol, NDJSON, address=here)
        elsewhere = await open_stream("/api/v1/stream", carol, address=there)
        await held[0].next()
        await held[0].close()
        again = await open_stream("/api/v1/stream", carol, address=here)
        statuses = [s.status for s in (*held, refused, elsewhere, again)]
        for stream in (held[1], elsewhere, again):
            await stream.close()
        return [statuses, refused.response]

    statuses, refusal = run(scenario)
    assert statuses == [200, 200, 429, 200, 200]
    body = assert_error_shape(refusal, 429, "too_many_streams")
    assert body["details"] == {"limit": 2, "per": "address", "retry_after": 6}
    assert "address" in body["message"]
    assert refusal["Retry-After"] == "6"


def test_the_cap_on_open_streams_per_process(
    user_factory: Callable[..., User], settings: Any
) -> None:
    """Over ``LIVE_MAX_STREAMS`` (all accounts together) a stream is 503 ``streams_full``
    with Retry-After, whoever asks; a stream that ends gives its place back."""
    settings.LIVE_MAX_STREAMS = 3
    settings.LIVE_STREAMS_RETRY_AFTER = 4
    alice, bob, carol = (user_factory(username=n) for n in ("alice", "bob", "carol"))
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])

    async def scenario() -> list[Any]:
        held = [
            await open_stream(_path(match.pk), alice),
            await open_stream("/api/v1/stream", bob),
            await open_stream("/api/v1/stream", carol),
        ]
        full = [
            await open_stream(_path(match.pk), alice),
            await open_stream("/api/v1/stream", carol, NDJSON),
        ]
        await held[0].next()
        await held[0].close()
        again = await open_stream("/api/v1/stream", carol)
        statuses = [s.status for s in (*held, *full, again)]
        for stream in (*held[1:], again):
            await stream.close()
        return [statuses, *(s.response for s in full)]

    statuses, *refusals = run(scenario)
    assert statuses == [200, 200, 200, 503, 503, 200]
    for response in refusals:
        body = assert_error_shape(response, 503, "streams_full")
        assert body["details"] == {"retry_after": 4}
        assert response["Retry-After"] == "4"


def test_a_revoked_token_closes_its_streams(user_factory: Callable[..., User]) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
        on_match = await open_stream(_path(match.pk), alice)
        on_account = await open_stream("/api/v1/stream", alice, NDJSON)
        bobs = await open_stream(_path(match.pk), bob)
        await on_match.next(), await on_account.next(), await bobs.next()
        await in_test_thread(lambda: token_revoke(user=alice))()
        closed = await on_match.rest(), await on_account.rest()
        # bob's stream goes on: his next event is the next change
        await in_test_thread(lambda: match_join(match_id=match.pk, user=bob))()
        bob_next = await bobs.next()
        await bobs.close()
        return closed[0], closed[1], [bob_next]

    on_match, on_account, bob_next = run(scenario)
    assert [e["type"] for e in on_match] == ["stream_closed"]
    assert on_match[0]["reason"] == "token_revoked"
    assert [(e["type"], e["reason"]) for e in on_account] == [("stream_closed", "token_revoked")]
    assert bob_next[0]["type"] == "match_started"


def test_a_revoked_personal_token_closes_its_streams_and_no_other(
    user_factory: Callable[..., User],
) -> None:
    """A stream opened with a personal access token ends when that token is revoked
    (the hand it would carry next is never sent); a stream of another of the account's
    tokens goes on."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    revoked, revoked_key = access_token_create(user=alice, name="bot", scopes=["play"])
    _kept, kept_key = access_token_create(user=alice, name="phone", scopes=["read"])
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
        bearer = {"Authorization": f"Bearer {revoked_key}"}
        on_match = await open_stream(_path(match.pk), None, **bearer)
        on_account = await open_stream("/api/v1/stream", None, NDJSON, **bearer)
        kept = await open_stream(_path(match.pk), None, Authorization=f"Bearer {kept_key}")
        await on_match.next(), await on_account.next(), await kept.next()
        await in_test_thread(lambda: access_token_revoke(user=alice, token_id=revoked.pk))()
        closed = await on_match.rest(), await on_account.rest()
        await in_test_thread(lambda: match_join(match_id=match.pk, user=bob))()
        kept_next = await kept.next()
        await kept.close()
        return closed[0], closed[1], kept_next

    on_match, on_account, kept_next = run(scenario)
    assert [(e["type"], e["reason"]) for e in on_match] == [("stream_closed", "token_revoked")]
    assert [(e["type"], e["reason"]) for e in on_account] == [("stream_closed", "token_revoked")]
    assert kept_next is not None and kept_next["type"] == "match_started"
    assert kept_next["detail"]["current_deal"]["hand"]


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_signing_out_or_a_new_password_closes_the_session_streams(
    user_factory: Callable[..., User],
) -> None:
    """A browser's streams end when it signs out, and when the password changes (which
    signs every session out); a stream of another session is not ended by the first
    sign-out, nor a token's stream by the password."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    first, second = _signed_in(alice), _signed_in(alice)

    def new_password() -> None:
        alice.set_password("another long passphrase 42")
        alice.save()

    async def scenario() -> list[Any]:
        one = await open_stream(_path(match.pk), None, cookies=first.cookies)
        two = await open_stream("/api/v1/stream", None, NDJSON, cookies=second.cookies)
        token = await open_stream(_path(match.pk), alice)
        await one.next(), await two.next(), await token.next()
        await in_test_thread(lambda: first.post("/play/signout/"))()
        signed_out = await one.rest()
        await in_test_thread(lambda: match_join(match_id=match.pk, user=bob))()
        two_next = await two.next()
        await in_test_thread(new_password)()
        two_rest = await two.rest()
        token_next = await token.next()
        await token.close()
        return [signed_out, two_next, two_rest, token_next]

    signed_out, two_next, two_rest, token_next = run(scenario)
    assert [(e["type"], e["reason"]) for e in signed_out] == [("stream_closed", "signed_out")]
    assert two_next is not None and two_next["type"] != "stream_closed"
    # the account stream may still owe the join's other changes; then it ends
    assert [e["type"] for e in two_rest].count("stream_closed") == 1
    assert (two_rest[-1]["type"], two_rest[-1]["reason"]) == ("stream_closed", "signed_out")
    assert token_next is not None and token_next["type"] == "match_started"


def test_a_session_replaced_by_another_sign_in_closes_its_streams_at_once(
    user_factory: Callable[..., User], settings: Any
) -> None:
    """Signing in as bob in alice's browser replaces her session without a sign-out (the
    re-audit saw her stream go on for 60 s, to the periodic look): the session's deletion
    rings her streams."""
    settings.LIVE_CREDENTIALS_SECONDS = 300  # only the ring can end it within the test
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    browser = _signed_in(alice)

    async def scenario() -> list[dict[str, Any]]:
        stream = await open_stream(_path(match.pk), None, cookies=browser.cookies)
        await stream.next()
        await in_test_thread(lambda: browser.force_login(bob))()
        return await stream.rest(timeout=10)

    events = run(scenario)
    assert [(e["type"], e["reason"]) for e in events] == [("stream_closed", "signed_out")]


def test_a_lost_revocation_message_is_made_good_by_the_periodic_look(
    user_factory: Callable[..., User], settings: Any
) -> None:
    """Even when no message rings the streams (the token deleted behind the signals'
    back, as a lost publish would leave it), they look at their credentials again every
    LIVE_CREDENTIALS_SECONDS and end."""
    settings.LIVE_HEARTBEAT_SECONDS = 0.05
    settings.LIVE_CREDENTIALS_SECONDS = 0.2
    alice, _bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])

    async def scenario() -> list[dict[str, Any]]:
        stream = await open_stream(_path(match.pk), alice)
        await stream.next()
        await in_test_thread(lambda: Token.objects.filter(user=alice)._raw_delete("default"))()
        return await stream.rest(timeout=5)

    events = run(scenario)
    assert [(e["type"], e["reason"]) for e in events] == [("stream_closed", "token_revoked")]


def test_without_a_broker_a_watched_deadline_is_enforced_with_no_request(
    user_factory: Callable[..., User], settings: Any
) -> None:
    """``make run`` (tasks in process, no beat): a player who only watches the stream sends
    no request, and requests were what ran the clocks' sweep; the player audit saw a 5 s
    move time enforced 25 to 30 s late. A waiting stream now runs the sweep itself: the
    deadline passes, the timeout comes down the stream, no request made."""
    from briscola_service import queueing
    from tests.clocks.conftest import db_travel

    assert queueing.tasks_run_in_process()
    settings.CLOCK_IN_PROCESS_SWEEP_SECONDS = 0.1
    # The test moves the deadline back (the database's clock cannot be moved): the
    # stream learns the new one at its next heartbeat's re-read, which alone enforces
    # nothing.
    settings.LIVE_HEARTBEAT_SECONDS = 0.5
    alice, match = _a_timed_match_started(user_factory)

    async def scenario() -> list[dict[str, Any]]:
        stream = await open_stream(_path(match.pk), alice)
        first = await stream.next()
        assert first is not None and first["detail"]["status"] == "active"
        await in_test_thread(lambda: db_travel(match.pk, 40))()  # past the first move's 30 s
        events = []
        while (event := await stream.next(timeout=10)) is not None:
            events.append(event)
            if event["detail"]["status"] != "active":
                break
        await stream.close()
        return events

    events = run(scenario)
    # No card played in time: the match is aborted (a first move missed costs no one).
    assert [e["type"] for e in events] == ["match_aborted"]
    assert events[-1]["detail"]["status"] == "aborted"
    assert events[-1]["detail"]["end_reason"] == "abort_window"


def _a_timed_match_started(user_factory: Callable[..., User]) -> tuple[User, Any]:
    """alice's match against bob, 10 s a move, started: (alice, the match)."""
    from games.clocks.services import TimeControl

    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("user", "bob")],
        time_control=TimeControl(per_move_seconds=10),
    )
    match_join(match_id=match.pk, user=bob)
    return alice, match


def test_a_failing_sweep_of_a_stream_is_logged_and_the_stream_goes_on(
    user_factory: Callable[..., User],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    live: Any,
) -> None:
    """The sweep that a due match's stream runs (``make run``) can fail: SQLite's lock held
    past its wait, a bug. A stream's body cannot answer an error (its 200 has gone): the
    error would cut the connection, and EventSource would reconnect straight into the same
    sweep. So the failure is logged and the stream waits on; the next period sweeps again
    (the failed one gave its sweep lock back), and that sweep's timeout comes down the
    same stream. The stream then leaves nothing behind (its slot: the ``live`` fixture)."""
    from django.db import OperationalError

    from games.clocks import services as clocks
    from tests.clocks.conftest import db_travel

    settings.CLOCK_IN_PROCESS_SWEEP_SECONDS = 0.1
    settings.LIVE_HEARTBEAT_SECONDS = 0.5  # learns the moved deadline at a heartbeat
    alice, match = _a_timed_match_started(user_factory)
    enforce = clocks.timeout_enforce
    sweeps: list[str] = []  # the threads that applied the deadline, or tried to

    def failing_once(**kwargs: Any) -> Any:
        sweeps.append(threading.current_thread().name)
        if len(sweeps) == 1:
            raise OperationalError("database is locked")
        return enforce(**kwargs)

    async def scenario() -> tuple[list[dict[str, Any]], list[str]]:
        stream = await open_stream(_path(match.pk), alice)
        await stream.next()
        monkeypatch.setattr(clocks, "timeout_enforce", failing_once)
        await in_test_thread(lambda: db_travel(match.pk, 40))()  # past the first move's 30 s
        events = await stream.rest(timeout=10)  # the stream ends once the match is aborted
        await stream.close()
        return events, stream.raw

    events, raw = run(scenario)
    assert len(sweeps) >= 2 and sweeps[0].startswith("live-db"), sweeps  # the stream's own
    failed = [r for r in caplog.records if r.name == "games.live.streams"]
    assert [(r.levelname, r.getMessage()) for r in failed] == [
        ("ERROR", "the in-process clocks sweep failed")
    ]
    assert failed[0].exc_info is not None and failed[0].exc_info[0] is OperationalError
    assert [e["type"] for e in events] == ["match_aborted"]
    assert events[-1]["detail"]["end_reason"] == "abort_window"
    assert not any("locked" in block for block in raw)  # nothing of the error on the wire
    assert live.subscribers() == 0


def test_heartbeats_keep_a_quiet_stream_alive(
    user_factory: Callable[..., User], settings: Any
) -> None:
    settings.LIVE_HEARTBEAT_SECONDS = 0.05
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])

    async def scenario() -> tuple[int, int, dict[str, Any] | None]:
        sse = await open_stream(_path(match.pk), alice, SSE)
        ndjson = await open_stream(_path(match.pk), alice, NDJSON)
        await sse.next(), await ndjson.next()
        while sse.heartbeats < 3 or ndjson.heartbeats < 3:
            await asyncio.sleep(0.05)
            await _pump(sse), await _pump(ndjson)
        await in_test_thread(lambda: match_join(match_id=match.pk, user=bob))()
        event = await sse.next()
        await ndjson.close()
        await sse.close()
        return sse.heartbeats, ndjson.heartbeats, event

    sse_beats, ndjson_beats, event = run(scenario)
    assert sse_beats >= 3 and ndjson_beats >= 3
    assert event is not None and event["type"] == "match_started"


async def _pump(stream: Any) -> None:
    """Read whatever the stream has sent (heartbeats are counted as they are parsed)."""
    chunk = await stream._chunks.__anext__()
    stream._buffer += chunk.decode()
    separator = "\n\n" if stream.wire == SSE else "\n"
    while separator in stream._buffer:
        block, stream._buffer = stream._buffer.split(separator, 1)
        if block.startswith(": ") or (stream.wire == NDJSON and block == ""):
            stream.heartbeats += 1


def test_a_match_that_turns_private_closes_the_stranger_stream(
    user_factory: Callable[..., User],
) -> None:
    alice, bob, eve = (user_factory(username=n) for n in ("alice", "bob", "eve"))
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])

    async def scenario() -> list[dict[str, Any]]:
        stream = await open_stream(_path(match.pk), eve)  # an open seat: anyone may look
        events = [await stream.next()]
        await in_test_thread(lambda: match_join(match_id=match.pk, user=bob))()
        return events + await stream.rest()

    events = run(scenario)
    assert [e["type"] for e in events] == ["match", "stream_closed"]
    assert events[-1]["reason"] == "match_private"
    assert "detail" not in events[-1]


def test_served_by_wsgi_a_stream_answers_what_is_owed_and_ends(
    user_factory: Callable[..., User], api_for: ApiFor, games: Any
) -> None:
    """Resumed from the match's start, one event a card: each step is the snapshot its
    write kept (the start's, each move's)."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    after = match_position(match.pk)
    games.play(match, 3)
    response = api_for(alice).get(f"{_path(match.pk)}?after={after}", HTTP_ACCEPT=SSE)
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    events = [e for block in text.split("\n\n") if (e := parse_sse(block))]
    assert [e["type"] for e in events] == ["card_played"] * 3
    assert [e["id"] for e in events] == [after + 1, after + 2, after + 3]
    rest = api_for(alice).get(f"/api/v1/matches/{match.pk}").json()
    assert timeless_detail(events[-1]["detail"]) == timeless_detail(rest)


def test_a_resumption_whose_steps_are_not_kept_answers_the_match_from_scratch(
    user_factory: Callable[..., User], api_for: ApiFor, games: Any
) -> None:
    """The snapshots the writes kept are gone (evicted, expired, the cache down): the
    stream does not make the steps up (the cards of then with the clock of now, a state
    the match was never in) but sends one ``match`` event, the detail a GET answers."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    after = match_position(match.pk)
    games.play(match, 3)
    caches["default"].clear()
    response = api_for(alice).get(f"{_path(match.pk)}?after={after}", HTTP_ACCEPT=SSE)
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    events = [e for block in text.split("\n\n") if (e := parse_sse(block))]
    assert [(e["type"], e["id"]) for e in events] == [("match", after + 3)]
    rest = api_for(alice).get(f"/api/v1/matches/{match.pk}")
    assert timeless_detail(events[0]["detail"]) == timeless_detail(rest.json())
    assert events[0]["etag"] == rest["ETag"]


def _a_timeout_and_the_bot_reply_read_at_once(
    alice: User, games: Any, live: Any
) -> tuple[Any, dict[str, Any], list[dict[str, Any]], int]:
    """A match of ``alice`` against a bot, 10 s a move (the timeout bot plays for her),
    whose stream reads a timeout and the cards after it at once (the timeout bot's card for
    her, the bot's reply): the match, the stream's first event, the events after it and the
    number of cards played since."""
    match = match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("bot", "random")],
        time_control=TimeControl(per_move_seconds=10, on_timeout=OnTimeout.BOT),
    )
    # Alice to lead (both have played: a timeout before a person's first card aborts).
    while (state := games.state(match)).ply < 2 or state.turn != 0 or state.table:
        games.play(match, 1)  # alice's cards; the bot replies in process

    def time_out_then_tell() -> None:
        """The timeout and the bot's reply (in process, once the timeout bot's card is
        committed) before the stream hears of either: it reads both cards at once."""
        held: list[tuple[str, Any]] = []
        with mock.patch.object(live, "publish", lambda key, message: held.append((key, message))):
            # 10 s a move, and the time a turn gets more after a trick taken
            db_travel(match.pk, 11 + django_settings.PLAY_TRICK_HOLD_SECONDS)
            assert timeout_enforce(match_id=match.pk) is not None
            until = time.monotonic() + 10
            while games.state(match).turn != 0 and time.monotonic() < until:
                time.sleep(0.02)  # the bot's reply, queued once the timeout bot's card is in
        assert games.state(match).turn == 0 and len(held) >= 2
        live.publish(*held[-1])

    async def scenario() -> list[dict[str, Any]]:
        stream = await open_stream(_path(match.pk), alice)
        first = await stream.next()
        assert first is not None and first["type"] == "match"
        await in_test_thread(time_out_then_tell)()
        events = await stream.until(await in_test_thread(match_position)(match.pk))
        await stream.close()
        return [first, *events]

    before = games.state(match).ply
    first, *events = run(scenario)
    return match, first, events, games.state(match).ply - before


def test_a_timeout_and_the_cards_after_it_are_told_as_they_happened(
    user_factory: Callable[..., User], api_for: ApiFor, games: Any, live: Any
) -> None:
    """A live stream that reads a timeout and two cards at once: one event a card, each the
    state the match was in then, the timeout told with the card that followed it,
    ``to_move`` always the deal's turn, the deadline the one each card set (the steps
    between are the snapshots the moves kept, not the old state with the new cards)."""
    alice = user_factory(username="alice")
    match, first, events, cards = _a_timeout_and_the_bot_reply_read_at_once(alice, games, live)
    assert cards >= 2  # the timeout bot's card, the bot's (a trick it takes: and its lead)
    assert [e["type"] for e in events] == ["card_played"] * cards, events
    timed_out, *replies = events
    assert timed_out["changes"] == ["match_event", "card_played"]
    assert timed_out["move"]["seat"] == 0 and {e["move"]["seat"] for e in replies} == {1}
    assert all(e["changes"] == ["card_played"] for e in replies)
    for event in events:
        detail = event["detail"]
        assert detail["to_move"] == detail["current_deal"]["turn"], event
        # A person's turn has a deadline, a bot's none (the old state showed alice's).
        assert (detail["deadline"] is None) == (detail["to_move"] == 1), event
    reply = events[-1]
    assert reply["detail"]["to_move"] == 0
    assert reply["detail"]["deadline"] > first["detail"]["deadline"]
    rest = api_for(alice).get(f"/api/v1/matches/{match.pk}")
    assert timeless_detail(reply["detail"]) == timeless_detail(rest.json())
    assert reply["etag"] == rest["ETag"]


def test_past_the_clock_events_it_looks_under_the_cards_read_at_once_are_one_event(
    user_factory: Callable[..., User], api_for: ApiFor, games: Any, live: Any, monkeypatch: Any
) -> None:
    """More clock events between two reads than a stream looks each step up under
    (``STEPS_EVENTS_MAX``, 0 here): no step is looked up, none made up; one event carries
    every change, without ``move`` (it names one card), the detail a GET answers."""
    monkeypatch.setattr(live_events, "STEPS_EVENTS_MAX", 0)
    alice = user_factory(username="alice")
    match, first, events, cards = _a_timeout_and_the_bot_reply_read_at_once(alice, games, live)
    assert cards >= 2
    assert [(e["type"], e["id"]) for e in events] == [("card_played", first["id"] + 2 + cards)]
    assert events[0]["changes"] == ["match_event", "card_played"]
    assert "move" not in events[0]
    rest = api_for(alice).get(f"/api/v1/matches/{match.pk}")
    assert timeless_detail(events[0]["detail"]) == timeless_detail(rest.json())
    assert events[0]["etag"] == rest["ETag"]


def test_a_settled_match_resumed_after_its_last_event_answers_204(
    user_factory: Callable[..., User], api_for: ApiFor, games: Any
) -> None:
    """EventSource reconnects after every 200, even an empty one, and stops on 204: a
    client that has every event of a match that is over is told there is nothing more."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    games.play(match, 3)
    playing = match_position(match.pk)
    # Being played: nothing owed yet, but more will come (under WSGI, an empty 200).
    response = api_for(alice).get(_path(match.pk), HTTP_LAST_EVENT_ID=str(playing), HTTP_ACCEPT=SSE)
    assert response.status_code == 200
    b"".join(response.streaming_content)

    match_resign(match_id=match.pk, user=alice)
    last = match_position(match.pk)
    assert last > playing
    for accept in (SSE, NDJSON):
        for extra in ({"HTTP_LAST_EVENT_ID": str(last)}, {"QUERY_STRING": f"after={last}"}):
            response = api_for(bob).get(_path(match.pk), HTTP_ACCEPT=accept, **extra)
            assert response.status_code == 204, (accept, extra, response.status_code)
            assert response.content == b""
            assert "Content-Type" not in response.headers  # not text/html: no body at all
    # Something still owed: the events, then the end, as before.
    response = api_for(bob).get(_path(match.pk), HTTP_LAST_EVENT_ID=str(playing), HTTP_ACCEPT=SSE)
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    events = [e for block in text.split("\n\n") if (e := parse_sse(block))]
    assert events and events[-1]["id"] == last and events[-1]["detail"]["status"] == "finished"


def test_a_stream_sweeps_only_for_a_match_the_server_owes_a_change(settings: Any) -> None:
    """An idle stream touches no table (the CI of 98b501d saw a stream's sweep of every
    second deadlock a test's teardown): it sweeps only once its match's deadline or expiry
    has come, or a bot to play is late by BOT_SWEEP_AFTER_SECONDS."""
    from datetime import UTC, datetime, timedelta
    from types import SimpleNamespace

    from games.live.streams import sweep_due

    settings.BOT_SWEEP_AFTER_SECONDS = 10
    moved = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    person = {"is_bot": False, "away": False, "bot_holds": False}
    bot = {**person, "is_bot": True}

    def due(**summary: Any) -> Any:
        base = {"deadline": None, "expires_at": None, "to_move": None, "seats": [person, bot]}
        return sweep_due(SimpleNamespace(summary={**base, "last_move_at": moved, **summary}))

    assert due() is None  # waiting on nobody
    assert due(to_move=0) is None  # a person's turn, no clock
    assert due(to_move=0, deadline=moved + timedelta(seconds=30)) == moved + timedelta(seconds=30)
    assert due(to_move=1) == moved + timedelta(seconds=10)  # the bot's reply, if lost
    away = {**person, "away": True}
    assert due(to_move=0, seats=[away, bot]) == moved + timedelta(seconds=10)
    expiry = "2026-12-08T12:00:00Z"
    assert due(expires_at=expiry) == datetime(2026, 12, 8, 12, 0, tzinfo=UTC)
