#!/usr/bin/env python3
"""A third-party Briscola bot that plays through the public HTTP API only.

It logs in (or registers), creates a match or joins one, then waits on the match's live
stream (``GET /api/v1/matches/{id}/stream``, NDJSON: each event carries the match as this
seat sees it) and plays whenever it is its turn, choosing cards with the logic of one of
the service's bot levels (``games.bots``) applied to the view the API returns. When the
stream ends (the server closed it, a proxy cut it) it reconnects with the last event's
id, missing nothing. ``--wait poll`` polls instead (sending back the detail's ``ETag``,
so an unchanged match costs a bodiless 304): the fallback for a server without streams,
which the client also falls back to by itself when the stream route is missing. HTTP is the standard
library's ``urllib``; the only project code it uses is the pure ``games.bots`` and
``games.rules`` packages (run it from a checkout, or copy those two packages).

    python examples/bot_client.py --base-url http://127.0.0.1:8000 \\
        --username carla --password a-long-password-1 --register \\
        --level greedy --create 2:first_to_2:greedy

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
import json
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # games.* from a checkout

from games.bots import LEVELS, choose_card  # noqa: E402
from games.rules import SeatView  # noqa: E402

JSON = dict[str, Any]
USER_AGENT = "briscola-example-bot/1"


class ApiError(Exception):
    """An error answer of the API: ``{"code", "message", "details"}`` and its status."""

    def __init__(self, status: int, code: str, message: str, details: JSON | None = None):
        super().__init__(f"{code} ({status}): {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}


class GiveUp(Exception):
    """The match cannot be played to its end (aborted, or the timeout passed)."""


class Api:
    """A tiny JSON client: token auth, one error shape, 429 answered by waiting."""

    def __init__(self, base_url: str, *, deadline: float) -> None:
        self.base = base_url.rstrip("/") + "/api/v1"
        self.token: str | None = None
        self.deadline = deadline

    def call(self, method: str, path: str, body: JSON | None = None) -> Any:
        """The decoded body of the answer; an error answer raises ApiError."""
        return self.request(method, path, body)[2]

    def request(
        self, method: str, path: str, body: JSON | None = None, etag: str | None = None
    ) -> tuple[int, Any, Any]:
        """The status, headers and decoded body (None for a 304) of the answer. ``etag``
        goes in ``If-None-Match``: the answer is then 304 while it is still current."""
        url = self.base + path
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        if etag:
            headers["If-None-Match"] = etag
        connection_failures = 0
        while True:
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    raw = response.read()
                    return response.status, response.headers, json.loads(raw) if raw else None
            except urllib.error.HTTPError as exc:
                if exc.code == 304:  # not modified: what we have is current
                    return 304, exc.headers, None
                error = _api_error(exc)
                if exc.code == 429:  # throttled: wait as told, then ask again
                    self.sleep(_retry_after(exc, error))
                    continue
                raise error from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                connection_failures += 1
                if connection_failures > 3:
                    raise ApiError(0, "connection_error", str(exc)) from None
                self.sleep(0.5 * connection_failures)

    def sleep(self, seconds: float) -> None:
        if time.monotonic() + seconds > self.deadline:
            raise GiveUp("timeout")
        time.sleep(seconds)


def _api_error(exc: urllib.error.HTTPError) -> ApiError:
    try:
        body = json.loads(exc.read() or b"{}")
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    return ApiError(
        exc.code,
        str(body.get("code") or f"http_{exc.code}"),
        str(body.get("message") or exc.reason),
        body.get("details") if isinstance(body.get("details"), dict) else {},
    )


def _retry_after(exc: urllib.error.HTTPError, error: ApiError) -> float:
    for value in (exc.headers.get("Retry-After"), error.details.get("retry_after")):
        try:
            return max(0.1, float(str(value)))
        except ValueError:  # absent (None), or an HTTP date: wait a second
            continue
    return 1.0


# -- setting up: account and match -------------------------------------------------------


def log_in(api: Api, username: str, password: str, *, register: bool) -> None:
    credentials = {"username": username, "password": password}
    if register:
        try:
            api.token = api.call("POST", "/auth/register", credentials)["token"]
            return
        except ApiError as exc:
            if exc.code != "username_taken":
                raise
    api.token = api.call("POST", "/auth/token", credentials)["token"]


def parse_create(spec: str) -> JSON:
    """``"2:first_to_2:greedy"`` -> the body of ``POST /matches``."""
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


def join_open(api: Api, username: str, poll_interval: float) -> str:
    """Join the first match with an open seat that someone else created."""
    while True:
        page = api.call("GET", "/matches?open=true&page_size=100")
        for match in page["results"]:
            if match["created_by"].lower() == username.lower():
                continue
            try:
                api.call("POST", f"/matches/{match['id']}/join", {})
            except ApiError as exc:
                if exc.code in ("match_not_joinable", "seat_unavailable"):
                    continue  # someone else was quicker
                raise
            return str(match["id"])
        api.sleep(max(poll_interval, 0.5))


# -- playing -----------------------------------------------------------------------------


def _result_word(winner: int | None, team: int | None) -> str:
    if winner is None:
        return "drawn"
    return "won" if winner == team else "lost"


class MatchWatch:
    """The match detail as last read, and its ``ETag``: re-reading sends the tag back, and
    while nothing changed the answer is a bodiless 304 (one small query on the server), so
    polling often costs little. Every answer that carries a detail (a move's 201 too)
    brings its tag."""

    def __init__(self, api: Api, match_id: str) -> None:
        self.api, self.path = api, f"/matches/{match_id}"
        self.etag: str | None = None
        self.detail: JSON = {}
        self.refresh()

    def refresh(self) -> JSON:
        status, headers, body = self.api.request("GET", self.path, etag=self.etag)
        if status != 304:
            self.seen(headers, body)
        return self.detail

    def seen(self, headers: Any, detail: JSON) -> None:
        self.etag, self.detail = headers.get("ETag"), detail


def _report_deals(detail: JSON, team: int | None, reported: set[int]) -> None:
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


class NoStream(Exception):
    """The server has no stream for us (an older server, or too many streams open)."""


def stream_events(api: Api, match_id: str, after: int | None) -> Iterator[JSON]:
    """The match stream's events (NDJSON), from the one after ``after``, until the server
    ends the stream. Empty lines are heartbeats."""
    path = f"{api.base}/matches/{match_id}/stream"
    if after is not None:
        path += f"?after={after}"
    headers = {"Accept": "application/x-ndjson", "User-Agent": USER_AGENT}
    if api.token:
        headers["Authorization"] = f"Token {api.token}"
    request = urllib.request.Request(path, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=60)  # heartbeats come every 15 s
    except urllib.error.HTTPError as exc:
        error = _api_error(exc)
        if exc.code in (406, 429) or (exc.code == 404 and error.code == "not_found"):
            raise NoStream(error.code) from None
        raise error from None
    with response:
        for line in response:
            if line.strip():
                yield json.loads(line)


def play_streaming(
    api: Api, match_id: str, *, level: str, budget_ms: float, poll_interval: float
) -> JSON:
    """Wait on the match's stream and play each turn until the match ends; returns the
    final match detail. Every event's ``detail`` is the match as this seat sees it (the
    body ``GET /matches/{id}`` answers), so the client never reads the match itself."""
    last: int | None = None
    detail: JSON = {}
    reported: set[int] = set()
    while True:
        for event in stream_events(api, match_id, last):
            if event["type"] == "stream_closed":
                raise ApiError(0, str(event["reason"]), "the server closed the stream")
            last, detail = event["id"], event["detail"]
            seat = detail["your_seat"]
            _report_deals(detail, None if seat is None else int(seat) % 2, reported)
            if detail["status"] in ("finished", "aborted"):
                return detail
            deal = detail["current_deal"]
            if detail["status"] != "active" or deal is None or deal["turn"] != deal["seat"]:
                continue
            view = SeatView.from_dict(deal)
            card = choose_card(level, view, seed=f"{deal['id']}:{deal['ply']}", budget_ms=budget_ms)
            try:
                api.call(
                    "POST", f"/matches/{match_id}/moves", {"card": card.code, "ply": deal["ply"]}
                )
            except ApiError as exc:
                # Somebody moved first, or the deal ended: the stream brings what happened.
                if exc.code not in ("stale_ply", "not_your_turn", "match_over"):
                    raise
        if detail.get("status") in ("finished", "aborted"):
            return detail
        # The stream ended early (a proxy, a restart; or a server that cannot hold it open
        # answers what is owed and ends): reconnect after the last event seen.
        api.sleep(poll_interval)


def play(api: Api, match_id: str, *, level: str, budget_ms: float, poll_interval: float) -> JSON:
    """Poll the match and play each turn until it ends; returns the final match detail.

    The detail holds the seat's view, ``current_deal``, with its ``legal`` cards, and a
    summary of every deal (its points once it is over).
    """
    watch = MatchWatch(api, match_id)
    # The bot's randomness is its own secret: a seed made of what the table sees (the
    # deal's id and ply) would let an opponent predict its choices, and so its hand.
    secret = secrets.token_hex(16)
    seat = watch.detail["your_seat"]  # set once seated; it never changes
    team = None if seat is None else int(seat) % 2
    reported: set[int] = set()
    while True:
        detail = watch.detail
        _report_deals(detail, team, reported)
        if detail["status"] in ("finished", "aborted"):
            return detail
        deal = detail["current_deal"]
        if detail["status"] != "active" or deal is None or deal["turn"] != deal["seat"]:
            api.sleep(poll_interval)  # not our turn: look again later
            watch.refresh()
            continue
        view = SeatView.from_dict(deal)
        seed = f"{secret}:{deal['id']}:{deal['ply']}"
        card = choose_card(level, view, seed=seed, budget_ms=budget_ms)
        # The move names the deal and the ply it was chosen for: if the match moved on
        # meanwhile (even to the next deal, at the same ply), it is refused, not misplayed.
        move = {"card": card.code, "ply": deal["ply"], "deal": deal["id"]}
        try:
            _, headers, played = api.request("POST", f"{watch.path}/moves", move)
            watch.seen(headers, played)  # the match as our move left it
        except ApiError as exc:
            # Somebody moved first, or the deal ended: read the match again, decide again.
            if exc.code not in ("stale_ply", "stale_deal", "not_your_turn", "match_over"):
                raise
            watch.refresh()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--register", action="store_true", help="create the account first")
    parser.add_argument("--level", choices=sorted(LEVELS), default="greedy")
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
    parser.add_argument("--poll-interval", type=float, default=0.2)
    parser.add_argument("--timeout", type=float, default=600, help="seconds, in all")
    args = parser.parse_args(argv)

    api = Api(args.base_url, deadline=time.monotonic() + args.timeout)
    try:
        log_in(api, args.username, args.password, register=args.register)
        if args.create is not None:
            match_id = str(api.call("POST", "/matches", args.create)["id"])
            print(f"match {match_id} created", flush=True)
        elif args.join is not None:
            match_id = args.join
            try:
                api.call("POST", f"/matches/{match_id}/join", {})
            except ApiError as exc:
                if exc.code != "already_seated":  # a restarted client goes on playing
                    raise
            print(f"match {match_id} joined", flush=True)
        else:
            match_id = join_open(api, args.username, args.poll_interval)
            print(f"match {match_id} joined", flush=True)
        options = {
            "level": args.level,
            "budget_ms": args.budget_ms,
            "poll_interval": args.poll_interval,
        }
        final = None
        if args.wait == "stream":
            try:
                final = play_streaming(api, match_id, **options)
            except NoStream as exc:
                print(f"no stream ({exc}): polling instead", file=sys.stderr, flush=True)
        if final is None:
            final = play(api, match_id, **options)
    except ApiError as exc:
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
