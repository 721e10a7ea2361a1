"""Streams across real processes (issue 13): two web instances (uvicorn, ASGI) on one
PostgreSQL and one Redis, and Redis going away while a stream is open.

Like tests/faults, each test has a private deployment (tests/faults/stack.py): its own
PostgreSQL cluster and redis-server. The web instances are started here directly with
uvicorn. No test asserts on a timing: waits have generous deadlines, and the measured
delays are printed (bench/streams.py measures them properly).
"""

from __future__ import annotations

import json
import queue
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.faults.stack import Client, Process, Stack, free_port, wait_for
from tests.live.streams import parse_sse, timeless_detail

pytestmark = pytest.mark.processes


class LiveStack(Stack):
    """PostgreSQL, Redis and two uvicorn web instances (no Celery worker: people only)."""

    def __init__(self, workdir: Path, **settings: str) -> None:
        super().__init__(workdir, **settings)
        self.ports = [free_port(), free_port()]
        self.webs = [
            Process(
                f"web{i}",
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "briscola_service.asgi:application",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--log-level",
                    "warning",
                ],
                self.env,
                workdir,
            )
            for i, port in enumerate(self.ports)
        ]
        self.bases = [f"http://127.0.0.1:{port}" for port in self.ports]
        self.base = self.bases[0]

    def start(self) -> None:
        import subprocess

        self.postgres.init()
        self.redis.start()
        for command in (["migrate", "--noinput", "-v", "0"], ["ensure_bots"]):
            subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=Path(__file__).resolve().parents[2],
                env=self.env,
                check=True,
                capture_output=True,
                timeout=120,
            )
        for web in self.webs:
            web.start()
        for base in self.bases:
            wait_for(f"{base} answers", lambda b=base: _answers(b), 60)

    def close(self) -> None:
        for web in self.webs:
            web.stop()
        super().close()

    def logs(self) -> str:
        return "\n".join(f"--- {w.name} ---\n{w.tail()}" for w in self.webs)

    def on(self, client: Client, index: int) -> Client:
        other = Client(self.bases[index], "")
        other.session.headers.update(client.session.headers)
        return other


def _answers(base: str) -> bool:
    try:
        return requests.get(base + "/api/schema/", timeout=2).status_code == 200
    except requests.RequestException:
        return False


class HttpStream:
    """An SSE stream read by a thread; events queued with the time they arrived."""

    def __init__(self, url: str, client: Client, **headers: str) -> None:
        self.events: queue.Queue[tuple[float, dict[str, Any]] | None] = queue.Queue()
        # A session of the stream's own, with the client's credentials: the connection the
        # stream ends by shutting down (close) must never go back to the client's pool,
        # where its next request took it and failed ("Connection aborted").
        self.session = requests.Session()
        self.session.headers.update(client.session.headers)
        self.session.cookies.update(client.session.cookies)
        self.response = self.session.get(
            url, headers={"Accept": "text/event-stream", **headers}, stream=True, timeout=(5, 120)
        )
        assert self.response.status_code == 200, self.response.text
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        block: list[str] = []
        try:
            for line in self.response.iter_lines(decode_unicode=True):
                if line:
                    block.append(line)
                    continue
                event = parse_sse("\n".join(block))
                block = []
                if event is not None:
                    self.events.put((time.monotonic(), event))
        except (requests.RequestException, AttributeError, ValueError):
            pass
        self.events.put(None)

    def next(self, timeout: float = 30.0) -> tuple[float, dict[str, Any]]:
        found = self.events.get(timeout=timeout)
        assert found is not None, "the stream ended"
        return found

    def close(self) -> None:
        # The reader thread waits in a read (the next heartbeat is a minute away) holding
        # the buffer's lock that close() takes: end that read first, from the socket.
        self.response.raw.connection.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        self.response.close()
        self.session.close()


@pytest.fixture(scope="module")
def live_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    """One deployment for the module (a cluster takes long to make); each test plays its
    own match. The heartbeat is long, so that only the bus can bring an event in time."""
    stack = LiveStack(tmp_path_factory.mktemp("live") / "stack", LIVE_HEARTBEAT_SECONDS="60")
    try:
        stack.start()
        yield stack
    finally:
        print(stack.logs())
        stack.close()


def _match(stack: LiveStack, names: tuple[str, str]) -> tuple[Client, Client, str]:
    alice, bob = stack.register(names[0]), stack.register(names[1])
    created = alice.post(
        "/api/v1/matches", {"players": 2, "format": "first_to_2", "seats": [{"user": names[1]}]}
    )
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    assert stack.on(bob, 1).post(f"/api/v1/matches/{match_id}/join").status_code == 200
    return alice, bob, match_id


def _play_one(players: dict[int, Client], match_id: str) -> tuple[float, dict[str, Any]]:
    """The seat to play plays its first legal card; returns when the 201 came, and it."""
    deal = players[0].get(f"/api/v1/matches/{match_id}").json()["current_deal"]
    player = players[deal["turn"]]
    mine = player.get(f"/api/v1/matches/{match_id}").json()["current_deal"]
    response = player.post(
        f"/api/v1/matches/{match_id}/moves", {"card": mine["legal"][0], "ply": mine["ply"]}
    )
    assert response.status_code == 201, response.text
    return time.monotonic(), response.json()


def test_a_move_posted_to_one_instance_reaches_a_stream_on_the_other(
    live_stack: LiveStack,
) -> None:
    alice, bob, match_id = _match(live_stack, ("alice", "bob"))
    stream = HttpStream(f"{live_stack.bases[0]}/api/v1/matches/{match_id}/stream", alice)
    first = stream.next()[1]
    assert first["type"] == "match"
    # every move is posted to the second instance
    players = {0: live_stack.on(alice, 1), 1: live_stack.on(bob, 1)}
    delays, events = [], []
    for _ in range(12):
        committed, _body = _play_one(players, match_id)
        arrived, event = stream.next()
        delays.append(arrived - committed)
        events.append(event)
    stream.close()
    assert [e["type"] for e in events] == ["card_played"] * 12
    assert [e["id"] for e in events] == list(range(first["id"] + 1, first["id"] + 13))
    detail = alice.get(f"/api/v1/matches/{match_id}").json()
    assert timeless_detail(events[-1]["detail"]) == timeless_detail(detail)
    print(f"move (instance 2) -> event (instance 1): max {max(delays) * 1000:.1f} ms")


def test_two_example_bots_play_each_other_on_streams(live_stack: LiveStack) -> None:
    """examples/bot_client.py waits on the match stream, held open by the ASGI server."""
    import subprocess

    root = Path(__file__).resolve().parents[2]

    def client(name: str, *args: str) -> list[str]:
        return [
            sys.executable,
            str(root / "examples" / "bot_client.py"),
            "--base-url",
            live_stack.bases[0],
            "--username",
            name,
            "--password",
            "a-long-password-1",
            "--register",
            "--timeout",
            "120",
            *args,
        ]

    creator = subprocess.Popen(
        client("erin", "--create", "2:single:open"),
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert creator.stdout is not None
        first = creator.stdout.readline()
        match_id = first.split()[1]
        joiner = subprocess.run(
            client("fred", "--join", match_id, "--level", "random"),
            cwd=root,
            capture_output=True,
            text=True,
            timeout=150,
            check=False,
        )
        rest, errors = creator.communicate(timeout=150)
    finally:
        if creator.poll() is None:
            creator.kill()
            creator.communicate()
    assert joiner.returncode == 0, (joiner.stdout, joiner.stderr)
    assert creator.returncode == 0, (first + rest, errors)
    assert "polling instead" not in errors + joiner.stderr
    assert rest.splitlines()[-1].startswith("match finished:")
    (count,) = live_stack.sql(
        "SELECT count(*) FROM games_move mv JOIN games_deal d ON d.id = mv.deal_id "
        "WHERE d.match_id = %s",
        match_id,
    )[0]
    assert count == 40


def test_redis_down_while_a_stream_is_open_loses_nothing(live_stack: LiveStack) -> None:
    alice, bob, match_id = _match(live_stack, ("carol", "dave"))
    stream = HttpStream(f"{live_stack.bases[0]}/api/v1/matches/{match_id}/stream", alice)
    first = stream.next()[1]
    players = {0: live_stack.on(alice, 1), 1: live_stack.on(bob, 1)}
    events = []
    for _ in range(2):
        _play_one(players, match_id)
        events.append(stream.next()[1])
    live_stack.redis.stop()
    for _ in range(3):  # the moves still succeed (201: asserted in _play_one)
        _play_one(players, match_id)
    live_stack.redis.start()
    # What was played meanwhile, once Redis is back: one event that carries the three
    # cards. The states between were kept nowhere (the snapshots' cache is Redis), and a
    # stream never makes one up (the cards of then with the clock of now).
    events.append(stream.next(timeout=60)[1])
    _play_one(players, match_id)  # and it goes on live
    events.append(stream.next()[1])
    stream.close()
    assert [e["type"] for e in events] == ["card_played"] * 4
    assert [e["id"] for e in events] == [first["id"] + n for n in (1, 2, 5, 6)]
    meanwhile = events[2]
    assert "move" not in meanwhile and meanwhile["detail"]["current_deal"]["ply"] == 5
    log = live_stack.sql(
        "SELECT mv.card FROM games_move mv JOIN games_deal d ON d.id = mv.deal_id "
        "WHERE d.match_id = %s ORDER BY mv.ply",
        match_id,
    )
    cards = [card for (card,) in log]
    assert [e["move"]["ply"] for e in events if "move" in e] == [0, 1, 5]
    assert [e["move"]["card"] for e in events if "move" in e] == [cards[0], cards[1], cards[5]]
    assert json.dumps(timeless_detail(events[-1]["detail"]), sort_keys=True) == json.dumps(
        timeless_detail(alice.get(f"/api/v1/matches/{match_id}").json()), sort_keys=True
    )
