"""The sweeps (issue 19.2, 19.3): one indexed query each, oldest first, bounded, never the
same match twice in a row; expert replies on their own queue."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import F

from accounts.models import User
from briscola_service import queueing
from games.clocks import services as clocks
from games.matches import services
from games.matches.selectors import deal_state
from games.matches.services import SeatSpec
from games.models import Deal, Match

pytestmark = pytest.mark.django_db


def lost_bot_turn(user: User, level: str = "greedy") -> Match:
    """A match whose bot is to move and whose reply was never sent (the commit's
    callbacks never run in a test's transaction)."""
    match = services.match_create(
        creator=user, players=2, format="single", seats=[SeatSpec("bot", level)]
    )
    deal = Deal.objects.get(match=match)
    state = deal_state(deal)
    if state.turn == 0:
        card = state.legal_moves()[0].code
        services.move_play(match_id=match.pk, user=user, card=card, ply=state.ply)
    match.refresh_from_db()
    assert match.bot_to_move_since is not None and match.to_move_seat == 1
    return match


def age(match: Match, seconds: float) -> None:
    Match.objects.filter(pk=match.pk).update(
        bot_to_move_since=F("bot_to_move_since") - timedelta(seconds=seconds)
    )


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[Any, ...]]]:
    """The tasks sent (name, args), instead of sending them."""
    record: list[tuple[str, tuple[Any, ...]]] = []

    def send(name: str, *args: Any, what: str) -> bool:
        record.append((name, args))
        return True

    monkeypatch.setattr(queueing, "task_send", send)
    return record


def test_the_bot_sweep_takes_the_oldest_first_bounded_and_moves_on(
    user_factory: Any, sent: list[tuple[str, tuple[Any, ...]]]
) -> None:
    alice = user_factory()
    matches = [lost_bot_turn(alice) for _ in range(3)]
    for match, seconds in zip(matches, (15, 30, 20), strict=True):
        age(match, seconds)
    young = lost_bot_turn(alice)  # waiting on its bot for less than 10 s
    oldest_first = [matches[1], matches[2]]
    assert clocks.bot_turns_sweep(older_than=10, limit=2) == 2
    deal_ids = [args[0] for _, args in sent]
    assert deal_ids == [m.to_move_deal for m in oldest_first]
    sent.clear()
    assert clocks.bot_turns_sweep(older_than=10, limit=2) == 1  # the next oldest
    # deal, ply, the account the reply is charged to (the creator), sent fairly or not
    assert [args[:3] for _, args in sent] == [
        (matches[0].to_move_deal, matches[0].to_move_ply, alice.pk)
    ]
    sent.clear()
    assert clocks.bot_turns_sweep(older_than=10, limit=2) == 0  # all queued just now
    assert young.pk not in {m.pk for m in matches}


def test_expert_replies_go_to_their_own_queue(
    user_factory: Any, sent: list[tuple[str, tuple[Any, ...]]]
) -> None:
    alice = user_factory()
    expert, greedy = lost_bot_turn(alice, "expert"), lost_bot_turn(alice, "greedy")
    age(expert, 60)
    age(greedy, 50)
    assert clocks.bot_turns_sweep(older_than=10) == 2
    assert [name for name, _ in sent] == ["games.tasks.bot_play_expert", "games.tasks.bot_play"]
    route = settings.CELERY_TASK_ROUTES["games.tasks.bot_play_expert"]["queue"]
    assert route != settings.CELERY_TASK_DEFAULT_QUEUE
    assert {q.name for q in settings.CELERY_TASK_QUEUES} == {
        route,
        settings.CELERY_TASK_DEFAULT_QUEUE,
    }


@contextmanager
def sweeping_elsewhere(name: str, *, dies: bool = False) -> Iterator[None]:
    """Another worker runs the ``name`` sweep meanwhile (a thread, with its own database
    connection); ``dies``: its process is killed mid-sweep (its connection goes, and the
    cache key it may hold stays)."""
    inside, leave = threading.Event(), threading.Event()

    def other_worker() -> None:
        try:
            with clocks._exclusive(name, 60) as got:
                assert got
                if dies:
                    connection.close()  # the server ends the session: as a SIGKILL does
                inside.set()
                leave.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert inside.wait(10), "the other sweep did not start"
        yield
    finally:
        leave.set()
        thread.join(10)


def test_a_sweep_already_running_is_not_run_twice(user_factory: Any) -> None:
    with sweeping_elsewhere("deadlines"):
        assert clocks.deadlines_sweep() == 0
        with clocks._exclusive("deadlines", 60) as second:
            assert not second
    with clocks._exclusive("deadlines", 60) as after:
        assert after  # released as it ended


@pytest.mark.postgres
def test_a_sweep_killed_midway_does_not_hold_up_the_next(
    user_factory: Any, wait_until: Callable[..., Any]
) -> None:
    """On PostgreSQL a sweep holds a session advisory lock, which the server releases
    with the dead worker's connection: the next sweep runs at once (a cache key would
    have held it up until it expired)."""

    def next_sweep_runs() -> bool:
        with clocks._exclusive("deadlines", 60) as got:
            return got

    with sweeping_elsewhere("deadlines", dies=True):
        # The server ends the dead session's backend a moment after its connection went.
        assert wait_until(next_sweep_runs, timeout=10)


def test_a_timeout_that_died_half_way_is_applied_later_once(
    user_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that dies while enforcing a deadline rolls its transaction back; the next
    sweep enforces it, once."""
    from tests.clocks.conftest import db_travel

    alice = user_factory()
    match = services.match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("bot", "greedy")],
        time_control=clocks.TimeControl(10, "forfeit", "greedy"),
    )
    deal = Deal.objects.get(match=match)
    state = deal_state(deal)
    if state.turn == 1:  # the bot leads: play its card as its task would
        services.bot_move_play(deal_id=deal.pk, ply=state.ply)
        state = deal_state(deal)
    services.move_play(
        match_id=match.pk, user=alice, card=state.legal_moves()[0].code, ply=state.ply
    )
    while (state := deal_state(deal)).turn == 1:  # the bot replies (and may lead again)
        assert services.bot_move_play(deal_id=deal.pk, ply=state.ply)
    db_travel(match.pk, 11)

    def dies(*args: Any, **kwargs: Any) -> None:
        raise SystemExit("the worker was killed")

    with monkeypatch.context() as killed:
        killed.setattr(services, "match_end_early", dies)
        with pytest.raises(SystemExit):
            clocks.deadlines_sweep()
    match.refresh_from_db()
    assert match.status == "active" and match.deadline is not None
    clocks.cache.delete(clocks.sweep_key("deadlines"))  # the dead sweep's key expired
    assert clocks.deadlines_sweep() == 1
    assert clocks.deadlines_sweep() == 0
    match.refresh_from_db()
    assert match.end_reason == "timeout"


def test_the_migration_gives_older_matches_their_clock(user_factory: Any) -> None:
    """Matches made before the clocks get the columns a move would have written."""
    import importlib

    from django.apps import apps

    backfill = importlib.import_module("games.migrations.0004_clocks_backfill").backfill
    alice = user_factory()
    waiting_on_bot = lost_bot_turn(alice)
    waiting = services.match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("open")]
    )
    expected = Match.objects.get(pk=waiting_on_bot.pk)
    Match.objects.update(
        to_move_deal=None,
        to_move_ply=None,
        to_move_seat=None,
        deadline=None,
        bot_to_move_since=None,
        expires_at=None,
    )
    backfill(apps, None)
    after = Match.objects.get(pk=waiting_on_bot.pk)
    assert (after.to_move_deal, after.to_move_ply, after.to_move_seat) == (
        expected.to_move_deal,
        expected.to_move_ply,
        expected.to_move_seat,
    )
    assert after.bot_to_move_since is not None and after.deadline is None
    assert Match.objects.get(pk=waiting.pk).expires_at is not None
