"""Command line: ``python -m games.rules replay FILE`` (``-`` for standard input).

Prints the replay of a deal record as JSON. On a bad record prints one line naming what
is wrong and where to standard error, and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import RulesError
from .records import DealRecord
from .shuffle import SHUFFLE_ALGORITHM, seed_commitment, shuffled_deck


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m games.rules", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="replay a deal record and print it as JSON")
    replay.add_argument("file", help="a record file, or - for standard input")
    deck = commands.add_parser("deck", help="print the deck a seed gives and its commitment")
    deck.add_argument("seed")
    args = parser.parse_args(argv)

    if args.command == "deck":
        print(
            json.dumps(
                {
                    "algorithm": SHUFFLE_ALGORITHM,
                    "seed": args.seed,
                    "commitment": seed_commitment(args.seed),
                    "deck": [c.code for c in shuffled_deck(args.seed)],
                }
            )
        )
        return 0

    try:
        text = _read(args.file)
        result = DealRecord.from_json(text).replay()
    except OSError as exc:
        print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"error: {args.file} is not UTF-8 text", file=sys.stderr)
        return 2
    except RulesError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
