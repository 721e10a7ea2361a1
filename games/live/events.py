"""What a stream sends: its viewer's events, built from the match's snapshot.

Every event of a match stream carries the viewer's whole match detail at the version it
leads to, made by ``MatchSnapshot.detail_for`` (the same function as
``GET /api/v1/matches/{id}``), so a stream can never show a seat more than the REST
answer would. Besides it: the event's ``id`` (the match's position, the same for every
viewer), ``type`` and ``changes`` (what changed), ``etag`` (the ``ETag`` that GET would
answer for this detail) and, for a card played, ``move`` (the card, now public).

Positions. A match's version (``MatchSnapshot.version``: status, seats taken, deals
dealt, cards played in the last deal, rating changes, clock events) grows with every write, and
:func:`position` turns it into one integer that grows too: every committed change gets a
greater id. Every deal but the last has all 40 cards played, so the position counts
every card of the match.

Resume. Within the current deal every earlier version differs from the latest snapshot
by its cards and its clock (whose turn, the deadline): the cards can be cut back, the clock
cannot. So a stream rebuilds each event after an id of the current deal from the
snapshots the writes kept of those versions (the match's start and each move keep theirs:
games.matches.snapshots), found under the clock events there were then
(:func:`events_after`); every event sent is a state the match was in. When one is not kept
(evicted, expired, the cache down), or from further back (a client away since an earlier
deal, or several writes across a deal's end read at once), one event of type ``match``
carries the whole detail instead (or, on a live stream, one event from what it sent
last): never a gap, never a state made up.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from django.conf import settings
from django.db import close_old_connections, connection, connections, models
from rest_framework.utils.encoders import JSONEncoder

from accounts.models import User
from games.errors import MatchNotFoundError
from games.live.bus import get_bus, match_key
from games.matches import selectors, snapshots
from games.matches.selectors import MatchSnapshot
from games.models import MatchStatus

JSON = dict[str, Any]
T = TypeVar("T")

# The cards of a deal: every deal but the last has all of them played.
DEAL_CARDS = 40


class MatchStreamChange(models.TextChoices):
    """What a match stream's event says changed (its ``changes``), the weightiest first:
    the event's ``type`` is the first of these it carries. The one list of them: the
    schema's enums are made of it (games.live.serializers), so a change the streams can
    tell is a change the schema names."""

    MATCH_ABORTED = "match_aborted", "The match was called off"
    RATING_CHANGED = "rating_changed", "The players' ratings moved"
    MATCH_FINISHED = "match_finished", "The match is over"
    DEAL_FINISHED = "deal_finished", "A deal's last card was played"
    MATCH_STARTED = "match_started", "Every seat was taken: the first deal began"
    DEAL_STARTED = "deal_started", "A deal began"
    SEAT_JOINED = "seat_joined", "A seat was taken"
    CARD_PLAYED = "card_played", "A card was played"
    MATCH_EVENT = "match_event", "A clock event: a timeout, a seat left or given back, ..."
    # Last, never picked over a change: the type (and only change) of an event that carries
    # the detail from scratch (a stream's first event, a resumption from an earlier deal).
    MATCH = "match", "The whole match detail, from scratch"


def position(version: tuple[Any, ...]) -> int:
    """The match's position at ``version``: grows with every committed change."""
    status, joined, deals, moves, ratings, events = version
    cards = (DEAL_CARDS + 1) * (deals - 1) + 1 + moves if deals else 0
    ended = status in (MatchStatus.FINISHED, MatchStatus.ABORTED)
    # A clock event counts twice: a seat left (one event) also takes one from the seats
    # joined, and the position must still grow with it.
    return int(joined) + cards + int(ended) + int(ratings > 0) + 2 * int(events)


def changes_between(old: tuple[Any, ...], new: tuple[Any, ...]) -> list[str]:
    """What changed from version ``old`` to ``new``, in the order it happened."""
    s0, j0, d0, m0, r0, e0 = old
    s1, j1, d1, m1, r1, e1 = new
    change = MatchStreamChange
    out: list[str] = []
    if e1 > e0:  # a clock event: a timeout, a seat taken or given back, a decline, ...
        out.append(change.MATCH_EVENT)
    if j1 > j0:
        out.append(change.SEAT_JOINED)
    if s0 == MatchStatus.WAITING and s1 != MatchStatus.WAITING and d1:
        out.append(change.MATCH_STARTED)
    if d1 > d0 and d0:  # the card that ended a deal, and the next deal
        out += [change.CARD_PLAYED, change.DEAL_FINISHED]
    if d1 > d0:
        out.append(change.DEAL_STARTED)
    elif m1 > m0:
        out.append(change.CARD_PLAYED)
    if s1 == MatchStatus.FINISHED and s0 != MatchStatus.FINISHED:
        if d1 == d0 and m1 == DEAL_CARDS and m0 < DEAL_CARDS:
            out.append(change.DEAL_FINISHED)
        out.append(change.MATCH_FINISHED)
    if s1 == MatchStatus.ABORTED and s0 != MatchStatus.ABORTED:
        out.append(change.MATCH_ABORTED)
    if r1 > r0:
        out.append(change.RATING_CHANGED)
    return out


def _main_type(changes: list[str]) -> str:
    return next((kind for kind in MatchStreamChange if kind in changes), MatchStreamChange.MATCH)


def is_settled(snapshot: MatchSnapshot) -> bool:
    """Nothing more will happen to the match (a stream of it may end)."""
    if snapshot.status == MatchStatus.ABORTED:
        return True
    if snapshot.status != MatchStatus.FINISHED:
        return False
    return not snapshot.summary.get("rated") or bool(snapshot.rating_changes)


# -- one event ------------------------------------------------------------------------------


def match_event(
    snapshot: MatchSnapshot,
    user: User,
    *,
    before: MatchSnapshot | None = None,
    before_version: tuple[Any, ...] | None = None,
) -> JSON:
    """``user``'s event for the match reaching ``snapshot`` from ``before`` (or from
    ``before_version``); with neither, a ``match`` event: the whole detail, from scratch.
    Raises MatchPrivateError when ``user`` may no longer see the match."""
    detail = snapshot.detail_for(user)
    old = before.version if before is not None else before_version
    changes = [MatchStreamChange.MATCH] if old is None else changes_between(old, snapshot.version)
    event: JSON = {
        "id": position(snapshot.version),
        "type": _main_type(changes),
        "changes": changes,
        "match": snapshot.match_id,
        "etag": selectors.match_detail_etag(
            pk=snapshot.match_id, version=snapshot.version, user=user
        ),
    }
    if before is not None and MatchStreamChange.CARD_PLAYED in changes:
        move = _move(before, snapshot)
        if move is not None:
            event["move"] = move
    event["detail"] = detail
    return event


def _move(before: MatchSnapshot, after: MatchSnapshot) -> JSON | None:
    """The card played from ``before`` to ``after`` (one card): public once played."""
    old, new = before.current, after.current
    if old is None or new is None:
        return None
    state = old.replayed()
    if state.turn is None:
        return None
    seat, ply = state.turn, state.ply
    if new.summary["id"] == old.summary["id"]:
        if len(new.moves) != len(old.moves) + 1:
            return None
        card = new.moves[-1]
    elif state.ply == DEAL_CARDS - 1 and len(state.hands[seat]) == 1:
        card = state.hands[seat][0].code  # the deal's last card: the only one left
    else:
        return None
    return {"deal": old.summary["id"], "ply": ply, "seat": seat, "card": card}


def _at_moves(
    snapshot: MatchSnapshot, moves: int, seen: MatchSnapshot | None = None
) -> MatchSnapshot | None:
    """``snapshot`` as it was when its (active) current deal had seen ``moves`` cards:
    ``snapshot`` itself for all its cards; ``seen`` (what the stream sent last, read at its
    version) when it is of that version; the snapshot the move kept of that version when
    the cache still has it (exact, its clock included: whose turn, the deadline); else
    None: not known. (``snapshot`` with its cards cut back would show the cards of then
    with the clock of now, ``to_move`` and the deadline, a state the match was never in.)
    The first two ask the cache nothing: a live stream's next event, built on the event
    loop for every viewer, never waits for Redis."""
    current = snapshot.current
    assert current is not None
    if moves == len(current.moves):
        return snapshot
    cut = replace(snapshot, current=replace(current, moves=current.moves[:moves]))
    if seen is not None and seen.version == cut.version and seen.match_id == cut.match_id:
        return seen
    return snapshots.snapshot_get(cut.match_id, cut.version)


def events_after(
    after: int | None, snapshot: MatchSnapshot, user: User, seen: MatchSnapshot | None = None
) -> list[JSON]:
    """``user``'s events after id ``after`` up to ``snapshot`` (``seen``: the snapshot the
    stream sent last, when it has it). See the module's docstring."""
    if after is None:
        return [match_event(snapshot, user)]
    now = position(snapshot.version)
    if now <= after:
        return []
    if snapshot.rating_changes and now - 1 > after:
        # The rating came after the match's end: first the end, then the rating.
        unrated = replace(snapshot, rating_changes=[])
        events = events_after(after, unrated, user, seen)
        return [*events, match_event(snapshot, user, before=unrated)]
    current = snapshot.current
    # Rebuilt exactly from one snapshot only while cards are all that changed: a match
    # with clock events (issue 14) resumes from the stream's last snapshot, or in full.
    if (
        snapshot.status == MatchStatus.ACTIVE
        and current is not None
        and not current.abandoned
        and not snapshot.events
    ):
        base = now - len(current.moves)  # the position of this deal's start
        first = after - base
        if 0 <= first < len(current.moves):
            steps = [_at_moves(snapshot, k, seen) for k in range(first, len(current.moves) + 1)]
            if all(steps):
                exact = [step for step in steps if step is not None]
                return [
                    match_event(b, user, before=a) for a, b in zip(exact, exact[1:], strict=False)
                ]
        start = _at_moves(snapshot, 0) if first == -2 and len(snapshot.deals) > 1 else None
        if start is not None:  # from the last card of the deal before
            previous = (
                snapshot.status,
                seen.version[1] if seen else len(snapshot.seats),
                len(snapshot.deals) - 1,
                DEAL_CARDS - 1,
                0,
                0,
            )
            if seen is not None and seen.version == previous:
                events = [match_event(start, user, before=seen)]
            else:
                events = [match_event(start, user, before_version=previous)]
            return events + events_after(base, snapshot, user)
    if seen is not None and position(seen.version) == after:
        steps = _steps_from(seen, snapshot)
        return [match_event(b, user, before=a) for a, b in zip(steps, steps[1:], strict=False)]
    return [match_event(snapshot, user)]


STEPS_EVENTS_MAX = 8
"""A stream rebuilds the steps between two snapshots one card at a time only when at
most this many clock events happened between them (each card's state is looked up under
each count of events it may have been made at)."""


def _steps_from(seen: MatchSnapshot, snapshot: MatchSnapshot) -> list[MatchSnapshot]:
    """``seen``, the versions between, and ``snapshot``: every card played in ``seen``'s
    deal since, while it was being played, as when the match ended with two cards read at
    once, or a timeout and the timeout bot's card came together. Each step between is the
    snapshot the move that made it kept (:mod:`games.matches.snapshots`), found under the
    number of clock events there were then; every step sent is a state the match was in,
    and its ``etag`` the one a GET answered then. (Made from ``seen`` with more cards, a
    step of a timed match showed the old deadline and ``to_move`` with the new cards, and
    a timeout one card late.) Just the two when a step is not kept (evicted, the cache
    down) or the deals differ: one event then carries every change."""
    old, new = seen.current, snapshot.current
    if (
        seen.status != MatchStatus.ACTIVE
        or old is None
        or new is None
        or old.abandoned
        or new.summary["id"] != old.summary["id"]
        or new.moves[: len(old.moves)] != old.moves
        or not 0 <= snapshot.events - seen.events <= STEPS_EVENTS_MAX
    ):
        return [seen, snapshot]
    between = []
    events = seen.events
    for k in range(len(old.moves) + 1, len(new.moves)):
        cut = replace(seen, current=replace(old, moves=new.moves[:k]))
        found = None
        for count in range(events, snapshot.events + 1):
            found = snapshots.snapshot_get(seen.match_id, replace(cut, events=count).version)
            if found is not None:
                events = count
                break
        if found is None:
            return [seen, snapshot]
        between.append(found)
    return [seen, *between, snapshot]


# -- reading matches off the event loop -----------------------------------------------------

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _db_job(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """A unit of database work in a stream thread, as a request would do it; its
    connection kept for the next (``LIVE_DB_KEEP_CONNECTIONS``), else closed."""
    keep = settings.LIVE_DB_KEEP_CONNECTIONS
    if keep:
        _drop_broken_connections()
    else:
        close_old_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        if keep:
            _drop_broken_connections()
        else:
            connections.close_all()


def _drop_broken_connections() -> None:
    """Close this thread's connections that an error left unusable; keep the others, for
    as long as the thread lives, whatever ``DATABASE_CONN_MAX_AGE`` says. That setting
    is 0 when served by ASGI, where every request has a thread (and so a connection) of
    its own; these few threads (``LIVE_DB_THREADS``) read for every stream of the
    process instead, and a new connection for each read cost more than the read (an
    event's p99 at 50 subscribers, bench/streams.py)."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        conn.close_at = None  # not by age: only when broken (below)
        conn.close_if_unusable_or_obsolete()


def _db_executor() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=settings.LIVE_DB_THREADS, thread_name_prefix="live-db"
            )
        return _executor


async def run_db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn`` in one of the few threads that read the database for every stream of
    this process (``LIVE_DB_THREADS``): a stream holds no thread and no connection while
    it waits."""
    loop = asyncio.get_running_loop()
    job = functools.partial(_db_job, fn, args, kwargs)
    return await loop.run_in_executor(_db_executor(), job)


def call_db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn`` run in those same threads, waited for: what a request does before its stream
    starts. Served by ASGI, every request runs in a thread of its own, and with it a
    connection of its own: thousands of clients opening streams at once would open as
    many connections (PostgreSQL refuses past ``max_connections``). Through these threads
    at most ``LIVE_DB_THREADS`` are used. Inside a transaction (the tests' own) ``fn``
    runs here, in it."""
    if connection.in_atomic_block:
        return fn(*args, **kwargs)
    return _db_executor().submit(_db_job, fn, args, kwargs).result()


def read_snapshot(match_id: Any) -> MatchSnapshot | None:
    """The match's snapshot as it is now (None: there is no such match): its version,
    then the snapshot a write kept of it, else one read from the rows, all of one moment
    (:func:`selectors.rows_of_one_moment`)."""
    with selectors.rows_of_one_moment():
        return _read_snapshot(match_id)


def _read_snapshot(match_id: Any) -> MatchSnapshot | None:
    found = selectors.match_version(match_id=match_id)
    if found is None:
        return None
    pk, version = found
    kept = snapshots.snapshot_get(pk, version)
    if kept is not None:
        return kept
    try:
        match = selectors.match_get(match_id=pk)
    except MatchNotFoundError:
        return None
    return selectors.match_snapshot(match=match)


class MatchReader:
    """The latest snapshot of each watched match in this process, read once per change
    however many streams watch it: a read is fresh for every change the bus delivered
    before it began (``Bus.generation``)."""

    SIZE = 4096

    def __init__(self) -> None:
        self._memo: OrderedDict[str, tuple[int, float, MatchSnapshot | None]] = OrderedDict()
        self._locks: dict[tuple[int, str], asyncio.Lock] = {}

    async def latest(self, match_id: str, *, max_age: float | None = None) -> MatchSnapshot | None:
        bus = get_bus()
        key = match_key(match_id)
        found = self._fresh(match_id, bus.generation(key), max_age)
        if found is not None:
            return found[0]
        lock_key = (id(asyncio.get_running_loop()), match_id)
        lock = self._locks.setdefault(lock_key, asyncio.Lock())
        try:
            async with lock:
                found = self._fresh(match_id, bus.generation(key), max_age)
                if found is not None:
                    return found[0]
                stamp = bus.generation(key)
                snapshot = await run_db(read_snapshot, match_id)
                self._memo[match_id] = (stamp, time.monotonic(), snapshot)
                self._memo.move_to_end(match_id)
                while len(self._memo) > self.SIZE:
                    self._memo.popitem(last=False)
                return snapshot
        finally:
            if not lock.locked() and not lock._waiters:  # type: ignore[attr-defined]
                self._locks.pop(lock_key, None)

    def clear(self) -> None:
        self._memo.clear()

    def _fresh(
        self, match_id: str, generation: int, max_age: float | None
    ) -> tuple[MatchSnapshot | None] | None:
        memo = self._memo.get(match_id)
        if memo is None or memo[0] < generation:
            return None
        if max_age is not None and time.monotonic() - memo[1] > max_age:
            return None
        return (memo[2],)


reader = MatchReader()


# -- the wire formats ---------------------------------------------------------------------


def encode(data: Any) -> str:
    """JSON as the REST answers write it (DRF's encoder: the same dates, ids, decimals)."""
    return json.dumps(data, cls=JSONEncoder, ensure_ascii=False, separators=(",", ":"))


class Wire:
    """How events are written on a stream: SSE or NDJSON."""

    media_type = ""

    def event(self, event: JSON) -> bytes:
        raise NotImplementedError

    def heartbeat(self) -> bytes:
        raise NotImplementedError

    def opening(self) -> bytes:
        return b""


class SSE(Wire):
    """Server-Sent Events: ``id``, ``event`` (the type) and ``data`` (the JSON object)."""

    media_type = "text/event-stream"

    def event(self, event: JSON) -> bytes:
        return f"id: {event['id']}\nevent: {event['type']}\ndata: {encode(event)}\n\n".encode()

    def heartbeat(self) -> bytes:
        return b": keep-alive\n\n"

    def opening(self) -> bytes:
        # EventSource waits this long (ms) before it reconnects, with Last-Event-ID.
        return f"retry: {settings.LIVE_RETRY_MS}\n\n".encode()


class NDJSON(Wire):
    """One JSON object per line (what Lichess clients read); an empty line keeps alive."""

    media_type = "application/x-ndjson"

    def event(self, event: JSON) -> bytes:
        return (encode(event) + "\n").encode()

    def heartbeat(self) -> bytes:
        return b"\n"


WIRES: dict[str, Wire] = {SSE.media_type: SSE(), NDJSON.media_type: NDJSON()}
