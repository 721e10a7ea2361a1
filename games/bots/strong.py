"""The ``strong`` level: the rules of thumb of a good Briscola player, with card counting.

It reads only its seat's view. From it, it counts what is still *out* (every card not in
its hand, not played, not in a visible partner's hand: the opponents may hold it now or
draw it later), so it knows which trumps and which carichi (aces and threes) are still
against it, and how many points are left to win. Then:

* **Playing for 61.** When winning this trick takes its team to 61, it wins it with the
  cheapest card that does; when losing it would take the other team to 61, it wins it
  if it can.
* **Last to play** (second of two, or fourth of four): it wins a trick on the suit led
  whenever that is possible, with the card that takes most points (banking an ace or a
  three where nothing can overtake it); it spends a briscola on a carico always, on a
  figure when it has trumps to spare or the stock is nearly out, never on a liscio (a
  card without points); otherwise it gives away a liscio, the lowest, keeping figures,
  carichi and trumps.
* **Leading**: lisci first (the lowest), then a fante, then a low trump when it holds
  several or the other team holds few, then other figures; a carico is led only when
  nothing that is out can take it.
* **Partners** (4 players): a partner winning the trick with a card nothing out can
  beat (or with only partners to play) gets the richest non-trump card; otherwise the
  player gives cheap. A player not last takes a trick with points only with a card that
  nothing out can beat, or a non-trump winner on a trick with points.
* **The last three tricks of a 2-player deal** (stock empty: every card is known) are
  searched exactly, for the win first and then the point margin.
* **The face-up briscola**: when the next draw is the last (2 players) and the face-up
  briscola is worth having, it lets a cheap trick go so that it draws that card.

Deterministic: the same view always gives the same card (the rng is not used).
:func:`strong_card` is the same decision over a bare position, for the expert's playouts.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from games.rules import CARDS, Card, Deal, SeatView

WIN = 61

# -- what a seat knows ---------------------------------------------------------------


class Situation:
    """What the rules read: the hand, the trick so far and the counts, from one seat."""

    __slots__ = (
        "hand",
        "table",
        "trump",
        "briscola",
        "players",
        "position",
        "partner_winning",
        "partner_after",
        "out",
        "mine",
        "theirs",
        "stock_count",
        "partner_hand",
    )

    def __init__(
        self,
        *,
        hand: Sequence[Card],
        table: Sequence[Card],
        trump: str,
        briscola: Card,
        players: int,
        out: Iterable[Card],
        mine: int,
        theirs: int,
        stock_count: int,
        partner_hand: Sequence[Card] | None = None,
    ) -> None:
        self.hand = sorted(hand)
        self.table = list(table)
        self.trump = trump
        self.briscola = briscola
        self.players = players
        self.position = len(table)
        """How many cards were played before this one in the trick (0 = leading)."""
        self.out = set(out)
        """Cards the other team may hold now or draw later."""
        self.mine = mine
        self.theirs = theirs
        self.stock_count = stock_count
        self.partner_hand = list(partner_hand) if partner_hand is not None else None
        winning = _winning_index(self.table, trump) if self.table else -1
        # In a 4-player trick the partner played two cards before this one.
        self.partner_winning = winning >= 0 and (self.position - winning) % 2 == 0
        self.partner_after = players == 4 and self.position < 2


def situation_of_view(view: SeatView) -> Situation:
    assert view.seat is not None
    known = set(view.hand) | set(view.played)
    if view.partner_hand is not None:
        known |= set(view.partner_hand)
    out = [c for c in CARDS if c not in known]
    team = view.seat & 1
    return Situation(
        hand=view.hand,
        table=[c for _, c in view.table],
        trump=view.trump,
        briscola=view.briscola,
        players=view.players,
        out=out,
        mine=view.points[team],
        theirs=view.points[1 - team],
        stock_count=view.stock_count,
        partner_hand=view.partner_hand,
    )


def strong_bot(
    view: SeatView,
    rng: random.Random,
    budget_ms: float = 0,
    *,
    max_iterations: int | None = None,
) -> Card:
    """The ``strong`` level (see the module docstring); the rng is not used."""
    return decide(situation_of_view(view))


# -- helpers ---------------------------------------------------------------------------


def _winning_index(table: Sequence[Card], trump: str) -> int:
    best = 0
    top = table[0]
    for i in range(1, len(table)):
        c = table[i]
        if c.suit == top.suit:
            if c.strength < top.strength:
                best, top = i, c
        elif c.suit == trump:
            best, top = i, c
    return best


def _beats(card: Card, best: Card, trump: str) -> bool:
    if card.suit == best.suit:
        return card.strength < best.strength
    return card.suit == trump


def _unbeatable(card: Card, out: set[Card], trump: str) -> bool:
    """Nothing still out could beat ``card`` (were it winning the trick)."""
    for c in out:
        if c.suit == card.suit:
            if c.strength < card.strength:
                return False
        elif c.suit == trump:
            return False
    return True


def _discard_cost(card: Card, trump: str) -> int:
    """What it costs to give ``card`` away: trumps dearest, then points, then rank."""
    if card.suit == trump:
        return 200 + card.points * 10 + (10 - card.strength)
    return card.points * 10 + (10 - card.strength)


def _lead_cost(card: Card, s: Situation) -> int:
    trump = s.trump
    if card.suit == trump:
        if card.points == 0:
            few_against = sum(1 for c in s.out if c.suit == trump) <= 2
            many_mine = sum(1 for c in s.hand if c.suit == trump) >= 2
            base = 25 if (few_against or many_mine) else 45
            return base + (10 - card.strength)
        return 300 + card.points * 10
    if card.points >= 10:
        if _unbeatable(card, s.out, trump):
            return 5  # nothing out takes it: bank it
        return 150 + card.points
    if card.points:
        return 15 + card.points * 5
    return 10 - card.strength


# -- the decision ----------------------------------------------------------------------


def decide(s: Situation) -> Card:
    hand = s.hand
    if len(hand) == 1:
        return hand[0]
    if s.players == 2 and s.stock_count == 0 and len(s.out) == len(hand) - s.position:
        return _endgame(s)
    if not s.table:
        return min(hand, key=lambda c: (_lead_cost(c, s), c.index))
    return _follow(s)


def _follow(s: Situation) -> Card:
    trump = s.trump
    hand = s.hand
    table = s.table
    best = table[_winning_index(table, trump)]
    on_table = sum(c.points for c in table)
    last = s.position == s.players - 1
    cheapest = min(hand, key=lambda c: (_discard_cost(c, trump), c.index))
    winners = [c for c in hand if _beats(c, best, trump)]

    if s.partner_winning:
        safe = last or _unbeatable(best, s.out, trump)
        if safe:
            plain = [c for c in hand if c.suit != trump]
            if plain:
                return max(plain, key=lambda c: (c.points, -c.strength, -c.index))
        return cheapest

    if not winners:
        return cheapest

    def gain(c: Card) -> int:
        return on_table + c.points

    cheapest_winner = min(winners, key=lambda c: (_discard_cost(c, trump), c.index))
    # Playing for 61: this trick decides the deal.
    if last or _unbeatable(cheapest_winner, s.out, trump):
        if s.mine + gain(cheapest_winner) >= WIN:
            return cheapest_winner
        if s.theirs + on_table + cheapest.points >= WIN:
            return cheapest_winner

    if not last:
        # Someone plays after this card (4 players): take a trick with points, or one
        # that costs no trump; else give cheap.
        if on_table > 0 or cheapest_winner.suit != trump:
            return cheapest_winner
        return cheapest

    # Last to play: the trick is this card's to take or leave.
    same_suit = [c for c in winners if c.suit == best.suit]
    want_briscola = (
        s.players == 2
        and s.stock_count == 2
        and (s.briscola.points >= 3 or s.briscola.strength <= 4)
        and s.briscola not in hand
    )
    if same_suit and best.suit != trump:
        richest = max(same_suit, key=lambda c: (c.points, -c.strength))
        if not (want_briscola and on_table + richest.points < 10):
            return richest
    trumps = [c for c in winners if c.suit == trump]
    if best.suit == trump:
        # A trump led: overtake it only when that banks points worth a trump.
        if trumps:
            richest = max(trumps, key=lambda c: (c.points, -c.strength))
            if on_table + richest.points >= 10:
                return richest
        return cheapest
    if not trumps:
        return cheapest
    low = min(trumps, key=lambda c: (c.points, -c.strength))
    my_trumps = sum(1 for c in hand if c.suit == trump)
    trumps_out = sum(1 for c in s.out if c.suit == trump)
    if on_table >= 10:
        return low
    if want_briscola and on_table < 10:
        return cheapest
    if on_table >= 2 and low.points == 0:
        spare = my_trumps >= 2 or s.stock_count <= 6 or trumps_out <= 3
        if spare or on_table >= 4:
            return low
    if cheapest.suit != trump and cheapest.points >= 3 and low.points == 0:
        # Nothing cheap to give: a low trump costs less than a figure.
        return low
    return cheapest


# -- the last tricks of a 2-player deal: everything is known ---------------------------


def _endgame(s: Situation) -> Card:
    """Exact search of the rest of a 2-player deal with an empty stock."""
    trump = s.trump
    mine = list(s.hand)
    theirs = sorted(s.out)
    best_card = mine[0]
    best_value = -1e9
    for card in sorted(mine):
        rest = [c for c in mine if c is not card]
        if s.table:
            value = _after_trick(s.table[0], card, False, rest, theirs, s.mine, s.theirs, trump)
        else:
            value = _reply(card, rest, theirs, s.mine, s.theirs, trump)
        if value > best_value:
            best_card, best_value = card, value
    return best_card


def _final(mine: int, theirs: int) -> float:
    result = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
    return result + (mine - theirs) / 600.0


def _reply(led: Card, mine: list[Card], theirs: list[Card], pm: int, pt: int, trump: str) -> float:
    """I led ``led``; the opponent replies to minimize my value."""
    value = 1e9
    for card in theirs:
        rest = [c for c in theirs if c is not card]
        v = _after_trick(led, card, True, mine, rest, pm, pt, trump)
        if v < value:
            value = v
    return value


def _after_trick(
    first: Card,
    second: Card,
    i_led: bool,
    mine: list[Card],
    theirs: list[Card],
    pm: int,
    pt: int,
    trump: str,
) -> float:
    if second.suit == first.suit:
        second_wins = second.strength < first.strength
    else:
        second_wins = second.suit == trump
    points = first.points + second.points
    i_win = second_wins != i_led
    if i_win:
        pm += points
    else:
        pt += points
    if not mine:
        return _final(pm, pt)
    if i_win:
        return max(_reply(c, [x for x in mine if x is not c], theirs, pm, pt, trump) for c in mine)
    value = 1e9
    for led in theirs:
        rest = [c for c in theirs if c is not led]
        v = max(
            _after_trick(led, c, False, [x for x in mine if x is not c], rest, pm, pt, trump)
            for c in mine
        )
        if v < value:
            value = v
    return value


# -- the same decision over a bare position (the expert's playouts, training) ----------


def situation_of_deal(deal: Deal) -> Situation:
    """What the seat to play in ``deal`` knows, as :func:`situation_of_view` reads it:
    its cards out are the other hands (but a partner's shown in the last tricks) and the
    stock. Works on a deal with or without its history (``Deal.from_position``)."""
    turn = deal.turn
    assert turn is not None
    n = deal.players
    partner = (turn + 2) % n if n == 4 and deal.stock_count == 0 else -1
    out: list[Card] = list(deal.stock)
    for seat in range(n):
        if seat != turn and seat != partner:
            out.extend(deal.hands[seat])
    team = turn & 1
    return Situation(
        hand=deal.hands[turn],
        table=deal.table,
        trump=deal.trump,
        briscola=deal.briscola,
        players=n,
        out=out,
        mine=deal.points[team],
        theirs=deal.points[1 - team],
        stock_count=deal.stock_count,
        partner_hand=deal.hands[partner] if partner >= 0 else None,
    )


def strong_card(deal: Deal, hand: Sequence[Card]) -> Card:
    """The ``strong`` choice of the seat to play in ``deal`` (``hand`` is its hand)."""
    if len(hand) == 1:
        return hand[0]
    return decide(situation_of_deal(deal))
