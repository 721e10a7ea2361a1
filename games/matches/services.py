"""Writes: creating and joining matches, playing moves, resigning, bot replies.

Every write that changes a match takes the match's row lock (``SELECT ... FOR UPDATE``)
for the whole transaction, so moves, resignations and deal changes of one match happen
one at a time. A move is checked against the ply the client saw (stale -> 409), then
validated by the rules engine, then appended. Follow-up work (bot replies) is queued
with ``transaction.on_commit``; if it is lost, ``sweep_pending_bot_moves`` finds it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Literal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.crypto import salted_hmac
from redis.exceptions import RedisError

from accounts.models import User
from accounts.selectors import user_by_name
from accounts.services import bot_account_ensure
from accounts.usernames import lookup_key
from briscola_service import fair_queues, logs, metrics, queueing
from games import live, rules
from games.bots import choose_card
from games.clocks import services as clocks
from games.errors import (
    AlreadySeatedError,
    DeadlinePassedError,
    ExhibitionAdminsOnlyError,
    InvalidMatchError,
    MatchNotJoinableError,
    MatchNotStartedError,
    MatchOverError,
    MatchPrivateError,
    MatchStartedError,
    NotAPlayerError,
    NotMatchCreatorError,
    SeatUnavailableError,
    StaleDealError,
    StalePlyError,
)
from games.matches import selectors, snapshots
from games.matches.selectors import bot_levels_seatable, deal_state, match_get, seat_of_user
from games.models import (
    Deal,
    DealStatus,
    EndReason,
    Match,
    MatchStatus,
    Move,
    Seat,
)
from games.rated_games import match_rating_queue_on_commit, match_rating_weight

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SeatSpec:
    """Who takes a seat at creation: a bot of some level, an invited user, or nobody yet."""

    kind: Literal["bot", "user", "open"]
    value: str = ""


def _lock_match(match_id: object) -> Match:
    return match_get(match_id=match_id, for_update=True)


def _echo(value: object) -> object:
    """A client's value as an error's details may show it back: a string always encodable
    (an unpaired surrogate, which no encoder takes, as its escape ``\\ud800``; the JSON
    parser refuses those, but a value may come from elsewhere) and at most 100 characters."""
    if not isinstance(value, str):
        return value
    return value[:100].encode("utf-8", "backslashreplace").decode("utf-8")


def match_create(
    *,
    creator: User,
    players: int,
    format: str,
    seats: Sequence[SeatSpec],
    public: bool = False,
    rated: bool = False,
    partners_last_hand: bool = True,
    time_control: clocks.TimeControl | None = None,
) -> Match:
    """Create a match with ``creator`` in seat 0; it starts once every seat is taken.

    ``time_control`` (games.clocks): the per-move time, what a timeout does, the timeout
    bot's level. A match still waiting expires after ``INVITATION_EXPIRY_HOURS``.

    ``seats`` lists seats 1 onwards. Listing every seat (seat 0 included), all bots,
    makes an exhibition: administrators only, the creator sits nowhere, and the bots
    play the whole match through the bot-reply chain.
    """
    if players not in rules.PLAYER_COUNTS:
        raise InvalidMatchError("A match has 2 or 4 players.", details={"players": players})
    if format not in rules.FORMATS:
        raise InvalidMatchError(
            f"Unknown format; one of {', '.join(rules.FORMATS)}.",
            details={"format": _echo(format)},
        )
    exhibition = len(seats) == players
    if exhibition:
        if any(spec.kind != "bot" for spec in seats):
            raise InvalidMatchError(
                f"Listing all {players} seats makes an exhibition, and every seat of an "
                'exhibition is a bot ({"bot": level}); otherwise list seats 1 onwards.',
                details={"seats": "an exhibition seats bots only"},
            )
        if not selectors.is_admin(creator):
            raise ExhibitionAdminsOnlyError()
    elif len(seats) != players - 1:
        raise InvalidMatchError(
            f"`seats` lists the other {players - 1} seat(s) in order (seat 1 onwards).",
            details={"seats": f"expected {players - 1}, got {len(seats)}"},
        )
    first_listed = 0 if exhibition else 1
    users: list[User | None] = []
    invited: set[str] = set()
    bots_of_level: dict[str, int] = {}
    for number, spec in enumerate(seats, start=first_listed):
        if spec.kind == "bot":
            if spec.value not in bot_levels_seatable():
                raise InvalidMatchError(
                    f"Unknown bot level {spec.value!r}; one of {', '.join(bot_levels_seatable())}.",
                    details={"seat": number, "bot": _echo(spec.value)},
                )
            bots_of_level[spec.value] = bots_of_level.get(spec.value, 0) + 1
            users.append(bot_account_ensure(level=spec.value, copy=bots_of_level[spec.value]))
        elif spec.kind == "user":
            name = lookup_key(spec.value)
            user = user_by_name(spec.value, field="seats")
            if user is None or user.is_bot:
                raise InvalidMatchError(
                    f"No player named {spec.value!r} (invite bots with {{'bot': level}}).",
                    details={"seat": number, "user": _echo(spec.value)},
                )
            if user.pk == creator.pk or name in invited:
                raise InvalidMatchError(
                    "A player can take only one seat.", details={"seat": number}
                )
            invited.add(name)
            users.append(user)
        else:
            users.append(None)
    now = timezone.now()
    clock = time_control or clocks.TimeControl()
    with transaction.atomic():
        if not exhibition:
            clocks.active_matches_check(creator)
        match = Match.objects.create(
            players=players,
            format=format,
            partners_last_hand=partners_last_hand,
            public=public,
            rated=rated,
            created_by=creator,
            per_move_seconds=clock.per_move_seconds,
            on_timeout=clock.on_timeout,
            timeout_bot_level=clock.bot_level,
        )
        if not exhibition:
            Seat.objects.create(match=match, number=0, user=creator, joined_at=now)
        for number, (spec, user) in enumerate(zip(seats, users, strict=True), start=first_listed):
            Seat.objects.create(
                match=match,
                number=number,
                user=user,
                joined_at=now if spec.kind == "bot" else None,
            )
        if not _start_if_full(match):
            clocks.waiting_expiry_set(match)
        live.match_changed_on_commit(match.pk, users=[u.pk for u in (creator, *users) if u])
    return match


def match_join(*, match_id: object, user: User, seat: int | None = None) -> Match:
    """Take an open seat (or the seat one was invited to). Locks the match."""
    with transaction.atomic():
        match = _lock_match(match_id)
        seats = list(match.seats.select_for_update().order_by("number"))
        if not selectors.match_visible_to(match, seats, user):
            # A private match with no seat for this user: 403 as GET says, before a
            # status or a seat's reason could tell a stranger how the match stands.
            raise MatchPrivateError()
        if match.status != MatchStatus.WAITING:
            raise MatchNotJoinableError()
        if any(s.user_id == user.pk and s.joined_at is not None for s in seats):
            raise AlreadySeatedError()
        clocks.active_matches_check(user)
        invitation = next((s for s in seats if s.user_id == user.pk), None)
        if seat is not None:
            chosen = next((s for s in seats if s.number == seat), None)
            if chosen is None:
                raise SeatUnavailableError(
                    f"There is no seat {seat} in a {match.players}-player match.",
                    details={"seat": seat},
                )
            if chosen.user_id not in (None, user.pk) or (
                invitation is not None and chosen is not invitation
            ):
                raise SeatUnavailableError(details={"seat": seat})
        elif invitation is not None:
            chosen = invitation
        else:
            chosen = next((s for s in seats if s.user_id is None), None)
            if chosen is None:
                raise SeatUnavailableError("No open seat: the other seats are reserved.")
        chosen.user = user
        chosen.joined_at = timezone.now()
        chosen.save(update_fields=["user", "joined_at"])
        _start_if_full(match)
        live.match_changed_on_commit(match.pk, users=[user.pk])
    return match


def match_abort(*, match_id: object, user: User) -> Match:
    """The creator calls off a match that has not started (or an administrator who
    holds no seat in it)."""
    with transaction.atomic():
        match = _lock_match(match_id)
        if match.created_by_id != user.pk and not selectors.staff_powers(
            user, list(match.seats.all())
        ):
            raise NotMatchCreatorError()
        if match.status == MatchStatus.ACTIVE:
            raise MatchStartedError()
        if match.status != MatchStatus.WAITING:  # finished, or aborted already
            raise MatchOverError()
        match.status = MatchStatus.ABORTED
        match.end_reason = EndReason.ABORTED
        match.finished_at = timezone.now()
        match.save(update_fields=["status", "end_reason", "finished_at"])
        live.match_changed_on_commit(match.pk)
    return match


def _start_if_full(match: Match) -> bool:
    """Start the match (its first deal) if every seat is taken; whether it started."""
    if match.seats.filter(joined_at__isnull=True).exists():
        return False
    match.status = MatchStatus.ACTIVE
    match.started_at = timezone.now()
    match.save(update_fields=["status", "started_at"])
    _deal_start(match, rules_match=None)
    # Kept like a move's (games.matches.snapshots): the first state of the match, which a
    # stream resuming from it rebuilds its events from (games.live.events).
    snapshots.snapshot_put_on_commit(selectors.match_snapshot(match=match))
    return True


def match_start_if_full(match: Match) -> bool:
    """Under the match's lock: start it if every seat is taken (games.clocks' rematch)."""
    return _start_if_full(match)


def _deal_start(match: Match, rules_match: rules.Match | None) -> tuple[Deal, rules.Deal, bool]:
    """Deal the next deal (the first one without ``rules_match``). Returns it, its state,
    and whether a bot's first card was queued."""
    seed = rules.new_seed()
    if rules_match is None:
        number, dealer = 1, rules.first_dealer(seed, match.players)
    else:
        number, dealer = len(rules_match.results) + 1, rules_match.next_dealer
    deal = Deal.objects.create(
        match=match,
        number=number,
        dealer=dealer,
        seed=seed,
        commitment=rules.seed_commitment(seed),
    )
    deal.match = match
    state = deal_state(deal, moves=[])
    seats = [selectors.seat_json(s) for s in selectors.match_seats(match)]
    bot = clocks.clock_set(match, deal_id=deal.pk, deal_number=number, state=state, seats=seats)
    return deal, state, _queue_bot_reply_if(bot, deal.pk, state, match.created_by_id)


def _rules_match(match: Match, deals: list[Deal]) -> rules.Match:
    """The match's deal results so far (``deals``: all of them, in order), as the rules
    engine counts them."""
    first = deals[0].dealer if deals else 0
    counted = rules.Match(match.players, match.format, first)
    for deal in deals:
        if deal.status == DealStatus.FINISHED:
            counted.results.append(deal.winner_team)
    return counted


def _current_deal(match: Match) -> Deal:
    deal = match.deals.filter(status=DealStatus.ACTIVE).order_by("-number").first()
    if deal is None:  # pragma: no cover - an active match always has an active deal
        raise MatchOverError()
    deal.match = match
    return deal


@dataclass
class MovePlayed:
    """What a move left behind as it committed: the match as every viewer sees it
    (``snapshot``, kept in the cache too), so the move is answered without reading again.

    ``stale`` is set when work that followed the commit ran in this process (a bot's reply
    without a broker), so the match has moved on and must be read again.
    """

    deal_id: int  # the deal the move was played in
    snapshot: selectors.MatchSnapshot
    stale: bool = False


def move_play(
    *,
    match_id: object,
    user: User,
    card: str,
    ply: int,
    deal_id: int | None = None,
    bot_for_seat: int | None = None,
) -> MovePlayed:
    """Play ``card`` for ``user``'s seat at position ``ply``. Locks the match.

    Returns the match as the move left it (see :class:`MovePlayed`). Raises
    ``StaleDealError`` (409 ``stale_deal``) when ``deal_id`` is given and is not the
    match's current deal, ``StalePlyError`` when the deal is no longer at ``ply`` (another
    move got there first); and the rules engine's errors for an illegal card.

    One path: once the match is locked and its version read, the move is checked
    (:func:`_move_checked`) against the match as it is at that version
    (:func:`_match_at`): the snapshot the last move kept of exactly that version, when
    the cache has it, or else one read from the rows. The card that ends a deal then
    writes the deal's result and what follows from the rows themselves.

    ``bot_for_seat``: the timeout bot (``user``, a bot account) plays for that person's
    seat (games.clocks). A person's card after their deadline (the database's clock) is
    refused with ``DeadlinePassedError``, and the timeout is applied at once.
    """
    parsed = rules.Card.from_code(card)
    try:
        with transaction.atomic():
            match, version = selectors.match_lock_versioned(match_id=match_id)
            at = _match_at(match, version)
            seat, state = _move_checked(match, at, user, parsed, ply, deal_id, bot_for_seat)
            played = _move_append(match, at, seat, state, parsed, ply, bot_for_seat is not None)
            snapshots.snapshot_put_on_commit(played.snapshot)
            live.match_changed_on_commit(match.pk)
    except IntegrityError as exc:
        # The unique (deal, ply) constraint: the last guard against a concurrent move.
        raise StalePlyError(details={"your_ply": ply}) from exc
    except DeadlinePassedError:
        clocks.timeout_send(match_id)
        raise
    return played


def _match_at(match: Match, version: tuple[object, ...]) -> selectors.MatchSnapshot:
    """The locked ``match`` at ``version``: the snapshot a move kept of that version, or
    one read from the rows.

    A kept snapshot can be trusted for a move's checks because the version is read under
    the lock that every write of a seat, a deal or a move takes, and because the move log
    only grows: the first ``n`` cards of a deal, with its seed, are that deal's first
    ``n`` cards for ever. Only an active match's snapshots are looked up (a move to any
    other is refused, and the rows say why)."""
    kept = None
    if match.status == MatchStatus.ACTIVE:
        kept = snapshots.snapshot_get(match.pk, version)
    return kept or selectors.match_snapshot(match=match)


def _move_checked(
    match: Match,
    at: selectors.MatchSnapshot,
    user: User,
    card: rules.Card,
    ply: int,
    deal_id: int | None,
    bot_for_seat: int | None = None,
) -> tuple[int, rules.Deal]:
    """The checks every move passes, in order. Returns the mover's seat and the current
    deal with the card played (nothing is written yet)."""
    seat = at.joined_seat_of(user.pk) if bot_for_seat is None else bot_for_seat
    if seat is None:
        raise NotAPlayerError()
    if match.status == MatchStatus.WAITING:
        raise MatchNotStartedError()
    current = at.current
    if (
        match.status != MatchStatus.ACTIVE
        or current is None
        or current.summary["status"] != DealStatus.ACTIVE
    ):
        raise MatchOverError()
    _check_deal(current.summary["id"], deal_id)
    state = current.state()
    _check_ply(state, ply)
    clocks.move_clock_check(match, seat=seat, by_bot=user.is_bot, for_seat=bot_for_seat)
    state.play(card, seat=seat)
    return seat, state


def _move_append(
    match: Match,
    at: selectors.MatchSnapshot,
    seat: int,
    state: rules.Deal,
    card: rules.Card,
    ply: int,
    by_timeout_bot: bool = False,
) -> MovePlayed:
    """Append the checked move; queue the bot's reply, or end the deal."""
    current = at.current
    assert current is not None  # _move_checked refused a match without a current deal
    deal_id: int = current.summary["id"]
    move = Move.objects.create(deal_id=deal_id, ply=ply, seat=seat, card=card.code)
    returned = False
    if not by_timeout_bot and at.summary["seats"][seat].get("away"):
        returned = clocks.seat_back(match, seat=seat, by="move")  # they play again
    if state.is_over:
        return _deal_end(match, state)
    if returned:  # the seat's marks changed: the summary is read again (rare)
        seats_json = [selectors.seat_json(s) for s in selectors.match_seats(match)]
    else:
        seats_json = at.summary["seats"]
    number = current.summary["number"]
    bot = clocks.clock_set(
        match, deal_id=deal_id, deal_number=number, state=state, seats=seats_json
    )
    queued = _queue_bot_reply_if(bot, deal_id, state, match.created_by_id)
    if returned:
        snapshot = selectors.match_snapshot(match=match)
    else:
        snapshot = replace(
            at,
            summary={
                **at.summary,
                **clocks.clock_selectors.clock_summary(match),
                "last_move_at": move.created_at,
            },
            current=replace(current, moves=(*current.moves, card.code)),
        )
    return MovePlayed(deal_id, snapshot, queued and queueing.tasks_run_in_process())


def _deal_end(match: Match, state: rules.Deal) -> MovePlayed:
    """After the card that ends the current deal (``state``): its result, then the next
    deal or the match's end, written from the rows themselves."""
    seats = selectors.match_seats(match)
    deals = list(match.deals.order_by("number"))
    deal = deals[-1]
    deal.match = match
    states = {deal.pk: state}
    followed = _deal_finish(match, deal, state, deals, states)
    snapshot = selectors.match_snapshot(match=match, seats=seats, deals=deals, states=states)
    return MovePlayed(deal.pk, snapshot, followed and queueing.tasks_run_in_process())


def _check_deal(current: int, deal_id: int | None) -> None:
    if deal_id is not None and current != deal_id:
        raise StaleDealError(
            f"The match's current deal is {current}, not {deal_id}: refresh and play again.",
            details={"current_deal": current, "your_deal": deal_id},
        )


def _check_ply(state: rules.Deal, ply: int) -> None:
    if ply != state.ply:
        raise StalePlyError(
            f"The deal is at ply {state.ply}, not {ply}: refresh and play again.",
            details={"current_ply": state.ply, "your_ply": ply},
        )


def _deal_finish(
    match: Match, deal: Deal, state: rules.Deal, deals: list[Deal], states: dict[int, rules.Deal]
) -> bool:
    """Record the deal's result; start the next deal or end the match (adding it to
    ``deals`` and its state to ``states``). Returns whether a bot's reply was queued (the
    next deal's first card)."""
    now = timezone.now()
    deal.status = DealStatus.FINISHED
    deal.points_team0, deal.points_team1 = state.points
    deal.winner_team = state.winner
    deal.finished_at = now
    deal.save(
        update_fields=["status", "points_team0", "points_team1", "winner_team", "finished_at"]
    )
    counted = _rules_match(match, deals)
    match.deals_won_team0, match.deals_won_team1 = counted.deals_won
    fields = ["deals_won_team0", "deals_won_team1"]
    if counted.is_over:
        match.status = MatchStatus.FINISHED
        match.winner_team = counted.winner
        match.end_reason = EndReason.PLAYED
        match.finished_at = now
        match.rating_weight = match_rating_weight(match, now=now)
        fields += ["status", "winner_team", "end_reason", "finished_at", "rating_weight"]
    match.save(update_fields=fields)
    if counted.is_over:
        clocks.clock_clear(match)
        match_rating_queue_on_commit(match)
        return False
    following, first_state, queued = _deal_start(match, counted)
    deals.append(following)
    states[following.pk] = first_state
    return queued


def match_resign(*, match_id: object, user: User) -> Match:
    """``user``'s team gives up: the match ends at once and the other team wins it.

    Unless some person at the table has not played a card yet in the match: then nothing
    was played out between them, and the match is aborted instead, unrated and with no
    winner (as Lichess aborts a game resigned before both sides moved). A resignation at
    ply 0 was a free rated win for a second account.
    """
    with transaction.atomic():
        match = _lock_match(match_id)
        seats = list(match.seats.select_related("user").order_by("number"))
        seat = seat_of_user(seats, user)
        if seat is None:
            raise NotAPlayerError()
        if match.status == MatchStatus.WAITING:
            raise MatchNotStartedError("The match has not started: abort it instead.")
        if match.status != MatchStatus.ACTIVE:
            raise MatchOverError()
        if not everyone_has_played(match, seats):
            # Nothing was played out between the people at the table: aborted, unrated.
            match_end_early(match, winner_team=None, reason=EndReason.ABORTED, aborted=True)
        else:
            match_end_early(match, winner_team=1 - seat.team, reason=EndReason.RESIGNED)
    return match


def everyone_has_played(match: Match, seats: Sequence[Seat]) -> bool:
    """Whether every person (not bot) seated in ``match`` has played a card in it (issue
    19, item 14: a resignation before that is an abort, as on Lichess)."""
    people = {s.number for s in seats if s.user is not None and not s.user.is_bot}
    played = set(
        Move.objects.filter(deal__match=match, seat__in=people)
        .values_list("seat", flat=True)
        .distinct()
    )
    return played >= people


def match_end_early(
    match: Match, *, winner_team: int | None, reason: str, aborted: bool = False
) -> None:
    """Under the match's lock: end an active match during its deal (a resignation, a
    timeout): the deal is abandoned, ``winner_team`` wins (a rated match is rated, with the
    weight of games.rated_games.match_rating_weight), or, ``aborted``, the match is
    aborted, unrated, and nobody wins."""
    now = timezone.now()
    deal = _current_deal(match)
    state = deal_state(deal)
    deal.status = DealStatus.ABANDONED
    deal.points_team0, deal.points_team1 = state.points
    deal.finished_at = now
    deal.save(update_fields=["status", "points_team0", "points_team1", "finished_at"])
    match.status = MatchStatus.ABORTED if aborted else MatchStatus.FINISHED
    match.winner_team = None if aborted else winner_team
    match.end_reason = reason
    match.finished_at = now
    fields = ["status", "winner_team", "end_reason", "finished_at"]
    if not aborted:
        match.rating_weight = match_rating_weight(match, now=now)
        fields.append("rating_weight")
    match.save(update_fields=fields)
    clocks.clock_clear(match)
    if not aborted:
        match_rating_queue_on_commit(match)
    live.match_changed_on_commit(match.pk)


# -- bots -------------------------------------------------------------------------------


def _queue_bot_reply_if(
    bot: clocks.BotTurn | None, deal_id: int, state: rules.Deal, account: int
) -> bool:
    """If a bot is to play next (``bot``, from clocks.clock_set), queue its reply once
    this transaction commits (True), on the account of the match's creator (``account``)."""
    if bot is None or state.turn is None:
        return False
    ply, level = state.ply, bot.level
    transaction.on_commit(
        lambda: bot_reply_enqueue(deal_id=deal_id, ply=ply, level=level, account=account)
    )
    return True


# Bot replies waiting to run in this thread, while an in-process (eager) reply runs.
_in_process = threading.local()


def bot_reply_enqueue(
    *, deal_id: int, ply: int, level: str = "greedy", account: int | None = None
) -> bool:
    """Send the bot task; a broker failure is logged, not raised (the sweep retries).

    ``account`` is the account the reply is charged to, for fairness between accounts
    (the creator of the match: the one whose cap, ``MATCH_ACTIVE_LIMIT``, counts it); see
    :func:`bot_reply_run`.

    Without a broker (``task_always_eager``) the task runs here, in-process. Each bot
    move queues the next reply when it commits, so a table of bots would nest one reply
    inside the last until the stack overflows (an exhibition plays hundreds of moves);
    instead the outermost call runs the replies one after another, and the nested calls
    only hand theirs to it.
    """
    if not queueing.tasks_run_in_process():
        return _bot_reply_send(deal_id, ply, level, account)
    pending: deque[tuple[int, int, str, int | None]] | None = getattr(_in_process, "pending", None)
    if pending is not None:  # a reply is running further up this thread's stack
        pending.append((deal_id, ply, level, account))
        return True
    _in_process.pending = pending = deque([(deal_id, ply, level, account)])
    sent = True
    try:
        while pending:
            sent = _bot_reply_send(*pending.popleft()) and sent
    finally:
        del _in_process.pending
    return sent


BOT_TASK = "games.tasks.bot_play"
BOT_TASK_SLOW = "games.tasks.bot_play_expert"


def bot_task_of(level: str) -> str:
    """The task of a level's replies: the slow levels (``BOT_SLOW_LEVELS``, the searching
    ones) have their own, routed to their own queue (``CELERY_TASK_ROUTES``), so a flood of
    them never delays the others."""
    return BOT_TASK_SLOW if level in settings.BOT_SLOW_LEVELS else BOT_TASK


def bot_fairness_on() -> bool:
    """Whether bot replies go through the fair queues: ``BOT_FAIR_QUEUEING`` and a broker
    (in-process, each reply runs at once as it is sent: there is nothing to reorder)."""
    return bool(settings.BOT_FAIR_QUEUEING) and not queueing.tasks_run_in_process()


def _bot_reply_send(deal_id: int, ply: int, level: str, account: int | None) -> bool:
    """Send the reply's task. With fairness on, the reply itself waits in its account's
    fair queue first, and the task is a token that runs whichever reply is next in turn
    (:func:`bot_reply_run`); it carries its own reply too, to run if Redis fails it."""
    name = bot_task_of(level)
    what = f"bot reply for deal {deal_id} ply {ply}"
    fair = bot_fairness_on() and account is not None
    if fair:
        try:
            fair_queues.push(name, str(account), f"{deal_id}:{ply}", logs.REQUEST_ID.get())
        except (RedisError, fair_queues.FairQueuesUnavailableError):
            logger.warning("could not queue %s fairly; sent as it is", what, exc_info=True)
            fair = False
    return queueing.task_send(name, deal_id, ply, account, fair, what=what)


def bot_reply_run(
    *, pool: str, deal_id: int, ply: int, fair: bool = False, token: str | None = None
) -> bool:
    """Run a bot reply task (``pool``: its task's name) and return whether a card was played.

    Sent fairly (``fair``: its reply was pushed to its account's fair queue), the task
    plays the reply next in turn between the accounts with replies waiting, not
    necessarily its own (briscola_service/fair_queues.py): an account's reply waits behind
    at most one reply of each other account, and an account has at most
    ``BOT_FAIR_CONCURRENCY`` replies being thought at once (a lease each, which a task
    that died gives back after ``BOT_FAIR_LEASE_SECONDS``). When every account with
    replies waiting is at that limit, the task ends without playing: the next lease given
    back sends a task in its place. A task delivered again after its worker died
    (``token``, the task's id, is the same) plays the reply it had taken; a reply whose
    task is lost for good is found by the bot sweep (:func:`bot_moves_sweep`), which
    pushes it again.
    Otherwise (fairness off, or Redis unreachable) it plays its own reply, ``deal_id`` at
    ``ply``.
    """
    if not (fair and bot_fairness_on()):
        return bot_move_play(deal_id=deal_id, ply=ply)
    try:
        outcome = fair_queues.take(
            pool,
            limit=settings.BOT_FAIR_CONCURRENCY,
            lease_seconds=settings.BOT_FAIR_LEASE_SECONDS,
            token=token,
        )
    except (RedisError, fair_queues.FairQueuesUnavailableError):
        logger.warning("fair queue %s unreachable: playing this task's own reply", pool)
        metrics.BOT_FAIR.labels(pool, "unreachable").inc()
        return bot_move_play(deal_id=deal_id, ply=ply)
    taken = outcome.taken
    if taken is None:
        # Nothing queued (another task took this one's reply), or every account with
        # replies waiting is at its limit (deferred: a lease given back pays this task back).
        metrics.BOT_FAIR.labels(pool, "deferred" if outcome.passed else "idle").inc()
        return False
    metrics.BOT_FAIR.labels(pool, "taken").inc()
    metrics.BOT_FAIR_WAIT_SECONDS.labels(pool).observe(taken.waited)
    deal_text, _, ply_text = taken.item.partition(":")
    # Logged under the request that queued this reply (not the one that sent this task).
    request_id = logs.REQUEST_ID.set(taken.tag) if taken.tag else None
    try:
        return bot_move_play(deal_id=int(deal_text), ply=int(ply_text))
    finally:
        _bot_lease_release(taken)
        if request_id is not None:
            logs.REQUEST_ID.reset(request_id)


def _bot_lease_release(taken: fair_queues.Taken) -> None:
    """Give the account's lease back; send the token owed to a deferred reply, if any."""
    try:
        owed = fair_queues.release(taken)
    except (RedisError, fair_queues.FairQueuesUnavailableError):
        logger.warning("could not give back a fair-queue lease (it expires by itself)")
        return
    if owed is not None:
        account, item = owed
        deal_text, _, ply_text = item.partition(":")
        queueing.task_send(
            taken.pool,
            int(deal_text),
            int(ply_text),
            int(account),
            True,
            what=f"bot reply (next in turn) for deal {deal_text} ply {ply_text}",
        )


def bot_decision_seed(*, deal: Deal, ply: int) -> str:
    """The seed of the bot's decision at ``ply`` of ``deal``: a server secret.

    An HMAC-SHA256 keyed by ``settings.SECRET_KEY`` (Django's ``salted_hmac``, with a salt
    of its own) over the deal's secret seed and the ply. Nothing a seat sees lets anyone
    compute it, not even the deal's seed once the deal is over and it is revealed (a seed
    made of public values, such as the deal's id and the ply, let an opponent predict
    which card the random bot would play). The server can still reproduce every decision:
    the same deal and ply always give the same seed (while SECRET_KEY stays the same).
    """
    value = f"{deal.seed}:{ply}"
    return salted_hmac("games.bot_decision_seed", value, algorithm="sha256").hexdigest()


def bot_move_play(*, deal_id: int, ply: int) -> bool:
    """Play the bot's card in deal ``deal_id`` if the deal is still at ``ply``.

    The bot thinks OUTSIDE the match lock, so nobody waits behind its thinking: the deal
    is read without a lock, the bot chooses from its seat's view within
    ``settings.BOT_THINK_MS``, and only then does :func:`move_play` take the lock, with
    the ply and deal id the bot saw. Whatever got in meanwhile (a resignation, a
    duplicate task, the next deal) makes the bot's move stale, and it is dropped. Safe
    to run twice or late: a deal that moved on, ended, or is not waiting on a bot is
    left alone (returns False). The bot sees only its seat's view.
    """
    deal = Deal.objects.select_related("match").filter(pk=deal_id).first()
    if deal is None or deal.status != DealStatus.ACTIVE:
        return False
    state = deal_state(deal)
    if state.ply != ply or state.turn is None:
        return False
    seat = Seat.objects.select_related("user").get(match=deal.match, number=state.turn)
    bot = seat.user
    for_seat: int | None = None
    if bot is None or not bot.is_bot:
        # A person's seat the timeout bot plays (games.clocks): it holds the seat, or the
        # timeout gave it this turn.
        match = deal.match
        timed_out = match.bot_to_move_since is not None and match.to_move_seat == state.turn
        if bot is None or not (seat.bot_holds or timed_out):
            return False
        bot, for_seat = bot_account_ensure(level=match.timeout_bot_level), state.turn
    view = rules.seat_view(state, state.turn, partners_last_hand=deal.match.partners_last_hand)
    thinking = time.perf_counter()
    card = choose_card(
        bot.bot_level,
        view,
        seed=bot_decision_seed(deal=deal, ply=ply),
        budget_ms=settings.BOT_THINK_MS,
    )
    metrics.BOT_THINK_SECONDS.labels(bot.bot_level).observe(time.perf_counter() - thinking)
    _bot_think_padded(bot.bot_level, thinking)
    try:
        move_play(
            match_id=deal.match_id,
            user=bot,
            card=card.code,
            ply=ply,
            deal_id=deal.pk,
            bot_for_seat=for_seat,
        )
    except (StalePlyError, MatchOverError, rules.IllegalMoveError):
        logger.info("bot %s: deal %s moved on from ply %s; its card dropped", bot, deal.pk, ply)
        return False
    logger.info("bot %s played deal %s ply %s", bot, deal.pk, ply)
    _bot_reply_observe(deal, ply, bot.bot_level)
    return True


def _bot_think_padded(level: str, started: float) -> None:
    """A searching level's card is played no sooner than ``BOT_THINK_MS`` after it began
    to think. Its search may end early (every guess of the hidden cards scored, or an
    easy one), and how early depends on its own cards: an opponent timing the replies
    would learn something of a hand it may not see. Padded, every reply takes the budget
    (and over it, when a search overran, which the hard limit keeps rare and small)."""
    if level not in settings.BOT_SLOW_LEVELS:
        return  # the others take a millisecond or two, whatever their cards
    left = settings.BOT_THINK_MS / 1000 - (time.perf_counter() - started)
    if left > 0:
        time.sleep(left)


def _bot_reply_observe(deal: Deal, ply: int, level: str) -> None:
    """The bot reply metric: from the person's card before the bot's (when a person played
    it) to now, when the bot's card is stored."""
    person_played_at = (
        Move.objects.filter(
            deal=deal,
            ply=ply - 1,
            deal__match__seats__number=F("seat"),
            deal__match__seats__user__is_bot=False,
        )
        .values_list("created_at", flat=True)
        .first()
    )
    if person_played_at is not None:
        waited = (timezone.now() - person_played_at).total_seconds()
        metrics.BOT_REPLY_SECONDS.labels(level).observe(waited)


def bot_moves_sweep(*, older_than: timedelta | None = None) -> int:
    """Re-queue bot replies that never came (a lost task, a broker that was down): one
    indexed query, oldest first and bounded (see games.clocks.services.bot_turns_sweep).
    Returns how many were queued."""
    seconds = None if older_than is None else older_than.total_seconds()
    return clocks.bot_turns_sweep(older_than=seconds)
