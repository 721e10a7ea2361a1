"""The 40 cards (docs/rules.md, "Cards"): codes, strength, points, parsing, identity."""

import copy
import itertools
import pickle

import pytest

from games.rules import (
    CARDS,
    RANKS,
    SUITS,
    TOTAL_POINTS,
    Card,
    IllegalMoveError,
    InvalidCardError,
    RulesError,
    parse_card,
    parse_cards,
)

# docs/rules.md's table, copied by hand: rank code -> (strength, points). 1 is the strongest.
RULES_TABLE = {
    "A": (1, 11),
    "3": (2, 10),
    "R": (3, 4),
    "C": (4, 3),
    "F": (5, 2),
    "7": (6, 0),
    "6": (7, 0),
    "5": (8, 0),
    "4": (9, 0),
    "2": (10, 0),
}
RULES_SUITS = {"c": "Coppe", "d": "Denari", "s": "Spade", "b": "Bastoni"}
ALL_CODES = [rank + suit for suit in RULES_SUITS for rank in RULES_TABLE]


def letter_cases(code: str) -> set[str]:
    """Every upper/lower-case spelling of a code ("Ad" -> Ad, AD, ad, aD)."""
    options = [{ch.lower(), ch.upper()} for ch in code]
    return {"".join(p) for p in itertools.product(*options)}


def test_there_are_forty_distinct_cards_four_suits_ten_ranks():
    assert len(CARDS) == 40
    assert len(set(CARDS)) == 40
    assert sorted(c.code for c in CARDS) == sorted(ALL_CODES)
    assert SUITS == ("c", "d", "s", "b")
    assert tuple(RULES_TABLE) == RANKS


def test_canonical_order_is_suits_c_d_s_b_then_ranks_strongest_first():
    assert [c.code for c in CARDS] == ALL_CODES
    assert [c.index for c in CARDS] == list(range(40))


@pytest.mark.parametrize("code", ALL_CODES)
def test_strength_and_points_follow_the_rules_table(code):
    card = Card.from_code(code)
    strength, points = RULES_TABLE[code[0]]
    assert (card.rank, card.suit) == (code[0], code[1])
    assert card.strength == strength
    assert card.points == points


def test_the_deck_holds_120_points():
    assert sum(c.points for c in CARDS) == 120
    assert TOTAL_POINTS == 120
    # 11 + 10 + 4 + 3 + 2 per suit
    for suit in SUITS:
        assert sum(c.points for c in CARDS if c.suit == suit) == 30


def test_italian_names():
    assert Card.from_code("Ad").name == "Asso di Denari"
    assert Card.from_code("3b").name == "Tre di Bastoni"
    assert Card.from_code("Cc").name == "Cavallo di Coppe"
    assert Card.from_code("Rs").name == "Re di Spade"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("Ad", "Ad"),
        ("ad", "Ad"),
        ("AD", "Ad"),
        ("aD", "Ad"),
        ("rs", "Rs"),
        ("RS", "Rs"),
        ("cc", "Cc"),
        ("CC", "Cc"),
        ("3B", "3b"),
        ("fS", "Fs"),
    ],
)
def test_parse_accepts_any_letter_case(text, canonical):
    card = Card.from_code(text)
    assert str(card) == canonical
    assert card.code == canonical
    assert parse_card(text) is card


@pytest.mark.parametrize("canonical", ALL_CODES)
def test_every_spelling_of_every_code_parses_to_the_canonical_card(canonical):
    spellings = letter_cases(canonical)
    assert canonical in spellings
    assert len(spellings) == (4 if canonical[0].isalpha() else 2)
    for text in spellings:
        assert str(Card.from_code(text)) == canonical
        assert Card.from_code(text) is Card.from_code(canonical)


def test_parse_cards_parses_a_list_in_order():
    assert [c.code for c in parse_cards(["ad", "3B", "rs"])] == ["Ad", "3b", "Rs"]
    assert parse_cards([]) == []


BAD_INPUTS = ["1d", "Ax", "", "Add", " Ad", "Ad ", "A", "dA", "10d", "Kd", "Jd", "Qc", None, 5]


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=repr)
def test_bad_input_is_rejected_with_invalid_card_error_naming_it(bad):
    with pytest.raises(InvalidCardError) as caught:
        Card.from_code(bad)
    error = caught.value
    assert error.code == "invalid_card"
    assert error.status == 400
    assert repr(bad) in str(error)
    assert repr(bad) in error.message
    # Bad syntax is a ValueError and a RulesError, but never an illegal move.
    assert isinstance(error, ValueError)
    assert isinstance(error, RulesError)
    assert not isinstance(error, IllegalMoveError)


def test_parse_cards_rejects_a_bad_code_in_the_list():
    with pytest.raises(InvalidCardError, match="'Zz'"):
        parse_cards(["Ad", "Zz"])


def test_cards_are_interned():
    for card in CARDS:
        assert Card.from_code(card.code) is card
        assert Card.from_code(card.code.swapcase()) is card
    assert Card.from_code("ad") is CARDS[10]  # Denari starts at index 10


def test_cards_are_immutable_and_cannot_be_constructed():
    card = Card.from_code("Ad")
    with pytest.raises(AttributeError):
        card.points = 99
    with pytest.raises(AttributeError):
        card.whatever = 1
    assert card.points == 11
    with pytest.raises(TypeError):
        Card()


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_gives_back_the_same_object(protocol):
    for card in CARDS:
        assert pickle.loads(pickle.dumps(card, protocol=protocol)) is card
    hand = list(CARDS[:3])
    assert all(a is b for a, b in zip(pickle.loads(pickle.dumps(hand)), hand, strict=True))


def test_copy_and_deepcopy_give_back_the_same_object():
    for card in CARDS:
        assert copy.copy(card) is card
        assert copy.deepcopy(card) is card
    nested = {"hand": [CARDS[0], CARDS[39]]}
    copied = copy.deepcopy(nested)
    assert copied["hand"] is not nested["hand"]
    assert copied["hand"][0] is CARDS[0] and copied["hand"][1] is CARDS[39]


def test_equality_hashing_and_sorting():
    assert Card.from_code("Ad") == Card.from_code("aD")
    assert Card.from_code("Ad") != Card.from_code("Ac")
    assert len({Card.from_code(c) for c in ["Ad", "ad", "AD", "3b"]}) == 2
    assert sorted(reversed(CARDS)) == list(CARDS)


def test_repr_round_trips():
    for card in CARDS:
        assert eval(repr(card), {"Card": Card}) is card


def test_card_attributes_cannot_be_deleted() -> None:
    import pytest

    from games.rules import Card as C

    card = C.from_code("Ad")
    with pytest.raises(AttributeError):
        del card.points
    assert card.points == 11
