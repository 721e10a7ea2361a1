"""Train the ``neural`` bot level's network by self-play (one step of policy iteration).

    nice .venv/bin/python bench/train_neural.py [--seed neural-1] [--positions 200000]
        [--workers 2] [--hidden 64] [--epochs 30] [--rollout learned] [--solve-at 10]
        [--opponents rollout,strong,greedy] [--fit-seed S] [--data positions.npz]
        [--out games/bots/data/neural_weights.json]
    .venv/bin/python bench/train_neural.py --average a.json b.json ... [--out ...]

Needs numpy (the training only: the level itself, games/bots/neural.py, is plain Python).
Deterministic for a seed and a number of positions: the deals, the exploration and the
sampled positions come from ``random.Random`` seeded with ``--seed`` and the chunk's
number (chunks of CHUNK positions, whatever the number of workers), the network's
initial weights and the minibatches from numpy's generator seeded the same way (or with
``--fit-seed``).

Recipe:

1. Play self-play deals (3 in 4 with 2 players, 1 in 4 with 4) with the rollout policy
   (``--rollout``: the ``learned`` level, or ``neural`` for the committed network), a
   tenth of the cards at random so that the positions vary.
2. In a random quarter of the positions with a choice, play each legal card and then the
   rest of the deal with the rollout policy for every seat, on the deal's true cards
   (they are a sample of the deals that fit what the seat knows, and every card of the
   position is scored on the same one): the card's target is the result for the seat's
   team (win 1, draw 1/2, loss 0) plus the point margin / 240. With ``--opponents``
   the other team's seats play, in each position, a policy drawn from that list
   (``rollout``, ``strong``, ``greedy``: the expert's fast greedy rules, ``random``):
   the card is then worth what it is worth against a field of players, not against the
   rollout policy alone. With ``--solve-at N``
   the playout stops once N cards are left, and the target is the value of that
   position when both teams play their best on its true cards (the expert's endgame
   solver, :func:`games.bots.fast.solve`, on the same score): the rollout policy's
   mistakes in the last cards no longer blur what the earlier card was worth.
3. Fit the network (:class:`games.bots.neural.Model`) by Adam on the squared error of
   each card's score relative to its position's mean, against the target relative to the
   position's mean: it learns to rank the cards of a position, as the learned level does,
   but with one hidden layer over the learned features, the deal's state and the cards.

Prints the fit (on a held-out twentieth of the positions) and quick duels of the network
against ``strong`` and ``learned`` on the tuning seed (``--seed``, never a reporting seed).

The committed network (2026-12-06, afternoon) is one more step of policy iteration: the
same recipe with ``--rollout neural``, the card-reading network below as the playout
policy (and as the ``rollout`` member of the field), on a new collection::

    git show eb2a68f:games/bots/data/neural_weights.json > games/bots/data/neural_weights.json
    nice .venv/bin/python bench/train_neural.py --seed raw-2 --rollout neural --fit-seed fit-a \
        --positions 720000 --epochs 40 --solve-at 10 --opponents rollout,strong,greedy \
        --data field2.npz --out a.json
    (the same with --fit-seed fit-b --out b.json, and --fit-seed fit-c --out c.json)
    .venv/bin/python bench/train_neural.py --average a.json b.json c.json

(the first line puts the rollout network in place: ``--rollout neural`` reads the committed
weights; 40 minutes collecting with 2 workers, 26 to 45 minutes a fit with three fits on
two cores.) Against the network it replaces, no search, tuning seed ``rtune6``, 8,000 deal
pairs, paired (the scratch duel script): 0.523 ± 0.007 head to head, +0.017 ± 0.008 against
``strong`` (0.742), +0.013 ± 0.008 against ``greedy`` (0.741), +0.007 ± 0.004 against
``random`` (0.940); with 4 players (teams of two, 1,500 pairs) within noise: 0.493 ± 0.015
head to head, +0.001 ± 0.020 against strong, +0.002 ± 0.020 against greedy, +0.012 ± 0.013
against random. (2,000 pairs of ``rtune5`` first: +0.015, +0.020, +0.008, +0.006.) A
third step, the same commands with ``--seed raw-3`` on the committed network (two fits
averaged), gained nothing: 0.489 ± 0.014 head to head, +0.002 against strong, -0.016
against greedy, -0.005 against random (``rtune7``, 2,000 pairs; docs/bots.md).

The network before it (2026-12-06, morning) is the average of three (``--average``: their hidden
units side by side, one layer of 192, each output weight divided by 3), fitted from three
initial weights on one collection of positions, with the card inputs
(:data:`games.bots.neural.CARDS`), on this 2-core machine (needs numpy: ``pip install -e
'.[bots-train]'``)::

    nice .venv/bin/python bench/train_neural.py --seed raw-1 --fit-seed fit-a \
        --positions 720000 --epochs 40 --solve-at 10 --opponents rollout,strong,greedy \
        --data field.npz --out a.json
    (the same with --fit-seed fit-b --out b.json, and --fit-seed fit-c --out c.json)
    .venv/bin/python bench/train_neural.py --average a.json b.json c.json

(14.5 minutes collecting 720,000 positions with 2 workers on an idle machine, once: the
other two reuse ``field.npz``; 11 to 17 minutes fitting each. The figures below are from a
scratch duel script in numpy, outside the tree, on the positions this command collects.)
Against the network committed before it (the average of three networks without the card
inputs, below), no search, 8,000 deal pairs of the tuning seed ``rtune4``, paired: 0.511 ±
0.007 head to head, +0.012 ± 0.009 against ``strong`` (0.730), +0.022 ± 0.008 against
``greedy`` (0.740), -0.001 ± 0.005 against ``random`` (0.931). One fit with the card
inputs against one fit without them, on the same positions with the same fit seed
(``rtune2``, 8,000 pairs): 0.507 ± 0.007 head to head, +0.014 ± 0.009 against strong,
+0.031 ± 0.009 against greedy; held-out error 0.0904 against 0.0906. 128 hidden units
fitted the held-out positions no better (0.0907).

The network committed before, without the card inputs (2026-12-03): three fits of 44
inputs, ``--seed neural-1 ... --out a.json`` (the plain recipe), and two with
``--opponents rollout,strong,greedy`` (fit seeds ``neural-1`` and ``neural-1b``). Its
average, on seed ``tune2``, 4,000 deal pairs each, no search, paired differences with
``a.json`` alone on the same deals: +0.014 ± 0.010 against ``greedy`` (0.724), +0.007 ±
0.006 against ``random`` (0.929), +0.012 ± 0.010 against ``strong`` (0.717), +0.011 ±
0.011 against ``learned`` (0.609), and 0.517 ± 0.009 against ``a.json`` head to head. Two
fits differ by as much as what they are fitted on: ``b.json`` alone is no better than
``a.json`` (+0.006 against greedy, -0.010 against random, +0.002 against strong, -0.009
against learned); ``a`` and ``b`` averaged score within noise of the three (0.502 head to
head with ``a``, where the three score 0.517). The other team drawn from a field in the
playouts measured large gains at 240,000 positions (+0.048 against greedy, +0.017 against
random, on par against strong and learned) against a plain fit that was weak against
greedy (0.677 where ``a.json`` scores 0.711), and none of its own at 720,000: what the
average gains is the fits' variance, mostly.

``a.json`` alone, the network committed before: on seed ``tune2``, 4,000 deal pairs each,
it scores 0.714 ± 0.010 against ``strong``, 0.597 against ``learned`` and 0.519 ± 0.010
against the network committed before it (the same command without ``--solve-at``: the
playouts to the last card), which scores 0.695 and 0.591 there. At 240,000 positions the
endgame solved from 10 cards left gained as much as tripling the positions did (2,000
pairs of ``tune2``: 0.682 / 0.585 against strong / learned, 0.511 head to head with the
240,000-position network of plain playouts, which scores 0.667 / 0.574), and the held-out
error fell from 0.100 to 0.092 (less noise in the targets). Two runs with the same
arguments fit the same weights: the positions of chunk k depend on the seed and k alone.
Tried and not kept, with the network of plain playouts: a second iteration (``--seed
neural-2 --rollout neural``: the targets played out by that network) scored 0.50 against
it head to head but less against the field (0.62 against ``strong`` where it scores 0.71,
seed ``tune``, 500 deal pairs); 128 hidden units fitted the held-out positions no better;
with the endgame solved, a field that includes ``random`` (``--opponents
rollout,strong,greedy,random``, 240,000 positions) gained against random and greedy but
lost 0.027 ± 0.015 against strong.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from importlib import resources
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The learned level's training targets: the same result plus margin for both levels.
from train_learned import points_target, target  # noqa: E402

from games.bots import neural  # noqa: E402
from games.bots.expert import _policy_card as greedy_rules  # noqa: E402
from games.bots.fast import solve  # noqa: E402
from games.bots.learned import learned_card  # noqa: E402
from games.bots.neural import INPUTS, Model, inputs  # noqa: E402
from games.bots.strong import situation_of_deal, strong_card  # noqa: E402
from games.rules import Card, Deal, shuffled_deck  # noqa: E402

EXPLORE = 0.1
SAMPLE = 0.25
CHUNK = 2000
WIDTH = 3
"""At most 3 legal cards in a position (a hand's size)."""

Policy = Callable[[Deal, list[Card]], Card]


def committed() -> dict[str, Any]:
    """The committed network's weights file (package data), as data."""
    text = resources.files("games.bots").joinpath("data", neural.WEIGHTS_FILE).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    if tuple(data["inputs"]) != INPUTS:
        raise ValueError("the committed network was fitted for other inputs")
    return data


def numpy_policy(data: dict[str, Any]) -> Policy:
    """A network (its weights file's data) as a playout policy, its products in numpy
    (8 times faster than the level's plain Python; the same choices but for near ties)."""
    w1 = np.array(data["w1"]).T
    b1 = np.array(data["b1"])
    w2 = np.array(data["w2"])

    def play(deal: Deal, hand: list[Card]) -> Card:
        if len(hand) == 1:
            return hand[0]
        rows = inputs(situation_of_deal(deal))
        scores = np.maximum(np.array([x for _, x in rows]) @ w1 + b1, 0.0) @ w2
        card: Card = rows[int(np.argmax(scores))][0]
        return card

    return play


def rollout_policy(name: str) -> Policy:
    """``learned`` (the linear level) or ``neural`` (the committed network, in numpy)."""
    return learned_card if name == "learned" else numpy_policy(committed())


OPPONENTS = ("rollout", "strong", "greedy", "random")


def opponent_policy(name: str, rollout: Policy, chance: random.Random) -> Policy:
    """A policy of the other team in the playouts: ``rollout`` (the rollout policy),
    ``strong``, ``greedy`` (the expert's fast greedy rules) or ``random`` (``chance``)."""
    if name == "rollout":
        return rollout
    if name == "strong":
        return strong_card
    if name == "greedy":
        return greedy_rules
    if name == "random":
        return lambda deal, hand: hand[int(chance.random() * len(hand))]
    raise ValueError(f"unknown opponent policy {name!r}")


def finish(
    deal: Deal, team: int, policy: Policy, solve_at: int, others: Policy | None = None
) -> float:
    """The target for ``team`` of ``deal``: played out by ``policy`` for every seat (the
    other team's by ``others`` if given), and from ``solve_at`` cards left (0: never) by
    both teams' best play on the true cards."""
    while deal.turn is not None:
        if sum(len(h) for h in deal.hands) + len(deal.stock) <= solve_at:
            return solve(deal, team, points_target)
        hand = deal.hands[deal.turn]
        mover = policy if others is None or deal.turn & 1 == team else others
        deal.play(mover(deal, hand))
    return target(deal, team)


def collect(
    job: tuple[str, int, str, int, tuple[str, ...]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CHUNK positions of chunk ``number``: inputs (n, 3, d), mask (n, 3), targets (n, 3)."""
    seed, number, rollout_name, solve_at, opponents = job
    policy = rollout_policy(rollout_name)
    rng = random.Random(f"{seed}:chunk:{number}")
    chance = random.Random(f"{seed}:chance:{number}")
    field = [opponent_policy(name, policy, chance) for name in opponents]
    # float32: 720,000 positions of 136 inputs a card take 1.2 GB instead of 2.4.
    x = np.zeros((CHUNK, WIDTH, len(INPUTS)), dtype=np.float32)
    mask = np.zeros((CHUNK, WIDTH))
    y = np.zeros((CHUNK, WIDTH))
    n = 0
    game = 0
    while n < CHUNK:
        players = 4 if rng.random() < 0.25 else 2
        deal = Deal(players, game % players, shuffled_deck(f"{seed}:{number}:{game}"))
        game += 1
        while deal.turn is not None and n < CHUNK:
            hand = deal.hands[deal.turn]
            if len(hand) > 1 and rng.random() < SAMPLE:
                team = deal.turn & 1
                others = rng.choice(field) if field else None
                for i, (card, f) in enumerate(inputs(situation_of_deal(deal))):
                    child = deal.copy()
                    child.play(card)
                    x[n, i] = f
                    mask[n, i] = 1.0
                    y[n, i] = finish(child, team, policy, solve_at, others)
                n += 1
            explore = rng.random() < EXPLORE
            card = rng.choice(sorted(hand)) if explore else policy(deal, hand)
            deal.play(card)
    return x, mask, y


def _centered(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    mean = (v * mask).sum(axis=1, keepdims=True) / mask.sum(axis=1, keepdims=True)
    centred: np.ndarray = (v - mean) * mask
    return centred


def fit(
    x: np.ndarray,
    mask: np.ndarray,
    y: np.ndarray,
    hidden: int,
    epochs: int,
    rng: np.random.Generator,
    held: int,
) -> tuple[dict[str, np.ndarray], list[tuple[float, float]]]:
    """Adam on the centred squared error; the last ``held`` positions are held out."""
    d = x.shape[2]
    params = {
        "w1": rng.normal(0.0, 1.0 / np.sqrt(d), (d, hidden)),
        "b1": np.full(hidden, 0.01),
        "w2": rng.normal(0.0, 1.0 / np.sqrt(hidden), hidden),
    }
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    yc = _centered(y, mask)
    train = len(x) - held
    lr, beta1, beta2, eps, batch = 1e-3, 0.9, 0.999, 1e-8, 512
    step = 0
    history = []

    def forward(xb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pre = xb @ params["w1"] + params["b1"]
        h = np.maximum(pre, 0.0)
        return h, h @ params["w2"]

    def loss(lo: int, hi: int) -> float:
        _, v = forward(x[lo:hi])
        e = _centered(v, mask[lo:hi]) - yc[lo:hi]
        return float((e**2).sum() / mask[lo:hi].sum())

    for epoch in range(epochs):
        order = rng.permutation(train)
        for start in range(0, train, batch):
            idx = order[start : start + batch]
            xb, mb = x[idx], mask[idx]
            h, v = forward(xb)
            e = _centered(v, mb) - yc[idx]
            dv = 2.0 * e * mb / mb.sum()  # the centring's gradient sums to zero over a row
            grads = {
                "w2": np.einsum("bch,bc->h", h, dv),
                "b1": np.einsum("bch->h", (h > 0) * dv[..., None] * params["w2"]),
            }
            dpre = (h > 0) * dv[..., None] * params["w2"]
            grads["w1"] = np.einsum("bcd,bch->dh", xb, dpre)
            step += 1
            for k, g in grads.items():
                m1, m2 = moments[k]
                m1 *= beta1
                m1 += (1 - beta1) * g
                m2 *= beta2
                m2 += (1 - beta2) * g * g
                corr1 = m1 / (1 - beta1**step)
                corr2 = m2 / (1 - beta2**step)
                params[k] -= lr * corr1 / (np.sqrt(corr2) + eps)
        history.append((loss(0, min(train, 20000)), loss(train, len(x))))
        print(
            f"epoch {epoch}: train mse {history[-1][0]:.5f}, held-out mse {history[-1][1]:.5f}",
            flush=True,
        )
    return params, history


def duel(mine: Policy, theirs: Policy, seed: str, pairs: int) -> float:
    """Share of 2-player deals won by ``mine`` over duplicate pairs (a draw counts 1/2)."""
    total = 0.0
    for i in range(pairs):
        deck = shuffled_deck(f"{seed}:duel:{i}")
        for side in (0, 1):
            deal = Deal(2, i % 2, deck)
            while deal.turn is not None:
                hand = deal.hands[deal.turn]
                deal.play((mine if deal.turn == side else theirs)(deal, hand))
            points = deal.points[side]
            total += 1.0 if points > 60 else 0.5 if points == 60 else 0.0
    return total / (2 * pairs)


def write_average(paths: list[str], out: str) -> int:
    members = [json.loads(Path(p).read_text("utf-8")) for p in paths]
    data = neural.average(members)
    Path(out).write_text(json.dumps(data, separators=(",", ":")) + "\n", "utf-8")
    print(f"wrote {out}: the average of {len(members)} networks")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", default="neural-1")
    parser.add_argument("--positions", type=int, default=200000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument(
        "--rollout",
        choices=("learned", "neural"),
        default="learned",
        help="the playout policy: the learned level, or the committed network (neural)",
    )
    parser.add_argument(
        "--solve-at",
        type=int,
        default=0,
        help="end each rollout by the exact solver on the true cards from this many cards "
        "left (0: play it out with the rollout policy)",
    )
    parser.add_argument(
        "--opponents",
        default="",
        help="comma-separated policies of the other team in the playouts, one drawn per "
        "position: rollout, strong, greedy, random (default: the rollout policy)",
    )
    parser.add_argument(
        "--fit-seed",
        help="seed of the network's initial weights and minibatches (default: --seed)",
    )
    parser.add_argument(
        "--average",
        nargs="+",
        metavar="WEIGHTS",
        help="write the average of these networks (one wider network) to --out, and stop",
    )
    parser.add_argument("--duel-pairs", type=int, default=300)
    parser.add_argument("--data", help="cache the positions in this .npz (reused if present)")
    parser.add_argument(
        "--out", default=str(Path(neural.__file__).parent / "data" / neural.WEIGHTS_FILE)
    )
    args = parser.parse_args(argv)
    opponents = tuple(args.opponents.split(",")) if args.opponents else ()
    unknown = set(opponents) - set(OPPONENTS)
    if unknown:
        parser.error(f"--opponents: one or more of {', '.join(OPPONENTS)}, not {unknown}")
    if args.average:
        return write_average(args.average, args.out)
    started = time.perf_counter()
    chunks = max(1, args.positions // CHUNK)
    if args.data and Path(args.data).exists():
        cached = np.load(args.data)
        x, mask, y = cached["x"], cached["mask"], cached["y"]
        print(f"{len(x)} positions from {args.data}", flush=True)
    else:
        jobs = [(args.seed, k, args.rollout, args.solve_at, opponents) for k in range(chunks)]
        with Pool(args.workers) as pool:
            parts = pool.map(collect, jobs)  # in chunk order, whatever finishes first
        x = np.concatenate([p[0] for p in parts])
        mask = np.concatenate([p[1] for p in parts])
        y = np.concatenate([p[2] for p in parts])
        if args.data:
            np.savez_compressed(args.data, x=x, mask=mask, y=y)
        print(
            f"{len(x)} positions ({args.rollout} rollouts"
            f"{', other team: ' + args.opponents if args.opponents else ''}) in "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
    rng = np.random.default_rng(list((args.fit_seed or args.seed).encode()))
    params, history = fit(x, mask, y, args.hidden, args.epochs, rng, held=len(x) // 20)
    net = Model(params["w1"].T.tolist(), params["b1"].tolist(), params["w2"].tolist())

    def play(deal: Deal, hand: list[Card]) -> Card:
        if len(hand) == 1:
            return hand[0]
        return neural.choose(situation_of_deal(deal), net)

    vs_strong = duel(play, strong_card, args.seed, args.duel_pairs)
    vs_learned = duel(play, learned_card, args.seed, args.duel_pairs)
    elapsed = time.perf_counter() - started
    print(
        f"tuning seed, {args.duel_pairs} pairs: vs strong {vs_strong:.3f}, "
        f"vs learned {vs_learned:.3f}; {elapsed:.0f} s in all",
        flush=True,
    )
    data = {
        "inputs": list(INPUTS),
        "w1": [[round(v, 6) for v in row] for row in params["w1"].T.tolist()],
        "b1": [round(v, 6) for v in params["b1"].tolist()],
        "w2": [round(v, 6) for v in params["w2"].tolist()],
        "trained_by": "bench/train_neural.py",
        "args": {
            "seed": args.seed,
            "positions": chunks * CHUNK,
            "hidden": args.hidden,
            "epochs": args.epochs,
            "rollout": args.rollout,
            "solve_at": args.solve_at,
            "opponents": args.opponents or None,
            "fit_seed": args.fit_seed,
        },
        # How the rollout network was trained (its own args and rollout, and so on).
        "rollout_args": committed()["args"] if args.rollout == "neural" else None,
        "history": {
            "final_mse_train_heldout": [round(v, 6) for v in history[-1]],
            "vs_strong_tuning": vs_strong,
            "vs_learned_tuning": vs_learned,
            "elapsed_s": round(elapsed, 1),
        },
    }
    Path(args.out).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
