"""The seam through which services queue tasks (briscola_service.queueing)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from briscola_service import queueing


def test_a_task_is_found_by_name_in_a_process_that_never_imported_its_module() -> None:
    # The web process imports no tasks module: the seam must find the task by its name.
    code = (
        "import django, os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
        "'briscola_service.settings'); django.setup(); "
        "assert 'games.tasks' not in sys.modules; "
        "from briscola_service import queueing; "
        "print(queueing._task('games.tasks.bot_play').name)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "games.tasks.bot_play"


def test_an_unknown_task_name_raises_instead_of_passing_for_an_outage() -> None:
    with pytest.raises(ModuleNotFoundError):
        queueing.task_send("games.no_such_module.task", what="nothing")
