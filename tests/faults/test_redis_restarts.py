"""The Celery worker survives Redis restarts, and every bot reply lands (issue 19, item 8).

celery/kombu 5.7.0 with redis-py 8.1 could exit on a Redis restart ("Restoring 1
unacknowledged message(s)", then ``AttributeError: 'NoneType' object has no attribute
'hostname'``); pyproject.toml pins versions that do not (see docs/operations.md). Here a
real worker plays a bot's replies while its Redis (no persistence: what it held is lost)
is killed and restarted 20 times, each time just after a move queued a reply, so that the
reply is often in flight, unacknowledged, when Redis goes. The sweep (beat, every second)
queues again what a restart lost.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

from tests.faults.conftest import assert_log_whole, move_log, wait_for_turn
from tests.faults.stack import Stack

pytestmark = pytest.mark.processes

RESTARTS = 20


def test_the_worker_survives_20_redis_restarts_and_every_bot_reply_lands(
    make_stack: Callable[..., Stack],
) -> None:
    # The expert bot thinks 300 ms a reply, so that Redis often goes while a reply is being
    # computed (unacknowledged); a prefork pool, as production runs (the main process
    # keeps consuming, and loses its connection, while a child runs the task).
    stack = make_stack(BOT_SWEEP_SECONDS="1", BOT_SWEEP_AFTER_SECONDS="1", BOT_THINK_MS="300")
    stack.worker = stack._celery_process(
        "worker", "worker", "--pool", "prefork", "--concurrency", "2", "-n", "w@%h"
    )
    stack.start_worker()
    stack.beat.start()
    client = stack.register("alice")
    response = client.post(
        "/api/v1/matches", {"players": 2, "format": "first_to_3", "seats": [{"bot": "expert"}]}
    )
    assert response.status_code == 201, response.text
    match_id = response.json()["id"]
    rng = random.Random(19)
    moves = 0
    for restart in range(RESTARTS):
        deal = wait_for_turn(client, match_id, timeout=60)
        response = client.post(
            f"/api/v1/matches/{match_id}/moves", {"card": deal["legal"][0], "ply": deal["ply"]}
        )
        assert response.status_code == 201, response.text
        moves += 1
        time.sleep(rng.uniform(0.05, 0.2))  # the bot's reply queued, often being computed
        stack.redis.stop()
        time.sleep(rng.uniform(0.1, 0.5))
        stack.redis.start()
        assert stack.worker.running, f"the worker exited at restart {restart + 1}"
    deal = wait_for_turn(client, match_id, timeout=60)  # the last reply landed too
    assert stack.worker.running, stack.worker.tail()
    assert stack.beat.running, stack.beat.tail()
    log = move_log(stack, match_id)
    assert_log_whole(log)
    assert len(log) >= 2 * moves - 1  # every move of the person, and the bot's replies
    worker_log = stack.worker.log.read_text()
    assert "Unrecoverable error" not in worker_log, stack.worker.tail()
    assert "object has no attribute 'hostname'" not in worker_log, stack.worker.tail()
