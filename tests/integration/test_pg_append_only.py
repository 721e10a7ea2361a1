"""The move log is append-only: the model refuses changes, and so does the database.

The model guards (Move.save/delete, MoveQuerySet.update/delete) hold on every database.
The triggers of games migration 0002 hold underneath: on PostgreSQL UPDATE, DELETE and
TRUNCATE are refused (TRUNCATE unless the test-only hatch `briscola.allow_truncate` is on);
on SQLite, UPDATE is.
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


def allow_truncate_setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('briscola.allow_truncate', true)")
        return str(cursor.fetchone()[0])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_truncate_is_refused_without_the_hatch(played: tuple[Deal, list[Move]], games: Any) -> None:
    deal, _ = played
    before = games.move_log(deal)
    assert connection.get_autocommit()  # a real transaction below, not a savepoint
    for sql in ("TRUNCATE games_move", "TRUNCATE games_deal CASCADE"):
        with (
            pytest.raises(DatabaseError, match="append-only: TRUNCATE") as excinfo,
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute("SET LOCAL briscola.allow_truncate = 'off'")
            cursor.execute(sql)
        assert getattr(excinfo.value.__cause__, "sqlstate", None) == RESTRICT_VIOLATION
    assert games.move_log(deal) == before
    # SET LOCAL ended with its transaction: the test database's own setting is back.
    assert allow_truncate_setting() == "on"


def databases_with_the_hatch() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.datname FROM pg_db_role_setting s "
            "JOIN pg_database d ON d.oid = s.setdatabase "
            "WHERE s.setrole = 0 AND 'briscola.allow_truncate=on' = ANY(s.setconfig)"
        )
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_truncate_hatch_is_on_for_the_test_database_only(
    played: tuple[Deal, list[Move]],
    together: Any,
    no_stray_connections: None,
) -> None:
    """What conftest's django_db_setup sets up, and what Django's flush needs."""
    test_database = connection.settings_dict["NAME"]
    assert allow_truncate_setting() == "on"
    # A new connection inherits it from the database.
    (outcome,) = together([allow_truncate_setting])
    assert outcome.error is None and outcome.value == "on"
    hatched = databases_with_the_hatch()
    assert test_database in hatched
    url = os.environ.get("DATABASE_URL", "")
    if url:
        assert environ.Env.db_url_config(url)["NAME"] not in hatched

    # Django empties tables between transactional tests exactly like this.
    assert Move.objects.exists()
    call_command("flush", verbosity=0, interactive=False)
    assert not Move.objects.exists()
    assert not Deal.objects.exists()
