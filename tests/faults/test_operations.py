"""Operations, with real processes: readiness as each dependency stops, a request id in a
real worker's log, a backup restored, and more than one of everything.

(The in-process checks of /healthz, /readyz, /metrics and the logs are in tests/ops.)
"""

from __future__ import annotations

import json
import queue
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.faults.conftest import (
    assert_log_whole,
    current_deal,
    move_log,
    wait_for_turn,
    wait_to_lead,
)
from tests.faults.stack import ROOT, Client, Process, Stack, free_port, wait_for

pytestmark = [pytest.mark.processes, pytest.mark.slow]


def _status(stack: Stack, path: str) -> int:
    try:
        return requests.get(stack.base + path, timeout=10).status_code
    except requests.RequestException:
        return 0


def _checks(stack: Stack, path: str) -> dict[str, str]:
    checks: dict[str, str] = requests.get(stack.base + path, timeout=10).json()["checks"]
    return checks


def test_each_dependency_down_flips_the_status_only_the_database_readiness(
    make_stack: Callable[..., Stack],
) -> None:
    """/statusz (monitoring) fails with any dependency; /readyz (routing) only with what
    this process needs, the database: Redis and the workers are every replica's, and the
    web serves without them (a move is accepted with Redis down, checked here too)."""
    stack = make_stack(WORKER_SEEN_SECONDS="4")
    stack.start_worker()
    stack.beat.start()
    wait_for("all well", lambda: _status(stack, "/statusz") == 200, 40)
    assert _status(stack, "/readyz") == 200

    stack.postgres.stop()
    wait_for("not ready without PostgreSQL", lambda: _status(stack, "/readyz") == 503, 20)
    assert _checks(stack, "/readyz")["Database"] != "OK"
    assert _status(stack, "/statusz") == 503
    assert _status(stack, "/healthz") == 200
    stack.postgres.start()
    wait_for("all well again", lambda: _status(stack, "/statusz") == 200, 40)

    alice = stack.register("alice")
    created = alice.post("/api/v1/matches", {"players": 2, "seats": [{"bot": "random"}]})
    assert created.status_code == 201, created.text
    url = f"/api/v1/matches/{created.json()['id']}"

    def her_turn() -> dict[str, Any] | None:
        deal: dict[str, Any] = alice.get(url).json()["current_deal"]
        return deal if deal["turn"] == deal["seat"] else None

    deal = wait_for("her turn (the bot led, if it was to)", her_turn, 30)
    stack.redis.stop()
    wait_for("Redis missed", lambda: _status(stack, "/statusz") == 503, 20)
    assert _checks(stack, "/statusz")["RedisPing"] == "Redis does not answer."
    assert _status(stack, "/readyz") == 200  # still serving: a card is taken
    moved = alice.post(f"{url}/moves", {"card": deal["legal"][0], "ply": deal["ply"]})
    assert moved.status_code == 201, moved.text
    assert _status(stack, "/healthz") == 200
    stack.redis.start()
    wait_for("all well again", lambda: _status(stack, "/statusz") == 200, 60)

    stack.worker.stop()
    wait_for("no worker seen", lambda: _status(stack, "/statusz") == 503, 20)
    assert _checks(stack, "/statusz")["WorkerSeen"].startswith("No Celery worker seen")
    assert _status(stack, "/readyz") == 200
    assert _status(stack, "/healthz") == 200


def test_a_move_and_the_bot_reply_share_a_request_id_across_processes(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(LOG_FORMAT="json", LOG_LEVEL="INFO")
    stack.start_worker()
    alice = stack.register("alice")
    created = alice.post("/api/v1/matches", {"players": 2, "seats": [{"bot": "greedy"}]})
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    # A card that leads a trick, so that the bot answers it (a trick's second card may win
    # it, and then she leads again: no bot card under her request id).
    deal = wait_to_lead(alice, match_id)
    response = alice.session.post(
        f"{stack.base}/api/v1/matches/{match_id}/moves",
        json={"card": deal["legal"][0], "ply": deal["ply"]},
        headers={"X-Request-ID": "alice-move-0001"},
        timeout=10,
    )
    assert response.status_code == 201, response.text
    assert response.headers["X-Request-ID"] == "alice-move-0001"

    def bot_line() -> dict[str, Any] | None:
        for line in stack.worker.log.read_text(errors="replace").splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if record.get("request_id") == "alice-move-0001" and "played" in record["message"]:
                return dict(record)
        return None

    record = wait_for("the bot's reply logged under alice's request id", bot_line, 30)
    assert record["logger"] == "games.matches.services"
    assert record["level"] == "INFO"


def _pg_tool(stack: Stack, tool: str, *args: str) -> None:
    assert stack.postgres.bindir is not None
    found = shutil.which(tool) or str(stack.postgres.bindir / tool)
    subprocess.run(
        [found, "-h", "127.0.0.1", "-p", str(stack.postgres.port)] + ["-U", "postgres", *args],
        check=True,
        capture_output=True,
        timeout=120,
    )


def _play_to_the_end(client: Client, match_id: str) -> None:
    def my_turn_or_the_end() -> dict[str, Any] | None:
        detail: dict[str, Any] = client.get(f"/api/v1/matches/{match_id}").json()
        deal = detail["current_deal"]
        if detail["status"] == "finished" or (deal and deal["turn"] == deal["seat"]):
            return detail
        return None

    while True:
        # The bot's card may end the match while we wait for our turn: wait for either.
        detail = wait_for("my turn or the match's end", my_turn_or_the_end, 30, interval=0.05)
        if detail["status"] == "finished":
            return
        deal = detail["current_deal"]
        body = {"card": deal["legal"][0], "ply": deal["ply"]}
        response = client.post(f"/api/v1/matches/{match_id}/moves", body)
        assert response.status_code in (201, 409), response.text


def test_a_backup_restored_into_a_fresh_database_verifies_and_plays_on(
    make_stack: Callable[..., Stack], tmp_path: Path
) -> None:
    stack = make_stack()
    stack.start_worker()
    alice = stack.register("alice")
    finished = alice.post("/api/v1/matches", {"players": 2, "seats": [{"bot": "greedy"}]})
    _play_to_the_end(alice, finished.json()["id"])
    live = alice.post(
        "/api/v1/matches", {"players": 2, "format": "first_to_2", "seats": [{"bot": "random"}]}
    ).json()["id"]
    for _ in range(3):  # a few cards into the live match
        deal = wait_for_turn(alice, live)
        assert (
            alice.post(
                f"/api/v1/matches/{live}/moves", {"card": deal["legal"][0], "ply": deal["ply"]}
            ).status_code
            == 201
        )
    before = wait_for_turn(alice, live)

    dump = tmp_path / "briscola.dump"
    _pg_tool(stack, "pg_dump", "--format=custom", f"--file={dump}", "briscola")
    _pg_tool(stack, "createdb", "restored")
    _pg_tool(stack, "pg_restore", "--no-owner", "--dbname=restored", str(dump))

    # The old processes go; new ones serve the restored database.
    stack.worker.stop()
    stack.web.stop()
    url = stack.postgres.url.rsplit("/", 1)[0] + "/restored"
    env = {**stack.env, "DATABASE_URL": url}
    port = free_port()
    bind = f"127.0.0.1:{stack.port}"
    web = Process(
        "web-restored",
        [f"127.0.0.1:{port}" if part == bind else part for part in stack.web.cmd],
        env,
        stack.workdir,
    )
    worker = Process("worker-restored", stack.worker.cmd, env, stack.workdir)
    web.start()
    worker.start()
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for("the restored web answers", lambda: _get_ok(base + "/healthz"), 30)
        restored = Client(base, _token(alice))
        finished_deals = stack.sql("SELECT count(*) FROM games_deal WHERE status = 'finished'")
        deal_ids = [
            row[0] for row in _sql(url, "SELECT id FROM games_deal WHERE status = 'finished'")
        ]
        assert len(deal_ids) == finished_deals[0][0] >= 1
        for deal_id in deal_ids:
            record = tmp_path / f"deal-{deal_id}.json"
            exported = restored.get(f"/api/v1/deals/{deal_id}/export")
            assert exported.status_code == 200, exported.text
            record.write_text(exported.text)
            verified = subprocess.run(
                [sys.executable, "-m", "games.rules", "verify", str(record)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert verified.returncode == 0, verified.stdout + verified.stderr

        # The live match goes on from where it was.
        after = current_deal(restored, live)
        assert (after["id"], after["ply"], after["hand"]) == (
            before["id"],
            before["ply"],
            before["hand"],
        )
        body = {"card": after["legal"][0], "ply": after["ply"]}
        assert restored.post(f"/api/v1/matches/{live}/moves", body).status_code == 201
        answered = wait_for_turn(restored, live, timeout=30)  # the bot replied, from the backup
        assert answered["ply"] > after["ply"]
    finally:
        print(web.tail(), worker.tail())
        worker.stop()
        web.stop()


def _token(client: Client) -> str:
    return str(client.session.headers["Authorization"]).split()[1]


def _get_ok(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def _sql(url: str, query: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, connect_timeout=5) as conn:
        rows: list[tuple[Any, ...]] = conn.execute(query).fetchall()
        return rows


# --- More than one of everything ------------------------------------------------------------


def _player(
    base: str,
    token: str,
    stop: float,
    mode: str,
    acked: list[tuple[str, int, int, str]],
    errors: list[str],
    partner: dict[str, Any] | None = None,
) -> None:
    """One client: plays matches against a bot (mode "bot") or another person ("person",
    creating or joining through ``partner``) until ``stop``; records every 201."""
    client = Client(base, token)
    rng = random.Random(token)
    while time.monotonic() < stop:
        try:
            if mode == "bot":
                created = client.post(
                    "/api/v1/matches",
                    {
                        "players": 2,
                        "rated": True,
                        "seats": [{"bot": rng.choice(["random", "greedy"])}],
                    },
                )
                match_id = created.json()["id"]
            else:
                assert partner is not None
                match_id = partner["match"]
            while time.monotonic() < stop:
                detail = client.get(f"/api/v1/matches/{match_id}").json()
                if detail["status"] == "finished":
                    break
                deal = detail["current_deal"]
                if deal is None or deal["turn"] != deal["seat"]:
                    time.sleep(0.02)
                    continue
                card = rng.choice(deal["legal"])
                response = client.post(
                    f"/api/v1/matches/{match_id}/moves",
                    {"card": card, "ply": deal["ply"]},
                )
                if response.status_code == 201:
                    acked.append((match_id, deal["id"], deal["ply"], card))
                elif response.status_code != 409:
                    errors.append(f"{response.status_code} {response.text[:200]}")
            if mode != "bot":
                return
        except requests.RequestException as exc:
            errors.append(repr(exc))


@pytest.mark.parametrize("beats", [1, 2], ids=["one-beat", "two-beats"])
def test_two_web_servers_two_workers_lose_nothing_and_do_nothing_twice(
    make_stack: Callable[..., Stack], beats: int
) -> None:
    # Sweeps every 2 s that re-queue after 1 s: with two beats, the same reply is often
    # queued twice, as it is when a task is slow, lost and found again.
    stack = make_stack(BOT_SWEEP_SECONDS="2", BOT_SWEEP_AFTER_SECONDS="1")
    port = free_port()
    bind = f"127.0.0.1:{stack.port}"
    web2 = Process(
        "web2",
        [f"127.0.0.1:{port}" if p == bind else p for p in stack.web.cmd],
        stack.env,
        stack.workdir,
    )
    worker2 = Process(
        "worker2", [p.replace("w@", "w2@") for p in stack.worker.cmd], stack.env, stack.workdir
    )
    beat2 = Process(
        "beat2",
        [p if "beat-schedule" not in p else p + "-2" for p in stack.beat.cmd],
        stack.env,
        stack.workdir,
    )
    extra = [web2, worker2] + ([beat2] if beats == 2 else [])
    stack.start_worker()
    stack.beat.start()
    for process in extra:
        process.start()
    try:
        bases = [stack.base, f"http://127.0.0.1:{port}"]
        wait_for("the second web answers", lambda: _get_ok(bases[1] + "/healthz"), 30)
        tokens = [
            stack.register(f"p{n}").session.headers["Authorization"].split()[1] for n in range(16)
        ]
        acked: list[tuple[str, int, int, str]] = []
        errors: list[str] = []
        stop = time.monotonic() + 40
        threads = []
        for n in range(8):  # eight people against bots
            args = (bases[n % 2], tokens[n], stop, "bot", acked, errors)
            threads.append(threading.Thread(target=_player, args=args))
        for n in range(8, 16, 2):  # four pairs of people, each on both servers
            host = Client(bases[0], tokens[n])
            match_id = host.post(
                "/api/v1/matches", {"players": 2, "rated": True, "seats": ["open"]}
            ).json()["id"]
            guest = Client(bases[1], tokens[n + 1])
            assert guest.post(f"/api/v1/matches/{match_id}/join").status_code == 200
            shared = {"match": match_id}
            for token, base in ((tokens[n], bases[0]), (tokens[n + 1], bases[1])):
                args = (base, token, stop, "person", acked, errors, shared)
                threads.append(threading.Thread(target=_player, args=args))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        assert len(acked) > 50

        # Every acknowledged move is in the log, at its ply, once.
        stored = {
            (str(m), d, p): c
            for m, d, p, c in stack.sql(
                "SELECT d.match_id, m.deal_id, m.ply, m.card FROM games_move m "
                "JOIN games_deal d ON d.id = m.deal_id"
            )
        }
        for match_id, deal_id, ply, card in acked:
            assert stored[(match_id, deal_id, ply)] == card
        for (match_id,) in stack.sql("SELECT id FROM games_match"):
            assert_log_whole(move_log(stack, str(match_id)))

        # Let the workers and sweeps settle, then: every rated finished match rated once.
        time.sleep(6)
        rated = stack.sql(
            "SELECT m.id, m.players, count(rc.id) FROM games_match m "
            "LEFT JOIN accounts_ratingchange rc ON rc.match_id = m.id "
            "WHERE m.status = 'finished' AND m.rated GROUP BY m.id, m.players"
        )
        assert rated, "no rated match finished"
        assert all(changes == players for _, players, changes in rated), rated
    finally:
        for process in extra:
            print(process.tail())
            process.stop()


# --- One match through two web instances ---------------------------------------------------


def _second_web(stack: Stack) -> tuple[Process, str]:
    """Another gunicorn like the stack's, on its own port: a second web instance."""
    port = free_port()
    bind = f"127.0.0.1:{stack.port}"
    cmd = [f"127.0.0.1:{port}" if part == bind else part for part in stack.web.cmd]
    return Process("web2", cmd, stack.env, stack.workdir), f"http://127.0.0.1:{port}"


def _on(client: Client, base: str) -> Client:
    """The same account, through another instance."""
    other = Client(base, "")
    other.session.headers.update(client.session.headers)
    return other


class _Stream:
    """A match's SSE stream, read to its end by a thread (the events in a queue)."""

    def __init__(self, client: Client, match_id: str) -> None:
        from tests.live.streams import parse_sse

        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.response = client.session.get(
            f"{client.base}/api/v1/matches/{match_id}/stream",
            headers={"Accept": "text/event-stream"},
            stream=True,
            timeout=(5, 120),
        )
        assert self.response.status_code == 200, self.response.text

        def read() -> None:
            block: list[str] = []
            try:
                for line in self.response.iter_lines(decode_unicode=True):
                    if line:
                        block.append(line)
                        continue
                    event = parse_sse("\n".join(block))
                    block = []
                    if event is not None:
                        self.events.put(event)
            except requests.RequestException:
                pass
            self.events.put(None)

        threading.Thread(target=read, daemon=True).start()

    def until_the_end(self, timeout: float = 60) -> list[dict[str, Any]]:
        """Every event until the server ends the stream (a finished, unrated match)."""
        events = []
        while (event := self.events.get(timeout=timeout)) is not None:
            events.append(event)
        self.response.close()
        return events


def _timeless(detail: dict[str, Any]) -> dict[str, Any]:
    """A detail without ``seconds_left``, which counts down between two reads."""
    return {k: v for k, v in detail.items() if k != "seconds_left"}


def _turn_or_end(client: Client, match_id: str) -> dict[str, Any] | None:
    detail: dict[str, Any] = client.get(f"/api/v1/matches/{match_id}").json()
    deal = detail["current_deal"]
    if detail["status"] == "finished" or (deal and deal["turn"] == deal["seat"]):
        return detail
    return None


def _post_twice(
    clients: tuple[Client, Client], match_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """POST a move with an Idempotency-Key through the first instance, then its retry
    through the second: the retry is answered from the first's record, not played again."""
    key = f"move-{match_id}-{body['ply']}"
    url = f"/api/v1/matches/{match_id}/moves"
    first, retry = (
        client.session.post(
            client.base + url, json=body, headers={"Idempotency-Key": key}, timeout=10
        )
        for client in clients
    )
    assert first.status_code == 201, first.text
    assert "Idempotent-Replayed" not in first.headers
    assert retry.status_code == 201, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json() == first.json()
    assert retry.headers["ETag"] == first.headers["ETag"]
    answer: dict[str, Any] = first.json()
    return answer


def test_two_web_instances_serve_one_match_as_one(make_stack: Callable[..., Stack]) -> None:
    """Two web instances (each its own gunicorn) and a worker on one PostgreSQL and one
    Redis: each move of a person-vs-person and of a person-vs-bot match is posted through
    one instance and retried (same Idempotency-Key) through the other, read back through
    the other, and streamed by a stream opened on the other; a throttle counts the
    requests of both instances together."""
    stack = make_stack(THROTTLE_LOGIN_USER_RATE="10/hour")
    web2, base2 = _second_web(stack)
    stack.start_worker()
    web2.start()
    try:
        bases = (stack.base, base2)
        wait_for("the second web answers", lambda: _get_ok(base2 + "/healthz"), 30)
        alice = stack.register("alice")
        registered = requests.post(
            base2 + "/api/v1/auth/register",
            json={"username": "bob", "password": "a-long-password-1"},
            timeout=10,
        )
        assert registered.status_code == 201, registered.text
        bob = Client(base2, registered.json()["token"])
        through = {
            name: (_on(client, bases[0]), _on(client, bases[1]))
            for name, client in (("alice", alice), ("bob", bob))
        }

        # Person against person: created on one instance, joined on the other.
        created = through["alice"][0].post(
            "/api/v1/matches", {"players": 2, "seats": [{"user": "bob"}]}
        )
        assert created.status_code == 201, created.text
        pvp = created.json()["id"]
        assert through["bob"][1].post(f"/api/v1/matches/{pvp}/join").status_code == 200
        streams = {
            "alice": _Stream(through["alice"][1], pvp),
            "bob": _Stream(through["bob"][0], pvp),
        }
        names = {}
        for name in ("alice", "bob"):
            names[through[name][0].get(f"/api/v1/matches/{pvp}").json()["your_seat"]] = name
        acked: list[tuple[int, int, str]] = []
        while True:
            detail = through["alice"][0].get(f"/api/v1/matches/{pvp}").json()
            if detail["status"] == "finished":
                break
            mover = names[detail["current_deal"]["turn"]]
            ply = detail["current_deal"]["ply"]
            one, other = through[mover] if ply % 2 == 0 else through[mover][::-1]
            deal = one.get(f"/api/v1/matches/{pvp}").json()["current_deal"]
            body = {"card": deal["legal"][0], "ply": deal["ply"]}
            if ply == 0:
                # The key of a move, reused through the other instance for another move.
                _post_twice((one, other), pvp, body)
                reused = other.session.post(
                    f"{other.base}/api/v1/matches/{pvp}/moves",
                    json={"card": deal["legal"][1], "ply": deal["ply"]},
                    headers={"Idempotency-Key": f"move-{pvp}-0"},
                    timeout=10,
                )
                assert reused.status_code == 422, reused.text
                assert reused.json()["code"] == "idempotency_key_reused"
            else:
                _post_twice((one, other), pvp, body)
            acked.append((deal["id"], deal["ply"], body["card"]))
            # Read back through the other instance: the move is there, once.
            seen = other.get(f"/api/v1/matches/{pvp}").json()
            assert seen["status"] == "finished" or seen["current_deal"]["ply"] == ply + 1
        log = move_log(stack, pvp)
        assert_log_whole(log)
        assert len(log) == len(acked) == 40
        assert [(p, c) for _, p, _, c in log] == [(p, c) for _, p, c in acked]
        for name, stream in streams.items():
            events = stream.until_the_end()
            moves = [(e["move"]["ply"], e["move"]["card"]) for e in events if "move" in e]
            assert moves == [(p, c) for _, p, _, c in log], name
            ids = [e["id"] for e in events]
            assert ids == sorted(set(ids)), name
            # The stream opened on one instance ends where a GET through the other does.
            final = through[name][1].get(f"/api/v1/matches/{pvp}").json()
            assert _timeless(events[-1]["detail"]) == _timeless(final), name

        # Person against a bot: the worker's replies reach a stream on the other instance.
        created = through["alice"][1].post(
            "/api/v1/matches", {"players": 2, "seats": [{"bot": "greedy"}]}
        )
        assert created.status_code == 201, created.text
        vs_bot = created.json()["id"]
        stream = _Stream(through["alice"][0], vs_bot)
        mine = 0
        while True:
            reader = through["alice"][mine % 2]
            detail = wait_for(
                "alice's turn or the match's end",
                lambda c=reader: _turn_or_end(c, vs_bot),
                30,
                interval=0.05,
            )
            if detail["status"] == "finished":
                break
            deal = detail["current_deal"]
            one, other = through["alice"] if mine % 2 == 0 else through["alice"][::-1]
            _post_twice((one, other), vs_bot, {"card": deal["legal"][0], "ply": deal["ply"]})
            mine += 1
        log = move_log(stack, vs_bot)
        assert_log_whole(log)
        assert len(log) == 40 and mine == 20  # each bot reply played once
        events = stream.until_the_end()
        moves = [(e["move"]["ply"], e["move"]["card"]) for e in events if "move" in e]
        # The bot may have led the deal before the stream opened (a slow machine): that move
        # is in the stream's first snapshot, not an event. Every later one is.
        skipped = len(log) - len(moves)
        assert skipped in (0, 1) and moves == [(p, c) for _, p, _, c in log][skipped:]
        final = through["alice"][1].get(f"/api/v1/matches/{vs_bot}").json()
        assert _timeless(events[-1]["detail"]) == _timeless(final)

        # A throttle counts across instances: 10 password checks an hour for one name
        # (a name not registered here: registering counts as a check of its name).
        statuses = [
            requests.post(
                bases[n % 2] + "/api/v1/auth/token",
                json={"username": "mallory", "password": "not-the-password"},
                timeout=30,
            )
            for n in range(14)
        ]
        assert [r.status_code for r in statuses[:10]] == [401] * 10, statuses[0].text
        assert [r.json()["code"] for r in statuses[10:]] == ["throttled"] * 4
        assert {r.status_code for r in statuses[10:]} == {429}
    finally:
        print(web2.tail())
        web2.stop()
