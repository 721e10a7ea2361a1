"""PostgreSQL: rating tasks racing each other still record each change exactly once."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import Rating, RatingChange
from games.tasks import rate_match

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_password_hashing", "no_stray_connections"),
]


def test_two_tasks_at_once_apply_a_match_once(
    user_factory: Any, finished_match: Any, together: Any
) -> None:
    players = [user_factory() for _ in range(4)]
    match = finished_match(players, winner=1)
    outcomes = together([lambda: rate_match(str(match.pk))] * 2)
    assert [o.error for o in outcomes] == [None, None]
    assert sorted(o.value for o in outcomes) == [0, 4]
    assert RatingChange.objects.count() == 4
    assert sorted(Rating.objects.values_list("games", flat=True)) == [1, 1, 1, 1]


def test_crossed_matches_at_once_neither_deadlock_nor_double_count(
    user_factory: Any, finished_match: Any, together: Any
) -> None:
    """Eight tasks over four matches that share players in opposite seat orders."""
    a, b, c, d = (user_factory() for _ in range(4))
    matches = [
        finished_match([a, b, c, d]),
        finished_match([d, c, b, a], winner=1),
        finished_match([b, a], winner=0),
        finished_match([c, a], winner=None),
    ]
    jobs = [lambda m=m: rate_match(str(m.pk)) for m in matches for _ in range(2)]
    outcomes = together(jobs)
    assert [o.error for o in outcomes] == [None] * 8
    assert sum(o.value for o in outcomes) == 4 + 4 + 2 + 2
    assert RatingChange.objects.count() == 12
    assert Rating.objects.get(user=a, category="2v2").games == 2
    assert Rating.objects.get(user=a, category="1v1").games == 2
