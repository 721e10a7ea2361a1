"""The one seam through which services queue Celery tasks.

Tasks call services; services never import the tasks modules. They name the task they
want run (``"games.tasks.bot_play"``), and this module looks it up in the Celery app's
registry and sends it, usually once the caller's transaction has committed, so that a
task never sees a write that was rolled back. A broker that cannot be reached is logged,
not raised: the write stands, and the periodic sweep of that kind of work (bot replies,
ratings) finds what was never done and queues it again.

Without a broker (``make run``: ``task_always_eager``) the task runs here, in this
process, when it is sent; except a task sent for later (:func:`task_send_later`), which is
not sent at all there: an eager Celery would run it at once, whatever its ETA.
"""

from __future__ import annotations

import importlib
import logging
from datetime import datetime
from typing import Any

from celery import Task
from django.db import transaction

from briscola_service import metrics
from briscola_service.celery import app

logger = logging.getLogger(__name__)


def tasks_run_in_process() -> bool:
    """Whether a sent task runs at once, in this process (no broker configured)."""
    return bool(app.conf.task_always_eager)


def _task(name: str) -> Task:  # type: ignore[type-arg]
    """The task registered as ``name``. A task's name is its dotted path
    (``games.tasks.bot_play``), so its module is imported here when the web process has
    not imported it yet (the worker imports every tasks module as it starts). An unknown
    name raises: that is a programming error, not an outage."""
    if name not in app.tasks:
        importlib.import_module(name.rpartition(".")[0])
    return app.tasks[name]


def task_send(name: str, *args: Any, what: str) -> bool:
    """Send the task registered as ``name`` with ``args``; False (logged) if it could not be.

    ``what`` says in the log what was not queued, e.g. ``"bot reply for deal 7 ply 3"``.
    """
    task = _task(name)
    metrics.TASKS.labels(name, "queued").inc()
    try:
        task.delay(*args)
    except Exception:  # the broker is down: the sweep of this kind of work queues it later
        logger.warning("could not queue %s", what, exc_info=True)
        return False
    return True


def task_send_on_commit(name: str, *args: Any, what: str) -> None:
    """Send the task once the current transaction commits (never, if it rolls back)."""
    transaction.on_commit(lambda: task_send(name, *args, what=what))


def task_send_later(
    name: str,
    *args: Any,
    eta: datetime | None = None,
    countdown: float | None = None,
    what: str,
) -> bool:
    """Send the task registered as ``name`` to run at ``eta`` (or ``countdown`` seconds
    from now); False (logged) if it could not be sent.

    Without a broker (tasks run in-process) nothing is sent and False is returned: eager
    Celery ignores the ETA and would run the task now, in the caller. Work due later needs
    another way in that mode, which the caller names (games.clocks: the sweep the requests
    run, games.clocks.middleware). The worker holds a task with an ETA, unacknowledged,
    until it is due: keep the delay under the broker's visibility timeout, or the message
    is delivered again meanwhile (see games.clocks.services.deadline_task_send).
    """
    if tasks_run_in_process():
        return False
    task = _task(name)
    metrics.TASKS.labels(name, "queued").inc()
    try:
        task.apply_async(args, eta=eta, countdown=countdown)
    except Exception:  # the broker is down: the sweep of this kind of work does it
        logger.warning("could not queue %s", what, exc_info=True)
        return False
    return True


def task_send_later_on_commit(
    name: str,
    *args: Any,
    eta: datetime | None = None,
    countdown: float | None = None,
    what: str,
) -> None:
    """:func:`task_send_later` once the current transaction commits (never, if it rolls
    back)."""
    transaction.on_commit(
        lambda: task_send_later(name, *args, eta=eta, countdown=countdown, what=what)
    )
