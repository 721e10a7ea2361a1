"""The account stream, GET /api/v1/stream (issue 13): your turn in any match, an
invitation received, a match started or finished, a rating changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join, match_resign
from tests.live.streams import NDJSON, SSE, in_test_thread, open_stream, run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live")]


def test_an_account_hears_of_invitations_turns_ends_and_ratings(
    user_factory: Callable[..., User], games: Any, deterministic_seeds: None
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    earlier = match_create(creator=bob, players=2, format="single", seats=[SeatSpec("open")])

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        stream = await open_stream("/api/v1/stream", alice, NDJSON)
        bobs = await open_stream("/api/v1/stream", bob, SSE)
        first, bob_first = await stream.next(), await bobs.next()
        events, bob_events = [first], [bob_first]

        def invite() -> Any:
            return match_create(
                creator=bob,
                players=2,
                format="single",
                seats=[SeatSpec("user", "alice")],
                rated=True,
            )

        match = await in_test_thread(invite)()
        events.append(await stream.next())
        await in_test_thread(lambda: match_join(match_id=match.pk, user=alice))()
        events.append(await stream.next())
        if (await in_test_thread(lambda: games.state(match))()).turn == 1:
            events.append(await stream.next())  # alice leads: her turn at once
            assert events[-1]["type"] == "your_turn" and events[-1]["ply"] == 0
        # each time the turn comes back to alice, she hears of it
        turns = 0
        for _ in range(6):
            await in_test_thread(lambda: games.play(match, 1))()
            state = await in_test_thread(lambda: games.state(match))()
            if state.turn == 1:  # alice's seat
                turns += 1
                events.append(await stream.next())
                assert events[-1]["type"] == "your_turn", events[-1]
                assert events[-1]["ply"] == state.ply
        assert turns >= 2
        await in_test_thread(lambda: match_resign(match_id=match.pk, user=alice))()
        while (event := await stream.next()) is not None and event["type"] != "rating_changed":
            events.append(event)
        events.append(event)
        while (event := await bobs.next()) is not None and event["type"] != "rating_changed":
            bob_events.append(event)
        bob_events.append(event)
        await stream.close()
        await bobs.close()
        return events, bob_events

    events, bob_events = run(scenario)
    types = [e["type"] for e in events]
    assert types[0] == "account" and events[0]["matches"] == []
    assert types[1] == "invitation_received" and events[1]["invited"] is True
    assert "match_started" in events[2]["type"] or types[2] == "match_started"
    assert types.count("your_turn") >= 2
    assert all(e["your_turn"] for e in events if e["type"] == "your_turn")
    assert types[-2:] == ["match_finished", "rating_changed"]
    assert events[-1]["rating_changes"] and events[-1]["rating_changes"][0]["user"] == "alice"
    ids = [e["id"] for e in events]
    assert ids == sorted(set(ids))
    # bob's stream knew his waiting match from the start, and heard of the new one
    assert [m["match"] for m in bob_events[0]["matches"]] == [str(earlier.pk)]
    bob_types = [e["type"] for e in bob_events]
    # bob read nothing while the match was played: his stream tells where it stands now
    # (an account stream reports states, and a change read late comes with the others)
    assert bob_types[1:] == ["match_finished", "rating_changed"]
    assert bob_events[-1]["match"] == events[-1]["match"]
    assert "invitation_received" not in bob_types
    # nothing about a hand: an account event names matches, turns and results only
    assert not any("hand" in e or "detail" in e for e in events + bob_events)


def test_a_rematch_reaches_the_account_streams_of_both_players(
    user_factory: Callable[..., User], games: Any, deterministic_seeds: None
) -> None:
    """The other player hears of the invitation; once accepted, both hear of the start
    (the proposer, seated at once, is watched from the proposal on)."""
    from games.clocks.services import rematch_propose

    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    first = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=first.pk, user=bob)
    games.play(first, 2)  # both have played: a resignation ends the match
    match_resign(match_id=first.pk, user=bob)

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
        alices = await open_stream("/api/v1/stream", alice, NDJSON)
        bobs = await open_stream("/api/v1/stream", bob, SSE)
        assert (await alices.next())["type"] == (await bobs.next())["type"] == "account"
        rematch = await in_test_thread(rematch_propose)(match_id=first.pk, user=alice)
        bob_heard = [await bobs.next()]  # alice, seated at once, is told nothing yet
        await in_test_thread(rematch_propose)(match_id=first.pk, user=bob)  # accepted
        alice_heard = [await alices.next()]
        bob_heard.append(await bobs.next())
        await alices.close()
        await bobs.close()
        return alice_heard, bob_heard, rematch

    alice_heard, bob_heard, rematch = run(scenario)
    assert {e["match"] for e in alice_heard + bob_heard} == {str(rematch.pk)}
    assert bob_heard[0]["type"] == "invitation_received" and bob_heard[0]["invited"]
    assert bob_heard[0]["status"] == "waiting" and bob_heard[0]["your_seat"] is None
    assert [e["type"] for e in (alice_heard[0], bob_heard[1])] == ["match_started"] * 2
    assert alice_heard[0]["your_seat"] == 1 and bob_heard[1]["your_seat"] == 0
