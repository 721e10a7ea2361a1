"""An administrator of the games is staff with the permission to view deals in the admin
(games.matches.selectors.ADMIN_PERMISSION; a superuser has it). A staff member without it
(made staff for another part of the admin) is a player like any other through the API: an
outside audit read every live hand and seed of a private match with such an account,
which the admin itself refused to show it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from accounts.models import User

pytestmark = pytest.mark.django_db

SEED_KEYS = ("seed", "deck", "hands")


def _staff(user_factory: Callable[..., User], name: str, *, may_view_deals: bool) -> User:
    staff = user_factory(username=name, is_staff=True)
    if may_view_deals:
        staff.user_permissions.add(Permission.objects.get(codename="view_deal"))
    return User.objects.get(pk=staff.pk)  # permissions are cached on the instance


def _reads(client: APIClient, match_id: Any, deal_id: int) -> dict[str, Any]:
    return {
        "detail": client.get(f"/api/v1/matches/{match_id}"),
        "list": client.get("/api/v1/matches"),
        "record": client.get(f"/api/v1/deals/{deal_id}"),
        "replay": client.get(f"/api/v1/deals/{deal_id}/replay"),
        "export": client.get(f"/api/v1/deals/{deal_id}/export"),
    }


def test_staff_without_the_permission_see_a_live_private_deal_as_strangers_do(
    table: Callable[..., Any],
    games: Any,
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
) -> None:
    t = table(players=2, public=False)
    games.play(t.match, 5)
    staffer = auth_client(_staff(user_factory, "staffer", may_view_deals=False))
    got = _reads(staffer, t.match.pk, t.deal.pk)
    stranger = _reads(t.clients["stranger"], t.match.pk, t.deal.pk)
    for name, response in got.items():
        assert response.status_code == stranger[name].status_code, name
        assert response.json() == stranger[name].json(), name
    assert got["detail"].json()["code"] == "match_private"
    assert got["list"].json()["count"] == 0
    for name in ("record", "replay", "export"):
        assert got[name].status_code == 404 and got[name].json()["code"] == "deal_not_found"
    # Nor may they stage exhibitions or call off others' matches.
    exhibition = staffer.post(
        "/api/v1/matches",
        {"players": 2, "seats": [{"bot": "random"}, {"bot": "greedy"}]},
        format="json",
    )
    assert exhibition.status_code == 403
    assert exhibition.json()["code"] == "exhibition_admins_only"
    waiting = t.clients["seat0"].post(
        "/api/v1/matches", {"players": 2, "seats": ["open"]}, format="json"
    )
    called_off = staffer.post(f"/api/v1/matches/{waiting.json()['id']}/abort")
    assert called_off.status_code == 403 and called_off.json()["code"] == "not_match_creator"


def test_staff_with_the_permission_to_view_deals_are_administrators(
    table: Callable[..., Any],
    games: Any,
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
) -> None:
    t = table(players=2, public=False)
    games.play(t.match, 5)
    warden = auth_client(_staff(user_factory, "warden", may_view_deals=True))
    got = _reads(warden, t.match.pk, t.deal.pk)
    assert {name: r.status_code for name, r in got.items()} == dict.fromkeys(got, 200)
    assert got["list"].json()["count"] == 1
    assert got["detail"].json()["your_seat"] is None
    assert got["export"].json()["seed"]  # what the admin shows them too, when asked
    assert (
        warden.post(
            "/api/v1/matches",
            {"players": 2, "seats": [{"bot": "random"}, {"bot": "greedy"}]},
            format="json",
        ).status_code
        == 201
    )
