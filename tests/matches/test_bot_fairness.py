"""Fair bot work between accounts (issue 19.3; briscola_service/fair_queues.py).

Bot reply tasks are recorded instead of sent (``tokens``) and then run here, one after
another in the order they were sent, as a worker takes them from its first-in-first-out
queue. A worker that is thinking a reply is played by a take that is not released yet;
a worker that died, by a take never released.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import F
from redis.exceptions import ConnectionError as RedisConnectionError

from accounts.models import User
from briscola_service import fair_queues, logs, queueing
from games.clocks import services as clocks
from games.matches import services
from games.matches.selectors import deal_state
from games.matches.services import SeatSpec
from games.models import Deal, Match, Move

pytestmark = [
    pytest.mark.redis,
    pytest.mark.django_db,
    pytest.mark.usefixtures("fast_password_hashing", "deterministic_seeds"),
]

POOL = services.BOT_TASK
Token = tuple[str, tuple[Any, ...]]


@pytest.fixture
def tokens(monkeypatch: pytest.MonkeyPatch) -> list[Token]:
    """The bot tasks sent (name, args), recorded instead of sent."""
    record: list[Token] = []

    def send(name: str, *args: Any, what: str) -> bool:
        record.append((name, args))
        return True

    monkeypatch.setattr(queueing, "task_send", send)
    return record


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The deals whose bot reply was played, in the order they were played."""
    order: list[int] = []
    play = services.bot_move_play

    def recording(*, deal_id: int, ply: int) -> bool:
        done = play(deal_id=deal_id, ply=ply)
        if done:
            order.append(deal_id)
        return done

    monkeypatch.setattr(services, "bot_move_play", recording)
    return order


def bot_turn(user: User) -> Match:
    """A 2-player match of ``user`` against the greedy bot, the bot to move."""
    match = services.match_create(
        creator=user, players=2, format="single", seats=[SeatSpec("bot", "greedy")]
    )
    state = deal_state(Deal.objects.get(match=match))
    if state.turn == 0:
        card = state.legal_moves()[0].code
        services.move_play(match_id=match.pk, user=user, card=card, ply=state.ply)
    match.refresh_from_db()
    assert match.bot_to_move_since is not None and match.to_move_seat == 1
    return match


def enqueue(*matches: Match) -> None:
    """Queue each match's bot reply, as the commit of the move before it does."""
    for match in matches:
        assert match.to_move_deal is not None and match.to_move_ply is not None
        services.bot_reply_enqueue(
            deal_id=match.to_move_deal,
            ply=match.to_move_ply,
            level="greedy",
            account=match.created_by_id,
        )


def run(token: Token) -> bool:
    """Run a recorded task here, as a worker would."""
    name, args = token
    return bool(queueing._task(name)(*args))


def run_all(tokens: list[Token]) -> None:
    """Run the recorded tasks in the order they were sent, and any they send meanwhile."""
    while tokens:
        run(tokens.pop(0))


def replied(match: Match) -> bool:
    return Move.objects.filter(deal_id=match.to_move_deal, ply=match.to_move_ply).exists()


@pytest.mark.parametrize("fair", [True, False], ids=["fair", "first-in-first-out"])
def test_another_accounts_reply_runs_before_a_flooding_accounts_backlog(
    user_factory: Any, settings: Any, tokens: list[Token], played: list[int], fair: bool
) -> None:
    settings.BOT_FAIR_QUEUEING = fair
    flooder, victim = user_factory(), user_factory()
    flood = [bot_turn(flooder) for _ in range(6)]
    mine = bot_turn(victim)
    enqueue(*flood, mine)  # the victim's reply is queued last, behind six of the flood's
    assert [args[2:] for _, args in tokens] == [(m.created_by_id, fair) for m in (*flood, mine)]

    run_all(tokens)

    assert sorted(played) == sorted(m.to_move_deal for m in (*flood, mine))
    flood_deals = [m.to_move_deal for m in flood]
    if fair:
        # Round-robin between the accounts with replies waiting: one of the flood's, then
        # the victim's, although six tasks of the flood were queued before its own; the
        # flood's in the order they were queued.
        assert played == [flood_deals[0], mine.to_move_deal, *flood_deals[1:]]
    else:
        assert played == [*flood_deals, mine.to_move_deal]  # behind the whole backlog


def test_an_account_at_its_limit_is_passed_over_then_paid_back_when_a_lease_is_given_back(
    user_factory: Any, settings: Any, tokens: list[Token], played: list[int]
) -> None:
    settings.BOT_FAIR_CONCURRENCY = 2
    flooder, victim = user_factory(), user_factory()
    flood = [bot_turn(flooder) for _ in range(4)]
    mine = bot_turn(victim)
    enqueue(*flood)
    # Two workers are thinking two of the flood's replies: the flooder is at its limit.
    thinking = [fair_queues.take(POOL, limit=2, lease_seconds=60).taken for _ in range(2)]
    assert [t.item if t else None for t in thinking] == [
        f"{m.to_move_deal}:{m.to_move_ply}" for m in flood[:2]
    ]
    assert fair_queues.leases_held(POOL, str(flooder.pk)) == 2
    enqueue(mine)

    # The next task, though sent for the flood's first reply, plays the victim's.
    assert run(tokens.pop(0)) is True
    assert played == [mine.to_move_deal]
    # The next one finds only the flooder's replies waiting, and the flooder at its limit:
    # deferred, it plays nothing, and the reply stays queued.
    assert run(tokens.pop(0)) is False
    assert played == [mine.to_move_deal]
    assert fair_queues.queued(POOL, str(flooder.pk)) == [
        f"{m.to_move_deal}:{m.to_move_ply}" for m in flood[2:]
    ]
    tokens.clear()  # the rest of the flood's tasks: each would be deferred the same way

    # A worker finishes one of the two: its lease is given back and, a task being owed,
    # one is sent, for the flood's next reply, which it plays.
    first = thinking[0]
    assert first is not None
    services._bot_lease_release(first)
    assert [(name, args) for name, args in tokens] == [
        (POOL, (flood[2].to_move_deal, flood[2].to_move_ply, flooder.pk, True))
    ]
    assert run(tokens.pop(0)) is True
    assert played == [mine.to_move_deal, flood[2].to_move_deal]
    assert fair_queues.leases_held(POOL, str(flooder.pk)) == 1  # the other still thinking


def test_the_lease_of_a_lost_task_expires(
    user_factory: Any, settings: Any, tokens: list[Token], played: list[int], wait_until: Any
) -> None:
    settings.BOT_FAIR_CONCURRENCY = 1
    settings.BOT_FAIR_LEASE_SECONDS = 1.0
    player = user_factory()
    lost, waiting = bot_turn(player), bot_turn(player)
    enqueue(lost, waiting)
    # A worker takes the first reply and dies before playing it or giving its lease back.
    taken = fair_queues.take(POOL, limit=1, lease_seconds=1.0).taken
    assert taken is not None and taken.account == str(player.pk)
    assert fair_queues.leases_held(POOL, str(player.pk)) == 1
    assert run(tokens[0]) is False  # the account is at its limit: deferred

    # The lease is not held forever: it expires, and the account's next reply runs.
    wait_until(lambda: fair_queues.leases_held(POOL, str(player.pk)) == 0, timeout=10.0)
    assert run(tokens[1]) is True
    assert played == [waiting.to_move_deal]
    assert not replied(lost)  # the dead worker's reply: the sweep's (next test)


def test_the_bot_sweep_recovers_a_reply_lost_with_its_task_and_a_deferred_one(
    user_factory: Any, settings: Any, tokens: list[Token], played: list[int], wait_until: Any
) -> None:
    settings.BOT_FAIR_CONCURRENCY = 1
    settings.BOT_FAIR_LEASE_SECONDS = 1.0
    player = user_factory()
    lost, deferred = bot_turn(player), bot_turn(player)
    enqueue(lost, deferred)
    # The first reply's worker dies after taking it (it is no longer queued anywhere);
    # the second reply's task finds the account at its limit and ends without it.
    assert fair_queues.take(POOL, limit=1, lease_seconds=1.0).taken is not None
    assert run(tokens.pop(0)) is False
    tokens.clear()  # no task is left for either reply
    assert fair_queues.queued(POOL, str(player.pk)) == [
        f"{deferred.to_move_deal}:{deferred.to_move_ply}"
    ]

    Match.objects.filter(pk__in=[lost.pk, deferred.pk]).update(
        bot_to_move_since=F("bot_to_move_since") - timedelta(seconds=60)
    )
    assert clocks.bot_turns_sweep(older_than=10) == 2
    # The lost reply is queued again; the deferred one keeps its place (queued once).
    assert fair_queues.queued(POOL, str(player.pk)) == [
        f"{deferred.to_move_deal}:{deferred.to_move_ply}",
        f"{lost.to_move_deal}:{lost.to_move_ply}",
    ]
    assert len(tokens) == 2
    wait_until(lambda: fair_queues.leases_held(POOL, str(player.pk)) == 0, timeout=10.0)
    run_all(tokens)
    assert replied(lost) and replied(deferred)
    assert played == [deferred.to_move_deal, lost.to_move_deal]
    assert fair_queues.queued(POOL, str(player.pk)) == []


def test_a_task_plays_its_own_reply_when_redis_fails_it(
    user_factory: Any, tokens: list[Token], played: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    flooder, victim = user_factory(), user_factory()
    other, mine = bot_turn(flooder), bot_turn(victim)
    enqueue(other, mine)

    def down(*args: Any, **kwargs: Any) -> Any:
        raise RedisConnectionError("Redis is down")

    monkeypatch.setattr(fair_queues, "take", down)
    assert run(tokens[1]) is True
    assert played == [mine.to_move_deal]


def test_slow_levels_have_their_own_task_and_queue(settings: Any) -> None:
    assert services.bot_task_of("expert") == services.BOT_TASK_SLOW
    assert services.bot_task_of("expert_v1") == services.BOT_TASK_SLOW
    for level in ("random", "greedy", "strong", "learned", "neural"):
        assert services.bot_task_of(level) == services.BOT_TASK
    route = settings.CELERY_TASK_ROUTES[services.BOT_TASK_SLOW]["queue"]
    assert route != settings.CELERY_TASK_DEFAULT_QUEUE


def test_a_task_delivered_again_after_its_worker_died_plays_the_reply_it_had_taken(
    user_factory: Any, tokens: list[Token], played: list[int]
) -> None:
    player, other = user_factory(), user_factory()
    first, second = bot_turn(player), bot_turn(other)
    enqueue(first, second)
    # The first task's worker takes the first reply and dies (late acknowledgement: its
    # message is delivered again, with the same task id).
    died = fair_queues.take(POOL, limit=2, lease_seconds=30, token="task-1").taken
    assert died is not None and died.item == f"{first.to_move_deal}:{first.to_move_ply}"
    name, args = tokens[0]
    assert queueing._task(name).apply(args=args, task_id="task-1").get() is True
    assert played == [first.to_move_deal]  # the same reply, not the next in turn
    assert fair_queues.leases_held(POOL, str(player.pk)) == 0  # and its lease given back
    assert fair_queues.queued(POOL, str(other.pk)) == [
        f"{second.to_move_deal}:{second.to_move_ply}"
    ]


def test_a_reply_is_logged_under_the_request_that_queued_it_whichever_task_plays_it(
    user_factory: Any, tokens: list[Token], caplog: pytest.LogCaptureFixture
) -> None:
    flooder, victim = user_factory(), user_factory()
    flood, mine = [bot_turn(flooder), bot_turn(flooder)], bot_turn(victim)
    for match, request_id in ((flood[0], "req-flood-1"), (flood[1], "req-flood-2")):
        token = logs.REQUEST_ID.set(request_id)
        try:
            enqueue(match)
        finally:
            logs.REQUEST_ID.reset(token)
    token = logs.REQUEST_ID.set("req-victim")
    try:
        enqueue(mine)
    finally:
        logs.REQUEST_ID.reset(token)
    caplog.handler.addFilter(logs.RequestIdFilter())
    with caplog.at_level(logging.INFO, "games.matches.services"):
        run(tokens[0])  # the flood's first reply
        run(tokens[1])  # sent for the flood's second reply, it plays the victim's
    played = {
        r.getMessage().split(" deal ")[1].split(" ")[0]: r.request_id  # type: ignore[attr-defined]
        for r in caplog.records
        if r.getMessage().startswith("bot ") and " played deal " in r.getMessage()
    }
    assert played == {
        str(flood[0].to_move_deal): "req-flood-1",
        str(mine.to_move_deal): "req-victim",
    }
