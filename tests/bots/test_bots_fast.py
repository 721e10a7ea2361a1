"""The fast endgame solver against the rules package: a plain minimax over ``Deal``."""

import random

import pytest

from games.bots.expert import _score, _score_points
from games.bots.fast import solve
from games.rules import Deal, shuffled_deck


def reference(deal, team):
    """The value for ``team`` when both teams play their best: minimax over copies of
    the referee's ``Deal`` (alpha-beta only; nothing of the fast solver)."""
    return reference_with(deal, team, _score_points)


def reference_with(deal, team, score):
    """:func:`reference` with another score of a finished deal."""

    def value(d, alpha, beta):
        if d.turn is None:
            return score(d.points[team], d.points[1 - team])
        maximize = (d.turn & 1) == team
        best = -1e9 if maximize else 1e9
        for card in d.legal_moves():
            child = d.copy()
            child.play(card)
            v = value(child, alpha, beta)
            if maximize:
                best = max(best, v)
                alpha = max(alpha, v)
            else:
                best = min(best, v)
                beta = min(beta, v)
            if alpha >= beta:
                break
        return best

    return value(deal, -1e9, 1e9)


def fast_value(deal, team):
    return solve(deal, team, _score_points)


def positions(players, remaining, games, seed):
    """Random positions of random deals with ``remaining`` cards left to play, some of
    them in the middle of a trick (the stock not always empty)."""
    rng = random.Random(seed)
    for game in range(games):
        deal = Deal(players, game % players, shuffled_deck(f"{seed}-{game}"))
        left = remaining + rng.randrange(players)  # stop at any card of a trick
        while sum(len(h) for h in deal.hands) + deal.stock_count > left:
            deal.play(rng.choice(deal.legal_moves()))
        yield deal


@pytest.mark.parametrize(("players", "remaining", "games"), [(2, 8, 150), (2, 10, 40), (4, 8, 60)])
def test_the_fast_solver_values_positions_as_minimax_over_the_rules(players, remaining, games):
    checked = 0
    for deal in positions(players, remaining, games, f"fast-{players}-{remaining}"):
        before = (deal.ply, [list(h) for h in deal.hands], list(deal.table), list(deal.points))
        for team in (0, 1):
            assert fast_value(deal, team) == pytest.approx(reference(deal, team)), deal
        # The deal it read is left as it was.
        assert (deal.ply, deal.hands, deal.table, deal.points) == before
        checked += 1
    assert checked == games


def test_a_finished_deal_is_its_score():
    rng = random.Random(1)
    deal = Deal(2, 0, shuffled_deck("over"))
    while deal.turn is not None:
        deal.play(rng.choice(deal.legal_moves()))
    assert fast_value(deal, 0) == _score(deal, 0)
    assert fast_value(deal, 1) == _score(deal, 1)


def test_the_check_is_called_at_every_node_and_can_stop_the_search():
    deal = next(positions(2, 8, 1, "check"))
    nodes = []
    value = solve(deal, 0, _score_points, lambda: nodes.append(1))
    assert len(nodes) > 20  # a real search, not a cut at the root
    calls = []

    class Stop(Exception):
        pass

    def check():
        calls.append(1)
        if len(calls) == len(nodes) // 2:
            raise Stop

    with pytest.raises(Stop):
        solve(deal, 0, _score_points, check)
    assert len(calls) == len(nodes) // 2
    # Stopped or not, a search leaves nothing behind: the same value from the start.
    assert solve(deal, 0, _score_points) == value


def win(mine, theirs):
    """A score of the result only (no margin)."""
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


def test_the_points_still_out_cut_keeps_every_value():
    """The cut (every point still out to one team cannot reach the window) on a win/loss
    score, where it cuts the most: the values are still the plain minimax's."""
    for deal in positions(2, 8, 60, "cut"):
        expected = reference_with(deal, 0, win)
        assert solve(deal, 0, win) == expected


def test_once_the_deal_is_won_the_cut_stops_the_search():
    """On the result alone, a team with 61 points has won whatever comes: after the first
    line of play finds the win, every other node is cut at once (without the cut,
    alpha-beta searches on)."""
    won = [d for d in positions(2, 8, 40, "won") if max(d.points) > 60]
    assert won, "no position with a deal already won among the 40"
    deal = won[0]
    team = 0 if deal.points[0] > 60 else 1
    nodes = []
    assert solve(deal, team, win, lambda: nodes.append(1)) == 1.0
    remaining = sum(len(h) for h in deal.hands) + deal.stock_count
    # The first line (one node a card) and, beside it, one node per other card tried.
    assert len(nodes) <= 3 * remaining, (len(nodes), remaining)
