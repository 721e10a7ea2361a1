"""tests/lanes.py, which `make test` runs: the two lanes share no database and no Redis."""

from tests.lanes import NO_TESTS_COLLECTED, lane_env, lane_passed


def test_the_side_lane_gets_its_own_database_and_redis_number() -> None:
    env = {
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/briscola_ci",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "OTHER": "kept",
    }
    assert lane_env(env) == {
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/briscola_ci_side",
        "REDIS_URL": "redis://127.0.0.1:6379/1",
        "OTHER": "kept",
    }
    assert lane_env({"REDIS_URL": "redis://127.0.0.1:6379"})["REDIS_URL"].endswith("/1")
    assert lane_env({"REDIS_URL": "redis://h:6379/15"})["REDIS_URL"] == "redis://h:6379/0"
    second = lane_env(env, 2)  # the second side lane: neither the main lane's nor the first's
    assert second["DATABASE_URL"].endswith("/briscola_ci_side2")
    assert second["REDIS_URL"] == "redis://127.0.0.1:6379/2"


def test_the_side_lanes_together_run_every_test_the_main_lane_does_not() -> None:
    """A test marked processes, browser or side_lane runs in exactly one side lane."""
    from tests.lanes import SIDE_LANE, SIDE_LANES

    assert SIDE_LANE == "processes or browser or side_lane"
    for browser, processes, side_lane in (
        (True, False, False),
        (False, True, False),
        (True, True, False),
        (False, False, True),
        (False, True, True),
    ):
        markers = {"browser": browser, "processes": processes, "side_lane": side_lane}
        chosen = [m for m in SIDE_LANES if eval(m, {}, markers)]  # noqa: S307 - our own text
        assert len(chosen) == 1, (markers, chosen)


def test_sqlite_and_no_services_are_left_alone() -> None:
    # On SQLite each pytest process's test database is a file of its own, in a temporary
    # directory (tests/conftest.py, tests/test_sqlite_test_database.py): nothing to separate.
    env = {"DATABASE_URL": "sqlite:///db.sqlite3"}
    assert lane_env(env) == env
    assert lane_env({}) == {}


def test_a_lane_without_tests_passes_only_when_options_chose_the_tests() -> None:
    assert lane_passed(0, filtered=False)
    assert lane_passed(NO_TESTS_COLLECTED, filtered=True)
    assert not lane_passed(NO_TESTS_COLLECTED, filtered=False)
    assert not lane_passed(1, filtered=True)
