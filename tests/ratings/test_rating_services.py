"""Applying ratings: exactly once, in finish order, the sweep, statistics, recompute."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.core.management import call_command

from accounts.models import PlayerStats, Rating, RatingChange
from accounts.ratings.math import Skill, rate_game
from games import rated_games
from games.matches.services import match_resign
from games.models import EndReason, MatchStatus
from games.tasks import rate_match

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


def rating(user: Any, category: str = "1v1") -> Rating:
    return Rating.objects.get(user=user, category=category)


def test_a_rated_match_changes_both_ratings_once(user_factory: Any, finished_match: Any) -> None:
    alice, bob = user_factory(), user_factory()
    match = finished_match([alice, bob], winner=0)
    assert rated_games.match_ratings_apply(match_id=match.pk) == 2
    a, b = rating(alice), rating(bob)
    assert a.mu > 25 > b.mu and a.games == b.games == 1
    changes = {c.user_id: c for c in RatingChange.objects.filter(match_id=match.pk)}
    assert changes[alice.pk].result == "win" and changes[bob.pk].result == "loss"
    assert changes[alice.pk].rating_before == 1500 < changes[alice.pk].rating_after
    # The task again (sequentially): nothing changes.
    before = (a.mu, b.mu)
    assert rate_match(str(match.pk)) == 0
    assert (rating(alice).mu, rating(bob).mu) == before
    assert RatingChange.objects.count() == 2


def test_unrated_aborted_unfinished_and_bad_ids_are_not_rated(
    user_factory: Any, finished_match: Any
) -> None:
    alice, bob = user_factory(), user_factory()
    unrated = finished_match([alice, bob], rated=False)
    aborted = finished_match(
        [alice, bob],
        winner=None,
        deals=[],
        status=MatchStatus.ABORTED,
        end_reason=EndReason.ABORTED,
    )
    active = finished_match([alice, bob], status=MatchStatus.ACTIVE)
    for match in (unrated, aborted, active):
        assert rated_games.match_ratings_apply(match_id=match.pk) == 0
    assert rated_games.match_ratings_apply(match_id="not-a-uuid") == 0
    assert not RatingChange.objects.exists() and not Rating.objects.exists()


def test_a_draw_and_a_team_game(user_factory: Any, finished_match: Any) -> None:
    a, b, c, d = (user_factory() for _ in range(4))
    draw = finished_match([a, b], winner=None)
    rated_games.match_ratings_apply(match_id=draw.pk)
    assert {ch.result for ch in RatingChange.objects.filter(match_id=draw.pk)} == {"draw"}
    assert rating(a).mu == pytest.approx(25) and rating(a).sigma < Skill().sigma
    team = finished_match([a, b, c, d], winner=1, deals=[(50, 70, 1)])
    assert rated_games.match_ratings_apply(match_id=team.pk) == 4
    assert rating(b, "2v2").mu > 25 and rating(d, "2v2").mu > 25
    assert rating(a, "2v2").mu < 25 and rating(c, "2v2").mu < 25
    assert rating(a, "1v1").games == 1  # categories are separate


def test_worker_dies_half_way_nothing_is_kept_and_the_rerun_applies_all(
    user_factory: Any, finished_match: Any
) -> None:
    players = [user_factory() for _ in range(4)]
    match = finished_match(players, winner=0)
    original = RatingChange.objects.bulk_create
    saved: list[Any] = []

    def die_after_first(changes: list[RatingChange], **kwargs: Any) -> Any:
        saved.extend(original(changes[:1], **kwargs))
        raise SystemExit("worker killed")  # not an Exception: nothing may swallow it

    with (
        mock.patch.object(RatingChange.objects, "bulk_create", die_after_first),
        pytest.raises(SystemExit),
    ):
        rated_games.match_ratings_apply(match_id=match.pk)
    assert len(saved) == 1  # the first player's change was written, inside the transaction
    assert not RatingChange.objects.exists()
    assert not Rating.objects.filter(games__gt=0).exists()
    assert rated_games.match_ratings_apply(match_id=match.pk) == 4
    assert rated_games.match_ratings_apply(match_id=match.pk) == 0
    assert RatingChange.objects.count() == 4
    assert sorted(Rating.objects.values_list("games", flat=True)) == [1, 1, 1, 1]


def test_the_unique_constraint_is_the_last_guard(user_factory: Any, finished_match: Any) -> None:
    alice, bob = user_factory(), user_factory()
    match = finished_match([alice, bob])
    rated_games.match_ratings_apply(match_id=match.pk)
    # Pretend the "already applied" check saw nothing (as a racing run could).
    with mock.patch.object(rated_games.rating_services, "_already_applied", return_value=False):
        assert rated_games.match_ratings_apply(match_id=match.pk) == 0
    assert RatingChange.objects.count() == 2
    assert rating(alice).games == 1


def test_an_earlier_match_still_waiting_is_applied_first(
    user_factory: Any, finished_match: Any
) -> None:
    alice, bob, carol = user_factory(), user_factory(), user_factory()
    first = finished_match([alice, bob], winner=0)  # its task was lost
    second = finished_match([bob, carol], winner=0)  # shares bob
    third = finished_match([carol, alice], winner=1)
    assert rated_games.match_ratings_apply(match_id=third.pk) == 6
    order = list(
        RatingChange.objects.filter(user=bob).order_by("id").values_list("match_id", flat=True)
    )
    assert order == [first.pk, second.pk]
    # Exactly the numbers of applying them one by one, in order.
    a, b, c = Skill(), Skill(), Skill()
    [[a], [b]] = rate_game([[a], [b]], 0)
    [[b], [c]] = rate_game([[b], [c]], 0)
    [[c], [a]] = rate_game([[c], [a]], 1)
    assert (rating(alice).mu, rating(bob).mu, rating(carol).mu) == (a.mu, b.mu, c.mu)


def test_resigning_a_rated_match_is_a_loss_rated_on_commit(
    user_factory: Any, games: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from games.matches.services import SeatSpec, match_create, match_join

    alice, bob = user_factory(), user_factory()
    match = match_create(
        creator=alice,
        players=2,
        format="first_to_2",
        seats=[SeatSpec("user", bob.username)],
        rated=True,
    )
    match_join(match_id=match.pk, user=bob)
    games.play(match, 3)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        match_resign(match_id=match.pk, user=alice)
    assert callbacks
    assert RatingChange.objects.get(match_id=match.pk, user=alice).result == "loss"
    assert RatingChange.objects.get(match_id=match.pk, user=bob).result == "win"


def test_a_rated_match_played_out_is_rated_on_commit(
    user_factory: Any, games: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from games.matches.services import SeatSpec, match_create, match_join

    alice, bob = user_factory(), user_factory()
    match = match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("user", bob.username)],
        rated=True,
    )
    match_join(match_id=match.pk, user=bob)
    games.play(match, 39)
    with django_capture_on_commit_callbacks(execute=True):
        games.play(match, 1)
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED
    assert RatingChange.objects.filter(match_id=match.pk).count() == 2


def test_sweep_requeues_finished_rated_matches_without_changes(
    user_factory: Any, finished_match: Any
) -> None:
    alice, bob = user_factory(), user_factory()
    lost = finished_match([alice, bob])  # finished in 2025: long ago
    done = finished_match([bob, alice])
    rated_games.match_ratings_apply(match_id=done.pk)  # also applies `lost` first
    RatingChange.objects.filter(match_id=lost.pk).delete()
    queued: list[str] = []
    with mock.patch.object(rate_match, "delay", side_effect=queued.append):
        assert rated_games.unrated_matches_queue() == 1
    assert queued == [str(lost.pk)]


def test_sweep_aggregates_statistics_once(user_factory: Any, finished_match: Any) -> None:
    alice, bob = user_factory(), user_factory()
    m1 = finished_match([alice, bob], winner=0, deals=[(70, 50, 0), (60, 60, None), (80, 40, 0)])
    m2 = finished_match([alice, bob], winner=None, deals=[(60, 60, None)])
    for match in (m1, m2):
        rated_games.match_ratings_apply(match_id=match.pk)
    assert rated_games.ratings_sweep() == (0, 4)
    assert rated_games.ratings_sweep() == (0, 0)  # run again: nothing counted twice
    stats = PlayerStats.objects.get(user=alice, category="1v1")
    assert (stats.games, stats.wins, stats.draws, stats.losses) == (2, 1, 1, 0)
    assert (stats.deals_played, stats.deals_won, stats.points) == (4, 2, 270)
    assert stats.points_per_deal == 67.5
    bob_stats = PlayerStats.objects.get(user=bob, category="1v1")
    assert (bob_stats.wins, bob_stats.losses, bob_stats.points) == (0, 1, 210)


def test_recompute_equals_the_incremental_path(
    user_factory: Any, finished_match: Any, snapshot: Any, capsys: Any
) -> None:
    people = [user_factory() for _ in range(6)]
    results = [0, 1, None, 0, 1, 1, 0, None, 0, 1]
    for i, winner in enumerate(results):
        pair = [people[i % 6], people[(i * 5 + 1) % 6]]
        if pair[0] == pair[1]:
            pair[1] = people[(i + 3) % 6]
        finished_match(pair, winner=winner)
        four = [people[(i + k) % 6] for k in range(4)]
        finished_match(four, winner=winner, deals=[(61, 59, 0), (20, 100, 1)] if winner else None)
    finished_match(people[:2], rated=False)
    from games.models import Match

    # Incrementally, each match's task in finish order, then the periodic aggregation.
    for match in Match.objects.filter(rated=True).order_by("finished_at", "id"):
        rate_match(str(match.pk))
    rated_games.ratings_sweep()
    incremental = snapshot()
    assert len(incremental["changes"]) == 10 * 2 + 10 * 4
    call_command("ratings_recompute")
    assert snapshot() == incremental
    err = capsys.readouterr().err
    assert "20/20 matches" in err and "100.0%" in err
    # Recompute from nothing gives the same too.
    RatingChange.objects.all().delete()
    Rating.objects.all().delete()
    PlayerStats.objects.all().delete()
    call_command("ratings_recompute", "--no-progress")
    assert snapshot() == incremental
