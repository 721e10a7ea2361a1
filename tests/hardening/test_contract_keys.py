"""The keys of every body that carries a deal's cards, pinned: a new field is a decision.

The secrecy audit (:mod:`leak_audit`) checks the parts of finished-deal content it knows
against the deal's truth and searches the rest; these sets say what the rest is today. A
field added to an event, an export, a record, a replay or a verify fails here first, so
whoever adds it says whether it may carry cards (and the audit is taught about it).

A first_to_2 match between alice and bob is played through the services until its first
deal is over and its second has begun; each body is read through the API as alice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User

pytestmark = pytest.mark.django_db

API = "/api/v1"
RULES_EVENTS = {
    "deal_started": {"type", "dealer", "first_to_play", "briscola"},
    "hand_dealt": {"type", "seat", "cards"},
    "card_played": {"type", "ply", "seat", "card"},
    "trick_won": {"type", "trick", "cards", "winner", "points"},
    "card_drawn": {"type", "seat", "card", "briscola"},
    "deal_ended": {"type", "points", "winner", "drawn"},
}
# What the events feed adds to the rules' events: an id, when it happened (`at`), the
# deal; the deal's number and commitment when it starts, its seed when it ends.
FEED_EVENTS = {
    "match_created": {"id", "at", "type", "players", "format"},
    "match_started": {"id", "at", "type", "seats"},
    **{kind: keys | {"id", "at", "deal"} for kind, keys in RULES_EVENTS.items()},
}
FEED_EVENTS["deal_started"] |= {"number", "commitment"}
FEED_EVENTS["deal_ended"] |= {"seed"}
# A replay's steps: the rules' events, each with its step number and the ply it follows.
REPLAY_STEPS = {kind: keys | {"step", "at_ply"} for kind, keys in RULES_EVENTS.items()}
RECORD = {"format", "players", "dealer", "seed", "commitment", "deck", "moves", "result"}
MATCH_EXPORT = {"match", "players", "seats", "deals"}
MATCH_EXPORT_DEAL = {"id", "number", "status", "record"}
DEAL_RECORD = {
    "id",
    "match",
    "number",
    "status",
    "dealer",
    "seed",
    "commitment",
    "complete",
    "points",
    "final_points",
    "winner",
    "record",
    "initial_hands",
    "tricks",
    "draws",
}
DEAL_RECORD_RECORD = {"format", "players", "dealer", "seed", "deck", "moves"}
REPLAY = {"match", "deal", "seat", "your_seat", "ply", "plies", "position", "steps"}
REPLAY_DEAL = {
    "id",
    "match",
    "number",
    "status",
    "players",
    "dealer",
    "commitment",
    "seed",
    "points",
    "winner",
}
SEAT_VIEW = {
    "players",
    "dealer",
    "seat",
    "team",
    "ply",
    "turn",
    "leader",
    "trump",
    "briscola",
    "briscola_on_table",
    "briscola_holder",
    "stock_count",
    "hand",
    "hand_sizes",
    "partner_hand",
    "legal",
    "table",
    "tricks",
    "points",
    "over",
    "winner",
}
FULL_VIEW = SEAT_VIEW | {"deck", "draws", "hands", "initial_hands", "moves", "stock"}
VERIFY = {"deal", "algorithm", "seed", "commitment", "ok", "checks"}
VERIFY_CHECK = {"name", "ok", "detail"}


def key_sets(events: list[dict[str, Any]]) -> dict[str, set[str]]:
    """The keys of each type of event; every event of a type has the same keys."""
    found: dict[str, set[frozenset[str]]] = defaultdict(set)
    for event in events:
        found[event["type"]].add(frozenset(event))
    assert all(len(shapes) == 1 for shapes in found.values()), dict(found)
    return {kind: set(next(iter(shapes))) for kind, shapes in found.items()}


@pytest.fixture
def match_two_deals(
    games: Any,
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
) -> tuple[APIClient, Any, int, int]:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob, format="first_to_2")
    games.play(match, 45)  # deal 1 is over, deal 2 has 5 moves
    first, live = list(match.deals.order_by("number").values_list("pk", flat=True))
    return auth_client(alice), match, first, live


def get(client: APIClient, url: str, params: Any = None) -> Any:
    response = client.get(f"{API}{url}", params)
    assert response.status_code == 200, (url, response.content[:300])
    return response.json()


def test_the_events_feed_keys(match_two_deals: tuple[APIClient, Any, int, int]) -> None:
    client, match, first, live = match_two_deals
    events = get(client, f"/matches/{match.pk}/events")["events"]
    assert key_sets(events) == FEED_EVENTS
    assert {e.get("deal") for e in events} == {None, first, live}


def test_the_export_and_record_keys(match_two_deals: tuple[APIClient, Any, int, int]) -> None:
    client, match, first, _ = match_two_deals
    exported = get(client, f"/matches/{match.pk}/export")
    assert set(exported) == MATCH_EXPORT
    assert [d["id"] for d in exported["deals"]] == [first]
    assert set(exported["deals"][0]) == MATCH_EXPORT_DEAL
    assert set(exported["deals"][0]["record"]) == RECORD
    assert set(get(client, f"/deals/{first}/export")) == RECORD
    record = get(client, f"/deals/{first}")
    assert set(record) == DEAL_RECORD
    assert set(record["record"]) == DEAL_RECORD_RECORD
    verify = get(client, f"/deals/{first}/verify")
    assert set(verify) == VERIFY
    assert verify["checks"] and all(set(c) == VERIFY_CHECK for c in verify["checks"])


def test_the_replay_keys(match_two_deals: tuple[APIClient, Any, int, int]) -> None:
    client, _, first, live = match_two_deals
    for deal, params, view in (
        (first, {}, FULL_VIEW),
        (first, {"seat": 1, "ply": 20}, SEAT_VIEW),
        (live, {"seat": 0}, SEAT_VIEW),
    ):
        replay = get(client, f"/deals/{deal}/replay", params)
        assert set(replay) == REPLAY, params
        assert set(replay["deal"]) == REPLAY_DEAL, params
        assert set(replay["position"]) == view, params
        expected = (
            REPLAY_STEPS
            if deal == first and "ply" not in params
            else {k: v for k, v in REPLAY_STEPS.items() if k != "deal_ended"}
        )
        assert key_sets(replay["steps"]) == expected, params
