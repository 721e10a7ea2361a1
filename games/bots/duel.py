"""Duplicate duels between two bot levels: how much stronger is A than B?

A duel of ``deals`` deals uses ``deals / 2`` decks. Deck ``i`` is
``shuffled_deck(f"{seed}:{i}")`` with dealer ``i % players``, and it is played twice with
the sides swapped: first with A in seat 0 (2 players) or as team 0, seats 0 and 2
(4 players), then with A in seat 1 or as team 1, seats 1 and 3. Both bots get the same
cards once each, so most of the luck of the deal cancels out.

A's result in a deal is 1 for a win, ½ for a 60-60 draw, 0 for a loss; its score is the
mean over the deals. The two deals of a pair are not independent (same cards), so the 95%
confidence interval is computed over the *pairs*: each pair scores 0, ¼, ½, ¾ or 1 and the
interval is ``mean ± 1.96 · sd / √pairs``. The point margin (A's card points minus B's,
per deal) gets its interval the same way.

Every bot decision is ``choose_card(level, seat_view(deal, seat), seed=..., budget_ms=...)``
with a seed made of the duel seed, the deck index, the side and the ply, so a duel is
reproducible: the same arguments give the same deals, whatever the number of worker
processes, as long as every bot's choice is a function of its view and seed only (a
search cut short by the clock is not: its duels vary from run to run). The think times
(wall clock, ``time.perf_counter`` around each ``choose_card``) always vary.

Standard library only; the command line is in :mod:`games.bots.__main__`.
"""

from __future__ import annotations

import math
import multiprocessing
import secrets
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from games.rules import Card, Deal, seat_view, shuffled_deck, team_of

from . import DEFAULT_BUDGET_MS, LEVELS, UnknownBotLevelError, choose_card

Z_95 = 1.96
SCORE_BOUNDS = (0.0, 1.0)
"""A score is a share of deals won: its interval's ends stay within 0 and 1."""
"""The normal quantile of a two-sided 95% interval."""

ProgressCallback = Callable[[int, int], None]
"""``progress(pairs_done, pairs_total)``, called in the calling process."""


class DuelError(ValueError):
    """Arguments that do not describe a duel (odd deal count, bad player count, ...)."""


def fresh_seed() -> str:
    """A seed never used before (for reporting figures: tune on a fixed seed instead)."""
    return f"fresh-{secrets.token_hex(4)}"


# -- one deal --------------------------------------------------------------------------


def decision_seed(seed: str, index: int, side: int, ply: int) -> str:
    """The seed of one bot decision: from the duel seed, deck index, side and ply."""
    return f"{seed}:{index}:{side}:{ply}"


def deck_seed(seed: str, index: int) -> str:
    """The shuffle seed of deck ``index`` of a duel."""
    return f"{seed}:{index}"


@dataclass(frozen=True, slots=True)
class PlayedDeal:
    """A deal played out by bots."""

    points: tuple[int, int]
    """Card points of team 0 and team 1."""
    winner: int | None
    """The winning team, None for a 60-60 draw."""
    moves: tuple[Card, ...]
    think_ms: tuple[tuple[float, ...], ...]
    """``think_ms[seat]``: the time of each of that seat's decisions, in milliseconds."""


def play_deal(
    deck: Sequence[Card],
    *,
    players: int,
    dealer: int,
    levels: Sequence[str],
    seed: Callable[[int], str] | str,
    budget_ms: float = DEFAULT_BUDGET_MS,
    partners_last_hand: bool = True,
    max_iterations: int | None = None,
) -> PlayedDeal:
    """Play one deal to the end with the bot ``levels[seat]`` in each seat.

    ``seed`` is either a function of the ply giving each decision's seed, or a string
    ``s`` (the decision at ply ``p`` then gets ``f"{s}:{p}"``). ``max_iterations``
    caps the searching levels' work (see :func:`games.bots.choose_card`): with a budget
    large enough not to cut it short, a comparison of two variants is then fair on a
    loaded machine, where the clock would give each only what the other jobs leave.
    """
    if len(levels) != players:
        raise DuelError(f"{players} players need {players} levels, got {len(levels)}")
    for level in levels:
        if level not in LEVELS:
            raise UnknownBotLevelError(f"unknown bot level {level!r}: one of {', '.join(LEVELS)}")
    seed_of: Callable[[int], str]
    if isinstance(seed, str):
        prefix = seed
        seed_of = lambda ply: f"{prefix}:{ply}"  # noqa: E731
    else:
        seed_of = seed
    deal = Deal(players, dealer, tuple(deck))
    think: list[list[float]] = [[] for _ in range(players)]
    clock = time.perf_counter
    while deal.turn is not None:
        seat = deal.turn
        view = seat_view(deal, seat, partners_last_hand=partners_last_hand)
        ply = deal.ply
        start = clock()
        card = choose_card(
            levels[seat],
            view,
            seed=seed_of(ply),
            budget_ms=budget_ms,
            max_iterations=max_iterations,
        )
        think[seat].append((clock() - start) * 1000.0)
        deal.play(card, seat)
    return PlayedDeal(
        points=(deal.points[0], deal.points[1]),
        winner=deal.winner,
        moves=tuple(deal.moves),
        think_ms=tuple(tuple(t) for t in think),
    )


# -- one duplicate pair ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairResult:
    """Deck ``index`` played twice, A on side 0 then on side 1."""

    index: int
    results: tuple[float, float]
    """A's deal result on each side: 1 win, 0.5 draw, 0 loss."""
    margins: tuple[int, int]
    """A's card points minus B's on each side."""
    think_a: tuple[float, ...]
    think_b: tuple[float, ...]

    @property
    def score(self) -> float:
        """A's score over the pair: 0, 0.25, 0.5, 0.75 or 1."""
        return (self.results[0] + self.results[1]) / 2

    @property
    def margin(self) -> float:
        return (self.margins[0] + self.margins[1]) / 2


def side_levels(a: str, b: str, players: int, side: int) -> list[str]:
    """The level in each seat when A plays ``side`` (A's team is ``side``)."""
    return [a if team_of(seat) == side else b for seat in range(players)]


def play_pair(
    a: str,
    b: str,
    *,
    players: int,
    seed: str,
    index: int,
    budget_ms: float = DEFAULT_BUDGET_MS,
    partners_last_hand: bool = True,
    max_iterations: int | None = None,
) -> PairResult:
    """Play deck ``index`` of the duel twice, with the sides swapped."""
    deck = shuffled_deck(deck_seed(seed, index))
    dealer = index % players
    results: list[float] = []
    margins: list[int] = []
    think_a: list[float] = []
    think_b: list[float] = []
    for side in (0, 1):

        def seed_of(ply: int, side: int = side) -> str:
            return decision_seed(seed, index, side, ply)

        played = play_deal(
            deck,
            players=players,
            dealer=dealer,
            levels=side_levels(a, b, players, side),
            seed=seed_of,
            budget_ms=budget_ms,
            partners_last_hand=partners_last_hand,
            max_iterations=max_iterations,
        )
        mine, theirs = played.points[side], played.points[1 - side]
        if played.winner is None:
            results.append(0.5)
        else:
            results.append(1.0 if played.winner == side else 0.0)
        margins.append(mine - theirs)
        for seat, times in enumerate(played.think_ms):
            (think_a if team_of(seat) == side else think_b).extend(times)
    return PairResult(
        index=index,
        results=(results[0], results[1]),
        margins=(margins[0], margins[1]),
        think_a=tuple(think_a),
        think_b=tuple(think_b),
    )


# -- statistics ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean with its 95% confidence interval (``mean ± half_width``)."""

    mean: float
    half_width: float
    """NaN when there is a single pair (no spread to estimate)."""
    bounds: tuple[float, float] = (-math.inf, math.inf)
    """What the value can be: the interval's ends are kept inside (a score's 0 to 1; with
    few pairs ``mean ± half_width`` can pass them)."""

    @property
    def low(self) -> float:
        return max(self.bounds[0], self.mean - self.half_width)

    @property
    def high(self) -> float:
        return min(self.bounds[1], self.mean + self.half_width)

    def to_dict(self) -> dict[str, float | None]:
        finite = math.isfinite(self.half_width)
        return {
            "mean": self.mean,
            "half_width": self.half_width if finite else None,
            "low": self.low if finite else None,
            "high": self.high if finite else None,
        }


def mean_interval(
    values: Sequence[float], bounds: tuple[float, float] = (-math.inf, math.inf)
) -> Interval:
    """``mean ± 1.96 · sd / √n`` (sample standard deviation), its ends within ``bounds``."""
    if not values:
        raise DuelError("no values")
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return Interval(mean, math.nan, bounds)
    sd = statistics.stdev(values)
    return Interval(mean, Z_95 * sd / math.sqrt(len(values)), bounds)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0 < q <= 100), nearest-rank method."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True, slots=True)
class ThinkStats:
    """Think time per move of one level, in milliseconds."""

    level: str
    moves: int
    median_ms: float
    p95_ms: float
    max_ms: float
    mean_ms: float

    @classmethod
    def of(cls, level: str, times: Sequence[float]) -> ThinkStats:
        if not times:
            return cls(level, 0, math.nan, math.nan, math.nan, math.nan)
        return cls(
            level=level,
            moves=len(times),
            median_ms=statistics.median(times),
            p95_ms=percentile(times, 95),
            max_ms=max(times),
            mean_ms=math.fsum(times) / len(times),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "moves": self.moves,
            "median_ms": self.median_ms,
            "p95_ms": self.p95_ms,
            "max_ms": self.max_ms,
            "mean_ms": self.mean_ms,
        }


@dataclass(frozen=True)
class DuelSummary:
    """The outcome of a duel, from A's side."""

    a: str
    b: str
    players: int
    deals: int
    seed: str
    budget_ms: float
    partners_last_hand: bool
    wins: int
    draws: int
    losses: int
    score: Interval
    """A's deal score, (wins + ½ draws) / deals, with its interval over the pairs."""
    margin: Interval
    """A's mean card-point margin per deal, with its interval over the pairs."""
    think: tuple[ThinkStats, ...]
    """One entry per level (A's first; a single one when A and B are the same level)."""
    workers: int = 1
    elapsed_s: float = 0.0
    pairs_results: tuple[PairResult, ...] = field(default=(), repr=False, compare=False)

    @property
    def pairs(self) -> int:
        return self.deals // 2

    def think_of(self, level: str) -> ThinkStats:
        for stats in self.think:
            if stats.level == level:
                return stats
        raise KeyError(level)

    def outcome(self) -> dict[str, Any]:
        """The reproducible part: everything but the timings."""
        return {
            "a": self.a,
            "b": self.b,
            "players": self.players,
            "deals": self.deals,
            "pairs": self.pairs,
            "seed": self.seed,
            "budget_ms": self.budget_ms,
            "partners_last_hand": self.partners_last_hand,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": self.score.to_dict(),
            "margin": self.margin.to_dict(),
            "moves": {t.level: t.moves for t in self.think},
        }

    def to_dict(self) -> dict[str, Any]:
        data = self.outcome()
        data["think"] = {t.level: t.to_dict() for t in self.think}
        data["workers"] = self.workers
        data["elapsed_s"] = self.elapsed_s
        return data

    def format(self) -> str:
        """A human-readable report."""
        s, m = self.score, self.margin
        table = "4 players, teams of two" if self.players == 4 else "2 players"
        lines = [
            f"duel: {self.a} (A) vs {self.b} (B), {table}, {self.deals} deals "
            f"({self.pairs} duplicate pairs), seed {self.seed!r}, budget {self.budget_ms:g} ms",
            f"score of A:   {s.mean:.4f} ± {_fmt(s.half_width, '.4f')}  "
            f"(95% CI {_fmt(s.low, '.4f')} .. {_fmt(s.high, '.4f')})",
            f"deals:        A won {self.wins}, drew {self.draws}, lost {self.losses}",
            f"point margin: {m.mean:+.2f} ± {_fmt(m.half_width, '.2f')} per deal  "
            f"(95% CI {_fmt(m.low, '+.2f')} .. {_fmt(m.high, '+.2f')})",
            "think time per move (ms):",
            f"  {'level':<12} {'moves':>8} {'median':>9} {'p95':>9} {'max':>9}",
        ]
        for t in self.think:
            lines.append(
                f"  {t.level:<12} {t.moves:>8} {_fmt(t.median_ms, '9.3f')} "
                f"{_fmt(t.p95_ms, '9.3f')} {_fmt(t.max_ms, '9.3f')}"
            )
        lines.append(f"elapsed {self.elapsed_s:.1f} s with {self.workers} worker(s)")
        return "\n".join(lines)


def _fmt(value: float, spec: str) -> str:
    return format(value, spec) if math.isfinite(value) else "n/a"


def summarize(
    a: str,
    b: str,
    results: Iterable[PairResult],
    *,
    players: int,
    seed: str,
    budget_ms: float,
    partners_last_hand: bool = True,
    workers: int = 1,
    elapsed_s: float = 0.0,
) -> DuelSummary:
    """The summary of a duel from its pairs (in any order: they are sorted by index)."""
    pairs = tuple(sorted(results, key=lambda r: r.index))
    if not pairs:
        raise DuelError("a duel has at least one pair of deals")
    deal_results = [r for p in pairs for r in p.results]
    think_a = [t for p in pairs for t in p.think_a]
    think_b = [t for p in pairs for t in p.think_b]
    think: tuple[ThinkStats, ...]
    if a == b:
        think = (ThinkStats.of(a, think_a + think_b),)
    else:
        think = (ThinkStats.of(a, think_a), ThinkStats.of(b, think_b))
    return DuelSummary(
        a=a,
        b=b,
        players=players,
        deals=2 * len(pairs),
        seed=seed,
        budget_ms=budget_ms,
        partners_last_hand=partners_last_hand,
        wins=sum(1 for r in deal_results if r == 1.0),
        draws=sum(1 for r in deal_results if r == 0.5),
        losses=sum(1 for r in deal_results if r == 0.0),
        score=mean_interval([p.score for p in pairs], SCORE_BOUNDS),
        margin=mean_interval([p.margin for p in pairs]),
        think=think,
        workers=workers,
        elapsed_s=elapsed_s,
        pairs_results=pairs,
    )


# -- the duel --------------------------------------------------------------------------

_Task = tuple[str, str, int, str, float, bool, int, int, int | None]
"""(a, b, players, seed, budget_ms, partners_last_hand, first pair index, stop index,
max_iterations)."""


def _play_chunk(task: _Task) -> list[PairResult]:
    a, b, players, seed, budget_ms, partners, start, stop, max_iterations = task
    return [
        play_pair(
            a,
            b,
            players=players,
            seed=seed,
            index=i,
            budget_ms=budget_ms,
            partners_last_hand=partners,
            max_iterations=max_iterations,
        )
        for i in range(start, stop)
    ]


def duel(
    a: str,
    b: str,
    *,
    players: int,
    deals: int,
    seed: str | int,
    workers: int = 1,
    budget_ms: float = DEFAULT_BUDGET_MS,
    partners_last_hand: bool = True,
    progress: ProgressCallback | None = None,
    chunk_size: int | None = None,
    start_method: str = "spawn",
    max_iterations: int | None = None,
) -> DuelSummary:
    """Play ``deals`` deals (``deals / 2`` decks, each twice) of A against B.

    With ``workers`` > 1 the pairs are played in chunks by that many processes
    (``start_method`` ``"spawn"`` or ``"fork"``), and merged in deck order: the result is
    the same as with one worker (for bots whose choice depends on view and seed only), but
    for the think times and the elapsed time. ``max_iterations`` caps the searching
    levels' work (:func:`play_deal`).
    """
    for level in (a, b):
        if level not in LEVELS:
            raise UnknownBotLevelError(f"unknown bot level {level!r}: one of {', '.join(LEVELS)}")
    if players not in (2, 4):
        raise DuelError(f"a duel is played by 2 or 4 players, not {players!r}")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2 or deals % 2:
        raise DuelError(
            f"deals must be a positive even number (each deck is played twice), not {deals!r}"
        )
    if workers < 1:
        raise DuelError(f"workers must be at least 1, not {workers!r}")
    if not budget_ms > 0:
        raise DuelError(f"the budget must be positive, not {budget_ms!r} ms")
    if max_iterations is not None and max_iterations < 1:
        raise DuelError(f"max_iterations must be at least 1, not {max_iterations!r}")
    seed = str(seed)
    total = deals // 2
    if chunk_size is None:
        chunk_size = max(1, min(25, math.ceil(total / (workers * 8))))
    tasks: list[_Task] = [
        (
            a,
            b,
            players,
            seed,
            float(budget_ms),
            partners_last_hand,
            i,
            min(i + chunk_size, total),
            max_iterations,
        )
        for i in range(0, total, chunk_size)
    ]
    started = time.perf_counter()
    results: list[PairResult] = []
    if progress is not None:
        progress(0, total)
    if workers == 1 or len(tasks) == 1:
        workers = 1
        for task in tasks:
            results.extend(_play_chunk(task))
            if progress is not None:
                progress(len(results), total)
    else:
        context = multiprocessing.get_context(start_method)
        with context.Pool(min(workers, len(tasks))) as pool:
            for chunk in pool.imap_unordered(_play_chunk, tasks):
                results.extend(chunk)
                if progress is not None:
                    progress(len(results), total)
    return summarize(
        a,
        b,
        results,
        players=players,
        seed=seed,
        budget_ms=float(budget_ms),
        partners_last_hand=partners_last_hand,
        workers=workers,
        elapsed_s=time.perf_counter() - started,
    )


# -- a round robin ---------------------------------------------------------------------

ELO_SCALE = 400.0
"""Rating points for odds of 10 to 1 (the chess convention)."""


def elo_difference(score: float) -> float:
    """The rating difference that an expected score of ``score`` means (±inf at 0 or 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return ELO_SCALE * math.log10(score / (1.0 - score))


def elo_ladder(
    levels: Sequence[str],
    scores: dict[tuple[str, str], float],
    anchor: str | None = None,
    *,
    iterations: int = 2000,
) -> dict[str, float]:
    """Elo-like ratings that best explain the pairings' scores (Bradley-Terry fit).

    ``scores[(a, b)]`` is a's score against b (each pairing once, either way round).
    Found by gradient ascent on the log-likelihood of the scores as fractional wins;
    ``anchor`` (or, without one, the mean) is rated 0. A level that won or lost every
    deal has no finite rating; its rating is bounded by the iteration count.
    """
    rating = {level: 0.0 for level in levels}
    pairs = [(a, b, s) for (a, b), s in scores.items()]
    step = 40.0
    for _ in range(iterations):
        grad = dict.fromkeys(levels, 0.0)
        for a, b, s in pairs:
            expected = 1.0 / (1.0 + 10 ** ((rating[b] - rating[a]) / ELO_SCALE))
            grad[a] += s - expected
            grad[b] -= s - expected
        moved = 0.0
        for level in levels:
            delta = step * grad[level]
            rating[level] += delta
            moved = max(moved, abs(delta))
        if moved < 1e-6:
            break
    base = rating[anchor] if anchor is not None else math.fsum(rating.values()) / len(rating)
    return {level: r - base for level, r in rating.items()}


@dataclass(frozen=True)
class RoundRobin:
    """Every pairing of a list of levels, each a duplicate duel on the same decks."""

    levels: tuple[str, ...]
    players: int
    deals: int
    seed: str
    budget_ms: float
    duels: tuple[DuelSummary, ...]
    elapsed_s: float = 0.0

    def score(self, a: str, b: str) -> Interval:
        """a's score against b (with its interval over the pairs)."""
        for d in self.duels:
            if (d.a, d.b) == (a, b):
                return d.score
            if (d.a, d.b) == (b, a):
                s = d.score
                return Interval(1.0 - s.mean, s.half_width, SCORE_BOUNDS)
        raise KeyError((a, b))

    def ladder(self) -> list[tuple[str, float, float]]:
        """(level, rating, mean score against the field), best first."""
        scores = {(d.a, d.b): d.score.mean for d in self.duels}
        anchor = "random" if "random" in self.levels else None
        ratings = elo_ladder(self.levels, scores, anchor)
        means = {
            level: statistics.fmean(self.score(level, o).mean for o in self.levels if o != level)
            for level in self.levels
        }
        return sorted(
            ((level, ratings[level], means[level]) for level in self.levels),
            key=lambda row: -row[1],
        )

    def think(self) -> dict[str, ThinkStats]:
        """Each level's think time per move over all its duels."""
        times: dict[str, list[float]] = {level: [] for level in self.levels}
        for d in self.duels:
            for p in d.pairs_results:
                times[d.a].extend(p.think_a)
                times[d.b].extend(p.think_b)
        return {level: ThinkStats.of(level, t) for level, t in times.items()}

    def to_dict(self) -> dict[str, Any]:
        think = self.think()
        return {
            "levels": list(self.levels),
            "players": self.players,
            "deals": self.deals,
            "seed": self.seed,
            "budget_ms": self.budget_ms,
            "duels": [d.to_dict() for d in self.duels],
            "ladder": [{"level": lvl, "elo": r, "mean_score": m} for lvl, r, m in self.ladder()],
            "think": {lvl: t.to_dict() for lvl, t in think.items()},
            "elapsed_s": self.elapsed_s,
        }

    def format(self) -> str:
        table = "4 players, teams of two" if self.players == 4 else "2 players"
        width = max(9, *(len(level) for level in self.levels)) + 1
        cell = 13
        lines = [
            f"round robin: {', '.join(self.levels)}; {table}; {self.deals} deals "
            f"({self.deals // 2} duplicate pairs) per pairing, seed {self.seed!r}, "
            f"budget {self.budget_ms:g} ms",
            "score of the row against the column (95% CI half-width):",
            " " * width + "".join(f"{level:>{cell}}" for level in self.levels),
        ]
        for a in self.levels:
            row = f"{a:<{width}}"
            for b in self.levels:
                if a == b:
                    row += f"{'-':>{cell}}"
                else:
                    s = self.score(a, b)
                    row += f"{s.mean:>7.3f}±{_fmt(s.half_width, '.3f'):<5}"
            lines.append(row)
        anchor = "random = 0" if "random" in self.levels else "mean = 0"
        lines.append(f"Elo-like ladder ({anchor}; 400 points = odds of 10 to 1):")
        for rank, (level, rating, mean) in enumerate(self.ladder(), 1):
            lines.append(f"  {rank}. {level:<{width}} {rating:+8.0f}   mean score {mean:.3f}")
        lines.append("think time per move (ms):")
        lines.append(f"  {'level':<{width}} {'moves':>8} {'median':>9} {'p95':>9} {'max':>9}")
        for level, t in self.think().items():
            lines.append(
                f"  {level:<{width}} {t.moves:>8} {_fmt(t.median_ms, '9.3f')} "
                f"{_fmt(t.p95_ms, '9.3f')} {_fmt(t.max_ms, '9.3f')}"
            )
        lines.append(f"elapsed {self.elapsed_s:.1f} s")
        return "\n".join(lines)


def round_robin(
    levels: Sequence[str],
    *,
    players: int,
    deals: int,
    seed: str | int,
    workers: int = 1,
    budget_ms: float = DEFAULT_BUDGET_MS,
    partners_last_hand: bool = True,
    progress: Callable[[str, str], ProgressCallback | None] | None = None,
    max_iterations: int | None = None,
) -> RoundRobin:
    """A duplicate duel of every pair of ``levels`` (each on the same decks of ``seed``)."""
    levels = tuple(levels)
    if len(levels) < 2 or len(set(levels)) != len(levels):
        raise DuelError(f"a round robin needs at least two distinct levels, not {list(levels)}")
    for level in levels:
        if level not in LEVELS:
            raise UnknownBotLevelError(f"unknown bot level {level!r}: one of {', '.join(LEVELS)}")
    started = time.perf_counter()
    duels = []
    for i, a in enumerate(levels):
        for b in levels[i + 1 :]:
            callback = progress(a, b) if progress is not None else None
            duels.append(
                duel(
                    a,
                    b,
                    players=players,
                    deals=deals,
                    seed=seed,
                    workers=workers,
                    budget_ms=budget_ms,
                    partners_last_hand=partners_last_hand,
                    progress=callback,
                    max_iterations=max_iterations,
                )
            )
    return RoundRobin(
        levels=levels,
        players=players,
        deals=deals,
        seed=str(seed),
        budget_ms=float(budget_ms),
        duels=tuple(duels),
        elapsed_s=time.perf_counter() - started,
    )


# -- a progress bar --------------------------------------------------------------------


class ProgressBar:
    """A one-line progress bar, redrawn in place (``\\r``), for a stream such as stderr.

    Use it as a duel's ``progress`` callback and :meth:`close` it when done.
    """

    def __init__(
        self,
        label: str = "",
        *,
        stream: TextIO | None = None,
        width: int = 30,
        min_interval_s: float = 0.1,
        unit: str = "pairs",
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.min_interval_s = min_interval_s
        self.unit = unit
        self._started = time.perf_counter()
        self._last_draw = -math.inf
        self._last: tuple[int, int] | None = None
        self._drawn = False
        self._width_drawn = 0
        self._shown: tuple[int, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        self._last = (done, total)
        now = time.perf_counter()
        if done < total and now - self._last_draw < self.min_interval_s:
            return
        self._last_draw = now
        self._draw(done, total, now)

    def _draw(self, done: int, total: int, now: float) -> None:
        fraction = done / total if total else 1.0
        filled = round(self.width * fraction)
        elapsed = now - self._started
        eta = ""
        if 0 < done < total:
            eta = f" eta {_duration(elapsed * (total - done) / done)}"
        bar = "#" * filled + "." * (self.width - filled)
        label = f"{self.label} " if self.label else ""
        line = (
            f"{label}[{bar}] {done}/{total} {self.unit} {fraction:4.0%} {_duration(elapsed)}{eta}"
        )
        pad = " " * max(0, self._width_drawn - len(line))
        self.stream.write("\r" + line + pad)
        self.stream.flush()
        self._width_drawn = len(line)
        self._shown = (done, total)
        self._drawn = True

    def close(self) -> None:
        """Draw the last state and end the line."""
        if self._last is not None and self._last != self._shown:
            self._draw(*self._last, time.perf_counter())
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def wants_progress(flag: bool, stream: TextIO | None = None) -> bool:
    """Draw a progress bar when asked to, or when ``stream`` (stderr) is a terminal."""
    if flag:
        return True
    stream = stream if stream is not None else sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = [
    "DuelError",
    "DuelSummary",
    "Interval",
    "PairResult",
    "PlayedDeal",
    "RoundRobin",
    "ProgressBar",
    "ThinkStats",
    "decision_seed",
    "deck_seed",
    "duel",
    "elo_difference",
    "elo_ladder",
    "fresh_seed",
    "mean_interval",
    "percentile",
    "play_deal",
    "play_pair",
    "round_robin",
    "side_levels",
    "summarize",
    "wants_progress",
]
