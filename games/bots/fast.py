"""A fast full-information solver for the expert's endgame search.

:class:`games.rules.Deal` is the referee: it checks every move and keeps the history,
and a search that copies it at every node spends most of its time doing so (in the
expert's endgame search, copying and playing ``Deal`` took about 20 µs a node). This
solver searches its own compact position instead: a card is its index (0..39), the
hands are lists of indices changed in place (a card played, then put back), the trick,
the draws and the points follow the same rules as ``Deal``. ``tests/bots/test_bots_fast.py``
compares its values with a plain minimax over ``Deal`` on many random positions, so a
rule it got wrong would show there.

:func:`solve` is the value for one team of a known position (every hand and the stock
order) when both teams play their best: alpha-beta, with a transposition table of the
positions met at the start of a trick (the same cards left in the same hands, the same
leader and points, reached by another order of play), and a cut where even every point
still out going to one team cannot bring the value back inside the search's window
(about a quarter fewer nodes, measured on random endgames of 8 to 12 cards).
"""

from __future__ import annotations

from collections.abc import Callable

from games.rules import CARDS, SUITS, Deal

_SUIT = tuple(SUITS.index(c.suit) for c in CARDS)
_STRENGTH = tuple(c.strength for c in CARDS)
_POINTS = tuple(c.points for c in CARDS)


def _beats_table(trump: int) -> tuple[tuple[bool, ...], ...]:
    """``table[best][card]``: does ``card``, played after ``best`` (winning), take it?"""
    return tuple(
        tuple(
            _STRENGTH[c] < _STRENGTH[b] if _SUIT[c] == _SUIT[b] else _SUIT[c] == trump
            for c in range(len(CARDS))
        )
        for b in range(len(CARDS))
    )


_BEATS = tuple(_beats_table(t) for t in range(len(SUITS)))

Memo = dict[tuple[int, int, int], tuple[float, float]]
"""A transposition table: (cards in each hand, leader, the team's points) -> bounds."""

Score = Callable[[int, int], float]
"""``score(team's points, other team's points)`` of a finished deal: never lower with more
points for the team, never higher with more for the other (the solver's cut relies on it)."""

_TOTAL_POINTS = sum(_POINTS)
"""120: every point of the deck, won by one team or the other by the end of a deal."""


def solve(
    deal: Deal,
    team: int,
    score: Score,
    check: Callable[[], None] | None = None,
    memo: Memo | None = None,
) -> float:
    """The value for ``team`` of ``deal``'s position (every card known: a guessed
    deal) when both teams play their best. ``check`` is called at every node (the
    expert's deadline: it raises to stop the search). ``deal`` is not changed.

    ``memo``, the transposition table, may be shared by the calls that search positions
    of one guessed deal (the same stock), for one ``team`` and ``score``: the positions
    met below two different moves are often the same."""
    n = deal.players
    turn0 = deal.turn
    if turn0 is None:
        return score(deal.points[team], deal.points[1 - team])
    beats = _BEATS[SUITS.index(deal.trump)]
    hands = [[c.index for c in hand] for hand in deal.hands]
    stock = tuple(c.index for c in deal.stock)
    table = [c.index for c in deal.table]
    points = _POINTS
    stride = len(CARDS)
    # Which cards each seat holds, as one int (seat s's card c is bit 40 s + c).
    held = 0
    for s, hand in enumerate(hands):
        for c in hand:
            held |= 1 << (stride * s + c)
    if memo is None:
        memo = {}
    tick = check if check is not None else _no_check
    inf = float("inf")

    def value(
        turn: int,
        leader: int,
        nd: int,
        mine: int,
        theirs: int,
        held: int,
        alpha: float,
        beta: float,
    ) -> float:
        tick()
        key = None
        if not table:
            key = (held, leader, mine)
            bounds = memo.get(key)
            if bounds is not None:
                low, high = bounds
                if low >= beta or low == high:
                    return low
                if high <= alpha:
                    return high
                alpha = max(alpha, low)
                beta = min(beta, high)
        # Bounds from the points still out (in the hands, the stock and on the table): the
        # value lies between all of them going to the other team and all to the team.
        out = _TOTAL_POINTS - mine - theirs
        high_bound = score(mine + out, theirs)
        if high_bound <= alpha:
            return high_bound
        low_bound = score(mine, theirs + out)
        if low_bound >= beta:
            return low_bound
        a0, b0 = alpha, beta
        hand = hands[turn]
        maximize = (turn & 1) == team
        best = -inf if maximize else inf
        last = len(table) == n - 1
        for i in range(len(hand)):
            card = hand[i]
            del hand[i]
            bit = 1 << (stride * turn + card)
            if not last:
                table.append(card)
                v = value(
                    turn + 1 if turn + 1 < n else 0,
                    leader,
                    nd,
                    mine,
                    theirs,
                    held ^ bit,
                    alpha,
                    beta,
                )
                table.pop()
            else:
                table.append(card)
                top = table[0]
                won = 0
                gained = points[top]
                for j in range(1, n):
                    c = table[j]
                    gained += points[c]
                    if beats[top][c]:
                        won, top = j, c
                winner = (leader + won) % n
                if (winner & 1) == team:
                    m, t = mine + gained, theirs
                else:
                    m, t = mine, theirs + gained
                trick = table[:]
                table.clear()
                h = held ^ bit
                drew = nd < len(stock)
                if drew:
                    for j in range(n):
                        s = (winner + j) % n
                        hands[s].append(stock[nd + j])
                        h |= 1 << (stride * s + stock[nd + j])
                if hands[winner]:
                    v = value(winner, winner, nd + n if drew else nd, m, t, h, alpha, beta)
                else:
                    v = score(m, t)
                if drew:
                    for j in range(n):
                        hands[(winner + j) % n].pop()
                table.extend(trick)
                table.pop()
            hand.insert(i, card)
            if maximize:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            else:
                if v < best:
                    best = v
                    if v < beta:
                        beta = v
            if alpha >= beta:
                break
        if key is not None:
            low, high = memo.get(key, (-inf, inf))
            if best <= a0:
                high = min(high, best)
            elif best >= b0:
                low = max(low, best)
            else:
                low = high = best
            memo[key] = (low, high)
        return best

    mine, theirs = deal.points[team], deal.points[1 - team]
    try:
        return value(turn0, deal.leader, 0, mine, theirs, held, -inf, inf)
    finally:
        # ``value`` calls itself through its closure cell: a reference cycle that would keep
        # it, and the transposition table it holds, alive until the garbage collector ran.
        # Rebinding the name empties the cell.
        value = _searched


def _no_check() -> None:
    return None


def _searched(
    turn: int, leader: int, nd: int, mine: int, theirs: int, held: int, alpha: float, beta: float
) -> float:
    """What ``solve``'s value function is rebound to once its search is over (never called)."""
    raise AssertionError("a finished search's value function was called")
