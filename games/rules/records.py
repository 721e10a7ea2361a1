"""Deal records: a JSON object that replays to exactly one deal.

    {"format": "briscola-deal/1", "players": 2, "dealer": 0,
     "deck": ["Ad", ...40 codes], "seed": "optional", "moves": ["3b", ...]}

A seed may stand instead of the deck, or beside it (then the two must agree). A record
with fewer than all moves replays to the position it reaches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .cards import CARDS, Card
from .deal import PLAYER_COUNTS, Deal, Trick
from .errors import IllegalMoveError, InvalidCardError, RecordError
from .shuffle import Seed, shuffled_deck

RECORD_FORMAT = "briscola-deal/1"
_KEYS = {"format", "players", "dealer", "deck", "seed", "moves"}


@dataclass(frozen=True, slots=True)
class Replay:
    """What a record replays to."""

    deal: Deal
    complete: bool

    @property
    def tricks(self) -> list[Trick]:
        return self.deal.tricks

    def to_dict(self) -> dict[str, Any]:
        deal = self.deal
        return {
            "players": deal.players,
            "dealer": deal.dealer,
            "briscola": deal.briscola.code,
            "tricks": [
                {
                    "leader": t.leader,
                    "cards": [c.code for c in t.cards],
                    "winner": t.winner,
                    "points": t.points,
                }
                for t in deal.tricks
            ],
            "draws": [[d.seat, d.card.code] for d in deal.draws],
            "points": list(deal.points),
            "winner": deal.winner,
            "complete": self.complete,
        }


@dataclass(frozen=True, slots=True)
class DealRecord:
    players: int
    dealer: int
    deck: tuple[Card, ...]
    moves: tuple[Card, ...] = ()
    seed: str | None = None

    @classmethod
    def from_deal(cls, deal: Deal, *, seed: Seed | None = None) -> DealRecord:
        return cls(
            deal.players,
            deal.dealer,
            deal.deck,
            tuple(deal.moves),
            None if seed is None else str(seed),
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "players": self.players,
            "dealer": self.dealer,
        }
        if self.seed is not None:
            data["seed"] = self.seed
        data["deck"] = [c.code for c in self.deck]
        data["moves"] = [c.code for c in self.moves]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> DealRecord:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(
                f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                where="record",
            ) from exc
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> DealRecord:
        """Check a record's shape and cards (not its moves: see :meth:`replay`)."""
        if not isinstance(data, dict):
            raise RecordError("a record is a JSON object", where="record")
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise RecordError(f"unknown field(s) {', '.join(map(repr, unknown))}", where=unknown[0])
        if data.get("format") != RECORD_FORMAT:
            raise RecordError(
                f"expected {RECORD_FORMAT!r}, got {data.get('format')!r}", where="format"
            )
        players = data.get("players")
        if type(players) is not int or players not in PLAYER_COUNTS:
            raise RecordError(f"must be 2 or 4, got {players!r}", where="players")
        dealer = data.get("dealer")
        if type(dealer) is not int or not 0 <= dealer < players:
            raise RecordError(
                f"must be a seat from 0 to {players - 1}, got {dealer!r}", where="dealer"
            )
        seed = data.get("seed")
        if seed is not None and (type(seed) not in (str, int) or seed == ""):
            raise RecordError("must be a non-empty string or an integer", where="seed")
        if "deck" in data:
            deck = _card_list(data["deck"], "deck")
            if len(deck) != len(CARDS):
                raise RecordError(f"must hold 40 cards, got {len(deck)}", where="deck")
            seen: dict[Card, int] = {}
            for i, card in enumerate(deck):
                if card in seen:
                    raise RecordError(
                        f"duplicate card {card} (also at deck[{seen[card]}])",
                        where=f"deck[{i}]",
                    )
                seen[card] = i
            if seed is not None and tuple(deck) != shuffled_deck(seed):
                raise RecordError("the deck is not the one the seed gives", where="seed")
        elif seed is not None:
            deck = list(shuffled_deck(seed))
        else:
            raise RecordError("a record needs a deck or a seed", where="deck")
        moves = _card_list(data.get("moves", []), "moves")
        return cls(players, dealer, tuple(deck), tuple(moves), None if seed is None else str(seed))

    def replay(self) -> Replay:
        """Play the moves; raise :class:`RecordError` naming the first illegal one."""
        deal = Deal(self.players, self.dealer, self.deck)
        for i, card in enumerate(self.moves):
            try:
                deal.play(card)
            except IllegalMoveError as exc:
                raise RecordError(exc.message, where=f"moves[{i}]", reason=exc.code) from exc
        return Replay(deal, complete=deal.is_over)


def _card_list(value: Any, where: str) -> list[Card]:
    if not isinstance(value, list):
        raise RecordError("must be a list of card codes", where=where)
    cards = []
    for i, code in enumerate(value):
        try:
            cards.append(Card.from_code(code))
        except InvalidCardError as exc:
            raise RecordError(exc.message, where=f"{where}[{i}]") from exc
    return cards


def replay_record(data: Any) -> Replay:
    """Parse and replay a record given as a dict (or JSON text)."""
    record = DealRecord.from_json(data) if isinstance(data, str) else DealRecord.from_dict(data)
    return record.replay()
