"""The no-leak audit of the live streams (issue 13): every event of every stream, for every
seat, a spectator and an anonymous visitor, in 2- and 4-player matches.

Kept apart from test_no_leaks.py (the REST audit): the streams are read in process
through the ASGI path (tests/live/streams.py), which needs committed data.

Two whole matches are played through the services (a random legal card each time, the
random generator seeded by the test's id):

- a private, rated 2-player ``first_to_2`` between two people (two deals or more), with
  a signed-in stranger (403 before any stream) and an anonymous visitor (401);
- a public 4-player ``single`` deal, three people and a greedy bot, partners' last hand
  on, watched by a signed-in stranger (a spectator) and an anonymous visitor (401).

Every viewer who may keeps a match stream open in each format and its account stream,
and all of them are read up to the match's latest id after every change, so each event
is built at the version it leads to. At each phase (each deal's first ply, plies 5, 20
and the one the stock runs out, the deal's last ply) each viewer also opens resumed
streams (``?after=``: the previous id, three before, the deal's start, 0) and reads
what they owe.

Each event is checked against the truth at its id, from the models (the deals' seeds and
move logs replayed by games.rules), not through the API: the id is the match's position,
so it names the deal and the number of cards played. The secret cards for a seat: the
other seats' hands and the stock, minus the face-up briscola (public, also once drawn),
minus its partner's hand once the rules show it; for a spectator, every hand and the
stock. The secret strings: the seed of the deal being played and each of its
``SEED_PIECE``-character pieces, in any letter case, searched in the raw text too. A
card played that an event names in ``move`` is public: it is left out of the search only
once found to be exactly that deal's card at that ply in the move log. Account events
name matches, turns and results, never a card: any card code or live seed in one is a
leak.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from accounts.models import User
from games import rules
from games.live.events import DEAL_CARDS, position
from games.matches import selectors
from games.matches.services import SeatSpec, match_create, match_join, move_play
from games.models import Deal, Match, MatchStatus, Move
from tests.live.streams import (
    NDJSON,
    SSE,
    Stream,
    in_test_thread,
    open_stream,
    run,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live")]

CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])([A3RCF2-7][cdsb])(?![0-9A-Za-z])")
SEED_PIECE = 8
CARDS = {card.code for card in rules.CARDS}


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


def strings(value: Any) -> Iterator[str]:
    """Every key and string value of decoded JSON."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


@dataclass
class Moment:
    """The truth at one position of the match: the secrets of each viewer."""

    cards: dict[int | None, set[str]]  # by seat (None: a spectator)
    seed: str | None  # the seed of the deal being played


@dataclass
class Truth:
    """The match as stored, replayed by games.rules: what was secret at each position."""

    match: Match
    joined: int
    deals: list[Deal]
    logs: dict[int, list[tuple[int, int, str]]]  # deal id -> (ply, seat, card)

    @classmethod
    def read(cls, match_id: Any) -> Truth:
        match = Match.objects.get(pk=match_id)
        deals = list(match.deals.order_by("number"))
        logs = {
            d.pk: list(
                Move.objects.filter(deal=d).order_by("ply").values_list("ply", "seat", "card")
            )
            for d in deals
        }
        joined = match.seats.filter(joined_at__isnull=False).count()
        return cls(match, joined, deals, logs)

    def at(self, pos: int) -> Moment:
        if pos <= self.joined:  # waiting for players
            return Moment({}, None)
        index, moves = divmod(pos - self.joined - 1, DEAL_CARDS + 1)
        if index >= len(self.deals) or (index == len(self.deals) - 1 and self._over(moves)):
            return Moment({}, None)  # the match is over: every deal is open to its viewers
        deal = self.deals[index]
        log = self.logs[deal.pk]
        assert moves <= len(log), (pos, index, moves, len(log))
        state = rules.replay_moves(
            self.match.players,
            deal.dealer,
            rules.shuffled_deck(deal.seed),
            [c for _, _, c in log[:moves]],
        )
        hidden = [set(c.code for c in hand) for hand in state.hands]
        stock = {c.code for c in state.stock} - {state.briscola.code}
        cards: dict[int | None, set[str]] = {}
        for seat in range(self.match.players):
            secret = set().union(*(hidden[o] for o in range(self.match.players) if o != seat))
            secret |= stock
            if (
                self.match.players == 4
                and self.match.partners_last_hand
                and state.stock_count == 0
                and not state.is_over
            ):
                secret -= hidden[(seat + 2) % 4]
            cards[seat] = secret - {state.briscola.code}
        cards[None] = (set().union(*hidden) | stock) - {state.briscola.code}
        return Moment(cards, deal.seed)

    def _over(self, moves: int) -> bool:
        return self.match.status != MatchStatus.ACTIVE and moves >= len(
            self.logs[self.deals[-1].pk]
        )

    def move_is_true(self, move: dict[str, Any]) -> bool:
        log = {d.pk: self.logs[d.pk] for d in self.deals}.get(move["deal"])
        if log is None or move["ply"] >= len(log):
            return False
        return log[move["ply"]] == (move["ply"], move["seat"], move["card"])


@dataclass
class Viewer:
    name: str
    user: User | None
    seat: int | None
    streams: list[Stream] = field(default_factory=list)
    account: list[Stream] = field(default_factory=list)
    reading: dict[int, asyncio.Task[dict[str, Any] | None]] = field(default_factory=dict)
    account_types: list[str] = field(default_factory=list)


@dataclass
class Audit:
    checked_events: int = 0
    with_secrets: int = 0
    account_events: int = 0
    refusals: int = 0
    by_type: dict[str, int] = field(default_factory=dict)

    def check_event(self, event: dict[str, Any], raw: str, viewer: Viewer, truth: Truth) -> None:
        if event["type"] == "stream_closed":
            assert set(event) == {"id", "type", "reason"}, event
            return
        moment = truth.at(event["id"])
        secret = moment.cards.get(viewer.seat, set()) if moment.cards else set()
        body = dict(event)
        move = body.pop("move", None)
        if move is not None:
            assert truth.move_is_true(move), (viewer.name, move)
        found = {m for s in strings(body) for m in CARD_TOKEN.findall(s)}
        assert not (found & secret), (viewer.name, event["id"], event["type"], found & secret)
        if moment.seed is not None:
            self._no_seed(moment.seed, raw, viewer, event)
        self.checked_events += 1
        self.with_secrets += bool(secret)
        self.by_type[event["type"]] = self.by_type.get(event["type"], 0) + 1

    def check_account_event(self, event: dict[str, Any], raw: str, seed: str | None) -> None:
        found = {m for s in strings(event) for m in CARD_TOKEN.findall(s)}
        assert not found, (event, found)
        if seed is not None:
            self._no_seed(seed, raw, None, event)
        self.account_events += 1

    @staticmethod
    def _no_seed(seed: str, raw: str, viewer: Viewer | None, event: dict[str, Any]) -> None:
        text = raw.lower()
        pieces = {seed[i : i + SEED_PIECE].lower() for i in range(len(seed) - SEED_PIECE + 1)}
        leaked = [p for p in pieces if p in text]
        assert not leaked, (viewer.name if viewer else "account", event.get("type"), leaked[:3])


def _path(match_id: Any) -> str:
    return f"/api/v1/matches/{match_id}/stream"


async def _drain(
    audit: Audit, viewers: list[Viewer], match_id: Any, truth_now: Callable[[], Truth]
) -> None:
    """Read every stream up to the match's latest id; check each event."""
    target = await in_test_thread(lambda: _position(match_id))()
    truth = await in_test_thread(truth_now)()
    live_seed = truth.at(target).seed
    for viewer in viewers:
        for stream in viewer.streams:
            before = len(stream.raw)
            for event in await stream.until(target):
                audit.check_event(event, "\n".join(stream.raw[before:]), viewer, truth)
        for stream in viewer.account:
            _check_account_events(audit, viewer, stream, live_seed)


def _check_account_events(audit: Audit, viewer: Viewer, stream: Stream, seed: str | None) -> None:
    """The account events that have come (each read by a task that waits for the next one;
    an account stream reports when its account's matches change, not on a schedule)."""
    key = id(stream)
    while True:
        task = viewer.reading.get(key)
        if task is None:
            viewer.reading[key] = asyncio.ensure_future(stream.next(timeout=3600))
            return
        if not task.done():
            return
        event = task.result()
        del viewer.reading[key]
        if event is None:
            return
        audit.check_account_event(event, stream.raw[-1] if stream.raw else "", seed)
        viewer.account_types.append(event["type"])


async def _finish_account_streams(audit: Audit, viewers: list[Viewer], last: str) -> None:
    """Read each account stream until it told of the match's end (``last``)."""
    for viewer in viewers:
        for stream in viewer.account:
            while viewer.seat is not None and last not in viewer.account_types:
                task = viewer.reading.get(id(stream))
                if task is not None:
                    await asyncio.wait_for(asyncio.shield(task), 30)
                _check_account_events(audit, viewer, stream, None)
            task = viewer.reading.pop(id(stream), None)
            if task is not None:
                task.cancel()


def _position(match_id: Any) -> int:
    found = selectors.match_version(match_id=match_id)
    assert found is not None
    return position(found[1])


def _phases(ply: int, stock_out: bool) -> bool:
    return ply in (0, 5, 20, 39) or stock_out


async def _resumed(
    audit: Audit, viewer: Viewer, match_id: Any, truth: Truth, target: int, deal_start: int
) -> None:
    for after in {target - 1, target - 3, deal_start, 0}:
        if after < 0:
            continue
        stream = await open_stream(f"{_path(match_id)}?after={after}", viewer.user, SSE)
        before = 0
        for event in await stream.until(target):
            audit.check_event(event, "\n".join(stream.raw[before:]), viewer, truth)
            before = len(stream.raw)
        await stream.close()


def _play_match(
    audit: Audit,
    match: Match,
    people: dict[int, User],
    viewers: list[Viewer],
    refused: list[Viewer],
    rng: random.Random,
    last_account_event: str,
) -> Truth:
    truth_now = lambda: Truth.read(match.pk)  # noqa: E731

    async def scenario() -> None:
        for viewer in viewers:
            for wire in (SSE, NDJSON):
                stream = await open_stream(_path(match.pk), viewer.user, wire)
                assert stream.status == 200
                viewer.streams.append(stream)
            if viewer.seat is not None:
                viewer.account.append(await open_stream("/api/v1/stream", viewer.user, NDJSON))
        for viewer in refused:  # nothing at all before the stream: the error body only
            for path in (_path(match.pk), "/api/v1/stream"):
                stream = await open_stream(path, viewer.user, SSE)
                if stream.status == 200:
                    assert path == "/api/v1/stream" and viewer.user is not None
                    viewer.account.append(stream)
                    continue
                assert stream.status in (401, 403)
                body = stream.response.content.decode()
                assert not CARD_TOKEN.findall(body), body
                audit.refusals += 1
        await _drain(audit, viewers + refused, match.pk, truth_now)
        deal_start = 0
        while True:
            state, deal = await in_test_thread(lambda: _current(match.pk))()
            if state is None:
                break
            if state.ply == 0:
                deal_start = await in_test_thread(lambda: _position(match.pk))()
            seat = state.turn
            assert seat in people, "the bot replies in process, before the call returns"
            card = rng.choice(state.legal_moves()).code
            user, ply, deal_id = people[seat], state.ply, deal.pk
            await in_test_thread(move_play)(
                match_id=match.pk, user=user, card=card, ply=ply, deal_id=deal_id
            )
            await _drain(audit, viewers + refused, match.pk, truth_now)
            if _phases(state.ply, state.stock_count == 1):
                truth = await in_test_thread(truth_now)()
                target = await in_test_thread(lambda: _position(match.pk))()
                for viewer in viewers:
                    await _resumed(audit, viewer, match.pk, truth, target, deal_start)
        await _finish_account_streams(audit, viewers + refused, last_account_event)
        for viewer in viewers + refused:
            for stream in viewer.streams:
                await stream.close()

    run(scenario)
    return Truth.read(match.pk)


def _current(match_id: Any) -> tuple[Any, Any]:
    match = Match.objects.get(pk=match_id)
    if match.status != MatchStatus.ACTIVE:
        return None, None
    deal = match.deals.order_by("-number").first()
    deal.match = match
    return selectors.deal_state(deal), deal


def _assert_covered(audit: Audit, minimum: int) -> None:
    assert audit.checked_events >= minimum, audit
    # most events built during a deal had secrets to look for
    assert audit.with_secrets >= audit.checked_events // 2, audit
    for kind in ("match", "card_played", "match_finished"):
        assert audit.by_type.get(kind, 0) > 0, audit.by_type
    assert audit.account_events > 0


def test_every_stream_event_of_a_two_player_match_leaks_nothing(
    user_factory: Callable[..., User], unrelated_seeds: None, request: pytest.FixtureRequest
) -> None:
    alice, bob, eve = (user_factory(username=n) for n in ("alice", "bob", "eve"))
    match = match_create(
        creator=alice, players=2, format="first_to_2", seats=[SeatSpec("user", "bob")], rated=True
    )
    match_join(match_id=match.pk, user=bob)
    viewers = [Viewer("alice", alice, 0), Viewer("bob", bob, 1)]
    refused = [Viewer("eve", eve, None), Viewer("anonymous", None, None)]
    audit = Audit()
    truth = _play_match(
        audit,
        match,
        {0: alice, 1: bob},
        viewers,
        refused,
        random.Random(request.node.nodeid),
        "rating_changed",
    )
    assert len(truth.deals) >= 2
    assert audit.by_type.get("deal_finished", 0) >= 2 * 2  # both seats, both formats
    assert audit.refusals == 3  # eve's match stream; the visitor's two
    _assert_covered(audit, minimum=2 * 2 * 80)
    print(f"2 players: {audit}")


def test_every_stream_event_of_a_four_player_match_leaks_nothing(
    user_factory: Callable[..., User], unrelated_seeds: None, request: pytest.FixtureRequest
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
        Viewer("alice", alice, 0),
        Viewer("bob", bob, 1),
        Viewer("carol", carol, 2),
        Viewer("eve", eve, None),  # a spectator of a public match
    ]
    refused = [Viewer("anonymous", None, None)]
    audit = Audit()
    truth = _play_match(
        audit,
        match,
        {0: alice, 1: bob, 2: carol},
        viewers,
        refused,
        random.Random(request.node.nodeid),
        "match_finished",
    )
    assert truth.match.status == MatchStatus.FINISHED
    assert audit.refusals == 2
    _assert_covered(audit, minimum=4 * 2 * 40)
    print(f"4 players: {audit}")


def test_the_detector_catches_a_leaked_card_and_seed() -> None:
    """The checks fire: a secret card in an event, a piece of the live seed in the text."""
    audit = Audit()

    class FakeTruth:
        def at(self, pos: int) -> Moment:
            return Moment({0: {"Ad", "3b"}, None: {"Ad", "3b", "7c"}}, "0123456789abcdef" * 2)

        def move_is_true(self, move: dict[str, Any]) -> bool:
            return move["card"] == "7c"

    viewer = Viewer("alice", None, 0)
    clean = {"id": 5, "type": "card_played", "detail": {"hand": ["7c", "Rs"]}, "etag": 'W/"a3b"'}
    audit.check_event(clean, json.dumps(clean), viewer, FakeTruth())  # type: ignore[arg-type]
    for leaky, raw in (
        ({"id": 5, "type": "card_played", "detail": {"hand": ["Ad"]}}, ""),
        ({"id": 5, "type": "card_played", "detail": {"x": "3b"}}, ""),
        (
            {
                "id": 5,
                "type": "card_played",
                "move": {"deal": 1, "ply": 0, "seat": 0, "card": "Ad"},
            },
            "",
        ),
        ({"id": 5, "type": "card_played"}, "data: 23456789AB"),
    ):
        with pytest.raises(AssertionError):
            audit.check_event(leaky, raw, viewer, FakeTruth())  # type: ignore[arg-type]
    with pytest.raises(AssertionError):
        audit.check_account_event({"type": "your_turn", "x": "Ad"}, "", None)
