"""Command line: ``python -m games.rules replay|verify|text FILE`` (``-`` for standard input).

``replay`` prints the replay of a deal record as JSON. ``verify`` checks an exported
record (with its ``seed``, ``commitment`` and ``result``) offline: it prints
``{"ok": ..., "checks": [...]}`` and exits with status 0 when every check passes, 1 when
one fails. ``text`` prints the record in the readable notation (one line per trick).
``deck SEED`` prints a seed's deck and commitment. On a record that cannot be read,
each prints one line naming what is wrong and where to standard error, and exits with
status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import RulesError
from .records import DealRecord, record_text, verify_record
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
    verify = commands.add_parser(
        "verify", help="check a record's seed, deck, moves and result (exit 1 if one fails)"
    )
    verify.add_argument("file", help="a record file, or - for standard input")
    text = commands.add_parser("text", help="print a record in the readable text notation")
    text.add_argument("file", help="a record file, or - for standard input")
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
        source = _read(args.file)
        if args.command == "verify":
            checks = verify_record(source)
            ok = all(c.ok for c in checks)
            print(json.dumps({"ok": ok, "checks": [c.to_dict() for c in checks]}))
            return 0 if ok else 1
        record = DealRecord.from_json(source)
        if args.command == "text":
            sys.stdout.write(record_text(record))
            return 0
        result = record.replay()
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
