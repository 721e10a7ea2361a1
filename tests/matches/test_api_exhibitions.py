"""The expert bot in any match, and exhibitions: bot-only matches that administrators create
and watch (issue #4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User
from games.matches import services
from games.models import Deal, Match, Move
from games.rules import DealRecord

if TYPE_CHECKING:
    from conftest import Player

URL = "/api/v1/matches"


def _assert_finished_with_valid_records(viewer: Player, detail: dict[str, Any]) -> None:
    assert detail["status"] == "finished" and detail["end_reason"] == "played"
    assert detail["deals"], detail
    for summary in detail["deals"]:
        assert summary["status"] == "finished"
        assert Move.objects.filter(deal_id=summary["id"]).count() == 40
        record = viewer.get(f"/api/v1/deals/{summary['id']}")["record"]
        replay = DealRecord.from_dict(record).replay()
        assert replay.complete and len(record["moves"]) == 40
        assert list(replay.deal.points) == summary["points"]
        assert replay.deal.winner == summary["winner"]
    won = [d["winner"] for d in detail["deals"]]
    assert detail["deals_won"] == [won.count(0), won.count(1)]
    # The team with more deals won; a single deal drawn 60-60 draws the match
    # (docs/rules.md, formats), which a searching bot's play may well reach.
    first, second = detail["deals_won"]
    assert detail["winner"] == (None if first == second else 0 if first > second else 1)
    if detail["winner"] is None:
        assert detail["format"] == "single" and detail["deals"][0]["points"] == [60, 60]


def _assert_spectator(detail: dict[str, Any]) -> None:
    assert detail["your_seat"] is None
    deal = detail["current_deal"]
    assert deal["seat"] is None and deal["team"] is None
    assert deal["hand"] == [] and deal["legal"] == [] and deal["partner_hand"] is None


@pytest.mark.django_db
def test_any_match_may_seat_the_expert_with_its_time_budget(
    player: Callable[..., Player],
    play_out: Callable[..., Any],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.BOT_THINK_MS = 7
    calls: list[tuple[str, float]] = []
    choose = services.choose_card

    def spy(level: str, view: Any, **options: Any) -> Any:
        calls.append((level, options["budget_ms"]))
        return choose(level, view, **options)

    monkeypatch.setattr(services, "choose_card", spy)
    alice = player("alice")
    created = alice.create(players=2, seats=[{"bot": "expert"}])
    assert created["seats"][1]["user"] == "bot-expert"
    assert created["seats"][1]["bot_level"] == "expert"
    final = play_out(created["id"], [alice])
    _assert_finished_with_valid_records(alice, final)
    assert calls == [("expert", 7)] * 20


@pytest.mark.django_db
def test_staff_exhibition_greedy_vs_random_first_to_2(player: Callable[..., Player]) -> None:
    root = player("root", is_staff=True, is_superuser=True)
    created = root.create(
        players=2, format="first_to_2", seats=[{"bot": "greedy"}, {"bot": "random"}]
    )
    assert created["created_by"] == "root"
    assert [(s["seat"], s["user"], s["bot_level"]) for s in created["seats"]] == [
        (0, "bot-greedy", "greedy"),
        (1, "bot-random", "random"),
    ]
    assert all(s["is_bot"] and s["joined"] for s in created["seats"])
    _assert_spectator(created)
    # The bots played the whole match on their own, one reply queuing the next.
    final = root.detail(created["id"])
    _assert_finished_with_valid_records(root, final)
    assert 2 in final["deals_won"]
    _assert_spectator(final)
    assert not Match.objects.get(pk=created["id"]).seats.filter(user=root.user).exists()


@pytest.mark.django_db
def test_staff_exhibition_four_players_expert_and_greedy(
    player: Callable[..., Player], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.BOT_THINK_MS = 5  # keep the expert quick
    budgets: list[float] = []
    choose = services.choose_card

    def spy(level: str, view: Any, **options: Any) -> Any:
        budgets.append(options["budget_ms"])
        return choose(level, view, **options)

    monkeypatch.setattr(services, "choose_card", spy)
    root = player("root", is_staff=True, is_superuser=True)
    created = root.create(
        players=4,
        seats=[{"bot": "expert"}, {"bot": "greedy"}, {"bot": "expert"}, {"bot": "greedy"}],
    )
    assert [s["user"] for s in created["seats"]] == [
        "bot-expert",
        "bot-greedy",
        "bot-expert-2",
        "bot-greedy-2",
    ]
    final = root.detail(created["id"])
    _assert_finished_with_valid_records(root, final)
    assert len(final["current_deal"]["tricks"]) == 10
    assert len(budgets) == 40 and set(budgets) == {5}


@pytest.mark.django_db
def test_an_exhibition_is_for_staff_only(player: Callable[..., Player]) -> None:
    alice = player("alice")
    for players, seats in (
        (2, [{"bot": "greedy"}, {"bot": "random"}]),
        (4, [{"bot": "expert"}] * 4),
    ):
        body = alice.error(
            "post", URL, {"players": players, "seats": seats}, 403, "exhibition_admins_only"
        )
        assert "admin" in body["message"]
    assert not Match.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("players", "seats"),
    [
        (2, [{"bot": "greedy"}, "open"]),
        (2, ["open", {"bot": "greedy"}]),
        (2, [{"user": "bob"}, {"bot": "greedy"}]),
        (4, [{"bot": "greedy"}, {"bot": "random"}, {"bot": "expert"}, {"user": "bob"}]),
    ],
)
@pytest.mark.parametrize("staff", [True, False])
def test_every_seat_of_an_exhibition_is_a_bot(
    player: Callable[..., Player], players: int, seats: list[Any], staff: bool
) -> None:
    player("bob")
    creator = player("root", is_staff=staff)
    body = creator.error("post", URL, {"players": players, "seats": seats}, 400, "invalid_match")
    assert "seats" in body["details"]
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_unknown_level_and_too_many_seats_in_an_exhibition(player: Callable[..., Player]) -> None:
    root = player("root", is_staff=True, is_superuser=True)
    body = root.error(
        "post",
        URL,
        {"players": 2, "seats": [{"bot": "grandmaster"}, {"bot": "greedy"}]},
        400,
        "invalid_match",
    )
    assert body["details"] == {"seat": 0, "bot": "grandmaster"}
    root.error("post", URL, {"players": 2, "seats": [{"bot": "greedy"}] * 3}, 400, "invalid_match")
    root.error("post", URL, {"players": 4, "seats": [{"bot": "greedy"}] * 5}, 400, "invalid_input")
    assert not Match.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("public", [False, True])
def test_who_sees_an_exhibition(player: Callable[..., Player], public: bool) -> None:
    root, other_admin, alice = (
        player("root", is_staff=True, is_superuser=True),
        player("admin2", is_staff=True, is_superuser=True),
        player("alice"),
    )
    match_id = root.create(seats=[{"bot": "greedy"}, {"bot": "random"}], public=public)["id"]
    for admin in (root, other_admin):
        _assert_spectator(admin.detail(match_id))
        assert admin.events(match_id)["events"][-1]["type"] == "match_ended"
    if public:
        detail = alice.detail(match_id)
        _assert_spectator(detail)
        assert detail["status"] == "finished"
        events = alice.events(match_id)["events"]
        assert sum(e["type"] == "card_played" for e in events) == 40
        listed = alice.get(URL)["results"]
        assert [m["id"] for m in listed] == [match_id]
    else:
        alice.error("get", f"{URL}/{match_id}", None, 403, "match_private")
        alice.error("get", f"{URL}/{match_id}/events", None, 403, "match_private")
        assert alice.get(URL)["results"] == []
    # The creator is not a player: no moves, no resigning.
    root.error("post", f"{URL}/{match_id}/moves", {"card": "Ad", "ply": 0}, 403, "not_a_player")
    root.error("post", f"{URL}/{match_id}/resign", None, 403, "not_a_player")
    assert not alice.get(URL, {"mine": "true"})["results"]
    assert not root.get(URL, {"mine": "true"})["results"]


@pytest.mark.django_db(transaction=True)
def test_a_long_exhibition_runs_in_process_with_real_commits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a broker each bot reply runs at its move's commit: the replies must run one
    after another, not nested (a first_to_3 match is 120 moves or more), and each bot
    thinks outside any transaction, so it holds no lock on the match while it thinks."""
    in_transaction: list[bool] = []
    choose = services.choose_card

    def spy(level: str, view: Any, **options: Any) -> Any:
        in_transaction.append(connection.in_atomic_block)
        return choose(level, view, **options)

    monkeypatch.setattr(services, "choose_card", spy)
    root = User.objects.create(username="root", is_staff=True, is_superuser=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=root).key}")
    response = client.post(
        URL,
        {"players": 2, "format": "first_to_3", "seats": [{"bot": "random"}, {"bot": "random"}]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "finished"  # played within the request, in-process
    assert max(body["deals_won"]) == 3
    deals = Deal.objects.filter(match_id=body["id"])
    assert all(Move.objects.filter(deal=d).count() == 40 for d in deals)
    assert len(in_transaction) == 40 * deals.count() >= 120
    assert not any(in_transaction)
