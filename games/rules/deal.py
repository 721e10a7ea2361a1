"""One deal of Briscola, 2 or 4 players: the state and the moves that change it.

A :class:`Deal` is built from (players, dealer, deck order) and changed only by
:meth:`Deal.play`. Everything else (hands, stock, tricks, points, whose turn) follows
from those three and the cards played, so ``Deal(players, dealer, deck)`` plus the
move list *is* the deal, and replaying it gives the same state every time.

The class is mutable and kept lean on purpose: bots search by copying and playing
thousands of deals a second, and the API replays a deal on every request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from .cards import CARDS, Card
from .errors import CardNotInHandError, DealOverError, InvalidDealError, NotYourTurnError
from .shuffle import Seed, shuffled_deck

PLAYER_COUNTS = (2, 4)
_CARD_SET = frozenset(CARDS)
HAND_SIZE = 3
WINNING_POINTS = 61


class Trick(NamedTuple):
    """A completed trick: ``cards[i]`` was played by seat ``(leader + i) % players``."""

    leader: int
    cards: tuple[Card, ...]
    winner: int
    points: int


class Draw(NamedTuple):
    """A card drawn from the stock after a trick (``after_trick`` counts from 0)."""

    seat: int
    card: Card
    after_trick: int


def team_of(seat: int) -> int:
    """Team 0 is seats 0 (and 2); team 1 is seats 1 (and 3)."""
    return seat & 1


def trick_winner_index(cards: Sequence[Card], trump: str) -> int:
    """Index in ``cards`` (in play order) of the card that wins the trick.

    The highest trump wins; with no trump, the highest card of the suit led. A card of
    any other suit never wins.
    """
    best = 0
    top = cards[0]
    for i in range(1, len(cards)):
        card = cards[i]
        if card.suit == top.suit:
            if card.strength < top.strength:
                best, top = i, card
        elif card.suit == trump:
            best, top = i, card
    return best


def deal_order(players: int, dealer: int) -> list[int]:
    """Seats in the order they receive cards (and lead): from the dealer's right."""
    return [(dealer + 1 + i) % players for i in range(players)]


class Deal:
    """The state of one deal. See docs/rules.md, "One deal"."""

    __slots__ = (
        "players",
        "dealer",
        "deck",
        "briscola",
        "trump",
        "hands",
        "turn",
        "leader",
        "table",
        "tricks",
        "points",
        "moves",
        "briscola_holder",
        "_stock",
        "_next_draw",
        "_stock_len",
    )

    players: int
    dealer: int
    deck: tuple[Card, ...]
    briscola: Card
    """The face-up card; its suit is trump for the whole deal."""
    trump: str
    hands: list[list[Card]]
    turn: int | None
    """The seat to play, or None once the deal is over."""
    leader: int
    """The seat that led (or will lead) the trick on the table."""
    table: list[Card]
    """Cards of the trick in play, in play order from ``leader``."""
    tricks: list[Trick]
    points: list[int]
    """Card points captured so far by team 0 and team 1."""
    moves: list[Card]
    briscola_holder: int | None
    """The seat that drew the face-up briscola and has not played it yet."""

    def __init__(self, players: int, dealer: int, deck: Iterable[Card | str]) -> None:
        if players not in PLAYER_COUNTS:
            raise InvalidDealError(f"a deal has 2 or 4 players, not {players!r}", field="players")
        if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < players:
            raise InvalidDealError(
                f"the dealer must be a seat from 0 to {players - 1}, not {dealer!r}",
                field="dealer",
            )
        try:
            cards = deck if type(deck) is tuple and _CARD_SET.issuperset(deck) else None
        except TypeError:  # unhashable items: not cards, the slow path names them
            cards = None
        if cards is None:
            cards = tuple(c if isinstance(c, Card) else Card.from_code(c) for c in deck)
        if len(cards) != len(CARDS) or len(set(cards)) != len(CARDS):
            missing = sorted(set(CARDS) - set(cards))
            raise InvalidDealError(
                f"a deck holds each of the 40 cards exactly once (got {len(cards)} cards"
                + (f"; missing {' '.join(map(str, missing))})" if missing else ")"),
                field="deck",
            )
        dealt = HAND_SIZE * players
        self.players = players
        self.dealer = dealer
        self.deck = cards
        self.briscola = cards[dealt]
        self.trump = self.briscola.suit
        self.hands = [[] for _ in range(players)]
        first = (dealer + 1) % players
        for i in range(dealt):
            self.hands[(first + i) % players].append(cards[i])
        self._stock = cards[dealt + 1 :] + (cards[dealt],)
        self._next_draw = 0
        self._stock_len = len(self._stock)
        self.turn = first
        self.leader = first
        self.table = []
        self.tricks = []
        self.points = [0, 0]
        self.moves = []
        self.briscola_holder = None

    @classmethod
    def from_seed(cls, players: int, dealer: int, seed: Seed) -> Deal:
        return cls(players, dealer, shuffled_deck(seed))

    @classmethod
    def from_position(
        cls,
        *,
        players: int,
        dealer: int,
        briscola: Card,
        hands: Sequence[Sequence[Card]],
        stock: Sequence[Card],
        briscola_on_table: bool,
        leader: int,
        table: Sequence[Card],
        points: tuple[int, int],
        briscola_holder: int | None = None,
    ) -> Deal:
        """A position from its parts, for search over guesses of the hidden cards.

        ``stock`` is the face-down stock in drawing order; the face-up ``briscola`` is
        drawn after it while ``briscola_on_table``. The history (tricks, moves, deck) is
        not kept: ``tricks``, ``moves`` and ``deck`` of the result are empty, so ``ply``
        counts from this position.
        """
        deal = object.__new__(cls)
        deal.players = players
        deal.dealer = dealer
        deal.deck = ()
        deal.briscola = briscola
        deal.trump = briscola.suit
        deal.hands = [list(h) for h in hands]
        deal._stock = tuple(stock) + ((briscola,) if briscola_on_table else ())
        deal._next_draw = 0
        deal._stock_len = len(deal._stock)
        deal.leader = leader
        deal.table = list(table)
        deal.turn = (leader + len(table)) % players if any(deal.hands) else None
        deal.tricks = []
        deal.moves = []
        deal.points = [points[0], points[1]]
        deal.briscola_holder = briscola_holder
        return deal

    # -- reading the state -------------------------------------------------------------

    @property
    def ply(self) -> int:
        """Cards played so far in this deal."""
        return len(self.moves)

    @property
    def is_over(self) -> bool:
        return self.turn is None

    @property
    def stock_count(self) -> int:
        """Cards still to be drawn, the face-up briscola included while it lies there."""
        return len(self._stock) - self._next_draw

    @property
    def briscola_on_table(self) -> bool:
        return self._next_draw < len(self._stock)

    @property
    def stock(self) -> tuple[Card, ...]:
        """The cards still to be drawn, in drawing order (secret during the deal)."""
        return self._stock[self._next_draw :]

    @property
    def winner(self) -> int | None:
        """The team that won the deal; None while it is played and for a 60-60 draw."""
        if self.turn is not None:
            return None
        if self.points[0] >= WINNING_POINTS:
            return 0
        if self.points[1] >= WINNING_POINTS:
            return 1
        return None

    @property
    def is_drawn(self) -> bool:
        return self.turn is None and self.points[0] == self.points[1]

    @property
    def draws(self) -> list[Draw]:
        """Every card drawn so far: after each trick, the winner first, then in turn."""
        n = self.players
        stock = self._stock
        rounds = min(len(self.tricks), len(stock) // n)
        return [
            Draw((self.tricks[t].winner + i) % n, stock[t * n + i], t)
            for t in range(rounds)
            for i in range(n)
        ]

    def table_seats(self) -> list[int]:
        """The seat that played each card on the table."""
        n = self.players
        return [(self.leader + i) % n for i in range(len(self.table))]

    def legal_moves(self) -> list[Card]:
        """Cards the seat to play may play: any card in its hand (no duty to follow)."""
        if self.turn is None:
            return []
        return list(self.hands[self.turn])

    def is_legal(self, card: Card) -> bool:
        return self.turn is not None and card in self.hands[self.turn]

    # -- changing it -------------------------------------------------------------------

    def play(self, card: Card | str, seat: int | None = None) -> Trick | None:
        """Play ``card`` for the seat whose turn it is; return the trick it completes.

        ``seat``, when given, must be the seat to play: a service passes the caller's
        seat, so that playing out of turn is an error rather than a move for someone else.
        """
        turn = self.turn
        if turn is None:
            raise DealOverError("the deal is over: no more cards can be played")
        if seat is not None and seat != turn:
            raise NotYourTurnError(
                f"It is not your turn: seat {turn} is to play, not seat {seat}.",
                seat=seat,
                turn=turn,
            )
        if type(card) is not Card:
            card = Card.from_code(card)  # type: ignore[arg-type]
        hand = self.hands[turn]
        if card not in hand:
            raise CardNotInHandError(
                f"{card} is not in the hand of seat {turn}", card=card.code, seat=turn
            )
        hand.remove(card)
        self.moves.append(card)
        if card is self.briscola:
            self.briscola_holder = None
        table = self.table
        table.append(card)
        n = self.players
        if len(table) < n:
            self.turn = turn + 1 if turn + 1 < n else 0
            return None
        return self._finish_trick(table, n)

    def _finish_trick(self, table: list[Card], n: int) -> Trick:
        leader = self.leader
        if n == 2:
            first, second = table
            if second.suit == first.suit:
                taken = second.strength < first.strength
            else:
                taken = second.suit == self.trump
            winner = leader ^ 1 if taken else leader
            points = first.points + second.points
        else:
            winner = (leader + trick_winner_index(table, self.trump)) % n
            points = table[0].points + table[1].points + table[2].points + table[3].points
        self.points[winner & 1] += points
        trick = tuple.__new__(Trick, (leader, tuple(table), winner, points))
        self.tricks.append(trick)
        table.clear()
        hands = self.hands
        nd = self._next_draw
        if nd < self._stock_len:
            stock = self._stock
            if n == 2:
                hands[winner].append(stock[nd])
                hands[winner ^ 1].append(stock[nd + 1])
            else:
                for i in range(4):
                    hands[(winner + i) & 3].append(stock[nd + i])
            nd += n
            self._next_draw = nd
            if nd == self._stock_len:
                self.briscola_holder = (winner + n - 1) % n
        self.leader = winner
        self.turn = winner if hands[0] else None
        return trick

    def copy(self) -> Deal:
        """An independent copy (for search): cards are shared, lists are not."""
        other = object.__new__(Deal)
        other.players = self.players
        other.dealer = self.dealer
        other.deck = self.deck
        other.briscola = self.briscola
        other.trump = self.trump
        other.hands = [list(h) for h in self.hands]
        other.turn = self.turn
        other.leader = self.leader
        other.table = list(self.table)
        other.tricks = list(self.tricks)
        other.points = list(self.points)
        other.moves = list(self.moves)
        other.briscola_holder = self.briscola_holder
        other._stock = self._stock
        other._next_draw = self._next_draw
        other._stock_len = self._stock_len
        return other

    def __repr__(self) -> str:
        return (
            f"<Deal players={self.players} dealer={self.dealer} ply={self.ply} "
            f"turn={self.turn} points={self.points}>"
        )


def replay_moves(
    players: int, dealer: int, deck: Iterable[Card | str], moves: Iterable[Card | str]
) -> Deal:
    """The deal reached by playing ``moves`` in order (raises on the first illegal one)."""
    deal = Deal(players, dealer, deck)
    for card in moves:
        deal.play(card)
    return deal
