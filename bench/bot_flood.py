"""A flood of bot work from a few accounts, and another player's bot replies (issue 19.3).
Prints figures; nothing here asserts on timing.

    .venv/bin/python bench/bot_flood.py [--runs 3] [--flooders 10] [--modes off,on]
        [--victim-level greedy] [--flood-level expert] [--baseline 20] [--flood 40]
        [--after 30]

Each run starts a private deployment in real processes (tests/faults/stack.py: its own
PostgreSQL cluster and redis-server; gunicorn with 2 web workers; as Docker Compose runs
them, a Celery worker for the queue ``briscola`` and one for ``briscola_expert``, each
prefork with 2 processes; and beat), throttles off. Then, for each mode in turn (the
processes restarted with its settings, in the same run):

- ``off``: ``BOT_FAIR_QUEUEING=0``: bot replies run first in, first out on their queue
  (the slow levels, ``BOT_SLOW_LEVELS``, still on their own queue);
- ``on``: ``BOT_FAIR_QUEUEING=1``: round-robin between accounts, at most
  ``BOT_FAIR_CONCURRENCY`` (2) at once per account;
- ``one-queue``: fairness off and every level on the one queue (as before issue 19.3).

a *victim* account plays 2-player single-deal matches against the ``--victim-level`` bot
for ``--baseline`` seconds alone, then ``--flood`` seconds while ``--flooders`` other
accounts each open 4-player matches against three ``--flood-level`` bots up to their cap
(``MATCH_ACTIVE_LIMIT``, 20) and play their cards as soon as it is their turn (each at
most ``--flood-rate`` requests a second, within the default 600/min throttle; a finished
match is replaced), then ``--after`` seconds once the flood accounts have stopped (their
bots finish what was queued). The victim's *bot reply latency* is read from the stored
move log: from its card's ``created_at`` to the bot's card right after it. Each reply is
counted in the phase its card was played in; a reply not stored by the end counts with
the time waited so far (a lower bound) and is reported as missing. Between modes the
run waits until no bot turn is pending.

Prints, per run and mode, p50 / p95 / max (seconds) and the count of replies for
baseline, flood and after; the flood's own work (flood matches opened, cards played by
their bots, 429s from the cap); and how long after the flood's end the backlog had drained
(at most one bot turn pending, which may be the victim's; sampled every 0.5 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.stack import PASSWORD, Process, Stack, wait_for  # noqa: E402

MODES: dict[str, dict[str, str]] = {
    "off": {"BOT_FAIR_QUEUEING": "0"},
    "on": {"BOT_FAIR_QUEUEING": "1"},
    "one-queue": {"BOT_FAIR_QUEUEING": "0", "BOT_SLOW_LEVELS": "none"},
}
PHASES = ("baseline", "flood", "after")


class Pacer:
    """At most ``rate`` calls a second (one thread)."""

    def __init__(self, rate: float) -> None:
        self.gap = 1.0 / rate
        self.next = time.monotonic()

    def wait(self) -> None:
        now = time.monotonic()
        if now < self.next:
            time.sleep(self.next - now)
        self.next = max(now, self.next) + self.gap


class Player:
    """An account of the private stack, through its HTTP API, with ETags per match."""

    def __init__(self, base: str, token: str, rate: float) -> None:
        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        self.pacer = Pacer(rate)
        self.etags: dict[str, str] = {}
        self.bodies: dict[str, dict[str, Any]] = {}

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        self.pacer.wait()
        return self.session.request(method, self.base + path, timeout=30, **kwargs)

    def match_open(self, players: int, level: str) -> tuple[int, str | None]:
        seats = [{"bot": level}] * (players - 1)
        response = self.request(
            "POST", "/api/v1/matches", json={"players": players, "format": "single", "seats": seats}
        )
        if response.status_code != 201:
            return response.status_code, None
        return 201, str(response.json()["id"])

    def match(self, match_id: str) -> dict[str, Any]:
        """The match as this seat sees it (a 304 answers from the last body)."""
        headers = {"If-None-Match": self.etags[match_id]} if match_id in self.etags else {}
        response = self.request("GET", f"/api/v1/matches/{match_id}", headers=headers)
        if response.status_code == 304:
            return self.bodies[match_id]
        response.raise_for_status()
        self.etags[match_id] = response.headers.get("ETag", "")
        self.bodies[match_id] = body = response.json()
        return body

    def play_if_my_turn(self, match_id: str, body: dict[str, Any]) -> tuple[int, int] | None:
        """Play the first legal card if it is this seat's turn: (deal id, ply) played."""
        deal = body.get("current_deal")
        if body.get("status") != "active" or not deal or deal.get("turn") != deal.get("seat"):
            return None
        card = deal["legal"][0]
        response = self.request(
            "POST",
            f"/api/v1/matches/{match_id}/moves",
            json={"card": card, "ply": deal["ply"], "deal": deal["id"]},
        )
        if response.status_code != 201:
            return None
        self.etags.pop(match_id, None)
        return int(deal["id"]), int(deal["ply"])


def register(base: str, name: str) -> str:
    response = requests.post(
        base + "/api/v1/auth/register", json={"username": name, "password": PASSWORD}, timeout=60
    )
    assert response.status_code == 201, response.text
    return str(response.json()["token"])


@dataclass
class Victim:
    """Plays against its bot; records each card it played: (deal, ply, phase, time)."""

    player: Player
    level: str
    phase: str = "baseline"
    cards: list[tuple[int, int, str]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    errors: int = 0

    def run(self) -> None:
        match_id: str | None = None
        while not self.stop.is_set():
            try:
                if match_id is None:
                    status, match_id = self.player.match_open(2, self.level)
                    if match_id is None:
                        self.errors += 1
                        time.sleep(0.5)
                    continue
                body = self.player.match(match_id)
                if body["status"] != "active":
                    match_id = None
                    continue
                phase = self.phase
                played = self.player.play_if_my_turn(match_id, body)
                if played is not None:
                    self.cards.append((*played, phase))
            except requests.RequestException:
                self.errors += 1
                time.sleep(0.2)


@dataclass
class Flooder:
    """Opens matches up to its cap and plays its cards in them as fast as its rate allows."""

    player: Player
    level: str
    stop: threading.Event
    opened: int = 0
    refused: int = 0
    played: int = 0
    errors: int = 0

    def run(self) -> None:
        active: list[str] = []
        capped_until = 0.0
        while not self.stop.is_set():
            try:
                opening = 0
                while not self.stop.is_set() and time.monotonic() >= capped_until:
                    if opening == 4:  # a few at a time, between rounds of play
                        break
                    opening += 1
                    status, match_id = self.player.match_open(4, self.level)
                    if match_id is not None:
                        active.append(match_id)
                        self.opened += 1
                    elif status == 429:  # at the cap: try again once a match has ended
                        self.refused += 1
                        capped_until = time.monotonic() + 5.0
                    else:
                        self.errors += 1
                        capped_until = time.monotonic() + 1.0
                for match_id in list(active):
                    if self.stop.is_set():
                        break
                    body = self.player.match(match_id)
                    if body["status"] != "active":
                        active.remove(match_id)
                        capped_until = 0.0
                        continue
                    if self.player.play_if_my_turn(match_id, body) is not None:
                        self.played += 1
            except requests.RequestException:
                self.errors += 1
                time.sleep(0.2)


def quantiles(values: list[float]) -> tuple[float, float, float]:
    if not values:
        return float("nan"), float("nan"), float("nan")
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return statistics.median(ordered), p95, ordered[-1]


class Deployment:
    """The stack's processes for one mode: web, the two workers, beat."""

    def __init__(self, stack: Stack, env: dict[str, str], tag: str) -> None:
        self.stack = stack
        bindir = Path(sys.executable).parent
        celery = str(bindir / "celery")

        def worker(name: str, queue: str) -> Process:
            cmd = [celery, "-A", "briscola_service", "worker", "-l", "info", "-Q", queue]
            cmd += ["--concurrency", "2", "-n", f"{name}@%h"]
            return Process(f"{tag}-{name}", cmd, env, stack.workdir)

        self.web = Process(f"{tag}-web", stack.web.cmd, env, stack.workdir)
        self.workers = [worker("worker", "briscola"), worker("expert", "briscola_expert")]
        beat_cmd = [celery, "-A", "briscola_service", "beat", "-l", "info", "--schedule"]
        beat_cmd.append(str(stack.workdir / f"{tag}-beat-schedule"))
        self.beat = Process(f"{tag}-beat", beat_cmd, env, stack.workdir)

    def start(self) -> None:
        self.web.start()
        wait_for("the web service answers", self.stack._web_answers, 60)
        for process in self.workers:
            process.start()
        for process in self.workers:
            wait_for(f"{process.name} is ready", lambda p=process: ready(p), 90, 0.2)
        self.beat.start()

    def stop(self) -> None:
        for process in (self.beat, *self.workers, self.web):
            process.stop()


def ready(process: Process) -> bool:
    if not process.running:
        raise AssertionError(f"{process.name} exited:\n{process.tail()}")
    return process.log.exists() and b"ready." in process.log.read_bytes()


def pending_bot_turns(stack: Stack) -> int:
    rows = stack.sql("SELECT count(*) FROM games_match WHERE bot_to_move_since IS NOT NULL")
    return int(rows[0][0])


def reply_latencies(
    stack: Stack, cards: list[tuple[int, int, str]], ended: float
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Per phase, the seconds from each of the victim's cards to the bot's card after it
    (when the next card is the bot's); replies never stored count up to ``ended``."""
    latencies: dict[str, list[float]] = {p: [] for p in PHASES}
    missing: dict[str, int] = dict.fromkeys(PHASES, 0)
    for deal_id, ply, phase in cards:
        rows = stack.sql(
            "SELECT m.ply, m.seat, extract(epoch FROM m.created_at), s.user_id, u.is_bot "
            "FROM games_move m JOIN games_deal d ON d.id = m.deal_id "
            "JOIN games_seat s ON s.match_id = d.match_id AND s.number = m.seat "
            "JOIN accounts_user u ON u.id = s.user_id "
            "WHERE m.deal_id = %s AND m.ply IN (%s, %s) ORDER BY m.ply",
            deal_id,
            ply,
            ply + 1,
        )
        mine = [r for r in rows if r[0] == ply]
        reply = [r for r in rows if r[0] == ply + 1]
        if not mine:
            continue
        card_at = float(mine[0][2])
        if reply:
            if reply[0][4]:  # the bot's card (not the victim leading again)
                latencies[phase].append(float(reply[0][2]) - card_at)
            continue
        # No card after it yet: whose turn is it? The bot's if the deal still waits on it.
        waiting = stack.sql(
            "SELECT count(*) FROM games_match mt JOIN games_deal d ON d.match_id = mt.id "
            "WHERE d.id = %s AND mt.to_move_deal = %s AND mt.to_move_ply = %s "
            "AND mt.bot_to_move_since IS NOT NULL",
            deal_id,
            deal_id,
            ply + 1,
        )
        if int(waiting[0][0]):
            latencies[phase].append(ended - card_at)
            missing[phase] += 1
    return latencies, missing


def flood_work(stack: Stack, names: list[str]) -> tuple[int, int]:
    """(matches, cards their bots played) of the flood accounts."""
    rows = stack.sql(
        "SELECT count(DISTINCT mt.id), count(m.id) FILTER (WHERE u2.is_bot) "
        "FROM games_match mt JOIN accounts_user u ON u.id = mt.created_by_id "
        "LEFT JOIN games_deal d ON d.match_id = mt.id "
        "LEFT JOIN games_move m ON m.deal_id = d.id "
        "LEFT JOIN games_seat s ON s.match_id = mt.id AND s.number = m.seat "
        "LEFT JOIN accounts_user u2 ON u2.id = s.user_id "
        "WHERE u.username = ANY(%s)",
        names,
    )
    return int(rows[0][0]), int(rows[0][1])


def db_epoch(stack: Stack) -> float:
    return float(stack.sql("SELECT extract(epoch FROM now())")[0][0])


def one_mode(
    stack: Stack, mode: str, run: int, args: argparse.Namespace, say: Callable[[str], None]
) -> dict[str, Any]:
    env = {**stack.env, **MODES[mode]}
    deployment = Deployment(stack, env, f"r{run}-{mode}")
    try:
        deployment.start()
        tag = f"r{run}{mode.replace('-', '')}"
        victim = Victim(
            Player(stack.base, register(stack.base, f"victim{tag}"), args.victim_rate),
            args.victim_level,
        )
        names = [f"flood{tag}n{i}" for i in range(args.flooders)]
        tokens = [register(stack.base, name) for name in names]
        stop_flood = threading.Event()
        flooders = [
            Flooder(Player(stack.base, t, args.flood_rate), args.flood_level, stop_flood)
            for t in tokens
        ]
        victim_thread = threading.Thread(target=victim.run, daemon=True)
        victim_thread.start()
        time.sleep(args.baseline)
        victim.phase = "flood"
        threads = [threading.Thread(target=f.run, daemon=True) for f in flooders]
        for thread in threads:
            thread.start()
        time.sleep(args.flood)
        stop_flood.set()
        victim.phase = "after"
        for thread in threads:
            thread.join(timeout=60)
        stopped = time.monotonic()
        pending_at_stop = pending_bot_turns(stack)
        # The backlog drains while the victim plays on: the first moment no bot turn is
        # pending but the victim's own (at most one), sampled every half second.
        drained_at = None
        while time.monotonic() < stopped + args.after:
            if drained_at is None and pending_bot_turns(stack) <= 1:
                drained_at = time.monotonic()
            time.sleep(0.5)
        victim.stop.set()
        victim_thread.join(timeout=60)
        ended = db_epoch(stack)
        deadline = time.monotonic() + args.drain_timeout
        while drained_at is None and time.monotonic() < deadline:
            if pending_bot_turns(stack) == 0:
                drained_at = time.monotonic()
            time.sleep(0.5)
        while pending_bot_turns(stack) and time.monotonic() < deadline:
            time.sleep(0.5)  # the next mode starts on an idle deployment
        latencies, missing = reply_latencies(stack, victim.cards, ended)
        matches, bot_cards = flood_work(stack, names)
    finally:
        deployment.stop()
    return {
        "latencies": latencies,
        "missing": missing,
        "flood_matches": matches,
        "flood_bot_cards": bot_cards,
        "flood_cards": sum(f.played for f in flooders),
        "refused": sum(f.refused for f in flooders),
        "errors": victim.errors + sum(f.errors for f in flooders),
        "pending_at_stop": pending_at_stop,
        "drain_s": None if drained_at is None else drained_at - stopped,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modes", default="off,on", help=f"comma-separated: {', '.join(MODES)}")
    parser.add_argument("--flooders", type=int, default=10, help="flood accounts")
    parser.add_argument("--victim-level", default="greedy")
    parser.add_argument("--flood-level", default="expert")
    parser.add_argument("--baseline", type=float, default=20.0, help="seconds")
    parser.add_argument("--flood", type=float, default=40.0, help="seconds")
    parser.add_argument("--after", type=float, default=30.0, help="seconds")
    parser.add_argument("--flood-rate", type=float, default=10.0, help="requests/s per account")
    parser.add_argument("--victim-rate", type=float, default=10.0, help="requests/s")
    parser.add_argument("--drain-timeout", type=float, default=180.0, help="seconds")
    args = parser.parse_args()
    modes = args.modes.split(",")
    for mode in modes:
        if mode not in MODES:
            parser.error(f"unknown mode {mode!r}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")
    load = os.getloadavg()
    print(
        f"bot_flood: {os.cpu_count()} cores (load average {load[0]:.1f} at start); victim vs "
        f"{args.victim_level} (2 players); {args.flooders} flood accounts x 4-player matches "
        f"vs 3 {args.flood_level}; {args.baseline:.0f} s baseline, {args.flood:.0f} s flood, "
        f"{args.after:.0f} s after; workers: briscola 2 + briscola_expert 2 processes",
        flush=True,
    )
    summary: dict[tuple[str, str], list[float]] = {}
    for run in range(1, args.runs + 1):
        workdir = Path(tempfile.mkdtemp(prefix="briscola-flood-"))
        stack = Stack(workdir, WEB_WORKERS="2", LOG_LEVEL="WARNING")
        try:
            stack.start()
            stack.web.stop()  # each mode starts its own processes
            for mode in modes:
                f = one_mode(stack, mode, run, args, print)
                parts = []
                for phase in PHASES:
                    p50, p95, top = quantiles(f["latencies"][phase])
                    summary.setdefault((mode, phase), []).append(p50)
                    lost = f["missing"][phase]
                    parts.append(
                        f"{phase} p50 {p50:.3f} p95 {p95:.3f} max {top:.3f} s "
                        f"(n={len(f['latencies'][phase])}{f', {lost} missing' if lost else ''})"
                    )
                drain = "not drained" if f["drain_s"] is None else f"{f['drain_s']:.1f} s"
                print(f"  run {run} {mode:9} " + " | ".join(parts), flush=True)
                print(
                    f"  run {run} {mode:9} flood: {f['flood_matches']} matches, "
                    f"{f['flood_cards']} cards by the flood accounts, {f['flood_bot_cards']} by "
                    f"their bots, {f['refused']} refused by the cap (429); bot turns pending at "
                    f"the flood's end {f['pending_at_stop']}, drained {drain} after it; "
                    f"client errors {f['errors']}; load average {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        finally:
            stack.close()
    print("p50 per mode and phase over the runs (min to max):")
    for (mode, phase), values in summary.items():
        print(f"  {mode:9} {phase:8} {min(values):.3f} to {max(values):.3f} s")


if __name__ == "__main__":
    main()
