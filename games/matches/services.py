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

from accounts.models import User
from accounts.services import bot_account_ensure
from briscola_service import metrics, queueing
from games import rules
from games.bots import choose_card
from games.errors import (
    AlreadySeatedError,
    ExhibitionAdminsOnlyError,
    InvalidMatchError,
    MatchNotJoinableError,
    MatchNotStartedError,
    MatchOverError,
    NotAPlayerError,
    NotMatchCreatorError,
    SeatUnavailableError,
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
from games.rated_games import match_rating_queue_on_commit

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SeatSpec:
    """Who takes a seat at creation: a bot of some level, an invited user, or nobody yet."""

    kind: Literal["bot", "user", "open"]
    value: str = ""


def _lock_match(match_id: object) -> Match:
    return match_get(match_id=match_id, for_update=True)


def match_create(
    *,
    creator: User,
    players: int,
    format: str,
    seats: Sequence[SeatSpec],
    public: bool = False,
    rated: bool = False,
    partners_last_hand: bool = True,
) -> Match:
    """Create a match with ``creator`` in seat 0; it starts once every seat is taken.

    ``seats`` lists seats 1 onwards. Listing every seat (seat 0 included), all bots,
    makes an exhibition: administrators only, the creator sits nowhere, and the bots
    play the whole match through the bot-reply chain.
    """
    if players not in rules.PLAYER_COUNTS:
        raise InvalidMatchError("A match has 2 or 4 players.", details={"players": players})
    if format not in rules.FORMATS:
        raise InvalidMatchError(
            f"Unknown format; one of {', '.join(rules.FORMATS)}.", details={"format": format}
        )
    exhibition = len(seats) == players
    if exhibition:
        if any(spec.kind != "bot" for spec in seats):
            raise InvalidMatchError(
                f"Listing all {players} seats makes an exhibition, and every seat of an "
                'exhibition is a bot ({"bot": level}); otherwise list seats 1 onwards.',
                details={"seats": "an exhibition seats bots only"},
            )
        if not creator.is_staff:
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
                    details={"seat": number, "bot": spec.value},
                )
            bots_of_level[spec.value] = bots_of_level.get(spec.value, 0) + 1
            users.append(bot_account_ensure(level=spec.value, copy=bots_of_level[spec.value]))
        elif spec.kind == "user":
            name = spec.value.lower()
            user = User.objects.filter(username__iexact=spec.value, is_active=True).first()
            if user is None or user.is_bot:
                raise InvalidMatchError(
                    f"No player named {spec.value!r} (invite bots with {{'bot': level}}).",
                    details={"seat": number, "user": spec.value},
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
    with transaction.atomic():
        match = Match.objects.create(
            players=players,
            format=format,
            partners_last_hand=partners_last_hand,
            public=public,
            rated=rated,
            created_by=creator,
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
        _start_if_full(match)
    return match


def match_join(*, match_id: object, user: User, seat: int | None = None) -> Match:
    """Take an open seat (or the seat one was invited to). Locks the match."""
    with transaction.atomic():
        match = _lock_match(match_id)
        if match.status != MatchStatus.WAITING:
            raise MatchNotJoinableError()
        seats = list(match.seats.select_for_update().order_by("number"))
        if any(s.user_id == user.pk and s.joined_at is not None for s in seats):
            raise AlreadySeatedError()
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
    return match


def match_abort(*, match_id: object, user: User) -> Match:
    """The creator calls off a match that has not started."""
    with transaction.atomic():
        match = _lock_match(match_id)
        if match.created_by_id != user.pk and not user.is_staff:
            raise NotMatchCreatorError()
        if match.status != MatchStatus.WAITING:
            raise MatchNotJoinableError("Only a match still waiting for players can be aborted.")
        match.status = MatchStatus.ABORTED
        match.end_reason = EndReason.ABORTED
        match.finished_at = timezone.now()
        match.save(update_fields=["status", "end_reason", "finished_at"])
    return match


def _start_if_full(match: Match) -> None:
    if match.seats.filter(joined_at__isnull=True).exists():
        return
    match.status = MatchStatus.ACTIVE
    match.started_at = timezone.now()
    match.save(update_fields=["status", "started_at"])
    _deal_start(match, rules_match=None)


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
    return deal, state, _queue_bot_reply(deal, state)


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
    *, match_id: object, user: User, card: str, ply: int, deal_id: int | None = None
) -> MovePlayed:
    """Play ``card`` for ``user``'s seat at position ``ply``. Locks the match.

    Returns the match as the move left it (see :class:`MovePlayed`). Raises
    ``StalePlyError`` when the deal is no longer at ``ply`` (another move got there first)
    or, with ``deal_id``, no longer that deal; and the rules engine's errors for an
    illegal card.

    One path: once the match is locked and its version read, the move is checked
    (:func:`_move_checked`) against the match as it is at that version
    (:func:`_match_at`): the snapshot the last move kept of exactly that version, when
    the cache has it, or else one read from the rows. The card that ends a deal then
    writes the deal's result and what follows from the rows themselves.
    """
    parsed = rules.Card.from_code(card)
    try:
        with transaction.atomic():
            match, version = selectors.match_lock_versioned(match_id=match_id)
            at = _match_at(match, version)
            seat, state = _move_checked(match, at, user, parsed, ply, deal_id)
            played = _move_append(match, at, seat, state, parsed, ply)
            snapshots.snapshot_put_on_commit(played.snapshot)
    except IntegrityError as exc:
        # The unique (deal, ply) constraint: the last guard against a concurrent move.
        raise StalePlyError(details={"your_ply": ply}) from exc
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
) -> tuple[int, rules.Deal]:
    """The checks every move passes, in order. Returns the mover's seat and the current
    deal with the card played (nothing is written yet)."""
    seat = at.joined_seat_of(user.pk)
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
    state.play(card, seat=seat)
    return seat, state


def _move_append(
    match: Match,
    at: selectors.MatchSnapshot,
    seat: int,
    state: rules.Deal,
    card: rules.Card,
    ply: int,
) -> MovePlayed:
    """Append the checked move; queue the bot's reply, or end the deal."""
    current = at.current
    assert current is not None  # _move_checked refused a match without a current deal
    deal_id: int = current.summary["id"]
    Move.objects.create(deal_id=deal_id, ply=ply, seat=seat, card=card.code)
    if state.is_over:
        return _deal_end(match, state)
    bots = {s["seat"] for s in at.summary["seats"] if s["is_bot"]}
    queued = _queue_bot_reply_if(state.turn in bots, deal_id, state)
    snapshot = replace(at, current=replace(current, moves=(*current.moves, card.code)))
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
        raise StalePlyError(
            "That deal is over: the match has moved on to the next one.",
            details={"deal": current, "your_deal": deal_id},
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
        fields += ["status", "winner_team", "end_reason", "finished_at"]
    match.save(update_fields=fields)
    if counted.is_over:
        match_rating_queue_on_commit(match)
        return False
    following, first_state, queued = _deal_start(match, counted)
    deals.append(following)
    states[following.pk] = first_state
    return queued


def match_resign(*, match_id: object, user: User) -> Match:
    """``user``'s team gives up: the match ends at once and the other team wins it."""
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
        now = timezone.now()
        deal = _current_deal(match)
        state = deal_state(deal)
        deal.status = DealStatus.ABANDONED
        deal.points_team0, deal.points_team1 = state.points
        deal.finished_at = now
        deal.save(update_fields=["status", "points_team0", "points_team1", "finished_at"])
        match.status = MatchStatus.FINISHED
        match.winner_team = 1 - seat.team
        match.end_reason = EndReason.RESIGNED
        match.finished_at = now
        match.save(update_fields=["status", "winner_team", "end_reason", "finished_at"])
        match_rating_queue_on_commit(match)
    return match


# -- bots -------------------------------------------------------------------------------


def _queue_bot_reply(deal: Deal, state: rules.Deal, seats: list[Seat] | None = None) -> bool:
    """If a bot is to play next, queue its reply once this transaction commits (True)."""
    if state.turn is None:
        return False
    if seats is None:
        seats = list(deal.match.seats.select_related("user").order_by("number"))
    user = seats[state.turn].user
    return _queue_bot_reply_if(user is not None and user.is_bot, deal.pk, state)


def _queue_bot_reply_if(bot_to_play: bool, deal_id: int, state: rules.Deal) -> bool:
    if not bot_to_play or state.turn is None:
        return False
    ply = state.ply
    transaction.on_commit(lambda: bot_reply_enqueue(deal_id=deal_id, ply=ply))
    return True


# Bot replies waiting to run in this thread, while an in-process (eager) reply runs.
_in_process = threading.local()


def bot_reply_enqueue(*, deal_id: int, ply: int) -> bool:
    """Send the bot task; a broker failure is logged, not raised (the sweep retries).

    Without a broker (``task_always_eager``) the task runs here, in-process. Each bot
    move queues the next reply when it commits, so a table of bots would nest one reply
    inside the last until the stack overflows (an exhibition plays hundreds of moves);
    instead the outermost call runs the replies one after another, and the nested calls
    only hand theirs to it.
    """
    if not queueing.tasks_run_in_process():
        return _bot_reply_send(deal_id, ply)
    pending: deque[tuple[int, int]] | None = getattr(_in_process, "pending", None)
    if pending is not None:  # a reply is running further up this thread's stack
        pending.append((deal_id, ply))
        return True
    _in_process.pending = pending = deque([(deal_id, ply)])
    sent = True
    try:
        while pending:
            sent = _bot_reply_send(*pending.popleft()) and sent
    finally:
        del _in_process.pending
    return sent


def _bot_reply_send(deal_id: int, ply: int) -> bool:
    return queueing.task_send(
        "games.tasks.bot_play", deal_id, ply, what=f"bot reply for deal {deal_id} ply {ply}"
    )


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
    if bot is None or not bot.is_bot:
        return False
    view = rules.seat_view(state, state.turn, partners_last_hand=deal.match.partners_last_hand)
    thinking = time.perf_counter()
    card = choose_card(
        bot.bot_level, view, seed=f"{deal.pk}:{ply}", budget_ms=settings.BOT_THINK_MS
    )
    metrics.BOT_THINK_SECONDS.labels(bot.bot_level).observe(time.perf_counter() - thinking)
    try:
        move_play(match_id=deal.match_id, user=bot, card=card.code, ply=ply, deal_id=deal.pk)
    except (StalePlyError, MatchOverError, rules.IllegalMoveError):
        logger.info("bot %s: deal %s moved on from ply %s; its card dropped", bot, deal.pk, ply)
        return False
    logger.info("bot %s played deal %s ply %s", bot, deal.pk, ply)
    _bot_reply_observe(deal, ply, bot.bot_level)
    return True


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
    """Re-queue bot replies that never came (a lost task, a broker that was down).

    The pending work needs no table of its own: the move that made a bot's turn is
    committed, and the deal's replayed state says whose turn it is. So the sweep finds
    active deals whose seat to play is a bot and whose last move (or start) is older than
    ``older_than`` (default ``settings.BOT_SWEEP_AFTER_SECONDS``), and queues each once.
    Returns how many were queued.
    """
    if older_than is None:
        older_than = timedelta(seconds=settings.BOT_SWEEP_AFTER_SECONDS)
    cutoff = timezone.now() - older_than
    queued = 0
    deals = (
        Deal.objects.filter(
            status=DealStatus.ACTIVE,
            match__status=MatchStatus.ACTIVE,
            match__seats__user__is_bot=True,
        )
        .select_related("match")
        .distinct()
    )
    for deal in deals:
        last = deal.moves.order_by("-ply").values_list("created_at", flat=True).first()
        if (last or deal.started_at) > cutoff:
            continue
        state = deal_state(deal)
        if state.turn is None:
            continue
        seat = Seat.objects.select_related("user").get(match=deal.match, number=state.turn)
        if seat.user is not None and seat.user.is_bot:
            queued += bot_reply_enqueue(deal_id=deal.pk, ply=state.ply)
    return queued
