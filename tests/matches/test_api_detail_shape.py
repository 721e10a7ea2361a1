"""The match detail is sent as the selectors build it, without running MatchDetailOutput
over it (games/matches/apis.py, _detail_response): this proves the two agree, field for field, on
every kind of match and viewer, so the documented schema is what clients get."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.renderers import JSONRenderer

from accounts.models import User
from games.matches import selectors
from games.matches.serializers import MatchDetailOutput
from games.matches.services import SeatSpec, match_abort, match_create, match_join, match_resign
from games.models import Match

pytestmark = pytest.mark.django_db


def as_json(data: Any) -> Any:
    return json.loads(JSONRenderer().render(data))


def assert_same_as_serializer(match: Match, viewer: User) -> dict[str, Any]:
    match = Match.objects.get(pk=match.pk)
    data = selectors.match_detail_for_user(match=match, user=viewer)
    assert as_json(data) == as_json(MatchDetailOutput(data).data)
    return data


@pytest.fixture
def people(user_factory: Callable[..., User]) -> list[User]:
    return [user_factory() for _ in range(4)]


@pytest.fixture
def admin(user_factory: Callable[..., User]) -> User:
    return user_factory(is_staff=True, is_superuser=True)


def test_waiting_and_aborted_matches(people: list[User], admin: User) -> None:
    a, b, *_ = people
    open_seat = match_create(
        creator=a, players=2, format="single", seats=[SeatSpec("open")], public=True
    )
    invited = match_create(
        creator=a,
        players=4,
        format="single",
        seats=[SeatSpec("user", b.username), SeatSpec("open"), SeatSpec("bot", "greedy")],
    )
    for viewer in (a, b, admin):
        assert assert_same_as_serializer(open_seat, viewer)["current_deal"] is None
        assert_same_as_serializer(invited, viewer)
    match_abort(match_id=open_seat.pk, user=a)
    assert assert_same_as_serializer(open_seat, b)["status"] == "aborted"


@pytest.mark.parametrize("players", [2, 4])
def test_every_ply_of_a_match_for_every_seat(
    players: int,
    people: list[User],
    admin: User,
    games: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    creator, *others = people[:players]
    match = match_create(
        creator=creator,
        players=players,
        format="first_to_2",
        seats=[SeatSpec("user", u.username) for u in others],
        rated=True,
    )
    for user in others:
        match_join(match_id=match.pk, user=user)
    viewers = [*people[:players], admin]
    seen_over = False
    while True:
        for viewer in viewers:
            data = assert_same_as_serializer(match, viewer)
        match.refresh_from_db()
        if match.status != "active":
            break
        seen_over = seen_over or len(data["deals"]) > 1
        with django_capture_on_commit_callbacks(execute=True):  # rate it as it finishes
            games.play(match, 1)
    assert seen_over and data["status"] == "finished"
    assert len(data["rating_changes"]) == players  # rated in-process as it finished


def test_a_resigned_match(people: list[User], games: Any) -> None:
    a, b, *_ = people
    match = games.person_match(a, b)
    games.play(match, 5)
    match_resign(match_id=match.pk, user=b)
    for viewer in (a, b):
        assert assert_same_as_serializer(match, viewer)["end_reason"] == "resigned"
