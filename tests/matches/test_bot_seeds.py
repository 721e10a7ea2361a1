"""A bot's randomness is a secret of the server (issue 19, item 5).

The random bot used to be seeded with ``"{deal id}:{ply}"``, which every seat knows: an
opponent predicted the position (in sorted order) of the card it would play every time,
about one bit per move about its hidden hand. Every bot decision is now seeded with an
HMAC keyed by the server's secret over the deal's secret seed and the ply
(games.matches.services.bot_decision_seed): nothing a seat ever sees, not even the deal's
seed once it is revealed, lets anyone compute it, and the server can still reproduce
every decision.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from django.test import override_settings

from games import rules
from games.bots import choose_card
from games.matches import services
from games.models import Deal

if TYPE_CHECKING:
    from conftest import Player

pytestmark = pytest.mark.django_db


@pytest.fixture
def decisions(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every bot decision the service makes: level, the seat's view, the seed and card."""
    made: list[dict[str, Any]] = []
    choose = services.choose_card

    def spy(level: str, view: Any, **options: Any) -> Any:
        card = choose(level, view, **options)
        made.append({"level": level, "view": view, "seed": options["seed"], "card": card})
        return card

    monkeypatch.setattr(services, "choose_card", spy)
    return made


def _play_against_random(
    player: Callable[..., Player], play_out: Callable[..., Any]
) -> tuple[Player, dict[str, Any]]:
    alice = player("alice")
    created = alice.create(players=2, format="first_to_2", seats=[{"bot": "random"}])
    final = play_out(created["id"], [alice])
    assert final["status"] == "finished"
    return alice, final


def _bot_moves(match_id: str, decisions: list[dict[str, Any]]) -> list[tuple[Deal, Any]]:
    """Each decision with the deal it was made in: the bot's logged moves, in play order
    (no decision is dropped here: nothing races the bot)."""
    logged = [
        (deal, move)
        for deal in Deal.objects.filter(match_id=match_id).order_by("number")
        for move in deal.moves.filter(seat=1).order_by("ply")
    ]
    assert len(logged) == len(decisions)
    for (_, move), made in zip(logged, decisions, strict=True):
        assert move.ply == made["view"].ply and move.card == made["card"].code
    return [(deal, made) for (deal, _), made in zip(logged, decisions, strict=True)]


def _strings(value: Any) -> set[str]:
    """Every string and number in a JSON body, as text."""
    if isinstance(value, dict):
        return set().union(*(_strings(k) | _strings(v) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(set(), *(_strings(v) for v in value))
    return {str(value)} if value is not None else set()


def test_an_opponent_cannot_predict_the_random_bot(
    player: Callable[..., Player], play_out: Callable[..., Any], decisions: list[dict[str, Any]]
) -> None:
    """The attack of the issue: seed Python's generator with the public ``deal:ply`` and
    predict which of the bot's legal cards (in sorted order) it plays. It predicted all of
    them; now it does no better than chance."""
    _, final = _play_against_random(player, play_out)
    random_moves = [
        (deal, made)
        for deal, made in _bot_moves(final["id"], decisions)
        if len(made["view"].legal) > 1
    ]
    assert len(random_moves) >= 15, len(random_moves)
    hits = 0
    for deal, made in random_moves:
        view = made["view"]
        guess = random.Random(f"{deal.pk}:{view.ply}").randrange(len(view.legal))
        hits += sorted(view.legal)[guess] == made["card"]
    assert hits < len(random_moves), f"predicted {hits} of {len(random_moves)} decisions"


def test_a_bot_seed_depends_on_the_server_secret_and_the_deal_seed(
    player: Callable[..., Player],
    play_out: Callable[..., Any],
    decisions: list[dict[str, Any]],
) -> None:
    """The seed is a function of secrets only a server holds: changing the server's key, or
    the deal's own seed, with every public value (deal id, ply, match, commitment) the
    same, changes it; and it is none of the values a seat is ever shown."""
    alice, final = _play_against_random(player, play_out)
    deals = {d.pk: d for d in Deal.objects.filter(match_id=final["id"])}
    seen: set[str] = set()
    for _, body in alice.responses:
        seen |= _strings(body)
    for summary in final["deals"]:
        seen |= _strings(alice.get(f"/api/v1/deals/{summary['id']}"))
        seen |= _strings(alice.get(f"/api/v1/deals/{summary['id']}/replay"))
    assert decisions
    for made in decisions:
        seed = made["seed"]
        assert isinstance(seed, str) and len(seed) >= 32, seed
        assert seed not in seen
        assert not any(seed in text or text in seed for text in seen if len(text) >= 8)
    # Recomputed for every decision: a function of the deal's secret seed, the ply and
    # the server's key; the public ``deal:ply`` of old is not it.
    for deal in deals.values():
        for ply in (0, 17, 39):
            seed = services.bot_decision_seed(deal=deal, ply=ply)
            assert seed != f"{deal.pk}:{ply}"
            assert seed == services.bot_decision_seed(deal=deal, ply=ply)  # reproducible
            assert seed != services.bot_decision_seed(deal=deal, ply=ply + 1)
            other = Deal(pk=deal.pk, match_id=deal.match_id, seed=deal.seed + "0")
            other.commitment = deal.commitment
            assert services.bot_decision_seed(deal=other, ply=ply) != seed
            with override_settings(SECRET_KEY="another-server-secret-" + "x" * 40):
                assert services.bot_decision_seed(deal=deal, ply=ply) != seed


def test_bot_decisions_are_reproducible_on_the_server(
    player: Callable[..., Player], play_out: Callable[..., Any], decisions: list[dict[str, Any]]
) -> None:
    """The server can replay every decision: the same deal and ply give the same seed, and
    the bot's choice from that seat's view with it is the card in the move log."""
    _, final = _play_against_random(player, play_out)
    assert decisions
    for deal, made in _bot_moves(final["id"], decisions):
        view: rules.SeatView = made["view"]
        assert made["seed"] == services.bot_decision_seed(deal=deal, ply=view.ply)
        again = choose_card(made["level"], view, seed=made["seed"])
        assert again == made["card"]


def test_a_searching_bot_takes_its_whole_budget_whatever_its_cards(
    player: Callable[..., Player], monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """Timing is a channel too: the expert's search may end early (every guess scored),
    and how early depends on its own hand. Each of its cards is played only once its
    budget has passed since it began to think (the wait asked of ``time.sleep`` makes up
    the rest); the levels that do not search are not held back."""
    settings.BOT_THINK_MS = 250
    waits: list[float] = []
    monkeypatch.setattr(services.time, "sleep", waits.append)
    thought: list[float] = []
    choose = services.choose_card

    def timed(level: str, view: Any, **options: Any) -> Any:
        started = services.time.perf_counter()
        card = choose(level, view, **options)
        thought.append(services.time.perf_counter() - started)
        return card

    monkeypatch.setattr(services, "choose_card", timed)
    alice = player("alice")
    expert = alice.create(players=2, format="single", seats=[{"bot": "expert"}])
    for _ in range(3):
        alice.play_first_legal(expert["id"])
    assert len(waits) == len(thought) >= 3
    for wait, spent in zip(waits, thought, strict=True):
        assert 0 < wait <= 0.25
        assert wait + spent == pytest.approx(0.25, abs=0.02)  # the rest of the budget
    waits.clear()
    greedy = alice.create(players=2, format="single", seats=[{"bot": "greedy"}])
    for _ in range(3):
        alice.play_first_legal(greedy["id"])
    assert waits == []
