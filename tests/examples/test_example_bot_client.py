"""examples/bot_client.py against the live test server, over real HTTP (issue #4).

The server runs in a thread of this process (pytest-django's ``live_server``), so the
autouse fixture that runs Celery tasks in-process applies to its requests too: the
Celery app's configuration is process-wide, and the bot replies are played at each
move's commit, in the server thread. (Were they queued for a worker instead, the bot
would never answer and the client would time out.)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from games.models import Deal, Match, MatchStatus, Move

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
CLIENT = REPO_ROOT / "examples" / "bot_client.py"
TIMEOUT = 120
MATCH_LINE = re.compile(r"^match (?P<id>[0-9a-f-]{36}) (created|joined)$")
FINISHED_LINE = re.compile(
    r"^match finished: (?P<result>won|lost|drawn) (?P<mine>\d)-(?P<theirs>\d) in deals"
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_password_hashing"),
]


def _client_args(live_server: Any, username: str, *args: str) -> list[str]:
    return [
        sys.executable,
        str(CLIENT),
        "--base-url",
        live_server.url,
        "--username",
        username,
        "--password",
        "a-long-password-1",
        "--register",
        "--poll-interval",
        "0.05",
        "--timeout",
        str(TIMEOUT - 10),
        *args,
    ]


def _match_of(output: str) -> Match:
    found = MATCH_LINE.match(output.splitlines()[0])
    assert found, output
    return Match.objects.get(pk=found["id"])


def _assert_played_single_deal(match: Match) -> None:
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.end_reason == "played"
    (deal,) = Deal.objects.filter(match=match)
    assert Move.objects.filter(deal=deal).count() == 40


@pytest.mark.parametrize("wait", ["stream", "poll"])
def test_the_example_plays_a_single_deal_against_the_greedy_bot(
    live_server: Any, wait: str
) -> None:
    """``--wait stream`` (the default): this test server is WSGI, where a stream answers
    what is owed and ends, and the client reconnects after the last id (the stream held
    open, under ASGI: tests/live/test_live_processes.py); ``--wait poll``: the fallback."""
    args = ["--level", "greedy", "--create", "2:single:greedy", "--wait", wait]
    result = subprocess.run(
        _client_args(live_server, "carla", *args),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert re.match(r"^deal 1: (won|lost|drawn) \d+-\d+ in points", lines[1]), lines
    finished = FINISHED_LINE.match(lines[-1])
    assert finished, lines
    match = _match_of(result.stdout)
    _assert_played_single_deal(match)
    seats = {s.number: s.user.username for s in match.seats.select_related("user")}
    assert seats == {0: "carla", 1: "bot-greedy"}
    expected = {None: "drawn", 0: "won", 1: "lost"}[match.winner_team]
    assert finished["result"] == expected


@pytest.mark.parametrize("how", ["--join", "--join-open"])
def test_two_example_clients_play_each_other(live_server: Any, how: str) -> None:
    creator = subprocess.Popen(
        _client_args(live_server, "dora", "--level", "random", "--create", "2:single:open"),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert creator.stdout is not None
        first = creator.stdout.readline()  # "match <id> created", printed before it waits
        found = MATCH_LINE.match(first.strip())
        assert found, (first, creator.stderr.read() if creator.stderr else "")
        joiner = subprocess.run(
            _client_args(
                live_server,
                "emil",
                "--level",
                "greedy",
                *([how, found["id"]] if how == "--join" else [how]),
            ),
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        rest, errors = creator.communicate(timeout=TIMEOUT)
    finally:
        if creator.poll() is None:
            creator.kill()
            creator.communicate()
    assert joiner.returncode == 0, (joiner.stdout, joiner.stderr)
    assert creator.returncode == 0, (first + rest, errors)
    match = _match_of(first)
    _assert_played_single_deal(match)
    seats = {s.number: s.user.username for s in match.seats.select_related("user")}
    assert seats == {0: "dora", 1: "emil"}
    dora = FINISHED_LINE.match(rest.splitlines()[-1])
    emil = FINISHED_LINE.match(joiner.stdout.splitlines()[-1])
    assert dora and emil, (rest, joiner.stdout)
    opposite = {"won": "lost", "lost": "won", "drawn": "drawn"}
    assert emil["result"] == opposite[dora["result"]]
    assert (emil["mine"], emil["theirs"]) == (dora["theirs"], dora["mine"])


def test_the_example_exits_1_with_the_api_error_code(live_server: Any) -> None:
    for args, code in (
        (["--create", "2:single:grandmaster"], "invalid_match"),
        (["--join", "00000000-0000-0000-0000-000000000000"], "match_not_found"),
    ):
        result = subprocess.run(
            _client_args(live_server, "fede", *args),
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert result.returncode == 1, (result.stdout, result.stderr)
        assert result.stderr.startswith(f"error: {code} ("), result.stderr
    assert not Match.objects.exists()
