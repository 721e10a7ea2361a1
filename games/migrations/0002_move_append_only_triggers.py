"""Moves are append-only in the database too: UPDATE, DELETE and TRUNCATE are refused.

PostgreSQL gets row triggers for UPDATE/DELETE and a statement trigger for TRUNCATE;
SQLite (the embedded default, for development) gets the UPDATE trigger; its DELETE is
left to the model guard, because Django empties SQLite tables with DELETE between
transactional tests.

The one hatch: TRUNCATE is let through on a connection where the setting
``briscola.allow_truncate`` is ``on``. Only a throw-away database sets it (the test
database, which Django empties with TRUNCATE between transactional tests); it is never
set in production.
"""

from django.db import migrations

POSTGRES_UP = """
CREATE OR REPLACE FUNCTION games_move_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' AND current_setting('briscola.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'games_move is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER games_move_no_update BEFORE UPDATE OR DELETE ON games_move
    FOR EACH ROW EXECUTE FUNCTION games_move_append_only();
CREATE TRIGGER games_move_no_truncate BEFORE TRUNCATE ON games_move
    FOR EACH STATEMENT EXECUTE FUNCTION games_move_append_only();
"""
POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS games_move_no_update ON games_move;
DROP TRIGGER IF EXISTS games_move_no_truncate ON games_move;
DROP FUNCTION IF EXISTS games_move_append_only();
"""
SQLITE_UP = [
    """CREATE TRIGGER games_move_no_update BEFORE UPDATE ON games_move
       BEGIN SELECT RAISE(ABORT, 'games_move is append-only: UPDATE is not allowed'); END;""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS games_move_no_update;",
]


def _run(statements_by_vendor):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor):  # type: ignore[no-untyped-def]
        statements = statements_by_vendor.get(schema_editor.connection.vendor, [])
        if isinstance(statements, str):
            statements = [statements]
        for sql in statements:
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_UP, "sqlite": SQLITE_UP}),
            _run({"postgresql": POSTGRES_DOWN, "sqlite": SQLITE_DOWN}),
        ),
    ]
