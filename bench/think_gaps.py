"""How far past its budget can the expert's move run? The work between two clock reads.

    nice .venv/bin/python bench/think_gaps.py [--deals 20] [--budget-ms 100] [--seed S]
                                             [--players 2] [--against learned]

The expert stops at the first clock read past its hard deadline (tests/bots/test_bots_budget.py
checks that with a fake clock), so on a core of its own a move can overrun the deadline
by at most the work between two clock reads plus the work after the search. This plays
deals of expert against learned and, for every move of the expert, measures with the
thread's CPU clock (which a loaded machine does not inflate): the CPU time of the move, and
the longest CPU time between two consecutive reads of the search's clock, or between the
last read and the return. Prints their percentiles and maxima, and the wall time of the
moves, the slowest with their CPU time: a move whose wall time is far above its CPU time
waited for a core.

Wall-clock think times on a loaded machine also include the time the process waited for
a core; those are what ``python -m games.bots duel`` prints.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.bots import LEVELS  # noqa: E402
from games.bots.duel import fresh_seed, percentile  # noqa: E402
from games.bots.expert import expert_bot  # noqa: E402
from games.rules import Deal, seat_view, shuffled_deck  # noqa: E402


class GapClock:
    """The wall clock for the search, and the longest CPU gap between its reads."""

    def __init__(self) -> None:
        self.last_cpu = time.thread_time()
        self.longest = 0.0

    def __call__(self) -> float:
        now = time.thread_time()
        self.longest = max(self.longest, now - self.last_cpu)
        self.last_cpu = now
        return time.perf_counter()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--budget-ms", type=float, default=100.0)
    parser.add_argument("--players", type=int, choices=(2, 4), default=2)
    parser.add_argument("--seed", default=None)
    parser.add_argument("--against", choices=sorted(LEVELS), default="learned")
    args = parser.parse_args(argv)
    seed = args.seed or fresh_seed()
    cpu_ms: list[float] = []
    gap_ms: list[float] = []
    wall_ms: list[tuple[float, float]] = []
    for i in range(args.deals):
        deal = Deal(args.players, i % args.players, shuffled_deck(f"{seed}:{i}"))
        while deal.turn is not None:
            seat = deal.turn
            view = seat_view(deal, seat)
            rng = random.Random(f"{seed}:{i}:{deal.ply}")
            if seat % 2 == i % 2:
                clock = GapClock()
                wall = time.perf_counter()
                start = time.thread_time()
                card = expert_bot(view, rng, args.budget_ms, clock=clock)
                end = time.thread_time()
                wall = time.perf_counter() - wall
                clock.longest = max(clock.longest, end - clock.last_cpu)
                cpu_ms.append((end - start) * 1000)
                gap_ms.append(clock.longest * 1000)
                wall_ms.append((wall * 1000, (end - start) * 1000))
            else:
                card = LEVELS[args.against](view, rng, args.budget_ms)
            deal.play(card)
    print(
        f"expert, {args.players} players, {args.deals} deals against {args.against}, "
        f"seed {seed!r}, "
        f"budget {args.budget_ms:g} ms: {len(cpu_ms)} moves"
    )
    walls = [w for w, _ in wall_ms]
    for name, values in (
        ("CPU time of a move", cpu_ms),
        ("longest CPU gap", gap_ms),
        ("wall time of a move", walls),
    ):
        print(
            f"  {name:<20} p50 {percentile(values, 50):7.2f}  p95 {percentile(values, 95):7.2f}"
            f"  p99 {percentile(values, 99):7.2f}  max {max(values):7.2f} ms"
        )
    slowest = sorted(wall_ms, reverse=True)[:3]
    print("  slowest moves, wall / CPU ms: " + ", ".join(f"{w:.1f} / {c:.1f}" for w, c in slowest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
