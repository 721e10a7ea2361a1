"""The streams themselves: async generators that wait on the bus and write events.

A stream holds no thread and no database connection while it waits: it waits on its
doorbell (games.live.bus) with a heartbeat timeout, and reads through the few threads
of ``events.run_db``. Every wake-up re-reads the match (once per change per process:
``events.reader``), so a lost or late message costs latency, never an event; a
heartbeat also re-reads (at most once per heartbeat per match and process), so even a
message that never came is made good within ``LIVE_HEARTBEAT_SECONDS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib import import_module
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth import get_user
from django.db import models
from django.utils import timezone

from accounts.models import User
from briscola_service import metrics, queueing
from games.clocks.selectors import instant
from games.errors import MatchPrivateError, StreamsFullError, TooManyStreamsError
from games.live.bus import Doorbell, get_bus, match_key, user_key
from games.live.events import (
    JSON,
    Wire,
    events_after,
    is_settled,
    position,
    read_snapshot,
    reader,
    run_db,
)
from games.matches.selectors import MatchSnapshot
from games.models import MatchStatus, Seat

logger = logging.getLogger(__name__)

# The types of event of the streams besides a match stream's changes (events.MatchStreamChange)
# and an account stream's (AccountStreamChange below): the schema's enums are made of these.
ACCOUNT = "account"
STREAM_CLOSED = "stream_closed"


class StreamClosedReason(models.TextChoices):
    """Why the server ended a stream (its last event, ``stream_closed``)."""

    MATCH_PRIVATE = "match_private", "You may no longer see the match"
    MATCH_NOT_FOUND = "match_not_found", "The match is gone"
    TOKEN_REVOKED = "token_revoked", "The token the stream was opened with was revoked"
    SIGNED_OUT = "signed_out", "The session signed out, or the password changed"


K = TypeVar("K")


# -- the caps --------------------------------------------------------------------------------


class Slots:
    """Open streams in this process: at most ``LIVE_MAX_STREAMS_PER_ACCOUNT`` per account,
    ``LIVE_MAX_STREAMS_PER_ADDRESS`` per client address and ``LIVE_MAX_STREAMS`` in all.

    Per address too: each stream costs the process an event built for it at every change
    of its match, so one client with many accounts (an outside audit: 150 streams from one
    address, 25 each of 6 accounts, on a match it played against bots as fast as it could)
    slowed every other request (another client's median 14 ms to 101 ms; 354 ms when its
    streams never read)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, int] = {}
        self._by_address: dict[str, int] = {}
        self._total = 0

    def take(self, user_id: int, address: str = "") -> Slot:
        """A slot for one more stream of ``user_id`` from ``address``; TooManyStreamsError
        (429) over the account's or the address's cap, StreamsFullError (503) over the
        process's."""
        per_account = settings.LIVE_MAX_STREAMS_PER_ACCOUNT
        per_address = settings.LIVE_MAX_STREAMS_PER_ADDRESS
        in_all = settings.LIVE_MAX_STREAMS
        with self._lock:
            if self._open.get(user_id, 0) >= per_account:
                raise TooManyStreamsError(details=_refusal(limit=per_account, per="account"))
            if self._by_address.get(address, 0) >= per_address:
                raise TooManyStreamsError(
                    "Too many open streams from this address: close one first.",
                    details=_refusal(limit=per_address, per="address"),
                )
            if self._total >= in_all:
                raise StreamsFullError(details=_refusal())
            self._open[user_id] = self._open.get(user_id, 0) + 1
            self._by_address[address] = self._by_address.get(address, 0) + 1
            self._total += 1
        metrics.OPEN_STREAMS.inc()
        return Slot(self, user_id, address)

    def _give_back(self, user_id: int, address: str) -> None:
        metrics.OPEN_STREAMS.dec()
        with self._lock:
            self._total -= 1
            _count_down(self._open, user_id)
            _count_down(self._by_address, address)

    def open_for(self, user_id: int) -> int:
        with self._lock:
            return self._open.get(user_id, 0)

    def open_in_all(self) -> int:
        with self._lock:
            return self._total


def _count_down(counts: dict[K, int], key: K) -> None:
    left = counts.get(key, 0) - 1
    if left > 0:
        counts[key] = left
    else:
        counts.pop(key, None)


def _refusal(**details: Any) -> dict[str, Any]:
    return {**details, "retry_after": int(settings.LIVE_STREAMS_RETRY_AFTER)}


@dataclass
class Slot:
    slots: Slots
    user_id: int
    address: str = ""
    released: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def release(self) -> None:
        """Give the slot back (once, whoever calls: the stream's end or the response's)."""
        with self._lock:
            if self.released:
                return
            self.released = True
        self.slots._give_back(self.user_id, self.address)


slots = Slots()


@dataclass(frozen=True)
class Credential:
    """What a stream was opened with: the account's token (``token``, by key), one of its
    personal access tokens (``access_token``, by id) or a browser's session
    (``session``, by key)."""

    kind: str
    key: str

    @property
    def closing_reason(self) -> str:
        """Why a stream opened with it ends once it no longer signs in: one of
        ``CREDENTIAL_REASONS``."""
        if self.kind == "session":
            return StreamClosedReason.SIGNED_OUT
        return StreamClosedReason.TOKEN_REVOKED


# Why a stream ends for its credentials (Credential.closing_reason): the only reasons an
# account stream ends with (a match it watches that is gone or private is let go quietly).
CREDENTIAL_REASONS = (StreamClosedReason.TOKEN_REVOKED, StreamClosedReason.SIGNED_OUT)


class _SessionRequest:
    """The one attribute :func:`django.contrib.auth.get_user` reads of a request."""

    def __init__(self, session: Any) -> None:
        self.session = session


def credential_alive(user_id: int, credential: Credential) -> bool:
    """Whether ``credential`` still signs ``user_id`` in, as the next request would find:
    the token not revoked, the session not signed out nor outdated by a new password, the
    account still active (and a person's)."""
    if credential.kind == "session":
        store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=credential.key)
        return bool(get_user(_SessionRequest(store)).pk == user_id)  # type: ignore[arg-type]
    found = User.objects.filter(pk=user_id, is_active=True, is_bot=False)
    if credential.kind == "token":
        return found.filter(auth_token__key=credential.key).exists()
    return found.filter(access_tokens__pk=int(credential.key)).exists()


def closing_event(last: int | None, reason: str) -> JSON:
    """The last event of a stream the server ends: why (a ``StreamClosedReason``)."""
    return {"id": last or 0, "type": STREAM_CLOSED, "reason": reason}


def _sweep_deadlines() -> None:
    from games.clocks.services import sweep_in_process  # games.clocks imports games.live

    try:
        sweep_in_process()
    except Exception:  # the next slice tries again, as the next request would
        logger.exception("the in-process clocks sweep failed")


def sweep_due(snapshot: MatchSnapshot) -> datetime | None:
    """When the server itself owes the watched match a change, if it does: its deadline or
    its expiry passes, or a bot to play has not for ``BOT_SWEEP_AFTER_SECONDS`` (a reply
    lost). None: only a player can change it now."""
    summary = snapshot.summary
    due = [instant(summary.get("deadline")), instant(summary.get("expires_at"))]
    to_move = summary.get("to_move")
    seats = summary.get("seats") or []
    if to_move is not None and 0 <= to_move < len(seats):
        seat = seats[to_move]
        last = instant(summary.get("last_move_at") or summary.get("started_at"))
        if last is not None and (seat.get("is_bot") or seat.get("away") or seat.get("bot_holds")):
            due.append(last + timedelta(seconds=settings.BOT_SWEEP_AFTER_SECONDS))
    return min((d for d in due if d is not None), default=None)


async def wait_for_change(bell: Doorbell, due: datetime | None = None) -> list[dict[str, Any]]:
    """The next messages rung for a stream, or [] after ``LIVE_HEARTBEAT_SECONDS`` of
    silence (time for a heartbeat).

    Without a broker (``make run``) no beat enforces the clocks or re-plays a lost bot
    reply: requests do it on their way in (games.clocks.middleware), and a player who only
    watches a stream sends none. So there a match's stream whose match is ``due`` (see
    :func:`sweep_due`) runs that sweep itself from then on, every
    ``CLOCK_IN_PROCESS_SWEEP_SECONDS`` (at most once a period in the process, however many
    streams wait), and the change it makes rings the bell like any other. Until then, and
    for a match nothing is due for, it waits without touching the database."""
    heartbeat = settings.LIVE_HEARTBEAT_SECONDS
    if due is None or not queueing.tasks_run_in_process():
        return await bell.wait(heartbeat)
    step = max(0.05, settings.CLOCK_IN_PROCESS_SWEEP_SECONDS)
    until = time.monotonic() + heartbeat
    while True:
        left = until - time.monotonic()
        wait = max(0.0, (due - timezone.now()).total_seconds())
        messages = await bell.wait(max(0.0, min(max(step, wait), left)))
        if messages or left <= step:
            return messages
        if timezone.now() >= due:
            await run_db(_sweep_deadlines)


@dataclass
class Viewer:
    user: User
    credential: Credential


CREDENTIALS_CHANGED = ("credentials", "token_revoked")
"""The reasons of the bus messages that send a stream to look at its credentials again
("token_revoked": what servers before "credentials" published)."""


class CredentialWatch:
    """Ends a stream once what it was opened with no longer signs its viewer in: looked
    at when the account's credentials change (a bus message), and at least every
    ``LIVE_CREDENTIALS_SECONDS`` of heartbeats besides, so that a lost message costs
    that long at most."""

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.checked = time.monotonic()

    async def revoked(self, messages: list[dict[str, Any]]) -> bool:
        due = time.monotonic() - self.checked >= settings.LIVE_CREDENTIALS_SECONDS
        if not due and not any(m.get("reason") in CREDENTIALS_CHANGED for m in messages):
            return False
        self.checked = time.monotonic()
        return not await run_db(credential_alive, self.viewer.user.pk, self.viewer.credential)


# -- a match's stream ------------------------------------------------------------------------


async def match_stream(
    *,
    wire: Wire,
    viewer: Viewer,
    match_id: str,
    first: list[JSON],
    seen: MatchSnapshot,
    last: int,
    slot: Slot,
) -> AsyncIterator[bytes]:
    """``first`` (what the request computed before the stream started), then one event per
    change of the match until it is settled or the client leaves."""
    bus = get_bus()
    bell = Doorbell([match_key(match_id), user_key(viewer.user.pk)])
    watch = CredentialWatch(viewer)
    bus.subscribe(bell)
    try:
        yield wire.opening()
        for event in first:
            yield wire.event(event)
        if is_settled(seen):
            return
        max_age: float | None = None  # re-read at once: a change may have come before subscribing
        while True:
            snapshot = await reader.latest(match_id, max_age=max_age)
            if snapshot is None:
                yield wire.event(closing_event(last, StreamClosedReason.MATCH_NOT_FOUND))
                return
            try:
                events = events_after(last, snapshot, viewer.user, seen)
            except MatchPrivateError:
                yield wire.event(closing_event(last, StreamClosedReason.MATCH_PRIVATE))
                return
            for event in events:
                yield wire.event(event)
            if events:
                last, seen = events[-1]["id"], snapshot
            if is_settled(snapshot):
                return
            messages = await wait_for_change(bell, sweep_due(snapshot))
            if await watch.revoked(messages):
                yield wire.event(closing_event(last, viewer.credential.closing_reason))
                return
            if not messages:
                yield wire.heartbeat()
                max_age = settings.LIVE_HEARTBEAT_SECONDS
                continue
            max_age = None
    finally:
        bus.unsubscribe(bell)
        slot.release()


def match_stream_start(
    match_id: Any, after: int | None, user: User
) -> tuple[MatchSnapshot, list[JSON]]:
    """Before a match stream starts (in the request): the match as it is (404 when there is
    none), the events owed after ``after`` (403 when ``user`` may not see the match; 400
    when ``after`` is past the match's latest id)."""
    from games.errors import InvalidEventIdError, MatchNotFoundError

    snapshot = read_snapshot(match_id)
    if snapshot is None:
        raise MatchNotFoundError()
    snapshot.detail_for(user)  # MatchPrivateError before anything else
    if after is not None and after > position(snapshot.version):
        raise InvalidEventIdError(details={"latest": position(snapshot.version)})
    return snapshot, events_after(after, snapshot, user)


# -- an account's stream ---------------------------------------------------------------------


def _watched_matches(user: User) -> list[str]:
    """The matches an account stream watches at first: those where ``user`` has a seat
    (taken or reserved) that are waiting or being played."""
    ids = Seat.objects.filter(
        user=user, match__status__in=[MatchStatus.WAITING, MatchStatus.ACTIVE]
    ).values_list("match_id", flat=True)
    return [str(i) for i in ids]


def account_item(snapshot: MatchSnapshot, user: User) -> JSON:
    """One of ``user``'s matches as the account stream tells it: whose turn, what state.
    Nothing that ``user``'s match detail would not show."""
    seat = snapshot.joined_seat_of(user.pk)
    invited = seat is None and any(uid == user.pk for _, uid, _ in snapshot.seats)
    current = snapshot.current
    turn = None
    if snapshot.status == MatchStatus.ACTIVE and current is not None and not current.abandoned:
        turn = current.replayed().turn
    return {
        "match": snapshot.match_id,
        "status": snapshot.status,
        "players": snapshot.summary["players"],
        "rated": snapshot.summary["rated"],
        "your_seat": seat,
        "invited": invited,
        "your_turn": seat is not None and turn == seat,
        "deal": current.summary["id"] if current else None,
        "ply": len(current.moves) if current else None,
        "winner": snapshot.summary["winner"],
        "rating_changes": [c for c in snapshot.rating_changes if c.get("seat") == seat],
    }


class AccountStreamChange(models.TextChoices):
    """What an account stream tells of one of its matches (an event's ``type``)."""

    INVITATION_RECEIVED = "invitation_received", "You were invited to a match"
    MATCH_STARTED = "match_started", "Every seat was taken"
    YOUR_TURN = "your_turn", "Your seat is to play"
    MATCH_FINISHED = "match_finished", "The match is over, or was called off"
    RATING_CHANGED = "rating_changed", "Your rating moved"


def account_changes(old: JSON | None, new: JSON) -> list[str]:
    """What an account is told when one of its matches went from ``old`` to ``new``."""
    change = AccountStreamChange
    out: list[str] = []
    if old is None and new["invited"]:
        out.append(change.INVITATION_RECEIVED)
    was_waiting = old is None or old["status"] == MatchStatus.WAITING
    if was_waiting and new["status"] == MatchStatus.ACTIVE:
        out.append(change.MATCH_STARTED)
    if new["your_turn"] and (
        old is None
        or not old["your_turn"]
        or (old["deal"], old["ply"]) != (new["deal"], new["ply"])
    ):
        out.append(change.YOUR_TURN)
    ended = (MatchStatus.FINISHED, MatchStatus.ABORTED)
    if new["status"] in ended and (old is None or old["status"] not in ended):
        out.append(change.MATCH_FINISHED)
    if new["rating_changes"] and (old is None or not old["rating_changes"]):
        out.append(change.RATING_CHANGED)
    return out


def _account_settled(item: JSON) -> bool:
    if item["status"] == MatchStatus.ABORTED:
        return True
    return item["status"] == MatchStatus.FINISHED and (
        not item["rated"] or item["your_seat"] is None or bool(item["rating_changes"])
    )


class _Ids:
    """An account stream's ids: milliseconds since the epoch, strictly increasing."""

    def __init__(self) -> None:
        self.last = 0

    def next(self) -> int:
        self.last = max(self.last + 1, int(time.time() * 1000))
        return self.last


def account_start(user: User) -> tuple[list[str], dict[str, JSON]]:
    ids = _watched_matches(user)
    items = {}
    for match_id in ids:
        snapshot = read_snapshot(match_id)
        if snapshot is not None and _may_see(snapshot, user):
            items[match_id] = account_item(snapshot, user)
    return ids, items


def _may_see(snapshot: MatchSnapshot, user: User) -> bool:
    try:
        snapshot.detail_for(user)
    except MatchPrivateError:
        return False
    return True


async def account_stream(
    *, wire: Wire, viewer: Viewer, watched: list[str], items: dict[str, JSON], slot: Slot
) -> AsyncIterator[bytes]:
    """An ``account`` event (every match of the account being played or waiting), then one
    event per change that concerns the account."""
    bus = get_bus()
    user = viewer.user
    ids = _Ids()
    bell = Doorbell([user_key(user.pk), *(match_key(m) for m in watched)])
    watch = CredentialWatch(viewer)
    bus.subscribe(bell)
    try:
        yield wire.opening()
        yield wire.event({"id": ids.next(), "type": ACCOUNT, "matches": list(items.values())})
        watching = set(watched)
        max_age: float | None = None
        while True:
            for match_id in sorted(watching):
                snapshot = await reader.latest(match_id, max_age=max_age)
                if snapshot is None or not _may_see(snapshot, user):
                    watching.discard(match_id)
                    items.pop(match_id, None)
                    continue
                item = account_item(snapshot, user)
                for change in account_changes(items.get(match_id), item):
                    yield wire.event({"id": ids.next(), "type": change, **item})
                items[match_id] = item
                if _account_settled(item):
                    watching.discard(match_id)
            messages = await wait_for_change(bell)
            if await watch.revoked(messages):
                yield wire.event(closing_event(ids.next(), viewer.credential.closing_reason))
                return
            if not messages:
                yield wire.heartbeat()
                max_age = settings.LIVE_HEARTBEAT_SECONDS
                continue
            max_age = None
            named = {str(m["match"]) for m in messages if m.get("match")}
            new = named - watching
            if new:
                watching |= new
                bus.add_keys(bell, [match_key(m) for m in new])
    finally:
        bus.unsubscribe(bell)
        slot.release()
