"""Live streams under load (issue 13's targets): memory per open stream, and how fast a
move reaches 500 subscribers compared with answering a trivial GET.

    .venv/bin/python bench/streams.py [--streams-per-account 16] [--idle-accounts 130]
        [--matches 50] [--spectators 40] [--think-ms 500] [--workers 1] [--json]
        [--compare NAME=VALUE --rounds 4]

Starts the service as in production on this machine, on 127.0.0.1 only: a PostgreSQL
cluster of its own (initdb in a temporary directory, ``max_connections=1000``, removed at
the end: served by ASGI, every concurrent request holds a connection, and the shared
server must not run out), Redis (``--redis``, default
``redis://127.0.0.1:6379/12``) for the cache, the Celery broker and the live bus, the
ASGI server (``uvicorn briscola_service.asgi:application --workers N``, ``DEBUG=false``,
``DATABASE_CONN_MAX_AGE=0``, the throttles off) and a Celery worker. Accounts are made
directly in the database (with API tokens), not through the API, to save the password
hashing.

1. **Idle streams**: ``--idle-accounts`` accounts in pairs play nothing in one match per
   pair; each account opens ``--streams-per-account`` streams (its match's stream, and one
   account stream; 16 is the per-account cap): 2,080 by default, opened as clients
   arrive, in a ramp: at most ``--open-concurrency`` (32) are between their request and
   their first event at any time (2,080 requests in one instant measure the burst, not
   the holding; each open's time to its first event is printed, p50 and p99). All are
   then held open at once (counted), and a 17th stream of one account is refused. The
   server's resident memory (VmRSS of the server process and its workers, from /proc) is
   read before they open (after a warm-up) and once every stream got its first event:
   the difference per stream is printed.
2. **Push latency**: ``--matches`` public ``single`` matches between two people each; each
   is watched by its two players and by 8 spectators (``--spectators`` accounts, 10
   streams each): 500 subscribers. The players are stream-driven clients: when an event
   shows it is their turn they wait ``--think-ms`` and post their first legal card. Every
   event every subscriber receives is timed on arrival; after the run, the move log is
   read from the database with each move's ``created_at`` (taken inside the move's
   transaction, just before it commits), and for each event naming a move the delay from
   that timestamp to the event's arrival is taken: p50 and p99. Every subscriber's
   sequence is checked against the move log: every move seen exactly once, in order, ids
   strictly increasing; lost and out-of-order counts are printed (target 0).
3. **Trivial GET**: ``GET /api/v1/auth/me`` in a closed loop by as many keep-alive
   connections as there are subscribers (500), for ``--get-seconds`` just before and just
   after step 2 (pooled): p50 and p99; and the same with as many connections as there
   are matches (50), for comparison. The target: the event's p99 no higher than the GET's
   p99 at the subscribers' concurrency.

``--compare NAME=VALUE [--rounds 4]`` runs steps 2 and 3 in rounds, restarting the ASGI
server between them: with ``NAME=VALUE`` in its environment for the odd rounds (the first),
as configured for the even ones; each round's event p99 is compared with its own GETs'
(e.g. ``--compare LIVE_DB_KEEP_CONNECTIONS=false``: the stream threads' connections as
they were before they were kept). ``--compare tree=DIR`` serves the odd rounds from
another checkout instead (``git archive <commit> | tar -x -C DIR``: the code before a
change, on the same database, migrations permitting), to compare two versions in one run.

All clients are asyncio connections in this one process (HTTP/1.1 written by hand: a
library's own CPU would be measured instead of the server's). The clients and the server
share this machine's 2 cores: absolute times are a floor for the server; compare the
ratios of figures taken in the same run. Exit status 0 when every target is met.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ROOT, celery_worker_cmd, free_port, ms, percentile, service_env

# --- processes ------------------------------------------------------------------------------


class Server:
    def __init__(self, args: argparse.Namespace, logdir: Path) -> None:
        self.port = free_port()
        self.base = ("127.0.0.1", self.port)
        self.logdir = logdir
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = service_env(
            "",  # set in start(): a private PostgreSQL
            args.redis,
            DATABASE_CONN_MAX_AGE="0",
            LIVE_MAX_STREAMS_PER_ACCOUNT="16",
        )
        self.args = args
        self.web: subprocess.Popen[bytes] | None = None

    def _start(
        self,
        name: str,
        cmd: list[str],
        extra: dict[str, str] | None = None,
        cwd: Path = ROOT,
    ) -> subprocess.Popen[bytes]:
        log = open(self.logdir / f"{name}.log", "ab")  # noqa: SIM115 - kept open by the child
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env={**self.env, **(extra or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def start(self) -> None:
        # A PostgreSQL of the bench's own (as tests/faults makes one), with room for the
        # connections of hundreds of concurrent requests, so that the shared one is spared.
        sys.path.insert(0, str(ROOT))
        from tests.faults.stack import Postgres

        class RoomyPostgres(Postgres):
            def start(self) -> None:
                options = (
                    f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 "
                    "-c fsync=off -c max_connections=1000 -c shared_buffers=64MB"
                )
                log = str(self.workdir / "postgres.log")
                self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

        self.postgres = RoomyPostgres()
        self.postgres.init()
        self.env["DATABASE_URL"] = self.postgres.url
        for command in (["migrate", "--noinput", "-v", "0"], ["ensure_bots"]):
            subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=ROOT,
                env=self.env,
                check=True,
                capture_output=True,
            )
        if shutil.which("redis-cli"):  # the bench's own Redis database starts empty
            subprocess.run(["redis-cli", "-u", self.args.redis, "flushdb"], capture_output=True)
        self.start_web()
        self._start("celery", celery_worker_cmd(1))

    def start_web(self, tree: Path = ROOT, **extra: str) -> None:
        """Start the ASGI server from ``tree`` (another checkout: another version of the
        code, on the same database), ``extra`` on top of the bench's environment, and wait
        until it answers."""
        self.web = self._start(
            "web",
            [
                sys.executable,
                "-m",
                "uvicorn",
                "briscola_service.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                str(self.args.workers),
                "--log-level",
                "warning",
                "--backlog",
                "4096",
                "--no-access-log",
            ],
            extra,
            tree,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(self.base, timeout=1):
                return
            time.sleep(0.2)
        raise SystemExit("streams: the server did not start")

    def restart_web(self, tree: Path = ROOT, **extra: str) -> None:
        """Stop the ASGI server and start it again (from ``tree``, with ``extra``)."""
        assert self.web is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.web.pid, signal.SIGTERM)
        try:
            self.web.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.web.pid, signal.SIGKILL)
            self.web.wait(timeout=5)
        self.procs.remove(self.web)
        self.start_web(tree, **extra)

    def rss_kib(self) -> int:
        """VmRSS of the server process and all its descendants."""
        assert self.web is not None
        total, todo = 0, [self.web.pid]
        while todo:
            pid = todo.pop()
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                for task in Path(f"/proc/{pid}/task").iterdir():
                    children = (task / "children").read_text().split()
                    todo += [int(c) for c in children]
        return total

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
        self.postgres.close()

    def make_accounts(self, count: int) -> list[tuple[str, str]]:
        """``count`` accounts with tokens, written directly (no password hashing)."""
        script = (
            "import json; from accounts.models import User; "
            "from rest_framework.authtoken.models import Token; out=[]\n"
            f"for i in range({count}):\n"
            "    u = User.objects.create(username=f'p{i}'); u.set_unusable_password(); u.save()\n"
            "    out.append((u.username, Token.objects.create(user=u).key))\n"
            "print(json.dumps(out))"
        )
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", script],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        return [tuple(x) for x in json.loads(done.stdout.strip().splitlines()[-1])]

    def move_log(self) -> dict[str, list[tuple[int, int, int, str, float]]]:
        """Per match: (deal id, deal number, ply, card, created_at epoch) in play order."""
        import psycopg

        with psycopg.connect(self.postgres.url) as conn:
            rows = conn.execute(
                "SELECT d.match_id, d.id, d.number, mv.ply, mv.card, "
                "extract(epoch from mv.created_at) FROM games_move mv "
                "JOIN games_deal d ON d.id = mv.deal_id ORDER BY d.match_id, d.number, mv.ply"
            ).fetchall()
        out: dict[str, list[tuple[int, int, int, str, float]]] = {}
        for match_id, deal_id, number, ply, card, at in rows:
            out.setdefault(str(match_id), []).append((deal_id, number, ply, card, float(at)))
        return out


# --- a small HTTP/1.1 client ---------------------------------------------------------------


class Conn:
    """One keep-alive connection."""

    def __init__(self, host: tuple[str, int], token: str | None) -> None:
        self.host = host
        self.token = token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(*self.host)

    def _head(self, method: str, path: str, extra: str = "", body: bytes = b"") -> bytes:
        auth = f"Authorization: Token {self.token}\r\n" if self.token else ""
        length = (
            f"Content-Length: {len(body)}\r\nContent-Type: application/json\r\n"
            if body or method == "POST"
            else ""
        )
        return (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}{length}{extra}\r\n"
        ).encode() + body

    async def _status_headers(self) -> tuple[int, dict[str, str]]:
        assert self.reader is not None
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("closed")
        status = int(status_line.split()[1])
        headers = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        try:
            return await self._request(method, path, body)
        except (ConnectionError, asyncio.IncompleteReadError):
            # the server closed an idle keep-alive connection: once more on a new one
            self.close()
            self.writer = None
            return await self._request(method, path, body)

    async def _request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        data = json.dumps(body).encode() if body is not None else b""
        self.writer.write(self._head(method, path, body=data))
        status, headers = await self._status_headers()
        if headers.get("transfer-encoding") == "chunked":
            content = b""
            while (chunk := await self._chunk()) is not None:
                content += chunk
        else:
            content = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, content

    async def _chunk(self) -> bytes | None:
        assert self.reader is not None
        size_line = await self.reader.readline()
        if not size_line:
            return None
        size = int(size_line.split(b";")[0], 16)
        data = await self.reader.readexactly(size + 2)
        return data[:-2] if size else None

    async def stream(self, path: str, on_event: Any) -> int:
        """Open an SSE stream; ``on_event(event, arrival)`` for each; returns at its end."""
        await self.open()
        assert self.reader is not None and self.writer is not None
        self.writer.write(self._head("GET", path, "Accept: text/event-stream\r\n"))
        status, _headers = await self._status_headers()
        if status != 200:
            return status
        buffer = b""
        while (chunk := await self._chunk()) is not None:
            arrival = time.time()
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                for line in block.split(b"\n"):
                    if line.startswith(b"data: "):
                        await on_event(json.loads(line[6:]), arrival)
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


# --- the phases ----------------------------------------------------------------------------


async def make_match(
    host: tuple[str, int], a: tuple[str, str], b: tuple[str, str], public: bool
) -> str:
    ca, cb = Conn(host, a[1]), Conn(host, b[1])
    status, body = await ca.request(
        "POST",
        "/api/v1/matches",
        {"players": 2, "format": "single", "seats": [{"user": b[0]}], "public": public},
    )
    assert status == 201, body
    match_id = json.loads(body)["id"]
    status, body = await cb.request("POST", f"/api/v1/matches/{match_id}/join", {})
    assert status == 200, body
    ca.close()
    cb.close()
    return str(match_id)


async def idle_streams(
    server: Server, accounts: list[tuple[str, str]], per: int, opening: int
) -> dict[str, Any]:
    host = server.base
    matches = await asyncio.gather(
        *(
            make_match(host, accounts[i], accounts[i + 1], False)
            for i in range(0, len(accounts) - 1, 2)
        )
    )
    warm = Conn(host, accounts[0][1])
    for _ in range(200):
        await warm.request("GET", "/api/v1/auth/me")
    warm.close()
    await asyncio.sleep(1.0)
    before = server.rss_kib()
    conns: list[Conn] = []
    total = len(accounts) * per
    refused = 0
    open_s: list[float] = []
    # Clients arrive as a ramp, not all in one instant: at most ``opening`` streams are
    # between their request and their first event at any time (each holds a connection
    # and, until its first event, a request's work on the server).
    gate = asyncio.Semaphore(opening)

    async def one(account: tuple[str, str], path: str) -> None:
        nonlocal refused
        conn = Conn(host, account[1])
        conns.append(conn)
        first = asyncio.Event()

        async def on_event(event: dict[str, Any], arrival: float) -> None:
            if event["type"] in ("match", "account") and not first.is_set():
                open_s.append(time.monotonic() - asked)
                first.set()

        async with gate:
            asked = time.monotonic()
            streaming = asyncio.create_task(conn.stream(path, on_event))
            done = asyncio.create_task(first.wait())
            await asyncio.wait({streaming, done}, return_when=asyncio.FIRST_COMPLETED)
        if streaming.done():  # ended before any event: refused (or failed)
            done.cancel()
            refused += 1
            return
        await streaming

    tasks = []
    started = time.monotonic()
    for i, account in enumerate(accounts):
        match_id = matches[i // 2]
        for k in range(per):
            path = "/api/v1/stream" if k == 0 else f"/api/v1/matches/{match_id}/stream"
            tasks.append(asyncio.create_task(one(account, path)))

    async def all_open() -> None:
        while len(open_s) + refused < total:
            await asyncio.sleep(0.1)

    await asyncio.wait_for(all_open(), 600)
    opened_in = time.monotonic() - started
    _say(f"idle: {len(open_s)} streams open in {opened_in:.1f} s, refused {refused}")
    await asyncio.sleep(2.0)
    after = server.rss_kib()
    still_open = sum(1 for task in tasks if not task.done())
    # one more stream is refused: the cap

    async def ignore(event: dict[str, Any], arrival: float) -> None:
        return None

    extra = Conn(host, accounts[0][1])
    capped = await asyncio.wait_for(extra.stream("/api/v1/stream", ignore), 30)
    _say(f"idle: one more answers {capped}")
    for conn in conns:
        conn.close()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "streams": total,
        "open_at_once": still_open,
        "refused": refused,
        "opening_at_most": opening,
        "opened_in_s": round(opened_in, 1),
        "open_p50_ms": ms(percentile(open_s, 50), 1),
        "open_p99_ms": ms(percentile(open_s, 99), 1),
        "rss_before_mib": round(before / 1024, 1),
        "rss_after_mib": round(after / 1024, 1),
        "kib_per_stream": round((after - before) / total, 1),
        "seventeenth_stream_status": capped,
    }


@dataclass
class Subscriber:
    match: str
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)


async def trivial_gets(
    host: tuple[str, int], token: str, clients: int, seconds: float
) -> list[float]:
    latencies: list[float] = []
    stop = time.monotonic() + seconds

    async def client() -> None:
        conn = Conn(host, token)
        await conn.open()
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            status, _ = await conn.request("GET", "/api/v1/auth/me")
            latencies.append(time.perf_counter() - t0)
            assert status == 200
        conn.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies


async def push_latency(
    server: Server,
    players: list[tuple[str, str]],
    spectators: list[tuple[str, str]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    host = server.base
    n = args.matches
    matches = await asyncio.gather(
        *(make_match(host, players[2 * i], players[2 * i + 1], True) for i in range(n))
    )
    subscribers: list[Subscriber] = []
    done = 0
    all_done = asyncio.Event()
    posts: list[float] = []
    errors = 0
    error_statuses: dict[int, int] = {}
    moving: set[asyncio.Task[None]] = set()  # the players' moves being made

    async def player(match_id: str, account: tuple[str, str]) -> None:
        mover = Conn(host, account[1])
        await mover.open()
        sub = Subscriber(match_id)
        subscribers.append(sub)
        busy = False
        latest: dict[str, Any] = {}

        def my_turn() -> dict[str, Any] | None:
            detail = latest.get("detail") or {}
            deal = detail.get("current_deal") or {}
            mine = detail.get("status") == "active" and deal.get("turn") == detail.get("your_seat")
            return deal if mine else None

        async def on_event(event: dict[str, Any], arrival: float) -> None:
            nonlocal busy
            sub.events.append((arrival, event))
            latest.update(event)
            deal = my_turn()
            if deal is not None and not busy:
                busy = True
                task = asyncio.get_running_loop().create_task(move(deal))
                moving.add(task)
                task.add_done_callback(moving.discard)

        async def move(deal: dict[str, Any]) -> None:
            nonlocal busy, errors
            while deal is not None:
                await asyncio.sleep(args.think_ms / 1000)
                t0 = time.perf_counter()
                status, _ = await mover.request(
                    "POST",
                    f"/api/v1/matches/{match_id}/moves",
                    {"card": deal["legal"][0], "ply": deal["ply"]},
                )
                posts.append(time.perf_counter() - t0)
                if status != 201:
                    errors += 1
                    error_statuses[status] = error_statuses.get(status, 0) + 1
                # the next turn may have come while the move was answered
                following = my_turn()
                same = following is not None and (following["id"], following["ply"]) == (
                    deal["id"],
                    deal["ply"],
                )
                deal = None if same else following
            busy = False

        await Conn(host, account[1]).stream(f"/api/v1/matches/{match_id}/stream", on_event)
        mover.close()

    async def watcher(match_id: str, account: tuple[str, str]) -> None:
        sub = Subscriber(match_id)
        subscribers.append(sub)

        async def on_event(event: dict[str, Any], arrival: float) -> None:
            sub.events.append((arrival, event))

        await Conn(host, account[1]).stream(f"/api/v1/matches/{match_id}/stream", on_event)

    async def finished(coro: Any) -> None:
        nonlocal done
        await coro
        done += 1
        if done == n * 10:
            all_done.set()

    # watchers first, then the players (whose first event starts the match's play)
    tasks = []
    for i, match_id in enumerate(matches):
        for k in range(8):
            tasks.append(
                asyncio.create_task(
                    finished(watcher(match_id, spectators[(i * 8 + k) % len(spectators)]))
                )
            )
    await asyncio.sleep(2.0)
    started = time.time()
    for i, match_id in enumerate(matches):
        for p in (players[2 * i], players[2 * i + 1]):
            tasks.append(asyncio.create_task(finished(player(match_id, p))))
    await asyncio.wait_for(all_done.wait(), args.timeout)
    elapsed = time.time() - started
    for task in list(moving):  # a move still thinking when its match ended
        task.cancel()
    await asyncio.gather(*moving, return_exceptions=True)
    log = server.move_log()
    moves_played = sum(len(log.get(m, [])) for m in matches)  # this round's matches only
    delays: list[float] = []
    lost = out_of_order = duplicate = events = 0
    for sub in subscribers:
        moves = log.get(sub.match, [])
        at = {(d, p): (card, t) for d, _, p, card, t in moves}
        seen: list[tuple[int, int]] = []
        ids = [e["id"] for _, e in sub.events]
        out_of_order += sum(1 for a, b in zip(ids, ids[1:], strict=False) if b <= a)
        for arrival, event in sub.events:
            events += 1
            move = event.get("move")
            if move is None:
                continue
            key = (move["deal"], move["ply"])
            if key in at and at[key][0] == move["card"]:
                delays.append(arrival - at[key][1])
            seen.append(key)
        # A subscriber owes the moves after its first event (the player who opened its
        # stream after the other's first card has that card in its first detail).
        first_detail = sub.events[0][1].get("detail") or {} if sub.events else {}
        start = (first_detail.get("current_deal") or {}).get("ply") or 0
        expected = [(d, p) for d, _, p, _, _ in moves if p >= start]
        duplicate += len(seen) - len(set(seen))
        lost += len(set(expected) - set(seen))
        if seen != [k for k in expected if k in set(seen)]:
            out_of_order += 1
    return {
        "subscribers": len(subscribers),
        "moves": moves_played,
        "events": events,
        "seconds": round(elapsed, 1),
        "moves_per_s": round(moves_played / elapsed, 1),
        "event_p50_ms": ms(percentile(delays, 50)),
        "event_p99_ms": ms(percentile(delays, 99)),
        "event_max_ms": ms(max(delays) if delays else None),
        "timed_events": len(delays),
        "move_post_p50_ms": ms(percentile(posts, 50)),
        "move_post_p99_ms": ms(percentile(posts, 99)),
        "move_errors": errors,
        "move_error_statuses": error_statuses,
        "lost": lost,
        "out_of_order": out_of_order,
        "duplicates": duplicate,
    }


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


async def main_async(args: argparse.Namespace, server: Server) -> dict[str, Any]:
    idle_accounts = server.make_accounts(args.idle_accounts + 2 * args.matches + args.spectators)
    idle = idle_accounts[: args.idle_accounts]
    players = idle_accounts[args.idle_accounts : args.idle_accounts + 2 * args.matches]
    spectators = idle_accounts[args.idle_accounts + 2 * args.matches :]
    result: dict[str, Any] = {}
    if args.idle_accounts:
        result["idle"] = await idle_streams(
            server, idle, args.streams_per_account, args.open_concurrency
        )
        print("idle streams:", json.dumps(result["idle"]), flush=True)
        await asyncio.sleep(3.0)
    token = players[0][1]
    if not args.compare:
        result.update(await push_round(server, players, spectators, token, args))
        return result
    # Rounds, the variant first: the server restarted with the variant's environment, then
    # without it, and so on; each round's event p99 judged against its own GETs.
    name, _, value = args.compare.partition("=")
    rounds = []
    for k in range(args.rounds):
        variant = k % 2 == 0
        if name == "tree":  # the server of another checkout
            server.restart_web(Path(value) if variant else ROOT)
        else:
            server.restart_web(**({name: value} if variant else {}))
        label = args.compare if variant else "as configured"
        _say(f"round {k + 1}: {label}")
        found = await push_round(server, players, spectators, token, args)
        found["label"] = label
        rounds.append(found)
        print(f"round {k + 1} ({found['label']}):", json.dumps(found), flush=True)
    result["rounds"] = rounds
    result.update({k: v for k, v in rounds[-1].items() if k != "label"})
    return result


async def push_round(
    server: Server,
    players: list[tuple[str, str]],
    spectators: list[tuple[str, str]],
    token: str,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """The trivial GETs (at the subscribers' concurrency and at the matches'), the push
    phase, the GETs again; the GET windows pooled."""
    result: dict[str, Any] = {}
    _say("trivial GETs")
    subs = 10 * args.matches
    gets_before = await trivial_gets(server.base, token, subs, args.get_seconds / 2)
    gets_few_before = await trivial_gets(server.base, token, args.matches, args.get_seconds / 2)
    _say("push latency")
    result["push"] = await push_latency(server, players, spectators, args)
    _say("trivial GETs")
    gets_after = await trivial_gets(server.base, token, subs, args.get_seconds / 2)
    gets_few_after = await trivial_gets(server.base, token, args.matches, args.get_seconds / 2)
    gets = gets_before + gets_after
    few = gets_few_before + gets_few_after
    result["get"] = {
        "clients": subs,
        "requests": len(gets),
        "p50_ms": ms(percentile(gets, 50)),
        "p99_ms": ms(percentile(gets, 99)),
        "req_per_s": round(len(gets) / args.get_seconds, 1),
    }
    result["get_few"] = {
        "clients": args.matches,
        "requests": len(few),
        "p50_ms": ms(percentile(few, 50)),
        "p99_ms": ms(percentile(few, 99)),
        "req_per_s": round(len(few) / args.get_seconds, 1),
    }
    p99 = result["push"]["event_p99_ms"]
    result["event_p99_over_get_p99"] = _ratio(p99, result["get"]["p99_ms"])
    result["event_p99_over_get_few_p99"] = _ratio(p99, result["get_few"]["p99_ms"])
    return result


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else round(a / b, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle-accounts", type=int, default=130)
    parser.add_argument("--streams-per-account", type=int, default=16)
    parser.add_argument(
        "--open-concurrency",
        type=int,
        default=32,
        help="idle phase: at most this many streams opening (no first event yet) at once",
    )
    parser.add_argument("--matches", type=int, default=50)
    parser.add_argument("--spectators", type=int, default=40)
    parser.add_argument("--think-ms", type=float, default=500.0)
    parser.add_argument("--get-seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument(
        "--compare",
        metavar="NAME=VALUE",
        help="run the push phase in rounds, the server restarted with this environment "
        "variable (or tree=DIR: from that checkout) for every other round (the first), "
        "as configured for the others",
    )
    parser.add_argument("--rounds", type=int, default=2, help="with --compare")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    logdir = Path(tempfile.mkdtemp(prefix="bench-streams-"))
    server = Server(args, logdir)
    server.start()
    try:
        result = asyncio.run(main_async(args, server))
    finally:
        server.stop()
    push, get = result["push"], result["get"]
    checks = {
        "p99 event <= p99 trivial GET (same concurrency)": (
            push["event_p99_ms"] is not None and push["event_p99_ms"] <= get["p99_ms"]
        ),
        "0 lost, 0 out of order, 0 duplicates": all(
            r["push"]["lost"] == 0
            and r["push"]["out_of_order"] == 0
            and r["push"]["duplicates"] == 0
            for r in result.get("rounds", [result])
        ),
    }
    if "idle" in result:
        idle = result["idle"]
        checks["every idle stream opened and held at once, the 17th refused (429)"] = (
            idle["refused"] == 0
            and idle["open_at_once"] == idle["streams"]
            and idle["seventeenth_stream_status"] == 429
        )
    result["targets"] = checks
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, values in result.items():
            print(f"{name}: {json.dumps(values)}")
        print(f"logs: {logdir}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
