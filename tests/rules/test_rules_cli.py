"""``python -m games.rules``: replay a record (file or stdin) and print a seed's deck."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from games.rules import seed_commitment, shuffled_deck

ROOT = Path(__file__).parents[2]
DATA = Path(__file__).parent / "data"
REPLAY_KEYS = ["players", "dealer", "briscola", "tricks", "draws", "points", "winner", "complete"]
TRICK_KEYS = ["leader", "cards", "winner", "points"]


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "games.rules", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def check_replay_output(result, name):
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    printed = json.loads(result.stdout)
    assert list(printed) == REPLAY_KEYS
    for trick in printed["tricks"]:
        assert list(trick) == TRICK_KEYS
    expected = json.loads((DATA / f"{name}.replay.json").read_text(encoding="utf-8"))
    assert printed == expected


@pytest.mark.parametrize("name", ["deal_2p_complete", "deal_4p_complete", "deal_2p_partial"])
def test_replay_a_file(name):
    check_replay_output(run("replay", str(DATA / f"{name}.json")), name)


def test_replay_standard_input():
    text = (DATA / "deal_2p_drawn.json").read_text(encoding="utf-8")
    check_replay_output(run("replay", "-", stdin=text), "deal_2p_drawn")


def bad_records():
    good = json.loads((DATA / "deal_2p_complete.json").read_text(encoding="utf-8"))
    short = {**good, "deck": good["deck"][:39]}
    duplicated = {**good, "deck": [*good["deck"][:30], good["deck"][2], *good["deck"][31:]]}
    illegal = {**good, "moves": [*good["moves"][:7], good["moves"][0], *good["moves"][8:]]}
    return {
        # kind: (record text, words the one line must contain)
        "malformed-json": ('{"format": "briscola-deal/1",', ["record", "not valid JSON"]),
        "card-count": (json.dumps(short), ["deck", "40 cards, got 39"]),
        "duplicated-card": (json.dumps(duplicated), ["deck[30]", "duplicate card 2s", "deck[2]"]),
        "illegal-move": (json.dumps(illegal), ["moves[7]", "2s", "not in the hand"]),
    }


def check_one_line_error(result, words):
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stderr.endswith("\n")
    for word in words:
        assert word in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", list(bad_records()))
def test_a_bad_record_file_is_one_line_on_stderr_and_exit_2(kind, tmp_path):
    text, words = bad_records()[kind]
    path = tmp_path / f"{kind}.json"
    path.write_text(text, encoding="utf-8")
    check_one_line_error(run("replay", str(path)), words)


@pytest.mark.parametrize("kind", ["malformed-json", "illegal-move"])
def test_a_bad_record_on_standard_input_is_one_line_on_stderr_and_exit_2(kind):
    text, words = bad_records()[kind]
    check_one_line_error(run("replay", "-", stdin=text), words)


def test_a_missing_file_is_one_line_on_stderr_and_exit_2(tmp_path):
    missing = tmp_path / "no-such-record.json"
    check_one_line_error(run("replay", str(missing)), [str(missing), "No such file"])


def test_a_file_that_is_not_utf8_is_one_line_on_stderr_and_exit_2(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"format": "\xe9"}')
    check_one_line_error(run("replay", str(path)), [str(path), "UTF-8"])


def test_deck_prints_the_seeds_deck_and_commitment():
    result = run("deck", "briscola")
    assert result.returncode == 0 and result.stderr == ""
    printed = json.loads(result.stdout)
    assert printed == {
        "algorithm": "briscola-shuffle/1",
        "seed": "briscola",
        "commitment": seed_commitment("briscola"),
        "deck": [c.code for c in shuffled_deck("briscola")],
    }
    assert printed["deck"][:3] == ["7d", "Rc", "2s"]  # the golden deck of test_rules_shuffle


def test_deck_of_a_numeric_seed_is_the_integer_seeds_deck():
    printed = json.loads(run("deck", "42").stdout)
    assert printed["deck"] == [c.code for c in shuffled_deck(42)]


def test_usage_errors_exit_2():
    result = run()
    assert result.returncode == 2 and result.stdout == ""
    assert "usage" in result.stderr
