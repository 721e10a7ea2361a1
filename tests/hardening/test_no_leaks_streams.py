"""The no-leak audit of the live streams (issue 13): every event of every stream, for every
seat, a spectator and an anonymous visitor, through whole matches.

Each block a stream sends (an SSE event with its ``id``/``event`` lines, a comment, the
``retry`` line; an NDJSON line) is put before the one secrecy detector,
:mod:`leak_audit`, which audits the REST answers too (``test_no_leaks.py``): the same
search of JSON keys and values, raw text and headers, the same secrets and the same
finished-deal checks. A match stream's event is checked against the secrets at its id,
which is the match's position: ``Truth.at`` replays the move log to the deal and the
cards of that position (placing the match's clock events by their deal and ply, and
checking its model of positions against the service's), and the event's detail must be
the match at that position, and a card it names in ``move`` the move log's. An account
stream's events name matches, turns and results: any card code, or any piece of any
deal's seed, in one is a leak. Each stream's headers are checked when it opens; a
refused stream's error body like any response.

Three matches, played through the services (a random legal card each time, the random
generator seeded by the test's id), read in process through the ASGI path
(tests/live/streams.py), which needs committed data:

- a private, rated 2-player ``first_to_2`` between two people (two deals or more), with
  a signed-in stranger (403 before any stream) and an anonymous visitor (401);
- a public 4-player ``single`` deal, three people and a greedy bot, partners' last hand
  on, watched by a signed-in stranger (a spectator) and an anonymous visitor (401);
- a public 2-player ``single`` with a per-move clock and the timeout bot: two timeouts
  (the bot plays for the absent seat), then a resignation mid-deal; a rematch proposed
  after the end (an event of the finished match: its streams are opened again) and
  accepted, the seats rotated; in the rematch a timeout and a resignation again.

Every viewer who may keeps a match stream open in each format, and its account stream,
and all are read up to the match's latest id after every change, so each event is
checked as soon as it is built: for secrets, and against its component of the published
OpenAPI schema (tests/live/stream_schema.py), on which a client generated from it
relies. At each phase (each deal's first ply, plies 5, 20 and the one the stock runs
out, the deal's last ply, after a timeout, after the end) each viewer also opens resumed
streams (``?after=``: the previous id, three before, the deal's start, 0; SSE and
NDJSON) and reads what they owe.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from typing import Any
from unittest import mock

import pytest
from leak_audit import Audit, Truth, Viewer
from rest_framework.test import APIClient

from accounts.models import User
from games import rules
from games.clocks import services as clocks
from games.clocks.services import TimeControl
from games.matches import selectors
from games.matches.services import (
    SeatSpec,
    match_create,
    match_join,
    match_resign,
    move_play,
)
from games.models import Match, MatchStatus, OnTimeout
from tests.clocks.conftest import db_travel
from tests.live.stream_schema import event_schemas
from tests.live.streams import NDJSON, SSE, Stream, in_test_thread, match_position, open_stream, run

# Long: run beside the processes' tests (tests/lanes.py).
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("live"),
    pytest.mark.side_lane,
]


@pytest.fixture
def live(settings: Any) -> Iterator[Any]:
    """tests/live's fixture (an in-process bus, no throttles), here under hardening."""
    from games.live import bus as live_bus
    from games.live.events import reader

    settings.LIVE_DB_KEEP_CONNECTIONS = False
    settings.LIVE_MAX_STREAMS_PER_ACCOUNT = 64
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    bus = live_bus.LocalBus()
    live_bus.set_bus(bus)
    reader.clear()
    yield bus
    live_bus.set_bus(None)
    reader.clear()


@pytest.fixture
def unrelated_seeds(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(request.node.nodeid)
    monkeypatch.setattr(rules, "new_seed", lambda: f"{rng.getrandbits(128):032x}")


@pytest.fixture
def audit() -> Audit:
    # The streams are read, not requested through Audit.call: nothing to capture.
    return Audit(lambda **_: nullcontext([]))


def viewer(name: str, user: User | None, seat: int | None) -> Viewer:
    return Viewer(name, APIClient(), user, seat)


def _path(match_id: Any) -> str:
    return f"/api/v1/matches/{match_id}/stream"


class Table:
    """One match's streams: every viewer's, in both formats, each block checked."""

    def __init__(
        self, audit: Audit, match_id: Any, viewers: list[Viewer], refused: list[Viewer]
    ) -> None:
        self.audit = audit
        self.match_id = match_id
        self.viewers = viewers
        self.refused = refused
        self.truth: Truth
        self.streams: list[tuple[Viewer, Stream]] = []
        self.types: Counter[str] = Counter()
        self.changes: Counter[str] = Counter()
        self.resumed = 0
        self.refusals = 0

    async def open(self) -> None:
        self.truth = await in_test_thread(Truth)(self.match_id)
        self.audit.truth = self.truth
        for v in self.viewers:
            for wire in (SSE, NDJSON):
                self.streams.append((v, await self._open(v, _path(self.match_id), wire)))
        for v in self.refused:  # nothing at all before the stream: the error body only
            stream = await open_stream(_path(self.match_id), v.user, SSE)
            assert stream.status in (401, 403), (v.name, stream.status)
            await in_test_thread(self.audit.check)(v, stream.response, "refused stream")
            self.refusals += 1

    async def _open(self, v: Viewer, path: str, wire: str) -> Stream:
        stream = await open_stream(path, v.user, wire)
        assert stream.status == 200, (v.name, path, stream.status)
        head = in_test_thread(self.audit.check_stream_head)
        await head(v, stream.response, "match stream", truth=self.truth)
        return stream

    async def drain(self) -> None:
        """Read every stream up to the match's latest id; check each block."""
        target = await in_test_thread(match_position)(self.match_id)
        await in_test_thread(self.truth.refresh)()
        for v, stream in self.streams:
            await self._read(v, stream, target)

    async def _read(self, v: Viewer, stream: Stream, target: int) -> None:
        before = len(stream.raw)
        events = await stream.until(target)
        checked = await in_test_thread(self._check)(v, stream.wire, stream.raw[before:])
        assert checked == events, (v.name, len(checked), len(events))
        schemas = await in_test_thread(event_schemas)()
        for event in events:  # and each is what the published schema says
            schemas.check_match(event)
        self.types.update(e["type"] for e in events)
        self.changes.update(c for e in events for c in e.get("changes", ()))

    def _check(self, v: Viewer, wire: str, blocks: list[str]) -> list[dict[str, Any]]:
        found = (self.audit.check_stream(v, wire, b, "match stream", self.truth) for b in blocks)
        return [event for event in found if event is not None]

    async def resume(self, deal_start: int) -> None:
        """Each viewer opens streams that resume after earlier ids, and reads them."""
        target = await in_test_thread(match_position)(self.match_id)
        await in_test_thread(self.truth.refresh)()
        afters = {target - 1: SSE, target - 3: NDJSON, deal_start: SSE, 0: NDJSON}
        for v in self.viewers:
            for after, wire in afters.items():
                if after < 0:
                    continue
                path = f"{_path(self.match_id)}?after={after}"
                stream = await self._open(v, path, wire)
                await self._read(v, stream, target)
                await stream.close()
                self.resumed += 1

    async def close(self) -> None:
        for _, stream in self.streams:
            await stream.close()


class Accounts:
    """The account streams: each read by a task that waits for its next event (an account
    stream tells when its account's matches change, not on a schedule)."""

    def __init__(self, audit: Audit) -> None:
        self.audit = audit
        self.streams: list[tuple[Viewer, Stream]] = []
        self.reading: dict[int, asyncio.Task[dict[str, Any] | None]] = {}
        self.done: dict[int, int] = {}  # blocks of each stream checked
        self.types: dict[str, list[str]] = {}
        self.wanted: dict[str, int] = {}  # how many times finish() waits for its type
        self.checked = 0

    async def open(self, v: Viewer) -> None:
        stream = await open_stream("/api/v1/stream", v.user, NDJSON)
        assert stream.status == 200, (v.name, stream.status)
        head = in_test_thread(self.audit.check_stream_head)
        await head(v, stream.response, "account stream", account=True)
        self.streams.append((v, stream))
        self.types.setdefault(v.name, [])

    async def poll(self) -> None:
        """Check the events that have come."""
        for v, stream in self.streams:
            while True:
                task = self.reading.get(id(stream))
                if task is None:
                    self.reading[id(stream)] = asyncio.ensure_future(stream.next(timeout=3600))
                    break
                if not task.done():
                    break
                del self.reading[id(stream)]
                if await self._checked(v, stream, task.result()) is None:
                    break

    async def _checked(
        self, v: Viewer, stream: Stream, event: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        blocks = stream.raw[self.done.get(id(stream), 0) :]
        self.done[id(stream)] = len(stream.raw)

        def check() -> list[Any]:
            found = (
                self.audit.check_account_event(v, stream.wire, b, "account stream") for b in blocks
            )
            return [e for e in found if e is not None]

        checked = await in_test_thread(check)()
        assert checked == ([] if event is None else [event]), (v.name, checked, event)
        if event is not None:
            (await in_test_thread(event_schemas)()).check_account(event)
            self.types[v.name].append(event["type"])
            self.checked += 1
        return event

    async def finish(self, last: str, seated: list[Viewer]) -> None:
        """Read each seated viewer's account stream until it told of ``last``."""
        for v, stream in self.streams:
            while v in seated and self.types[v.name].count(last) < self.wanted.get(v.name, 1):
                task = self.reading.pop(id(stream), None)
                if task is None:
                    task = asyncio.ensure_future(stream.next(timeout=3600))
                event = await asyncio.wait_for(asyncio.shield(task), 30)
                assert event is not None, (v.name, self.types[v.name])
                await self._checked(v, stream, event)

    async def close(self) -> None:
        for task in self.reading.values():
            task.cancel()
        await asyncio.gather(*self.reading.values(), return_exceptions=True)
        for _, stream in self.streams:
            await stream.close()


def _current(match_id: Any) -> tuple[Any, Any]:
    match = Match.objects.get(pk=match_id)
    if match.status != MatchStatus.ACTIVE:
        return None, None
    deal = match.deals.order_by("-number").first()
    deal.match = match
    return selectors.deal_state(deal), deal


def _phase(ply: int, stock_out: bool) -> bool:
    return ply in (0, 5, 20, 39) or stock_out


async def play(
    table: Table,
    accounts: Accounts,
    people: dict[int, User],
    rng: random.Random,
    stop: Callable[[Any], bool] = lambda state: False,
) -> None:
    """Play random legal cards for the people (the bots reply in process) until the match
    is over or ``stop(state)``; every stream read and checked after each card."""
    deal_start = 0
    while True:
        state, deal = await in_test_thread(_current)(table.match_id)
        if state is None or stop(state):
            return
        if state.ply == 0:
            deal_start = await in_test_thread(match_position)(table.match_id)
        seat = state.turn
        assert seat in people, "the bot replies in process, before the call returns"
        card = rng.choice(state.legal_moves()).code
        user, ply, deal_id = people[seat], state.ply, deal.pk
        await in_test_thread(move_play)(
            match_id=table.match_id, user=user, card=card, ply=ply, deal_id=deal_id
        )
        await table.drain()
        await accounts.poll()
        if _phase(state.ply, state.stock_count == 1):
            await table.resume(deal_start)


def _time_out_heard_at_once(match_id: Any, people: dict[int, User], rng: random.Random) -> None:
    """The deadline passes, the timeout bot plays, and the next person plays too; the
    streams hear of it only then, so they read the timeout and two cards at once and send
    one event a card from the snapshots the moves kept (games.live.events)."""
    from games.live import bus as live_bus

    bus = live_bus.get_bus()
    held: list[tuple[Any, ...]] = []
    with mock.patch.object(bus, "publish", lambda *message: held.append(message)):
        db_travel(match_id, 11)
        assert clocks.timeout_enforce(match_id=match_id) is not None
        state, deal = _current(match_id)
        if state is not None and state.turn in people:
            card = rng.choice(state.legal_moves()).code
            move_play(
                match_id=match_id,
                user=people[state.turn],
                card=card,
                ply=state.ply,
                deal_id=deal.pk,
            )
    for message in held:
        bus.publish(*message)


async def time_out(
    table: Table, accounts: Accounts, people: dict[int, User], rng: random.Random
) -> None:
    """The seat to move lets its deadline pass: the timeout bot plays for it (and the next
    person plays before the streams hear of either)."""
    await in_test_thread(_time_out_heard_at_once)(table.match_id, people, rng)
    await table.drain()
    await accounts.poll()
    await table.resume(0)


def _assert_covered(audit: Audit, table: Table, minimum: int) -> None:
    events = sum(table.types.values())
    assert events >= minimum, (events, table.types)
    # most of what was checked was checked while a deal had secrets to look for
    assert audit.with_secret_cards >= audit.checked // 2, (audit.with_secret_cards, audit.checked)
    for kind in ("match", "card_played", "match_finished"):
        assert table.types[kind] > 0, table.types
    # every type read was checked against the schema too (Table._read)
    schema_checked = event_schemas().checked
    assert all(f"MatchStreamEvent:{kind}" in schema_checked for kind in table.types), table.types


def test_every_stream_event_of_a_two_player_match_leaks_nothing(
    audit: Audit,
    user_factory: Callable[..., User],
    unrelated_seeds: None,
    request: pytest.FixtureRequest,
) -> None:
    alice, bob, eve = (user_factory(username=n) for n in ("alice", "bob", "eve"))
    match = match_create(
        creator=alice, players=2, format="first_to_2", seats=[SeatSpec("user", "bob")], rated=True
    )
    match_join(match_id=match.pk, user=bob)
    viewers = [viewer("alice", alice, 0), viewer("bob", bob, 1)]
    refused = [viewer("eve", eve, None), viewer("anonymous", None, None)]
    table = Table(audit, match.pk, viewers, refused)
    accounts = Accounts(audit)
    rng = random.Random(request.node.nodeid)

    async def scenario() -> None:
        await table.open()
        for v in viewers + [refused[0]]:  # eve: an account stream of her own, told nothing
            await accounts.open(v)
        anonymous = await open_stream("/api/v1/stream", None, SSE)
        assert anonymous.status == 401
        await in_test_thread(audit.check)(refused[1], anonymous.response, "refused stream")
        await table.drain()
        await play(table, accounts, {0: alice, 1: bob}, rng)
        await accounts.finish("rating_changed", viewers)
        await table.close()
        await accounts.close()

    run(scenario)
    truth = Truth(match.pk)
    assert len(truth.deals) >= 2
    assert table.types["deal_finished"] >= 2 * 2  # both seats, both formats
    assert table.refusals == 2  # eve's match stream, the visitor's
    assert accounts.types["eve"] == ["account"]  # not one of her matches
    _assert_covered(audit, table, minimum=2 * 2 * 80)
    print(f"2 players: {audit.checked} checked, {dict(table.types)}, {table.resumed} resumed")


def test_every_stream_event_of_a_four_player_match_leaks_nothing(
    audit: Audit,
    user_factory: Callable[..., User],
    unrelated_seeds: None,
    request: pytest.FixtureRequest,
) -> None:
    alice, bob, carol, eve = (user_factory(username=n) for n in ("alice", "bob", "carol", "eve"))
    match = match_create(
        creator=alice,
        players=4,
        format="single",
        seats=[SeatSpec("user", "bob"), SeatSpec("user", "carol"), SeatSpec("bot", "greedy")],
        public=True,
        partners_last_hand=True,
    )
    match_join(match_id=match.pk, user=bob)
    match_join(match_id=match.pk, user=carol)
    viewers = [
        viewer("alice", alice, 0),
        viewer("bob", bob, 1),
        viewer("carol", carol, 2),
        viewer("eve", eve, None),  # a spectator of a public match
    ]
    table = Table(audit, match.pk, viewers, [viewer("anonymous", None, None)])
    accounts = Accounts(audit)
    rng = random.Random(request.node.nodeid)

    async def scenario() -> None:
        await table.open()
        for v in viewers[:3]:
            await accounts.open(v)
        await table.drain()
        await play(table, accounts, {0: alice, 1: bob, 2: carol}, rng)
        await accounts.finish("match_finished", viewers[:3])
        await table.close()
        await accounts.close()

    run(scenario)
    assert Match.objects.get(pk=match.pk).status == MatchStatus.FINISHED
    assert table.refusals == 1
    _assert_covered(audit, table, minimum=4 * 2 * 40)
    print(f"4 players: {audit.checked} checked, {dict(table.types)}, {table.resumed} resumed")


def test_timeouts_a_resignation_and_a_rematch_leak_nothing_on_the_streams(
    audit: Audit,
    user_factory: Callable[..., User],
    unrelated_seeds: None,
    request: pytest.FixtureRequest,
) -> None:
    alice, bob, eve = (user_factory(username=n) for n in ("alice", "bob", "eve"))
    clock = TimeControl(per_move_seconds=10, on_timeout=OnTimeout.BOT)
    first = match_create(
        creator=alice,
        players=2,
        format="single",
        seats=[SeatSpec("user", "bob")],
        public=True,
        time_control=clock,
    )
    match_join(match_id=first.pk, user=bob)
    anonymous = viewer("anonymous", None, None)
    rng = random.Random(request.node.nodeid)
    accounts = Accounts(audit)
    tables: list[Table] = []

    async def one_match(match_id: Any, seats: dict[str, int], resigns: User) -> None:
        people = {seats["alice"]: alice, seats["bob"]: bob}
        viewers = [
            viewer("alice", alice, seats["alice"]),
            viewer("bob", bob, seats["bob"]),
            viewer("eve", eve, None),  # a spectator: the matches are public
        ]
        table = Table(audit, match_id, viewers, [anonymous])
        tables.append(table)
        await table.open()
        await table.drain()
        # Both have played (a timeout before a person's first card aborts the match).
        await play(table, accounts, people, rng, stop=lambda s: s.ply >= 6)
        await time_out(table, accounts, people, rng)
        await play(table, accounts, people, rng, stop=lambda s: s.ply >= 15)
        await time_out(table, accounts, people, rng)
        await play(table, accounts, people, rng, stop=lambda s: s.ply >= 22)
        await in_test_thread(match_resign)(match_id=match_id, user=resigns)
        await table.drain()
        await accounts.poll()
        await table.resume(0)

    async def scenario() -> None:
        for v in (viewer("alice", alice, 0), viewer("bob", bob, 1)):
            await accounts.open(v)
        await one_match(first.pk, {"alice": 0, "bob": 1}, resigns=bob)
        rematch = await in_test_thread(clocks.rematch_propose)(match_id=first.pk, user=alice)
        # The proposal is an event of the finished match: its streams, opened again.
        await tables[0].resume(0)
        accepted = await in_test_thread(clocks.rematch_propose)(match_id=first.pk, user=bob)
        assert accepted.pk == rematch.pk
        await one_match(rematch.pk, {"alice": 1, "bob": 0}, resigns=alice)
        accounts.wanted = {"alice": 2, "bob": 2}
        await accounts.finish("match_finished", [v for v, _ in accounts.streams])
        for table in tables:
            await table.close()
        await accounts.close()

    run(scenario)
    first.refresh_from_db()
    second = Match.objects.get(rematch_of=first)
    for match in (first, second):
        assert match.status == MatchStatus.FINISHED and match.end_reason == "resigned", match
        assert match.clock_events.filter(kind="seat_timed_out").count() == 2
    assert first.clock_events.filter(kind="rematch_proposed").exists()
    for table in tables:
        # each timeout (read with the bot's card that followed) by every viewer's streams
        assert table.changes["match_event"] >= 2 * 3 * 2, table.changes
        assert table.refusals == 1
        _assert_covered(audit, table, minimum=3 * 2 * 22)
    print(f"rematch: {audit.checked} checked, {[dict(t.types) for t in tables]}")
