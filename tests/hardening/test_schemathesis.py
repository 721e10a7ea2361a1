"""Schemathesis against the live OpenAPI schema: no 5xx, every response as documented.

The schema is the one the app serves at /api/schema/, fetched in-process through the Django
WSGI application at collection (it reads no database); the requests go through the same
application, so they see pytest-django's test database, SQLite or PostgreSQL alike. Every
operation of the schema is a test of its own, with a bounded number of generated requests
(the examples, coverage and fuzzing phases; MAX_EXAMPLES for fuzzing) drawn
deterministically from a fixed seed, each checked for server errors and for conformance to
the schema: status code documented, content type, body schema.

Most requests carry the token of a player, alice, who has matches in every state (waiting,
invited, active with a real deal half played, finished); some are sent as another player, a
stranger, anonymously or with a bad token. Half of the time the path parameters (match_id,
deal_id, username) take real values, a move is the legal move of alice's active match, a
record to check is a real deal's, a token request has alice's password and a registration
is one the password rules accept: generated requests reach the real code paths, not only
404s and 400s, and each operation must answer 2xx at least once. Each request runs in a
savepoint rolled back afterwards: every example sees the same world, whatever the one
before it did (aborted, resigned, joined, played).

The throttles are out of reach during the runs (see _throttles_out_of_reach);
test_a_throttled_response_conforms checks the 429 against the schema.

Run it alone: `.venv/bin/pytest tests/hardening/test_schemathesis.py -q` (on PostgreSQL with
DATABASE_URL=postgres://...). A failure prints the request as a curl command.
"""

from __future__ import annotations

import hashlib
import io
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.management import call_command
from django.db import close_old_connections, transaction
from django.test import TestCase, override_settings
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.models import User
from accounts.services import access_token_create
from briscola_service.wsgi import application
from games import rules
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal, Seat
from games.replays import selectors as replays
from tests.conftest import Games, celery_conf

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-password-1"  # tests/conftest.py's DEFAULT_PASSWORD, user_factory's
SEED = 20250101
MAX_EXAMPLES = 50

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

# Fixed tokens (Token.key is 40 characters at most), so that the schema's auth configuration,
# written at collection, can name alice's before the fixture creates her.
# dora has no match: she may still become a bot's account (POST /auth/me/bot).
TOKENS = {name: f"schemathesis{name}".ljust(40, "0") for name in ("alice", "bob", "carol", "dora")}

# Who sends a request: alice (who has the matches) most of the time; bob, her opponent;
# carol, who only invited her; nobody; or a token that is no one's.
VIEWERS = ["alice", "alice", "alice", "alice", "bob", "carol", "anonymous", "bad token"]


@dataclass
class World:
    """The real values the generated requests may use."""

    match_ids: list[str]
    deal_ids: list[int]
    usernames: list[str]
    active_match_id: str  # a match where it is alice's turn ...
    legal_move: dict[str, Any]  # ... and a legal move there
    # For the operations that succeed on one kind of match only: the ids where they can
    # (drawn more often, so that each operation's run reaches its success at least once).
    succeeds_on: dict[str, list[str]]
    record: dict[str, Any]  # a finished deal's record, for POST /records/check
    token_ids: list[int]  # alice's personal access tokens


@pytest.fixture(scope="module")
def world(django_db_setup: None, django_db_blocker: Any) -> Iterator[World]:
    """Alice's world, built once for the module, as TestCase.setUpTestData does: inside a
    transaction rolled back at the module's end. Each test runs in a savepoint of it
    (pytest-django's ``db``) and each request in one more (:func:`rolled_back`), so every
    example of every operation sees the world exactly as built, whatever ran before."""
    # As the deterministic_seeds fixture does, for the module instead of a test.
    prefix = hashlib.sha256(__name__.encode()).hexdigest()[:32]
    seeds = itertools.count(1)
    with (
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]),
        celery_conf(task_always_eager=True, task_eager_propagates=True),
        transaction.atomic(),
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setattr(rules, "new_seed", lambda: f"{prefix}-{next(seeds)}")
        yield _build_world(TestCase.captureOnCommitCallbacks)
        transaction.set_rollback(True)


def _user(username: str) -> User:
    """As tests/conftest.py's user_factory: an account with PASSWORD and a token."""
    user = User(username=username)
    user.set_password(PASSWORD)
    user.save()
    Token.objects.create(user=user)
    return user


def _build_world(django_capture_on_commit_callbacks: Any) -> World:
    games = Games
    call_command("ensure_bots", stdout=io.StringIO())
    people = {name: _user(name) for name in TOKENS}
    for name, key in TOKENS.items():
        Token.objects.filter(user=people[name]).update(key=key)
    alice, bob, carol = people["alice"], people["bob"], people["carol"]

    # Waiting: alice's own (she may abort it), bob's public one with an open seat and
    # carol's invitation to alice (she may join either).
    waiting_mine = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])
    waiting_open = match_create(
        creator=bob, players=2, format="single", seats=[SeatSpec("open")], public=True
    )
    invited = match_create(
        creator=carol, players=2, format="single", seats=[SeatSpec("user", "alice")]
    )

    # Active, its first deal a few moves in, alice to play.
    active = games.person_match(alice, bob, format="first_to_2")
    users = games.seat_users(active)
    state = games.state(active)
    while state.ply < 3 or users[state.turn] != alice:
        games.play(active, 1)
        state = games.state(active)
    legal_move = {"card": state.legal_moves()[0].code, "ply": state.ply}

    # Finished, public and rated (the rating task runs at commit): every replay and export of
    # its deal is open, and alice and bob have a rating history.
    with django_capture_on_commit_callbacks(execute=True):
        finished = match_create(
            creator=alice,
            players=2,
            format="single",
            seats=[SeatSpec("user", "bob")],
            public=True,
            rated=True,
        )
        finished = match_join(match_id=finished.pk, user=bob)
        games.play(finished, 40)
    finished_deal = Deal.objects.get(match=finished, number=1)
    assert finished_deal.is_over

    # The clocks' routes (issue 14): an invitation to decline, a waiting match alice
    # joined (she may leave it), a match where the timeout bot played her seat (return).
    to_decline = match_create(
        creator=carol, players=2, format="single", seats=[SeatSpec("user", "alice")]
    )
    joined = match_create(creator=bob, players=4, format="single", seats=[SeatSpec("open")] * 3)
    match_join(match_id=joined.pk, user=alice)
    away = games.person_match(alice, carol)
    Seat.objects.filter(match=away, user=alice).update(away=True)

    matches = [waiting_mine, waiting_open, invited, active, finished, to_decline, joined, away]
    bots = User.objects.filter(is_bot=True).order_by("username").values_list("username", flat=True)
    return World(
        match_ids=[str(m.pk) for m in matches],
        deal_ids=list(
            Deal.objects.filter(match__in=matches).order_by("pk").values_list("pk", flat=True)
        ),
        usernames=[*TOKENS, *bots],
        active_match_id=str(active.pk),
        legal_move=legal_move,
        succeeds_on={
            "matches_join": [str(waiting_open.pk), str(invited.pk)],
            "matches_abort": [str(waiting_mine.pk)],
            "matches_resign": [str(active.pk)],
            "matches_moves_create": [str(active.pk)],
            "matches_decline": [str(to_decline.pk)],
            "matches_leave": [str(joined.pk)],
            "matches_return": [str(away.pk)],
            "matches_rematch": [str(finished.pk)],
            "matches_stream": [str(active.pk), str(finished.pk)],
        },
        record=replays.deal_export_for_user(deal=finished_deal, user=alice).to_dict(),
        token_ids=[access_token_create(user=alice, name="ci", scopes=["read"])[0].pk],
    )


schema = schemathesis.openapi.from_wsgi(
    "/api/schema/",
    application,
    config=SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True},
            "auth": {"openapi": {"bearerAuth": {"bearer": TOKENS["alice"]}}},
        }
    ),
)

# The world of the running test, for the hooks. None at collection, when the schema is
# loaded and the explicit examples are drawn: those keep their generated values.
_current: dict[str, World] = {}


def throttle_rates(settings: Any, rate: str | None) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": rate, "user": rate},
    }


@pytest.fixture(autouse=True)
def _throttles_out_of_reach(settings: Any) -> None:
    """The throttles count but never refuse: an operation's run sends more than the anonymous
    rate (60/min), and every request after that would be a 429 that tests nothing else (the
    generated credentials and accounts of the fuzzing phase come last). The 429 itself is
    checked by test_a_throttled_response_conforms, the throttles by test_throttling.py."""
    throttle_rates(settings, "100000/min")


@pytest.fixture(autouse=True)
def _test_connection_kept_open() -> Iterator[None]:
    """As in Django's test client: the WSGI handler's close_old_connections, at each
    request's start and end, would close the test's connection, which is inside the test's
    transaction (on PostgreSQL; SQLite's in-memory connection ignores close())."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _current_world(world: World) -> Iterator[None]:
    _current["world"] = world
    yield
    _current.clear()


# The status codes of the running operation's requests (of its own method: the coverage
# phase also tries others, which answer 405).
_statuses: list[int] = []


@schema.hook
def after_call(context: Any, case: Any, response: Any) -> None:
    if case.method.upper() == case.operation.method.upper():
        _statuses.append(response.status_code)


@pytest.fixture(autouse=True)
def _some_request_succeeded(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each operation answered 2xx at least once: the real ids, credentials and bodies
    reach the code behind the errors (were alice's token refused, say, every request would
    be a documented 401 and the run would prove little)."""
    _statuses.clear()
    yield
    if _statuses:  # none when the test failed before its first request
        assert any(200 <= code < 300 for code in _statuses), (
            f"{request.node.name}: no request succeeded, statuses {sorted(set(_statuses))}"
        )


def _operation_id(context: Any) -> str | None:
    if context.operation is None:
        return None
    operation_id: str | None = context.operation.definition.raw.get("operationId")
    return operation_id


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any] | None) -> Any:
    """Half of the time, the path's ids are real ones of alice's world."""
    world = _current.get("world")
    if world is None or not path_parameters:
        return st.just(path_parameters)
    choices: dict[str, list[Any]] = {
        # An operation that succeeds on one match only (return, leave...) is sent there.
        "match_id": world.succeeds_on.get(_operation_id(context) or "") or world.match_ids,
        "deal_id": world.deal_ids,
        "username": world.usernames,
        "token_id": world.token_ids,
    }
    real = {
        name: st.sampled_from(choices[name]) if name in choices else st.just(value)
        for name, value in path_parameters.items()
    }
    return st.one_of(st.just(path_parameters), st.fixed_dictionaries(real))


@schema.hook
def flatmap_body(context: Any, body: Any) -> Any:
    """Half of the time: a finished deal's record to check, alice's credentials for a token,
    or a new account that the password rules accept."""
    world = _current.get("world")
    operation_id = _operation_id(context)
    if world is None:
        return st.just(body)
    real: st.SearchStrategy[Any]
    if operation_id == "records_check":
        real = st.just(world.record)
    elif operation_id == "auth_token_obtain":
        real = st.just({"username": "alice", "password": PASSWORD})
    elif operation_id == "auth_register":
        real = st.fixed_dictionaries(
            {
                "username": st.from_regex(r"[a-z][a-z0-9_]{2,15}", fullmatch=True),
                "password": st.just(PASSWORD),
            }
        )
    else:
        return st.just(body)
    return st.one_of(st.just(body), real)


@contextmanager
def rolled_back() -> Iterator[None]:
    """Whatever the request writes is undone: each example sees the fixture's world."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def send_as(case: Any, viewer: str) -> Any:
    """The case with a viewer's credentials instead of alice's (from the configuration)."""
    if viewer == "alice":
        return case
    case.headers.pop("Authorization", None)
    if viewer == "bad token":
        case.headers["Authorization"] = "Token " + "0" * 40
    elif viewer != "anonymous":
        case.headers["Authorization"] = f"Token {TOKENS[viewer]}"
    return case


def from_the_start(case: Any) -> Any:
    """The case without a position to resume a stream from (Last-Event-ID, ?after=)."""
    if case.headers:
        case.headers.pop("Last-Event-ID", None)
    if case.query:
        case.query = {k: v for k, v in case.query.items() if k != "after"}
    return case


def legal_move(case: Any, world: World) -> Any:
    """The case as alice's legal move in her active match."""
    case.path_parameters = {**case.path_parameters, "match_id": world.active_match_id}
    case.body = dict(world.legal_move)
    return case


@schema.hook
def flatmap_case(context: Any, case: Any) -> Any:
    """Who sends the request: alice most of the time (see VIEWERS). A move is, half of the
    time, the legal one of alice's active match (its path and body drawn together)."""
    as_viewer = st.sampled_from(VIEWERS).map(lambda viewer: send_as(case, viewer))
    if _operation_id(context) == "auth_me_bot":  # only an account without a match may
        return st.one_of(as_viewer, st.just("dora").map(lambda viewer: send_as(case, viewer)))
    if _operation_id(context) in ("matches_stream", "account_stream"):
        # Half of the time a stream from the start: no generated position to resume from.
        return st.one_of(as_viewer, as_viewer.map(from_the_start))
    world = _current.get("world")
    if world is None or _operation_id(context) != "matches_moves_create":
        return as_viewer
    return st.one_of(as_viewer, as_viewer.map(lambda case: legal_move(case, world)))


@schema.parametrize()
@hypothesis_settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
)
def test_api_conforms_to_its_schema(case: Any) -> None:
    with rolled_back():
        case.call_and_validate(checks=CHECKS)


def test_a_throttled_response_conforms(settings: Any) -> None:
    """Over the rate, the answer is a documented 429 (for an anonymous and a signed-in
    request alike)."""
    throttle_rates(settings, "1/min")  # after _throttles_out_of_reach
    for operation_id, headers in [
        ("auth_token_obtain", {}),
        ("auth_me", {"Authorization": f"Token {TOKENS['alice']}"}),
    ]:
        operation = schema.find_operation_by_id(operation_id)
        if operation.body:
            credentials = {"username": "alice", "password": PASSWORD}
            case = operation.Case(headers=headers, body=credentials, media_type="application/json")
        else:
            case = operation.Case(headers=headers)
        statuses = []
        for _ in range(2):
            with rolled_back():
                statuses.append(case.call_and_validate(checks=CHECKS).status_code)
        assert statuses[-1] == 429, (operation_id, statuses)
