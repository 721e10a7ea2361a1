"""Bot strength and speed against the targets of the expert-bot issues (17 and 18).

    .venv/bin/python bench/bots_bench.py [--deals 2000] [--workers N] [--budget-ms 100]
                                         [--seed SEED] [--only NAME ...] [--json]

Plays duplicate duels (see games/bots/duel.py) and prints, for each: A's score with its
95% confidence interval (over deal pairs), the win/draw/loss counts, the point margin per
deal and each level's think time per move, then the targets with met / not met:

    expert vs expert_v1 (the expert frozen before issue 18), 2 players   score >= 0.60
    expert vs learned, 2 players                                         score >= 0.60
    expert vs neural (the stronger learned policy), 2 players            score >= 0.60
    expert vs strong, 2 players                                          score >= 0.60
    expert vs greedy, 2 players                                          score >= 0.78
    expert vs random, 2 players                                          score >= 0.94
    2x expert vs 2x strong, 4 players                                    score >= 0.65
    expert think time per move     p95 <= 100 ms and max <= 150 ms (in every duel above)

learned vs strong, neural vs strong, strong vs greedy and greedy vs random are played as
references.
Without ``--seed`` a fresh seed is drawn (and printed): report on fresh seeds; tune on a
fixed one (``--seed tune``) that reports never use. Exit status: 0 when every target
measured is met (or none could be), 1 otherwise.

Think times are wall-clock: run on an otherwise idle machine, with at most one worker per
core (the default), or the expert's times (and, as its search is cut by the clock, its
strength) suffer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.bots import DEFAULT_BUDGET_MS, LEVELS  # noqa: E402
from games.bots.duel import (  # noqa: E402
    DuelSummary,
    ProgressBar,
    duel,
    fresh_seed,
    wants_progress,
)


@dataclass(frozen=True)
class Matchup:
    name: str
    a: str
    b: str
    players: int
    min_score: float | None = None
    min_ci_low: float | None = None
    reference: bool = False


MATCHUPS = (
    Matchup("expert-expert_v1-2p", "expert", "expert_v1", 2, min_score=0.60),
    Matchup("expert-learned-2p", "expert", "learned", 2, min_score=0.60),
    Matchup("expert-neural-2p", "expert", "neural", 2, min_score=0.60),
    Matchup("expert-strong-2p", "expert", "strong", 2, min_score=0.60),
    Matchup("expert-greedy-2p", "expert", "greedy", 2, min_score=0.78),
    Matchup("expert-random-2p", "expert", "random", 2, min_score=0.94),
    Matchup("expert-strong-4p", "expert", "strong", 4, min_score=0.65),
    Matchup("learned-strong-2p", "learned", "strong", 2, reference=True),
    Matchup("neural-strong-2p", "neural", "strong", 2, reference=True),
    Matchup("strong-greedy-2p", "strong", "greedy", 2, reference=True),
    Matchup("greedy-random-2p", "greedy", "random", 2, reference=True),
)

THINK_P95_MS = 100.0
THINK_MAX_MS = 150.0
THINK_LEVEL = "expert"


@dataclass(frozen=True)
class Check:
    matchup: str
    target: str
    value: str
    met: bool


def checks_for(matchup: Matchup, summary: DuelSummary) -> list[Check]:
    """The targets of one duel, checked."""
    out: list[Check] = []
    score = summary.score
    if matchup.min_score is not None:
        out.append(
            Check(
                matchup.name,
                f"score >= {matchup.min_score:.2f}",
                f"{score.mean:.4f}",
                score.mean >= matchup.min_score,
            )
        )
    if matchup.min_ci_low is not None:
        out.append(
            Check(
                matchup.name,
                f"CI lower bound > {matchup.min_ci_low:.2f}",
                f"{score.low:.4f}",
                score.low > matchup.min_ci_low,
            )
        )
    if THINK_LEVEL in (matchup.a, matchup.b):
        think = summary.think_of(THINK_LEVEL)
        out.append(
            Check(
                matchup.name,
                f"{THINK_LEVEL} think p95 <= {THINK_P95_MS:g} ms",
                f"{think.p95_ms:.1f} ms",
                think.p95_ms <= THINK_P95_MS,
            )
        )
        out.append(
            Check(
                matchup.name,
                f"{THINK_LEVEL} think max <= {THINK_MAX_MS:g} ms",
                f"{think.max_ms:.1f} ms",
                think.max_ms <= THINK_MAX_MS,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/bots_bench.py",
        description="Duplicate duels of the bot levels, checked against the issue's targets.",
    )
    parser.add_argument("--deals", type=int, default=2000, help="deals per duel (even)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="processes (default: the number of cores)",
    )
    parser.add_argument("--budget-ms", type=float, default=DEFAULT_BUDGET_MS)
    parser.add_argument(
        "--max-iterations",
        type=int,
        default=None,
        help="cap the expert's guessed deals a move (with a large --budget-ms: a fixed-work "
        "comparison a loaded machine does not skew; the think-time targets then do not apply)",
    )
    parser.add_argument("--seed", default=None, help="duel seed (default: a fresh one, printed)")
    parser.add_argument(
        "--only",
        action="append",
        choices=[m.name for m in MATCHUPS],
        help="run only this duel (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--progress", action="store_true", help="progress bar even off a TTY")
    args = parser.parse_args(argv)
    if args.deals < 2 or args.deals % 2:
        parser.error(f"--deals must be a positive even number, not {args.deals}")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.seed is None:
        args.seed = fresh_seed()

    selected = [m for m in MATCHUPS if not args.only or m.name in args.only]
    missing = sorted({lvl for m in selected for lvl in (m.a, m.b)} - set(LEVELS))
    notes: list[str] = []
    if missing:
        notes.append(
            f"level(s) {', '.join(missing)} not in games.bots.LEVELS yet "
            f"(have: {', '.join(LEVELS)}): their duels are skipped"
        )
    runnable = [m for m in selected if m.a in LEVELS and m.b in LEVELS]
    show_progress = wants_progress(args.progress, sys.stderr)
    if not args.json:
        for note in notes:
            print(f"note: {note}")
        print(
            f"bench: {args.deals} deals per duel, seed {args.seed!r}, "
            f"{args.workers} worker(s), budget {args.budget_ms:g} ms"
            + (f", at most {args.max_iterations} guesses a move" if args.max_iterations else "")
            + "\n"
        )

    results: list[tuple[Matchup, DuelSummary]] = []
    checks: list[Check] = []
    for matchup in runnable:
        bar = ProgressBar(matchup.name, stream=sys.stderr) if show_progress else None
        try:
            summary = duel(
                matchup.a,
                matchup.b,
                players=matchup.players,
                deals=args.deals,
                seed=args.seed,
                workers=args.workers,
                budget_ms=args.budget_ms,
                progress=bar,
                max_iterations=args.max_iterations,
            )
        finally:
            if bar is not None:
                bar.close()
        results.append((matchup, summary))
        found = checks_for(matchup, summary)
        checks.extend(found)
        if not args.json:
            title = f"== {matchup.name}" + (" (reference)" if matchup.reference else "")
            print(title)
            print(summary.format())
            for check in found:
                print(f"  target {check.target}: {check.value} -> {_met(check.met)}")
            print(flush=True)

    if args.json:
        print(
            json.dumps(
                {
                    "notes": notes,
                    "deals": args.deals,
                    "seed": args.seed,
                    "workers": args.workers,
                    "budget_ms": args.budget_ms,
                    "max_iterations": args.max_iterations,
                    "duels": {m.name: s.to_dict() for m, s in results},
                    "targets": [c.__dict__ for c in checks],
                    "all_met": all(c.met for c in checks),
                },
                indent=2,
            )
        )
    else:
        print("== targets")
        if not checks:
            print("  none measured (no duel of the expert was run)")
        for check in checks:
            print(f"  {check.matchup:<18} {check.target:<28} {check.value:>10}  {_met(check.met)}")
        if checks:
            met = sum(c.met for c in checks)
            print(f"  {met}/{len(checks)} met")
    return 0 if all(c.met for c in checks) else 1


def _met(ok: bool) -> str:
    return "met" if ok else "NOT MET"


if __name__ == "__main__":
    sys.exit(main())
