"""The fair queues themselves (briscola_service.fair_queues), on Redis: whose item is next."""

from __future__ import annotations

import pytest

from briscola_service import fair_queues

pytestmark = pytest.mark.redis

POOL = "pool"


def take_item(limit: int = 2) -> str | None:
    taken = fair_queues.take(POOL, limit=limit, lease_seconds=30).taken
    if taken is not None:
        fair_queues.release(taken)
    return None if taken is None else f"{taken.account}/{taken.item}"


def test_accounts_take_turns_and_each_keeps_its_own_order() -> None:
    for item in ("f1", "f2", "f3"):
        assert fair_queues.push(POOL, "flood", item)
    assert fair_queues.push(POOL, "other", "o1")
    assert not fair_queues.push(POOL, "flood", "f2")  # already queued: keeps its place
    taken = [take_item() for _ in range(5)]
    assert taken == ["flood/f1", "other/o1", "flood/f2", "flood/f3", None]


def test_an_account_back_with_a_new_item_goes_before_those_served_since() -> None:
    for item in ("f1", "f2", "f3", "f4"):
        fair_queues.push(POOL, "flood", item)
    fair_queues.push(POOL, "player", "p1")
    assert [take_item(), take_item(), take_item()] == ["flood/f1", "player/p1", "flood/f2"]
    # The player's next reply (after its next move): it was served before the flood's f2,
    # so it goes first, not behind the flood.
    fair_queues.push(POOL, "player", "p2")
    assert [take_item(), take_item()] == ["player/p2", "flood/f3"]
    # An account never served joins at the back.
    fair_queues.push(POOL, "newcomer", "n1")
    fair_queues.push(POOL, "player", "p3")
    assert [take_item(), take_item(), take_item()] == ["player/p3", "flood/f4", "newcomer/n1"]
