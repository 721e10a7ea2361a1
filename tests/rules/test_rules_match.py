"""A match (docs/rules.md, "A match"): formats, drawn deals, dealer rotation, resignation.

Every deal counted here is a real deal played to its end through the public API."""

import functools
import random

import pytest

from games.rules import (
    FORMATS,
    Deal,
    InvalidDealError,
    Match,
    MatchOverError,
    shuffled_deck,
)

WON_BY_0, WON_BY_1, DRAWN = 0, 1, None


def play_out(deal: Deal, rng: random.Random) -> Deal:
    while not deal.is_over:
        deal.play(rng.choice(deal.legal_moves()))
    return deal


@functools.cache
def _finished_moves(players: int, dealer: int, winner: int | None) -> tuple[str, tuple]:
    """A seed and moves that, from ``dealer``, end with ``winner`` (None: 60-60)."""
    for i in range(100_000):
        seed = f"result-{players}-{dealer}-{i}"
        deal = play_out(Deal(players, dealer, shuffled_deck(seed)), random.Random(i))
        if deal.winner == winner and deal.is_drawn == (winner is None):
            return seed, tuple(deal.moves)
    raise AssertionError("no such deal found")  # pragma: no cover


def finished_deal(players: int, dealer: int, winner: int | None) -> Deal:
    """A complete deal, dealt by ``dealer``, that ``winner`` wins (None: drawn 60-60)."""
    seed, moves = _finished_moves(players, dealer, winner)
    deal = Deal(players, dealer, shuffled_deck(seed))
    for card in moves:
        deal.play(card)
    assert deal.is_over and deal.winner == winner
    return deal


def play_match(match: Match, results: list[int | None]) -> None:
    """Count one real deal per entry of ``results``, each dealt by the right dealer."""
    for result in results:
        assert not match.is_over
        match.record_deal(finished_deal(match.players, match.next_dealer, result))


def test_formats():
    assert FORMATS == {"single": 1, "first_to_2": 2, "first_to_3": 3}


def test_the_helper_really_gives_those_results():
    for players in (2, 4):
        assert finished_deal(players, 0, WON_BY_0).points[0] >= 61
        assert finished_deal(players, 1, WON_BY_1).points[1] >= 61
        assert finished_deal(players, 0, DRAWN).points == [60, 60]


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("result", [WON_BY_0, WON_BY_1])
def test_single_ends_after_one_deal_won_by_its_winner(players, result):
    match = Match(players, "single", 0)
    assert not match.is_over and match.winner is None
    play_match(match, [result])
    assert match.is_over
    assert match.winner == result
    assert match.results == [result]


def test_single_ends_after_one_drawn_deal_with_no_winner():
    match = Match(2, "single", 1)
    play_match(match, [DRAWN])
    assert match.is_over
    assert match.winner is None
    assert match.results == [None]
    assert match.deals_won == (0, 0)
    with pytest.raises(MatchOverError):
        match.new_deal("another")


def test_first_to_2():
    match = Match(2, "first_to_2", 0)
    play_match(match, [WON_BY_0, WON_BY_1])
    assert not match.is_over and match.winner is None
    assert match.deals_won == (1, 1)
    play_match(match, [WON_BY_1])
    assert match.is_over
    assert match.winner == 1
    assert match.deals_won == (1, 2)


def test_first_to_2_straight_wins():
    match = Match(4, "first_to_2", 3)
    play_match(match, [WON_BY_0, WON_BY_0])
    assert match.is_over and match.winner == 0


def test_a_drawn_deal_counts_for_nobody_and_another_deal_is_needed():
    match = Match(2, "first_to_2", 0)
    play_match(match, [WON_BY_0, DRAWN])
    assert not match.is_over  # 1-0 after two deals: the draw counted for nobody
    assert match.deals_won == (1, 0)
    play_match(match, [DRAWN, DRAWN])
    assert not match.is_over
    play_match(match, [WON_BY_0])
    assert match.is_over and match.winner == 0
    assert match.results == [0, None, None, None, 0]


def test_first_to_3():
    match = Match(4, "first_to_3", 2)
    play_match(match, [WON_BY_1, WON_BY_0, DRAWN, WON_BY_1, WON_BY_0])
    assert not match.is_over
    assert match.deals_won == (2, 2)
    play_match(match, [WON_BY_0])
    assert match.is_over and match.winner == 0
    assert len(match.results) == 6


@pytest.mark.parametrize(
    ("players", "first", "expected"),
    [
        (2, 0, [0, 1, 0, 1, 0]),
        (2, 1, [1, 0, 1, 0, 1]),
        (4, 0, [0, 1, 2, 3, 0]),
        (4, 2, [2, 3, 0, 1, 2]),
        (4, 3, [3, 0, 1, 2, 3]),
    ],
)
def test_the_dealer_moves_to_seat_plus_one_each_deal_and_wraps(players, first, expected):
    match = Match(players, "first_to_3", first)
    dealers = []
    for number in range(5):
        deal = match.new_deal(f"rotation-{number}")
        dealers.append(deal.dealer)
        assert deal.dealer == match.next_dealer
        assert deal.deck == shuffled_deck(f"rotation-{number}")
        assert deal.turn == (deal.dealer + 1) % players
        # Alternate the results so that the match lasts five deals.
        match.record_deal(finished_deal(players, deal.dealer, number % 2))
    assert dealers == expected
    assert match.next_dealer == (first + 5) % players


def test_drawn_deals_still_pass_the_deal_on():
    match = Match(2, "first_to_2", 0)
    play_match(match, [DRAWN])
    assert match.next_dealer == 1


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("team", [0, 1])
def test_resignation_ends_the_match_at_once_and_the_other_team_wins(players, team):
    match = Match(players, "first_to_3", 0)
    assert not match.is_over
    match.resign(team)
    assert match.is_over
    assert match.winner == 1 - team
    assert match.results == []


def test_resignation_wins_for_the_other_team_even_when_behind():
    match = Match(2, "first_to_3", 0)
    play_match(match, [WON_BY_0, WON_BY_0])
    match.resign(0)
    assert match.is_over
    assert match.winner == 1
    assert match.deals_won == (2, 0)


def test_after_the_end_no_new_deal_no_record_no_resignation():
    ended_by_deals = Match(2, "single", 0)
    play_match(ended_by_deals, [WON_BY_1])
    ended_by_resignation = Match(4, "first_to_2", 1)
    ended_by_resignation.resign(1)
    for match in (ended_by_deals, ended_by_resignation):
        winner = match.winner
        with pytest.raises(MatchOverError) as caught:
            match.new_deal("more")
        assert caught.value.code == "match_over"
        assert caught.value.status == 409
        with pytest.raises(MatchOverError):
            match.record_deal(finished_deal(match.players, match.next_dealer, WON_BY_0))
        with pytest.raises(MatchOverError):
            match.resign(0)
        assert match.winner == winner  # nothing changed


def test_only_a_finished_deal_can_be_counted():
    match = Match(2, "single", 0)
    deal = match.new_deal("unfinished")
    deal.play(deal.legal_moves()[0])
    with pytest.raises(InvalidDealError):
        match.record_deal(deal)
    assert match.results == [] and not match.is_over


@pytest.mark.parametrize(
    ("players", "format", "first_dealer"),
    [(3, "single", 0), (2, "best_of_3", 0), (2, "first_to_2", 2), (4, "single", -1)],
)
def test_invalid_matches_are_refused(players, format, first_dealer):
    with pytest.raises(InvalidDealError):
        Match(players, format, first_dealer)


def test_resign_needs_a_team():
    match = Match(4, "single", 0)
    with pytest.raises(InvalidDealError):
        match.resign(2)
    assert not match.is_over


def test_a_whole_first_to_2_match_played_from_seeds():
    match = Match(4, "first_to_2", 1)
    rng = random.Random(7)
    number = 0
    while not match.is_over:
        deal = match.new_deal(f"whole-{number}")
        assert deal.dealer == (1 + number) % 4
        match.record_deal(play_out(deal, rng))
        number += 1
    assert match.winner in (0, 1)
    assert match.deals_won[match.winner] == 2
    assert match.deals_won[1 - match.winner] < 2
    assert len(match.results) == number >= 2


def test_record_deal_refuses_a_deal_of_another_shape() -> None:
    import pytest

    from games.rules import Deal as D
    from games.rules import InvalidDealError as E
    from games.rules import Match as M
    from games.rules import shuffled_deck as deck_of

    match = M(2, "single", 0)
    deal = D(4, 0, deck_of("x"))
    while not deal.is_over:
        deal.play(deal.legal_moves()[0])
    with pytest.raises(E, match="not this match's next deal"):
        match.record_deal(deal)
