"""A web process finds the tasks it queues by name, though nothing imported their modules.

Celery's ``autodiscover_tasks`` imports each app's ``tasks`` module only when a worker
starts; a web process (gunicorn, ``make run``) that queued ``"games.tasks.bot_play"`` by
name got ``NotRegistered`` (the bot never replied under ``make run``). A fresh interpreter,
as a web worker is, checks it: the pytest process itself has imported the tasks long ago.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import django
django.setup()
import sys
from briscola_service import queueing
from briscola_service.celery import app
assert "games.tasks.bot_play" not in app.tasks, "imported already: the check proves nothing"
task = queueing._task("games.tasks.bot_play")
assert task.name == "games.tasks.bot_play", task
print("ok")
"""


def test_a_fresh_web_process_finds_a_task_by_name() -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
        "DJANGO_SETTINGS_MODULE": "briscola_service.settings",
    }
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"
