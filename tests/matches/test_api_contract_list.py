"""GET /api/v1/matches: pagination, filters, who sees which match (issue #3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"


@pytest.fixture
def world(player: Callable[..., Player]) -> dict[str, Any]:
    """Alice's and Bob's matches, as Alice's list should (or should not) show them."""
    alice, bob, carol = player("alice"), player("bob"), player("carol")
    ids = {
        "alice_private_active": alice.create()["id"],
        "bob_private_active": bob.create()["id"],
        "bob_public_active": bob.create(public=True)["id"],
        "bob_open_waiting": bob.create(seats=["open"])["id"],
        "bob_invites_carol": bob.create(seats=[{"user": "carol"}])["id"],
        "bob_invites_alice": bob.create(seats=[{"user": "alice"}])["id"],
    }
    aborted = bob.create(seats=["open"])["id"]
    bob.post(f"{URL}/{aborted}/abort")
    ids["bob_open_aborted"] = aborted
    return {"alice": alice, "bob": bob, "carol": carol, "ids": ids}


def _ids(page: dict[str, Any]) -> set[str]:
    return {m["id"] for m in page["results"]}


@pytest.mark.django_db
def test_list_is_paginated_and_shows_only_what_the_caller_may_see(world: dict[str, Any]) -> None:
    alice, ids = world["alice"], world["ids"]
    page = alice.get(URL)
    assert set(page) == {"count", "next", "previous", "results"}
    assert page["previous"] is None and page["next"] is None
    visible = {
        ids["alice_private_active"],
        ids["bob_public_active"],
        ids["bob_open_waiting"],
        ids["bob_invites_alice"],
    }
    assert _ids(page) == visible
    assert page["count"] == len(visible)
    summary = next(m for m in page["results"] if m["id"] == ids["alice_private_active"])
    assert summary["status"] == "active"
    assert [s["user"] for s in summary["seats"]] == ["alice", "bot-greedy"]
    assert set(summary) == {
        "id",
        "players",
        "format",
        "options",
        "status",
        "public",
        "rated",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
        "seats",
        "deals_won",
        "winner",
        "end_reason",
        "time_control",
        "on_timeout",
        "timeout_bot",
        "to_move",
        "deadline",
        "seconds_left",
        "expires_at",
        "rematch_of",
    }  # a summary: no deal, no cards
    # Newest first.
    created = [m["created_at"] for m in page["results"]]
    assert created == sorted(created, reverse=True)


@pytest.mark.django_db
def test_private_matches_of_others_are_hidden_public_and_open_ones_listed(
    world: dict[str, Any],
) -> None:
    carol, ids = world["carol"], world["ids"]
    listed = _ids(carol.get(URL))
    assert ids["bob_public_active"] in listed
    assert ids["bob_open_waiting"] in listed
    assert ids["bob_invites_carol"] in listed  # invited: it is hers to answer
    assert ids["bob_private_active"] not in listed
    assert ids["alice_private_active"] not in listed
    assert ids["bob_invites_alice"] not in listed
    assert ids["bob_open_aborted"] not in listed


@pytest.mark.django_db
def test_filters_status_mine_open(world: dict[str, Any]) -> None:
    alice, bob, ids = world["alice"], world["bob"], world["ids"]
    # "mine": the matches with a seat of the caller's, an invitation's reserved seat too.
    assert _ids(alice.get(URL, {"mine": "true"})) == {
        ids["alice_private_active"],
        ids["bob_invites_alice"],
    }
    assert _ids(world["carol"].get(URL, {"mine": "true"})) == {ids["bob_invites_carol"]}
    # Open seats, and the invitations to the caller (games.clocks: issue 14).
    assert _ids(alice.get(URL, {"open": "true"})) == {
        ids["bob_open_waiting"],
        ids["bob_invites_alice"],
    }
    assert _ids(alice.get(URL, {"status": "active"})) == {
        ids["alice_private_active"],
        ids["bob_public_active"],
    }
    assert _ids(alice.get(URL, {"status": "waiting"})) == {
        ids["bob_open_waiting"],
        ids["bob_invites_alice"],
    }
    assert _ids(alice.get(URL, {"status": "finished"})) == set()
    assert _ids(bob.get(URL, {"status": "aborted"})) == {ids["bob_open_aborted"]}
    assert _ids(bob.get(URL, {"mine": "true", "status": "active"})) == {
        ids["bob_private_active"],
        ids["bob_public_active"],
    }
    assert _ids(bob.get(URL, {"mine": "false"})) >= {ids["bob_private_active"]}


@pytest.mark.django_db
def test_pages_link_to_each_other(world: dict[str, Any]) -> None:
    bob = world["bob"]
    first = bob.get(URL, {"page_size": 2})
    assert first["count"] == 6 and len(first["results"]) == 2
    assert first["previous"] is None and "page=2" in first["next"]
    seen = _ids(first)
    page = first
    while page["next"]:
        page = bob.get(page["next"])
        assert page["previous"] is not None
        assert not seen & _ids(page)
        seen |= _ids(page)
    assert seen == set(world["ids"].values()) - {world["ids"]["alice_private_active"]}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "playing"}, "status"),
        ({"mine": "maybe"}, "mine"),
        ({"open": "2"}, "open"),
        ({"page_size": "0"}, "page_size"),
        ({"page_size": "ten"}, "page_size"),
        ({"page": "0"}, "page"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_filter_is_invalid_input(
    player: Callable[..., Player], params: dict[str, str], field: str
) -> None:
    alice = player("alice")
    error = alice.error("get", URL, params, 400, "invalid_input")
    assert field in error["details"]


@pytest.mark.django_db
def test_page_size_over_100_is_refused_not_capped(player: Callable[..., Player]) -> None:
    """A page size outside 1..100 is refused (the client learns the limit)
    rather than silently capping it; 100 itself is a page size."""
    alice = player("alice")
    for _ in range(3):
        alice.create()
    for size in (101, 1000):
        error = alice.error("get", URL, {"page_size": size}, 400, "invalid_input")
        assert error["details"] == {
            "page_size": ["Ensure this value is less than or equal to 100."]
        }
    page = alice.get(URL, {"page_size": 100})
    assert page["count"] == 3 and len(page["results"]) == 3


@pytest.mark.django_db
def test_a_page_past_the_end_is_a_json_404(player: Callable[..., Player]) -> None:
    alice = player("alice")
    alice.create()
    alice.error("get", URL, {"page": 5}, 404, "not_found")


@pytest.mark.django_db
def test_drf_format_switch_is_not_taken_for_a_filter(player: Callable[..., Player]) -> None:
    alice = player("alice")
    match_id = alice.create()["id"]
    assert alice.get(URL, {"format": "json", "mine": "true"})["count"] == 1
    feed = alice.get(f"{URL}/{match_id}/events", {"format": "json", "after": 2})
    assert [e["id"] for e in feed["events"]] == list(range(3, feed["last_id"] + 1))
