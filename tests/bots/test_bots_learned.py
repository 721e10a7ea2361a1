"""The learned level: its committed weights (package data), its features, its two entry
points agreeing, and that it plays better than greedy (duplicate deals, no timings)."""

import json
import tomllib
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path

import pytest
from bots_cases import random_play_positions

from games.bots import choose_card
from games.bots.duel import duel
from games.bots.learned import FEATURES, WEIGHTS_FILE, features, learned_card, weights
from games.bots.strong import situation_of_view

ROOT = Path(__file__).resolve().parents[2]


def test_the_weights_are_small_package_data_fitted_for_these_features():
    path = resources.files("games.bots").joinpath("data", WEIGHTS_FILE)
    text = path.read_text("utf-8")
    assert len(text.encode()) < 300_000
    data = json.loads(text)
    assert tuple(data["features"]) == FEATURES
    assert len(weights()) == len(FEATURES)
    assert data["trained_by"] == "bench/train_learned.py" and data["args"]["seed"]
    # setuptools ships the file with the package.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["games.bots"]
    assert any(fnmatch(f"data/{WEIGHTS_FILE}", g) for g in globs)


@pytest.mark.parametrize("players", [2, 4])
def test_every_legal_card_gets_one_value_per_feature(players):
    for _, _, view in random_play_positions(players, f"features-{players}", rng_seed=2):
        rows = features(situation_of_view(view))
        assert sorted(c for c, _ in rows) == sorted(view.legal)
        assert all(len(f) == len(FEATURES) for _, f in rows)


@pytest.mark.parametrize("players", [2, 4])
def test_the_view_and_the_bare_deal_give_the_same_card(players):
    for game in range(6):
        for deal, seat, view in random_play_positions(players, f"lsame-{game}", rng_seed=game):
            assert choose_card("learned", view) is learned_card(deal, deal.hands[seat])


def test_learned_beats_greedy_over_duplicate_deals():
    result = duel("learned", "greedy", players=2, deals=600, seed="learned-test")
    assert result.score.low > 0.5, result.score
