"""What every way of starting the service says (Makefile, Dockerfile, Compose, systemd).

- gunicorn 25+ opens a control socket at ``$HOME/.gunicorn/gunicorn.ctl`` unless told
  otherwise: one path for every instance of a user, so a second server on the machine
  took over the first's (an outside audit). Every launch turns it off.
- With DEBUG off the static files are served from STATIC_ROOT, which only collectstatic
  fills: the systemd unit ran migrate and ensure_bots but never collectstatic.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gunicorn.config import Config

from tests.faults.stack import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]


def _gunicorn_args(words: list[str]) -> list[str]:
    """The arguments after the gunicorn executable in a command."""
    for i, word in enumerate(words):
        if Path(word).name == "gunicorn" or word.endswith("/gunicorn"):
            return words[i + 1 :]
    raise AssertionError(f"no gunicorn in {words}")


def _joined(text: str) -> str:
    return re.sub(r"\\\n\s*", " ", text)


def makefile_run() -> list[str]:
    recipe = _joined((ROOT / "Makefile").read_text())
    line = next(ln for ln in recipe.splitlines() if "bin/gunicorn " in ln and "exec" in ln)
    values = {"$(VENV)": ".venv", "$(HOST)": "127.0.0.1", "$(PORT)": "8000", "$(WEB_WORKERS)": "1"}
    for name, value in values.items():
        line = line.replace(name, value)
    return _gunicorn_args(shlex.split(line))


def dockerfile_cmd() -> list[str]:
    cmd = next(
        ln for ln in _joined((ROOT / "Dockerfile").read_text()).splitlines() if ln.startswith("CMD")
    )
    return _gunicorn_args(json.loads(cmd[len("CMD") :]))


def compose_web() -> list[str]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["web"]["command"]
    shell = shlex.split(command)[-1] if command.startswith("sh -c") else command
    return _gunicorn_args(shlex.split(shell.split("&& exec", 1)[1]))


def systemd_lines(name: str, key: str) -> list[str]:
    unit = _joined((ROOT / "docs" / "systemd" / name).read_text())
    return [ln.split("=", 1)[1] for ln in unit.splitlines() if ln.startswith(key + "=")]


def systemd_web() -> list[str]:
    (exec_start,) = systemd_lines("briscola-web.service", "ExecStart")
    return _gunicorn_args(shlex.split(exec_start))


LAUNCHES = {
    "make run": makefile_run,
    "Dockerfile": dockerfile_cmd,
    "docker-compose web": compose_web,
    "systemd briscola-web": systemd_web,
}


@pytest.mark.parametrize("launch", sorted(LAUNCHES))
def test_every_launch_turns_gunicorns_control_socket_off(launch: str) -> None:
    args = LAUNCHES[launch]()
    parsed = Config().parser().parse_args(args)  # gunicorn's own parser
    assert parsed.control_socket_disable is True, (launch, args)
    assert parsed.worker_class == "briscola_service.serving.Worker", (launch, args)


def test_the_launch_options_make_gunicorn_open_no_control_socket(tmp_path: Path) -> None:
    """A real gunicorn started as the systemd unit starts it (its own port): nothing in
    the HOME (or XDG_RUNTIME_DIR) where the control socket would be."""
    args = systemd_web()
    port = free_port()
    args[args.index("--bind") + 1] = f"127.0.0.1:{port}"
    args[args.index("--workers") + 1] = "1"
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(home), DATABASE_URL="sqlite:///:memory:")
    env.pop("REDIS_URL", None)
    log = tmp_path / "gunicorn.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        import requests

        def answers() -> bool:
            try:
                return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).ok
            except requests.RequestException:
                return False

        wait_for("gunicorn answers /healthz", answers, 30)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Control socket listening" not in log.read_text(), log.read_text()
    assert not list(home.rglob("*.ctl"))


def test_the_systemd_unit_collects_the_static_files() -> None:
    commands = [shlex.split(c) for c in systemd_lines("briscola-web.service", "ExecStartPre")]
    management = [c[c.index("manage.py") + 1 :] for c in commands if "manage.py" in c]
    assert ["collectstatic", "--noinput", "-v", "0"] in management, management
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert "manage.py collectstatic --noinput" in operations
