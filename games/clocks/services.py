"""Writes of the clocks: deadlines, timeouts, the abort window, invitations' answers and
expiry, leaving, returning, rematches, the cap on active matches, and the sweeps.

Who must act by when lives in indexed columns of the match (``to_move_*``, ``deadline``,
``bot_to_move_since``, ``expires_at``), written under the match's row lock by every write
that changes whose turn it is (:func:`clock_set`), with the database's clock (``Now()`` in
SQL): a worker or web server whose clock is off changes nothing. A sweep is then one range
scan of a partial index, oldest first and bounded, whatever the number of active matches.

A deadline is enforced exactly once: :func:`timeout_enforce` locks the match and checks,
in SQL, that the deadline it finds has passed; a card that arrives after the deadline, by
the database's clock, is refused with 409 ``deadline_passed`` (and the timeout applied at
once); a card that arrived first moved the deadline, and the timeout finds nothing to do.
The unique (deal, ply) of the move log is the last guard: one card per ply.

Two ways in, both through those checks: a live deadline (``per_move_seconds``) has a
Celery task due at it (:func:`deadline_task_send`, queued once the move that set it
commits; :func:`deadline_task_enforce` acts on exactly that deadline of that deal and ply,
if it is still the one pending), and a beat sweep (:func:`deadlines_sweep`, every second)
applies any deadline whose task was lost, a correspondence deadline (hours, which has no
task: see README, "How it works") and the idle limit of untimed matches. Without a broker
no task is sent (eager Celery would run it at once, whatever its ETA): the requests run
the sweep (games.clocks.middleware).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection, transaction
from django.db.models.functions import Now
from django.utils import timezone

from accounts.models import User
from briscola_service import queueing
from games import live, rules
from games.clocks import selectors as clock_selectors
from games.errors import (
    CannotLeaveError,
    DeadlinePassedError,
    InvalidTimeControlError,
    MatchNotFinishedError,
    MatchNotFoundError,
    MatchNotJoinableError,
    MatchOverError,
    NotAPlayerError,
    NotInvitedError,
    SeatHeldByBotError,
    SeatNotLeftError,
    StalePlyError,
    TooManyActiveMatchesError,
)
from games.matches.selectors import bot_levels_seatable, match_get
from games.models import (
    EndReason,
    Match,
    MatchEvent,
    MatchEventKind,
    MatchStatus,
    Move,
    OnTimeout,
    Seat,
)

logger = logging.getLogger(__name__)

JSON = dict[str, Any]

PER_MOVE_SECONDS = (5, 600)  # live play
PER_MOVE_HOURS = (1, 168)  # correspondence
ABORT_WINDOW_MIN_SECONDS = 30
TIMEOUTS_BEFORE_BOT_HOLDS = 3


@dataclass(frozen=True)
class TimeControl:
    """What ``POST /matches`` asked for, checked."""

    per_move_seconds: int | None = None
    on_timeout: str = OnTimeout.FORFEIT
    bot_level: str = "greedy"


def time_control_parse(
    time_control: Any = None, on_timeout: Any = None, timeout_bot: Any = None
) -> TimeControl:
    """Check the time control of a new match; InvalidTimeControlError (400) if it is not
    ``{"per_move_seconds": 5..600}``, ``{"per_move_hours": 1..168}`` or absent, with
    ``on_timeout`` ``"bot"`` or ``"forfeit"`` and ``timeout_bot`` a seatable bot level."""
    seconds: int | None = None
    if time_control is not None:
        if not isinstance(time_control, dict) or len(time_control) != 1:
            raise InvalidTimeControlError(details={"time_control": "one key"})
        ((key, value),) = time_control.items()
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTimeControlError(details={"time_control": f"{key} is a whole number"})
        if key == "per_move_seconds":
            low, high = PER_MOVE_SECONDS
            seconds = value
        elif key == "per_move_hours":
            low, high = PER_MOVE_HOURS
            seconds = value * 3600
        else:
            raise InvalidTimeControlError(details={"time_control": f"unknown key {key!r}"})
        if not low <= value <= high:
            raise InvalidTimeControlError(
                details={"time_control": f"{key} is {low} to {high}", key: value}
            )
    if on_timeout is None:
        on_timeout = OnTimeout.FORFEIT
    if on_timeout not in OnTimeout.values:
        raise InvalidTimeControlError(details={"on_timeout": "bot or forfeit"})
    if timeout_bot is None:
        timeout_bot = "greedy"
    if timeout_bot not in bot_levels_seatable():
        raise InvalidTimeControlError(
            details={"timeout_bot": f"one of {', '.join(bot_levels_seatable())}"}
        )
    return TimeControl(seconds, str(on_timeout), str(timeout_bot))


def active_matches_check(user: User) -> None:
    """Refuse (429 ``too_many_active_matches``) a user who already has
    ``settings.MATCH_ACTIVE_LIMIT`` matches waiting or being played. Takes the user's row
    lock (FOR NO KEY UPDATE, which does not block the seats' foreign-key checks), so that
    two concurrent creations cannot both pass; call it inside the writing transaction.
    Bots and administrators are not capped."""
    limit = settings.MATCH_ACTIVE_LIMIT
    if not limit or user.is_bot or user.is_staff:
        return
    User.objects.select_for_update(no_key=True).filter(pk=user.pk).first()
    count = clock_selectors.active_matches_count(user=user)
    if count >= limit:
        raise TooManyActiveMatchesError(details={"limit": limit, "active": count})


def waiting_expiry_set(match: Match) -> None:
    """A new waiting match is called off ``settings.INVITATION_EXPIRY_HOURS`` from now."""
    hours = settings.INVITATION_EXPIRY_HOURS
    Match.objects.filter(pk=match.pk).update(expires_at=Now() + timedelta(hours=hours))
    match.expires_at = Match.objects.values_list("expires_at", flat=True).get(pk=match.pk)


# -- who is to move, and by when --------------------------------------------------------


def _allowance(match: Match, first_card: bool) -> timedelta:
    """How long a person has for a card: the per-move time (at least the abort window's
    30 s for their first card of the match), or, untimed, ``MATCH_IDLE_HOURS``."""
    if match.per_move_seconds is None:
        return timedelta(hours=settings.MATCH_IDLE_HOURS)
    seconds = match.per_move_seconds
    if first_card:
        seconds = max(seconds, ABORT_WINDOW_MIN_SECONDS)
    return timedelta(seconds=seconds)


# SQLite's clock to the millisecond: its CURRENT_TIMESTAMP is to the whole second (rounded
# down: a 5 s deadline gave between 4 and 5 s), where Django's Now() reads this too.
_SQLITE_NOW = "SELECT STRFTIME('%Y-%m-%d %H:%M:%f', 'now')"


def db_now(match: Match) -> datetime:
    """The database's clock: as the match's lock was taken (the lock statement reads it,
    see games.matches.selectors.match_lock_versioned), or asked now.

    On SQLite the lock statement's CURRENT_TIMESTAMP is to the whole second (a string
    there). SQLite is a library in this process, and its clock is this host's: the
    fraction of the second comes from the host's clock, read now, kept within the second
    the lock statement read (so the database's clock still decides the second, and a move
    costs no extra query). Asked without a lock, SQLite answers to the millisecond.
    PostgreSQL's (the lock statement's start, to the microsecond, as Django's ``Now()``
    reads it) is kept as it is."""
    value = getattr(match, "db_now", None)
    if connection.vendor == "sqlite" and isinstance(value, str):
        second = _aware(value)
        host = datetime.now(tz=UTC)
        value = min(max(host, second), second + timedelta(microseconds=999_999))
    elif value is None:
        with connection.cursor() as cursor:
            cursor.execute(
                _SQLITE_NOW if connection.vendor == "sqlite" else "SELECT STATEMENT_TIMESTAMP()"
            )
            value = cursor.fetchone()[0]
    value = _aware(value)
    match.db_now = value  # type: ignore[attr-defined]
    return value


def turn_start(match: Match) -> datetime:
    """When a turn that a write under the match's lock gives begins: on PostgreSQL, the
    database's clock once the lock was held (``locked_at``, read by the move's version
    statement: games.matches.selectors.match_lock_versioned), else :func:`db_now`. Not
    as the lock was asked for: a move that waited for the lock (behind a bot's reply,
    another card, a sweep) took its wait off the next player's time, about a second of
    a 5 s move under load."""
    locked_at = getattr(match, "locked_at", None)
    return db_now(match) if locked_at is None else _aware(locked_at)


def _aware(value: Any) -> datetime:
    if isinstance(value, str):  # SQLite: 'YYYY-MM-DD HH:MM:SS[.fff]', UTC
        value = datetime.fromisoformat(value)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value  # type: ignore[no-any-return]


def _deadline_and_clock(match: Match) -> tuple[datetime | None, datetime]:
    """The match's deadline as stored, and the database's clock now (this statement's)."""
    deadline, now = (
        Match.objects.filter(pk=match.pk)
        .annotate(db_clock=Now())
        .values_list("deadline", "db_clock")
        .get()
    )
    return (None if deadline is None else _aware(deadline)), _aware(now)


@dataclass(frozen=True)
class BotTurn:
    """A bot is to play: the bot's own seat, or a person's seat the timeout bot plays."""

    level: str


def clock_set(
    match: Match, *, deal_id: int, deal_number: int, state: rules.Deal, seats: list[JSON]
) -> BotTurn | None:
    """Under the match's lock: record who is to move in ``state`` and by when.

    ``seats`` are the seats as the summary shows them (``is_bot``, ``bot_level``,
    ``bot_holds``). Returns the bot turn when a bot (or the bot holding a person's seat) is
    to play, so the caller queues its reply. Bots have no deadline; a bot turn is marked
    ``bot_to_move_since`` for the bot sweep instead."""
    turn = state.turn
    if state.is_over or turn is None:
        clock_clear(match)
        return None
    seat = seats[turn]
    fields: dict[str, Any] = {"to_move_deal": deal_id, "to_move_ply": state.ply}
    fields["to_move_seat"] = turn
    bot: BotTurn | None = None
    now = turn_start(match)
    # The service's own bots (a level) play untimed; a third-party bot account plays
    # through the API like a person, and is timed like one.
    service_bot = seat["is_bot"] and seat["bot_level"]
    if service_bot or seat.get("bot_holds"):
        bot = BotTurn(seat["bot_level"] if service_bot else match.timeout_bot_level)
        fields.update(deadline=None, bot_to_move_since=now)
    else:
        first = deal_number == 1 and state.ply < match.players
        allowance = _allowance(match, first)
        if not first and _turn_starts_during_a_hold(state, seats):
            allowance += timedelta(seconds=settings.PLAY_TRICK_HOLD_SECONDS)
        fields.update(deadline=now + allowance, bot_to_move_since=None)
    Match.objects.filter(pk=match.pk).update(**fields)
    for name, value in fields.items():
        setattr(match, name, value)
    if bot is None:
        deadline_task_send(match, deadline=fields["deadline"], now=now)
    return bot


def _turn_starts_during_a_hold(state: rules.Deal, seats: list[JSON]) -> bool:
    """Whether the seat to play gets its turn while its table still shows the trick just
    taken (``PLAY_TRICK_HOLD_SECONDS``, when its hand waits): the cards played since that
    trick are all bots' played at once (the service's bots, or a seat the bot holds),
    or there are none. That time is added to its deadline: without it, a 5 s move left
    about 3.5 s to play after a bot took a trick and led (the browser audit). Not the
    match's first trick (no trick was taken before it), nor a turn that follows a card
    someone thought about (that card came after the trick was shown)."""
    return all(
        (seats[seat]["is_bot"] and seats[seat]["bot_level"]) or seats[seat].get("bot_holds")
        for seat in state.table_seats()
    )


def clock_clear(match: Match) -> None:
    """Nobody is to move any more (the match ended): clear every clock column."""
    fields = {
        "to_move_deal": None,
        "to_move_ply": None,
        "to_move_seat": None,
        "deadline": None,
        "bot_to_move_since": None,
    }
    Match.objects.filter(pk=match.pk).update(**fields)
    for name, value in fields.items():
        setattr(match, name, value)


def move_clock_check(match: Match, *, seat: int, by_bot: bool, for_seat: int | None) -> None:
    """Under the match's lock, before a card at ``seat``: refuse a person's card when the
    bot holds the seat (409 ``seat_held_by_bot``), when the timeout already gave this turn
    to the bot, or when the deadline has passed by the database's clock (409
    ``deadline_passed``; the caller applies the timeout once this transaction is over).
    The timeout bot (``for_seat``) may play a person's seat only while the turn is the
    bot's (the person may have come back meanwhile: then its card is stale)."""
    if for_seat is not None:
        if match.bot_to_move_since is None or match.to_move_seat != for_seat:
            raise StalePlyError("The seat's person plays this turn again.")
        return
    if by_bot or match.to_move_seat != seat:
        return
    if match.bot_to_move_since is not None:
        held = Seat.objects.filter(match=match, number=seat, bot_holds=True).exists()
        raise SeatHeldByBotError() if held else DeadlinePassedError()
    if match.deadline is not None and match.deadline <= db_now(match):
        raise DeadlinePassedError(details={"deadline": match.deadline.isoformat()})


def live_timed(match: Match) -> bool:
    """Whether the match has a live time control (``per_move_seconds``, at most 600 s),
    whose deadlines each have a task due at them; correspondence (``per_move_hours``) and
    untimed matches rely on the sweep alone."""
    seconds = match.per_move_seconds
    return seconds is not None and seconds <= PER_MOVE_SECONDS[1]


def deadline_task_hold_max() -> float:
    """The longest a deadline's task is sent ahead of time: half the broker's visibility
    timeout. A worker holds a task with an ETA unacknowledged until it is due, and Redis
    delivers a message again once it has been unacknowledged for the visibility timeout; a
    task sent further ahead goes out this far, finds its deadline still to come, and sends
    itself again for the rest (:func:`deadline_task_enforce`)."""
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    return float(options.get("visibility_timeout", 3600)) / 2


def deadline_task_send(match: Match, *, deadline: datetime | None, now: datetime) -> None:
    """Under the match's lock, as ``deadline`` is set for the seat to move (``now`` is
    the database's clock): for a live time control, queue the task due at that deadline
    once the transaction commits (``games.tasks.clock_deadline``, with the match, the
    deal, the ply and the deadline it enforces).

    The delay is counted from the database's clock (``deadline - now``), so the task
    comes due when the deadline passes by that clock, give or take the time the commit
    took (late, never early, when the sender's and the worker's clocks agree); an early
    one does nothing but send itself again. Nothing is sent without a broker: eager Celery
    would run the task at once; the requests' sweep enforces the deadline there."""
    if deadline is None or not live_timed(match) or queueing.tasks_run_in_process():
        return
    queueing.task_send_later_on_commit(
        "games.tasks.clock_deadline",
        str(match.pk),
        match.to_move_deal,
        match.to_move_ply,
        deadline.isoformat(),
        countdown=min(max(0.0, (deadline - now).total_seconds()), deadline_task_hold_max()),
        what=f"the deadline task of match {match.pk} ply {match.to_move_ply}",
    )


def timeout_send(match_id: Any) -> bool:
    """Apply a passed deadline through the task (in-process without a broker)."""
    return queueing.task_send(
        "games.tasks.clock_timeout", str(match_id), what=f"timeout of match {match_id}"
    )


def event_add(match: Match, kind: str, /, *, at_turn: bool = True, **data: Any) -> None:
    """Append one of the match's events (placed at the current turn, or with
    ``at_turn=False`` before the first deal / after the match's end). ``kind`` is one of
    ``MatchEventKind`` (a ValueError otherwise: the schema lists only those)."""
    MatchEvent.objects.create(
        match=match,
        kind=MatchEventKind(kind).value,
        deal=match.to_move_deal if at_turn else None,
        ply=match.to_move_ply if at_turn else None,
        after_end=match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED) and not at_turn,
        data=data,
    )
    live.match_changed_on_commit(match.pk)  # every clock event reaches the streams too


def timeout_enforce(*, match_id: Any) -> str | None:
    """Apply the deadline of ``match_id`` if it has passed by the database's clock.

    Exactly once: under the match's lock, the deadline found must have passed (a card
    that got in first moved it). What happens, and the event recorded (``seat_timed_out``,
    with ``action``):

    - the person has not played a card in this match yet: the match is aborted
      (``end_reason: "abort_window"``), unrated, nobody loses;
    - untimed (the idle limit, ``MATCH_IDLE_HOURS``): the absent side loses
      (``"abandoned"``);
    - ``on_timeout: "forfeit"``: the absent side loses (``"timeout"``), rated like a
      resignation;
    - ``on_timeout: "bot"``: the timeout bot plays this card, the seat is marked ``away``;
      after 3 timeouts in a row the bot holds the seat until ``POST .../return``.

    Returns the action taken, or None. Safe to run twice, late, or never (the sweep)."""
    with transaction.atomic():
        try:
            match = match_get(match_id=match_id, for_update=True)
        except MatchNotFoundError:  # no such match: nothing to do
            return None
        if match.status != MatchStatus.ACTIVE or match.deadline is None:
            return None
        if not Match.objects.filter(pk=match.pk, deadline__lte=Now()).exists():
            return None
        return _timeout_apply(match)


def deadline_task_enforce(*, match_id: Any, deal_id: int, ply: int, deadline: str) -> str | None:
    """The task due at a live deadline (:func:`deadline_task_send`): apply exactly that
    ``deadline`` of ``deal_id`` at ``ply``, if it is still the one pending and has passed by
    the database's clock, under the match's lock, as :func:`timeout_enforce` does.

    Does nothing (None) once the match has moved on: a card took the lock first (it
    stands), the sweep or an earlier delivery of this task applied the deadline, or the
    person came back with a new deadline (which has its own task). When the task takes
    the lock first, a card at that ply gets a 409 (``deadline_passed``, ``match_over``).

    Come too early (a worker's clock ahead of the database's, or a deadline further off
    than :func:`deadline_task_hold_max`), it sends itself again for what is left and
    returns ``"later"``. Returns the action taken otherwise."""
    due = _aware(datetime.fromisoformat(deadline))
    with transaction.atomic():
        try:
            match = match_get(match_id=match_id, for_update=True)
        except MatchNotFoundError:
            return None
        pending = (match.status, match.to_move_deal, match.to_move_ply, match.deadline)
        if pending != (MatchStatus.ACTIVE, deal_id, ply, due):
            return None
        stored, now = _deadline_and_clock(match)
        if stored is not None and stored > now:
            deadline_task_send(match, deadline=stored, now=now)
            return "later"
        return _timeout_apply(match)


def _timeout_apply(match: Match) -> str:
    """Under the match's lock, its pending deadline passed: apply it (see
    :func:`timeout_enforce`); returns the action taken."""
    from games.matches import services as match_services

    number = match.to_move_seat
    seat = Seat.objects.select_for_update().get(match=match, number=number)
    played = Move.objects.filter(deal__match=match, seat=number).exists()
    if not played:
        action = "abort"
        event_add(match, "seat_timed_out", seat=number, action=action)
        match_services.match_end_early(
            match, winner_team=None, reason=EndReason.ABORT_WINDOW, aborted=True
        )
    elif match.per_move_seconds is None or match.on_timeout == OnTimeout.FORFEIT:
        action = "forfeit"
        event_add(match, "seat_timed_out", seat=number, action=action)
        reason = EndReason.TIMEOUT if match.per_move_seconds else EndReason.ABANDONED
        match_services.match_end_early(match, winner_team=1 - seat.team, reason=reason)
    else:
        action = "bot"
        seat.away = True
        seat.timeouts_in_row += 1
        seat.bot_holds = seat.timeouts_in_row >= TIMEOUTS_BEFORE_BOT_HOLDS and _someone_waits(
            match, number
        )
        seat.save(update_fields=["away", "timeouts_in_row", "bot_holds"])
        event_add(match, "seat_timed_out", seat=number, action=action)
        if seat.bot_holds:
            event_add(match, "seat_taken_by_bot", seat=number, bot=match.timeout_bot_level)
        Match.objects.filter(pk=match.pk).update(deadline=None, bot_to_move_since=Now())
        deal_id, ply, level = match.to_move_deal, match.to_move_ply, match.timeout_bot_level
        account = match.created_by_id
        transaction.on_commit(
            lambda: match_services.bot_reply_enqueue(
                deal_id=deal_id, ply=ply, level=level, account=account
            )
        )
    return action


def _someone_waits(match: Match, seat: int) -> bool:
    """Whether another seat of ``match`` is a player who waits out ``seat``'s turns: a
    person (or a bot account playing through the API, timed like one) whose seat the bot
    does not hold. The bot takes a seat that timed out ``TIMEOUTS_BEFORE_BOT_HOLDS`` times
    in a row, and plays it at once, so that they wait no more; against the service's bots
    alone nobody waits, and the bot plays each of the seat's turns only when its time runs
    out, at the table's pace, so its person can come back and take it (held, the seat
    played the rest of the match out in a blink: an outside audit came back to a match
    over, the bot having played 17 of their 20 cards)."""
    return (
        Seat.objects.filter(match=match, user__isnull=False, bot_holds=False)
        .exclude(number=seat)
        .exclude(user__is_bot=True, user__bot_level__gt="")
        .exists()
    )


def seat_back(match: Match, *, seat: int, by: str) -> bool:
    """Under the match's lock: the person of ``seat`` plays again (``by="move"``) or
    takes it back (``by="return"``); their away marks are cleared. Returns whether the
    seat was away or held (an event ``seat_returned`` is recorded then)."""
    row = Seat.objects.select_for_update().get(match=match, number=seat)
    if not (row.away or row.bot_holds or row.timeouts_in_row):
        return False
    was_away = row.away or row.bot_holds
    row.away = row.bot_holds = False
    row.timeouts_in_row = 0
    row.save(update_fields=["away", "bot_holds", "timeouts_in_row"])
    if was_away:
        event_add(match, "seat_returned", seat=seat, by=by)
    return was_away


def seat_return(*, match_id: Any, user: User) -> Match:
    """``POST /matches/{id}/return``: take back a seat the bot holds (or played for).
    409 ``match_over`` once the match is over (finished or aborted), as for a move or a
    resignation then; 409 ``seat_not_left`` for a seat never left. When it is the seat's
    turn, the person plays it again, with a fresh deadline."""
    with transaction.atomic():
        match = match_get(match_id=match_id, for_update=True)
        row = Seat.objects.filter(match=match, user=user, joined_at__isnull=False).first()
        if row is None:
            raise NotAPlayerError()
        if match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED):
            raise MatchOverError()
        if match.status != MatchStatus.ACTIVE or not (row.away or row.bot_holds):
            raise SeatNotLeftError()
        seat_back(match, seat=row.number, by="return")
        if match.to_move_seat == row.number and match.bot_to_move_since is not None:
            first = False  # the bot played for the seat already: not the abort window
            Match.objects.filter(pk=match.pk).update(
                bot_to_move_since=None, deadline=Now() + _allowance(match, first)
            )
            if live_timed(match) and not queueing.tasks_run_in_process():
                deadline, now = _deadline_and_clock(match)
                deadline_task_send(match, deadline=deadline, now=now)
    return match


# -- invitations, leaving, expiry, rematches ----------------------------------------------


def _call_off(match: Match, reason: str) -> None:
    match.status = MatchStatus.ABORTED
    match.end_reason = reason
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "end_reason", "finished_at"])


def invitation_decline(*, match_id: Any, user: User, reason: str = "") -> Match:
    """The invitee declines: the waiting match is called off (``end_reason:
    "declined"``), and its event says who declined and why. 403 ``not_invited`` for
    anyone without an unanswered invitation; 409 ``match_not_joinable`` once it started."""
    with transaction.atomic():
        match = match_get(match_id=match_id, for_update=True)
        row = Seat.objects.filter(match=match, user=user, joined_at__isnull=True).first()
        if row is None:
            raise NotInvitedError()
        if match.status != MatchStatus.WAITING:
            raise MatchNotJoinableError()
        event_add(
            match,
            "invitation_declined",
            at_turn=False,
            seat=row.number,
            user=user.username,
            reason=reason,
        )
        _call_off(match, EndReason.DECLINED)
    return match


def match_leave(*, match_id: Any, user: User) -> Match:
    """A person who joined a waiting match (not its creator) leaves it: their seat is open
    again. 409 ``cannot_leave`` otherwise (the creator aborts instead)."""
    with transaction.atomic():
        match = match_get(match_id=match_id, for_update=True)
        row = Seat.objects.filter(match=match, user=user, joined_at__isnull=False).first()
        if row is None:
            raise NotAPlayerError()
        if match.status != MatchStatus.WAITING or match.created_by_id == user.pk:
            raise CannotLeaveError()
        row.user = None
        row.joined_at = None
        row.save(update_fields=["user", "joined_at"])
        event_add(match, "seat_left", at_turn=False, seat=row.number, user=user.username)
    return match


def waiting_expire(*, match_id: Any) -> bool:
    """Call off a waiting match past its expiry (database clock); its event and
    ``end_reason: "expired"`` tell the creator why. Exactly once, under the lock."""
    with transaction.atomic():
        match = match_get(match_id=match_id, for_update=True)
        due = Match.objects.filter(
            pk=match.pk, status=MatchStatus.WAITING, expires_at__lte=Now()
        ).exists()
        if not due:
            return False
        event_add(match, "match_expired", at_turn=False)
        _call_off(match, EndReason.EXPIRED)
    return True


def rematch_propose(*, match_id: Any, user: User) -> Match:
    """The rematch of :func:`rematch_offer`, created or not."""
    return rematch_offer(match_id=match_id, user=user)[0]


def rematch_offer(*, match_id: Any, user: User) -> tuple[Match, bool]:
    """``POST /matches/{id}/rematch`` by a player of a finished match: the same table
    again, seats rotated by one, the same settings, and whether this call created it. The
    first call creates it (the proposer and the bots seated, the other people invited);
    another player's call accepts (joins it), and a call again returns it as it is. It
    starts once every person accepted. 409 ``match_not_finished`` before the end."""
    from games.matches import services as match_services

    with transaction.atomic():
        old = match_get(match_id=match_id, for_update=True)
        seats = list(old.seats.select_related("user").order_by("number"))
        mine = next((s for s in seats if s.user_id == user.pk and s.joined_at), None)
        if mine is None:
            raise NotAPlayerError()
        if old.status != MatchStatus.FINISHED:
            raise MatchNotFinishedError()
        existing = old.rematches.order_by("created_at").first()
        if existing is not None:
            if existing.status == MatchStatus.WAITING:
                new_seat = Seat.objects.filter(match=existing, user=user).first()
                if new_seat is not None and new_seat.joined_at is None:
                    match_services.match_join(match_id=existing.pk, user=user)
            return existing, False
        active_matches_check(user)
        n = old.players
        new = Match.objects.create(
            players=n,
            format=old.format,
            partners_last_hand=old.partners_last_hand,
            public=old.public,
            rated=old.rated,
            created_by=user,
            per_move_seconds=old.per_move_seconds,
            on_timeout=old.on_timeout,
            timeout_bot_level=old.timeout_bot_level,
            rematch_of=old,
        )
        now = timezone.now()
        for seat in seats:
            person = seat.user
            joined = person is not None and (person.is_bot or person.pk == user.pk)
            Seat.objects.create(
                match=new,
                number=(seat.number + 1) % n,
                user=person,
                joined_at=now if joined else None,
            )
        event_add(old, "rematch_proposed", at_turn=False, match=str(new.pk), by=user.username)
        waiting_expiry_set(new)
        match_services.match_start_if_full(new)
        # The account streams of everyone seated: an invitation, or a match of their own.
        people = [s.user_id for s in seats if s.user_id is not None]
        live.match_changed_on_commit(new.pk, users=people)
    return new, True


# -- sweeps -------------------------------------------------------------------------------


def sweep_key(name: str) -> str:
    """The key a running sweep holds: per database (services sharing one Redis with
    another database, tests running side by side, sweep their own)."""
    return f"games:clocks:sweep:{connection.settings_dict['NAME']}:{name}"


@contextmanager
def _exclusive(name: str, seconds: float) -> Iterator[bool]:
    """One sweep of a kind at a time across workers. Yields False when another one runs.

    On PostgreSQL a session advisory lock (its id hashed from :func:`sweep_key`): released
    as the sweep ends, and by the server as soon as the sweeping process dies (its
    connection goes with it), so a worker killed mid-sweep never holds up the next sweep.
    Elsewhere (SQLite: ``make run``, one process) a cache key added, not replaced, that
    expires by itself after ``seconds`` if the sweep dies."""
    if connection.vendor == "postgresql":
        with _advisory_lock(sweep_key(name)) as got:
            yield got
        return
    key = sweep_key(name)
    try:
        got = cache.add(key, 1, timeout=max(1, int(seconds)))
    except Exception:  # the cache is down: run anyway (every step is exactly-once)
        got = True
    try:
        yield bool(got)
    finally:
        if got:
            try:
                cache.delete(key)
            except Exception:
                logger.warning("could not release the %s sweep's key", name)


@contextmanager
def _advisory_lock(key: str) -> Iterator[bool]:
    """PostgreSQL's session advisory lock on ``key``, if no other session holds it."""
    lock_id = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [lock_id])
        got = bool(cursor.fetchone()[0])
    try:
        yield got
    finally:
        if got:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [lock_id])
            except DatabaseError:  # the connection is gone, and the lock with it
                logger.warning("could not release the sweep's lock %s", key, exc_info=True)


def deadlines_sweep(*, limit: int | None = None) -> int:
    """Apply every passed deadline (oldest first, at most ``limit``,
    ``settings.CLOCK_SWEEP_LIMIT``) and expire waiting matches past their time. One
    indexed query each; each match then in its own locked transaction. Returns how many
    were acted on."""
    limit = limit or settings.CLOCK_SWEEP_LIMIT
    done = 0
    with _exclusive("deadlines", 60) as mine:
        if not mine:
            return 0
        for pk in clock_selectors.deadlines_due().values_list("pk", flat=True)[:limit]:
            done += timeout_enforce(match_id=pk) is not None
        for pk in clock_selectors.waiting_expired().values_list("pk", flat=True)[:limit]:
            done += waiting_expire(match_id=pk)
    return done


def bot_turns_sweep(*, older_than: float | None = None, limit: int | None = None) -> int:
    """Queue again the bot replies that never came: the matches waiting on a bot for more
    than ``older_than`` seconds (``BOT_SWEEP_AFTER_SECONDS``), oldest first, at most
    ``limit`` (``BOT_SWEEP_LIMIT``), found by one indexed query. Each one's
    ``bot_to_move_since`` is set to now as it is queued, so the next sweep goes on with
    the next oldest instead of the same ones; rows locked by a move are skipped. Sweeps
    never overlap. Returns how many were queued."""
    from games.matches import services as match_services

    if older_than is None:
        older_than = settings.BOT_SWEEP_AFTER_SECONDS
    limit = limit or settings.BOT_SWEEP_LIMIT
    with _exclusive("bot-turns", 60) as mine:
        if not mine:
            return 0
        with transaction.atomic():
            rows = list(
                clock_selectors.bot_turns_waiting(older_than_seconds=older_than)
                .select_for_update(skip_locked=True, of=("self",))
                .values_list("pk", "to_move_deal", "to_move_ply", "to_move_seat", "created_by_id")[
                    :limit
                ]
            )
            if not rows:
                return 0
            Match.objects.filter(pk__in=[r[0] for r in rows]).update(bot_to_move_since=Now())
            levels = _bot_levels(rows)
        queued = 0
        for pk, deal_id, ply, _seat, account in rows:
            if deal_id is None or ply is None:
                continue
            # Pushed again to its account's fair queue (where a reply still waiting keeps
            # its place), with a task of its own: a reply deferred or taken by a task that
            # died is run again.
            queued += match_services.bot_reply_enqueue(
                deal_id=deal_id, ply=ply, level=levels.get(pk, "greedy"), account=account
            )
    return queued


def _bot_levels(rows: list[tuple[Any, ...]]) -> dict[Any, str]:
    """The level of the bot to play in each swept match (one query)."""
    wanted = {(pk, seat) for pk, _d, _p, seat, *_ in rows}
    seats = Seat.objects.filter(match_id__in=[r[0] for r in rows]).select_related("user", "match")
    levels: dict[Any, str] = {}
    for s in seats:
        if (s.match_id, s.number) in wanted:
            user = s.user
            levels[s.match_id] = (
                user.bot_level if user is not None and user.is_bot else s.match.timeout_bot_level
            )
    return levels


# Under `make run` (no broker, no beat) the sweeps run in the web process itself, on the
# requests' way in (see games.clocks.middleware) and from the streams of a match that is due
# (games.live.streams.wait_for_change), at most once per interval.
_last_in_process = 0.0
_in_process_lock = threading.Lock()


def sweep_in_process() -> int:
    """Run the deadline and expiry sweep here, and the sweep of bot replies that never
    came (a reply that failed, say on SQLite's lock: beat's job with a broker), when
    tasks run in-process and the last run was more than ``CLOCK_IN_PROCESS_SWEEP_SECONDS``
    ago. Returns how many acted on."""
    global _last_in_process
    if not queueing.tasks_run_in_process():
        return 0
    now = time.monotonic()
    with _in_process_lock:
        if now - _last_in_process < settings.CLOCK_IN_PROCESS_SWEEP_SECONDS:
            return 0
        _last_in_process = now
    return deadlines_sweep() + bot_turns_sweep()
