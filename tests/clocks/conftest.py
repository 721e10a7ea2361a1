"""Fixtures for the clocks tests (issue 14): the API players of tests/matches, and time.

Deadlines are set and enforced by the database's clock, which no test can move; "time
passes" for a match by moving its clock columns back (:func:`db_travel`), and the web
server's clock (which only counts ``seconds_left`` for display) with time-machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.core.cache import caches
from django.db.models import F

from games.models import Match
from tests.matches.conftest import Player, api_fast_password_hashing, player  # noqa: F401

__all__ = ["Player", "db_travel"]


@pytest.fixture(autouse=True)
def no_trick_hold(settings: Any) -> None:
    """The per-move time alone: these tests let exactly it (and a second) pass. The time
    a turn gets more while the table shows a trick just taken has its own test, which
    sets it (test_a_turn_that_begins_while_a_trick_taken_is_shown_gets_that_time_more)."""
    settings.PLAY_TRICK_HOLD_SECONDS = 0


def db_travel(match_id: Any, seconds: float) -> None:
    """Let ``seconds`` pass for the match: its deadline, bot turn and expiry move back."""
    back = timedelta(seconds=seconds)
    match = Match.objects.get(pk=match_id)
    fields = {}
    for name in ("deadline", "bot_to_move_since", "expires_at"):
        if getattr(match, name) is not None:
            fields[name] = F(name) - back
    if fields:
        Match.objects.filter(pk=match_id).update(**fields)
    # The snapshots a move kept hold the deadline it set; no write moves a deadline
    # without a new version, but this one does: forget them.
    caches["default"].clear()


@pytest.fixture
def travel() -> Iterator[Callable[[Any, float], None]]:
    """``travel(match_id, seconds)``: ``seconds`` pass for the match (its clock columns
    move back, see :func:`db_travel`) while the web server's clock stands still
    (time-machine), so ``seconds_left`` goes down by exactly ``seconds``."""
    with time_machine.travel(datetime.now(tz=UTC), tick=False):
        yield db_travel
