"""The task due at a live deadline (issue 14: "a task due at the deadline, and a beat sweep
that catches any missed deadline").

With a broker, the move that sets a live deadline queues ``games.tasks.clock_deadline``
through the one seam once it commits, due at the deadline; the task applies exactly that
deadline of that deal and ply, once, and nothing else. Without a broker nothing is sent
(eager Celery would run it at once): the requests' sweep enforces the deadline there.

Here the seam's tasks are recorded instead of reaching a broker; the recorded calls are
run by hand, as a worker would. Time passes for a match by moving its clock columns back
(tests/clocks/conftest.py: the database's clock decides, and no test can move it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from accounts.models import User
from briscola_service import queueing
from games import tasks
from games.clocks import services as clocks
from games.matches import services
from games.matches.selectors import deal_state
from games.matches.services import SeatSpec
from games.models import Deal, Match, MatchEvent, MatchStatus, Move
from tests.clocks.conftest import Player, db_travel

pytestmark = pytest.mark.django_db

DEADLINE_TASK = "games.tasks.clock_deadline"


@dataclass
class Sent:
    name: str
    args: tuple[Any, ...]
    countdown: float | None = None
    eta: datetime | None = None


class Broker:
    """What the seam sent, in order, as a broker would have received it."""

    def __init__(self) -> None:
        self.sent: list[Sent] = []

    def deadline_tasks(self) -> list[Sent]:
        return [s for s in self.sent if s.name == DEADLINE_TASK]

    def take(self) -> list[Sent]:
        taken, self.sent = self.sent, []
        return taken


class _RecordedTask:
    def __init__(self, name: str, broker: Broker) -> None:
        self.name, self.broker = name, broker

    def delay(self, *args: Any) -> None:
        self.broker.sent.append(Sent(self.name, args))

    def apply_async(
        self, args: Any, eta: datetime | None = None, countdown: float | None = None
    ) -> None:
        self.broker.sent.append(Sent(self.name, tuple(args), countdown, eta))


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch, celery_settings: Any) -> Iterator[Broker]:
    """Tasks go to a broker (not eager), which records them instead of delivering them."""
    record = Broker()
    monkeypatch.setattr(queueing, "_task", lambda name: _RecordedTask(name, record))
    with celery_settings(task_always_eager=False, task_eager_propagates=False):
        assert not queueing.tasks_run_in_process()
        yield record


@pytest.fixture
def committed(django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """``committed(fn, **kwargs)``: call a service and run what it queued on commit."""

    def run(fn: Callable[..., Any], **kwargs: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return fn(**kwargs)

    return run


def bots_reply(deal: Deal) -> None:
    """Play the bot's cards until the person (seat 0) is to move, as its tasks would."""
    while (state := deal_state(deal)).turn == 1:
        assert services.bot_move_play(deal_id=deal.pk, ply=state.ply)


def person_to_move(
    user: User, committed: Callable[..., Any], seconds: int = 10, on_timeout: str = "forfeit"
) -> tuple[Match, Deal]:
    """A timed match against the greedy bot in which the person has played a first card
    (past the abort window) and is to move again."""
    match = committed(
        services.match_create,
        creator=user,
        players=2,
        format="single",
        seats=[SeatSpec("bot", "greedy")],
        time_control=clocks.TimeControl(seconds, on_timeout, "greedy"),
    )
    deal = Deal.objects.get(match=match)
    committed(bots_reply, deal=deal)
    state = deal_state(deal)
    card = state.legal_moves()[0].code
    committed(services.move_play, match_id=match.pk, user=user, card=card, ply=state.ply)
    committed(bots_reply, deal=deal)
    match.refresh_from_db()
    assert match.to_move_seat == 0 and match.deadline is not None
    return match, deal


def pending_args(match: Match) -> tuple[str, int, int, str]:
    """The arguments of the task due at the match's pending deadline."""
    match.refresh_from_db()
    assert match.deadline is not None and match.to_move_deal is not None
    assert match.to_move_ply is not None
    return (str(match.pk), match.to_move_deal, match.to_move_ply, match.deadline.isoformat())


def shifted(args: tuple[Any, ...], seconds: float) -> tuple[Any, ...]:
    """The task's arguments once ``db_travel`` moved the match's clock ``seconds`` back:
    its deadline moves back with the stored one, so it is still the pending deadline."""
    moved = datetime.fromisoformat(args[3]) - timedelta(seconds=seconds)
    return (*args[:3], moved.isoformat())


def deliver(committed: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Run the deadline task with ``args`` as a worker would (what it queues on commit is
    sent)."""
    return committed(tasks.clock_deadline, **dict(zip(TASK_PARAMS, args, strict=True)))


TASK_PARAMS = ("match_id", "deal_id", "ply", "deadline")


def timed_out(match: Match) -> list[tuple[int | None, int | None]]:
    """(deal, ply) of each ``seat_timed_out`` event of the match."""
    events = MatchEvent.objects.filter(match=match, kind="seat_timed_out").order_by("id")
    return [(e.deal, e.ply) for e in events]


def test_a_live_deadline_queues_its_task_once_the_move_commits(
    user_factory: Any, broker: Broker, django_capture_on_commit_callbacks: Any
) -> None:
    alice = user_factory()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        match = services.match_create(
            creator=alice,
            players=2,
            format="single",
            seats=[SeatSpec("bot", "greedy")],
            time_control=clocks.TimeControl(10, "forfeit", "greedy"),
        )
    assert broker.sent == []  # nothing before the commit
    for callback in callbacks:
        callback()
    deal = Deal.objects.get(match=match)
    match.refresh_from_db()
    if match.to_move_seat == 1:  # the bot leads: its reply was queued, no deadline yet
        assert broker.deadline_tasks() == []
        broker.take()
        with django_capture_on_commit_callbacks(execute=True):
            bots_reply(deal)
    (first,) = broker.deadline_tasks()
    assert first.args == pending_args(match)
    # Due at the deadline by the database's clock: the first card has the abort window's
    # 30 s (at least), counted from the clock the deadline was set with.
    assert first.countdown == 30.0 and first.eta is None
    broker.take()

    state = deal_state(deal)
    with django_capture_on_commit_callbacks(execute=True):
        services.move_play(
            match_id=match.pk, user=alice, card=state.legal_moves()[0].code, ply=state.ply
        )
        bots_reply(deal)
    (second,) = broker.deadline_tasks()
    assert second.args == pending_args(match) and second.args[2] > first.args[2]
    assert second.countdown == 10.0


def test_correspondence_and_untimed_matches_queue_no_deadline_task(
    user_factory: Any, broker: Broker, committed: Callable[..., Any]
) -> None:
    alice = user_factory()
    for control in (clocks.TimeControl(2 * 3600, "forfeit", "greedy"), None):
        match = committed(
            services.match_create,
            creator=alice,
            players=2,
            format="single",
            seats=[SeatSpec("bot", "greedy")],
            time_control=control,
        )
        bots_reply(Deal.objects.get(match=match))
        match.refresh_from_db()
        assert match.to_move_seat == 0 and match.deadline is not None  # the sweep's job
    assert broker.deadline_tasks() == []


def test_the_task_applies_its_deadline_exactly_once(
    user_factory: Any, broker: Broker, committed: Callable[..., Any]
) -> None:
    alice = user_factory()
    match, deal = person_to_move(alice, committed, on_timeout="forfeit")
    args = pending_args(match)
    db_travel(match.pk, 11)
    args = shifted(args, 11)
    assert deliver(committed, args) == "forfeit"
    assert tasks.clock_deadline(*args) is None  # delivered again: nothing to do
    assert clocks.deadlines_sweep() == 0  # nor for the sweep
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.end_reason == "timeout"
    assert timed_out(match) == [(args[1], args[2])]
    assert not Move.objects.filter(deal=deal, ply=args[2]).exists()


def test_a_card_in_time_leaves_the_task_nothing_to_do(
    user_factory: Any, broker: Broker, committed: Callable[..., Any]
) -> None:
    alice = user_factory()
    match, deal = person_to_move(alice, committed)
    args = pending_args(match)
    state = deal_state(deal)
    card = state.legal_moves()[0].code
    committed(services.move_play, match_id=match.pk, user=alice, card=card, ply=state.ply)
    db_travel(match.pk, 60)  # even once the next deadline (if the person's) has passed
    assert tasks.clock_deadline(*shifted(args, 60)) is None
    assert timed_out(match) == []
    assert list(Move.objects.filter(deal=deal, ply=args[2]).values_list("seat", "card")) == [
        (0, card)
    ]


def test_a_task_come_early_sends_itself_again_for_the_rest(
    user_factory: Any, broker: Broker, committed: Callable[..., Any]
) -> None:
    """A worker's clock ahead of the database's delivers the task before the deadline
    has passed by the database's clock: it changes nothing and is queued again."""
    alice = user_factory()
    match, _deal = person_to_move(alice, committed)
    args = pending_args(match)
    db_travel(match.pk, 4)
    args = shifted(args, 4)
    broker.take()
    assert deliver(committed, args) == "later"
    (again,) = broker.take()
    assert again.name == DEADLINE_TASK and again.args == pending_args(match) == args
    assert again.countdown is not None and 0 < again.countdown <= 6
    assert timed_out(match) == []
    db_travel(match.pk, 6.5)
    assert tasks.clock_deadline(*shifted(again.args, 6.5)) == "forfeit"
    assert timed_out(match) == [(args[1], args[2])]


def test_a_deadline_beyond_half_the_visibility_timeout_is_reached_in_hops(
    user_factory: Any, broker: Broker, committed: Callable[..., Any], settings: Any
) -> None:
    """A worker holds a task with an ETA unacknowledged; Redis would deliver it again
    after the visibility timeout. So a task is never sent further ahead than half of it."""
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 100}
    alice = user_factory()
    match, _deal = person_to_move(alice, committed, seconds=600)
    sent = broker.deadline_tasks()[-1]  # the deadline after the bot's reply
    assert sent.args == pending_args(match) and sent.countdown == 50.0
    broker.take()
    hops = 0
    args = sent.args
    while (done := deliver(committed, args)) == "later":
        (again,) = broker.take()
        assert again.args == args and again.countdown is not None
        assert 0 < again.countdown <= 50
        hops += 1
        db_travel(match.pk, again.countdown + 0.01)
        args = shifted(args, again.countdown + 0.01)
    assert done == "forfeit" and hops == 12  # 600 s in hops of 50 s: 11 early, then due
    assert timed_out(match) == [(args[1], args[2])]


def test_the_task_of_a_deadline_replaced_by_a_return_does_nothing(
    user_factory: Any, broker: Broker, committed: Callable[..., Any]
) -> None:
    """The timeout bot is to play for the person, who comes back first: a fresh deadline
    at the same ply, with its own task. The old task applies nothing; the new one does,
    and the bot's card is then the one card at that ply."""
    alice = user_factory()
    match, deal = person_to_move(alice, committed, on_timeout="bot")
    old = pending_args(match)
    db_travel(match.pk, 11)
    old = shifted(old, 11)
    broker.take()
    assert deliver(committed, old) == "bot"
    (bot_reply,) = broker.take()  # the timeout bot's card, queued on commit
    assert bot_reply.name == "games.tasks.bot_play"

    committed(clocks.seat_return, match_id=match.pk, user=alice)
    new = pending_args(match)
    assert new[:3] == old[:3] and new[3] != old[3]
    (fresh,) = broker.deadline_tasks()
    assert fresh.args == new and fresh.countdown is not None and 9 < fresh.countdown <= 10
    broker.take()
    assert services.bot_move_play(deal_id=bot_reply.args[0], ply=bot_reply.args[1]) is False
    db_travel(match.pk, 11)
    old, new = shifted(old, 11), shifted(new, 11)
    assert tasks.clock_deadline(*old) is None  # not its deadline any more
    assert timed_out(match) == [(old[1], old[2])]
    assert deliver(committed, new) == "bot"
    assert tasks.clock_deadline(*new) is None
    (bot_reply,) = [s for s in broker.take() if s.name == "games.tasks.bot_play"]
    assert services.bot_move_play(deal_id=bot_reply.args[0], ply=bot_reply.args[1])
    assert timed_out(match) == [(old[1], old[2]), (new[1], new[2])]
    at_ply = list(Move.objects.filter(deal=deal, ply=old[2]).values_list("seat", flat=True))
    assert at_ply == [0]  # the bot's card for her seat, one card at that ply


def test_without_a_broker_no_deadline_task_runs_and_the_requests_sweep_enforces(
    player: Callable[..., Player],
    travel: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``make run``: eager Celery would run a task at once, whatever its ETA; the deadline
    task is never sent there, and the sweep the requests run is the one enforcer."""
    assert queueing.tasks_run_in_process()
    ran: list[Any] = []
    real = clocks.deadline_task_enforce

    def spy(**kwargs: Any) -> Any:
        ran.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(clocks, "deadline_task_enforce", spy)
    assert not queueing.task_send_later(
        DEADLINE_TASK, "00000000-0000-0000-0000-000000000000", 1, 0, "", countdown=5, what="x"
    )
    alice = player()
    match_id = alice.create(time_control={"per_move_seconds": 60})["id"]
    alice.play_first_legal(match_id)
    detail = alice.detail(match_id)
    assert detail["status"] == "active" and detail["to_move"] == detail["your_seat"]
    travel(match_id, 30)
    settings.CLOCK_IN_PROCESS_SWEEP_SECONDS = 0  # every request runs the sweep now
    assert alice.detail(match_id)["status"] == "active"  # not yet
    travel(match_id, 31)
    detail = alice.detail(match_id)
    assert detail["status"] == "finished" and detail["end_reason"] == "timeout"
    assert ran == []
    assert [e["type"] for e in alice.events(match_id)["events"]].count("seat_timed_out") == 1
