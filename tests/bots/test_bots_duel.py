"""games.bots.duel: one deal, duplicate pairs, the statistics and the worker pool."""

import itertools
import math
import pickle
import statistics

import pytest
from bots_cases import TEST_BUDGET_MS

from games.bots import LEVELS, UnknownBotLevelError
from games.bots import duel as duel_module
from games.bots.duel import (
    DuelError,
    Interval,
    PairResult,
    ProgressBar,
    decision_seed,
    duel,
    mean_interval,
    percentile,
    play_deal,
    play_pair,
    side_levels,
    summarize,
)
from games.rules import CARDS, replay_moves, shuffled_deck

# -- one deal --------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 4])
def test_play_deal_plays_to_the_end(players, monkeypatch):
    # A clock that moves half a millisecond at each reading: each decision is timed by two
    # readings around it, so each think time is 0.5 ms exactly (no real time is measured).
    readings = itertools.count()
    monkeypatch.setattr(duel_module.time, "perf_counter", lambda: next(readings) * 0.0005)
    deck = shuffled_deck("one-deal")
    played = play_deal(
        deck, players=players, dealer=1, levels=["greedy", "random"] * (players // 2), seed="x"
    )
    assert sum(played.points) == 120
    assert sorted(played.moves) == list(CARDS)
    assert [len(t) for t in played.think_ms] == [40 // players] * players
    assert all(t == pytest.approx(0.5) for times in played.think_ms for t in times)
    # The moves replay to the same result: a legal deal.
    deal = replay_moves(players, 1, deck, played.moves)
    assert deal.is_over and tuple(deal.points) == played.points
    assert played.winner == deal.winner


def test_play_deal_is_reproducible_and_uses_its_seed():
    deck = shuffled_deck("seeded-deal")
    first = play_deal(deck, players=2, dealer=0, levels=["random", "random"], seed="a")
    again = play_deal(deck, players=2, dealer=0, levels=["random", "random"], seed="a")
    other = play_deal(deck, players=2, dealer=0, levels=["random", "random"], seed="b")
    assert first.moves == again.moves
    assert first.moves != other.moves


def test_play_deal_seed_may_be_a_function_of_the_ply():
    deck = shuffled_deck("seed-fn")
    by_string = play_deal(deck, players=2, dealer=0, levels=["random"] * 2, seed="s")
    by_function = play_deal(
        deck, players=2, dealer=0, levels=["random"] * 2, seed=lambda ply: f"s:{ply}"
    )
    assert by_string.moves == by_function.moves


def test_play_deal_refuses_unknown_levels_and_wrong_counts():
    deck = shuffled_deck("refuse")
    with pytest.raises(UnknownBotLevelError):
        play_deal(deck, players=2, dealer=0, levels=["greedy", "oracle"], seed="s")
    with pytest.raises(DuelError):
        play_deal(deck, players=4, dealer=0, levels=["greedy", "greedy"], seed="s")


# -- duplicate pairs -------------------------------------------------------------------


def test_sides_swap_seats_in_two_players_and_teams_in_four():
    assert side_levels("A", "B", 2, 0) == ["A", "B"]
    assert side_levels("A", "B", 2, 1) == ["B", "A"]
    assert side_levels("A", "B", 4, 0) == ["A", "B", "A", "B"]
    assert side_levels("A", "B", 4, 1) == ["B", "A", "B", "A"]


@pytest.mark.parametrize("players", [2, 4])
def test_a_pair_plays_the_same_deck_twice_with_the_sides_swapped(players):
    index = 3
    pair = play_pair("greedy", "random", players=players, seed="pair", index=index)
    deck = shuffled_deck("pair:3")
    dealer = index % players
    for side in (0, 1):
        played = play_deal(
            deck,
            players=players,
            dealer=dealer,
            levels=side_levels("greedy", "random", players, side),
            seed=lambda ply, side=side: decision_seed("pair", index, side, ply),
        )
        mine, theirs = played.points[side], played.points[1 - side]
        assert pair.margins[side] == mine - theirs
        expected = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        assert pair.results[side] == expected
    assert pair.score == sum(pair.results) / 2
    assert len(pair.think_a) == len(pair.think_b) == 40


def test_a_level_against_itself_with_the_same_seeds_plays_both_sides_alike():
    """Duplicate really cancels the cards: greedy (deterministic) against greedy scores
    exactly 1/2 on every pair, whoever is 'A'."""
    summary = duel("greedy", "greedy", players=2, deals=40, seed="mirror")
    for pair in summary.pairs_results:
        assert pair.score == 0.5
        assert pair.margins[0] == -pair.margins[1]
    assert summary.score.mean == 0.5 and summary.score.half_width == 0
    assert len(summary.think) == 1 and summary.think[0].moves == 40 * 40


# -- statistics ------------------------------------------------------------------------


def test_the_interval_is_over_pairs():
    scores = [1.0, 0.75, 0.5, 1.0, 0.25, 1.0, 0.75, 0.75]
    got = mean_interval(scores)
    sd = statistics.stdev(scores)
    assert got.mean == pytest.approx(sum(scores) / 8)
    assert got.half_width == pytest.approx(1.96 * sd / math.sqrt(8))
    assert got.low == pytest.approx(got.mean - got.half_width)
    assert got.high == pytest.approx(got.mean + got.half_width)
    single = mean_interval([0.5])
    assert single.mean == 0.5 and math.isnan(single.half_width)
    assert single.to_dict() == {"mean": 0.5, "half_width": None, "low": None, "high": None}


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 95) == 95
    assert percentile(values, 100) == 100
    assert percentile([3.0], 95) == 3.0
    assert percentile([5, 1, 4, 2, 3], 50) == 3


def _pair(index, results, margins):
    return PairResult(index, results, margins, (1.0, 2.0), (3.0,))


def test_summarize_counts_deals_and_scores_pairs():
    pairs = [
        _pair(2, (1.0, 0.0), (10, -4)),
        _pair(0, (1.0, 1.0), (30, 12)),
        _pair(1, (0.5, 0.0), (0, -20)),
    ]
    s = summarize("a", "b", pairs, players=2, seed="s", budget_ms=5)
    assert (s.wins, s.draws, s.losses) == (3, 1, 2)
    assert s.deals == 6 and s.pairs == 3
    assert s.score.mean == pytest.approx((3 + 0.5) / 6)
    assert s.score == mean_interval([1.0, 0.25, 0.5], (0.0, 1.0))
    # A score's interval stays within 0 and 1 (with 3 pairs, mean ± half-width passes 1).
    assert s.score.mean + s.score.half_width > 1.0
    assert s.score.high == 1.0 and s.score.low == s.score.mean - s.score.half_width
    assert s.margin == mean_interval([21.0, -10.0, 3.0])
    assert [p.index for p in s.pairs_results] == [0, 1, 2]
    assert s.think_of("a").moves == 6 and s.think_of("b").moves == 3
    assert s.think_of("a").max_ms == 2.0 and s.think_of("b").median_ms == 3.0
    data = s.to_dict()
    assert data["wins"] == 3 and data["score"]["mean"] == s.score.mean
    assert set(data["think"]) == {"a", "b"}
    assert "score of A" in s.format() and "95% CI" in s.format()


def test_results_pickle_for_the_worker_pool():
    pair = _pair(0, (1.0, 0.5), (3, 0))
    assert pickle.loads(pickle.dumps(pair)) == pair
    assert pickle.loads(pickle.dumps(Interval(0.5, 0.1))) == Interval(0.5, 0.1)


# -- the duel --------------------------------------------------------------------------


def test_duel_reports_a_score_with_its_interval_and_think_times():
    s = duel("greedy", "random", players=2, deals=20, seed="tiny")
    assert s.deals == 20 and s.wins + s.draws + s.losses == 20
    assert s.score.mean == pytest.approx((s.wins + s.draws / 2) / 20)
    assert 0 <= s.score.low <= s.score.mean <= s.score.high
    assert s.think_of("greedy").moves == s.think_of("random").moves == 20 * 20
    t = s.think_of("greedy")
    assert 0 <= t.median_ms <= t.p95_ms <= t.max_ms


def test_duel_is_reproducible_and_depends_on_its_seed():
    one = duel("random", "greedy", players=4, deals=20, seed=7)
    two = duel("random", "greedy", players=4, deals=20, seed="7")
    other = duel("random", "greedy", players=4, deals=20, seed=8)
    assert one.outcome() == two.outcome()
    assert [p.margins for p in one.pairs_results] == [p.margins for p in two.pairs_results]
    assert [p.margins for p in one.pairs_results] != [p.margins for p in other.pairs_results]


@pytest.mark.parametrize("players", [2, 4])
def test_two_workers_give_the_same_result_as_one(players):
    kwargs = {"players": players, "deals": 24, "seed": "pool", "budget_ms": TEST_BUDGET_MS}
    one = duel("greedy", "random", workers=1, **kwargs)
    two = duel("greedy", "random", workers=2, chunk_size=2, **kwargs)
    assert two.workers == 2
    assert one.outcome() == two.outcome()
    assert [(p.index, p.results, p.margins) for p in one.pairs_results] == [
        (p.index, p.results, p.margins) for p in two.pairs_results
    ]


def test_a_fixed_work_duel_of_the_expert_is_reproducible():
    """With the guesses capped and a budget too large to cut them, the clock plays no
    part: the same duel twice (in-process and in two workers) gives the same deals."""
    kwargs = {"players": 2, "deals": 4, "seed": "fixed", "budget_ms": 60_000, "max_iterations": 3}
    one = duel("expert", "learned", **kwargs)
    two = duel("expert", "learned", workers=2, chunk_size=1, **kwargs)
    assert [(p.results, p.margins) for p in one.pairs_results] == [
        (p.results, p.margins) for p in two.pairs_results
    ]
    assert one.think_of("expert").moves == 80  # 4 deals of 20 moves a seat


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_every_level_can_play_a_small_duel(level):
    s = duel(level, "random", players=2, deals=2, seed="smoke", budget_ms=TEST_BUDGET_MS)
    assert s.wins + s.draws + s.losses == 2
    expected = 80 if level == "random" else 40  # random plays both sides against itself
    assert s.think_of(level).moves == expected


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"deals": 3}, DuelError),
        ({"deals": 0}, DuelError),
        ({"players": 3}, DuelError),
        ({"workers": 0}, DuelError),
        ({"budget_ms": 0}, DuelError),
        ({"max_iterations": 0}, DuelError),
        ({"a": "oracle"}, UnknownBotLevelError),
    ],
)
def test_duel_refuses_bad_arguments(kwargs, error):
    args = {"a": "greedy", "b": "random", "players": 2, "deals": 4, "seed": "x"} | kwargs
    with pytest.raises(error):
        duel(args.pop("a"), args.pop("b"), **args)


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_is_reported_up_to_the_total(workers):
    calls = []
    duel(
        "greedy",
        "random",
        players=2,
        deals=10,
        seed="p",
        workers=workers,
        chunk_size=2,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls[0] == (0, 5) and calls[-1] == (5, 5)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) == 4  # 0, then after each chunk of 2, 2, 1 pairs


class _Stream:
    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_bar_draws_in_place_and_ends_its_line():
    stream = _Stream()
    bar = ProgressBar("demo", stream=stream, width=10, min_interval_s=0)
    for done in range(0, 5):
        bar(done, 4)
    bar.close()
    lines = stream.text.split("\r")
    assert lines[0] == ""
    assert "demo [..........] 0/4 pairs" in lines[1]
    assert "[##########] 4/4 pairs 100%" in lines[-1]
    assert stream.text.endswith("\n") and stream.text.count("\n") == 1


# -- round robin -----------------------------------------------------------------------


def test_elo_ladder_recovers_ratings_that_explain_the_scores():
    from games.bots.duel import elo_difference, elo_ladder

    # Scores made from ratings 0, 200, 500: the fit gives them back (anchored at "a").
    ratings = {"a": 0.0, "b": 200.0, "c": 500.0}
    scores = {
        (x, y): 1 / (1 + 10 ** ((ratings[y] - ratings[x]) / 400))
        for x, y in (("a", "b"), ("a", "c"), ("b", "c"))
    }
    fitted = elo_ladder(["a", "b", "c"], scores, anchor="a")
    for level, rating in ratings.items():
        assert fitted[level] == pytest.approx(rating, abs=0.5)
    assert elo_difference(0.5) == 0
    assert elo_difference(10 / 11) == pytest.approx(400)
    assert elo_difference(1.0) == math.inf


def test_round_robin_plays_every_pair_on_the_same_decks():
    from games.bots.duel import round_robin

    levels = ["random", "greedy", "strong"]
    result = round_robin(levels, players=2, deals=40, seed="rr")
    assert [(d.a, d.b) for d in result.duels] == [
        ("random", "greedy"),
        ("random", "strong"),
        ("greedy", "strong"),
    ]
    for d in result.duels:
        assert d.seed == "rr" and d.deals == 40
        again = duel(d.a, d.b, players=2, deals=40, seed="rr")
        assert again.outcome() == d.outcome()
    for a in levels:
        for b in levels:
            if a != b:
                assert result.score(a, b).mean + result.score(b, a).mean == pytest.approx(1)
    ladder = result.ladder()
    assert [row[0] for row in ladder][-1] == "random"
    assert dict((lvl, r) for lvl, r, _ in ladder)["random"] == 0
    text = result.format()
    assert "seed 'rr'" in text and "Elo-like ladder" in text
    for level in levels:
        assert level in text
    assert result.to_dict()["ladder"][0]["level"] == ladder[0][0]


def test_round_robin_refuses_fewer_than_two_distinct_levels():
    from games.bots.duel import round_robin

    for levels in (["greedy"], ["greedy", "greedy"]):
        with pytest.raises(DuelError):
            round_robin(levels, players=2, deals=2, seed="x")
    with pytest.raises(UnknownBotLevelError):
        round_robin(["greedy", "oracle"], players=2, deals=2, seed="x")
