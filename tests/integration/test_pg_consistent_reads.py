"""A match read from its rows while a move commits, on PostgreSQL: every part of the
snapshot is of one moment (games.matches.selectors.rows_of_one_moment). Out of a
transaction each statement saw what was committed when it began: the CI mimic under load
caught a stream's snapshot with a bot's card (the person's turn) and the match's row of
before it (no deadline), on which the table waited for ever."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import caches
from django.db import connections

from accounts.models import User
from games.clocks.services import TimeControl
from games.live.events import read_snapshot
from games.matches import selectors, services
from games.matches.services import SeatSpec
from games.models import Match

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_password_hashing", "no_stray_connections"),
]


def test_a_move_committed_during_a_read_is_all_in_it_or_all_out(
    user_factory: Callable[..., User], games: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = services.match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("user", "bob")],
        time_control=TimeControl(per_move_seconds=60),
    )
    services.match_join(match_id=match.pk, user=bob)
    games.play(match, 3)  # both have played; the next is a person's turn with a deadline
    before = Match.objects.get(pk=match.pk)
    mover = alice if before.to_move_seat == 0 else bob
    state = games.state(match)
    card = state.legal_moves()[0].code

    def commit_the_move() -> None:
        try:
            services.move_play(match_id=match.pk, user=mover, card=card, ply=state.ply)
        finally:
            connections.close_all()

    seats = selectors.match_seats
    fired: list[bool] = []

    def seats_then_a_move(match: Match) -> Any:
        """Between the match's row and its moves, the move commits, elsewhere."""
        if not fired:
            fired.append(True)
            other = threading.Thread(target=commit_the_move)
            other.start()
            other.join()
        return seats(match)

    monkeypatch.setattr(selectors, "match_seats", seats_then_a_move)
    caches["default"].clear()  # no snapshot kept: read from the rows
    snapshot = read_snapshot(match.pk)
    assert fired and snapshot is not None and snapshot.current is not None
    replayed = snapshot.current.replayed()
    # The row (whose turn, the deadline) and the moves (the deal's turn) of one moment.
    assert snapshot.summary["to_move"] == replayed.turn
    assert snapshot.current.moves == tuple(m.code for m in state.moves)  # before the move
    assert games.state(match).ply == state.ply + 1  # the move did commit
