"""The append-only guard without a hatch (issue 19, item 16).

- A deal's seed, commitment and identity (id, match, number, dealer) never change once
  written: a trigger refuses an UPDATE that changes any of them (the deal's result
  columns are written once, when it ends, and stay writable).
- TRUNCATE of the move log was let through on any session that set
  ``briscola.allow_truncate``, which any session may set. Now it is refused unless the
  database has a schema named ``briscola_test_truncate``: only the test database's setup
  creates one (tests/conftest.py, django_db_setup), and creating a schema takes the
  database's CREATE privilege, which ordinary sessions do not have (whoever has it owns
  enough to drop the trigger anyway). The trigger functions run with a fixed
  ``search_path``, so a session cannot bring look-alike objects of its own into them.
"""

from django.db import migrations

POSTGRES_UP = """
CREATE OR REPLACE FUNCTION games_move_append_only() RETURNS trigger
    SET search_path = pg_catalog AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
            AND to_regnamespace('briscola_test_truncate') IS NOT NULL THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'games_move is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION games_deal_immutable() RETURNS trigger
    SET search_path = pg_catalog AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id
            OR NEW.match_id IS DISTINCT FROM OLD.match_id
            OR NEW.number IS DISTINCT FROM OLD.number
            OR NEW.dealer IS DISTINCT FROM OLD.dealer
            OR NEW.seed IS DISTINCT FROM OLD.seed
            OR NEW.commitment IS DISTINCT FROM OLD.commitment THEN
        RAISE EXCEPTION 'games_deal: seed, commitment and identity are immutable'
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER games_deal_immutable BEFORE UPDATE ON games_deal
    FOR EACH ROW EXECUTE FUNCTION games_deal_immutable();
"""
POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS games_deal_immutable ON games_deal;
DROP FUNCTION IF EXISTS games_deal_immutable();
CREATE OR REPLACE FUNCTION games_move_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' AND current_setting('briscola.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'games_move is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
"""
SQLITE_UP = [
    """CREATE TRIGGER games_deal_immutable BEFORE UPDATE ON games_deal
       WHEN NEW.id IS NOT OLD.id OR NEW.match_id IS NOT OLD.match_id
         OR NEW.number IS NOT OLD.number OR NEW.dealer IS NOT OLD.dealer
         OR NEW.seed IS NOT OLD.seed OR NEW.commitment IS NOT OLD.commitment
       BEGIN SELECT RAISE(ABORT,
         'games_deal: seed, commitment and identity are immutable'); END;""",
]
SQLITE_DOWN = ["DROP TRIGGER IF EXISTS games_deal_immutable;"]


def _run(statements_by_vendor):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor):  # type: ignore[no-untyped-def]
        statements = statements_by_vendor.get(schema_editor.connection.vendor, [])
        if isinstance(statements, str):
            statements = [statements]
        for sql in statements:
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("games", "0004_clocks_backfill")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_UP, "sqlite": SQLITE_UP}),
            _run({"postgresql": POSTGRES_DOWN, "sqlite": SQLITE_DOWN}),
        ),
    ]
