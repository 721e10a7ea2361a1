"""``python -m games.bots``: choose a card from a piped view; duel two levels."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from bots_cases import TEST_BUDGET_MS, random_play_positions

from games.bots import LEVELS, choose_card
from games.bots.__main__ import main
from games.rules import Deal, seat_view, shuffled_deck

ROOT = Path(__file__).resolve().parents[2]


def run_module(*args, stdin=""):
    """The real command, in a child process from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "games.bots", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def run_main(monkeypatch, capsys, *args, stdin=""):
    """The same command in this process: (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        status = main(list(args))
    except SystemExit as exc:  # argparse
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def api_current_deal(deal, seat):
    """A view as the API's ``current_deal`` sends it: with the deal's public facts."""
    return {
        "id": 41,
        "number": 1,
        "dealer": deal.dealer,
        "status": "active",
        "commitment": "0f" * 32,
        "seed": None,
        "points": None,
        "winner": None,
        **seat_view(deal, seat).to_dict(),
    }


# -- choose ----------------------------------------------------------------------------


def test_choose_reads_a_piped_view_and_prints_the_card():
    deal = Deal(2, 0, shuffled_deck("cli-choose"))
    view = seat_view(deal, deal.turn)
    result = run_module(
        "choose", "--level", "greedy", "--seed", "5", stdin=json.dumps(view.to_dict())
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == choose_card("greedy", view, seed="5").code + "\n"
    assert result.stderr == ""


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_choose_reads_the_apis_current_deal(monkeypatch, capsys, level):
    for players in (2, 4):
        for deal, seat, view in random_play_positions(players, f"cli-{level}")[::9]:
            data = json.dumps(api_current_deal(deal, seat))
            status, out, err = run_main(
                monkeypatch,
                capsys,
                "choose",
                "--level",
                level,
                "--seed",
                "9",
                "--budget-ms",
                str(TEST_BUDGET_MS),
                stdin=data,
            )
            assert (status, err) == (0, "")
            assert out.strip() in {c.code for c in view.legal}


def test_choose_with_a_seed_matches_choose_card(monkeypatch, capsys):
    for _, _, view in random_play_positions(4, "cli-seeded")[::5]:
        argv = ["choose", "--level", "random", "--seed", "abc"]
        status, out, _ = run_main(monkeypatch, capsys, *argv, stdin=json.dumps(view.to_dict()))
        assert status == 0
        assert out.strip() == choose_card("random", view, seed="abc").code


def _bad_views():
    deal = Deal(2, 0, shuffled_deck("cli-bad"))
    mine = seat_view(deal, deal.turn).to_dict()
    other = seat_view(deal, 1 - deal.turn).to_dict()
    no_dealer = {k: v for k, v in mine.items() if k != "dealer"}
    bad_card = {**mine, "hand": ["Zz", "Ad", "3b"]}
    spectator = {**mine, "seat": None}
    absent = next(c.code for c in deal.hands[1 - deal.turn])
    finished = Deal(2, 0, shuffled_deck("cli-over"))
    while not finished.is_over:
        finished.play(finished.legal_moves()[0])
    return {
        "malformed JSON": "{not json",
        "empty input": "",
        "a JSON list": "[1, 2]",
        "a JSON string": '"Ad"',
        "a dict that is not a view": json.dumps({"hello": "world"}),
        "a view without its dealer": json.dumps(no_dealer),
        "a view with a bad card": json.dumps(bad_card),
        "a view with hand_sizes of the wrong type": json.dumps({**mine, "hand_sizes": 3}),
        "not this seat's turn": json.dumps(other),
        "a spectator's view": json.dumps(spectator),
        "a finished deal": json.dumps(seat_view(finished, 0).to_dict()),
        "a legal card not in the hand": json.dumps({**mine, "legal": [absent]}),
        "a card twice": json.dumps(
            {**mine, "hand": [mine["hand"][0]] * 3, "legal": [mine["hand"][0]] * 3}
        ),
        "cards not adding up": json.dumps({**mine, "stock_count": 12}),
        "null": "null",
    }


@pytest.mark.parametrize(("what", "stdin"), list(_bad_views().items()))
def test_choose_refuses_bad_input_with_one_line_and_status_2(monkeypatch, capsys, what, stdin):
    status, out, err = run_main(monkeypatch, capsys, "choose", "--level", "greedy", stdin=stdin)
    assert status == 2, what
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err


def test_choose_refuses_an_unknown_level_and_missing_arguments(monkeypatch, capsys):
    deal = Deal(2, 0, shuffled_deck("cli-level"))
    view = json.dumps(seat_view(deal, deal.turn).to_dict())
    for args in (
        ["choose", "--level", "oracle"],
        ["choose"],
        ["choose", "--level", "greedy", "--budget-ms", "0"],
        ["choose", "--level", "greedy", "--budget-ms", "soon"],
        [],
        ["fly"],
    ):
        status, out, err = run_main(monkeypatch, capsys, *args, stdin=view)
        assert status == 2, args
        assert out == "" and err.count("\n") == 1 and err.startswith("error: "), (args, err)


def test_choose_errors_cleanly_in_a_real_process():
    result = run_module("choose", "--level", "greedy", stdin="{oops")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "not JSON" in result.stderr


# -- duel ------------------------------------------------------------------------------


def test_duel_prints_a_score_and_its_interval():
    result = run_module(
        "duel", "--a", "greedy", "--b", "random", "--players", "2", "--deals", "20", "--seed", "s"
    )
    assert result.returncode == 0, result.stderr
    assert "score of A:" in result.stdout and "95% CI" in result.stdout
    assert "A won" in result.stdout and "point margin" in result.stdout
    assert "think time per move" in result.stdout
    # stderr is not a terminal and --progress was not given: no progress bar.
    assert result.stderr == ""


def test_duel_json_with_two_workers_equals_one_worker():
    args = ["duel", "--a", "greedy", "--b", "random", "--players", "4", "--deals", "20"]
    args += ["--seed", "w", "--json"]
    one = run_module(*args, "--workers", "1")
    two = run_module(*args, "--workers", "2", "--progress")
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a["workers"] == 1 and b["workers"] == 2
    for timing in ("think", "workers", "elapsed_s"):
        a.pop(timing), b.pop(timing)
    assert a == b
    assert a["deals"] == 20 and a["wins"] + a["draws"] + a["losses"] == 20
    assert a["score"]["low"] <= a["score"]["mean"] <= a["score"]["high"]
    # --progress draws a bar on stderr even though it is not a terminal.
    assert "10/10 pairs" in two.stderr and one.stderr == ""


@pytest.mark.parametrize(
    "bad",
    [
        ["--deals", "21"],
        ["--deals", "0"],
        ["--deals", "many"],
        ["--players", "3"],
        ["--a", "oracle"],
        ["--workers", "0"],
        ["--budget-ms", "-5"],
    ],
)
def test_duel_refuses_bad_arguments_with_one_line(monkeypatch, capsys, bad):
    args = {"--a": "greedy", "--b": "random", "--players": "2", "--deals": "4", "--seed": "x"}
    argv = ["duel"]
    for key, value in args.items():
        argv += [key, value]
    argv += bad  # argparse keeps the last value given
    status, out, err = run_main(monkeypatch, capsys, *argv)
    assert status == 2
    assert out == "" and err.count("\n") == 1 and err.startswith("error: "), err


def test_duel_round_robin_prints_a_table_and_a_ladder():
    result = run_module(
        "duel", "--levels", "random,greedy,strong", "--players", "2", "--deals", "10"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "round robin: random, greedy, strong" in out
    assert "score of the row against the column" in out and "Elo-like ladder" in out
    # No --seed: a fresh one, printed with the figures.
    assert "seed 'fresh-" in out


def test_duel_without_a_seed_draws_a_fresh_one_each_time():
    args = ["duel", "--a", "greedy", "--b", "random", "--players", "2", "--deals", "2", "--json"]
    one, two = run_module(*args), run_module(*args)
    seeds = {json.loads(r.stdout)["seed"] for r in (one, two)}
    assert len(seeds) == 2 and all(s.startswith("fresh-") for s in seeds)


@pytest.mark.parametrize(
    "bad",
    [
        ["--levels", "greedy"],
        ["--levels", "greedy,oracle"],
        ["--levels", "greedy,random", "--a", "greedy"],
        ["--levels", "greedy,random", "--deals", "3"],
    ],
)
def test_round_robin_refuses_bad_arguments_with_one_line(monkeypatch, capsys, bad):
    argv = ["duel", "--players", "2", "--deals", "4", "--seed", "x", *bad]
    status, out, err = run_main(monkeypatch, capsys, *argv)
    assert status == 2
    assert out == "" and err.count("\n") == 1 and err.startswith("error: "), err
