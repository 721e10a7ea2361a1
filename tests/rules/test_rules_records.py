"""Deal records (games/rules/records.py): golden records with their expected replays,
and every way a record can be wrong, each named by where it is wrong.

Golden files in tests/rules/data: ``NAME.json`` is a record, ``NAME.replay.json`` what it
must replay to (``Replay.to_dict()``, the same JSON ``python -m games.rules replay`` prints).
"""

import json
from pathlib import Path

import pytest

from games.rules import (
    RECORD_FORMAT,
    Deal,
    DealRecord,
    RecordError,
    Replay,
    replay_record,
    shuffled_deck,
)

DATA = Path(__file__).parent / "data"
GOLDEN = sorted(
    p.name.removesuffix(".json") for p in DATA.glob("*.json") if ".replay" not in p.name
)


def load(name):
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def expected_replay(name):
    return json.loads((DATA / f"{name}.replay.json").read_text(encoding="utf-8"))


def test_there_are_golden_records_of_each_kind():
    assert {"deal_2p_complete", "deal_4p_complete", "deal_2p_partial", "deal_2p_drawn"} <= set(
        GOLDEN
    )
    for name in GOLDEN:
        assert (DATA / f"{name}.replay.json").exists()


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_record_replays_to_its_golden_output(name):
    text = (DATA / f"{name}.json").read_text(encoding="utf-8")
    assert replay_record(text).to_dict() == expected_replay(name)
    assert replay_record(load(name)).to_dict() == expected_replay(name)


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_record_round_trips(name):
    record = DealRecord.from_dict(load(name))
    assert DealRecord.from_json(record.to_json()) == record
    replay = record.replay()
    again = DealRecord.from_deal(replay.deal, seed=record.seed)
    assert again == record


def test_golden_2p_complete_checked_by_hand():
    # Checked by hand against docs/rules.md, from the deck in deal_2p_complete.json:
    #   dealer 0, so seat 1 (to the dealer's right) gets deck[0], [2], [4] = 7d 2s 3b and
    #   leads; seat 0 gets Rc 6s 2d. deck[6] = Ab is face up: Batons are trump.
    #   Trick 1: seat 1 leads 2s, seat 0 plays Rc. Rc is off-suit and not trump, so it
    #     cannot win however high: 2s wins, seat 1 takes 4 points (the King).
    #     Seat 1 draws first (deck[7] = 6b), then seat 0 (deck[8] = Cd).
    #   Trick 2: seat 1 leads 6b (a trump), seat 0 plays Cd: trump wins, 3 points to seat 1.
    #     Draws: seat 1 Ad (deck[9]), seat 0 4b (deck[10]).
    #   Trick 3: seat 1 leads 3b (trump), seat 0 6s: seat 1 wins 10.
    #     Draws: seat 1 5d, seat 0 Rd.
    #   Trick 4: seat 1 leads 5d, seat 0 trumps with 4b: the lowest trump beats the led suit,
    #     seat 0 wins (0 points) and so draws first: seat 0 7s (deck[13]), seat 1 Cs.
    #   Trick 5: seat 0 leads 7s, seat 1 throws the Ace of Coins: off-suit, no trump, so the
    #     7 wins and seat 0 takes the 11 points.
    #   Trick 17: seat 1 leads 6d, seat 0 Fs (off-suit): seat 1 wins, draws deck[39] = Rb,
    #     and the loser, seat 0, takes the face-up Ab. Final score 64-56: team 0 wins.
    replay = expected_replay("deal_2p_complete")
    assert replay["briscola"] == "Ab"
    assert replay["tricks"][:5] == [
        {"leader": 1, "cards": ["2s", "Rc"], "winner": 1, "points": 4},
        {"leader": 1, "cards": ["6b", "Cd"], "winner": 1, "points": 3},
        {"leader": 1, "cards": ["3b", "6s"], "winner": 1, "points": 10},
        {"leader": 1, "cards": ["5d", "4b"], "winner": 0, "points": 0},
        {"leader": 0, "cards": ["7s", "Ad"], "winner": 0, "points": 11},
    ]
    assert replay["draws"][:8] == [
        [1, "6b"],
        [0, "Cd"],
        [1, "Ad"],
        [0, "4b"],
        [1, "5d"],
        [0, "Rd"],
        [0, "7s"],
        [1, "Cs"],
    ]
    assert replay["tricks"][16] == {"leader": 1, "cards": ["6d", "Fs"], "winner": 1, "points": 2}
    assert replay["draws"][-2:] == [[1, "Rb"], [0, "Ab"]]
    assert replay["points"] == [64, 56] and replay["winner"] == 0 and replay["complete"]
    assert len(replay["tricks"]) == 20 and len(replay["draws"]) == 34


def test_golden_4p_complete_checked_by_hand():
    # Dealer 3, so seat 0 leads. Hands (deck[i] goes to seat i % 4): seat 0 Cs 2d 4b,
    # seat 1 Fd Cb 5s, seat 2 Fc 7b Fs, seat 3 As 3d 6s. deck[12] = 4d: Coins are trump.
    #   Trick 1: Cs Cb Fc 6s. Spades led; the Knight beats the 6; Cb and Fc are off-suit.
    #     Seat 0 wins 3 + 3 + 2 = 8, then all four draw: seat 0 Rb, 1 Rc, 2 5c, 3 3c.
    #   Trick 2: 4b 5s 7b As. Batons led; the 7 beats the 4; the Ace of Spades is off-suit
    #     and cannot win: seat 2 wins 11 and draws first (6c), then seats 3, 0, 1.
    #   Trick 3: seat 2 leads Fs; seat 3 trumps with 3d: seat 3 wins 2 + 10 + 4 = 16.
    replay = expected_replay("deal_4p_complete")
    assert replay["briscola"] == "4d"
    assert [(t["winner"], t["points"]) for t in replay["tricks"][:3]] == [(0, 8), (2, 11), (3, 16)]
    assert replay["draws"][:8] == [
        [0, "Rb"],
        [1, "Rc"],
        [2, "5c"],
        [3, "3c"],
        [2, "6c"],
        [3, "Cd"],
        [0, "2s"],
        [1, "4s"],
    ]
    assert len(replay["tricks"]) == 10 and len(replay["draws"]) == 28
    assert sum(replay["points"]) == 120 and replay["complete"]


def test_golden_drawn_deal_is_60_60_with_no_winner():
    replay = expected_replay("deal_2p_drawn")
    assert replay["points"] == [60, 60]
    assert replay["winner"] is None and replay["complete"] is True


def test_partial_record_is_not_complete_and_has_no_winner():
    replay = replay_record(load("deal_2p_partial"))
    assert isinstance(replay, Replay)
    assert replay.complete is False
    assert replay.to_dict()["winner"] is None
    assert replay.deal.ply == 13 and not replay.deal.is_over
    assert len(replay.tricks) == 6 and len(replay.deal.table) == 1


def test_a_seed_only_record_replays_the_deck_its_seed_gives():
    data = load("deal_2p_partial")
    assert "deck" not in data and data["seed"] == "42"
    record = DealRecord.from_dict(data)
    assert record.deck == shuffled_deck("42") == shuffled_deck(42)
    with_deck = {**data, "deck": [c.code for c in shuffled_deck(42)]}
    assert replay_record(with_deck).to_dict() == replay_record(data).to_dict()
    as_int = {**data, "seed": 42}
    assert DealRecord.from_dict(as_int).deck == record.deck


def test_records_from_a_deal_replay_to_the_same_deal():
    deal = Deal.from_seed(4, 2, "from-deal")
    for _ in range(17):
        deal.play(deal.legal_moves()[-1])
    record = DealRecord.from_deal(deal, seed="from-deal")
    data = json.loads(record.to_json())
    assert data["format"] == RECORD_FORMAT == "briscola-deal/1"
    assert data["seed"] == "from-deal"
    replayed = replay_record(data).deal
    assert replayed.moves == deal.moves and replayed.hands == deal.hands
    assert replayed.points == deal.points and replayed.table == deal.table


def test_codes_in_a_record_may_be_in_any_case():
    data = load("deal_2p_complete")
    data["deck"] = [code.swapcase() for code in data["deck"]]
    data["moves"] = [code.upper() for code in data["moves"]]
    assert replay_record(data).to_dict() == expected_replay("deal_2p_complete")


# -- every way a record can be wrong ----------------------------------------------------


def record_error(data_or_text) -> RecordError:
    with pytest.raises(RecordError) as caught:
        replay_record(data_or_text)
    error = caught.value
    assert error.code == "invalid_record"
    assert error.status == 400
    assert str(error).startswith(f"{error.where}: ")
    return error


def complete(**changes):
    return {**load("deal_2p_complete"), **changes}


def test_malformed_json():
    error = record_error('{"format": "briscola-deal/1", "players": ')
    assert error.where == "record"
    assert "not valid JSON" in str(error) and "line 1" in str(error)


@pytest.mark.parametrize("text", ["[]", '"a string"', "42", "null"])
def test_a_record_is_a_json_object(text):
    assert record_error(text).where == "record"


@pytest.mark.parametrize("fmt", ["briscola-deal/2", "", None, "Briscola-Deal/1"])
def test_wrong_format_string(fmt):
    error = record_error(complete(format=fmt))
    assert error.where == "format"
    assert repr(fmt) in str(error)


def test_missing_format():
    data = complete()
    del data["format"]
    assert record_error(data).where == "format"


def test_unknown_field():
    error = record_error(complete(comment="hello"))
    assert error.where == "comment"
    assert "unknown field" in str(error)


@pytest.mark.parametrize("players", [3, 0, "2", None, 2.0, True])
def test_bad_player_count(players):
    assert record_error(complete(players=players)).where == "players"


@pytest.mark.parametrize("dealer", [2, -1, "0", None, True])
def test_bad_dealer(dealer):
    assert record_error(complete(dealer=dealer)).where == "dealer"


def test_39_cards():
    error = record_error(complete(deck=load("deal_2p_complete")["deck"][:39]))
    assert error.where == "deck"
    assert "40 cards, got 39" in str(error)


def test_41_cards():
    deck = load("deal_2p_complete")["deck"]
    assert record_error(complete(deck=[*deck, deck[0]])).where == "deck"


def test_duplicated_card_names_its_position():
    deck = load("deal_2p_complete")["deck"]
    deck[25] = deck[3]  # 6s twice: at deck[3] and again at deck[25]
    error = record_error(complete(deck=deck))
    assert error.where == "deck[25]"
    assert "6s" in str(error) and "deck[3]" in str(error)


def test_bad_card_code_in_the_deck_names_its_position():
    deck = load("deal_2p_complete")["deck"]
    deck[5] = "Xd"
    error = record_error(complete(deck=deck))
    assert error.where == "deck[5]"
    assert "'Xd'" in str(error)


def test_bad_card_code_at_moves_3():
    moves = load("deal_2p_complete")["moves"]
    moves[3] = "Kd"
    error = record_error(complete(moves=moves))
    assert error.where == "moves[3]"
    assert "'Kd'" in str(error)


@pytest.mark.parametrize("field", ["deck", "moves"])
def test_deck_and_moves_must_be_lists(field):
    assert record_error(complete(**{field: "Ad 3b"})).where == field


@pytest.mark.parametrize("k", [0, 1, 5, 17, 33, 39])
def test_illegal_move_at_moves_k(k):
    data = load("deal_2p_complete")
    moves = data["moves"]
    before = replay_record(complete(moves=moves[:k])).deal
    # A card the seat to play does not hold: in the stock if any, else already played.
    held = {c.code for c in before.hands[before.turn]}
    other = next(code for code in data["deck"] if code not in held and code != moves[k])
    bad = [*moves[:k], other, *moves[k + 1 :]]
    error = record_error(complete(moves=bad))
    assert error.where == f"moves[{k}]"
    assert error.details["reason"] == "card_not_in_hand"
    assert other in str(error)


def test_a_move_after_the_end():
    moves = load("deal_2p_complete")["moves"]
    error = record_error(complete(moves=[*moves, moves[0]]))
    assert error.where == "moves[40]"
    assert error.details["reason"] == "deal_over"


def test_seed_and_deck_disagree():
    error = record_error(complete(seed="not-the-seed-of-this-deck"))
    assert error.where == "seed"
    data = load("deal_2p_partial")
    data["deck"] = [c.code for c in shuffled_deck(43)]
    assert record_error(data).where == "seed"


def test_seed_and_deck_that_agree_are_accepted():
    data = load("deal_4p_complete")
    assert data["seed"] == "0"
    assert [c.code for c in shuffled_deck("0")] == data["deck"]
    assert replay_record(data).complete


@pytest.mark.parametrize("seed", ["", 1.5, [], {}])
def test_bad_seed(seed):
    assert record_error({**load("deal_2p_partial"), "seed": seed}).where == "seed"


def test_neither_deck_nor_seed():
    data = load("deal_2p_partial")
    del data["seed"]
    assert record_error(data).where == "deck"
