"""A bot's reply carried end to end: the API queues it on Redis, a real worker plays it.

The worker is Celery's embedded test worker, in a thread of this process, on the same test
database (its own connection, which Celery's Django fixup closes after each task).
"""

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.db import connections

from briscola_service.celery import app
from games.models import Match, Move

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_password_hashing", "deterministic_seeds", "no_stray_connections"),
]

BOT_SEAT = 1


@pytest.fixture
def tasks_run() -> Iterator[list[dict[str, Any]]]:
    """Every task the worker finishes: name, args, return value, thread."""
    runs: list[dict[str, Any]] = []

    def record(sender: Any = None, args: Any = None, retval: Any = None, **_: Any) -> None:
        runs.append(
            {
                "task": sender.name,
                "args": list(args or ()),
                "retval": retval,
                "thread": threading.get_ident(),
            }
        )

    task_postrun.connect(record, weak=False)
    yield runs
    task_postrun.disconnect(record)


@pytest.fixture
def celery_worker(celery_settings: Any, tasks_run: list[dict[str, Any]]) -> Iterator[Any]:
    """A worker consuming the real Redis queue, started on an empty queue."""
    # The settings with REDIS_URL set (as in CI): tasks go to the broker, none run inline.
    assert app.conf.task_always_eager is False
    assert app.conf.broker_url.startswith("redis://")
    app.control.purge()

    def close_connections(**_: Any) -> None:
        # Celery 5.5's Django fixup keeps a task's connection open while it is younger than
        # CONN_MAX_AGE (as a worker should); here the worker's thread ends with the test, so
        # its connection is closed after each task (it runs in that thread: pool "solo").
        connections.close_all()

    task_postrun.connect(close_connections, weak=False)
    with (
        celery_settings(worker_hijack_root_logger=False),  # leave pytest's log handlers alone
        start_worker(
            app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=15.0
        ) as worker,
    ):
        yield worker
    task_postrun.disconnect(close_connections)


def test_bot_reply_is_played_by_a_real_worker(
    user_factory: Any,
    auth_client: Any,
    games: Any,
    wait_until: Any,
    celery_worker: Any,
    tasks_run: list[dict[str, Any]],
) -> None:
    person = user_factory()
    client = auth_client(person)
    response = client.post(
        "/api/v1/matches", {"players": 2, "seats": [{"bot": "greedy"}]}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "active"
    assert response.json()["your_seat"] == 0
    match = Match.objects.get(pk=response.json()["id"])
    deal = games.current_deal(match)
    url = f"/api/v1/matches/{match.pk}"

    # Play whatever turn comes: the bot's (the worker must play it), or ours, until the
    # worker has answered one of our moves.
    person_ply = bot_reply_ply = None
    for _ in range(12):
        state = games.state(deal)
        assert state.turn is not None
        if state.turn == BOT_SEAT:
            ply = state.ply
            played = Move.objects.filter(deal=deal, ply=ply)
            wait_until(played.exists, timeout=10.0)
            if person_ply is not None:
                bot_reply_ply = ply
                break
            continue
        view = client.get(url).json()["current_deal"]
        assert (view["turn"], view["ply"]) == (0, state.ply)
        moved = client.post(
            f"{url}/moves", {"card": view["legal"][0], "ply": view["ply"]}, format="json"
        )
        assert moved.status_code == 201, moved.content
        person_ply = view["ply"]
    assert person_ply is not None and bot_reply_ply is not None, "the bot never had to answer"

    log = games.assert_log_consistent(deal)
    assert log[person_ply][1] == 0
    assert log[bot_reply_ply][1] == BOT_SEAT
    # The person's view shows the reply too.
    assert client.get(url).json()["current_deal"]["ply"] >= bot_reply_ply + 1

    # It was the worker that played it, in its own thread, through the bot task.
    # Its args: deal, ply, the account charged (the match's creator), sent fairly.
    reply_args = [deal.pk, bot_reply_ply, person.pk, True]
    wait_until(lambda: any(r["args"] == reply_args for r in tasks_run), timeout=5.0)
    (run,) = [r for r in tasks_run if r["args"] == reply_args]
    assert run["task"] == "games.tasks.bot_play"
    assert run["retval"] is True
    assert run["thread"] != threading.get_ident()
    bot_plies = {ply for ply, seat, _ in log if seat == BOT_SEAT}
    assert {r["args"][1] for r in tasks_run if r["retval"] is True} == bot_plies


def test_an_exhibition_is_played_to_the_end_by_a_real_worker(
    user_factory: Any,
    auth_client: Any,
    wait_until: Any,
    celery_worker: Any,
    tasks_run: list[dict[str, Any]],
    settings: Any,
) -> None:
    """Bots only: the create request queues the first reply and returns at once; each
    move the worker plays queues the next, until the match is over."""
    settings.BOT_THINK_MS = 5
    admin = user_factory(is_staff=True, is_superuser=True)
    client = auth_client(admin)
    response = client.post(
        "/api/v1/matches",
        {"players": 2, "seats": [{"bot": "expert"}, {"bot": "greedy"}]},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "active" and body["your_seat"] is None  # not played inline
    match = Match.objects.get(pk=body["id"])

    def finished() -> bool:
        match.refresh_from_db()
        return match.status == "finished"

    wait_until(finished, timeout=60.0)
    assert Move.objects.filter(deal__match=match).count() == 40
    wait_until(lambda: sum(r["retval"] is True for r in tasks_run) == 40, timeout=5.0)
    # The expert's replies have their own task (and queue: games.clocks), the greedy's not.
    assert {r["task"] for r in tasks_run} == {
        "games.tasks.bot_play",
        "games.tasks.bot_play_expert",
    }
    assert threading.get_ident() not in {r["thread"] for r in tasks_run}
