"""The move log is append-only: the model refuses changes, and so does the database.

The model guards (Move.save/delete, MoveQuerySet.update/delete) hold on every database.
The triggers of games migrations 0002 and 0005 hold underneath: on PostgreSQL UPDATE,
DELETE and TRUNCATE are refused (TRUNCATE only in a database with the schema
`briscola_test_truncate`, which the test database's setup alone creates: no session setting
lets it through); on SQLite, UPDATE is. A deal's seed, commitment and identity cannot be
changed either, on both.
"""

import os
from typing import Any

import environ
import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.models import ProtectedError, QuerySet

from games.models import AppendOnlyError, Deal, Match, Move

pytestmark = pytest.mark.usefixtures("fast_password_hashing")

# PostgreSQL's SQLSTATE for the trigger's `USING ERRCODE = 'restrict_violation'`.
RESTRICT_VIOLATION = "23001"


@pytest.fixture
def played(user_factory: Any, games: Any, deterministic_seeds: None) -> tuple[Deal, list[Move]]:
    """A person-vs-person deal with five moves, played through the services."""
    match = games.person_match(user_factory(), user_factory())
    moves = games.play(match, 5)
    deal = games.current_deal(match)
    assert games.move_log(deal) == [(m.ply, m.seat, m.card) for m in moves]
    assert [m.ply for m in moves] == [0, 1, 2, 3, 4]
    return deal, moves


def refused_by_database(sql: str, params: tuple[Any, ...] = ()) -> DatabaseError:
    """Run raw SQL in a savepoint; it must fail with the trigger's append-only error."""
    with (
        pytest.raises(DatabaseError, match="append-only") as excinfo,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params)
    if connection.vendor == "postgresql":
        assert getattr(excinfo.value.__cause__, "sqlstate", None) == RESTRICT_VIOLATION
    return excinfo.value


def other_card(card: str) -> str:
    return "Ab" if card != "Ab" else "2b"


# --- The model, on any database --------------------------------------------------------------


@pytest.mark.django_db
def test_a_stored_move_cannot_be_saved_again(played: tuple[Deal, list[Move]], games: Any) -> None:
    deal, moves = played
    before = games.move_log(deal)
    move = Move.objects.get(pk=moves[2].pk)
    move.card = other_card(move.card)
    with pytest.raises(AppendOnlyError, match="append-only"):
        move.save()
    with pytest.raises(AppendOnlyError):
        move.save(update_fields=["card"])
    with pytest.raises(AppendOnlyError):
        moves[0].save(force_update=True)
    assert games.move_log(deal) == before


@pytest.mark.django_db
def test_a_move_cannot_be_deleted(played: tuple[Deal, list[Move]], games: Any) -> None:
    deal, moves = played
    before = games.move_log(deal)
    with pytest.raises(AppendOnlyError, match="never deleted"):
        moves[-1].delete()
    assert games.move_log(deal) == before
    assert Move.objects.filter(pk=moves[-1].pk).exists()


@pytest.mark.django_db
def test_queryset_update_is_refused(played: tuple[Deal, list[Move]], games: Any) -> None:
    deal, moves = played
    before = games.move_log(deal)
    with pytest.raises(AppendOnlyError, match="never updated"):
        Move.objects.filter(deal=deal, ply=0).update(card=other_card(moves[0].card))
    with pytest.raises(AppendOnlyError):
        Move.objects.all().update(seat=3)
    with pytest.raises(AppendOnlyError):
        deal.moves.update(card="Ab")  # the related manager is a MoveQuerySet too
    moves[1].card = other_card(moves[1].card)
    # bulk_update runs in atomic(savepoint=False): give it a savepoint to spoil.
    with pytest.raises(AppendOnlyError), transaction.atomic():
        Move.objects.bulk_update([moves[1]], ["card"])
    assert games.move_log(deal) == before


@pytest.mark.django_db
def test_queryset_delete_is_refused(played: tuple[Deal, list[Move]], games: Any) -> None:
    deal, _ = played
    before = games.move_log(deal)
    with pytest.raises(AppendOnlyError, match="never deleted"):
        Move.objects.filter(deal=deal, ply__gte=3).delete()
    with pytest.raises(AppendOnlyError):
        Move.objects.all().delete()
    with pytest.raises(AppendOnlyError):
        deal.moves.all().delete()
    assert games.move_log(deal) == before


@pytest.mark.django_db
def test_moves_protect_their_deal_and_match(played: tuple[Deal, list[Move]], games: Any) -> None:
    deal, _ = played
    before = games.move_log(deal)
    with pytest.raises(ProtectedError), transaction.atomic():
        Deal.objects.get(pk=deal.pk).delete()
    with pytest.raises(ProtectedError), transaction.atomic():
        Match.objects.get(pk=deal.match_id).delete()
    assert Deal.objects.filter(pk=deal.pk).exists()
    assert games.move_log(deal) == before


@pytest.mark.django_db
def test_raw_update_is_refused_by_the_database(played: tuple[Deal, list[Move]], games: Any) -> None:
    """SQLite and PostgreSQL both have the UPDATE trigger, under the model's guard."""
    deal, moves = played
    before = games.move_log(deal)
    refused_by_database(
        "UPDATE games_move SET card = %s WHERE id = %s", (other_card(moves[0].card), moves[0].pk)
    )
    refused_by_database("UPDATE games_move SET ply = ply + 1")
    # A plain QuerySet skips the model's guard; the trigger still stops it.
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        QuerySet(model=Move).filter(deal=deal).update(seat=0)
    assert games.move_log(deal) == before


# --- The PostgreSQL triggers -----------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db
def test_raw_delete_is_refused_on_postgres(played: tuple[Deal, list[Move]], games: Any) -> None:
    deal, moves = played
    before = games.move_log(deal)
    refused_by_database("DELETE FROM games_move WHERE id = %s", (moves[-1].pk,))
    refused_by_database("DELETE FROM games_move")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        QuerySet(model=Move).filter(deal=deal).delete()
    assert games.move_log(deal) == before


TRUNCATE_SCHEMA = "briscola_test_truncate"  # tests/conftest.py


def truncate_schema_exists() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regnamespace(%s) IS NOT NULL", [TRUNCATE_SCHEMA])
        return bool(cursor.fetchone()[0])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_truncate_is_refused_whatever_a_session_sets(
    played: tuple[Deal, list[Move]], games: Any
) -> None:
    """Issue 19, item 16: ``SET briscola.allow_truncate = 'on'`` was a hatch any session
    could open. In a database without the test schema (dropped here inside a transaction
    that is rolled back) TRUNCATE is refused, whatever the session set."""
    deal, _ = played
    before = games.move_log(deal)
    assert connection.get_autocommit()  # a real transaction below, not a savepoint
    for sql in ("TRUNCATE games_move", "TRUNCATE games_deal CASCADE"):
        with pytest.raises(RuntimeError, match="rolled back"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(f"DROP SCHEMA IF EXISTS {TRUNCATE_SCHEMA}")
                cursor.execute("SET LOCAL briscola.allow_truncate = 'on'")
                cursor.execute("SET LOCAL search_path = pg_temp, public")
            assert not truncate_schema_exists()
            with (
                pytest.raises(DatabaseError, match="append-only: TRUNCATE") as excinfo,
                transaction.atomic(),
                connection.cursor() as cursor,
            ):
                cursor.execute(sql)
            assert getattr(excinfo.value.__cause__, "sqlstate", None) == RESTRICT_VIOLATION
            raise RuntimeError("rolled back")
    assert games.move_log(deal) == before
    assert truncate_schema_exists()  # the DROP was rolled back with its transaction


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_truncate_is_let_through_in_the_test_database_only(
    played: tuple[Deal, list[Move]], no_stray_connections: None
) -> None:
    """What conftest's django_db_setup sets up, and what Django's flush needs."""
    assert truncate_schema_exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('briscola.allow_truncate', true)")
        assert cursor.fetchone()[0] in (None, "")  # no setting is involved any more
    url = os.environ.get("DATABASE_URL", "")
    configured = environ.Env.db_url_config(url)["NAME"] if url else None
    if configured and configured != connection.settings_dict["NAME"]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [configured])
            exists = cursor.fetchone() is not None
        if exists:  # the database the service itself would use has no such schema
            import psycopg

            params = {**connection.get_connection_params(), "dbname": configured}
            params.pop("cursor_factory", None)
            params.pop("context", None)
            with psycopg.connect(**params) as other, other.cursor() as cursor:
                cursor.execute("SELECT to_regnamespace(%s) IS NULL", [TRUNCATE_SCHEMA])
                assert cursor.fetchone()[0] is True

    # Django empties tables between transactional tests exactly like this.
    assert Move.objects.exists()
    call_command("flush", verbosity=0, interactive=False)
    assert not Move.objects.exists()
    assert not Deal.objects.exists()


# --- A deal's seed, commitment and identity, on any database ---------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "column, value",
    [
        ("seed", "'another seed'"),
        ("commitment", "'" + "0" * 64 + "'"),
        ("number", "number + 10"),
        ("dealer", "1 - dealer"),
        ("id", "id + 1000"),
    ],
)
def test_a_deals_seed_commitment_and_identity_are_immutable(
    played: tuple[Deal, list[Move]], column: str, value: str
) -> None:
    """Issue 19, item 16: a plain UPDATE changed a deal's seed and commitment."""
    deal, _ = played
    with (
        pytest.raises(DatabaseError, match="immutable") as excinfo,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"UPDATE games_deal SET {column} = {value} WHERE id = %s", [deal.pk])
    if connection.vendor == "postgresql":
        assert getattr(excinfo.value.__cause__, "sqlstate", None) == RESTRICT_VIOLATION
    again = Deal.objects.get(pk=deal.pk)
    assert (again.seed, again.commitment, again.number, again.dealer) == (
        deal.seed,
        deal.commitment,
        deal.number,
        deal.dealer,
    )


@pytest.mark.django_db
def test_a_deal_moving_to_another_match_is_refused(
    played: tuple[Deal, list[Move]], user_factory: Any, games: Any
) -> None:
    deal, _ = played
    other = games.person_match(user_factory(), user_factory())
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
        Deal.objects.filter(pk=deal.pk).update(match=other)
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
        Deal.objects.filter(pk=deal.pk).update(seed="x" * 32)


@pytest.mark.django_db
def test_a_deals_result_is_still_written_when_it_ends(
    played: tuple[Deal, list[Move]], games: Any
) -> None:
    """The trigger leaves the columns a deal's end writes alone (and a save of the same
    values, as Django's full save does)."""
    deal, _ = played
    match = deal.match
    games.play(match, 40 - len(games.move_log(deal)))
    ended = Deal.objects.get(pk=deal.pk)
    assert ended.status == "finished" and ended.points_team0 is not None
    ended.save()  # every column, unchanged
