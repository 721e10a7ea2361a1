"""The neural level: its committed weights (package data), its inputs, its two entry
points agreeing, and that it plays better than the strong rules (duplicate deals, no
timings)."""

import json
import random
import tomllib
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path

import pytest
from bots_cases import random_play_positions

from games.bots import choose_card
from games.bots.duel import duel
from games.bots.learned import FEATURES
from games.bots.neural import (
    CARDS,
    CONTEXT,
    INPUTS,
    WEIGHTS_FILE,
    Model,
    average,
    inputs,
    model,
    neural_card,
)
from games.bots.strong import _winning_index, situation_of_view
from games.rules.cards import RANKS

ROOT = Path(__file__).resolve().parents[2]


def test_the_weights_are_small_package_data_fitted_for_these_inputs():
    path = resources.files("games.bots").joinpath("data", WEIGHTS_FILE)
    text = path.read_text("utf-8")
    assert len(text.encode()) < 300_000
    data = json.loads(text)
    assert tuple(data["inputs"]) == INPUTS == FEATURES + CONTEXT + CARDS
    net = model()
    assert len(net.w1) == len(net.b1) == len(net.w2) == data["args"]["hidden"]
    assert data["trained_by"] == "bench/train_neural.py" and data["args"]["seed"]
    # setuptools ships the file with the package.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["games.bots"]
    assert any(fnmatch(f"data/{WEIGHTS_FILE}", g) for g in globs)


def test_a_network_of_other_shapes_is_refused():
    with pytest.raises(ValueError, match="shapes"):
        Model([[0.0] * (len(INPUTS) - 1)], [0.0], [1.0])
    with pytest.raises(ValueError, match="shapes"):
        Model([[0.0] * len(INPUTS)], [0.0, 0.0], [1.0])


def test_the_score_is_the_hidden_layer_rectified():
    x = [0.5] * len(INPUTS)
    net = Model([[1.0] * len(INPUTS), [-1.0] * len(INPUTS)], [0.25, 0.0], [2.0, 3.0])
    # Unit 1: 0.25 + 0.5 * len(INPUTS), times 2; unit 2 is negative, so rectified to 0.
    assert net.score(x) == pytest.approx(2.0 * (0.25 + 0.5 * len(INPUTS)))


def _weights(seed, hidden):
    rng = random.Random(seed)
    return {
        "inputs": list(INPUTS),
        "w1": [[rng.uniform(-1, 1) for _ in INPUTS] for _ in range(hidden)],
        "b1": [rng.uniform(-1, 1) for _ in range(hidden)],
        "w2": [rng.uniform(-1, 1) for _ in range(hidden)],
        "args": {"seed": seed, "hidden": hidden},
        "history": {},
    }


def test_networks_averaged_score_the_mean_of_their_scores():
    members = [_weights("a", 3), _weights("b", 2), _weights("c", 4)]
    data = average(members)
    assert data["args"]["hidden"] == 9 == len(data["w1"])
    net = Model(data["w1"], data["b1"], data["w2"])
    rng = random.Random(7)
    for _ in range(20):
        x = [rng.uniform(-1, 1) for _ in INPUTS]
        mean = sum(Model(m["w1"], m["b1"], m["w2"]).score(x) for m in members) / 3
        assert net.score(x) == pytest.approx(mean, abs=1e-4)


def test_only_networks_of_these_inputs_are_averaged():
    other = _weights("a", 2) | {"inputs": list(INPUTS[:-1])}
    with pytest.raises(ValueError, match="these inputs"):
        average([_weights("b", 2), other])
    with pytest.raises(ValueError, match="these inputs"):
        average([])


@pytest.mark.parametrize("players", [2, 4])
def test_every_legal_card_gets_one_value_per_input(players):
    for _, _, view in random_play_positions(players, f"ninputs-{players}", rng_seed=3):
        rows = inputs(situation_of_view(view))
        assert sorted(c for c, _ in rows) == sorted(view.legal)
        assert all(len(x) == len(INPUTS) for _, x in rows)


@pytest.mark.parametrize("players", [2, 4])
def test_the_view_and_the_bare_deal_give_the_same_card(players):
    for game in range(4):
        for deal, seat, view in random_play_positions(players, f"nsame-{game}", rng_seed=game):
            assert choose_card("neural", view) is neural_card(deal, deal.hands[seat])


def test_neural_beats_the_strong_rules_over_duplicate_deals():
    result = duel("neural", "strong", players=2, deals=200, seed="neural-test")
    assert result.score.low > 0.5, result.score


@pytest.mark.parametrize("players", [2, 4])
def test_the_card_inputs_name_the_cards_by_rank_trump_or_plain(players):
    at = {name: i for i, name in enumerate(INPUTS)}

    def block(x, prefix):
        return [x[at[f"{prefix}_{rank}"]] for rank in RANKS]

    seen = 0
    for _, _, view in random_play_positions(players, f"ncards-{players}", rng_seed=5):
        s = situation_of_view(view)
        trump = s.trump
        out_trumps = {c.rank for c in s.out if c.suit == trump}
        for card, x in inputs(s):
            is_trump = card.suit == trump
            scored = block(x, "card_trump" if is_trump else "card_plain")
            other = block(x, "card_plain" if is_trump else "card_trump")
            assert scored == [float(rank == card.rank) for rank in RANKS] and not any(other)
            assert block(x, "trump_out") == [float(r in out_trumps) for r in RANKS]
            plain_out = [sum(c.rank == r and c.suit != trump for c in s.out) for r in RANKS]
            assert block(x, "plain_out") == pytest.approx([n / 3 for n in plain_out])
            suit_out = [
                float(not is_trump and any(c.rank == r and c.suit == card.suit for c in s.out))
                for r in RANKS
            ]
            assert block(x, "suit_out") == suit_out
            rest = [c for c in s.hand if c is not card]
            assert block(x, "held_trump") == [
                float(any(c.rank == r and c.suit == trump for c in rest)) for r in RANKS
            ]
            assert sum(block(x, "held_plain")) * 2 == sum(c.suit != trump for c in rest)
            best = s.table[_winning_index(s.table, trump)] if s.table else None
            assert block(x, "table_best") == [
                float(best is not None and best.rank == r) for r in RANKS
            ]
            assert x[at["table_best_trump"]] == float(best is not None and best.suit == trump)
            follows = best is not None and best.suit == card.suit
            assert x[at["table_best_follows"]] == float(follows)
            assert sum(block(x, "briscola_face_up")) == float(s.stock_count > 0)
            seen += 1
    assert seen > 100
