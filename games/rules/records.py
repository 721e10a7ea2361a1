"""Deal records: a JSON object that replays to exactly one deal.

    {"format": "briscola-deal/1", "players": 2, "dealer": 0,
     "deck": ["Ad", ...40 codes], "seed": "optional", "moves": ["3b", ...],
     "commitment": "optional sha256 hex of the seed",
     "result": {"points": [71, 49], "winner": 0}}

A seed may stand instead of the deck, or beside it (then the two must agree). A record
with fewer than all moves replays to the position it reaches. ``commitment`` and
``result`` are optional: what the server published before the deal and recorded after
it, so that :func:`verify_record` can check a deal offline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .cards import CARDS, Card
from .deal import PLAYER_COUNTS, Deal, Trick
from .errors import IllegalMoveError, InvalidCardError, RecordError
from .shuffle import SHUFFLE_ALGORITHM, Seed, seed_commitment, shuffled_deck

RECORD_FORMAT = "briscola-deal/1"
_KEYS = {"format", "players", "dealer", "deck", "seed", "moves", "commitment", "result"}
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class RecordResult:
    """The result a server recorded for a deal: each team's points and the winning team."""

    points: tuple[int, int]
    winner: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"points": list(self.points), "winner": self.winner}

    @classmethod
    def from_dict(cls, data: Any) -> RecordResult:
        if not isinstance(data, dict) or set(data) - {"points", "winner"}:
            raise RecordError(
                'must be an object {"points": [team 0, team 1], "winner": 0, 1 or null}',
                where="result",
            )
        points = data.get("points")
        if (
            not isinstance(points, list)
            or len(points) != 2
            or any(type(p) is not int or not 0 <= p <= 120 for p in points)
        ):
            raise RecordError(
                f"must be two integers from 0 to 120, got {points!r}", where="result.points"
            )
        winner = data.get("winner")
        if winner is not None and (type(winner) is not int or winner not in (0, 1)):
            raise RecordError(f"must be 0, 1 or null, got {winner!r}", where="result.winner")
        return cls((points[0], points[1]), winner)


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
    commitment: str | None = None
    result: RecordResult | None = None

    @classmethod
    def from_deal(
        cls,
        deal: Deal,
        *,
        seed: Seed | None = None,
        commitment: str | None = None,
        result: RecordResult | None = None,
    ) -> DealRecord:
        return cls(
            deal.players,
            deal.dealer,
            deal.deck,
            tuple(deal.moves),
            None if seed is None else str(seed),
            commitment,
            result,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "players": self.players,
            "dealer": self.dealer,
        }
        if self.seed is not None:
            data["seed"] = self.seed
        if self.commitment is not None:
            data["commitment"] = self.commitment
        data["deck"] = [c.code for c in self.deck]
        data["moves"] = [c.code for c in self.moves]
        if self.result is not None:
            data["result"] = self.result.to_dict()
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
        commitment = data.get("commitment")
        if commitment is not None and (
            not isinstance(commitment, str) or not _HEX64.fullmatch(commitment)
        ):
            raise RecordError("must be 64 lowercase hex digits (SHA-256)", where="commitment")
        result = None if data.get("result") is None else RecordResult.from_dict(data["result"])
        return cls(
            players,
            dealer,
            tuple(deck),
            tuple(moves),
            None if seed is None else str(seed),
            commitment,
            result,
        )

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


# -- verifying a record ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """One check of :func:`verify_record`."""

    name: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


def verify_record(data: Any) -> list[Check]:
    """Check a finished deal's record against what the server published.

    Four checks, in order: ``commitment`` (SHA-256 of the seed is the published
    commitment), ``deck`` (the record's deck is the one the seed gives), ``moves`` (the
    moves replay legally on the seed's deck) and ``result`` (the replay gives the recorded
    points and winner). A failed check is reported, not raised; a record that cannot be
    read at all, or has no seed or commitment to check, raises :class:`RecordError`.
    """
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise RecordError(
                f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                where="record",
            ) from exc
    if not isinstance(data, dict):
        raise RecordError("a record is a JSON object", where="record")
    for key in ("seed", "commitment"):
        if data.get(key) is None:
            raise RecordError(f"verifying a record needs its {key}", where=key)
    # Read the record without asking the deck to agree with the seed: that is a check.
    shape = {k: v for k, v in data.items() if k != "seed"} if "deck" in data else data
    record = DealRecord.from_dict(shape)
    seed = data["seed"]
    if type(seed) not in (str, int) or seed == "":
        raise RecordError("must be a non-empty string or an integer", where="seed")
    checks: list[Check] = []

    actual = seed_commitment(seed)
    published = record.commitment
    checks.append(
        Check(
            "commitment",
            actual == published,
            f"sha256(seed) is {actual}"
            + (", the published commitment" if actual == published else f", not {published}"),
        )
    )

    expected = shuffled_deck(seed)
    if "deck" not in data:
        checks.append(Check("deck", True, "no deck in the record: the seed's deck is used"))
    elif record.deck == expected:
        checks.append(
            Check(
                "deck",
                True,
                f"the 40 cards are in the order the seed gives ({SHUFFLE_ALGORITHM})",
            )
        )
    else:
        first = next(
            i for i, (a, b) in enumerate(zip(record.deck, expected, strict=True)) if a != b
        )
        checks.append(
            Check(
                "deck",
                False,
                f"deck[{first}] is {record.deck[first]}, the seed gives {expected[first]}",
            )
        )

    seeded = DealRecord(record.players, record.dealer, expected, record.moves)
    replay: Replay | None = None
    try:
        replay = seeded.replay()
    except RecordError as exc:
        checks.append(Check("moves", False, f"{exc.message} (on the deck the seed gives)"))
    if replay is not None:
        n = len(record.moves)
        state = "the deal is complete" if replay.complete else "the deal stops before its end"
        checks.append(Check("moves", True, f"{n} moves replay legally; {state}"))

    checks.append(result_check(record.result, replay))
    return checks


def result_check(result: RecordResult | None, replay: Replay | None) -> Check:
    """The ``result`` check: the replay gives the recorded points and winner."""
    if result is None:
        return Check("result", False, "the record has no result to compare")
    if replay is None:
        return Check("result", False, "the moves do not replay, so no result to compare")
    points = (replay.deal.points[0], replay.deal.points[1])
    winner = replay.deal.winner
    same = points == result.points and winner == result.winner
    return Check(
        "result",
        same,
        f"the replay gives points {points[0]}-{points[1]}, winner {_team(winner)}; "
        f"recorded {result.points[0]}-{result.points[1]}, winner {_team(result.winner)}",
    )


def _team(team: int | None) -> str:
    return "none" if team is None else f"team {team}"


# -- the text notation -------------------------------------------------------------------


def record_text(record: DealRecord, *, names: list[str] | None = None) -> str:
    """The deal in a readable notation: a header, then one line per trick.

    ::

        Format: briscola-deal/1
        Players: S0 alice, S1 bob
        ...
        7. Ad 3d  winner S0 +21

    Cards of a trick are in play order from its leader (the previous trick's winner).
    """
    deal = Deal(record.players, record.dealer, record.deck)
    stopped: str | None = None
    for i, card in enumerate(record.moves):
        try:
            deal.play(card)
        except IllegalMoveError as exc:
            stopped = f"moves[{i}]: {exc.message}"
            break
    n = record.players
    seats = [f"S{s}" + (f" {names[s]}" if names and s < len(names) else "") for s in range(n)]
    lines = [
        f"Format: {RECORD_FORMAT}",
        f"Players: {', '.join(seats)}",
        "Teams: " + ("S0 | S1" if n == 2 else "S0 S2 | S1 S3"),
        f"Dealer: S{record.dealer}",
        f"Briscola: {deal.briscola}",
        f"Seed: {record.seed if record.seed is not None else '-'}",
        f"Commitment: {record.commitment if record.commitment is not None else '-'}",
    ]
    if record.result is not None:
        pts = record.result.points
        lines.append(f"Result: {pts[0]}-{pts[1]}, winner {_team(record.result.winner)}")
    else:
        lines.append("Result: -")
    over = "complete" if deal.is_over else f"stopped after {deal.ply} moves"
    lines.append(f"Replay: {deal.points[0]}-{deal.points[1]}, {over}")
    lines.append("")
    for number, trick in enumerate(deal.tricks, start=1):
        cards = " ".join(c.code for c in trick.cards)
        lines.append(f"{number}. {cards}  winner S{trick.winner} +{trick.points}")
    if deal.table:
        cards = " ".join(c.code for c in deal.table)
        lines.append(f"{len(deal.tricks) + 1}. {cards}  (in play)")
    if stopped is not None:
        lines.append(f"! {stopped}")
    return "\n".join(lines) + "\n"
