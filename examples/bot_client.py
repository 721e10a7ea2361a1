#!/usr/bin/env python3
"""A third-party Briscola bot that plays through the public HTTP API only.

It is built on the client package ``briscola_client`` (``pip install ./clients/python``;
from a checkout it is found without installing) and needs nothing else of this
repository. It logs in (or registers), creates a match or joins one, then waits on the
match's live stream (``--wait stream``, the default; NDJSON, resumed after the last event
when it is cut) or polls it (``--wait poll``, with its ``ETag``, so an unchanged match
costs a bodiless 304; also the fallback on a server without streams) and plays whenever
it is its turn.

    python examples/bot_client.py --base-url http://127.0.0.1:8000 \\
        --username carla --password a-long-password-1 --register \\
        --level greedy --create 2:first_to_2:greedy

``--level``: ``random`` (any legal card) or ``greedy`` (a few rules of thumb, written
here from docs/rules.md); from a checkout of the service, also the service's own bot
levels (``expert``...), through its pure ``games.bots`` package.

``--create PLAYERS:FORMAT:SEATS`` lists seats 1 onwards, comma-separated: a bot level
(``greedy``), ``open`` (anyone may join) or ``@name`` (an invitation), e.g.
``4:single:greedy,random,greedy`` or ``2:single:open``. ``--join MATCH_ID`` takes a seat
in a match, ``--join-open`` the first open match someone else created (waiting for one).

Output: a line with the match id, one line per finished deal, a final line with the
match result. Exit status: 0 when the match finished, 1 on an API error (its code is
printed), 2 on bad arguments, 3 when the match was aborted or the timeout passed.
"""

from __future__ import annotations

import argparse
import random
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import briscola_client  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients" / "python" / "src"))
    import briscola_client  # noqa: F401

from briscola_client import BriscolaError, Client, ConflictError, PollingFeed, StreamFeed

JSON = dict[str, Any]

# -- choosing a card (docs/rules.md: strength and points) --------------------------------

STRENGTH = {rank: i for i, rank in enumerate("A3RCF76542")}  # 0 is the strongest
POINTS = {"A": 11, "3": 10, "R": 4, "C": 3, "F": 2}


def _beats(card: str, best: str, led: str, trump: str) -> bool:
    """Whether ``card`` beats ``best`` in a trick whose first card's suit is ``led``."""
    if card[1] == best[1]:
        return STRENGTH[card[0]] < STRENGTH[best[0]]
    return card[1] == trump or (best[1] != trump and card[1] == led and best[1] != led)


# The bot's randomness is its own secret: a seed made of what the table sees (the deal's id
# and ply) would let an opponent predict its choices, and so learn about its hand.
_SECRET = secrets.token_hex(16)


def random_card(deal: JSON) -> str:
    return str(random.Random(f"{_SECRET}:{deal['id']}:{deal['ply']}").choice(deal["legal"]))


def greedy_card(deal: JSON) -> str:
    """Take a trick that carries points as cheaply as possible; otherwise give away the
    card worth least (keeping trumps); let a partner who is winning have points."""
    legal: list[str] = deal["legal"]
    trump: str = deal["trump"]

    def cost(card: str) -> tuple[int, int, int]:
        return (card[1] == trump, POINTS.get(card[0], 0), -STRENGTH[card[0]])

    table = [t["card"] for t in deal["table"]]
    if not table:
        return min(legal, key=cost)
    led = table[0][1]
    best_index = 0
    for i, card in enumerate(table[1:], start=1):
        if _beats(card, table[best_index], led, trump):
            best_index = i
    best = table[best_index]
    partner_winning = deal["players"] == 4 and len(table) - best_index == 2
    points = sum(POINTS.get(c[0], 0) for c in table)
    if partner_winning:
        return max(legal, key=lambda c: (c[1] != trump, POINTS.get(c[0], 0)))
    winners = [c for c in legal if _beats(c, best, led, trump)]
    if winners and points >= 2:
        return min(winners, key=cost)
    return min(legal, key=cost)


def chooser(level: str, budget_ms: float) -> Callable[[JSON], str]:
    if level == "random":
        return random_card
    if level == "greedy":
        return greedy_card
    # The service's own levels, from a checkout (its pure games.bots package).
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from games.bots import LEVELS, choose_card
    from games.rules import SeatView

    if level not in LEVELS:
        raise ValueError(level)

    def service_bot(deal: JSON) -> str:
        seed = f"{_SECRET}:{deal['id']}:{deal['ply']}"
        return choose_card(level, SeatView.from_dict(deal), seed=seed, budget_ms=budget_ms).code

    return service_bot


# -- setting up: account and match -------------------------------------------------------


class GiveUp(Exception):
    """The match cannot be played to its end (aborted, or the timeout passed)."""


def log_in(client: Client, username: str, password: str, *, register: bool) -> Client:
    if register:
        try:
            return Client.register(client.base_url, username, password, sleep=client.sleep)
        except BriscolaError as exc:
            if exc.code != "username_taken":
                raise
    return Client.login(client.base_url, username, password, sleep=client.sleep)


def parse_create(spec: str) -> JSON:
    """``"2:first_to_2:greedy"`` -> the arguments of ``Client.create_match``."""
    try:
        players_text, format, seats_text = spec.split(":", 2)
        players = int(players_text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--create wants PLAYERS:FORMAT:SEATS, e.g. 2:first_to_2:greedy, not {spec!r}"
        ) from None
    seats: list[Any] = []
    for item in seats_text.split(","):
        item = item.strip()
        if item == "open":
            seats.append("open")
        elif item.startswith("@"):
            seats.append({"user": item[1:]})
        elif item:
            seats.append({"bot": item})
    return {"players": players, "format": format, "seats": seats}


def join_open(client: Client, username: str, poll_interval: float) -> str:
    """Join the first match with an open seat that someone else created."""
    while True:
        for match in client.matches(open=True):
            if match["created_by"].lower() == username.lower():
                continue
            try:
                client.join(match["id"])
            except ConflictError as exc:
                if exc.code in ("match_not_joinable", "seat_unavailable"):
                    continue  # someone else was quicker
                raise
            return str(match["id"])
        client.sleep(max(poll_interval, 0.5))


# -- playing -----------------------------------------------------------------------------


def _result_word(winner: int | None, team: int | None) -> str:
    if winner is None:
        return "drawn"
    return "won" if winner == team else "lost"


def _report_deals(detail: Any, team: int | None, reported: set[int]) -> None:
    """A line for each deal played to its end since the last call."""
    for deal in detail["deals"]:
        if deal["status"] != "finished" or deal["id"] in reported:
            continue
        reported.add(deal["id"])
        points = deal["points"] if team != 1 else deal["points"][::-1]
        print(
            f"deal {deal['number']}: {_result_word(deal['winner'], team)} "
            f"{points[0]}-{points[1]} in points (deal id {deal['id']})",
            flush=True,
        )


def play(client: Client, match_id: str, *, choose: Callable[[JSON], str]) -> Any:
    """Wait for each turn and play it until the match ends; returns the final match."""
    reported: set[int] = set()
    team: int | None = None
    while True:
        match = client.wait_for_turn(match_id)  # the match's feed: polls, or a stream
        if match["your_seat"] is not None:
            team = match["your_seat"] % 2
        _report_deals(match, team, reported)
        if match["status"] in ("finished", "aborted"):
            return match
        deal = match["current_deal"]
        assert deal is not None
        try:
            client.play(match_id, choose(dict(deal)), deal["ply"], deal=deal["id"])
        except ConflictError as exc:
            # Somebody moved first, or the deal ended: look again, decide again.
            if exc.code not in ("stale_ply", "stale_deal", "not_your_turn", "match_over"):
                raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--register", action="store_true", help="create the account first")
    parser.add_argument(
        "--level", default="greedy", help="random, greedy; expert... from a checkout"
    )
    parser.add_argument("--budget-ms", type=float, default=100, help="expert: think time")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--create", type=parse_create, metavar="PLAYERS:FORMAT:SEATS")
    how.add_argument("--join", metavar="MATCH_ID")
    how.add_argument("--join-open", action="store_true")
    parser.add_argument(
        "--wait",
        choices=["stream", "poll"],
        default="stream",
        help="learn of changes from the match's live stream (default) or by polling",
    )
    parser.add_argument(
        "--poll-interval",
        type=float,
        default=1.0,
        help="seconds between reads when polling, and before reconnecting a stream (default 1: "
        "the API's request limit is per minute, and the stream is there for live play)",
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds, in all")
    args = parser.parse_args(argv)
    try:
        choose = chooser(args.level, args.budget_ms)
    except (ImportError, ValueError):
        parser.error(f"unknown --level {args.level!r} (random, greedy; more from a checkout)")

    deadline = time.monotonic() + args.timeout

    def sleep(seconds: float) -> None:
        if time.monotonic() + seconds > deadline:
            raise GiveUp("timeout")
        time.sleep(seconds)

    try:
        anonymous = Client(args.base_url, sleep=sleep)
        client = log_in(anonymous, args.username, args.password, register=args.register)
        polling = PollingFeed(interval=args.poll_interval)
        client.feed = StreamFeed(fallback=polling) if args.wait == "stream" else polling
        if args.create is not None:
            match_id = str(client.create_match(**args.create)["id"])
            print(f"match {match_id} created", flush=True)
        elif args.join is not None:
            match_id = args.join
            try:
                client.join(match_id)
            except ConflictError as exc:
                if exc.code != "already_seated":  # a restarted client goes on playing
                    raise
            print(f"match {match_id} joined", flush=True)
        else:
            match_id = join_open(client, args.username, args.poll_interval)
            print(f"match {match_id} joined", flush=True)
        final = play(client, match_id, choose=choose)
    except BriscolaError as exc:
        print(f"error: {exc.code} ({exc.status}): {exc.message}", file=sys.stderr)
        return 1
    except GiveUp as exc:
        print(f"error: gave up: {exc}", file=sys.stderr)
        return 3
    if final["status"] != "finished":
        print(f"match {final['status']}: {final.get('end_reason')}", file=sys.stderr)
        return 3
    seat = final["your_seat"]
    team = None if seat is None else seat % 2
    won = final["deals_won"]
    score = f"{won[team]}-{won[1 - team]}" if team is not None else f"{won[0]}-{won[1]}"
    print(
        f"match finished: {_result_word(final['winner'], team)} {score} in deals"
        f" ({final['end_reason']}; seat {seat}, team {team})",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
