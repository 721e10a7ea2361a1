"""Train the ``learned`` bot level's weights by self-play (approximate policy iteration).

    nice .venv/bin/python bench/train_learned.py [--seed learned-1] [--positions 12000]
        [--iterations 3] [--out games/bots/data/learned_weights.json]

Needs numpy (the training only: the level itself, games/bots/learned.py, is a std-lib
dot product). Deterministic for a seed: the deals, the exploration and the sampled
positions all come from ``random.Random`` seeded with ``--seed``, and the least-squares
fit is exact linear algebra, so a rerun writes the same weights (up to the last bits of
floating point of the BLAS in use).

Recipe, for each iteration k (policy 0 is the ``strong`` rules, policy k the weights of
iteration k - 1):

1. Play self-play deals (3 in 4 with 2 players, 1 in 4 with 4) with policy k, a tenth
   of the cards at random so that the positions vary.
2. In a random quarter of the positions with a choice, play each legal card and then the
   rest of the deal with policy k for every seat, on the deal's true cards (the hidden
   cards are a sample from the deals that fit what the seat knows, and every card of the
   position is scored on the same sample): the card's target is the result for the
   seat's team (win 1, draw 1/2, loss 0) plus the point margin / 240.
3. Fit ``weights`` by ridge least squares of (target - the position's mean target) on
   (features - the position's mean features): the model ranks the cards of a position.
   The data of every iteration so far is used.

Prints, per iteration, the fit and a quick duel of the new weights against ``strong``
(the tuning seed ``--seed``, never a reporting seed).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.bots import learned  # noqa: E402
from games.bots.learned import FEATURES, choose, features  # noqa: E402
from games.bots.strong import decide, situation_of_deal  # noqa: E402
from games.rules import Card, Deal, shuffled_deck  # noqa: E402

MARGIN_DIVISOR = 240
EXPLORE = 0.1
SAMPLE = 0.25
RIDGE = 1e-3


def policy_card(deal: Deal, w: list[float] | None) -> Card:
    hand = deal.hands[deal.turn]  # type: ignore[index]
    if len(hand) == 1:
        return hand[0]
    s = situation_of_deal(deal)
    return decide(s) if w is None else choose(s, w)


def rollout(deal: Deal, w: list[float] | None) -> None:
    while deal.turn is not None:
        deal.play(policy_card(deal, w))


def points_target(mine: int, theirs: int) -> float:
    """The result (win 1, draw 1/2, loss 0) plus the point margin / MARGIN_DIVISOR (never
    lower with more points for the team: the endgame solver's score in train_neural)."""
    result = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
    return result + (mine - theirs) / MARGIN_DIVISOR


def target(deal: Deal, team: int) -> float:
    return points_target(deal.points[team], deal.points[1 - team])


def collect(
    w: list[float] | None, positions: int, rng: random.Random, tag: str
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    game = 0
    while len(xs) < positions:
        players = 4 if rng.random() < 0.25 else 2
        deal = Deal(players, game % players, shuffled_deck(f"{tag}:{game}"))
        game += 1
        while deal.turn is not None and len(xs) < positions:
            hand = deal.hands[deal.turn]
            if len(hand) > 1 and rng.random() < SAMPLE:
                team = deal.turn & 1
                feats = features(situation_of_deal(deal))
                values = []
                for card, _ in feats:
                    child = deal.copy()
                    child.play(card)
                    rollout(child, w)
                    values.append(target(child, team))
                xs.append(np.array([f for _, f in feats], dtype=float))
                ys.append(np.array(values, dtype=float))
            explore = rng.random() < EXPLORE
            card = rng.choice(sorted(hand)) if explore else policy_card(deal, w)
            deal.play(card)
    return xs, ys


def fit(xs: list[np.ndarray], ys: list[np.ndarray]) -> tuple[list[float], float]:
    x = np.concatenate([a - a.mean(axis=0) for a in xs])
    y = np.concatenate([b - b.mean() for b in ys])
    a = x.T @ x + RIDGE * len(x) * np.eye(x.shape[1])
    w = np.linalg.solve(a, x.T @ y)
    residual = float(np.mean((x @ w - y) ** 2))
    return [float(v) for v in w], residual


def quick_duel(w: list[float], seed: str, pairs: int) -> float:
    """Mean score of these weights against strong over duplicate 2-player pairs."""
    total = 0.0
    for i in range(pairs):
        deck = shuffled_deck(f"{seed}:duel:{i}")
        for side in (0, 1):
            deal = Deal(2, i % 2, deck)
            while deal.turn is not None:
                use = w if deal.turn == side else None
                deal.play(policy_card(deal, use))
            mine = deal.points[side]
            total += 1.0 if mine > 60 else 0.5 if mine == 60 else 0.0
    return total / (2 * pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", default="learned-1")
    parser.add_argument("--positions", type=int, default=12000, help="per iteration")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--duel-pairs", type=int, default=300)
    parser.add_argument(
        "--out", default=str(Path(learned.__file__).parent / "data" / "learned_weights.json")
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    w: list[float] | None = None
    all_x: list[np.ndarray] = []
    all_y: list[np.ndarray] = []
    history = []
    started = time.perf_counter()
    for k in range(args.iterations):
        xs, ys = collect(w, args.positions, rng, f"{args.seed}:{k}")
        all_x += xs
        all_y += ys
        w, residual = fit(all_x, all_y)
        score = quick_duel(w, args.seed, args.duel_pairs)
        elapsed = time.perf_counter() - started
        history.append(
            {
                "iteration": k,
                "positions": len(all_x),
                "mse": residual,
                "vs_strong_tuning": score,
                "elapsed_s": round(elapsed, 1),
            }
        )
        print(
            f"iteration {k}: {len(all_x)} positions, mse {residual:.5f}, "
            f"vs strong (tuning seed, {args.duel_pairs} pairs) {score:.3f}, "
            f"{elapsed:.0f} s",
            flush=True,
        )
    assert w is not None
    data = {
        "features": list(FEATURES),
        "weights": [round(v, 6) for v in w],
        "trained_by": "bench/train_learned.py",
        "args": {"seed": args.seed, "positions": args.positions, "iterations": args.iterations},
        "history": history,
    }
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
