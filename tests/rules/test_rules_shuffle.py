"""Seeded shuffling (games/rules/shuffle.py): determinism, golden values, and an
independent re-implementation of the algorithm *as its docstring documents it*, so that
the docstring (which outsiders use to check a deal) and the code cannot drift apart."""

import hashlib
import hmac
import re

import pytest

from games.rules import (
    CARDS,
    SHUFFLE_ALGORITHM,
    first_dealer,
    new_seed,
    seed_commitment,
    shuffled_deck,
)
from games.rules import shuffle as shuffle_module

# Golden decks: if one of these changes, every stored deal in the world replays
# differently. Never update them without a new SHUFFLE_ALGORITHM version.
GOLDEN_DECKS = {
    "briscola": (
        "7d Rc 2s 6s 3b 2d Ab 6b Cd Ad 4b 5d Rd 7s Cs As 4s 5c 3d 4c "
        "2b Cc 5b 4d Ac Fc Fb 6c Cb 5s Fd Rs 3s 3c 2c 7c 7b 6d Fs Rb"
    ),
    "0": (
        "Cs Fd Fc As 2d Cb 7b 3d 4b 5s Fs 6s 4d Rb Rc 5c 3c 6c Cd 2s "
        "4s 7c Fb Ac Rd 2b 5d Ad 4c 2c 5b 3s Rs 6d 6b 3b 7s Ab Cc 7d"
    ),
    42: (
        "2d 3c Cb 7d Fb 5c 7s 6c Rc Cd 4d 5s 2c Rd 6s 3s Fd 3b Ab 7c "
        "5b As 4c Cs Fc 2s 4s Rs Rb Fs 5d Ad Cc 2b 4b 6d 3d Ac 6b 7b"
    ),
}
# seed -> (first dealer with 2 players, with 4 players)
GOLDEN_FIRST_DEALERS = {
    "briscola": (0, 0),
    "0": (1, 3),
    42: (0, 2),
    "a": (0, 2),
    "b": (1, 1),
    "match-1": (1, 3),
}


# -- reference implementation, written from the module docstring -----------------------

DOC = shuffle_module.__doc__ or ""


def _from_doc(pattern: str) -> str:
    found = re.search(pattern, DOC)
    assert found, f"the shuffle docstring no longer documents {pattern!r}"
    return found.group(1)


# The labels and the canonical order are read out of the docstring itself.
DOC_DECK_LABEL = _from_doc(r'``label`` is\s+``b"([^"]+)"`` for the deck').encode()
DOC_DEALER_LABEL = _from_doc(r'on the stream with label\s+``b"([^"]+)"``').encode()
DOC_SUITS = _from_doc(r"suits ``([a-z ]+)``").split()
DOC_RANKS = _from_doc(r"ranks ``([A-Z0-9 ]+)``").split()


class DocStream:
    """Step 2 and 3 of the docstring: HMAC-SHA256 counter-mode words, and below(n)."""

    def __init__(self, seed, label: bytes) -> None:
        self.key = str(seed).encode("utf-8")  # step 1: integers in decimal
        self.label = label
        self.counter = 0
        self.buffer = b""

    def word(self) -> int:
        if not self.buffer:
            message = self.label + self.counter.to_bytes(8, "big")
            self.buffer = hmac.new(self.key, message, hashlib.sha256).digest()
            self.counter += 1
        chunk, self.buffer = self.buffer[:8], self.buffer[8:]
        return int.from_bytes(chunk, "big")

    def below(self, n: int) -> int:
        while True:
            x = self.word()
            if x < 2**64 - (2**64 % n):
                return x % n


def doc_shuffled_deck(seed) -> list[str]:
    deck = [rank + suit for suit in DOC_SUITS for rank in DOC_RANKS]  # step 4
    stream = DocStream(seed, DOC_DECK_LABEL)
    for i in range(39, 0, -1):
        j = stream.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def doc_first_dealer(seed, players: int) -> int:
    return DocStream(seed, DOC_DEALER_LABEL).below(players)


def codes(deck) -> list[str]:
    return [c.code for c in deck]


SEEDS_200 = (
    [f"seed-{i}" for i in range(120)]
    + list(range(-10, 60))
    + ["briscola", "çà€🂡", "0" * 100, "a b c", str(2**70), 2**70, -(2**63)]
    + ["x" * n for n in range(1, 4)]
)


# -- tests ------------------------------------------------------------------------------


def test_the_docstring_still_documents_the_constants_the_reference_reads():
    assert SHUFFLE_ALGORITHM == "briscola-shuffle/1"
    assert SHUFFLE_ALGORITHM in DOC
    assert DOC_DECK_LABEL == b"briscola-deck/1"
    assert DOC_DEALER_LABEL == b"briscola-dealer/1"
    assert DOC_SUITS == ["c", "d", "s", "b"]
    assert DOC_RANKS == ["A", "3", "R", "C", "F", "7", "6", "5", "4", "2"]
    assert "HMAC-SHA256" in DOC and "big-endian" in DOC and "Fisher" in DOC


def test_reference_implementation_agrees_with_shuffled_deck_for_200_seeds():
    assert len(SEEDS_200) == 200
    for seed in SEEDS_200:
        assert codes(shuffled_deck(seed)) == doc_shuffled_deck(seed), seed


def test_reference_implementation_agrees_with_first_dealer_for_200_seeds():
    for seed in SEEDS_200:
        for players in (2, 4):
            assert first_dealer(seed, players) == doc_first_dealer(seed, players), seed


def test_reference_implementation_reproduces_the_golden_decks():
    for seed, golden in GOLDEN_DECKS.items():
        assert doc_shuffled_deck(seed) == golden.split()


def test_rejection_sampling_rejects_the_biased_top_of_the_range():
    # 2**64 % 3 == 1, so the single word 2**64 - 1 must be rejected and the next word used.
    below = shuffle_module._below
    assert below(iter([2**64 - 1, 5]), 3) == 2
    assert below(iter([2**64 - 2, 5]), 3) == (2**64 - 2) % 3
    # n a power of two: nothing is ever rejected.
    assert below(iter([2**64 - 1]), 4) == 3


@pytest.mark.parametrize("seed", list(GOLDEN_DECKS))
def test_golden_decks(seed):
    assert codes(shuffled_deck(seed)) == GOLDEN_DECKS[seed].split()


def test_an_integer_seed_is_its_decimal_string():
    assert shuffled_deck(42) == shuffled_deck("42")
    assert shuffled_deck(0) == shuffled_deck("0")
    assert first_dealer(42, 4) == first_dealer("42", 4)


@pytest.mark.parametrize("seed", list(GOLDEN_FIRST_DEALERS))
def test_golden_first_dealers(seed):
    assert (first_dealer(seed, 2), first_dealer(seed, 4)) == GOLDEN_FIRST_DEALERS[seed]


def test_first_dealer_is_a_seat_and_every_seat_can_deal_first():
    for players in (2, 4):
        dealers = {first_dealer(f"m{i}", players) for i in range(200)}
        assert dealers == set(range(players))


def test_seed_commitment_is_sha256_hex_of_the_seed():
    assert seed_commitment("briscola") == hashlib.sha256(b"briscola").hexdigest()
    assert seed_commitment("briscola") == (
        "a4a1906afbae55d3750f3b19ac0fba52e11f22ce43ea1d05e41034c85d9f39a8"
    )
    assert seed_commitment(42) == hashlib.sha256(b"42").hexdigest()
    assert seed_commitment("çà") == hashlib.sha256("çà".encode()).hexdigest()


def test_same_seed_gives_the_same_deck_every_call():
    for seed in ["briscola", "x", 7]:
        first = shuffled_deck(seed)
        assert shuffled_deck(seed) == first
        assert shuffled_deck(seed) == first  # no hidden state between calls
        assert isinstance(first, tuple)


def test_different_seeds_give_different_decks():
    decks = {shuffled_deck(f"s{i}") for i in range(300)}
    assert len(decks) == 300
    assert shuffled_deck("a") != shuffled_deck("b")


def test_a_deck_is_a_permutation_of_the_forty_cards():
    for seed in ["briscola", "0", 42, "zzz"]:
        deck = shuffled_deck(seed)
        assert len(deck) == 40
        assert sorted(deck) == list(CARDS)
        assert all(card is CARDS[card.index] for card in deck)


def test_every_card_reaches_position_0_over_4000_seeds():
    firsts = {shuffled_deck(i)[0] for i in range(4000)}
    assert firsts == set(CARDS)


@pytest.mark.parametrize("bad", [None, 1.5, True, b"bytes", ["a"]], ids=repr)
def test_a_seed_is_a_string_or_an_integer(bad):
    with pytest.raises(TypeError):
        shuffled_deck(bad)
    with pytest.raises(TypeError):
        seed_commitment(bad)


def test_new_seed_is_128_random_bits_in_hex():
    seeds = {new_seed() for _ in range(50)}
    assert len(seeds) == 50
    for seed in seeds:
        assert re.fullmatch(r"[0-9a-f]{32}", seed)


def test_empty_seed_is_refused_so_every_record_with_a_seed_reads_back() -> None:
    import pytest

    from games.rules import shuffled_deck as deck_of

    with pytest.raises(ValueError, match="not empty"):
        deck_of("")
