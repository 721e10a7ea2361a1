"""The 40 cards of the Italian pack.

There are exactly 40 :class:`Card` objects, created once at import; every lookup
returns one of them, so cards compare by identity and are cheap to hash, and the
attributes a trick needs (suit, strength, points) are plain slot reads.
"""

from __future__ import annotations

from typing import Any, Final

from .errors import InvalidCardError

SUITS: Final = ("c", "d", "s", "b")
"""Suit letters: Coppe, Denari, Spade, Bastoni (the order of the canonical deck)."""

RANKS: Final = ("A", "3", "R", "C", "F", "7", "6", "5", "4", "2")
"""Rank codes, strongest first: a rank's strength is its position + 1."""

RANK_POINTS: Final = {"A": 11, "3": 10, "R": 4, "C": 3, "F": 2}

SUIT_NAMES: Final = {"c": "Coppe", "d": "Denari", "s": "Spade", "b": "Bastoni"}
RANK_NAMES: Final = {
    "A": "Asso",
    "3": "Tre",
    "R": "Re",
    "C": "Cavallo",
    "F": "Fante",
    "7": "Sette",
    "6": "Sei",
    "5": "Cinque",
    "4": "Quattro",
    "2": "Due",
}


class Card:
    """One card. Build it with :meth:`Card.from_code`; ``str(card)`` gives the code back."""

    __slots__ = ("index", "rank", "suit", "strength", "points", "code")

    index: int
    """Position in the canonical (unshuffled) deck, 0..39."""
    rank: str
    suit: str
    strength: int
    """1 for an Ace (strongest) .. 10 for a Two (weakest)."""
    points: int
    code: str

    def __init__(self) -> None:  # pragma: no cover - guarded
        raise TypeError("cards are fixed: use Card.from_code(code) or CARDS")

    @classmethod
    def _make(cls, index: int, rank: str, suit: str) -> Card:
        card = object.__new__(cls)
        set_ = object.__setattr__
        set_(card, "index", index)
        set_(card, "rank", rank)
        set_(card, "suit", suit)
        set_(card, "strength", RANKS.index(rank) + 1)
        set_(card, "points", RANK_POINTS.get(rank, 0))
        set_(card, "code", rank + suit)
        return card

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("cards are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("cards are immutable")

    @staticmethod
    def from_code(code: str) -> Card:
        """Parse a card code in any letter case (``"Ad"``, ``"ad"``, ``"AD"``)."""
        card = _BY_CODE.get(code) if isinstance(code, str) else None
        if card is None:
            if isinstance(code, str) and len(code) == 2:
                card = _BY_CODE.get(code[0].upper() + code[1].lower())
            if card is None:
                raise InvalidCardError(
                    f"{code!r} is not a card code: expected a rank ({''.join(RANKS)}) "
                    f"followed by a suit ({''.join(SUITS)}), e.g. 'Ad' or '3b'",
                    card=code if isinstance(code, str) else repr(code),
                )
        return card

    @property
    def name(self) -> str:
        return f"{RANK_NAMES[self.rank]} di {SUIT_NAMES[self.suit]}"

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card.from_code({self.code!r})"

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Card.from_code, (self.code,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: Any) -> Card:
        return self


CARDS: Final[tuple[Card, ...]] = tuple(
    Card._make(s * len(RANKS) + r, rank, suit)
    for s, suit in enumerate(SUITS)
    for r, rank in enumerate(RANKS)
)
"""All 40 cards in canonical order: suits c, d, s, b; within a suit, A 3 R C F 7 6 5 4 2."""

_BY_CODE: Final[dict[str, Card]] = {card.code: card for card in CARDS}

TOTAL_POINTS: Final = sum(card.points for card in CARDS)
assert TOTAL_POINTS == 120


def parse_card(code: str) -> Card:
    """Same as :meth:`Card.from_code`."""
    return Card.from_code(code)


def parse_cards(codes: list[str] | tuple[str, ...]) -> list[Card]:
    return [Card.from_code(code) for code in codes]
