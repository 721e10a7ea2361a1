"""Lost bot replies: the person's move stands, the sweep queues the reply again, and a
bot task run twice, late or for a deal that ended plays at most once.

Tasks run eagerly here (in-process at .delay(), as without REDIS_URL, also in CI), so the
bot's move is made inside the call that queues it. Callbacks that services register with
transaction.on_commit run when a `django_capture_on_commit_callbacks(execute=True)` block
ends, as they would after the request's commit.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import F
from kombu.exceptions import OperationalError

from accounts.models import User
from briscola_service.celery import app
from games.matches.services import bot_move_play, bot_moves_sweep, match_resign
from games.models import Deal, DealStatus, Match
from games.tasks import bot_play, sweep_pending_bot_moves

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("fast_password_hashing", "deterministic_seeds", "celery_eager"),
]

PERSON, BOT = 0, 1


@dataclass
class Table:
    person: User
    client: Any
    match: Match
    deal: Deal

    @property
    def moves_url(self) -> str:
        return f"/api/v1/matches/{self.match.pk}/moves"


def broker_down(*args: Any, **kwargs: Any) -> Any:
    raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


@pytest.fixture
def table(
    user_factory: Any, auth_client: Any, games: Any, django_capture_on_commit_callbacks: Any
) -> Table:
    """Person (seat 0) against the greedy bot, created through the API; the person's turn."""
    person = user_factory()
    client = auth_client(person)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/matches", {"players": 2, "seats": [{"bot": "greedy"}]}, format="json"
        )
    assert response.status_code == 201, response.content
    match = Match.objects.get(pk=response.json()["id"])
    deal = games.current_deal(match)
    # If the bot was to lead, its (eager) task has played already.
    assert games.state(deal).turn == PERSON
    return Table(person, client, match, deal)


def record_and_deliver(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """From now on, record every bot reply queued, then queue it for real (eagerly)."""
    calls: list[tuple[int, int]] = []
    real_delay = bot_play.delay

    def delay(deal_id: int, ply: int, *rest: Any) -> Any:  # rest: the reply's account, fair
        calls.append((deal_id, ply))
        return real_delay(deal_id, ply, *rest)

    monkeypatch.setattr(bot_play, "delay", delay)
    return calls


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    return record_and_deliver(monkeypatch)


def person_plays(table: Table, games: Any, capture: Callable[..., Any]) -> tuple[int, str]:
    """The person plays their first legal card through the API (201), then the commit's
    callbacks run; returns the ply and the card."""
    state = games.state(table.deal)
    assert state.turn == PERSON
    card = state.legal_moves()[0].code
    with capture(execute=True):
        response = table.client.post(
            table.moves_url, {"card": card, "ply": state.ply}, format="json"
        )
    assert response.status_code == 201, response.content
    return state.ply, card


def play_until_the_bot_is_to_move(
    table: Table, games: Any, capture: Callable[..., Any]
) -> tuple[int, list[tuple[int, str]]]:
    """The person plays until it is the bot's turn (bot replies must not be delivered);
    returns that ply and the person's moves."""
    played = []
    while len(played) < 20:
        state = games.state(table.deal)
        if state.turn == BOT:
            return state.ply, played
        played.append(person_plays(table, games, capture))
    pytest.fail("the bot never got the turn")


def test_broker_down_the_move_stands_and_the_sweep_recovers(
    table: Table,
    games: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Any,
) -> None:
    deal = table.deal
    with (
        monkeypatch.context() as broken,
        caplog.at_level(logging.WARNING, "games.matches.services"),
    ):
        broken.setattr(bot_play, "delay", broker_down)
        ply, played = play_until_the_bot_is_to_move(
            table, games, django_capture_on_commit_callbacks
        )
        # The person's moves are stored; the bot has not played.
        log = games.assert_log_consistent(deal)
        assert [(p, c) for p, s, c in log if p >= played[0][0]] == played
        assert len(log) == ply
        assert games.state(deal).turn == BOT
        assert f"could not queue bot reply for deal {deal.pk} ply {ply}" in caplog.text
        # A sweep while the broker is still down queues nothing and plays nothing.
        assert bot_moves_sweep(older_than=timedelta(0)) == 0
        assert len(games.move_log(deal)) == ply

    # The broker is back: the sweep queues the reply once, and the bot plays it.
    calls = record_and_deliver(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        assert bot_moves_sweep(older_than=timedelta(0)) == 1
    assert calls[0] == (deal.pk, ply)
    assert calls.count((deal.pk, ply)) == 1
    log = games.assert_log_consistent(deal)
    assert log[ply][:2] == (ply, BOT)
    # The bot went on while it kept the lead (each reply queued on commit); now the person
    # is to play, so there is nothing left to sweep.
    assert games.state(deal).turn == PERSON
    bot_plies = [p for p, s, _ in log if s == BOT and p >= ply]
    assert [p for _, p in calls] == bot_plies

    calls.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert bot_moves_sweep(older_than=timedelta(0)) == 0
    assert calls == []
    assert games.move_log(deal) == log


def test_bot_move_play_twice_plays_once(
    table: Table,
    games: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    queued: list[tuple[int, int]] = []
    monkeypatch.setattr(bot_play, "delay", lambda *a: queued.append(a[:2]))
    ply, _ = play_until_the_bot_is_to_move(table, games, django_capture_on_commit_callbacks)
    assert queued[-1] == (table.deal.pk, ply)

    assert bot_move_play(deal_id=table.deal.pk, ply=ply) is True
    log = games.assert_log_consistent(table.deal)
    assert len(log) == ply + 1 and log[ply][:2] == (ply, BOT)
    assert bot_move_play(deal_id=table.deal.pk, ply=ply) is False
    assert games.move_log(table.deal) == log


def test_a_task_for_an_old_or_future_ply_does_nothing(
    table: Table,
    games: Any,
    enqueued: list[tuple[int, int]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    for _ in range(20):  # until one of the person's moves gives the bot the turn
        person_plays(table, games, django_capture_on_commit_callbacks)
        if enqueued:
            break
    # Queued on commit and played eagerly: the bot has answered already.
    deal_id, ply = enqueued[0]
    assert deal_id == table.deal.pk
    log = games.assert_log_consistent(table.deal)
    assert log[ply][:2] == (ply, BOT)
    now = games.state(table.deal)
    assert now.turn == PERSON

    for old_or_odd in (ply, ply - 1, 0, now.ply, now.ply + 1, 39):
        assert bot_play.delay(table.deal.pk, old_or_odd).get() is False, old_or_odd
    assert bot_play.delay(10**9, 0).get() is False  # no such deal
    assert games.move_log(table.deal) == log


def test_a_task_for_a_deal_that_ended_does_nothing(
    table: Table,
    games: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    monkeypatch.setattr(bot_play, "delay", lambda *a: None)  # the reply is lost
    ply, _ = play_until_the_bot_is_to_move(table, games, django_capture_on_commit_callbacks)
    match_resign(match_id=table.match.pk, user=table.person)
    table.deal.refresh_from_db()
    assert table.deal.status == DealStatus.ABANDONED
    log = games.move_log(table.deal)

    assert bot_move_play(deal_id=table.deal.pk, ply=ply) is False
    assert bot_moves_sweep(older_than=timedelta(0)) == 0
    assert games.move_log(table.deal) == log


def test_sweep_task_requeues_replies_older_than_ten_seconds(
    table: Table,
    games: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with monkeypatch.context() as broken:
        broken.setattr(bot_play, "delay", broker_down)
        ply, _ = play_until_the_bot_is_to_move(table, games, django_capture_on_commit_callbacks)
    assert len(games.move_log(table.deal)) == ply

    # Too recent: the reply may still be on its way.
    assert sweep_pending_bot_moves.delay().get() == 0
    assert len(games.move_log(table.deal)) == ply

    # 11 s pass, by the database's clock, which the sweep reads (games.clocks): the
    # match's bot turn moves back instead.
    Match.objects.filter(pk=table.deal.match_id).update(
        bot_to_move_since=F("bot_to_move_since") - timedelta(seconds=11)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_pending_bot_moves.delay().get() == 1
    log = games.assert_log_consistent(table.deal)
    assert log[ply][:2] == (ply, BOT)


def test_sweep_task_is_scheduled() -> None:
    entries = [
        e for e in app.conf.beat_schedule.values() if e["task"] == sweep_pending_bot_moves.name
    ]
    assert len(entries) == 1
    assert sweep_pending_bot_moves.name in app.tasks
    assert 0 < float(entries[0]["schedule"]) <= 60


def test_a_move_for_another_deal_of_the_match_is_stale(games: Any, user_factory: Any) -> None:
    """A late task carries its deal's id: if the match has moved on to another deal at the
    same ply, the card is refused as stale rather than played in the new deal."""
    from games.errors import StalePlyError
    from games.matches.services import move_play
    from games.models import Move

    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob, format="first_to_2")
    first = games.current_deal(match)
    games.play(match, 40)  # the first deal is over: the match has moved on to the second
    games.play(match, 3)
    second = games.current_deal(match)
    assert second.number == 2 and second.pk != first.pk
    state = games.state(second)
    before = games.move_log(second)
    # The first deal's late move at the second deal's ply, by the seat whose turn it is.
    with pytest.raises(StalePlyError) as refused:
        move_play(
            match_id=match.pk,
            user=games.seat_users(match)[state.turn],
            card=state.legal_moves()[0].code,
            ply=state.ply,
            deal_id=first.pk,
        )
    assert refused.value.code == "stale_deal"
    assert refused.value.details == {"current_deal": second.pk, "your_deal": first.pk}
    assert games.move_log(second) == before
    assert Move.objects.filter(deal=first).count() == 40
    assert bot_move_play(deal_id=first.pk, ply=state.ply) is False  # a bot task: left alone
