"""Command line for the bots.

``python -m games.bots choose --level LEVEL [--seed N] [--budget-ms M]``
    Reads one seat's view as JSON on standard input (``seat_view(...).to_dict()``, or the
    API's ``current_deal``: unknown keys are ignored) and prints the card the bot plays.

``python -m games.bots duel --a LEVEL --b LEVEL --players 2|4 --deals N [--seed S]
[--workers W] [--budget-ms M] [--json] [--progress]``
    Plays N duplicate deals (N/2 decks, each twice with the sides swapped) and prints A's
    score with its 95% confidence interval, the win/draw/loss counts, the point margin and
    each level's think time per move. See :mod:`games.bots.duel`.

``python -m games.bots duel --levels L1,L2,... --players 2|4 --deals N [--seed S] ...``
    A round robin: the duel above for every pair of the levels, on the same decks, then a
    table of each level's score against each other (95% CI), an Elo-like ladder and the
    think times.

Without ``--seed`` a fresh random seed is drawn and printed with the figures (report on
fresh seeds; keep a fixed seed, such as ``tune``, for tuning only).

On bad input either command prints one line to standard error and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import NoReturn

from games.rules import RulesError, SeatView

from . import DEFAULT_BUDGET_MS, LEVELS, UnknownBotLevelError, choose_card
from .duel import DuelError, ProgressBar, duel, fresh_seed, round_robin, wants_progress

EXIT_USAGE = 2
_JSON_KINDS: dict[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


class _Parser(argparse.ArgumentParser):
    """argparse, but its usage errors are one line on stderr (still exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help)\n")


def _fail(message: str) -> int:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_USAGE


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"the budget must be a positive number, not {text}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _check_view(view: SeatView) -> str | None:
    """Why ``view`` is not a position a bot can play from (None if it is)."""
    if view.players not in (2, 4):
        return f"a deal has 2 or 4 players, not {view.players}"
    if view.seat is None:
        return "this is a spectator's view (seat is null): a bot plays from a seat's view"
    if not 0 <= view.seat < view.players:
        return f"no seat {view.seat} in a {view.players}-player deal"
    if view.over or view.turn is None:
        return "the deal is over: there is no card to play"
    if view.turn != view.seat:
        return f"it is seat {view.turn}'s turn, not seat {view.seat}'s: no card to play"
    if not view.legal:
        return "the view has no legal card to play"
    if len(view.hand_sizes) != view.players or view.hand_sizes[view.seat] != len(view.hand):
        return "hand_sizes does not match the players and the hand"
    if not set(view.legal) <= set(view.hand):
        return "a legal card is not in the hand"
    seen = [*view.hand, *view.played, *(view.partner_hand or ())]
    if view.briscola_on_table:
        seen.append(view.briscola)
    if len(set(seen)) != len(seen):
        return "a card appears twice (in the hand, the partner's hand, the tricks or the table)"
    if sum(view.hand_sizes) + view.stock_count + len(view.played) != 40:
        return "the hands, the stock and the played cards do not add up to 40 cards"
    return None


def _choose(args: argparse.Namespace) -> int:
    if args.level not in LEVELS:
        return _fail(f"unknown bot level {args.level!r}: one of {', '.join(LEVELS)}")
    try:
        text = sys.stdin.read()
    except UnicodeDecodeError:
        return _fail("standard input is not UTF-8 text")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _fail(f"standard input is not JSON: {exc}")
    if not isinstance(data, dict):
        kind = _JSON_KINDS.get(type(data), type(data).__name__)
        return _fail(f"expected a seat view (a JSON object), got a JSON {kind}")
    try:
        view = SeatView.from_dict(data)
    except RulesError as exc:
        message = exc.message
        return _fail(
            message if message.startswith("not a seat view") else f"not a seat view: {message}"
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return _fail(f"not a seat view: {exc!r}")
    problem = _check_view(view)
    if problem is not None:
        return _fail(f"cannot play from this view: {problem}")
    try:
        card = choose_card(args.level, view, seed=args.seed, budget_ms=args.budget_ms)
    except ValueError as exc:  # a bot refusing an inconsistent view (unknown level: above)
        return _fail(f"cannot play from this view: {exc}")
    print(card.code)
    return 0


def _duel(args: argparse.Namespace) -> int:
    if args.levels is not None:
        if args.a is not None or args.b is not None:
            return _fail("give either --levels (a round robin) or --a and --b, not both")
        return _round_robin(args)
    if args.a is None or args.b is None:
        return _fail("a duel needs --a and --b (or --levels for a round robin)")
    for level in (args.a, args.b):
        if level not in LEVELS:
            return _fail(f"unknown bot level {level!r}: one of {', '.join(LEVELS)}")
    if args.deals < 2 or args.deals % 2:
        return _fail(
            f"--deals must be a positive even number (each deck is played twice), not {args.deals}"
        )
    seed = args.seed if args.seed is not None else fresh_seed()
    bar = None
    if wants_progress(args.progress, sys.stderr):
        bar = ProgressBar(f"{args.a} vs {args.b} ({args.players}p)", stream=sys.stderr)
    try:
        summary = duel(
            args.a,
            args.b,
            players=args.players,
            deals=args.deals,
            seed=seed,
            workers=args.workers,
            budget_ms=args.budget_ms,
            partners_last_hand=not args.no_partners_last_hand,
            progress=bar,
            max_iterations=args.max_iterations,
        )
    except (DuelError, UnknownBotLevelError) as exc:
        return _fail(str(exc))
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        print(summary.format())
    return 0


def _round_robin(args: argparse.Namespace) -> int:
    levels = [level.strip() for level in args.levels.split(",") if level.strip()]
    for level in levels:
        if level not in LEVELS:
            return _fail(f"unknown bot level {level!r}: one of {', '.join(LEVELS)}")
    if len(levels) < 2 or len(set(levels)) != len(levels):
        return _fail(f"--levels needs at least two distinct levels, not {args.levels!r}")
    if args.deals < 2 or args.deals % 2:
        return _fail(
            f"--deals must be a positive even number (each deck is played twice), not {args.deals}"
        )
    seed = args.seed if args.seed is not None else fresh_seed()
    bars: list[ProgressBar] = []

    def progress(a: str, b: str) -> ProgressBar | None:
        for bar in bars:
            bar.close()
        bars.clear()
        if not wants_progress(args.progress, sys.stderr):
            return None
        bars.append(ProgressBar(f"{a} vs {b} ({args.players}p)", stream=sys.stderr))
        return bars[0]

    try:
        result = round_robin(
            levels,
            players=args.players,
            deals=args.deals,
            seed=seed,
            workers=args.workers,
            budget_ms=args.budget_ms,
            partners_last_hand=not args.no_partners_last_hand,
            progress=progress,
            max_iterations=args.max_iterations,
        )
    except (DuelError, UnknownBotLevelError) as exc:
        return _fail(str(exc))
    finally:
        for bar in bars:
            bar.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.format())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m games.bots",
        description="Briscola bots: choose a card from a seat's view, or duel two levels.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    levels = ", ".join(LEVELS)

    choose = commands.add_parser(
        "choose",
        help="read a seat view (JSON) on stdin, print the card the bot plays",
        description="Read one seat's view as JSON on standard input (seat_view(...).to_dict() "
        "or the API's current_deal; unknown keys are ignored) and print the card code "
        "the bot plays. Exit status 2, with one line on stderr, on bad input.",
    )
    choose.add_argument("--level", required=True, help=f"bot level: {levels}")
    choose.add_argument("--seed", default=None, help="seed of the bot's random choices")
    choose.add_argument(
        "--budget-ms",
        type=_budget,
        default=DEFAULT_BUDGET_MS,
        help=f"thinking budget of searching levels (default {DEFAULT_BUDGET_MS})",
    )
    choose.set_defaults(run=_choose)

    play = commands.add_parser(
        "duel",
        help="play duplicate deals between two levels and report A's score",
        description="Play N deals between levels A and B: N/2 decks, each played twice with "
        "the sides swapped (duplicate), and report A's score with a 95% confidence "
        "interval computed over the pairs, the point margin and the think times.",
    )
    play.add_argument("--a", metavar="LEVEL", help=f"level A: {levels}")
    play.add_argument("--b", metavar="LEVEL", help=f"level B: {levels}")
    play.add_argument(
        "--levels",
        metavar="L1,L2,...",
        help="a round robin over these levels (comma-separated) instead of --a/--b",
    )
    play.add_argument("--players", type=int, choices=(2, 4), required=True)
    play.add_argument(
        "--deals",
        type=_positive,
        required=True,
        help="number of deals in total (even: each deck is played twice)",
    )
    play.add_argument(
        "--seed",
        default=None,
        help="duel seed: deck i is shuffled from SEED:i (default: a fresh random seed, printed)",
    )
    play.add_argument("--workers", type=_positive, default=1, help="processes (default 1)")
    play.add_argument(
        "--budget-ms",
        type=_budget,
        default=DEFAULT_BUDGET_MS,
        help=f"thinking budget per move (default {DEFAULT_BUDGET_MS})",
    )
    play.add_argument(
        "--max-iterations",
        type=_positive,
        default=None,
        help="cap the searching levels' work (guessed deals a move); with a large "
        "--budget-ms, a comparison that a loaded machine does not skew",
    )
    play.add_argument("--json", action="store_true", help="print the summary as JSON")
    play.add_argument(
        "--progress",
        action="store_true",
        help="draw a progress bar on stderr even when it is not a terminal",
    )
    play.add_argument(
        "--no-partners-last-hand",
        action="store_true",
        help="4 players: partners do not see each other's hand in the last three tricks",
    )
    play.set_defaults(run=_duel)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
