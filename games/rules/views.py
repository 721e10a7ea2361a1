"""What each viewer may know of a deal: the one place secrets are stripped.

docs/rules.md, "What each seat may know": during a deal a seat sees its own hand, the
face-up briscola (and, once drawn, who holds it until it is played), the stock count,
every card played and who won each trick, the teams' points, and -- with the 4-player
partners' option, once the stock is empty -- its partner's hand. Nothing else. After the
deal, everything is open.

Everything outside this package (API, event feed, bots) learns about a deal through
:func:`seat_view`, :func:`spectator_view`, :func:`full_view` or :func:`deal_events`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import Card
from .deal import Deal, team_of
from .errors import RulesError

JSON = dict[str, Any]


def _codes(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [c.code for c in cards]


def _cards(codes: Any, where: str) -> tuple[Card, ...]:
    if not isinstance(codes, list):
        raise RulesError(f"{where} must be a list of card codes", field=where)
    return tuple(Card.from_code(c) for c in codes)


@dataclass(frozen=True, slots=True)
class TrickView:
    leader: int
    cards: tuple[Card, ...]
    seats: tuple[int, ...]
    winner: int
    points: int

    def to_dict(self) -> JSON:
        return {
            "leader": self.leader,
            "cards": _codes(self.cards),
            "seats": list(self.seats),
            "winner": self.winner,
            "points": self.points,
        }

    @classmethod
    def from_dict(cls, data: JSON) -> TrickView:
        return cls(
            leader=int(data["leader"]),
            cards=_cards(data["cards"], "tricks[].cards"),
            seats=tuple(int(s) for s in data["seats"]),
            winner=int(data["winner"]),
            points=int(data["points"]),
        )


@dataclass(frozen=True, slots=True)
class SeatView:
    """A deal as one seat (or, with ``seat`` None, a spectator) may see it."""

    players: int
    dealer: int
    seat: int | None
    hand: tuple[Card, ...]
    partner_hand: tuple[Card, ...] | None
    hand_sizes: tuple[int, ...]
    briscola: Card
    trump: str
    briscola_on_table: bool
    briscola_holder: int | None
    stock_count: int
    leader: int
    table: tuple[tuple[int, Card], ...]
    tricks: tuple[TrickView, ...]
    points: tuple[int, int]
    turn: int | None
    ply: int
    legal: tuple[Card, ...]
    over: bool
    winner: int | None

    @property
    def team(self) -> int | None:
        return None if self.seat is None else team_of(self.seat)

    @property
    def played(self) -> list[Card]:
        """Every card played so far, in play order."""
        cards = [c for t in self.tricks for c in t.cards]
        cards.extend(c for _, c in self.table)
        return cards

    def to_dict(self) -> JSON:
        return {
            "players": self.players,
            "dealer": self.dealer,
            "seat": self.seat,
            "team": self.team,
            "hand": _codes(self.hand),
            "partner_hand": None if self.partner_hand is None else _codes(self.partner_hand),
            "hand_sizes": list(self.hand_sizes),
            "briscola": self.briscola.code,
            "trump": self.trump,
            "briscola_on_table": self.briscola_on_table,
            "briscola_holder": self.briscola_holder,
            "stock_count": self.stock_count,
            "leader": self.leader,
            "table": [{"seat": s, "card": c.code} for s, c in self.table],
            "tricks": [t.to_dict() for t in self.tricks],
            "points": list(self.points),
            "turn": self.turn,
            "ply": self.ply,
            "legal": _codes(self.legal),
            "over": self.over,
            "winner": self.winner,
        }

    @classmethod
    def from_dict(cls, data: JSON) -> SeatView:
        """Read a view back (a bot reading the API's JSON); raises on malformed input."""
        if not isinstance(data, dict):
            raise RulesError("not a seat view: expected a JSON object")
        try:
            partner = data.get("partner_hand")
            return cls(
                players=int(data["players"]),
                dealer=int(data["dealer"]),
                seat=None if data.get("seat") is None else int(data["seat"]),
                hand=_cards(data["hand"], "hand"),
                partner_hand=None if partner is None else _cards(partner, "partner_hand"),
                hand_sizes=tuple(int(n) for n in data["hand_sizes"]),
                briscola=Card.from_code(data["briscola"]),
                trump=str(data["trump"]),
                briscola_on_table=bool(data["briscola_on_table"]),
                briscola_holder=(
                    None if data.get("briscola_holder") is None else int(data["briscola_holder"])
                ),
                stock_count=int(data["stock_count"]),
                leader=int(data["leader"]),
                table=tuple((int(e["seat"]), Card.from_code(e["card"])) for e in data["table"]),
                tricks=tuple(TrickView.from_dict(t) for t in data["tricks"]),
                points=(int(data["points"][0]), int(data["points"][1])),
                turn=None if data.get("turn") is None else int(data["turn"]),
                ply=int(data["ply"]),
                legal=_cards(data.get("legal", []), "legal"),
                over=bool(data["over"]),
                winner=None if data.get("winner") is None else int(data["winner"]),
            )
        except RulesError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise RulesError(f"not a seat view: {exc!r}") from exc


@dataclass(frozen=True, slots=True)
class FullView:
    """Everything about a deal: open to its players once it is over."""

    public: SeatView
    deck: tuple[Card, ...]
    hands: tuple[tuple[Card, ...], ...]
    initial_hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]
    draws: tuple[tuple[int, Card], ...]
    moves: tuple[Card, ...]

    def to_dict(self) -> JSON:
        data = self.public.to_dict()
        data.update(
            deck=_codes(self.deck),
            hands=[_codes(h) for h in self.hands],
            initial_hands=[_codes(h) for h in self.initial_hands],
            stock=_codes(self.stock),
            draws=[[s, c.code] for s, c in self.draws],
            moves=_codes(self.moves),
        )
        return data


def _view(deal: Deal, seat: int | None, partners_last_hand: bool) -> SeatView:
    n = deal.players
    if seat is not None and (type(seat) is not int or not 0 <= seat < n):
        raise RulesError(f"no seat {seat} in a {n}-player deal", field="seat")
    hand: tuple[Card, ...] = () if seat is None else tuple(deal.hands[seat])
    partner: tuple[Card, ...] | None = None
    if (
        seat is not None
        and partners_last_hand
        and n == 4
        and deal.stock_count == 0
        and not deal.is_over
    ):
        partner = tuple(deal.hands[(seat + 2) % n])
    leader = deal.leader
    tricks = tuple(
        TrickView(
            t.leader,
            t.cards,
            tuple((t.leader + i) % n for i in range(len(t.cards))),
            t.winner,
            t.points,
        )
        for t in deal.tricks
    )
    return SeatView(
        players=n,
        dealer=deal.dealer,
        seat=seat,
        hand=hand,
        partner_hand=partner,
        hand_sizes=tuple(len(h) for h in deal.hands),
        briscola=deal.briscola,
        trump=deal.trump,
        briscola_on_table=deal.briscola_on_table,
        briscola_holder=deal.briscola_holder,
        stock_count=deal.stock_count,
        leader=leader,
        table=tuple(((leader + i) % n, c) for i, c in enumerate(deal.table)),
        tricks=tricks,
        points=(deal.points[0], deal.points[1]),
        turn=deal.turn,
        ply=deal.ply,
        legal=hand if seat is not None and seat == deal.turn else (),
        over=deal.is_over,
        winner=deal.winner,
    )


def seat_view(deal: Deal, seat: int, *, partners_last_hand: bool = True) -> SeatView:
    """The deal as ``seat`` may see it now."""
    return _view(deal, seat, partners_last_hand)


def spectator_view(deal: Deal) -> SeatView:
    """The deal as someone at no seat may see it: no hand at all."""
    return _view(deal, None, False)


class DealNotOverError(RulesError):
    code = "deal_not_over"
    status = 403


def full_view(deal: Deal, *, before_end: bool = False) -> FullView:
    """Everything: the deck order, every hand, the stock, every draw.

    Refuses while the deal is being played unless ``before_end`` is set, which only an
    administrator's path may do.
    """
    if not deal.is_over and not before_end:
        raise DealNotOverError("the deal is still being played: its cards are secret")
    n = deal.players
    dealt = 3 * n
    first = (deal.dealer + 1) % n
    initial: list[list[Card]] = [[] for _ in range(n)]
    for i in range(dealt):
        initial[(first + i) % n].append(deal.deck[i])
    return FullView(
        public=spectator_view(deal),
        deck=deal.deck,
        hands=tuple(tuple(h) for h in deal.hands),
        initial_hands=tuple(tuple(h) for h in initial),
        stock=deal.stock,
        draws=tuple((d.seat, d.card) for d in deal.draws),
        moves=tuple(deal.moves),
    )


def deal_events(deal: Deal, seat: int | None, *, before_end: bool = False) -> list[JSON]:
    """What happened in the deal, in order, as ``seat`` may know it.

    Every viewer gets the same number of events in the same order (so an event's
    position is a stable id); only the card in a ``hand_dealt`` or ``card_drawn`` event
    is hidden (``null``) from the other seats while the deal is played. The face-up
    briscola is public, so its draw shows the card to everyone. ``before_end`` shows every
    card although the deal is not over, as :func:`full_view` does: for the paths that may
    see everything (an administrator's, or a deal that ended early and was abandoned).
    """
    n = deal.players
    over = deal.is_over or before_end

    def known(owner: int) -> bool:
        return over or owner == seat

    first = (deal.dealer + 1) % n
    events: list[JSON] = [
        {
            "type": "deal_started",
            "dealer": deal.dealer,
            "briscola": deal.briscola.code,
            "first_to_play": first,
        }
    ]
    for s in range(n):
        cards = [deal.deck[i].code for i in range(3 * n) if (first + i) % n == s]
        events.append({"type": "hand_dealt", "seat": s, "cards": cards if known(s) else None})
    draws_by_trick: dict[int, list[tuple[int, Card]]] = {}
    for d in deal.draws:
        draws_by_trick.setdefault(d.after_trick, []).append((d.seat, d.card))
    ply = 0
    for number, trick in enumerate(deal.tricks):
        for i, card in enumerate(trick.cards):
            events.append(
                {
                    "type": "card_played",
                    "ply": ply,
                    "seat": (trick.leader + i) % n,
                    "card": card.code,
                }
            )
            ply += 1
        events.append(
            {
                "type": "trick_won",
                "trick": number,
                "winner": trick.winner,
                "cards": _codes(trick.cards),
                "points": trick.points,
            }
        )
        for s, card in draws_by_trick.get(number, ()):
            public = card is deal.briscola
            events.append(
                {
                    "type": "card_drawn",
                    "seat": s,
                    "card": card.code if public or known(s) else None,
                    "briscola": public,
                }
            )
    for i, card in enumerate(deal.table):
        events.append(
            {"type": "card_played", "ply": ply, "seat": (deal.leader + i) % n, "card": card.code}
        )
        ply += 1
    if deal.is_over:
        events.append(
            {
                "type": "deal_ended",
                "points": list(deal.points),
                "winner": deal.winner,
                "drawn": deal.is_drawn,
            }
        )
    return events
