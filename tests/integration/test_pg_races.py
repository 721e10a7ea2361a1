"""Concurrent moves on PostgreSQL: the match row lock lets exactly one move per ply through.

Each thread has its own database connection (closed when it ends) and all of them are
released together by a barrier. Bot replies are recorded instead of sent, so that the
tests play them themselves, at the moment they choose.
"""

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from django.db import connection, transaction

from accounts.models import User
from games.matches import services
from games.matches.services import SeatSpec
from games.models import Match, Seat
from games.tasks import bot_play

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_password_hashing", "deterministic_seeds", "no_stray_connections"),
]

CONFLICT_CODES = {"stale_ply", "not_your_turn"}


@pytest.fixture
def queued_bot_replies(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The (deal id, ply) of every bot reply queued, instead of sending it."""
    queued: list[tuple[int, int]] = []
    # The task's other arguments (the reply's account, whether it was queued fairly) aside.
    monkeypatch.setattr(bot_play, "delay", lambda deal_id, ply, *_: queued.append((deal_id, ply)))
    return queued


def sessions_waiting_for_a_lock() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


def moves_url(match: Match) -> str:
    return f"/api/v1/matches/{match.pk}/moves"


def via_api(client: Any, match: Match, card: str, ply: int) -> tuple[int, str | None, Any]:
    response = client.post(moves_url(match), {"card": card, "ply": ply}, format="json")
    body = response.json()
    return response.status_code, None if response.status_code == 201 else body["code"], body


def via_service(user: User, match: Match, card: str, ply: int) -> tuple[int, str | None, Any]:
    try:
        services.move_play(match_id=match.pk, user=user, card=card, ply=ply)
    except Exception as exc:
        code, status = getattr(exc, "code", None), getattr(exc, "status", None)
        if not (isinstance(code, str) and isinstance(status, int) and status < 500):
            raise  # anything but a client error is a failure of the test
        return status, code, {"code": code, "details": getattr(exc, "details", {})}
    return 201, None, {}


def results(outcomes: list[Any]) -> list[Any]:
    """The jobs' return values; none of them may have raised."""
    errors = [repr(o.error) for o in outcomes if o.error is not None]
    assert not errors, errors
    return [o.value for o in outcomes]


def mover(
    how: str, auth_client: Callable[[User], Any], user: User, match: Match, card: str, ply: int
) -> Callable[[], tuple[int, str | None, Any]]:
    if how == "api":
        return partial(via_api, auth_client(user), match, card, ply)
    return partial(via_service, user, match, card, ply)


def test_two_moves_for_the_same_ply_one_wins(
    user_factory: Any, auth_client: Any, games: Any, together: Any
) -> None:
    alice, bob = user_factory(), user_factory()
    match = games.person_match(alice, bob)
    users = {0: alice, 1: bob}
    deal = games.current_deal(match)
    for _ in range(6):
        state = games.state(deal)
        ply, seat = state.ply, state.turn
        hand = [c.code for c in state.legal_moves()]
        cards = [hand[0], hand[-1]]
        outcomes = together(
            [mover("api", auth_client, users[seat], match, card, ply) for card in cards]
        )
        answers = results(outcomes)
        assert sorted(status for status, _, _ in answers) == [201, 409], answers
        won = next(i for i, (status, _, _) in enumerate(answers) if status == 201)
        _, code, body = answers[1 - won]
        assert code == "stale_ply"
        assert body["details"] == {"current_ply": ply + 1, "your_ply": ply}
        assert answers[won][2]["current_deal"]["ply"] == ply + 1

        log = games.assert_log_consistent(deal)
        assert len(log) == ply + 1
        assert log[ply] == (ply, seat, cards[won])
    assert len(games.move_log(deal)) == 6


@pytest.mark.parametrize("how", ["api", "service"])
def test_twenty_moves_for_the_same_ply_one_wins(
    how: str, user_factory: Any, auth_client: Any, games: Any, together: Any
) -> None:
    """14 requests from the player to move, 6 from the other one, for the same ply."""
    alice, bob = user_factory(), user_factory()
    match = games.person_match(alice, bob)
    users = {0: alice, 1: bob}
    deal = games.current_deal(match)
    for _ in range(3):
        state = games.state(deal)
        ply, seat = state.ply, state.turn
        other = 1 - seat
        hand = [c.code for c in state.hands[seat]]
        other_hand = [c.code for c in state.hands[other]]
        jobs = [
            mover(how, auth_client, users[seat], match, hand[i % len(hand)], ply) for i in range(14)
        ]
        jobs += [
            mover(how, auth_client, users[other], match, other_hand[i % len(other_hand)], ply)
            for i in range(6)
        ]
        answers = results(together(jobs))

        statuses = [status for status, _, _ in answers]
        assert set(statuses) <= {201, 409}, answers
        assert statuses.count(201) == 1, answers
        won = statuses.index(201)
        assert won < 14, "only the player to move can win the ply"
        for i, (_, code, body) in enumerate(answers):
            if i == won:
                continue
            if i < 14:  # same player, same ply: they lost the race
                assert code == "stale_ply", body
                assert body["details"]["current_ply"] == ply + 1
            else:
                assert code in CONFLICT_CODES, body

        log = games.assert_log_consistent(deal)
        assert len(log) == ply + 1
        assert log[ply] == (ply, seat, hand[won % len(hand)])
    assert len(games.move_log(deal)) == 3


def test_person_and_bot_tasks_racing_for_a_deal(
    user_factory: Any,
    auth_client: Any,
    games: Any,
    together: Any,
    queued_bot_replies: list[tuple[int, int]],
) -> None:
    """Duplicate bot tasks (a sweep's, a redelivery) race the person, both ways round.

    When the bot is to play, three copies of its task race the person's out-of-turn move:
    the bot plays once, the person gets a 409. When the person is to play, their move races
    bot tasks for that ply and the one before: the move goes in, the tasks do nothing.
    """
    alice = user_factory()
    match = services.match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("bot", "greedy")]
    )
    client = auth_client(alice)
    deal = games.current_deal(match)
    rounds = {"bot": 0, "person": 0}
    while len(games.move_log(deal)) < 12:
        state = games.state(deal)
        ply = state.ply
        bot_task = partial(services.bot_move_play, deal_id=deal.pk, ply=ply)
        if state.turn == 1:
            rounds["bot"] += 1
            assert (deal.pk, ply) in queued_bot_replies  # queued when the ply came about
            card = state.hands[0][0].code
            answers = results(
                together([bot_task] * 3 + [partial(via_api, client, match, card, ply)])
            )
            assert sorted(answers[:3]) == [False, False, True], answers
            status, code, _ = answers[3]
            assert (status, code) in {(409, "not_your_turn"), (409, "stale_ply")}, answers
            expected_seat = 1
        else:
            rounds["person"] += 1
            card = state.legal_moves()[0].code
            stale_task = partial(services.bot_move_play, deal_id=deal.pk, ply=max(ply - 1, 0))
            answers = results(
                together(
                    [partial(via_api, client, match, card, ply), bot_task, bot_task, stale_task]
                )
            )
            assert answers[0][0] == 201, answers
            assert answers[1:] == [False, False, False]
            expected_seat = 0

        log = games.assert_log_consistent(deal)
        assert len(log) == ply + 1
        assert log[ply][:2] == (ply, expected_seat)
        if expected_seat == 0:
            assert log[ply][2] == card
    assert rounds["bot"] >= 5 and rounds["person"] >= 5, rounds
    # Every ply the bot had to play was queued exactly once, when it came about.
    bot_plies = [ply for ply, seat, _ in games.move_log(deal) if seat == 1]
    state = games.state(deal)
    if state.turn == 1:
        bot_plies.append(state.ply)
    assert sorted(p for d, p in queued_bot_replies if d == deal.pk) == bot_plies


def test_crossed_joins_do_not_deadlock(
    user_factory: Any, games: Any, together: Any, wait_until: Any
) -> None:
    """Alice joins Bob's match while Bob joins Alice's.

    Each join locks its match; the seat it takes points at the joiner, whose account row
    the commit's foreign-key check reads (FOR KEY SHARE). If locking a match also locked
    its creator's row, each join would wait for the other's account: a deadlock. A third
    session holds both matches' seats until both joins hold their match, to make the
    interleaving certain.
    """
    alice, bob = user_factory(), user_factory()
    open_seat = [SeatSpec("open")]
    match_a = services.match_create(creator=alice, players=2, format="single", seats=open_seat)
    match_b = services.match_create(creator=bob, players=2, format="single", seats=open_seat)
    seats_locked = threading.Event()

    def hold_the_seats() -> None:
        with transaction.atomic():
            list(Seat.objects.select_for_update().filter(match__in=[match_a, match_b]))
            seats_locked.set()
            wait_until(lambda: len(sessions_waiting_for_a_lock()) == 2, timeout=10.0)

    def join(match: Match, user: User) -> Match:
        assert seats_locked.wait(timeout=10.0)
        return services.match_join(match_id=match.pk, user=user)

    outcomes = together(
        [hold_the_seats, partial(join, match_a, bob), partial(join, match_b, alice)]
    )
    results(outcomes)
    for match in (match_a, match_b):
        match.refresh_from_db()
        assert match.status == "active"
        assert games.current_deal(match).status == "active"
