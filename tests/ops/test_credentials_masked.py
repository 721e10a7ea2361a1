"""A password in REDIS_URL is never printed by the reports an operator pastes: Celery
masks settings by their names, not their values, and ``celery -A briscola_service report``
(which Celery's bug template asks for) printed it three times, as ``REDIS_URL`` and as the
caches' ``LOCATION`` (an outside audit). briscola_service.credentials masks it in the
value's ``repr``; the connections still get the URL itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from briscola_service.credentials import MASK, CredentialedURL, masked

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "topsecret-pw-42"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"redis://:{PASSWORD}@127.0.0.1:6391/0", f"redis://:{MASK}@127.0.0.1:6391/0"),
        (
            f"rediss://user:{PASSWORD}@cache.example:6380/2",
            f"rediss://user:{MASK}@cache.example:6380/2",
        ),
        (f"redis://u:p@ss:{PASSWORD}@h:1/0", f"redis://u:{MASK}@h:1/0"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        (f"redis://:{PASSWORD}@[::1:6379/0", MASK),  # unreadable: nothing of it shown
        ("", ""),
    ],
)
def test_a_password_is_masked_in_the_values_repr_and_kept_in_the_value(
    url: str, shown: str
) -> None:
    value = CredentialedURL(url)
    assert masked(url) == shown
    assert repr(value) == repr(shown) and PASSWORD not in repr({"LOCATION": value})
    assert str(value) == url and value == url  # what connects with it


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "celery", "-A", "briscola_service", "report"],
        [sys.executable, "manage.py", "diffsettings"],
    ],
    ids=["celery report", "diffsettings"],
)
def test_the_reports_an_operator_pastes_do_not_print_the_redis_password(command: list[str]) -> None:
    env = {**os.environ, "REDIS_URL": f"redis://:{PASSWORD}@127.0.0.1:6391/0"}
    env.pop("DATABASE_URL", None)  # whichever database: neither command connects
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert PASSWORD not in done.stdout + done.stderr
    assert f"redis://:{MASK}@127.0.0.1:6391/0" in done.stdout  # the URL is there, masked
