"""The streams' events are what the published OpenAPI schema says (a client generated from
it gets a model of each): ``MatchStreamEvent`` for a match stream, ``AccountStreamEvent``
for an account stream.

Every event of real streams (in process, the ASGI path, SSE and NDJSON; and the WSGI
fallback) is validated against its component of the schema the app serves, closed to
undeclared fields (tests/live/stream_schema.py), through matches that send every type:
seats joined and left, a match called off, a first_to_2 played through a deal's end,
resumed from scratch and across that end, resigned and rated; and every reason a stream
is closed for. The schema's enums are the constants the stream code sends, and those are
all it can send.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import token_revoke
from games.clocks.services import match_leave
from games.live import apis as live_apis
from games.live import events as live_events
from games.live import streams as live_streams
from games.live.bus import LocalBus, match_key
from games.live.events import MatchStreamChange
from games.live.streams import (
    ACCOUNT,
    CREDENTIAL_REASONS,
    STREAM_CLOSED,
    AccountStreamChange,
    Credential,
    StreamClosedReason,
)
from games.matches.services import SeatSpec, match_abort, match_create, match_join, match_resign
from games.models import Match, MatchStatus
from tests.live.stream_schema import ACCOUNT_EVENT, MATCH_EVENT, EventSchemas, event_schemas
from tests.live.streams import (
    NDJSON,
    SSE,
    Stream,
    in_test_thread,
    match_position,
    open_stream,
    parse_sse,
    run,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("live")]

ApiFor = Callable[[User | None], APIClient]


def _path(match_id: Any) -> str:
    return f"/api/v1/matches/{match_id}/stream"


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _wsgi_events(response: Any, wire: str) -> list[dict[str, Any]]:
    """The events a stream served by WSGI answered (what is owed, then the end)."""
    assert response.status_code == 200, response.status_code
    text = b"".join(response.streaming_content).decode()
    if wire == SSE:
        return [e for block in text.split("\n\n") if (e := parse_sse(block))]
    return [json.loads(line) for line in text.split("\n") if line]


# -- the enums -------------------------------------------------------------------------------


def _mapping(schemas: EventSchemas, name: str) -> dict[str, str]:
    union = schemas.component(name)
    mapping: dict[str, str] = union["discriminator"]["mapping"]
    assert union["discriminator"]["propertyName"] == "type"
    assert sorted(r["$ref"] for r in union["oneOf"]) == sorted(set(mapping.values()))
    return {kind: ref.rsplit("/", 1)[1] for kind, ref in mapping.items()}


def _enum(schemas: EventSchemas, component: str, field: str) -> list[Any]:
    node = schemas.resolve(schemas.component(component)["properties"][field])
    if node.get("type") == "array":
        node = schemas.resolve(node["items"])
    values: list[Any] = node["enum"]
    return values


def _versions() -> list[tuple[Any, ...]]:
    """Versions of a match (``MatchSnapshot.version``) of every shape."""
    return list(
        itertools.product(
            [s.value for s in MatchStatus], [1, 2, 4], [0, 1, 2], [0, 1, 39, 40], [0, 2], [0, 1]
        )
    )


def _items() -> list[dict[str, Any]]:
    """Account stream items (``streams.account_item``) of every shape."""
    return [
        {
            "status": status.value,
            "invited": invited,
            "your_turn": turn,
            "deal": deal,
            "ply": ply,
            "rating_changes": ratings,
        }
        for status, invited, turn, (deal, ply), ratings in itertools.product(
            MatchStatus, [False, True], [False, True], [(None, None), (1, 0), (1, 5)], [[], [{}]]
        )
    ]


def test_the_schema_enums_are_the_types_and_reasons_the_streams_can_send() -> None:
    schemas = event_schemas()

    # What the code can send, found by running it over every shape of change.
    changes: set[str] = set()
    types: set[str] = set()
    versions = _versions()
    for old, new in itertools.product(versions, versions):
        found = live_events.changes_between(old, new)
        changes |= set(found)
        types.add(live_events._main_type(found))
    assert changes == set(MatchStreamChange.values) - {MatchStreamChange.MATCH}
    assert types == set(MatchStreamChange.values)
    items = _items()
    told = {
        change
        for old, new in itertools.product([None, *items], items)
        for change in live_streams.account_changes(old, new)
    }
    assert told == set(AccountStreamChange.values)
    reasons = {
        Credential(kind, "k").closing_reason for kind in ("token", "access_token", "session")
    }
    assert reasons == set(CREDENTIAL_REASONS)
    # ...and nothing else: every type and reason the modules that write events write is
    # one of those constants, never a literal (a JSON schema's own `type` aside).
    for module in (live_events, live_streams, live_apis):
        text = Path(str(module.__file__)).read_text(encoding="utf-8")
        assert not re.findall(r'"type": "(?!object"|string"|integer")', text), module.__name__
        assert not re.findall(r'closing_event\([^)]*"', text), module.__name__

    # The match stream: one component per kind of event, told apart by `type`.
    mapping = _mapping(schemas, MATCH_EVENT)
    assert set(mapping) == set(MatchStreamChange.values) | {STREAM_CLOSED}
    assert set(mapping.values()) == {"MatchStreamUpdate", "MatchStreamClosed"}
    assert set(_enum(schemas, "MatchStreamUpdate", "type")) == set(MatchStreamChange.values)
    assert set(_enum(schemas, "MatchStreamUpdate", "changes")) == set(MatchStreamChange.values)
    assert _enum(schemas, "MatchStreamClosed", "type") == [STREAM_CLOSED]
    assert set(_enum(schemas, "MatchStreamClosed", "reason")) == set(StreamClosedReason.values)
    for kind, component in mapping.items():
        assert kind in _enum(schemas, component, "type"), (kind, component)

    # The account stream.
    mapping = _mapping(schemas, ACCOUNT_EVENT)
    assert set(mapping) == {ACCOUNT, *AccountStreamChange.values, STREAM_CLOSED}
    assert _enum(schemas, "AccountStreamSnapshot", "type") == [ACCOUNT]
    assert set(_enum(schemas, "AccountStreamUpdate", "type")) == set(AccountStreamChange.values)
    assert _enum(schemas, "AccountStreamClosed", "type") == [STREAM_CLOSED]
    assert set(_enum(schemas, "AccountStreamClosed", "reason")) == set(CREDENTIAL_REASONS)
    for kind, component in mapping.items():
        assert kind in _enum(schemas, component, "type"), (kind, component)

    # The detail is the one GET /api/v1/matches/{id} answers, referenced, not copied; the
    # account stream's item is a component of its own, in `account` and in each change.
    detail = schemas.schema["paths"]["/api/v1/matches/{match_id}"]["get"]["responses"]["200"]
    detail_ref = detail["content"]["application/json"]["schema"]["$ref"]
    update = schemas.component("MatchStreamUpdate")
    assert schemas.resolve(update["properties"]["detail"]) == schemas.resolve({"$ref": detail_ref})
    assert update["properties"]["detail"]["allOf"] == [{"$ref": detail_ref}]
    snapshot = schemas.component("AccountStreamSnapshot")
    assert snapshot["properties"]["matches"]["items"] == {
        "$ref": "#/components/schemas/AccountStreamMatch"
    }
    item = schemas.component("AccountStreamMatch")
    change = schemas.component("AccountStreamUpdate")
    assert set(item["properties"]) | {"id", "type"} == set(change["properties"])
    # Both formats of both streams: NDJSON lines are the events; SSE's data names them.
    streams = {"/api/v1/matches/{match_id}/stream": MATCH_EVENT, "/api/v1/stream": ACCOUNT_EVENT}
    for path, name in streams.items():
        content = schemas.schema["paths"][path]["get"]["responses"]["200"]["content"]
        assert content["application/x-ndjson"]["schema"] == {"$ref": f"#/components/schemas/{name}"}
        sse = content["text/event-stream"]["schema"]
        assert set(sse["properties"]) == {"id", "event", "data"}
        assert f"`{name}`" in sse["properties"]["data"]["description"]


def test_the_event_checks_refuse_what_the_schema_does_not_say() -> None:
    """The checks bite (else every event of the tests below would pass for nothing): a
    reason or a type the stream may not send, a field missing or undeclared."""
    schemas = event_schemas()
    closed = {"id": 7, "type": STREAM_CLOSED, "reason": StreamClosedReason.MATCH_PRIVATE.value}
    schemas.check_match(closed)
    schemas.check_account({**closed, "reason": StreamClosedReason.SIGNED_OUT.value})
    wrong = [
        (MATCH_EVENT, {**closed, "detail": {}}),  # undeclared on a stream_closed
        (MATCH_EVENT, {**closed, "reason": "bored"}),
        (MATCH_EVENT, {**closed, "id": "7"}),
        (MATCH_EVENT, {"id": 7, "type": "card_played", "reason": "match_private"}),
        (MATCH_EVENT, {"id": 7, "type": "your_turn"}),
        (ACCOUNT_EVENT, closed),  # an account stream never closes for a match
        (ACCOUNT_EVENT, {"id": 1, "type": ACCOUNT}),
        (ACCOUNT_EVENT, {"id": 1, "type": ACCOUNT, "matches": [{"match": "x"}]}),
    ]
    for name, event in wrong:
        with pytest.raises(AssertionError):
            schemas.check(name, event)


# -- every event of real streams -------------------------------------------------------------


def test_every_event_of_real_match_streams_is_a_valid_match_stream_event(
    user_factory: Callable[..., User],
    api_for: ApiFor,
    games: Any,
    deterministic_seeds: None,
    live: LocalBus,
) -> None:
    alice, bob, carol, eve = (user_factory(username=n) for n in ("alice", "bob", "carol", "eve"))
    four = match_create(
        creator=alice, players=4, format="single", seats=[SeatSpec("open")] * 3, public=True
    )
    private = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])
    gone = match_create(creator=carol, players=2, format="single", seats=[SeatSpec("open")])
    idle = match_create(creator=carol, players=2, format="single", seats=[SeatSpec("open")])
    rated = match_create(
        creator=alice, players=2, format="first_to_2", seats=[SeatSpec("user", "bob")], rated=True
    )
    bobs_browser = _signed_in(bob)
    where = in_test_thread(match_position)
    captured: list[dict[str, Any]] = []

    async def read_to(streams: list[Stream], match_id: Any) -> None:
        target = await where(match_id)
        for stream in streams:
            captured.extend(await stream.until(target))

    async def scenario() -> None:
        # Seats joined and left, a match called off (which ends its streams).
        watching = [
            await open_stream(_path(four.pk), alice, SSE),
            await open_stream(_path(four.pk), alice, NDJSON),
            await open_stream(_path(four.pk), eve, SSE),  # a spectator of a public match
        ]
        await read_to(watching, four.pk)
        await in_test_thread(lambda: match_join(match_id=four.pk, user=bob))()
        await read_to(watching, four.pk)
        await in_test_thread(lambda: match_leave(match_id=four.pk, user=bob))()
        await read_to(watching, four.pk)
        await in_test_thread(lambda: match_abort(match_id=four.pk, user=alice))()
        for stream in watching:
            captured.extend(await stream.rest())

        # A stranger looks at a match with an open seat, until a player takes it.
        stranger = await open_stream(_path(private.pk), eve, NDJSON)
        captured.append(await stranger.next())
        await in_test_thread(lambda: match_join(match_id=private.pk, user=carol))()
        captured.extend(await stranger.rest())

        # A match that is gone (deleted behind the streams' back, its bell rung).
        orphan = await open_stream(_path(gone.pk), alice, SSE)
        captured.append(await orphan.next())
        await in_test_thread(lambda: Match.objects.filter(pk=gone.pk).delete())()
        live.publish(match_key(gone.pk), {"match": str(gone.pk)})
        captured.extend(await orphan.rest())

        # A rated first_to_2, every card read by each seat, in both formats, by token and
        # by a browser's session: the start, a deal's end, a resignation, the rating.
        playing = [
            await open_stream(_path(rated.pk), alice, SSE),
            await open_stream(_path(rated.pk), alice, NDJSON),
            await open_stream(_path(rated.pk), bob, NDJSON),
            await open_stream(_path(rated.pk), None, SSE, cookies=bobs_browser.cookies),
        ]
        await read_to(playing, rated.pk)
        await in_test_thread(lambda: match_join(match_id=rated.pk, user=bob))()
        await read_to(playing, rated.pk)
        while (await in_test_thread(_deals)(rated.pk)) == 1:
            await in_test_thread(lambda: games.play(rated, 1))()
            await read_to(playing, rated.pk)
        deal_start = await where(rated.pk)
        for _ in range(3):
            await in_test_thread(lambda: games.play(rated, 1))()
            await read_to(playing, rated.pk)
        # Resumed: across the deal's end (the card that ended it, which the stream cannot
        # name: no `move`), and from scratch (`match`).
        for after, wire in ((deal_start - 2, SSE), (deal_start - 2, NDJSON), (0, NDJSON)):
            resumed = await open_stream(f"{_path(rated.pk)}?after={after}", bob, wire)
            await read_to([resumed], rated.pk)
            await resumed.close()
        await in_test_thread(lambda: match_resign(match_id=rated.pk, user=bob))()
        for stream in playing:
            captured.extend(await stream.rest())  # the end and the rating, then it ends

        # Streams whose credentials no longer sign in.
        closing = [
            await open_stream(_path(idle.pk), alice, NDJSON),
            await open_stream(_path(idle.pk), None, SSE, cookies=bobs_browser.cookies),
        ]
        await read_to(closing, idle.pk)
        await in_test_thread(lambda: token_revoke(user=alice))()
        await in_test_thread(lambda: bobs_browser.post("/play/signout/"))()
        for stream in closing:
            captured.extend(await stream.rest())

    run(scenario)
    # Served by WSGI: what is owed, then the end.
    for wire in (SSE, NDJSON):
        captured.extend(_wsgi_events(api_for(bob).get(_path(rated.pk), HTTP_ACCEPT=wire), wire))
        owed = api_for(bob).get(f"{_path(rated.pk)}?after=3", HTTP_ACCEPT=wire)
        captured.extend(_wsgi_events(owed, wire))

    schemas = event_schemas()
    for event in captured:
        schemas.check_match(event)
    types = {e["type"] for e in captured}
    # A deal begins with the match (`match_started`) or at the end of the one before
    # (`deal_finished`), which outweigh it: `deal_started` is a change, never a type.
    assert types == {*MatchStreamChange.values, STREAM_CLOSED} - {MatchStreamChange.DEAL_STARTED}
    assert {c for e in captured for c in e.get("changes", ())} == set(MatchStreamChange.values)
    closed = [e for e in captured if e["type"] == STREAM_CLOSED]
    assert {e["reason"] for e in closed} == set(StreamClosedReason.values)
    played = [e for e in captured if MatchStreamChange.CARD_PLAYED in e.get("changes", ())]
    assert any("move" in e for e in played) and any("move" not in e for e in played)
    assert len(captured) > 4 * 44


def _deals(match_id: Any) -> int:
    return Match.objects.get(pk=match_id).deals.count()


def test_every_event_of_real_account_streams_is_a_valid_account_stream_event(
    user_factory: Callable[..., User],
    api_for: ApiFor,
    games: Any,
    deterministic_seeds: None,
) -> None:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    earlier = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("open")])
    bobs_browser = _signed_in(bob)
    heard: dict[str, list[dict[str, Any]]] = {"alice": [], "bob": []}
    streams: dict[str, Stream] = {}

    async def told(name: str, kind: str, count: int = 1) -> None:
        """Read ``name``'s stream until it told of ``kind`` ``count`` times in all. Read
        between writes, never during one: on SQLite a stream's read during the test's
        write finds the table locked."""
        while [e["type"] for e in heard[name]].count(kind) < count:
            event = await streams[name].next()
            assert event is not None, (name, kind, [e["type"] for e in heard[name]])
            heard[name].append(event)

    async def scenario() -> None:
        streams["alice"] = await open_stream("/api/v1/stream", alice, NDJSON)
        streams["bob"] = await open_stream(
            "/api/v1/stream", None, SSE, cookies=bobs_browser.cookies
        )
        await told("alice", ACCOUNT)
        await told("bob", ACCOUNT)

        def invite() -> Any:
            return match_create(
                creator=alice,
                players=2,
                format="single",
                seats=[SeatSpec("user", "bob")],
                rated=True,
            )

        match = await in_test_thread(invite)()
        await told("bob", "invitation_received")
        await in_test_thread(lambda: match_join(match_id=match.pk, user=bob))()
        await told("alice", "match_started")
        await told("bob", "match_started")
        turns = {"alice": 0, "bob": 0}
        for _ in range(5):  # each time the turn comes, its seat is told
            seat = (await in_test_thread(lambda: games.state(match))()).turn
            name = "alice" if seat == 0 else "bob"
            turns[name] += 1
            await told(name, "your_turn", turns[name])
            await in_test_thread(lambda: games.play(match, 1))()
        await in_test_thread(lambda: match_resign(match_id=match.pk, user=bob))()
        await told("alice", "rating_changed")
        await told("bob", "rating_changed")
        await in_test_thread(lambda: match_abort(match_id=earlier.pk, user=alice))()
        await told("alice", "match_finished", 2)  # also for a match called off
        await in_test_thread(lambda: token_revoke(user=alice))()
        await in_test_thread(lambda: bobs_browser.post("/play/signout/"))()
        for name, stream in streams.items():
            heard[name] += await stream.rest()  # each ends with stream_closed

    run(scenario)
    captured = heard["alice"] + heard["bob"]
    # Served by WSGI (bob's token: his browser signed out, not it): `account`, then the end.
    for wire in (SSE, NDJSON):
        captured.extend(_wsgi_events(api_for(bob).get("/api/v1/stream", HTTP_ACCEPT=wire), wire))

    schemas = event_schemas()
    for event in captured:
        schemas.check_account(event)
    assert {e["type"] for e in captured} == {ACCOUNT, *AccountStreamChange.values, STREAM_CLOSED}
    closed = [e for e in captured if e["type"] == STREAM_CLOSED]
    assert {e["reason"] for e in closed} == set(CREDENTIAL_REASONS)
    assert [e["type"] for e in heard["alice"]][-1] == STREAM_CLOSED
    assert heard["alice"][0]["matches"], "alice's waiting match, from the start"
    for events in heard.values():
        ids = [e["id"] for e in events]
        assert ids == sorted(set(ids))
