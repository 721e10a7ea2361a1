"""Fixtures of the fault tests: a private deployment per test (see stack.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from games.bots.base import beats
from games.rules import Card
from tests.faults.stack import Client, Stack, Templates, wait_for


@pytest.fixture(scope="session")
def stack_templates() -> Iterator[Templates]:
    """The session's migrated clusters, which each stack's PostgreSQL starts as a copy of."""
    templates = Templates()
    yield templates
    templates.close()


@pytest.fixture
def make_stack(tmp_path: Path, stack_templates: Templates) -> Iterator[Callable[..., Stack]]:
    """``make_stack(**settings)``: start PostgreSQL, Redis and gunicorn with these
    environment settings; closed (every process killed) after the test. On a failure the
    processes' log tails are printed. Each stack's cluster is its own: a copy of a migrated
    one with the bots' accounts (see stack.Templates), as fresh as a new one."""
    stacks: list[Stack] = []

    def make(**settings: str) -> Stack:
        stack = Stack(tmp_path / f"stack{len(stacks)}", **settings)
        stacks.append(stack)
        stack.start(stack_templates)
        return stack

    yield make
    for stack in stacks:
        print(stack.logs())
        stack.close()


def current_deal(client: Client, match_id: str) -> dict[str, Any]:
    response = client.get(f"/api/v1/matches/{match_id}")
    assert response.status_code == 200, response.text
    deal: dict[str, Any] = response.json()["current_deal"]
    return deal


def wait_for_turn(client: Client, match_id: str, timeout: float = 30) -> dict[str, Any]:
    """Poll the match until it is this client's turn; returns the current deal."""

    def my_turn() -> dict[str, Any] | None:
        deal = current_deal(client, match_id)
        return deal if deal and deal["turn"] == deal["seat"] else None

    found: dict[str, Any] = wait_for("my turn", my_turn, timeout, interval=0.05)
    return found


def wait_to_lead(client: Client, match_id: str, timeout: float = 30) -> dict[str, Any]:
    """Play on until this client is to lead a trick of a 2-player deal, so that its next
    card is answered by the other seat; returns the current deal. It answers with a card
    that takes the trick when it has one (the first legal card could lose every trick to
    the end of the deal, and then it never leads)."""
    deadline = time.monotonic() + timeout
    while True:
        deal = wait_for_turn(client, match_id, max(1.0, deadline - time.monotonic()))
        if deal["ply"] % 2 == 0:
            return deal
        led = Card.from_code(deal["table"][0]["card"])
        legal = [Card.from_code(code) for code in deal["legal"]]
        taking = [card for card in legal if beats(card, led, deal["trump"])]
        body = {"card": (taking or legal)[0].code, "ply": deal["ply"]}
        response = client.post(f"/api/v1/matches/{match_id}/moves", body)
        assert response.status_code == 201, response.text


def move_log(stack: Stack, match_id: str) -> list[tuple[int, int, int, str]]:
    """(deal number, ply, seat, card) of every stored move of the match, in order."""
    rows = stack.sql(
        "SELECT d.number, m.ply, m.seat, m.card FROM games_move m "
        "JOIN games_deal d ON d.id = m.deal_id WHERE d.match_id = %s "
        "ORDER BY d.number, m.ply",
        match_id,
    )
    return [(int(n), int(p), int(s), str(c)) for n, p, s, c in rows]


def assert_log_whole(log: list[tuple[int, int, int, str]]) -> None:
    """Each deal's plies run 0, 1, 2, ... with no gap and no duplicate."""
    by_deal: dict[int, list[int]] = {}
    for number, ply, _, _ in log:
        by_deal.setdefault(number, []).append(ply)
    for number, plies in by_deal.items():
        assert plies == list(range(len(plies))), (number, plies)
