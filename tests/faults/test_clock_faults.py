"""Deadlines survive a Celery worker SIGKILLed while it enforces them (issue 14).

A real deployment (stack.py: PostgreSQL, redis-server, gunicorn, a Celery worker and beat):
many matches against the greedy bot with 5 s per move, half ``on_timeout: "forfeit"``,
half ``"bot"``. The person plays a first card and then nothing: every later turn of theirs
ends by a timeout, each enforced by the task due at that deadline or by the beat sweep.
While they are being enforced, one match's row is held locked as a slow transaction would
hold it, the worker is caught waiting for that lock inside a deadline's transaction, and
is SIGKILLed; the deadlines pass with no worker at all; a new worker starts, with the dead
worker's messages (its deadline tasks, held unacknowledged until due) delivered again.

Then, read from the stored rows: every deadline was enforced exactly once, one
``seat_timed_out`` per (deal, ply), none lost (a forfeit ends each forfeit match; the bot
plays for the absent person three times, then holds the seat), one card per ply, each
deal's move log whole. Bounded: every wait has a deadline.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.faults.conftest import assert_log_whole, current_deal, move_log
from tests.faults.stack import Client, Stack, wait_for

pytestmark = pytest.mark.processes

MATCHES = 8  # half forfeit, half bot
PER_MOVE = 5
VISIBILITY_TIMEOUT = 4  # deadline tasks go out at most 2 s ahead, then again for the rest
TIMED_OUT_TURNS = 3  # of the person of each bot match, before the test looks


def first_card(client: Client, match_id: str) -> None:
    """Play the person's first card (once the bot has led, if it leads)."""

    def my_turn() -> dict[str, Any] | None:
        deal = current_deal(client, match_id)
        return deal if deal["turn"] == deal["seat"] else None

    deal = wait_for("the person's first turn", my_turn, 30, interval=0.05)
    body = {"card": deal["legal"][0], "ply": deal["ply"], "deal": deal["id"]}
    response = client.post(f"/api/v1/matches/{match_id}/moves", body)
    assert response.status_code == 201, response.text


def timeouts(stack: Stack, match_ids: list[str]) -> list[tuple[str, int, int, str]]:
    """(match, deal id, ply, action) of every ``seat_timed_out`` event stored."""
    rows = stack.sql(
        "SELECT match_id::text, deal, ply, data->>'action' FROM games_matchevent "
        "WHERE kind = 'seat_timed_out' AND match_id::text = ANY(%s) ORDER BY id",
        match_ids,
    )
    return [(str(m), int(d), int(p), str(a)) for m, d, p, a in rows]


def settled(stack: Stack, forfeits: list[str], bots: list[str]) -> bool:
    """The deadlines to enforce have been: the forfeit matches ended by timeout, and each
    bot match's person timed out ``TIMED_OUT_TURNS`` times (against bots alone the bot
    plays each of her turns when its time runs out, until the match ends)."""
    ended = stack.sql(
        "SELECT count(*) FROM games_match WHERE id::text = ANY(%s) AND end_reason = 'timeout'",
        forfeits,
    )
    per_match = Counter(match for match, _, _, _ in timeouts(stack, bots))
    return int(ended[0][0]) == len(forfeits) and all(per_match[m] >= TIMED_OUT_TURNS for m in bots)


def task_results(stack: Stack) -> Counter[str]:
    """What the deadline tasks returned (``'forfeit'``, ``'bot'``, ``'later'``, ``None``),
    as the workers logged it (JSON lines, the production format)."""
    found: Counter[str] = Counter()
    for line in stack.worker.log.read_text(errors="replace").splitlines():
        if "games.tasks.clock_deadline" not in line or "return_value" not in line:
            continue
        with contextlib.suppress(ValueError):
            data = json.loads(line).get("data", {})
            if data.get("name") == "games.tasks.clock_deadline":
                found[str(data["return_value"])] += 1
    return found


def test_a_worker_killed_while_enforcing_deadlines_leaves_each_enforced_once(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(
        CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT),
        MATCH_ACTIVE_LIMIT="0",
        BOT_SWEEP_SECONDS="1",
        BOT_SWEEP_AFTER_SECONDS="2",
        LOG_LEVEL="INFO",  # the worker logs what each task returned
    )
    stack.start_worker()
    stack.beat.start()
    redis = stack.redis.client()
    began = time.monotonic()
    phases: list[str] = []

    def phase(name: str) -> None:
        phases.append(f"{name} {time.monotonic() - began:.1f} s")

    alice = stack.register("alice")

    forfeits: list[str] = []
    bots: list[str] = []
    for n in range(MATCHES):
        on_timeout = "forfeit" if n % 2 == 0 else "bot"
        body = {
            "players": 2,
            "format": "single",
            "seats": [{"bot": "greedy"}],
            "time_control": {"per_move_seconds": PER_MOVE},
            "on_timeout": on_timeout,
        }
        response = alice.post("/api/v1/matches", body)
        assert response.status_code == 201, response.text
        match_id = response.json()["id"]
        first_card(alice, match_id)  # past the abort window: a 5 s deadline from now on
        (forfeits if on_timeout == "forfeit" else bots).append(match_id)
    everyone = forfeits + bots
    phase("set up")

    # Deadlines are being enforced, by their tasks (as the worker says)...
    def under_way() -> bool:
        applied = task_results(stack)
        by_task = applied["'forfeit'"] + applied["'bot'"]
        return by_task > 0 and len(timeouts(stack, everyone)) >= MATCHES // 2

    wait_for("deadline tasks apply timeouts", under_way, 30)

    # ...and one still to come is held locked: the worker will wait for it, inside a
    # deadline's transaction (its task, or the sweep), and is killed there.
    def coming() -> str | None:
        """A match whose person's deadline is still ahead (by the database's clock)."""
        rows = stack.sql(
            "SELECT id::text FROM games_match WHERE id::text = ANY(%s) AND status = 'active' "
            "AND deadline > statement_timestamp() + interval '0.5 second' "
            "ORDER BY deadline LIMIT 1",
            everyone,
        )
        return str(rows[0][0]) if rows else None

    held = wait_for("a deadline still to come", coming, 15)
    with stack.connect() as blocker:
        blocker.execute("SELECT id FROM games_match WHERE id = %s FOR UPDATE", (held,))
        wait_for("the worker waits for the match's lock", lambda: stack.lock_waiters() > 0, 20)
        stack.worker.stop(signal.SIGKILL)
        blocker.rollback()
    phase("killed")
    assert redis.hlen("unacked") >= 1  # the dead worker's messages, not acknowledged
    enforced_before_restart = len(timeouts(stack, everyone))

    # No worker: deadlines pass unenforced. Once the dead worker's messages have been
    # unacknowledged for the visibility timeout, a new worker takes them back as it starts.
    taken = [score for _, score in redis.zrange("unacked_index", 0, -1, withscores=True)]
    wait_for(
        "the visibility timeout passes",
        lambda: time.time() > max(taken) + VISIBILITY_TIMEOUT + 0.5,
        30,
    )
    stack.start_worker()
    phase("new worker ready")
    wait_for("every deadline is enforced", lambda: settled(stack, forfeits, bots), 90)
    phase("all enforced")
    for match_id in bots:  # against a bot her turns would time out to the end: stop them
        response = alice.post(f"/api/v1/matches/{match_id}/resign")
        assert response.status_code == 200, response.text
    wait_for("the delivered-again messages are acknowledged", lambda: not redis.hlen("unacked"), 30)

    # Exactly once: one timeout per (deal, ply), none missing.
    events = timeouts(stack, everyone)
    assert len(events) > enforced_before_restart  # some were left to the new worker
    per_turn = Counter((match, deal, ply) for match, deal, ply, _ in events)
    assert max(per_turn.values()) == 1, [k for k, v in per_turn.items() if v > 1]
    by_match: dict[str, list[tuple[int, int, str]]] = {m: [] for m in everyone}
    for match, deal, ply, action in events:
        by_match[match].append((deal, ply, action))
    for match_id in forfeits:
        ((_, ply, action),) = by_match[match_id]
        assert action == "forfeit"
        log = move_log(stack, match_id)
        assert_log_whole(log)
        assert [p for _, p, _, _ in log] == list(range(ply))  # no card at the timed-out ply
        detail = alice.get(f"/api/v1/matches/{match_id}").json()
        assert detail["status"] == "finished" and detail["end_reason"] == "timeout"
        assert detail["winner"] == 1  # the bot's side (the person sits in seat 0)
    for match_id in bots:
        turns = by_match[match_id]
        assert len(turns) >= TIMED_OUT_TURNS, turns
        assert {action for _, _, action in turns} == {"bot"}
        log = move_log(stack, match_id)  # the timeouts go on meanwhile: read after them
        assert_log_whole(log)
        mine = [ply for _, ply, seat, _ in log if seat == 0]
        # Her first card, then the timeout bot's cards at the timed-out plies: each of her
        # turns after the first was a deadline, enforced once, in order. The resignation
        # that stopped the match may have come between the last timeout and the bot's card
        # for it (the card is then dropped, the match being over: seen once in a CI mimic
        # under heavy load), so that last turn may have no card.
        timed_out_plies = [ply for _, ply, _ in turns]
        played_for_her = mine[1 : 1 + len(turns)]
        assert played_for_her in (timed_out_plies, timed_out_plies[:-1]), (mine, turns)
        taken_over = stack.sql(
            "SELECT count(*) FROM games_matchevent WHERE match_id = %s "
            "AND kind = 'seat_taken_by_bot'",
            match_id,
        )
        assert int(taken_over[0][0]) == 0  # nobody waits on her against a bot
    print(
        f"deadline tasks returned: {dict(task_results(stack))}; timeouts: {len(events)}, "
        f"{enforced_before_restart} before the kill; {', '.join(phases)}"
    )
