"""bench/hand_bound.py: its sampler deals every hidden hand its true cards (only the
stock's order guessed), the plain expert is untouched by it, and the bench prints its
comparison."""

import importlib.util
import random
import sys
from pathlib import Path

import pytest
from bots_cases import CAPPED, random_play_positions

from games.bots import expert

BENCH = Path(__file__).resolve().parents[2] / "bench" / "hand_bound.py"


@pytest.fixture(scope="module")
def hand_bound():
    spec = importlib.util.spec_from_file_location("hand_bound", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["hand_bound"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["hand_bound"]


@pytest.mark.parametrize("players", [2, 4])
def test_every_guess_holds_the_true_hands(hand_bound, players):
    checked = enumerated = 0
    for game in range(6):
        for deal, _seat, view in random_play_positions(players, f"bound-{players}-{game}"):
            if len(view.legal) < 2:
                continue
            hand_bound.TrueHandSampler.truth = deal
            sampler = hand_bound.TrueHandSampler(view)
            hidden = [s for s, fixed in enumerate(sampler.fixed) if fixed is None]
            worlds = [sampler.sample(random.Random(k)) for k in range(3)]
            if sampler.world_count() <= 40:
                every = list(sampler.every_world())
                assert len(every) >= 1
                enumerated += 1
                worlds += every
            for world in worlds:
                for s in hidden:
                    assert sorted(world.hands[s]) == sorted(deal.hands[s])
                # The stock is guessed among the same cards as the true one.
                assert sorted(world.stock) == sorted(deal.stock)
                assert world.briscola == deal.briscola
            checked += 1
    hand_bound.TrueHandSampler.truth = None
    assert checked > 50 and enumerated > 0


def test_the_plain_expert_is_restored(hand_bound):
    task = hand_bound._Task("bound-restore", 0, "greedy", 2, CAPPED["budget_ms"], 4)
    plain, true = hand_bound.play_pair(task)
    assert plain in (0, 0.25, 0.5, 0.75, 1) and true in (0, 0.25, 0.5, 0.75, 1)
    assert expert._Sampler is hand_bound._PlainSampler
    assert hand_bound.TrueHandSampler.truth is None


def test_the_bench_prints_both_columns(hand_bound, capsys):
    args = ["--deals", "2", "--against", "random", "--workers", "1", "--seed", "bound-cli"]
    assert hand_bound.main([*args, "--budget-ms", "60000", "--max-iterations", "2"]) == 0
    out = capsys.readouterr().out
    assert "seed 'bound-cli', 2 deal pairs an opponent" in out
    row = [line for line in out.splitlines() if line.startswith("random")]
    assert len(row) == 1 and row[0].count("±") == 3


def test_the_bench_refuses_unknown_levels(hand_bound):
    with pytest.raises(SystemExit):
        hand_bound.main(["--against", "nobody", "--deals", "2"])
