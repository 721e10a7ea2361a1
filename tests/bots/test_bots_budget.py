"""The expert's budget is a limit: its search stops as soon as the clock passes the
deadline, wherever it is (a playout, the endgame search, between guesses). Tested with a
fake clock, so nothing here depends on how fast the machine is."""

import gc
import random

import pytest
from bots_cases import random_play_positions

from games.bots import expert
from games.bots.expert import HARD_SHARE, TIME_SHARE, expert_bot
from games.bots.neural import neural_view_card


class JumpingClock:
    """Reads 0.0 for the first ``still`` reads, then far past any deadline; counts reads."""

    def __init__(self, still):
        self.still = still
        self.reads = 0
        self.late_reads = 0

    def __call__(self):
        self.reads += 1
        if self.reads <= self.still:
            return 0.0
        self.late_reads += 1
        return 1e6


PLIES = {2: (0, 9, 18, 24, 27, 30, 33), 4: (0, 9, 18, 26, 29, 31, 33)}
"""Openings and middles (playouts), the endgame search (few cards left), the minimax tail."""
SEARCHED = {2: (26, 27, 28, 30, 31, 33), 4: (28, 29, 30, 31, 32, 33)}
"""Where the default expert searches (before, it plays the neural policy's card)."""


@pytest.fixture(params=["default", "playouts"])
def searched_plies(request, monkeypatch):
    """The default expert (endgame search only), and the one searching with playouts
    from the first card (EARLY_POLICY None)."""
    if request.param == "playouts":
        monkeypatch.setattr(expert, "EARLY_POLICY", None)
        return PLIES
    return SEARCHED


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("still", [1, 2, 3, 5, 8, 13, 40, 200])
def test_the_search_stops_at_the_first_clock_read_past_the_deadline(players, still, searched_plies):
    positions = random_play_positions(players, f"budget-{players}", rng_seed=still)
    cut = 0
    plies = searched_plies[players]
    for ply in plies:
        view = positions[ply][2]
        if len(view.legal) < 2:
            continue
        clock = JumpingClock(still)
        card = expert_bot(view, random.Random(ply), 100, clock=clock)
        assert card in view.legal
        # The clock was read past the deadline at most once by the search, which ended
        # there (or had finished every guess before the deadline, near the end of a
        # deal), and at most once by the weighing of the opponent's plays before it
        # (GREEDY_EXPLOIT, in 2-player deals), which ends at its own deadline.
        assert clock.late_reads <= (2 if players == 2 else 1), (ply, clock.reads)
        cut += clock.late_reads
    assert cut >= len(plies) - 2


@pytest.mark.parametrize("players", [2, 4])
def test_out_of_time_before_a_single_guess_it_plays_the_neural_policy(players, searched_plies):
    positions = random_play_positions(players, f"no-time-{players}", rng_seed=1)
    for ply in searched_plies[players]:
        view = positions[ply][2]
        if len(view.legal) < 2:
            continue
        card = expert_bot(view, random.Random(0), 100, clock=JumpingClock(1))
        assert card is neural_view_card(view)


def test_a_slow_clock_lets_the_search_run_to_its_cap():
    """The clock itself does not end a search that has time: with a clock that never
    moves, the iteration cap ends it (and the choice is the capped one)."""
    view = random_play_positions(2, "no-rush", rng_seed=2)[28][2]
    never = JumpingClock(10**9)
    card = expert_bot(view, random.Random(5), 100, max_iterations=12, clock=never)
    again = expert_bot(view, random.Random(5), 60_000, max_iterations=12)
    assert card is again
    assert never.reads > 12  # read at every guess and inside the searches


def test_the_shares_leave_room_under_the_limit():
    assert 0 < TIME_SHARE < HARD_SHARE <= 1.0


class CollectorWatch:
    """A clock that never moves and notes, at each read, whether the collector is on."""

    def __init__(self):
        self.states = set()

    def __call__(self):
        self.states.add(gc.isenabled())
        return 0.0


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.parametrize("players", [2, 4])
def test_the_collector_is_paused_while_a_move_is_searched_and_back_on_after(players, collector_on):
    positions = random_play_positions(players, f"collector-{players}", rng_seed=5)
    for ply in SEARCHED[players]:
        view = positions[ply][2]
        if len(view.legal) < 2:
            continue
        watch = CollectorWatch()
        expert_bot(view, random.Random(ply), 60_000, max_iterations=3, clock=watch)
        assert watch.states == {False}
        assert gc.isenabled()
    # Off before the move (the caller's choice): still off after it.
    gc.disable()
    expert_bot(positions[SEARCHED[players][0]][2], random.Random(0), 60_000, max_iterations=2)
    assert not gc.isenabled()


def test_the_collector_is_back_on_when_the_search_raises(collector_on, monkeypatch):
    view = random_play_positions(2, "collector-raise", rng_seed=1)[SEARCHED[2][0]][2]

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(expert, "_solve", broken)
    with pytest.raises(RuntimeError, match="boom"):
        expert_bot(view, random.Random(0), 60_000, max_iterations=2)
    assert gc.isenabled()


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("still", [40, 10**9])
def test_a_move_leaves_no_cyclic_garbage(players, still, collector_on):
    """Its objects are freed by their reference counts (the endgame solver's recursive
    closure used to keep each of its tables alive as a cycle), whether the search ends
    by itself or is cut by the deadline."""
    positions = random_play_positions(players, f"garbage-{players}", rng_seed=7)
    gc.collect()
    gc.disable()
    for ply in SEARCHED[players]:
        view = positions[ply][2]
        if len(view.legal) > 1:
            expert_bot(view, random.Random(ply), 100, max_iterations=4, clock=JumpingClock(still))
    assert gc.collect() == 0
