"""accounts.ratings.math: pure math over openskill."""

import pytest

from accounts.ratings.math import (
    DISPLAY_BASE,
    PROVISIONAL_SIGMA,
    DealResult,
    RatedGame,
    Skill,
    StatsTally,
    category_for_players,
    display_rating,
    is_provisional,
    rate_game,
    result_for_team,
)


def test_a_newcomer_shows_1500_and_is_provisional() -> None:
    fresh = Skill()
    assert fresh.display == DISPLAY_BASE == 1500
    assert fresh.provisional
    assert 200 < fresh.deviation < 300


def test_winner_gains_loser_loses_and_both_grow_surer() -> None:
    [[a], [b]] = rate_game([[Skill()], [Skill()]], winner=0)
    assert a.mu > 25 > b.mu
    assert a.display > 1500 > b.display
    assert a.display - 1500 == 1500 - b.display  # symmetric for equal players
    assert a.sigma < Skill().sigma and b.sigma < Skill().sigma
    [[c], [d]] = rate_game([[Skill()], [Skill()]], winner=1)
    assert c == b and d == a


def test_an_upset_moves_more_than_the_expected_result() -> None:
    strong, weak = Skill(mu=32, sigma=4), Skill(mu=18, sigma=4)
    [[s1], [w1]] = rate_game([[strong], [weak]], winner=0)
    [[s2], [w2]] = rate_game([[strong], [weak]], winner=1)
    assert 0 < s1.mu - strong.mu < strong.mu - s2.mu
    assert w2.mu - weak.mu > weak.mu - w1.mu > 0


def test_draw_between_equals_keeps_mu_and_shrinks_sigma() -> None:
    [[a], [b]] = rate_game([[Skill()], [Skill()]], winner=None)
    assert a.mu == pytest.approx(25) and b.mu == pytest.approx(25)
    assert a.sigma < Skill().sigma
    [[strong], [weak]] = rate_game([[Skill(30, 3)], [Skill(20, 3)]], winner=None)
    assert strong.mu < 30 and weak.mu > 20  # a draw against a weaker player costs


def test_team_game_moves_both_partners_the_same_way() -> None:
    teams = [[Skill(), Skill(28, 5)], [Skill(22, 6), Skill()]]
    after = rate_game(teams, winner=1)
    for before, new in zip(teams[0], after[0], strict=True):
        assert new.mu < before.mu
    for before, new in zip(teams[1], after[1], strict=True):
        assert new.mu > before.mu


def test_bad_games_are_refused() -> None:
    with pytest.raises(ValueError):
        rate_game([[Skill()], [Skill(), Skill()]], winner=0)
    with pytest.raises(ValueError):
        rate_game([[Skill()], [Skill()]], winner=2)
    with pytest.raises(ValueError):
        category_for_players(3)


def test_provisional_until_sigma_below_the_threshold() -> None:
    assert is_provisional(PROVISIONAL_SIGMA)
    assert not is_provisional(PROVISIONAL_SIGMA - 0.01)
    skill = Skill()
    games = 0
    while skill.provisional:  # a player who always beats newcomers settles within ~15 games
        [[skill], _] = rate_game([[skill], [Skill()]], winner=0)
        games += 1
    assert 5 <= games <= 20, games


def test_display_scale_is_elo_like() -> None:
    assert display_rating(25) == 1500
    assert 1780 < display_rating(35) < 1810  # ~29.5 points per mu


def test_stats_tally_counts_results_deals_and_points() -> None:
    import uuid
    from datetime import UTC, datetime

    game = RatedGame(
        match_id=uuid.uuid4(),
        category="2v2",
        finished_at=datetime(2025, 1, 1, tzinfo=UTC),
        teams=((1, 3), (2, 4)),
        winner=1,
        deals=(DealResult((71, 49), 0), DealResult((60, 60), None), DealResult((30, 90), 1)),
    )
    tally = StatsTally()
    tally.add(game, 3)
    assert (tally.games, tally.wins, tally.losses, tally.draws) == (1, 0, 1, 0)
    assert (tally.deals_played, tally.deals_won, tally.points) == (3, 1, 161)
    assert tally.points_per_deal == pytest.approx(53.67)
    assert result_for_team(0, None) == "draw"
