"""GET /api/v1/matches/{id}: ETag and If-None-Match, for cheap polling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.matches.conftest import Player

pytestmark = pytest.mark.django_db


def url(match_id: str) -> str:
    return f"/api/v1/matches/{match_id}"


def test_a_read_no_snapshot_answers_costs_six_queries(
    player: Callable[..., Player], django_assert_max_num_queries: Any
) -> None:
    """Nothing kept for a match just created (only moves keep snapshots)."""
    alice = player()
    match_id = alice.create(seats=["open"])["id"]
    with django_assert_max_num_queries(6):  # token, version, match, seats, deals, moves
        assert "ETag" in alice.client.get(url(match_id))


def tag_of(player: Player, match_id: str) -> str:
    response = player.client.get(url(match_id))
    assert response.status_code == 200, response.content
    etag = response["ETag"]
    assert etag.startswith('W/"') and etag.endswith('"') and len(etag) > 10
    assert "Authorization" in response["Vary"]
    return str(etag)


def conditional(player: Player, match_id: str, etag: str) -> Any:
    return player.client.get(url(match_id), HTTP_IF_NONE_MATCH=etag)


def test_an_unchanged_match_is_304_without_a_body(player: Callable[..., Player]) -> None:
    alice = player()
    match_id = alice.create(seats=["open"])["id"]
    etag = tag_of(alice, match_id)
    for sent in (etag, etag.removeprefix("W/"), f'"other", {etag}'):
        response = conditional(alice, match_id, sent)
        assert response.status_code == 304, response.content
        assert response.content == b""
        assert response["ETag"] == etag
    assert conditional(alice, match_id, '"something else"').status_code == 200


def test_every_change_of_the_match_changes_the_tag(
    player: Callable[..., Player], django_capture_on_commit_callbacks: Any
) -> None:
    """Joining, starting, each move, a deal's end and the next deal, the end of the match
    and its rating: each gives a new tag, and the old one gets the full detail again."""
    alice, bob = player(), player()
    match_id = alice.create(seats=["open"], format="first_to_2", rated=True)["id"]
    seen = [tag_of(alice, match_id)]

    def changed() -> Any:
        """The detail the stale tag gets again, in full. alice reads nothing else: three
        deals or more at four reads a card would reach her 600 requests a minute."""
        old = seen[-1]
        response = conditional(alice, match_id, old)
        assert response.status_code == 200, "a stale tag got 304"
        assert response["ETag"] not in seen
        seen.append(response["ETag"])
        return response.json()

    bob.join(match_id)
    detail = changed()
    players = {detail["your_seat"]: alice, bob.detail(match_id)["your_seat"]: bob}
    while detail["status"] == "active":
        deal = detail["current_deal"]
        with django_capture_on_commit_callbacks(execute=True):  # rated as it ends
            players[deal["turn"]].play_first_legal(match_id)
        detail = changed()
    assert detail["rating_changes"]
    assert len(seen) > 80  # two or three deals of 40 cards


def test_a_resignation_and_an_abort_change_the_tag(player: Callable[..., Player]) -> None:
    alice, bob = player(), player()
    waiting = alice.create(seats=["open"])["id"]
    before = tag_of(alice, waiting)
    alice.post(f"/api/v1/matches/{waiting}/abort")
    assert conditional(alice, waiting, before).status_code == 200

    active = alice.create(seats=[{"user": bob.name}])["id"]
    bob.join(active)
    before = tag_of(bob, active)
    alice.post(f"/api/v1/matches/{active}/resign")
    assert conditional(bob, active, before).status_code == 200


def test_a_tag_is_good_only_for_its_viewer(player: Callable[..., Player]) -> None:
    alice, bob, carol = player(), player(), player()
    match_id = alice.create(seats=[{"user": bob.name}])["id"]
    bob.join(match_id)
    alices = tag_of(alice, match_id)
    # bob sees another detail (his own hand): alice's tag is not his
    assert conditional(bob, match_id, alices).status_code == 200
    # a stranger to this private match is refused as without the tag
    response = conditional(carol, match_id, alices)
    assert response.status_code == 403 and response.json()["code"] == "match_private"


def test_no_tag_on_errors(player: Callable[..., Player]) -> None:
    alice = player()
    response = alice.client.get(url("00000000-0000-0000-0000-000000000000"))
    assert response.status_code == 404 and "ETag" not in response
    response = alice.client.get(url("not-a-uuid"), HTTP_IF_NONE_MATCH='W/"x"')
    assert response.status_code == 404 and "ETag" not in response


def test_a_move_answers_the_tag_of_the_detail_it_returns(player: Callable[..., Player]) -> None:
    """The 201 of a move carries the ETag a GET would give (computed without a query), so
    the mover's next poll is a 304 (a rating recorded later changes it: see above)."""
    alice, bob = player(), player()
    match_id = alice.create(seats=[{"user": bob.name}], format="first_to_2")["id"]
    bob.join(match_id)
    people = {alice.detail(match_id)["your_seat"]: alice, bob.detail(match_id)["your_seat"]: bob}
    tagged = 0
    while True:
        mover = people[alice.detail(match_id)["current_deal"]["turn"]]
        deal = mover.detail(match_id)["current_deal"]
        body = {"card": deal["legal"][0], "ply": deal["ply"]}
        response = mover.client.post(f"/api/v1/matches/{match_id}/moves", body, format="json")
        assert response.status_code == 201, response.content
        again = conditional(mover, match_id, response["ETag"])
        assert again.status_code == 304, "the move's tag differs from the detail's"
        tagged += 1
        if response.json()["status"] != "active":
            break
    assert tagged >= 80  # every move, across two deals or more


def test_if_none_match_star_is_304_for_a_match_you_may_see(player: Callable[..., Player]) -> None:
    """``*`` matches any current representation (RFC 9110): 304 with the tag; a match
    that does not exist, or that the viewer may not see, answers as without it."""
    alice, bob, carol = player(), player(), player()
    match_id = alice.create(seats=[{"user": bob.name}])["id"]
    etag = tag_of(alice, match_id)
    for sent in ("*", ' "other", * '):
        response = conditional(alice, match_id, sent)
        assert response.status_code == 304, (sent, response.status_code)
        assert response.content == b"" and response["ETag"] == etag
    response = conditional(carol, match_id, "*")
    assert response.status_code == 403 and response.json()["code"] == "match_private"
    response = conditional(alice, "00000000-0000-0000-0000-000000000000", "*")
    assert response.status_code == 404 and response.json()["code"] == "match_not_found"
