"""The load the service holds: moves/s and latency over HTTP, against the targets of issue 7.

    .venv/bin/python bench/load.py [--seconds 30] [--clients 16] [--users 32] [--keep-db] [--json]
        [--worker-class sync|gthread|asgi] [--streaming-share 0.5] [--poll-ms 20]

Starts the service as in production on this machine, on 127.0.0.1 only:

- a scratch PostgreSQL database (``briscola_load`` by default; the name must start with
  ``briscola_load``, any other is refused) dropped and created afresh with
  ``createdb -h 127.0.0.1 -U postgres``, migrated, with the bot accounts (``ensure_bots``);
  it is dropped at the end unless ``--keep-db``;
- gunicorn on a free port with ``2 * cores + 1`` **sync** workers, ``DEBUG=false``, a random
  ``SECRET_KEY``, the throttles off and ``REDIS_URL`` set. Sync by default, because that is
  what the Dockerfile and Docker Compose ran when these figures were first taken (so runs
  stay comparable), and because every request here is CPU-bound Python
  (the GIL makes threads in one worker no faster; processes are the unit of parallelism).
  A sync worker does not keep connections alive, so each request opens a new loopback TCP
  connection, for the trivial GET and the moves alike. ``--worker-class gthread`` (2 threads
  per worker, keep-alive) is there to compare, and ``--worker-class asgi`` (the uvicorn
  workers the Dockerfile and Compose run since issue 19; see briscola_service/serving.py);
- a Celery worker (``celery -A briscola_service worker -l warning --concurrency 2``) on a
  Redis database of its own (``redis://127.0.0.1:6379/13`` by default), for the bot games.

Then, with every phase bounded in time and the whole run by ``--timeout``:

1. registers ``--users`` accounts through the API;
2. the trivial endpoint: ``--clients`` threads, each a :class:`Client`, call
   ``GET /api/v1/auth/me``, half of ``--get-seconds`` just before step 3 and half just
   after it (pooled: the machine's speed drifts, and the ratio should not take the drift
   of one side only): requests per second;
3. person-vs-person: ``--clients`` threads in pairs play ``single`` 2-player matches, one
   creating with an open seat, the other joining; each polls ``GET /api/v1/matches/{id}``
   (every ``--poll-ms``, sending back the detail's ``ETag`` in ``If-None-Match``, as a
   well-behaved client does: while nothing changed the answer is a bodiless 304) and plays
   its first legal card with the ply it saw (the move's
   response is the next state it reads). A 409 (``stale_ply``, ``not_your_turn``) is a
   retry, not an error; a 5xx, another unexpected status or a connection error is an error.
   Runs for ``--seconds`` (or ``--matches``); every move POST's latency is recorded;
4. person-vs-greedy-bot through the Celery worker: ``--bot-clients`` threads play against
   ``{"bot": "greedy"}`` for ``--bot-seconds``, polling every ``--poll-ms`` as above;
5. checks the move log in the scratch database: every finished deal has exactly the plies
   0..39, every other deal 0..n-1 without gap, and every move answered 201 is in the log;
   and reads the bot's reply time off it: for every bot card that answered a person's, the
   time between the two cards' timestamps (each taken as its move is written, inside the
   move's transaction). That is the target's "from the person's move committed to the
   bot's card visible" without an observer in the way: a client polling every few
   milliseconds to see the card would load the very server and worker it times. The time
   a client saw (from the 201 to the first GET showing the card) is printed too; it adds
   the polling period and the 201's own trip.

With ``--streaming-share 0.5 --worker-class asgi`` (issue 13), half the pairs of step 3
and half the bot clients of step 4 wait on the match's stream (``GET
/api/v1/matches/{id}/stream``, NDJSON, a connection of its own) instead of polling: each
event carries the seat's whole detail, and the client plays as soon as one shows its turn.
The others poll as above, in the same phases. Printed besides: the streaming clients'
share of the moves, the ratio against issue 13's target (>= 0.16), and the bot's reply as
a streaming client saw it (from its move's 201 to the event showing the bot's card)
against the polling clients' (target: at most half).

Prints the trivial GET's req/s, moves/s, their ratio, the move latency p50/p99, the error
count, the lost moves and the bot's reply p50/p95, each target with met / not met. The load
generator runs on the same machine as the server and competes with it for the CPU: the
figures are a floor for the server, and the ratio (both measured the same way, in the same
run) is the figure to compare. The clients are kept light (:class:`Client`) so that they
take as little as possible from the server: until 2026-11-29 they used ``requests``, whose
own CPU held the trivial GET to 770-880 req/s where light clients got 1,000-1,400 on the
same machine the same day; so ratios measured before then are not comparable with those
measured after. Exit status 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ROOT, celery_worker_cmd, free_port, percentile, service_env, venv_bin

PG = ["-h", "127.0.0.1", "-U", "postgres"]
PASSWORD = "a-long-password-load-1"

TARGET_RATIO = 0.15
TARGET_P99_MS = 50.0
TARGET_BOT_P50_MS = 50.0
# Issue 13, with half the players on streams: the ratio of today's polling-only runs, and
# the bot's card reaching a streaming client in at most half a polling client's time.
TARGET_STREAMING_RATIO = 0.16
TARGET_STREAM_VS_POLL = 0.5


class GlobalTimeout(Exception):
    pass


# --- processes --------------------------------------------------------------------------


class Procs:
    def __init__(self, logdir: Path) -> None:
        self.logdir = logdir
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, cmd: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = open(self.logdir / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.procs.append((name, proc))
        return proc

    def stop(self) -> None:
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for _, proc in reversed(self.procs):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            # the group too: gunicorn's and celery's children
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.logdir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def run(cmd: list[str], env: dict[str, str] | None = None, check: bool = True) -> str:
    out = subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    if check and out.returncode != 0:
        raise SystemExit(f"load: {' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def database_exists(name: str) -> bool:
    out = run(
        ["psql", *PG, "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{name}'", "postgres"]
    )
    return out.strip() == "1"


def drop_database(name: str) -> None:
    run(["dropdb", *PG, "--if-exists", "--force", name])


# --- the client side ---------------------------------------------------------------------


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    move_latencies: list[float] = field(default_factory=list)
    moves_ok: int = 0
    retries: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    acknowledged: list[tuple[str, int, str]] = field(default_factory=list)  # match, ply, card
    matches_started: int = 0
    matches_finished: int = 0
    bot_replies: list[float] = field(default_factory=list)
    bot_timeouts: int = 0
    polls: int = 0
    not_modified: int = 0  # polls answered 304 (the ETag sent back still current)
    # Streaming clients (--streaming-share): their moves, the events they read, and the
    # bot's reply as they saw it (from the 201 to the event showing the bot's card).
    moves_streaming: int = 0
    events: int = 0
    bot_replies_streaming: list[float] = field(default_factory=list)
    bot_timeouts_streaming: int = 0

    def error(self, what: str) -> None:
        with self.lock:
            self.errors += 1
            if len(self.error_samples) < 10:
                self.error_samples.append(what)


@dataclass
class Reply:
    """What the benchmark needs of an HTTP response."""

    status_code: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")


# A request that did not get an answer: refused, reset, timed out, or not HTTP.
TRANSPORT_ERRORS = (OSError, http.client.HTTPException)


class Client:
    """One simulated client: the standard library's ``http.client``, a new connection per
    request (gunicorn's sync workers close every connection after answering).

    Not ``requests``: on this machine the load generator shares the two cores with the
    server, and ``requests`` spends about a millisecond of CPU on each call (a hello-world
    WSGI app under the same gunicorn answered 1,400 req/s to 16 ``requests`` threads and
    5,000 req/s to 16 ``http.client`` ones). That CPU was taken from the server being
    measured, and the client's own queueing for it was counted as server latency.
    """

    def __init__(self, base: str, token: str | None, username: str) -> None:
        # ``base`` may list several instances, comma-separated: each request goes to the
        # next (round-robin per request, as a proxy in front of them would; bench/scale_web.py).
        self.targets: list[tuple[str, int]] = []
        for one in base.split(","):
            parsed = urllib.parse.urlsplit(one)
            self.targets.append((parsed.hostname or "127.0.0.1", parsed.port or 80))
        self.turn = 0
        self.username = username
        self.headers = {"Authorization": f"Token {token}"} if token else {}
        # The last match detail read, and its ETag, per match: polls send the tag back.
        self.seen: dict[str, tuple[str, dict]] = {}

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        host, port = self.targets[self.turn % len(self.targets)]
        self.turn += 1
        conn = http.client.HTTPConnection(host, port, timeout=15)
        try:
            conn.request(method, path, body=body, headers={**self.headers, **headers})
            response = conn.getresponse()
            return Reply(response.status, dict(response.getheaders()), response.read())
        finally:
            conn.close()

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        return self.request("GET", path, None, headers or {})

    def post(self, path: str, body: dict[str, Any]) -> Reply:
        data = json.dumps(body).encode()
        return self.request("POST", path, data, {"Content-Type": "application/json"})


def register(base: str, count: int, prefix: str) -> list[tuple[str, str]]:
    users = []
    client = Client(base, None, "")
    for i in range(count):
        name = f"{prefix}{i:03d}"
        r = client.post("/api/v1/auth/register", {"username": name, "password": PASSWORD})
        if r.status_code != 201:
            raise SystemExit(f"load: registering {name}: {r.status_code} {r.text[:300]}")
        users.append((name, r.json()["token"]))
    return users


def trivial_get(base: str, users: list[tuple[str, str]], clients: int, seconds: float) -> dict:
    stop_at = time.monotonic() + seconds
    counts = [0] * clients
    errors = [0] * clients
    latencies: list[list[float]] = [[] for _ in range(clients)]

    def worker(i: int) -> None:
        name, token = users[i % len(users)]
        client = Client(base, token, name)
        while time.monotonic() < stop_at:
            t0 = time.perf_counter()
            try:
                r = client.get("/api/v1/auth/me")
                if r.status_code == 200:
                    counts[i] += 1
                    latencies[i].append(time.perf_counter() - t0)
                else:
                    errors[i] += 1
            except TRANSPORT_ERRORS:
                errors[i] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    elapsed = time.monotonic() - started
    every = [x for per_client in latencies for x in per_client]
    return {
        "latencies": every,
        "requests": sum(counts),
        "errors": sum(errors),
        "seconds": elapsed,
    }


def combined(*windows: dict) -> dict:
    """The trivial GET over all its measuring windows."""
    every = [x for w in windows for x in w["latencies"]]
    seconds = sum(w["seconds"] for w in windows)
    return {
        "p50": percentile(every, 50),
        "p99": percentile(every, 99),
        "requests": sum(w["requests"] for w in windows),
        "errors": sum(w["errors"] for w in windows),
        "seconds": seconds,
        "rps": sum(w["requests"] for w in windows) / seconds,
        "rps_each": [w["requests"] / w["seconds"] for w in windows],
    }


def play_move(client: Client, match_id: str, view: dict, stats: Stats) -> dict | None:
    """Plays the first legal card at the ply seen; returns the new view, or None to re-read."""
    deal = view["current_deal"]
    card, ply = deal["legal"][0], deal["ply"]
    t0 = time.perf_counter()
    try:
        r = client.post(f"/api/v1/matches/{match_id}/moves", {"card": card, "ply": ply})
    except TRANSPORT_ERRORS as exc:
        stats.error(f"move POST: {type(exc).__name__}")
        return None
    dt = time.perf_counter() - t0
    with stats.lock:
        stats.move_latencies.append(dt)
    if r.status_code == 201:
        with stats.lock:
            stats.moves_ok += 1
            stats.acknowledged.append((match_id, ply, card))
        view = r.json()
        if "ETag" in r.headers:  # the detail the move returned: the next poll may be a 304
            client.seen[match_id] = (r.headers["ETag"], view)
        return view
    if r.status_code == 409:
        with stats.lock:
            stats.retries += 1
        return None
    stats.error(f"move POST: {r.status_code} {r.text[:200]}")
    return None


def my_turn(view: dict) -> bool:
    deal = view.get("current_deal")
    return (
        view["status"] == "active"
        and deal is not None
        and not deal["over"]
        and deal["turn"] is not None
        and deal["turn"] == view["your_seat"]
        and bool(deal["legal"])
    )


def read_match(client: Client, match_id: str, stats: Stats) -> dict | None:
    """The match detail; a poll sends the last ETag and keeps the last view on a 304."""
    with stats.lock:
        stats.polls += 1
    last = client.seen.get(match_id)
    headers = {"If-None-Match": last[0]} if last else None
    try:
        r = client.get(f"/api/v1/matches/{match_id}", headers)
    except TRANSPORT_ERRORS as exc:
        stats.error(f"match GET: {type(exc).__name__}")
        return None
    if r.status_code == 304 and last is not None:
        with stats.lock:
            stats.not_modified += 1
        return last[1]
    if r.status_code != 200:
        stats.error(f"match GET: {r.status_code} {r.text[:200]}")
        return None
    view = r.json()
    if "ETag" in r.headers:
        client.seen[match_id] = (r.headers["ETag"], view)
    return view


def play_until_over(
    client: Client, match_id: str, stats: Stats, poll: float, stop: threading.Event
) -> bool:
    """Plays one's seat of a match until it is over (True) or the phase stops (False)."""
    view: dict | None = None
    while not stop.is_set():
        if view is None:
            view = read_match(client, match_id, stats)
            if view is None:
                time.sleep(poll)
                continue
        if view["status"] != "active":
            return True
        if my_turn(view):
            view = play_move(client, match_id, view, stats)
        else:
            time.sleep(poll)
            view = None
    return False


# --- streaming clients (issue 13) ----------------------------------------------------------


class StreamRefused(Exception):
    pass


class StreamReader:
    """A match stream (``Accept: application/x-ndjson``, one JSON event a line) read in the
    client's own thread, on a connection of its own that stays open. Every open reader is
    listed, so that a phase's end can hang them all up (:func:`hang_up_streams`)."""

    open_readers: set[StreamReader] = set()
    lock = threading.Lock()

    def __init__(self, client: Client, match_id: str) -> None:
        self.conn = http.client.HTTPConnection(client.host, client.port, timeout=30)
        headers = {**client.headers, "Accept": "application/x-ndjson"}
        self.conn.request("GET", f"/api/v1/matches/{match_id}/stream", headers=headers)
        self.response = self.conn.getresponse()
        if self.response.status != 200:
            body = self.response.read()[:200]
            self.conn.close()
            raise StreamRefused(f"{self.response.status} {body!r}")
        with self.lock:
            self.open_readers.add(self)

    def next(self) -> dict | None:
        """The next event; None once the stream ended (the match settled, or hung up)."""
        while True:
            try:
                line = self.response.readline()
            except (*TRANSPORT_ERRORS, ValueError, AttributeError):  # hung up meanwhile
                return None
            if not line:
                return None
            if line.strip():  # an empty line is a heartbeat
                return json.loads(line)

    def close(self) -> None:
        with self.lock:
            self.open_readers.discard(self)
        with contextlib.suppress(OSError):
            if self.conn.sock is not None:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


def hang_up_streams() -> None:
    with StreamReader.lock:
        readers = list(StreamReader.open_readers)
    for reader in readers:
        reader.close()


def open_stream(client: Client, match_id: str, stats: Stats) -> StreamReader | None:
    try:
        return StreamReader(client, match_id)
    except (StreamRefused, *TRANSPORT_ERRORS) as exc:
        stats.error(f"stream: {type(exc).__name__} {exc}")
        return None


def stream_until_over(
    client: Client, match_id: str, stats: Stats, poll: float, stop: threading.Event
) -> bool:
    """As :func:`play_until_over`, waiting on the match's stream instead of polling: each
    event carries this seat's whole detail, so the client plays as soon as it is told its
    turn (``poll`` unused: the same signature)."""
    reader = open_stream(client, match_id, stats)
    if reader is None:
        return False
    played: set[tuple[int, int]] = set()
    try:
        while not stop.is_set():
            event = reader.next()
            if event is None:
                return not stop.is_set()
            view = event.get("detail")
            if view is None:
                continue
            with stats.lock:
                stats.events += 1
            if view["status"] != "active":
                return True
            deal = view.get("current_deal") or {}
            if my_turn(view) and (deal["id"], deal["ply"]) not in played:
                played.add((deal["id"], deal["ply"]))
                if play_move(client, match_id, view, stats) is not None:
                    with stats.lock:
                        stats.moves_streaming += 1
        return False
    finally:
        reader.close()


def stream_bot_match(client: Client, match_id: str, stats: Stats, stop: threading.Event) -> None:
    """One match against the bot, waiting on the match's stream: after each card of ours
    that the bot must answer, the time from our move's 201 to the event that shows the
    bot's card (an event read late, behind the 201, counts from the 201: at least 0)."""
    reader = open_stream(client, match_id, stats)
    if reader is None:
        return
    played: set[tuple[int, int]] = set()
    waiting: tuple[float, int, int] | None = None  # (201 at, deal id, ply after our card)
    try:
        while not stop.is_set():
            event = reader.next()
            if event is None:
                break
            view = event.get("detail")
            if view is None:
                continue
            with stats.lock:
                stats.events += 1
            deal = view.get("current_deal")
            if waiting is not None:
                committed, deal_id, seen_ply = waiting
                if (
                    view["status"] != "active"
                    or deal is None
                    or deal["id"] != deal_id
                    or deal["ply"] > seen_ply
                ):
                    with stats.lock:
                        stats.bot_replies_streaming.append(time.perf_counter() - committed)
                    waiting = None
            if view["status"] != "active":
                break
            if deal is None or not my_turn(view) or (deal["id"], deal["ply"]) in played:
                continue
            played.add((deal["id"], deal["ply"]))
            new = play_move(client, match_id, view, stats)
            if new is None:
                continue
            committed = time.perf_counter()
            with stats.lock:
                stats.moves_streaming += 1
            after = new.get("current_deal")
            if new["status"] == "active" and after and not after["over"] and not my_turn(new):
                waiting = (committed, after["id"], after["ply"])
    finally:
        reader.close()
    if waiting is not None and not stop.is_set():
        with stats.lock:
            stats.bot_timeouts_streaming += 1


def pvp_phase(
    base: str,
    users: list[tuple[str, str]],
    clients: int,
    seconds: float,
    max_matches: int,
    poll: float,
    streaming_pairs: int = 0,
) -> tuple[Stats, float]:
    """Pairs of clients play match after match; the first ``streaming_pairs`` pairs wait
    on the match's stream, the others poll every ``poll`` seconds."""
    stats = Stats()
    stop = threading.Event()
    budget = threading.Semaphore(max_matches) if max_matches else None
    pairs = clients // 2

    def pair_worker(p: int) -> None:
        (na, ta), (nb, tb) = users[2 * p], users[2 * p + 1]
        a, b = Client(base, ta, na), Client(base, tb, nb)
        while not stop.is_set():
            if budget is not None and not budget.acquire(blocking=False):
                break
            try:
                r = a.post("/api/v1/matches", {"players": 2, "format": "single", "seats": ["open"]})
            except TRANSPORT_ERRORS as exc:
                stats.error(f"create: {type(exc).__name__}")
                time.sleep(0.1)
                continue
            if r.status_code != 201:
                stats.error(f"create: {r.status_code} {r.text[:200]}")
                time.sleep(0.1)
                continue
            match_id = r.json()["id"]
            try:
                rj = b.post(f"/api/v1/matches/{match_id}/join", {})
            except TRANSPORT_ERRORS as exc:
                stats.error(f"join: {type(exc).__name__}")
                continue
            if rj.status_code not in (200, 201):
                stats.error(f"join: {rj.status_code} {rj.text[:200]}")
                continue
            with stats.lock:
                stats.matches_started += 1
            play = stream_until_over if p < streaming_pairs else play_until_over
            other = threading.Thread(
                target=play, args=(b, match_id, stats, poll, stop), daemon=True
            )
            other.start()
            done = play(a, match_id, stats, poll, stop)
            other.join(60)
            if done:
                with stats.lock:
                    stats.matches_finished += 1

    started = time.monotonic()
    threads = [threading.Thread(target=pair_worker, args=(p,), daemon=True) for p in range(pairs)]
    for t in threads:
        t.start()
    deadline = started + seconds
    while time.monotonic() < deadline and any(t.is_alive() for t in threads):
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    stop.set()
    hang_up_streams()
    for t in threads:
        t.join(30)
    return stats, elapsed


def create_bot_match(client: Client, stats: Stats) -> dict | None:
    """A new match against the greedy bot: its detail (None: an error, counted)."""
    try:
        r = client.post(
            "/api/v1/matches", {"players": 2, "format": "single", "seats": [{"bot": "greedy"}]}
        )
    except TRANSPORT_ERRORS as exc:
        stats.error(f"bot create: {type(exc).__name__}")
        return None
    if r.status_code != 201:
        stats.error(f"bot create: {r.status_code} {r.text[:200]}")
        time.sleep(0.1)
        return None
    return r.json()


def bot_phase(
    base: str,
    users: list[tuple[str, str]],
    clients: int,
    seconds: float,
    stats: Stats,
    poll: float,
    streaming_clients: int = 0,
) -> float:
    """Clients play match after match against the greedy bot; the first
    ``streaming_clients`` wait on the match's stream, the others poll."""
    stop = threading.Event()

    def worker(i: int) -> None:
        name, token = users[i]
        client = Client(base, token, name)
        while not stop.is_set() and i < streaming_clients:
            created = create_bot_match(client, stats)
            if created is not None:
                stream_bot_match(client, created["id"], stats, stop)
        while not stop.is_set() and i >= streaming_clients:
            view: dict | None = create_bot_match(client, stats)
            if view is None:
                continue
            match_id = view["id"]
            while not stop.is_set():
                if view is None:
                    view = read_match(client, match_id, stats)
                    if view is None:
                        time.sleep(poll)
                        continue
                if view["status"] != "active":
                    break
                if not my_turn(view):
                    time.sleep(poll)
                    view = None
                    continue
                new = play_move(client, match_id, view, stats)
                if new is None:
                    view = None
                    continue
                committed = time.perf_counter()
                deal = new.get("current_deal")
                view = new
                if new["status"] != "active" or deal is None or deal["over"] or my_turn(new):
                    continue  # the bot is not to play (deal over, or we lead again)
                seen_ply = deal["ply"]
                limit = committed + 10
                while time.perf_counter() < limit and not stop.is_set():
                    time.sleep(poll)
                    view = read_match(client, match_id, stats)
                    if view is None:
                        continue
                    d = view.get("current_deal")
                    if view["status"] != "active" or d is None or d["ply"] > seen_ply:
                        with stats.lock:
                            stats.bot_replies.append(time.perf_counter() - committed)
                        break
                else:
                    if not stop.is_set():
                        with stats.lock:
                            stats.bot_timeouts += 1
                    view = None

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    hang_up_streams()
    for t in threads:
        t.join(30)
    return time.monotonic() - started


# --- the move log ------------------------------------------------------------------------


def check_log(database_url: str, acknowledged: list[tuple[str, int, str]]) -> dict:
    import psycopg

    with psycopg.connect(database_url, connect_timeout=10) as conn, conn.cursor() as cur:
        cur.execute(
            """
            SELECT d.id, d.status, count(m.id), count(DISTINCT m.ply),
                   coalesce(min(m.ply), 0), coalesce(max(m.ply), -1)
            FROM games_deal d LEFT JOIN games_move m ON m.deal_id = d.id
            GROUP BY d.id, d.status
            """
        )
        finished = bad_finished = bad_other = 0
        for _deal_id, status, n, distinct, lo, hi in cur.fetchall():
            if status == "finished":
                finished += 1
                if not (n == 40 and distinct == 40 and lo == 0 and hi == 39):
                    bad_finished += 1
            elif not (n == distinct and (n == 0 or (lo == 0 and hi == n - 1))):
                bad_other += 1
        cur.execute(
            """
            SELECT d.match_id::text, m.ply, m.card
            FROM games_move m JOIN games_deal d ON d.id = m.deal_id
            """
        )
        logged = {(str(mid), int(ply), card) for mid, ply, card in cur.fetchall()}
        cur.execute("SELECT count(*) FROM games_move")
        total_moves = cur.fetchone()[0]  # type: ignore[index]
        # Each bot card that answered a person's card: the time between the two in the log.
        cur.execute(
            """
            SELECT extract(epoch FROM b.created_at - p.created_at)
            FROM games_move b
            JOIN games_move p ON p.deal_id = b.deal_id AND p.ply = b.ply - 1
            JOIN games_deal d ON d.id = b.deal_id
            JOIN games_seat sb ON sb.match_id = d.match_id AND sb.number = b.seat
            JOIN accounts_user ub ON ub.id = sb.user_id
            JOIN games_seat sp ON sp.match_id = d.match_id AND sp.number = p.seat
            JOIN accounts_user up ON up.id = sp.user_id
            WHERE ub.is_bot AND NOT up.is_bot
            """
        )
        bot_gaps = [float(gap) for (gap,) in cur.fetchall()]
    lost = [a for a in acknowledged if a not in logged]
    return {
        "finished_deals": finished,
        "finished_deals_bad": bad_finished,
        "other_deals_bad": bad_other,
        "moves_in_log": total_moves,
        "acknowledged": len(acknowledged),
        "lost": len(lost),
        "bot_gaps": bot_gaps,
    }


# --- main --------------------------------------------------------------------------------


def wait_http(url: str, procs: Procs, proc: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"load: gunicorn exited:\n{procs.log_tail('gunicorn')}")
        try:
            Client(url, None, "").get("/api/v1/auth/me")
            return
        except TRANSPORT_ERRORS:
            time.sleep(0.2)
    raise SystemExit(f"load: gunicorn did not answer within {seconds}s")


def wait_celery(env: dict[str, str], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    celery = venv_bin("celery")
    while time.monotonic() < deadline:
        out = subprocess.run(
            [celery, "-A", "briscola_service", "inspect", "ping", "-t", "2"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if out.returncode == 0 and "pong" in out.stdout:
            return True
        time.sleep(0.5)
    return False


def fmt(value: float | None, unit: str = "", digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{unit}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="person-vs-person phase")
    parser.add_argument("--matches", type=int, default=0, help="stop after N matches (0: time)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (even)")
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument(
        "--get-seconds", type=float, default=10.0, help="trivial GET: half before, half after"
    )
    parser.add_argument("--bot-clients", type=int, default=4)
    parser.add_argument("--bot-seconds", type=float, default=10.0)
    parser.add_argument("--poll-ms", type=float, default=20.0, help="waiting player's GET period")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    # asgi: gunicorn with the uvicorn workers production now runs (briscola_service.serving).
    parser.add_argument("--worker-class", choices=["sync", "gthread", "asgi"], default="sync")
    parser.add_argument(
        "--streaming-share",
        type=float,
        default=0.0,
        help="the share of the players (pairs, bot clients) that wait on the match stream "
        "instead of polling (issue 13: 0.5; needs --worker-class asgi)",
    )
    parser.add_argument("--db", default="briscola_load", help="scratch database (briscola_load*)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database after")
    parser.add_argument("--timeout", type=float, default=0, help="global limit (default: computed)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    if not args.db.startswith("briscola_load") or not args.db.replace("_", "").isalnum():
        parser.error(f"refusing database {args.db!r}: the scratch name must start briscola_load")
    if args.clients < 2 or args.clients % 2:
        parser.error("--clients must be even and at least 2 (players come in pairs)")
    if args.users < max(args.clients, args.bot_clients):
        parser.error("--users must be at least --clients and --bot-clients")
    if args.streaming_share and args.worker_class != "asgi":
        parser.error("--streaming-share needs --worker-class asgi (streams wait in event loops)")
    if not 0 <= args.streaming_share <= 1:
        parser.error("--streaming-share is a share: 0 to 1")
    streaming_pairs = round(args.clients // 2 * args.streaming_share)
    streaming_bots = round(args.bot_clients * args.streaming_share)
    if not args.redis_url.startswith(("redis://127.0.0.1", "redis://localhost")):
        parser.error("--redis-url must be on the loopback")
    timeout = args.timeout or (
        120 + args.get_seconds + args.seconds + args.bot_seconds + args.users * 0.5
    )

    def on_alarm(signum: int, frame: Any) -> None:
        raise GlobalTimeout(f"global timeout of {timeout:.0f}s")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(timeout))

    cores = os.cpu_count() or 1
    database_url = f"postgres://postgres@127.0.0.1:5432/{args.db}"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # Sync workers reuse their connections between requests; under ASGI each request
    # has a thread of its own, so none is kept (the default; see settings).
    env = service_env(
        database_url,
        args.redis_url,
        DATABASE_CONN_MAX_AGE="0" if args.worker_class == "asgi" else "60",
    )
    logdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"briscola-load-{os.getpid()}"
    logdir.mkdir(parents=True, exist_ok=True)
    procs = Procs(logdir)
    say = (
        (lambda *a: print(*a, file=sys.stderr, flush=True))
        if args.json
        else (lambda *a: print(*a, flush=True))
    )
    results: dict[str, Any] = {}
    created_db = False
    try:
        say(
            f"load: {cores} cores; gunicorn {args.workers} {args.worker_class} workers + Celery "
            f"(concurrency 2) + PostgreSQL + Redis AND the {args.clients} client threads all "
            f"share these cores: the client competes with the server for the CPU, so absolute "
            f"figures are a floor; the ratio to the trivial GET is measured the same way."
        )
        if database_exists(args.db):
            drop_database(args.db)
        run(["createdb", *PG, args.db])
        created_db = True
        py = sys.executable
        run([py, "manage.py", "migrate", "--noinput", "-v", "0"], env=env)
        run([py, "manage.py", "ensure_bots"], env=env)

        asgi = args.worker_class == "asgi"
        gunicorn_cmd = [
            venv_bin("gunicorn"),
            "briscola_service.asgi" if asgi else "briscola_service.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(args.workers),
            "--worker-class",
            "briscola_service.serving.Worker" if asgi else args.worker_class,
            "--log-level",
            "warning",
        ]
        if args.worker_class == "gthread":
            gunicorn_cmd += ["--threads", "2"]
        web = procs.start("gunicorn", gunicorn_cmd, env)
        procs.start(
            "celery",
            celery_worker_cmd(2, f"load-{os.getpid()}@%h"),
            env,
        )
        wait_http(base, procs, web, 30)
        if not wait_celery(env, 45):
            raise SystemExit(f"load: the Celery worker did not answer:\n{procs.log_tail('celery')}")
        say(f"load: serving on {base} (database {args.db}, broker {args.redis_url}); logs {logdir}")

        prefix = f"load{secrets.token_hex(2)}u"
        users = register(base, args.users, prefix)
        say(f"load: registered {len(users)} users")

        # warm every worker up (imports, connections) before measuring
        trivial_get(base, users, args.clients, 1.0)
        # The trivial GET is measured just before the moves and just after, and the two
        # windows are pooled: this machine's speed drifts from minute to minute, and one
        # window on one side of the moves would carry that drift into the ratio.
        get_before = trivial_get(base, users, args.clients, args.get_seconds / 2)
        stats, pvp_seconds = pvp_phase(
            base,
            users,
            args.clients,
            args.seconds,
            args.matches,
            args.poll_ms / 1000,
            streaming_pairs,
        )
        get = combined(get_before, trivial_get(base, users, args.clients, args.get_seconds / 2))
        say(
            f"load: trivial GET /api/v1/auth/me: {get['rps']:.0f} req/s "
            f"({' and '.join(f'{r:.0f}' for r in get['rps_each'])} before and after the moves; "
            f"{get['requests']} in {get['seconds']:.1f}s, {get['errors']} errors; latency "
            f"p50 {fmt(get['p50'] and get['p50'] * 1000)} ms, "
            f"p99 {fmt(get['p99'] and get['p99'] * 1000)} ms: at {args.clients} clients that "
            f"never pause, latency = clients / throughput, even for this endpoint)"
        )
        moves_per_s = stats.moves_ok / pvp_seconds
        pvp_latencies = list(stats.move_latencies)
        pvp_errors = stats.errors
        pvp_moves = stats.moves_ok
        pvp_polls = stats.polls
        pvp_not_modified = stats.not_modified
        say(
            f"load: person-vs-person: {stats.moves_ok} moves in {pvp_seconds:.1f}s, "
            f"{stats.matches_finished}/{stats.matches_started} matches finished, "
            f"{stats.retries} retries (409), {stats.errors} errors, "
            f"{pvp_polls / pvp_seconds:.0f} match GETs/s of polling "
            f"({pvp_not_modified / max(1, pvp_polls):.0%} answered 304 Not Modified)"
        )

        pvp_moves_streaming = stats.moves_streaming
        bot_seconds = bot_phase(
            base,
            users,
            args.bot_clients,
            args.bot_seconds,
            stats,
            args.poll_ms / 1000,
            streaming_bots,
        )
        say(
            f"load: person-vs-greedy: {len(stats.bot_replies)} bot replies timed in "
            f"{bot_seconds:.1f}s, {stats.bot_timeouts} not seen within 10 s"
        )

        log = check_log(database_url, stats.acknowledged)

        ratio = moves_per_s / get["rps"] if get["rps"] else 0.0
        p50 = percentile(pvp_latencies, 50)
        p99 = percentile(pvp_latencies, 99)
        streamed50 = percentile(stats.bot_replies_streaming, 50)
        streamed95 = percentile(stats.bot_replies_streaming, 95)
        seen50 = percentile(stats.bot_replies, 50)
        seen95 = percentile(stats.bot_replies, 95)
        bot50 = percentile(log["bot_gaps"], 50)
        bot95 = percentile(log["bot_gaps"], 95)
        lost = log["lost"] + log["finished_deals_bad"] + log["other_deals_bad"]
        errors = stats.errors + get["errors"]
        results = {
            "cores": cores,
            "gunicorn_workers": args.workers,
            "worker_class": args.worker_class,
            "clients": args.clients,
            "get_rps": get["rps"],
            "get_rps_before_after": get["rps_each"],
            "get_p50_ms": None if get["p50"] is None else get["p50"] * 1000,
            "get_p99_ms": None if get["p99"] is None else get["p99"] * 1000,
            "moves": pvp_moves,
            "poll_ms": args.poll_ms,
            "polls_per_s": pvp_polls / pvp_seconds,
            "polls_not_modified": pvp_not_modified,
            "pvp_seconds": pvp_seconds,
            "moves_per_s": moves_per_s,
            "ratio": ratio,
            "move_p50_ms": None if p50 is None else p50 * 1000,
            "move_p99_ms": None if p99 is None else p99 * 1000,
            "move_mean_ms": statistics.fmean(pvp_latencies) * 1000 if pvp_latencies else None,
            "matches_started": stats.matches_started,
            "matches_finished": stats.matches_finished,
            "retries_409": stats.retries,
            "errors": errors,
            "pvp_errors": pvp_errors,
            "error_samples": stats.error_samples,
            "bot_replies": len(stats.bot_replies),
            "bot_timeouts": stats.bot_timeouts,
            "bot_reply_p50_ms": None if bot50 is None else bot50 * 1000,
            "bot_reply_p95_ms": None if bot95 is None else bot95 * 1000,
            "bot_replies_in_log": len(log["bot_gaps"]),
            "bot_reply_seen_p50_ms": None if seen50 is None else seen50 * 1000,
            "bot_reply_seen_p95_ms": None if seen95 is None else seen95 * 1000,
            "streaming_share": args.streaming_share,
            "streaming_pairs": streaming_pairs,
            "streaming_bot_clients": streaming_bots,
            "pvp_moves_streaming": pvp_moves_streaming,
            "pvp_moves_polling": pvp_moves - pvp_moves_streaming,
            "events_streamed": stats.events,
            "bot_replies_streamed": len(stats.bot_replies_streaming),
            "bot_timeouts_streamed": stats.bot_timeouts_streaming,
            "bot_reply_streamed_p50_ms": None if streamed50 is None else streamed50 * 1000,
            "bot_reply_streamed_p95_ms": None if streamed95 is None else streamed95 * 1000,
            "log": {k: v for k, v in log.items() if k != "bot_gaps"},
            "lost_moves": lost,
        }
        targets = {
            "ratio": ratio >= TARGET_RATIO,
            "move_p99": p99 is not None and p99 * 1000 <= TARGET_P99_MS,
            "errors": errors == 0,
            "lost_moves": lost == 0,
            "bot_reply_p50": bot50 is not None
            and bot50 * 1000 <= TARGET_BOT_P50_MS
            and stats.bot_timeouts == 0,
        }
        if streaming_pairs or streaming_bots:
            targets["streaming_ratio"] = ratio >= TARGET_STREAMING_RATIO
            targets["stream_vs_poll"] = (
                streamed50 is not None
                and seen50 is not None
                and streamed50 <= TARGET_STREAM_VS_POLL * seen50
                and stats.bot_timeouts_streaming == 0
            )
        results["targets_met"] = targets

        def mark(ok: bool) -> str:
            return "met" if ok else "NOT MET"

        if args.json:
            print(json.dumps(results, indent=2))
        else:
            print()
            print(f"  trivial GET /auth/me     {get['rps']:8.0f} req/s   ({args.clients} clients)")
            print(
                f"  moves                    {moves_per_s:8.1f} /s      "
                f"({pvp_moves} moves, {stats.matches_finished} matches finished, "
                f"{pvp_polls / pvp_seconds:.0f} polling GETs/s)"
            )
            print(
                f"  moves/s / GET req/s      {ratio:8.3f}          target >= {TARGET_RATIO}"
                f"   {mark(targets['ratio'])}"
            )
            print(f"  move latency p50         {fmt(results['move_p50_ms'], ' ms'):>11}")
            print(
                f"  move latency p99         {fmt(results['move_p99_ms'], ' ms'):>11}"
                f"       target <= {TARGET_P99_MS:.0f} ms  {mark(targets['move_p99'])}"
            )
            print(
                f"  errors (5xx, conn.)      {errors:8d}          target 0       "
                f"{mark(targets['errors'])}   ({stats.retries} retries on 409)"
            )
            print(
                f"  lost moves               {lost:8d}          target 0       "
                f"{mark(targets['lost_moves'])}   ({log['finished_deals']} finished deals "
                f"checked, {log['moves_in_log']} moves in the log)"
            )
            print(
                f"  bot reply p50            {fmt(results['bot_reply_p50_ms'], ' ms'):>11}"
                f"       target <= {TARGET_BOT_P50_MS:.0f} ms  {mark(targets['bot_reply_p50'])}"
                f"   (p95 {fmt(results['bot_reply_p95_ms'], ' ms')}, "
                f"{len(log['bot_gaps'])} replies, person's card to bot's card in the move log)"
            )
            print(
                f"    as a client saw it     {fmt(results['bot_reply_seen_p50_ms'], ' ms'):>11}"
                f"       (p95 {fmt(results['bot_reply_seen_p95_ms'], ' ms')}, "
                f"{len(stats.bot_replies)} replies: from the move's 201 to the first GET, "
                f"every {args.poll_ms:.0f} ms, that shows the bot's card)"
            )
            if "stream_vs_poll" in targets:
                print(
                    f"  streaming clients        {streaming_pairs} of {args.clients // 2} pairs, "
                    f"{streaming_bots} of {args.bot_clients} bot clients: "
                    f"{pvp_moves_streaming} of the {pvp_moves} moves, {stats.events} events read"
                )
                print(
                    f"  moves/s / GET req/s      {ratio:8.3f}          target >= "
                    f"{TARGET_STREAMING_RATIO} (issue 13, half on streams)   "
                    f"{mark(targets['streaming_ratio'])}"
                )
                streamed = fmt(results["bot_reply_streamed_p50_ms"], " ms")
                print(
                    f"  bot's card, streamed     {streamed:>11}"
                    f"       target <= {TARGET_STREAM_VS_POLL} x polled "
                    f"({fmt(results['bot_reply_seen_p50_ms'], ' ms')})  "
                    f"{mark(targets['stream_vs_poll'])}   "
                    f"(p95 {fmt(results['bot_reply_streamed_p95_ms'], ' ms')}, "
                    f"{len(stats.bot_replies_streaming)} replies: from the move's 201 to the "
                    f"stream's event with the bot's card; "
                    f"{stats.bot_timeouts_streaming} never came)"
                )
            if stats.error_samples:
                print("  first errors:", *stats.error_samples, sep="\n    ")
        return 0 if all(targets.values()) else 1
    except GlobalTimeout as exc:
        print(f"load: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.alarm(0)
        procs.stop()
        if created_db and not args.keep_db:
            try:
                drop_database(args.db)
            except (SystemExit, subprocess.SubprocessError) as exc:
                print(f"load: could not drop {args.db}: {exc}", file=sys.stderr)
        elif created_db:
            print(f"load: kept database {args.db} ({database_url})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
