"""Resume (issue 13): a client that hangs up mid-deal and reconnects with the last id it
saw gets every event it missed, once, in order, the same as a client that stayed; from
before the current deal it gets one ``match`` event with the whole detail first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import caches
from rest_framework.test import APIClient

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join
from tests.live.streams import (
    NDJSON,
    SSE,
    in_test_thread,
    match_position,
    open_stream,
    run,
    timeless,
    timeless_detail,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live")]


def _path(match_id: Any) -> str:
    return f"/api/v1/matches/{match_id}/stream"


@pytest.mark.parametrize("how", ["last_event_id", "after"])
def test_reconnecting_with_the_last_id_misses_nothing_and_repeats_nothing(
    user_factory: Callable[..., User], games: Any, deterministic_seeds: None, how: str
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(
        creator=alice, players=2, format="first_to_2", seats=[SeatSpec("user", "bob")]
    )
    match_join(match_id=match.pk, user=bob)
    play = in_test_thread(lambda n: games.play(match, n))
    where = in_test_thread(match_position)

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        stayed = await open_stream(_path(match.pk), bob, NDJSON)
        left = await open_stream(_path(match.pk), bob, SSE)
        stayed_events = [await stayed.next()]
        left_events = [await left.next()]
        for _ in range(5):
            await play(1)
            target = await where(match.pk)
            stayed_events += await stayed.until(target)
            left_events += await left.until(target)
        await left.close()  # mid-deal
        for _ in range(7):  # play on: two tricks and a half
            await play(1)
            stayed_events += await stayed.until(await where(match.pk))
        last = left_events[-1]["id"]
        if how == "last_event_id":
            back = await open_stream(_path(match.pk), bob, SSE, **{"Last-Event-ID": str(last)})
        else:
            back = await open_stream(f"{_path(match.pk)}?after={last}", bob, SSE)
        left_events += await back.until(stayed_events[-1]["id"])
        await play(1)  # and it goes on live
        target = await where(match.pk)
        left_events += await back.until(target)
        stayed_events += await stayed.until(target)
        await back.close()
        await stayed.close()
        return stayed_events, left_events

    stayed, left = run(scenario)
    assert [e["type"] for e in left].count("match") == 1  # only the first
    # (built at other moments: seconds_left may have counted down a second between)
    assert [timeless(e) for e in left] == [timeless(e) for e in stayed]
    assert len(left) == 1 + 5 + 7 + 1
    ids = [e["id"] for e in left]
    assert ids == list(range(ids[0], ids[0] + len(ids)))  # one position per card


def test_resuming_across_a_deals_end_and_from_an_earlier_deal(
    user_factory: Callable[..., User], games: Any, deterministic_seeds: None
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(
        creator=alice, players=2, format="first_to_2", seats=[SeatSpec("user", "bob")]
    )
    match_join(match_id=match.pk, user=bob)
    start = match_position(match.pk)
    games.play(match, 39)
    before_last_card = match_position(match.pk)
    games.play(match, 3)  # the deal's last card, then two of the next deal

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        near = await open_stream(f"{_path(match.pk)}?after={before_last_card}", alice)
        far = await open_stream(f"{_path(match.pk)}?after={start + 3}", alice)
        owed_near = await near.until(await in_test_thread(match_position)(match.pk))
        owed_far = await far.until(await in_test_thread(match_position)(match.pk))
        await near.close()
        await far.close()
        return owed_near, owed_far

    near, far = run(scenario)
    assert [e["type"] for e in near] == ["deal_finished", "card_played", "card_played"]
    assert near[0]["changes"] == ["card_played", "deal_finished", "deal_started"]
    # The card that ended the deal is in the deal's record (the stream that saw the deal's
    # last but one card names it in `move`: test_stream_contract).
    assert near[0]["detail"]["deals"][0]["status"] == "finished"
    assert [e["move"]["ply"] for e in near[1:]] == [0, 1]
    assert [e["id"] for e in near] == [
        before_last_card + 2,
        before_last_card + 3,
        before_last_card + 4,
    ]
    # From the deal before: the whole detail at once, never a gap.
    assert [e["type"] for e in far] == ["match"]
    assert far[0]["id"] == near[-1]["id"]
    assert timeless(far[0])["detail"] == timeless(near[-1])["detail"]


def test_resuming_from_the_deal_before_whose_next_start_is_not_kept_answers_the_match(
    user_factory: Callable[..., User], games: Any, api_for: Callable[[User], APIClient]
) -> None:
    """Resumed from the deal's last card but one when the snapshot the next deal's start
    kept is gone (evicted, the cache down): not the steps made up from the state of now
    but one ``match`` event, the detail and ETag a GET answers."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(
        creator=alice, players=2, format="first_to_2", seats=[SeatSpec("user", "bob")]
    )
    match_join(match_id=match.pk, user=bob)
    games.play(match, 39)
    before_last_card = match_position(match.pk)
    games.play(match, 3)  # the deal's last card, then two of the next deal
    caches["default"].clear()

    async def scenario() -> list[dict[str, Any]]:
        stream = await open_stream(f"{_path(match.pk)}?after={before_last_card}", alice)
        owed = await stream.until(await in_test_thread(match_position)(match.pk))
        await stream.close()
        return owed

    owed = run(scenario)
    assert [(e["type"], e["id"]) for e in owed] == [("match", before_last_card + 4)]
    rest = api_for(alice).get(f"/api/v1/matches/{match.pk}")
    assert timeless_detail(owed[0]["detail"]) == timeless_detail(rest.json())
    assert owed[0]["etag"] == rest["ETag"]


def test_a_stream_read_late_still_has_every_card_even_the_ones_that_ended_the_match(
    user_factory: Callable[..., User], games: Any, deterministic_seeds: None
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)

    async def scenario() -> list[dict[str, Any]]:
        stream = await open_stream(_path(match.pk), alice, NDJSON)
        events = [await stream.next()]
        await in_test_thread(lambda: games.play(match, 40))()  # nothing read meanwhile
        return events + await stream.rest()

    events = run(scenario)
    assert [e["type"] for e in events] == ["match"] + ["card_played"] * 39 + ["match_finished"]
    assert [e["move"]["ply"] for e in events[1:]] == list(range(40))
    assert events[-1]["changes"] == ["card_played", "deal_finished", "match_finished"]
