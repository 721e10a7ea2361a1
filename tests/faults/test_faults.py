"""Faults lose nothing: Redis down, a worker SIGKILLed mid-task, PostgreSQL restarted.

Each test runs its own deployment in real processes (PostgreSQL, redis-server, gunicorn,
Celery; see stack.py), breaks one of them the way production breaks, and then reads the
stored move log directly: no gap, no duplicate, nothing lost. Bounded in time: every wait
has a deadline.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

import pytest

from tests.faults.conftest import (
    assert_log_whole,
    current_deal,
    move_log,
    wait_for_turn,
    wait_to_lead,
)
from tests.faults.stack import Client, Stack, wait_for

pytestmark = pytest.mark.processes


def start_bot_match(stack: Stack, username: str, level: str) -> tuple[Client, str]:
    client = stack.register(username)
    response = client.post("/api/v1/matches", {"players": 2, "seats": [{"bot": level}]})
    assert response.status_code == 201, response.text
    return client, response.json()["id"]


def sweeps_due(stack: Stack, since: int) -> int:
    """How many times beat has tried to send the sweep since byte ``since`` of its log (with
    the broker down, each try is logged as a connection error, retried)."""
    with open(stack.beat.log, "rb") as log:
        log.seek(since)
        text = log.read()
    return text.count(b"Sending due task") + text.count(b"beat: Connection error")


def test_a_move_succeeds_with_redis_down_and_the_bot_replies_once_it_is_back(
    make_stack: Callable[..., Stack],
) -> None:
    # The sweep (the relay of pending bot replies) runs every second in this deployment;
    # throttling is on, so its Redis-backed counters are exercised too.
    stack = make_stack(
        BOT_SWEEP_SECONDS="1",
        BOT_SWEEP_AFTER_SECONDS="1",
        THROTTLE_USER_RATE="10000/min",
        THROTTLE_ANON_RATE="10000/min",
    )
    stack.start_worker()
    stack.beat.start()
    client, match_id = start_bot_match(stack, "alice", "greedy")
    deal = wait_to_lead(client, match_id)  # the worker plays the bot's cards meanwhile

    stack.redis.stop()
    assert not stack.redis.ping()
    # The client gives up after 10 s: a move that hung on the missing Redis would raise.
    response = client.post(
        f"/api/v1/matches/{match_id}/moves", {"card": deal["legal"][0], "ply": deal["ply"]}
    )
    assert response.status_code == 201, response.text
    after = current_deal(client, match_id)  # reads work too
    assert after["ply"] == deal["ply"] + 1 and after["turn"] != after["seat"]
    # The sweep comes due while Redis is down: beat tries to send it, and cannot...
    mark = stack.beat.log.stat().st_size
    wait_for("beat tries to send the sweep twice", lambda: sweeps_due(stack, mark) >= 2, 60)
    assert current_deal(client, match_id)["ply"] == deal["ply"] + 1  # ...so nothing moved

    stack.redis.start()  # ...an empty Redis: the task sent at commit time is gone
    wait_for_turn(client, match_id, timeout=45)
    log = move_log(stack, match_id)
    assert_log_whole(log)
    assert [ply for _, ply, _, _ in log].count(deal["ply"] + 1) == 1
    assert log[deal["ply"]][3] == deal["legal"][0]


def test_a_worker_killed_mid_task_leaves_no_duplicate_and_no_missing_move(
    make_stack: Callable[..., Stack],
) -> None:
    # No beat runs: only late acknowledgement can bring the task back. A worker restores
    # the messages left unacknowledged longer than the visibility timeout (3 s here) when
    # it starts, and periodically after that.
    stack = make_stack(CELERY_VISIBILITY_TIMEOUT="3")
    stack.start_worker()
    redis = stack.redis.client()
    client, match_id = start_bot_match(stack, "bob", "greedy")
    deal = wait_to_lead(client, match_id)
    stack.worker.stop()  # the reply waits on the queue until a worker comes
    response = client.post(
        f"/api/v1/matches/{match_id}/moves", {"card": deal["legal"][0], "ply": deal["ply"]}
    )
    assert response.status_code == 201, response.text

    # Hold the match's row lock, as a slow transaction would: the task will have chosen
    # its card and be waiting for the lock to append it when the worker is killed.
    with stack.connect() as blocker:
        blocker.execute("SELECT id FROM games_match WHERE id = %s FOR UPDATE", (match_id,))
        stack.start_worker()
        wait_for("the task waits for the match lock", lambda: stack.lock_waiters() > 0, 15)
        assert redis.hlen("unacked") == 1  # received, not acknowledged
        stack.worker.stop(signal.SIGKILL)
        blocker.rollback()
    plies = [ply for _, ply, _, _ in move_log(stack, match_id)]
    assert plies[-1] == deal["ply"]  # the killed task wrote nothing
    assert redis.hlen("unacked") == 1  # and its message outlived it

    # The visibility timeout passes while no worker runs (from when the message was taken).
    ((_, taken),) = redis.zrange("unacked_index", 0, -1, withscores=True)
    wait_for("the visibility timeout passes", lambda: time.time() > taken + 3.5, 30)
    stack.start_worker()
    wait_for_turn(client, match_id, timeout=45)
    log = move_log(stack, match_id)
    assert_log_whole(log)
    assert [ply for _, ply, _, _ in log].count(deal["ply"] + 1) == 1
    wait_for("the redelivered task is acknowledged", lambda: redis.hlen("unacked") == 0, 10)
    assert stack.worker.log.read_text().count("games.tasks.bot_play") >= 2


def test_a_postgresql_restart_gives_clean_errors_then_play_resumes(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(BOT_SWEEP_SECONDS="1", BOT_SWEEP_AFTER_SECONDS="1")
    stack.start_worker()
    stack.beat.start()
    alice = stack.register("carol")
    bob = stack.register("dave")
    response = alice.post("/api/v1/matches", {"players": 2, "seats": [{"user": "dave"}]})
    assert response.status_code == 201, response.text
    pvp = response.json()["id"]
    response = bob.post(f"/api/v1/matches/{pvp}/join")
    assert response.status_code == 200, response.text
    robot, bot_match = start_bot_match(stack, "erin", "greedy")

    def to_play() -> tuple[Client, dict[str, object]]:
        """Whose turn it is in the person-vs-person match, and the move they will make."""
        for client in (alice, bob):
            deal = current_deal(client, pvp)
            if deal["turn"] == deal["seat"]:
                return client, {"card": deal["legal"][0], "ply": deal["ply"]}
        raise AssertionError("nobody's turn")

    def play_one() -> None:
        client, move = to_play()
        response = client.post(f"/api/v1/matches/{pvp}/moves", move)
        assert response.status_code == 201, response.text

    for _ in range(3):
        play_one()
    bot_deal = wait_to_lead(robot, bot_match)
    mover, move = to_play()
    before = move_log(stack, pvp)

    stack.postgres.stop()
    for client in (alice, bob):
        for path in (f"/api/v1/matches/{pvp}", "/api/v1/matches", "/api/v1/auth/me"):
            response = client.get(path)
            assert response.status_code == 503, (path, response.status_code, response.text)
            assert response.json()["code"] == "service_unavailable", response.text
            assert int(response.headers["Retry-After"]) >= 1
    response = mover.post(f"/api/v1/matches/{pvp}/moves", move)
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "service_unavailable"
    stack.postgres.start()

    # Nothing of the refused requests was stored; the first request after the restart
    # reconnects (the kept connection is health-checked) and the same move now lands.
    assert move_log(stack, pvp) == before
    response = mover.post(f"/api/v1/matches/{pvp}/moves", move)
    assert response.status_code == 201, response.text
    for _ in range(3):
        play_one()
    log = move_log(stack, pvp)
    assert log[: len(before)] == before and len(log) == len(before) + 4
    assert_log_whole(log)

    # The bot's side resumes too, though the worker's connection died with the server.
    response = robot.post(
        f"/api/v1/matches/{bot_match}/moves",
        {"card": bot_deal["legal"][0], "ply": bot_deal["ply"]},
    )
    assert response.status_code == 201, response.text
    wait_for_turn(robot, bot_match, timeout=45)
    assert_log_whole(move_log(stack, bot_match))
