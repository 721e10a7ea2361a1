"""How fast is the rules engine? Prints figures; nothing here asserts on timing.

    python bench/rules_bench.py [--seconds 3] [--json] [--cpu N]

(a) complete random deals per second, 2 and 4 players, through the public API only
    (``Deal(players, dealer, deck)``, ``deal.is_over``, ``deal.legal_moves()``,
    ``deal.play(card)``), on decks shuffled beforehand with ``random.Random`` and a
    pre-drawn pool of random numbers, so the figure measures the engine;
(b) ``shuffled_deck(seed)`` per second;
(c) the per-request path of the API: ``replay_moves(...)`` of a deal's move log plus
    ``seat_view(deal, seat).to_dict()``, in microseconds (median and p95), after 20 moves
    and at the end of a deal (40 moves), for 2 and 4 players;
(d) each figure next to its target, met or not met: deals/s is judged on the fastest
    batch (what one core does when no other process competes for it), request times on
    the median; the whole-run rate and the p95 are printed beside them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.rules import CARDS, Card, Deal, replay_moves, seat_view, shuffled_deck  # noqa: E402

TARGET_DEALS_PER_SECOND_2P = 25_000
TARGET_REQUEST_MICROSECONDS = 100.0


def pin(cpu: int | None) -> str:
    """The benchmark is single-threaded (one core); ``--cpu`` also pins it to one CPU."""
    if cpu is None:
        return "one thread"
    if not hasattr(os, "sched_setaffinity"):
        return "one thread (pinning not supported here)"
    os.sched_setaffinity(0, {cpu})
    return f"one thread, pinned to CPU {cpu}"


def prepared_decks(count: int, rng: random.Random) -> list[tuple[Card, ...]]:
    decks = []
    for _ in range(count):
        deck = list(CARDS)
        rng.shuffle(deck)
        decks.append(tuple(deck))
    return decks


def per_second(batch: Callable[[], int], seconds: float) -> dict[str, float]:
    """Run ``batch`` (which returns how many things it did) for ``seconds``.

    ``mean`` is things per second over the whole run; ``best`` is the rate of the fastest
    batch, which is what the engine does when no other process takes the core (on a
    busy machine the two differ; the target is judged on ``best``)."""
    batch()  # warm up
    gc.collect()
    done = 0
    best = 0.0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        before = time.perf_counter()
        count = batch()
        after = time.perf_counter()
        best = max(best, count / (after - before))
        done += count
        elapsed = after - start
    return {"mean": done / elapsed, "best": best}


def random_deals_per_second(players: int, seconds: float) -> dict[str, float]:
    rng = random.Random(players)
    decks = prepared_decks(200, rng)
    pool = [rng.randrange(1 << 30) for _ in range(1 << 16)]
    mask = len(pool) - 1
    position = 0

    def batch() -> int:
        nonlocal position
        k = position
        for i, deck in enumerate(decks):
            deal = Deal(players, i % players, deck)
            while not deal.is_over:
                moves = deal.legal_moves()
                deal.play(moves[pool[k & mask] % len(moves)])
                k += 1
        position = k
        return len(decks)

    return per_second(batch, seconds)


def shuffles_per_second(seconds: float) -> dict[str, float]:
    seeds = [f"bench-seed-{i}" for i in range(200)]

    def batch() -> int:
        for seed in seeds:
            shuffled_deck(seed)
        return len(seeds)

    return per_second(batch, seconds)


def request_path_microseconds(players: int, plies: int, seconds: float) -> dict[str, float]:
    """Replay ``plies`` moves of a stored deal and build one seat's view, per request."""
    rng = random.Random(1000 + players * 100 + plies)
    cases = []
    for deck in prepared_decks(200, rng):
        dealer = rng.randrange(players)
        deal = Deal(players, dealer, deck)
        while not deal.is_over:
            deal.play(rng.choice(deal.legal_moves()))
        codes = [c.code for c in deck]  # as stored: card codes, like the database holds
        moves = [c.code for c in deal.moves[:plies]]
        cases.append((dealer, codes, moves, rng.randrange(players)))

    def one(case: tuple[int, list[str], list[str], int]) -> int:
        dealer, deck, moves, seat = case
        start = time.perf_counter_ns()
        deal = replay_moves(players, dealer, deck, moves)
        seat_view(deal, seat).to_dict()
        return time.perf_counter_ns() - start

    for case in cases:  # warm up
        one(case)
    gc.collect()
    samples: list[int] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        samples.extend(one(case) for case in cases)
    p95 = statistics.quantiles(samples, n=20)[-1]
    return {
        "median_us": statistics.median(samples) / 1000,
        "p95_us": p95 / 1000,
        "samples": len(samples),
    }


def run(seconds: float, cpu: int | None = None) -> dict[str, Any]:
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu": pin(cpu),
        "seconds_per_figure": seconds,
    }
    two = random_deals_per_second(2, seconds)
    two["target"] = TARGET_DEALS_PER_SECOND_2P
    two["met"] = two["best"] >= TARGET_DEALS_PER_SECOND_2P
    results["deals_per_second"] = {"2p": two, "4p": random_deals_per_second(4, seconds)}
    results["shuffles_per_second"] = shuffles_per_second(seconds)
    requests = {}
    for players in (2, 4):
        for plies in (20, 40):
            figure = request_path_microseconds(players, plies, seconds)
            figure["target_us"] = TARGET_REQUEST_MICROSECONDS
            figure["met"] = figure["median_us"] < TARGET_REQUEST_MICROSECONDS
            figure["p95_met"] = figure["p95_us"] < TARGET_REQUEST_MICROSECONDS
            requests[f"{players}p_{plies}_moves"] = figure
    results["replay_and_view"] = requests
    return results


def met(flag: bool) -> str:
    return "met" if flag else "NOT MET"


def print_text(results: dict[str, Any]) -> None:
    print(
        f"Briscola rules engine ({results['implementation']} {results['python']}, "
        f"{results['cpu']}, {results['seconds_per_figure']:g} s per figure)"
    )
    deals = results["deals_per_second"]
    two, four, shuffles = deals["2p"], deals["4p"], results["shuffles_per_second"]
    print("                             best batch    whole run")
    print(
        f"  random 2-player deals/s    {two['best']:>10,.0f}   {two['mean']:>10,.0f}   "
        f"target >= {two['target']:,} (best)  {met(two['met'])}"
    )
    print(f"  random 4-player deals/s    {four['best']:>10,.0f}   {four['mean']:>10,.0f}")
    print(f"  shuffled_deck(seed)/s      {shuffles['best']:>10,.0f}   {shuffles['mean']:>10,.0f}")
    print("  replay_moves + seat_view(...).to_dict(), per request:")
    for name, figure in results["replay_and_view"].items():
        players, plies = name.split("_")[:2]
        print(
            f"    {players}, {plies:>2} moves   median {figure['median_us']:6.1f} µs   "
            f"p95 {figure['p95_us']:6.1f} µs   target median < "
            f"{figure['target_us']:g} µs  {met(figure['met'])}"
            f" (p95 {met(figure['p95_met'])})"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per figure (3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--cpu", type=int, help="pin the process to this CPU")
    args = parser.parse_args(argv)
    results = run(args.seconds, args.cpu)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_text(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
