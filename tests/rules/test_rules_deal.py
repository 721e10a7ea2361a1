"""One deal (docs/rules.md, "One deal" and "Seats, teams, direction"): one test per rule.

Decks are built by hand so each test reads like its rule. Seat numbers follow docs/rules.md:
play goes seat + 1, the player to the dealer's right is ``(dealer + 1) % players``.
"""

import random

import pytest

from games.rules import (
    CARDS,
    Card,
    CardNotInHandError,
    Deal,
    DealOverError,
    IllegalMoveError,
    InvalidCardError,
    InvalidDealError,
    Match,
    NotYourTurnError,
    Trick,
    first_dealer,
    replay_moves,
    shuffled_deck,
    team_of,
    trick_winner_index,
)

# -- helpers ----------------------------------------------------------------------------


def codes(text: str) -> list[str]:
    """Card codes written out with spaces: "Ad 3b" -> ["Ad", "3b"]."""
    return text.split()


def fill(*codes: str) -> list[str]:
    """A 40-card deck: the given cards first, then every other card in canonical order."""
    head = [Card.from_code(c).code for c in codes]
    assert len(set(head)) == len(head), "a hand-built deck repeats a card"
    return head + [c.code for c in CARDS if c.code not in head]


def build_deck(players, dealer, hands, briscola, stock=()):
    """Place ``hands`` (seat -> 3 codes), the face-up ``briscola`` and the top of the
    ``stock`` where docs/rules.md's canonical deck order says they go."""
    slots = [None] * (3 * players)
    for seat, cards in hands.items():
        position = (seat - dealer - 1) % players  # 0 for the player to the dealer's right
        for round_, code in enumerate(cards):
            slots[round_ * players + position] = code
    spare = iter(c.code for c in CARDS if c.code not in {*slots, briscola, *stock})
    head = [code if code is not None else next(spare) for code in slots]
    return fill(*head, briscola, *stock)


def hand_codes(deal, seat):
    return sorted(c.code for c in deal.hands[seat])


def play_randomly(deal, rng, stop=lambda deal: False):
    while not deal.is_over and not stop(deal):
        deal.play(rng.choice(deal.legal_moves()))
    return deal


def random_deals(players, count, tag="rule"):
    for i in range(count):
        dealer = i % players
        yield play_randomly(Deal(players, dealer, shuffled_deck(f"{tag}-{i}")), random.Random(i))


# A deal found by random play that ends 60-60, pinned here as golden data.
DRAWN_DECK = codes(
    "3d 4s As Rs 7s 6d Ab 7d Cc 2s Rb 2c Fs 4b 5s 3b 4c Ac 2d 2b "
    "Fb Cs 6s 5d Cb 5b 3s 6b 5c Rd Cd Fc Fd Ad 7b 4d 6c 7c Rc 3c"
)
DRAWN_MOVES = codes(
    "7s 4s As 6d 3d Rs 7d Fs 4b Rb 3b 2c 5s 2s Ac 2d Cc 6s Cs Cb "
    "5b 3s 4c 2b Rd Cd Fc Fd 5c 7b 4d 6c Fb Ad 7c 5d 3c Ab Rc 6b"
)
# Deals found the same way that end 61-59 (the narrowest win), 2 and 4 players, dealer 0.
NARROW_2P = (
    codes(
        "Ab 2b As 7s 3d Fc 6b 6s 4s Rb 2s 7d 5s Ad 6d Cc Cd 4d 2c 7b "
        "Fb Ac 3c Cs Cb 7c 4b Rs Rd 5c 2d 5d 5b 3b Fs 4c 6c Rc 3s Fd"
    ),
    codes(
        "As 2b 7s 3d Rb 4s Fc 2s 6s 5s Cc 6d 7d 2c Ad Fb Ac 3c Ab Cb "
        "7c 7b 4d Rd Cs 2d 5c 5b 4b Fs 4c Cd Rc 3s 3b 6c Fd 5d Rs 6b"
    ),
)
NARROW_4P = (
    codes(
        "6c 3b 4d 6d 4b Rd 3c 6s 7s Fd Cd 5s Fb As 7b 2c 3d 5b 7d Rc "
        "7c 2d Rb Cs Rs 4c 5d 6b Fc 4s 3s 2b Ac Fs 5c Ab Cb Ad Cc 2s"
    ),
    codes(
        "4b Fd Cd 5s 7s 7b 3c 6s 5b 4d 3d 6c 2d 7d 6d 7c 4c Rc 6b Rd "
        "Rs Fc Rb Cs 2c 5c Ab Cb Ad 3b 2s Ac Cc Fs Fb 4s 5d As 3s 2b"
    ),
)


# -- the rules, in docs/rules.md's order -----------------------------------------------------


def test_rule_first_dealer_is_drawn_at_random_from_the_match_seed():
    for players in (2, 4):
        dealers = [first_dealer(f"match-{i}", players) for i in range(100)]
        assert dealers == [first_dealer(f"match-{i}", players) for i in range(100)]
        assert set(dealers) == set(range(players))


def test_rule_each_later_deal_is_dealt_by_the_previous_dealers_right():
    for players in (2, 4):
        for first in range(players):
            match = Match(players, "first_to_3", first)
            for number in range(3):  # first_to_3 cannot end in fewer than 3 deals
                deal = match.new_deal(f"later-{number}")
                assert deal.dealer == (first + number) % players
                assert deal.turn == (deal.dealer + 1) % players  # the first lead moves too
                match.record_deal(play_randomly(deal, random.Random(number)))


def test_rule_deal_three_cards_each_one_at_a_time_from_dealers_right():
    deck = [c.code for c in CARDS]  # Ac 3c Rc Cc Fc 7c 6c 5c 4c 2c Ad 3d ...
    # Two players, seat 0 deals: seat 1 (to the dealer's right) gets deck[0], [2], [4].
    deal = Deal(2, 0, deck)
    assert [c.code for c in deal.hands[1]] == ["Ac", "Rc", "Fc"]
    assert [c.code for c in deal.hands[0]] == ["3c", "Cc", "7c"]
    # Seat 1 deals: now seat 0 is to the dealer's right.
    deal = Deal(2, 1, deck)
    assert [c.code for c in deal.hands[0]] == ["Ac", "Rc", "Fc"]
    assert [c.code for c in deal.hands[1]] == ["3c", "Cc", "7c"]
    # Four players, seat 2 deals: one card each round the table from seat 3.
    deal = Deal(4, 2, deck)
    assert [c.code for c in deal.hands[3]] == ["Ac", "Fc", "4c"]  # deck[0], [4], [8]
    assert [c.code for c in deal.hands[0]] == ["3c", "7c", "2c"]  # deck[1], [5], [9]
    assert [c.code for c in deal.hands[1]] == ["Rc", "6c", "Ad"]  # deck[2], [6], [10]
    assert [c.code for c in deal.hands[2]] == ["Cc", "5c", "3d"]  # deck[3], [7], [11]
    for players in (2, 4):
        for dealer in range(players):
            deal = Deal(players, dealer, deck)
            assert [len(h) for h in deal.hands] == [3] * players
            for i in range(3 * players):
                assert Card.from_code(deck[i]) in deal.hands[(dealer + 1 + i) % players]


def test_rule_briscola_is_deck_6_in_two_player_and_deck_12_in_four_player():
    deck = fill("Ac", "3c", "Rc", "Cc", "Fc", "7c", "5s", "Ad")
    two = Deal(2, 0, deck)
    assert two.briscola.code == "5s"  # deck[6]
    assert two.trump == "s"  # its suit is trump for the whole deal
    assert two.briscola_on_table and two.briscola_holder is None
    assert two.stock_count == 34  # deck[6..39]
    deck = fill(*[c.code for c in CARDS[:12]], "Rb")
    four = Deal(4, 3, deck)
    assert four.briscola.code == "Rb"  # deck[12]
    assert four.trump == "b"
    assert four.stock_count == 28  # deck[12..39]
    # The face-up card is not in anyone's hand.
    assert all(four.briscola not in hand for hand in four.hands)


def test_rule_stock_is_drawn_top_first_and_face_up_briscola_last():
    deck = shuffled_deck("stock order")
    assert Deal(2, 0, deck).stock == deck[7:] + (deck[6],)
    assert Deal(4, 0, deck).stock == deck[13:] + (deck[12],)


def test_rule_player_to_dealers_right_leads_first_trick():
    for players in (2, 4):
        for dealer in range(players):
            deal = Deal(players, dealer, fill())
            assert deal.turn == deal.leader == (dealer + 1) % players


def test_rule_no_obligation_to_follow_suit_any_card_is_legal():
    # Trump is Spade. Seat 1 leads the Ace of Cups; seat 0 holds a Cup, a trump and a Coin.
    deck = build_deck(2, 0, {1: ["Ac", "2c", "5c"], 0: ["3c", "4s", "2d"]}, briscola="7s")
    deal = Deal(2, 0, deck)
    deal.play("Ac")
    assert sorted(c.code for c in deal.legal_moves()) == ["2d", "3c", "4s"]
    for card in ("3c", "4s", "2d"):  # follow, trump, or neither: all accepted
        assert deal.is_legal(Card.from_code(card))
        trial = deal.copy()
        assert isinstance(trial.play(card), Trick)
    # Discarding a worthless Coin instead of following or trumping: not a duty to win.
    trick = deal.play("2d")
    assert trick.winner == 1
    # The leader too may lead anything: every card in hand is legal.
    assert sorted(c.code for c in deal.legal_moves()) == sorted(hand_codes(deal, 1))
    assert len(deal.legal_moves()) == 3


def test_rule_highest_trump_wins():
    # Four players, Coins are trump (face-up 7 of Coins), seat 3 deals, seat 0 leads.
    hands = {0: ["Ac", "2s", "2b"], 1: ["4d", "4s", "4b"], 2: ["Rd", "5s", "5b"]}
    hands[3] = ["3c", "6s", "6b"]
    deal = Deal(4, 3, build_deck(4, 3, hands, briscola="7d"))
    for card in ("Ac", "4d", "Rd", "3c"):  # Ace led; two trumps; the led suit's Three
        deal.play(card)
    trick = deal.tricks[-1]
    assert trick.winner == 2  # the King of trumps beats the 4 of trumps and both Cups
    assert trick.points == 11 + 4 + 10
    # Two players: the lowest trump beats the Ace of the suit led.
    deal = Deal(2, 0, build_deck(2, 0, {1: ["Ac", "5c", "5s"], 0: ["2d", "6c", "6s"]}, "7d"))
    deal.play("Ac")
    assert deal.play("2d").winner == 0
    # Trump led, higher trump follows: the higher trump wins.
    deal = Deal(2, 0, build_deck(2, 0, {1: ["Fd", "5c", "5s"], 0: ["Ad", "6c", "6s"]}, "7d"))
    deal.play("Fd")
    assert deal.play("Ad").winner == 0


def test_rule_highest_of_led_suit_wins_without_trump():
    # Trump is Coins; nobody plays one.
    hands = {0: ["5c", "2s", "2b"], 1: ["Rc", "4s", "4b"], 2: ["3c", "5s", "5b"]}
    hands[3] = ["2c", "6s", "6b"]
    deal = Deal(4, 3, build_deck(4, 3, hands, briscola="7d"))
    for card in ("5c", "Rc", "3c", "2c"):
        deal.play(card)
    assert deal.tricks[-1].winner == 2  # the Three beats the King (docs/rules.md strength order)
    deal = Deal(2, 0, build_deck(2, 0, {1: ["5c", "7c", "5s"], 0: ["Fc", "6c", "6s"]}, "7d"))
    deal.play("5c")
    assert deal.play("Fc").winner == 0  # follower's Knave beats the led Five
    deal.play("6c")
    assert deal.play("7c").winner == 1  # winner led the 6; the 7 beats it


def test_rule_off_suit_card_never_wins_however_high():
    # Trump is Coins. Seat 0 leads the 2 of Cups; the others throw Aces and a Three.
    hands = {0: ["2c", "2s", "2b"], 1: ["As", "4s", "4b"], 2: ["Ab", "5s", "5b"]}
    hands[3] = ["3s", "6s", "6b"]
    deal = Deal(4, 3, build_deck(4, 3, hands, briscola="7d"))
    for card in ("2c", "As", "Ab", "3s"):
        deal.play(card)
    assert deal.tricks[-1].winner == 0
    assert deal.points == [32, 0]  # the Two's team takes 11 + 11 + 10
    deal = Deal(2, 0, build_deck(2, 0, {1: ["2c", "5c", "5s"], 0: ["As", "6c", "6s"]}, "7d"))
    deal.play("2c")
    assert deal.play("As").winner == 1


def test_rule_highest_means_ace_three_king_knight_knave_seven_down_to_two():
    order = ["A", "3", "R", "C", "F", "7", "6", "5", "4", "2"]
    for suit, trump in (("c", "d"), ("d", "d")):  # within the led suit, and within trumps
        for i, strong in enumerate(order):
            for weak in order[i + 1 :]:
                a, b = Card.from_code(strong + suit), Card.from_code(weak + suit)
                assert trick_winner_index([a, b], trump) == 0
                assert trick_winner_index([b, a], trump) == 1
                assert trick_winner_index([b, Card.from_code("2s"), a, b], trump) == 2
    # The same through a two-player deal (whose trick code is separate, for speed).
    deal = Deal(2, 0, build_deck(2, 0, {1: ["Fb", "5c", "5s"], 0: ["7b", "6c", "6s"]}, "7d"))
    deal.play("Fb")
    assert deal.play("7b").winner == 1


def test_rule_winner_draws_first_then_in_playing_order():
    # Four players, seat 0 deals, seat 1 leads; seat 3 wins the first trick with a trump.
    hands = {1: ["5c", "2s", "2b"], 2: ["Rc", "4s", "4b"], 3: ["2d", "5s", "5b"]}
    hands[0] = ["Ac", "6s", "6b"]
    stock = ["Ab", "3b", "Rb", "Cb"]
    deal = Deal(4, 0, build_deck(4, 0, hands, briscola="7d", stock=stock))
    for card in ("5c", "Rc", "2d", "Ac"):
        deal.play(card)
    assert deal.tricks[0].winner == 3
    # Seat 3 draws the top card, then seats 0, 1, 2 in playing order.
    assert [(d.seat, d.card.code) for d in deal.draws] == [
        (3, "Ab"),
        (0, "3b"),
        (1, "Rb"),
        (2, "Cb"),
    ]
    assert "Ab" in hand_codes(deal, 3) and "Cb" in hand_codes(deal, 2)
    assert [len(h) for h in deal.hands] == [3, 3, 3, 3]
    # Two players: the follower wins, so the follower draws first.
    stock = ["Ab", "3b"]
    deal = Deal(2, 0, build_deck(2, 0, {1: ["5c", "5s", "5b"], 0: ["Ac", "6s", "6b"]}, "7d", stock))
    deal.play("5c")
    deal.play("Ac")
    assert [(d.seat, d.card.code) for d in deal.draws] == [(0, "Ab"), (1, "3b")]


def test_rule_loser_of_trick_17_takes_face_up_briscola_in_two_player():
    # Sources disagree (one guide gives it to the trick winner); docs/rules.md follows pagat and
    # the card arithmetic: the winner of trick 17 draws deck[39], the loser deck[6].
    loser_was_leader = set()
    for i in range(30):
        deal = Deal(2, i % 2, shuffled_deck(f"t17-{i}"))
        play_randomly(deal, random.Random(i), stop=lambda d: len(d.tricks) == 16)
        assert deal.briscola_on_table and deal.stock_count == 2
        play_randomly(deal, random.Random(i), stop=lambda d: len(d.tricks) == 17)
        trick = deal.tricks[16]
        loser = 1 - trick.winner
        loser_was_leader.add(loser == trick.leader)
        assert deal.briscola in deal.hands[loser]
        assert deal.briscola not in deal.hands[trick.winner]
        assert deal.deck[39] in deal.hands[trick.winner]
        assert deal.briscola_holder == loser
        assert deal.draws[-2:] == [(trick.winner, deal.deck[39], 16), (loser, deal.deck[6], 16)]
        assert not deal.briscola_on_table and deal.stock_count == 0
    assert loser_was_leader == {True, False}  # both cases were seen


def test_rule_all_four_players_draw_in_four_player_and_fourth_drawer_after_trick_7_takes_briscola():
    # Sources disagree (one guide: only the trick winner draws); docs/rules.md: all four draw,
    # and the fourth to draw after trick 7 gets the face-up card.
    for i in range(20):
        deal = Deal(4, i % 4, shuffled_deck(f"t7-{i}"))
        rng = random.Random(i)
        for number in range(1, 8):
            play_randomly(deal, rng, stop=lambda d, n=number: len(d.tricks) == n)
            assert [len(h) for h in deal.hands] == [3, 3, 3, 3]  # everyone drew one
            assert len(deal.draws) == 4 * number
        winner = deal.tricks[6].winner
        fourth = (winner + 3) % 4
        assert [(d.seat, d.card) for d in deal.draws[-4:]] == [
            (winner, deal.deck[37]),
            ((winner + 1) % 4, deal.deck[38]),
            ((winner + 2) % 4, deal.deck[39]),
            (fourth, deal.deck[12]),
        ]
        assert deal.briscola in deal.hands[fourth]
        assert deal.briscola_holder == fourth
        assert deal.stock_count == 0


def test_rule_trick_winner_leads_next():
    # Seat 0 wins trick 1 as follower and must lead trick 2.
    deck = build_deck(2, 0, {1: ["5c", "5s", "5b"], 0: ["Ac", "6s", "6b"]}, "7d")
    deal = Deal(2, 0, deck)
    deal.play("5c")
    deal.play("Ac")
    assert deal.turn == deal.leader == 0
    with pytest.raises(NotYourTurnError):
        deal.play(deal.hands[1][0], seat=1)
    for deal in [*random_deals(2, 10), *random_deals(4, 10)]:
        for before, after in zip(deal.tricks, deal.tricks[1:], strict=False):
            assert after.leader == before.winner


def test_rule_hands_played_out_without_drawing_20_tricks_two_player_10_four_player():
    for players, tricks, draws in ((2, 20, 34), (4, 10, 28)):
        for i in range(5):
            deal = Deal(players, 0, shuffled_deck(f"end-{players}-{i}"))
            rng = random.Random(i)
            play_randomly(deal, rng, stop=lambda d: d.stock_count == 0)
            assert [len(h) for h in deal.hands] == [3] * players
            drawn = len(deal.draws)
            for left in (2, 1, 0):  # no more drawing: hands shrink by one per trick
                number = len(deal.tricks) + 1
                play_randomly(deal, rng, stop=lambda d, n=number: len(d.tricks) == n)
                assert [len(h) for h in deal.hands] == [left] * players
                assert len(deal.draws) == drawn
            assert deal.is_over and deal.turn is None
            assert len(deal.tricks) == tricks
            assert len(deal.draws) == draws
            assert sorted(deal.moves) == list(CARDS)  # all cards always played out
            assert deal.legal_moves() == []


def test_rule_61_or_more_wins():
    deal = replay_moves(2, 0, *NARROW_2P)
    assert deal.points == [61, 59]
    assert deal.winner == 0 and not deal.is_drawn
    deal = replay_moves(4, 0, *NARROW_4P)
    assert deal.points == [59, 61]
    assert deal.winner == 1 and not deal.is_drawn
    for deal in [*random_deals(2, 20, "win"), *random_deals(4, 20, "win")]:
        assert sum(deal.points) == 120
        if deal.points[0] >= 61:
            assert deal.winner == 0
        elif deal.points[1] >= 61:
            assert deal.winner == 1
        else:
            assert deal.winner is None and deal.is_drawn
    # Nobody has won before the last card, however many points they hold.
    deal = replay_moves(2, 0, NARROW_2P[0], NARROW_2P[1][:-1])
    assert deal.winner is None and not deal.is_drawn


def test_rule_60_60_is_a_drawn_deal():
    deal = replay_moves(2, 0, DRAWN_DECK, DRAWN_MOVES)
    assert deal.is_over
    assert deal.points == [60, 60]
    assert deal.is_drawn
    assert deal.winner is None


def test_rule_last_trick_earns_nothing_extra():
    for deal in [*random_deals(2, 10, "last"), *random_deals(4, 10, "last")]:
        last = deal.tricks[-1]
        assert last.points == sum(c.points for c in last.cards)
        assert sum(deal.points) == 120  # no bonus anywhere (a "last trick" bonus would add)
        before = replay_moves(deal.players, deal.dealer, deal.deck, deal.moves[: -deal.players])
        gained = [after - prior for after, prior in zip(deal.points, before.points, strict=True)]
        assert gained[team_of(last.winner)] == last.points
        assert gained[1 - team_of(last.winner)] == 0
    # The pinned 60-60 deal: its last trick (King of Cups, 6 of Batons) is worth its 4 card
    # points and nothing more; with a last-trick bonus the deal would not be drawn.
    deal = replay_moves(2, 0, DRAWN_DECK, DRAWN_MOVES)
    assert [c.code for c in deal.tricks[-1].cards] == ["Rc", "6b"]
    assert deal.tricks[-1].points == 4
    before = replay_moves(2, 0, DRAWN_DECK, DRAWN_MOVES[:-2])
    assert before.points[team_of(deal.tricks[-1].winner)] == 56
    assert deal.points == [60, 60]


def test_rule_partners_sit_opposite_teams_0_2_and_1_3():
    assert [team_of(seat) for seat in range(4)] == [0, 1, 0, 1]
    assert [team_of(seat) for seat in range(2)] == [0, 1]
    # Seat 2 wins a trick worth 11: the points go to team 0 (seats 0 and 2).
    hands = {0: ["5c", "2s", "2b"], 1: ["4c", "4s", "4b"], 2: ["Ac", "5s", "5b"]}
    hands[3] = ["2c", "6s", "6b"]
    deal = Deal(4, 3, build_deck(4, 3, hands, briscola="7d"))
    for card in ("5c", "4c", "Ac", "2c"):
        deal.play(card)
    assert deal.tricks[0].winner == 2
    assert deal.points == [11, 0]
    # Seat 3 then wins a trick: team 1.
    hands = {0: ["5c", "2s", "2b"], 1: ["4c", "4s", "4b"], 2: ["6c", "5s", "5b"]}
    hands[3] = ["Ac", "6s", "6b"]
    deal = Deal(4, 3, build_deck(4, 3, hands, briscola="7d"))
    for card in ("5c", "4c", "6c", "Ac"):
        deal.play(card)
    assert deal.tricks[0].winner == 3
    assert deal.points == [0, 11]


def test_rule_play_goes_seat_plus_one():
    deal = Deal(4, 1, fill())  # seat 2 leads
    seen = []
    for _ in range(4):
        seen.append(deal.turn)
        assert deal.table_seats() == seen[:-1]
        deal.play(deal.legal_moves()[0])
    assert seen == [2, 3, 0, 1]
    for deal in [*random_deals(2, 5, "dir"), *random_deals(4, 5, "dir")]:
        replay = Deal(deal.players, deal.dealer, deal.deck)
        for card in deal.moves:
            trick_seat = (replay.leader + len(replay.table)) % replay.players
            assert replay.turn == trick_seat
            replay.play(card, seat=trick_seat)


def test_rule_no_three_player_table():
    with pytest.raises(InvalidDealError) as caught:
        Deal(3, 0, fill())
    assert caught.value.code == "invalid_deal"


# -- errors ------------------------------------------------------------------------------


def two_player_deal():
    return Deal(2, 0, build_deck(2, 0, {1: ["Ac", "2c", "5c"], 0: ["3c", "4s", "2d"]}, "7s"))


def test_playing_out_of_turn_is_not_your_turn():
    deal = two_player_deal()
    with pytest.raises(NotYourTurnError) as caught:
        deal.play("3c", seat=0)  # seat 0's own card, but seat 1 is to lead
    error = caught.value
    assert error.code == "not_your_turn"
    assert error.status == 409
    assert isinstance(error, IllegalMoveError)
    assert error.details == {"seat": 0, "turn": 1}
    assert deal.moves == [] and hand_codes(deal, 0) == ["2d", "3c", "4s"]
    deal.play("Ac", seat=1)
    with pytest.raises(NotYourTurnError):
        deal.play("2c", seat=1)
    assert deal.play("3c", seat=0) is not None


def test_playing_a_card_not_in_hand_is_card_not_in_hand():
    deal = two_player_deal()
    for card in ("3c", "Ad", "7s"):  # the opponent's card, a stock card, the face-up card
        with pytest.raises(CardNotInHandError) as caught:
            deal.play(card)
        assert caught.value.code == "card_not_in_hand"
        assert isinstance(caught.value, IllegalMoveError)
        assert card in caught.value.message
    assert deal.moves == [] and deal.turn == 1
    deal.play("Ac")
    with pytest.raises(CardNotInHandError):
        deal.play("Ac")  # already played


def test_any_card_after_the_end_is_deal_over():
    deal = replay_moves(2, 0, DRAWN_DECK, DRAWN_MOVES)
    for card in CARDS:
        with pytest.raises(DealOverError) as caught:
            deal.play(card)
        assert caught.value.code == "deal_over"
        assert isinstance(caught.value, IllegalMoveError)
    with pytest.raises(DealOverError):
        deal.play("Ad", seat=0)
    assert len(deal.moves) == 40


@pytest.mark.parametrize("bad", ["1d", "Ax", "", None, 5])
def test_a_bad_card_code_is_invalid_card(bad):
    deal = two_player_deal()
    with pytest.raises(InvalidCardError) as caught:
        deal.play(bad)
    assert caught.value.code == "invalid_card"
    assert not isinstance(caught.value, IllegalMoveError)
    assert deal.moves == []


def test_card_codes_are_accepted_in_any_case_when_playing():
    deal = two_player_deal()
    deal.play("aC")
    assert deal.moves == [Card.from_code("Ac")]


@pytest.mark.parametrize(
    ("players", "dealer", "deck"),
    [
        (3, 0, fill()),
        (0, 0, fill()),
        (1, 0, fill()),
        (5, 0, fill()),
        ("2", 0, fill()),
        (2, 2, fill()),
        (2, -1, fill()),
        (4, 4, fill()),
        (2, True, fill()),
        (2, "0", fill()),
        (2, None, fill()),
        (2, 0, fill()[:39]),
        (2, 0, [*fill(), "Ad"]),
        (2, 0, [*fill()[:39], fill()[0]]),
        (4, 0, []),
    ],
    ids=[
        "3-players",
        "0-players",
        "1-player",
        "5-players",
        "players-str",
        "dealer-2-of-2",
        "dealer-negative",
        "dealer-4-of-4",
        "dealer-bool",
        "dealer-str",
        "dealer-none",
        "39-cards",
        "41-cards",
        "duplicate-card",
        "empty-deck",
    ],
)
def test_invalid_deals_are_refused(players, dealer, deck):
    with pytest.raises(InvalidDealError) as caught:
        Deal(players, dealer, deck)
    assert caught.value.code == "invalid_deal"
    assert caught.value.status == 400
    assert isinstance(caught.value, ValueError)


def test_invalid_deck_messages_name_the_problem():
    with pytest.raises(InvalidDealError, match="got 39 cards; missing 2b"):
        Deal(2, 0, fill()[:39])
    with pytest.raises(InvalidDealError, match="missing 2b"):
        Deal(2, 0, [*fill()[:39], "Ac"])


def test_a_bad_card_code_in_a_deck_is_invalid_card():
    with pytest.raises(InvalidCardError):
        Deal(2, 0, [*fill()[:39], "Zz"])


def test_decks_may_be_codes_in_any_case_cards_tuples_or_iterators():
    deck = shuffled_deck("forms")
    expected = Deal(2, 0, deck)
    for form in (
        list(deck),
        [c.code for c in deck],
        [c.code.swapcase() for c in deck],
        iter(deck),
    ):
        deal = Deal(2, 0, form)
        assert deal.deck == expected.deck
        assert deal.hands == expected.hands
    assert Deal.from_seed(2, 0, "forms").deck == deck


def test_play_returns_the_trick_it_completes_and_none_otherwise():
    deal = Deal(4, 0, shuffled_deck("returns"))
    results = [deal.play(deal.legal_moves()[0]) for _ in range(4)]
    assert results[:3] == [None, None, None]
    assert results[3] == deal.tricks[0]
    assert results[3].cards == tuple(deal.moves)


def test_stock_count_falls_by_one_card_per_player_per_trick():
    for players in (2, 4):
        deal = Deal(players, 0, shuffled_deck("count"))
        counts = [deal.stock_count]
        while not deal.is_over:
            if deal.play(deal.legal_moves()[-1]):
                counts.append(deal.stock_count)
        start = 40 - 3 * players
        assert counts[0] == start
        expected = [max(start - players * t, 0) for t in range(len(counts))]
        assert counts == expected


def test_briscola_holder_is_set_when_the_face_up_card_is_drawn_and_cleared_when_played():
    for players in (2, 4):
        for i in range(10):
            deal = Deal(players, 0, shuffled_deck(f"holder-{players}-{i}"))
            rng = random.Random(i)
            while deal.briscola_on_table:
                assert deal.briscola_holder is None
                deal.play(rng.choice(deal.legal_moves()))
            holder = deal.briscola_holder
            last = deal.tricks[-1].winner
            assert holder == (last + players - 1) % players
            assert deal.briscola in deal.hands[holder]
            while deal.briscola not in deal.moves:
                assert deal.briscola_holder == holder
                deal.play(rng.choice(deal.legal_moves()))
            assert deal.briscola_holder is None
            play_randomly(deal, rng)
            assert deal.briscola_holder is None


def test_briscola_holder_is_cleared_when_the_holder_plays_it_at_the_first_chance():
    deal = Deal(2, 0, shuffled_deck("lead it"))
    rng = random.Random(0)
    play_randomly(deal, rng, stop=lambda d: d.stock_count == 0)
    holder = deal.briscola_holder
    # Play other cards until it is the holder's turn, then play the briscola.
    while deal.turn != holder:
        deal.play(next(c for c in deal.legal_moves() if c is not deal.briscola))
    deal.play(deal.briscola, seat=holder)
    assert deal.briscola_holder is None
