"""Deadlines are exact to well under a second on every database: SQLite's
CURRENT_TIMESTAMP is to the whole second (rounded down), which made a 5 s move time
anything between 4 and 5 s under ``make run``; its clock is now read to the millisecond.
PostgreSQL's (the transaction's start, to the microsecond) is unchanged: these tests run
each write in a transaction of its own (``transaction=True``), not in one around the
whole test, whose start would be PostgreSQL's clock throughout."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import transaction

from accounts.models import User
from games.clocks import services as clocks
from games.matches.selectors import match_get
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Match

pytestmark = pytest.mark.django_db(transaction=True)


def _half_past_a_second() -> None:
    """Wait until the wall clock is half-way through a second (as far as can be from
    both ends): a clock to the whole second is then 0.5 s behind."""
    while not 0.45 <= time.time() % 1 <= 0.55:
        time.sleep(0.01)


def test_the_database_clock_of_a_locked_match_is_to_the_millisecond(
    user_factory: Callable[..., User],
) -> None:
    alice = user_factory(username="alice")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])
    _half_past_a_second()
    with transaction.atomic():
        locked = match_get(match_id=match.pk, for_update=True)
        before = datetime.now(tz=UTC)
        now = clocks.db_now(locked)
        assert clocks.db_now(locked) == now  # one clock for the whole write
    assert abs(now - before) < timedelta(milliseconds=150), (now, before)


def test_a_five_second_move_gets_five_seconds(
    user_factory: Callable[..., User], games: Any
) -> None:
    """The move after the first card of each (whose abort window is longer): 5 s from
    the card before it, to within a few hundredths, not "4 to 5"."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("open")],
        time_control=clocks.TimeControl(per_move_seconds=5),
    )
    match_join(match_id=match.pk, user=bob)
    games.play(match, 2)  # each has played a first card: the move time is 5 s now
    for _ in range(2):
        _half_past_a_second()
        before = datetime.now(tz=UTC)
        games.play(match, 1)
        after = datetime.now(tz=UTC)
        deadline = Match.objects.values_list("deadline", flat=True).get(pk=match.pk)
        assert deadline is not None
        allowed = timedelta(seconds=5)
        slack = timedelta(milliseconds=100)
        assert before + allowed - slack <= deadline <= after + allowed + slack, (
            before,
            deadline,
            after,
        )
