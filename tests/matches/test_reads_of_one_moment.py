"""Every read of the games API (every GET route but the streams) reads its rows in one
transaction, so that all its statements see the rows of one moment (games.http
.reads_of_one_moment). Out of one, a move or a join committed between two statements of a
read mixed two states in its answer: tests/integration/test_pg_consistent_reads.py shows
the mix on PostgreSQL for a match's detail. The routes are taken from the URL
configuration, so a read added later is checked too."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.db import connection
from django.urls import URLPattern

from accounts.models import User
from games import urls as game_urls
from games.live.apis import _StreamApi
from games.matches import apis
from games.models import Deal

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_password_hashing"),
]

# The rows of games and ratings; an account's own row and its tokens are read before the
# view, by the authentication, one statement each.
GAME_TABLES = ('"games_', '"accounts_rating', '"accounts_playerstats')
WRITES = ("INSERT", "UPDATE", "DELETE")


def _read_routes() -> Iterator[URLPattern]:
    for pattern in game_urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        view = getattr(pattern.callback, "view_class", None)
        if view is not None and hasattr(view, "get") and not issubclass(view, _StreamApi):
            yield pattern


def _get_recording(client: Any, url: str) -> tuple[Any, list[tuple[str, bool]]]:
    """The answer to GET ``url``, and each statement it ran with whether it ran in a
    transaction."""
    statements: list[tuple[str, bool]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, connection.in_atomic_block))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        return client.get(url), statements


def test_every_read_of_the_api_sees_the_rows_of_one_moment(
    user_factory: Callable[..., User], games: Any, auth_client: Callable[[User], Any]
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob, format="first_to_2")
    games.play(match, 40)  # the first deal, whole
    first = Deal.objects.get(match=match, number=1)
    games.play(match, 3)  # and three cards of the second
    values = {"match_id": str(match.pk), "deal_id": str(first.pk), "username": "alice"}
    client = auth_client(alice)

    routes = list(_read_routes())
    assert len(routes) >= 15  # the matches', deals', replays', players' reads
    for pattern in routes:
        url = "/api/v1/" + str(pattern.pattern)
        for name, value in values.items():
            url = url.replace(f"<str:{name}>", value)
        caches["default"].clear()  # no snapshot kept: read from the rows
        response, statements = _get_recording(client, url)
        assert response.status_code == 200, (url, response.content[:300])
        reads = [(sql, atomic) for sql, atomic in statements if any(t in sql for t in GAME_TABLES)]
        assert reads, url
        apart = [sql for sql, atomic in reads if not atomic]
        if pattern.callback.view_class is apis.MatchDetailApi:  # type: ignore[attr-defined]
            # The poll's version check (two statements, whose answer decides only whether
            # to read) comes first; the read that follows is one moment.
            assert [sql for sql, _ in reads[: len(apart)]] == apart and len(apart) <= 2, apart
            assert len(reads) > len(apart), url
        else:
            assert not apart, (url, apart)
        assert not [sql for sql, _ in reads if sql.lstrip().upper().startswith(WRITES)], url
