"""GET /api/v1/matches/{id} after a move: the detail comes from the snapshot the move kept
(games/matches/snapshots.py), and is exactly what the database would have given."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.core.cache import caches
from redis.exceptions import ConnectionError as RedisConnectionError
from rest_framework.test import APIClient

from accounts.models import User
from games.matches import selectors, snapshots
from games.models import Match
from tests.matches.conftest import Player, seats_by_number

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def still_clock() -> Iterator[None]:
    """The web server's clock stands still: a detail's ``seconds_left`` (counted from the
    deadline the database set) is then the same in the snapshot's answer and the
    database's, which these tests compare whole."""
    with time_machine.travel(datetime.now(tz=UTC), tick=False):
        yield


def url(match_id: str) -> str:
    return f"/api/v1/matches/{match_id}"


def started_match(player: Callable[..., Player]) -> tuple[str, dict[int, Player]]:
    """A started single-deal match of two new people: its id, and who sits in each seat."""
    alice, bob = player(), player()
    match_id = alice.create(seats=["open"])["id"]
    bob.join(match_id)
    return match_id, seats_by_number([alice, bob], alice.detail(match_id))


@contextmanager
def snapshots_counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Records, for each read of a snapshot, whether one was found."""
    found: list[bool] = []
    real = snapshots.snapshot_get

    def counted(match_id: Any, version: Any) -> Any:
        snapshot = real(match_id, version)
        found.append(snapshot is not None)
        return snapshot

    with monkeypatch.context() as patch:
        patch.setattr(snapshots, "snapshot_get", counted)
        yield found


def from_database(client: APIClient, match_id: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The same GET with no snapshot to be found: read from the database."""
    with monkeypatch.context() as patch:
        patch.setattr(snapshots, "snapshot_get", lambda match_id, version: None)
        return client.get(url(match_id))


def both_ways(client: APIClient, match_id: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The detail from the snapshot (asserting one was found) and from the database: the
    same status, body and ETag."""
    with snapshots_counted(monkeypatch) as found:
        cached = client.get(url(match_id))
    assert found == [True], "no snapshot was kept for this version"
    fresh = from_database(client, match_id, monkeypatch)
    assert cached.status_code == fresh.status_code
    assert cached.json() == fresh.json()
    if fresh.status_code == 200:
        assert cached["ETag"] == fresh["ETag"]
    return cached


def test_the_read_after_a_move_costs_the_token_and_the_version(
    player: Callable[..., Player],
    django_assert_num_queries: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match_id, at = started_match(player)
    turn = at[0].detail(match_id)["current_deal"]["turn"]
    at[turn].play_first_legal(match_id)
    waiting = at[1 - turn]
    with django_assert_num_queries(2):  # the token, the version
        response = waiting.client.get(url(match_id))
    assert response.status_code == 200
    assert response.json()["current_deal"]["ply"] == 1
    both_ways(waiting.client, match_id, monkeypatch)


def test_every_viewer_gets_what_the_database_says_at_every_ply(
    player: Callable[..., Player],
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A public 4-player match of three people and a bot, to its end: after each move,
    each player, a stranger and an administrator read the snapshot, and each gets the body
    and ETag the database gives them."""
    people = [player() for _ in range(3)]
    match_id = people[0].create(players=4, seats=["open", "open", {"bot": "greedy"}], public=True)[
        "id"
    ]
    for person in people[1:]:
        person.join(match_id)
    viewers = [p.client for p in people] + [
        auth_client(user_factory(username="stranger")),
        auth_client(user_factory(username="admin", is_staff=True, is_superuser=True)),
    ]
    at = seats_by_number(people, people[0].detail(match_id))
    plies = 0
    while True:
        detail = people[0].detail(match_id)
        if detail["status"] != "active":
            break
        at[detail["current_deal"]["turn"]].play_first_legal(match_id)
        plies += 1
        # the bot's reply, if it followed, kept a snapshot of its own
        for client in viewers:
            both_ways(client, match_id, monkeypatch)
    assert plies >= 30 and detail["status"] == "finished"


def test_a_private_match_stays_private(
    player: Callable[..., Player], monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob, eve = player(), player(), player()
    match_id = alice.create(seats=[{"user": bob.name}])["id"]
    bob.join(match_id)
    at = seats_by_number([alice, bob], alice.detail(match_id))
    at[alice.detail(match_id)["current_deal"]["turn"]].play_first_legal(match_id)
    response = both_ways(eve.client, match_id, monkeypatch)
    assert response.status_code == 403
    assert response.json()["code"] == "match_private"


def test_a_move_rolled_back_keeps_no_snapshot(
    player: Callable[..., Player], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot is kept when the move commits: a move undone after it was written (here
    by the response failing inside an Idempotency-Key's transaction) leaves none behind,
    and the version it would have had is reached again by another card."""
    match_id, at = started_match(player)
    view = at[0].detail(match_id)["current_deal"]
    mover = at[view["turn"]]
    legal = mover.detail(match_id)["current_deal"]["legal"]

    def crash(self: Any, user: Any) -> Any:
        raise RuntimeError("the response failed after the move was written")

    with monkeypatch.context() as patch:
        patch.setattr(selectors.MatchSnapshot, "detail_for", crash)
        with pytest.raises(RuntimeError):
            mover.client.post(
                f"{url(match_id)}/moves",
                {"card": legal[0], "ply": 0},
                format="json",
                HTTP_IDEMPOTENCY_KEY="rolled-back-move-1",
            )
    pk = Match.objects.get().pk
    assert snapshots.snapshot_get(pk, ("active", 2, 1, 1, 0, 0)) is None
    mover.move(match_id, legal[-1], 0)
    shown = both_ways(mover.client, match_id, monkeypatch).json()["current_deal"]
    assert shown["ply"] == 1 and [t["card"] for t in shown["table"]] == [legal[-1]]


def test_without_the_cache_the_database_answers(
    player: Callable[..., Player], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis down: moves and reads go on (a warning is logged), from the database."""
    match_id, at = started_match(player)
    cache = caches["default"]

    def down(*args: Any, **kwargs: Any) -> Any:
        raise RedisConnectionError("Connection refused")

    with monkeypatch.context() as patch, caplog.at_level(logging.WARNING, snapshots.__name__):
        patch.setattr(cache, "get", down)
        patch.setattr(cache, "set", down)
        for _ in range(4):
            turn = at[0].detail(match_id)["current_deal"]["turn"]
            at[turn].play_first_legal(match_id)
        shown = at[turn].detail(match_id)["current_deal"]
    assert shown["ply"] == 4
    warnings = {
        r.getMessage()
        for r in caplog.records
        if r.name == snapshots.__name__ and r.levelno == logging.WARNING
    }
    assert warnings == {
        "snapshot cache unavailable, reading the database: Connection refused",
        "snapshot cache unavailable, not kept: Connection refused",
    }, caplog.records
    assert snapshots.snapshot_get(Match.objects.get().pk, ("active", 2, 1, 4, 0, 0)) is None


def test_a_snapshot_of_another_layout_is_not_read(
    player: Callable[..., Player], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an older release kept (another LAYOUT) is never unpickled by this one."""
    match_id, at = started_match(player)
    at[at[0].detail(match_id)["current_deal"]["turn"]].play_first_legal(match_id)
    pk, version = Match.objects.get().pk, ("active", 2, 1, 1, 0, 0)
    assert snapshots.snapshot_get(pk, version) is not None
    monkeypatch.setattr(snapshots, "LAYOUT", snapshots.LAYOUT + 1)
    assert snapshots.snapshot_get(pk, version) is None


def moves_url(match_id: str) -> str:
    return f"{url(match_id)}/moves"


def test_a_move_on_a_kept_snapshot_reads_nothing_else(
    player: Callable[..., Player], django_assert_max_num_queries: Any
) -> None:
    """With the snapshot of the version it finds under the lock, a move reads neither the
    seats, the deals nor the move log: the token, the lock, the version, the insert, the
    update of who is to move by when (games.clocks), and the transaction's own statements."""
    match_id, at = started_match(player)
    turn = at[0].detail(match_id)["current_deal"]["turn"]
    at[turn].play_first_legal(match_id)  # no snapshot yet (a join made the version): read
    second = at[1 - turn]
    view = second.detail(match_id)["current_deal"]
    with django_assert_max_num_queries(7) as captured:
        response = second.client.post(
            moves_url(match_id), {"card": view["legal"][0], "ply": view["ply"]}, format="json"
        )
    assert response.status_code == 201, response.content
    reads = [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().startswith("SELECT")]
    assert len(reads) == 3, reads  # the token, the lock, the version
    assert response.json()["current_deal"]["ply"] == 2


def test_moves_refused_on_a_kept_snapshot_as_on_the_database(
    player: Callable[..., Player], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same refusals, with the same details, whether the move was checked against the
    snapshot or against the rows: a stale ply, a stranger, a card not in hand, out of
    turn."""
    match_id, at = started_match(player)
    eve = player()
    at[at[0].detail(match_id)["current_deal"]["turn"]].play_first_legal(match_id)
    view = at[0].detail(match_id)["current_deal"]
    mover, waiting = at[view["turn"]], at[1 - view["turn"]]
    hand = mover.detail(match_id)["current_deal"]["hand"]
    other_hand = waiting.detail(match_id)["current_deal"]["hand"]
    attempts = [
        (mover, {"card": hand[0], "ply": 0}),
        (eve, {"card": hand[0], "ply": 1}),
        (mover, {"card": other_hand[0], "ply": 1}),
        (waiting, {"card": other_hand[0], "ply": 1}),
    ]

    def answers() -> list[tuple[int, Any]]:
        out = []
        for who, body in attempts:
            response = who.client.post(moves_url(match_id), body, format="json")
            out.append((response.status_code, response.json()))
        return out

    with snapshots_counted(monkeypatch) as found:
        on_snapshot = answers()
    assert found and all(found), "the moves were not checked against a snapshot"
    with monkeypatch.context() as patch:
        patch.setattr(snapshots, "snapshot_get", lambda match_id, version: None)
        on_database = answers()
    assert on_snapshot == on_database
    codes = [body["code"] for _, body in on_snapshot]
    assert codes == [
        "stale_ply",
        "not_a_player",
        "card_not_in_hand",
        "not_your_turn",
    ], on_snapshot
    assert on_snapshot[0][1]["details"] == {"current_ply": 1, "your_ply": 0}
    assert at[0].detail(match_id)["current_deal"]["ply"] == 1  # nothing was written


def test_something_else_under_a_snapshot_key_is_not_served(
    player: Callable[..., Player], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever else the cache holds under the key (another program, a mistake) is a miss."""
    match_id, at = started_match(player)
    turn = at[0].detail(match_id)["current_deal"]["turn"]
    at[turn].play_first_legal(match_id)
    pk, version = Match.objects.get().pk, ("active", 2, 1, 1, 0, 0)
    caches["default"].set(snapshots._key(pk, version), {"status": "forged"}, timeout=30)
    assert snapshots.snapshot_get(pk, version) is None
    response = from_database(at[turn].client, match_id, monkeypatch)
    assert at[turn].client.get(url(match_id)).json() == response.json()
    assert response.json()["current_deal"]["ply"] == 1
