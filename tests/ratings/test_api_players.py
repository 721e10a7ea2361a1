"""The players and leaderboard API, and rating changes in a match's detail."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import Rating, RatingChange
from games import rated_games
from tests.matches.conftest import assert_error_shape

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


@pytest.fixture
def rated_history(user_factory: Any, finished_match: Any) -> dict[str, Any]:
    alice, bob, carol = (
        user_factory(username="alice"),
        user_factory(username="bob"),
        user_factory(username="carol"),
    )
    m1 = finished_match([alice, bob], winner=0, deals=[(80, 40, 0)])
    m2 = finished_match([bob, alice], winner=None, deals=[(60, 60, None)])
    private = finished_match([bob, carol], winner=0)
    for m in (m1, m2, private):
        rated_games.match_ratings_apply(match_id=m.pk)
    rated_games.ratings_sweep()
    return {"alice": alice, "bob": bob, "carol": carol, "m1": m1, "m2": m2, "private": private}


def test_player_detail(rated_history: Any, auth_client: Any) -> None:
    client = auth_client(rated_history["carol"])
    body = client.get("/api/v1/players/ALICE").json()
    assert body["username"] == "alice" and body["is_bot"] is False
    one = body["ratings"]["1v1"]
    assert one["games"] == 2 and one["provisional"] is True and one["rating"] > 1500
    assert body["ratings"]["2v2"] == {**body["ratings"]["2v2"], "rating": 1500, "games": 0}
    stats = body["stats"]["1v1"]
    assert (stats["games"], stats["wins"], stats["draws"], stats["losses"]) == (2, 1, 1, 0)
    assert (stats["deals_played"], stats["deals_won"], stats["points_per_deal"]) == (2, 1, 70.0)
    assert body["stats"]["2v2"]["points_per_deal"] is None


def test_unknown_player_and_bad_category(rated_history: Any, auth_client: Any) -> None:
    client = auth_client(rated_history["alice"])
    for url in (
        "/api/v1/players/nobody",
        "/api/v1/players/nobody/rating-history",
        "/api/v1/players/nobody/matches",
    ):
        assert_error_shape(client.get(url), 404, "player_not_found")
    assert_error_shape(
        client.get("/api/v1/players/alice/rating-history?category=3v3"), 400, "invalid_category"
    )
    assert_error_shape(client.get("/api/v1/leaderboard?category=x"), 400, "invalid_category")
    assert_error_shape(client.get("/api/v1/leaderboard?sort=x"), 400, "invalid_input")
    from rest_framework.test import APIClient

    assert_error_shape(APIClient().get("/api/v1/leaderboard"), 401, "not_authenticated")


def test_rating_history_newest_first(rated_history: Any, auth_client: Any) -> None:
    client = auth_client(rated_history["bob"])
    body = client.get("/api/v1/players/alice/rating-history?category=1v1").json()
    assert body["count"] == 2
    newest, oldest = body["results"]
    assert newest["match"] == str(rated_history["m2"].pk) and newest["result"] == "draw"
    assert oldest["result"] == "win" and oldest["rating_before"] == 1500
    assert oldest["rating_after"] == newest["rating_before"]
    assert oldest["diff"] == oldest["rating_after"] - 1500
    assert client.get("/api/v1/players/alice/rating-history?category=2v2").json()["count"] == 0


def test_player_matches_visible_only_newest_first(rated_history: Any, auth_client: Any) -> None:
    alice_view = auth_client(rated_history["alice"]).get("/api/v1/players/bob/matches").json()
    ids = [m["id"] for m in alice_view["results"]]
    assert set(ids) == {str(rated_history["m1"].pk), str(rated_history["m2"].pk)}  # not private
    bob_view = auth_client(rated_history["bob"]).get("/api/v1/players/bob/matches?page_size=2")
    body = bob_view.json()
    assert body["count"] == 3 and len(body["results"]) == 2 and body["next"]
    created = [m["created_at"] for m in body["results"]]
    assert created == sorted(created, reverse=True)
    change = next(m for m in body["results"] if m["id"] == str(rated_history["private"].pk))
    assert change["rating_change"]["result"] == "win"


def test_leaderboard_only_settled_players_best_first(rated_history: Any, auth_client: Any) -> None:
    client = auth_client(rated_history["alice"])
    assert client.get("/api/v1/leaderboard").json()["count"] == 0  # all provisional
    Rating.objects.filter(user=rated_history["alice"]).update(sigma=4.0, mu=30)
    Rating.objects.filter(user=rated_history["carol"]).update(sigma=5.9, mu=31)
    body = client.get("/api/v1/leaderboard?category=1v1").json()
    assert [(e["rank"], e["username"]) for e in body["results"]] == [(1, "carol"), (2, "alice")]
    assert body["results"][0]["rating"] > body["results"][1]["rating"]
    page2 = client.get("/api/v1/leaderboard?category=1v1&page=2&page_size=1").json()
    assert [(e["rank"], e["username"]) for e in page2["results"]] == [(2, "alice")]
    assert client.get("/api/v1/leaderboard?category=2v2").json()["count"] == 0


def test_match_detail_shows_rating_changes(rated_history: Any, auth_client: Any) -> None:
    match = rated_history["m1"]
    body = auth_client(rated_history["alice"]).get(f"/api/v1/matches/{match.pk}").json()
    changes = {c["user"]: c for c in body["rating_changes"]}
    assert changes["alice"]["seat"] == 0 and changes["alice"]["diff"] > 0
    assert changes["bob"]["diff"] < 0 and changes["bob"]["result"] == "loss"


def test_admin_lists_and_recomputes(
    rated_history: Any, user_factory: Any, client: Any, snapshot: Any
) -> None:
    admin = user_factory(username="root", is_staff=True, is_superuser=True)
    client.force_login(admin)
    before = snapshot()
    for url in ("rating", "ratingchange", "playerstats"):
        assert client.get(f"/admin/accounts/{url}/").status_code == 200
    # Spoil what is stored, so that only a real recompute (run in-process here) restores it.
    Rating.objects.update(mu=1.0, sigma=1.0, games=0)
    RatingChange.objects.filter(pk=RatingChange.objects.order_by("pk")[0].pk).delete()
    assert snapshot() != before
    rating = Rating.objects.first()
    assert rating is not None
    response = client.post(
        "/admin/accounts/rating/",
        {"action": "recompute_all", "_selected_action": [rating.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert b"Recompute queued" in response.content
    assert snapshot() == before


def test_rating_history_hides_private_matches_as_the_match_list_does(
    rated_history: Any, auth_client: Any, user_factory: Any
) -> None:
    """Issue 19, item 15: a rating change names its match (id, time, result); a private
    match's is shown only to those who may see the match, as in the player's match list."""
    m1, m2, private = rated_history["m1"], rated_history["m2"], rated_history["private"]
    dave = user_factory(username="dave")
    root = user_factory(username="root", is_staff=True, is_superuser=True)

    def history(viewer: Any, name: str) -> set[str]:
        body = auth_client(viewer).get(f"/api/v1/players/{name}/rating-history").json()
        assert body["count"] == len(body["results"])
        return {c["match"] for c in body["results"]}

    def matches(viewer: Any, name: str) -> set[str]:
        body = auth_client(viewer).get(f"/api/v1/players/{name}/matches").json()
        return {m["id"] for m in body["results"]}

    ids = {str(m.pk) for m in (m1, m2, private)}
    assert history(rated_history["bob"], "bob") == ids  # one's own: every match
    assert history(rated_history["alice"], "bob") == {str(m1.pk), str(m2.pk)}
    assert history(rated_history["carol"], "bob") == {str(private.pk)}
    assert history(dave, "bob") == set()
    assert history(root, "bob") == ids  # administrators see every match
    type(m1).objects.filter(pk=m1.pk).update(public=True)
    assert history(dave, "bob") == {str(m1.pk)}
    for viewer in (rated_history["alice"], rated_history["carol"], dave, root):
        assert history(viewer, "bob") == matches(viewer, "bob")


def test_without_a_broker_the_statistics_follow_the_rating_at_once(
    user_factory: Any, finished_match: Any, auth_client: Any, celery_eager: None
) -> None:
    """Under make run there is no beat to aggregate the statistics: the rating task,
    run in-process, adds the match to them itself (no sweep called here)."""
    from games.tasks import rate_match

    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = finished_match([alice, bob], winner=0, deals=[(80, 40, 0)])
    rate_match.delay(str(match.pk))
    stats = auth_client(bob).get("/api/v1/players/alice").json()["stats"]["1v1"]
    assert (stats["games"], stats["wins"], stats["deals_won"]) == (1, 1, 1)
