"""Deck order from a seed: a documented algorithm that never changes.

The algorithm, ``briscola-shuffle/1`` (anyone can re-implement it to check a deal):

1. ``key`` is the seed as UTF-8 bytes (an integer seed is first written in decimal).
2. A byte stream is the concatenation of the blocks
   ``HMAC-SHA256(key, label + counter)`` for ``counter = 0, 1, 2, ...``, where ``label`` is
   ``b"briscola-deck/1"`` for the deck and ``counter`` is 8 bytes, big-endian.
3. Random integers are read from the stream 8 bytes at a time (unsigned, big-endian).
   ``below(n)``: read ``x`` until ``x < 2**64 - (2**64 % n)``, then answer ``x % n``
   (rejection sampling: no modulo bias).
4. Start from the canonical deck (suits ``c d s b``; ranks ``A 3 R C F 7 6 5 4 2``
   within a suit) and run Fisher–Yates: for ``i`` from 39 down to 1, swap positions
   ``i`` and ``below(i + 1)``.

The first dealer of a match is ``below(players)`` on the stream with label
``b"briscola-dealer/1"``. The published commitment of a seed is the lowercase hex
SHA-256 of its UTF-8 bytes; seeds made by :func:`new_seed` carry 128 random bits, so the
commitment cannot be reversed by guessing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator

from .cards import CARDS, Card

SHUFFLE_ALGORITHM = "briscola-shuffle/1"
_DECK_LABEL = b"briscola-deck/1"
_DEALER_LABEL = b"briscola-dealer/1"
_TWO_64 = 1 << 64

Seed = str | int


def _key(seed: Seed) -> bytes:
    if isinstance(seed, bool) or not isinstance(seed, str | int):
        raise TypeError(f"a seed is a string or an integer, not {type(seed).__name__}")
    if seed == "":
        raise ValueError("a seed is not empty")
    return str(seed).encode("utf-8")


def _words(seed: Seed, label: bytes) -> Iterator[int]:
    key = _key(seed)
    counter = 0
    while True:
        block = hmac.new(key, label + counter.to_bytes(8, "big"), hashlib.sha256).digest()
        for offset in range(0, 32, 8):
            yield int.from_bytes(block[offset : offset + 8], "big")
        counter += 1


def _below(words: Iterator[int], n: int) -> int:
    limit = _TWO_64 - (_TWO_64 % n)
    while True:
        x = next(words)
        if x < limit:
            return x % n


def shuffled_deck(seed: Seed) -> tuple[Card, ...]:
    """The 40 cards in the order the seed gives (``deck[0]`` is dealt first)."""
    deck = list(CARDS)
    words = _words(seed, _DECK_LABEL)
    for i in range(len(deck) - 1, 0, -1):
        j = _below(words, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def first_dealer(seed: Seed, players: int) -> int:
    """The seat that deals a match's first deal, drawn from the seed."""
    return _below(_words(seed, _DEALER_LABEL), players)


def seed_commitment(seed: Seed) -> str:
    """SHA-256 (hex) of the seed: published before a deal, checked after it."""
    return hashlib.sha256(_key(seed)).hexdigest()


def new_seed() -> str:
    """A fresh unguessable seed (128 bits, hex)."""
    return secrets.token_hex(16)
