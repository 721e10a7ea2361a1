"""What would knowing the other hands be worth to the expert? The ceiling of inference.

    nice .venv/bin/python bench/hand_bound.py [--deals 1000] [--against greedy,neural]
        [--budget-ms 100] [--players 2] [--seed S] [--workers 2] [--max-iterations N]

Inference (weighting or drawing the expert's guessed deals by how likely the opponents'
plays were under a model of them, as the issue suggests) can at best tell the expert the
opponents' true hands. This measures that best case: on the same duplicate deals and the
same decision seeds, the expert as it is against the expert whose guesses deal every
hidden hand its **true** cards (the stock's order stays guessed), each against the same
opponent. The paired difference of their scores is the most any inference about hands
could add there; where it is small, the expert's gap to a target is not in what it
guesses of the hands.

The true hands reach the search only here, in this script, through
:class:`TrueHandSampler` put in place of the expert's sampler in this process: the bot
itself sees nothing but its seat's view, and ``games.bots`` has no way to pass it more.
Figures depend on the machine's speed as the expert's do (the search is cut by the
clock): compare the two columns of one run, or pass ``--max-iterations`` with a large
budget for a comparison the clock does not decide.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.bots import LEVELS, choose_card  # noqa: E402
from games.bots import expert as expert_module  # noqa: E402
from games.bots.duel import (  # noqa: E402
    decision_seed,
    deck_seed,
    fresh_seed,
    mean_interval,
    side_levels,
)
from games.rules import Card, Deal, seat_view, shuffled_deck  # noqa: E402

_PlainSampler = expert_module._Sampler


class TrueHandSampler(_PlainSampler):
    """The expert's sampler, but every hidden hand is the true one (``truth``, the deal
    being played, set before each move); only the stock's order is guessed."""

    truth: Deal | None = None

    def _true_cards(self) -> list[Card]:
        """The true cards of the hidden hands, in the order ``_world`` deals them."""
        truth = TrueHandSampler.truth
        assert truth is not None, "set TrueHandSampler.truth to the deal being played"
        cards: list[Card] = []
        for seat, fixed in enumerate(self.fixed):
            if fixed is None:
                held = truth.hands[seat]
                if seat == self.holder:  # _world adds the briscola to the hand itself
                    held = [c for c in held if c != self.view.briscola]
                cards.extend(held)
        return cards

    def sample(self, rng: random.Random) -> Deal:
        hands = self._true_cards()
        rest = [c for c in self.unseen if c not in hands]
        rng.shuffle(rest)
        return self._world(hands + rest)

    def every_world(self) -> Iterator[Deal]:
        truth = TrueHandSampler.truth
        assert truth is not None
        hidden = [s for s, fixed in enumerate(self.fixed) if fixed is None]
        for world in super().every_world():
            if all(set(world.hands[s]) == set(truth.hands[s]) for s in hidden):
                yield world


@dataclass(frozen=True)
class _Task:
    seed: str
    index: int
    against: str
    players: int
    budget_ms: float
    max_iterations: int | None


def _play(task: _Task, side: int, true_hands: bool) -> float:
    """The expert's result (1, 1/2, 0) on one side of the task's deck."""
    levels = side_levels("expert", task.against, task.players, side)
    deck = shuffled_deck(deck_seed(task.seed, task.index))
    deal = Deal(task.players, task.index % task.players, tuple(deck))
    expert_module._Sampler = TrueHandSampler if true_hands else _PlainSampler
    try:
        while deal.turn is not None:
            seat = deal.turn
            TrueHandSampler.truth = deal
            card = choose_card(
                levels[seat],
                seat_view(deal, seat),
                seed=decision_seed(task.seed, task.index, side, deal.ply),
                budget_ms=task.budget_ms,
                max_iterations=task.max_iterations,
            )
            deal.play(card, seat)
    finally:
        expert_module._Sampler = _PlainSampler
        TrueHandSampler.truth = None
    if deal.winner is None:
        return 0.5
    return 1.0 if deal.winner == side else 0.0


def play_pair(task: _Task) -> tuple[float, float]:
    """The expert's pair score (both sides of one deck), plain and with the true hands."""
    plain = sum(_play(task, side, False) for side in (0, 1)) / 2
    true = sum(_play(task, side, True) for side in (0, 1)) / 2
    return plain, true


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=1000, help="deal pairs per opponent")
    parser.add_argument("--against", default="greedy,neural,random")
    parser.add_argument("--budget-ms", type=float, default=100.0)
    parser.add_argument("--players", type=int, choices=(2, 4), default=2)
    parser.add_argument("--seed", default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-iterations", type=int, default=None)
    args = parser.parse_args(argv)
    opponents = [name for name in args.against.split(",") if name]
    unknown = [name for name in opponents if name not in LEVELS]
    if unknown or not opponents:
        parser.error(f"unknown levels {unknown}: one of {', '.join(LEVELS)}")
    if args.deals < 2:
        parser.error("--deals must be at least 2 (an interval needs two pairs)")
    seed = args.seed or fresh_seed()
    print(
        f"the expert, {args.players} players, {args.budget_ms:g} ms a move"
        + (f", at most {args.max_iterations} guesses" if args.max_iterations else "")
        + f", seed {seed!r}, {args.deals} deal pairs an opponent"
    )
    print(f"{'against':<10} {'as it is':>15} {'true hands':>15} {'difference':>17}")
    for against in opponents:
        tasks = [
            _Task(seed, i, against, args.players, args.budget_ms, args.max_iterations)
            for i in range(args.deals)
        ]
        if args.workers > 1:
            with Pool(args.workers) as pool:
                pairs = pool.map(play_pair, tasks, chunksize=4)
        else:
            pairs = [play_pair(task) for task in tasks]
        plain = mean_interval([p for p, _ in pairs])
        true = mean_interval([t for _, t in pairs])
        diff = mean_interval([t - p for p, t in pairs])
        print(
            f"{against:<10} {plain.mean:7.3f} ± {plain.half_width:.3f}"
            f" {true.mean:7.3f} ± {true.half_width:.3f}"
            f" {diff.mean:+9.3f} ± {diff.half_width:.3f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
