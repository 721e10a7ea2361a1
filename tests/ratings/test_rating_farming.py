"""Ratings cannot be farmed (issue 19, item 14).

A second account resigning at ply 0 gave a full rated win: 25 in 3.2 s took a rating from
1500 to 1968. Now a match resigned before every person at the table has played a card is
aborted and unrated, and rated results between the same two people within
``RATING_REPEAT_WINDOW_HOURS`` count 1, 1/2, 1/4, then nothing (games.rated_games).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Rating, RatingChange, User
from accounts.ratings.math import Skill, rate_game
from games import rated_games
from games.matches.services import SeatSpec, match_create, match_join, match_resign, move_play
from games.models import Match, MatchStatus
from tests.ratings.conftest import ratings_snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


@pytest.fixture
def rated_duel(
    games: Any, django_capture_on_commit_callbacks: Any
) -> Callable[..., tuple[Match, dict[int, User]]]:
    """``rated_duel(alice, bob, cards=2)``: a started rated match, ``cards`` played."""

    def make(creator: User, opponent: User, *, cards: int = 2) -> tuple[Match, dict[int, User]]:
        match = match_create(
            creator=creator,
            players=2,
            format="single",
            seats=[SeatSpec("user", opponent.username)],
            rated=True,
        )
        match = match_join(match_id=match.pk, user=opponent)
        if cards:
            games.play(match, cards)
        return match, games.seat_users(match)

    return make


def _resign(user: User, match: Match, capture: Any) -> Match:
    with capture(execute=True):  # the rating task runs at the commit
        match_resign(match_id=match.pk, user=user)
    return Match.objects.get(pk=match.pk)


def _rating(user: User) -> int:
    row = Rating.objects.filter(user=user, category="1v1").first()
    return row.display if row else 1500


def test_a_resignation_before_everyone_played_aborts_the_match_unrated(
    user_factory: Any, rated_duel: Any, django_capture_on_commit_callbacks: Any, games: Any
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    # Ply 0: nobody played. The farmer's move.
    match, _ = rated_duel(alice, bob, cards=0)
    ended = _resign(bob, match, django_capture_on_commit_callbacks)
    assert (ended.status, ended.end_reason, ended.winner_team) == (
        MatchStatus.ABORTED,
        "aborted",
        None,
    )
    assert ended.finished_at is not None
    # One card: one person played, the other did not (either of them resigning).
    for resigner in ("mover", "waiter"):
        match, at = rated_duel(alice, bob, cards=1)
        mover = at[games.state(match).turn]
        waiter = alice if mover == bob else bob
        ended = _resign(
            mover if resigner == "waiter" else waiter, match, django_capture_on_commit_callbacks
        )
        assert ended.status == MatchStatus.ABORTED and ended.winner_team is None
    assert not RatingChange.objects.exists() and not Rating.objects.exists()
    assert rated_games.unrated_matches_queue(older_than=timedelta(0)) == 0  # nothing pending
    # Once both played, a resignation is a rated loss as before.
    match, _ = rated_duel(alice, bob, cards=2)
    ended = _resign(bob, match, django_capture_on_commit_callbacks)
    assert ended.status == MatchStatus.FINISHED and ended.end_reason == "resigned"
    assert ended.winner_team == 0 and ended.rating_weight == 1.0
    assert _rating(alice) > 1500 > _rating(bob)


def test_the_api_answers_an_early_resignation_as_aborted(
    user_factory: Any, auth_client: Any, rated_duel: Any
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match, _ = rated_duel(alice, bob, cards=0)
    body = auth_client(bob).post(f"/api/v1/matches/{match.pk}/resign").json()
    assert (body["status"], body["end_reason"], body["winner"]) == ("aborted", "aborted", None)
    assert body["rating_changes"] == []
    assert body["deals"][0]["status"] == "abandoned" and body["deals"][0]["seed"]
    events = auth_client(alice).get(f"/api/v1/matches/{match.pk}/events").json()["events"]
    assert events[-1]["type"] == "match_ended" and events[-1]["status"] == "aborted"


def test_repeated_results_between_two_people_count_less_then_not_at_all(
    user_factory: Any, rated_duel: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The issue's farm, with each person playing a card first: 25 resignations. The
    first counts fully, the next two a half and a quarter, the rest nothing."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    weights, ratings = [], []
    for _ in range(25):
        match, _ = rated_duel(alice, bob, cards=2)
        ended = _resign(bob, match, django_capture_on_commit_callbacks)
        weights.append(ended.rating_weight)
        ratings.append(_rating(alice))
    assert weights == [1.0, 0.5, 0.25] + [0.0] * 22
    assert ratings[0] < ratings[1] < ratings[2] == ratings[-1]
    assert ratings[-1] < 1700, ratings  # was 1968
    changes = RatingChange.objects.filter(user=alice).order_by("match_finished_at")
    assert changes.count() == 25  # recorded once each, as any rated match
    assert all(c.rating_diff == 0 for c in list(changes)[3:])
    # The same numbers from a recompute over the history.
    rated_games.ratings_sweep()  # the statistics, as beat aggregates them
    before = ratings_snapshot()
    rated_games.ratings_recompute()
    assert ratings_snapshot() == before


def test_the_window_and_other_pairs_count_in_full(
    user_factory: Any, rated_duel: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice, bob, carol = (user_factory(username=n) for n in ("alice", "bob", "carol"))
    for _ in range(4):
        match, _ = rated_duel(alice, bob, cards=2)
        _resign(bob, match, django_capture_on_commit_callbacks)
    # Another pair is not affected, nor the same pair with the seats swapped counted apart.
    match, _ = rated_duel(alice, carol, cards=2)
    assert _resign(carol, match, django_capture_on_commit_callbacks).rating_weight == 1.0
    match, _ = rated_duel(bob, alice, cards=2)
    assert _resign(alice, match, django_capture_on_commit_callbacks).rating_weight == 0.0
    # Once the window has passed, a result between them counts in full again.
    Match.objects.filter(status=MatchStatus.FINISHED).update(
        finished_at=timezone.now() - timedelta(hours=25)
    )
    match, _ = rated_duel(alice, bob, cards=2)
    assert _resign(bob, match, django_capture_on_commit_callbacks).rating_weight == 1.0


def test_results_against_a_bot_are_not_repeats(
    user_factory: Any, games: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice = user_factory(username="alice")
    for _ in range(4):
        with django_capture_on_commit_callbacks(execute=True):
            match = match_create(
                creator=alice,
                players=2,
                format="single",
                seats=[SeatSpec("bot", "greedy")],
                rated=True,
            )
        state = games.state(match)
        if state.turn == 0:
            with django_capture_on_commit_callbacks(execute=True):
                move_play(
                    match_id=match.pk, user=alice, card=state.legal_moves()[0].code, ply=state.ply
                )
        assert _resign(alice, match, django_capture_on_commit_callbacks).rating_weight == 1.0


def test_rate_game_weight() -> None:
    teams = [[Skill(27.0, 6.0)], [Skill(24.0, 7.0)]]
    full = rate_game(teams, 0)
    assert rate_game(teams, 0, 1.0) == full
    assert rate_game(teams, 0, 0.0) == [[Skill(27.0, 6.0)], [Skill(24.0, 7.0)]]
    half = rate_game(teams, 0, 0.5)[0][0]
    assert half.mu == pytest.approx((27.0 + full[0][0].mu) / 2)
    with pytest.raises(ValueError):
        rate_game(teams, 0, 1.5)
