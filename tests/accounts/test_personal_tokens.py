"""Bearer as well as Token; personal access tokens (several per account, named, scoped,
last used, listed and revoked through the API); third-party bot accounts (issue 16)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import AccessToken, User

pytestmark = pytest.mark.django_db

REGISTER = "/api/v1/auth/register"
ME = "/api/v1/auth/me"
TOKENS = "/api/v1/auth/tokens"
MATCHES = "/api/v1/matches"


def client(key: str, scheme: str = "Bearer") -> APIClient:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"{scheme} {key}")
    return c


def register(username: str, **extra: Any) -> str:
    response = APIClient().post(
        REGISTER, {"username": username, "password": "a-long-password-1", **extra}, format="json"
    )
    assert response.status_code == 201, response.json()
    return str(response.json()["token"])


def error(response: Any, status: int, code: str) -> dict[str, Any]:
    body = response.json()
    assert response.status_code == status, body
    assert set(body) == {"code", "message", "details"} and body["code"] == code
    return body


@pytest.mark.parametrize("scheme", ["Bearer", "Token", "bearer", "TOKEN"])
def test_bearer_and_token_both_work(scheme: str) -> None:
    key = register("alice")
    response = client(key, scheme).get(ME)
    assert response.status_code == 200 and response.json()["username"] == "alice"


def test_a_bad_bearer_is_401_and_another_scheme_is_not_a_credential() -> None:
    register("alice")
    error(client("0" * 40).get(ME), 401, "authentication_failed")
    error(client("a b").get(ME), 401, "authentication_failed")
    error(client("x", scheme="Basic").get(ME), 401, "not_authenticated")


def test_personal_tokens_created_listed_used_and_revoked() -> None:
    account = client(register("alice"))
    created = account.post(TOKENS, {"name": "my bot", "scopes": ["play"]}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["name"] == "my bot" and body["scopes"] == ["play"]
    assert body["last_used_at"] is None and body["token"].startswith(body["prefix"])
    reader = account.post(TOKENS, {"name": "dashboard"}, format="json").json()
    assert reader["scopes"] == ["read"]  # the default: read only
    # Only a hash is stored.
    assert not AccessToken.objects.filter(key_hash=body["token"]).exists()

    listed = account.get(TOKENS).json()
    assert [t["name"] for t in listed] == ["my bot", "dashboard"]
    assert all("token" not in t for t in listed)

    player = client(body["token"])
    assert player.get(ME).json()["username"] == "alice"
    match = player.post(MATCHES, {"players": 2, "seats": ["open"]}, format="json")
    assert match.status_code == 201
    used = {t["name"]: t for t in account.get(TOKENS).json()}
    assert used["my bot"]["last_used_at"] is not None
    assert used["dashboard"]["last_used_at"] is None

    assert account.delete(f"{TOKENS}/{body['id']}").status_code == 204
    error(player.get(ME), 401, "authentication_failed")
    error(account.delete(f"{TOKENS}/{body['id']}"), 404, "token_not_found")
    assert [t["name"] for t in account.get(TOKENS).json()] == ["dashboard"]
    # The account's own token still works, and so does the other personal token.
    assert account.get(ME).status_code == 200
    assert client(reader["token"]).get(ME).status_code == 200


def test_a_read_token_cannot_move_or_write() -> None:
    account = client(register("alice"))
    key = account.post(TOKENS, {"name": "r", "scopes": ["read"]}, format="json").json()["token"]
    reader = client(key)
    assert reader.get(MATCHES).status_code == 200
    body = error(
        reader.post(MATCHES, {"players": 2, "seats": [{"bot": "greedy"}]}, format="json"),
        403,
        "insufficient_scope",
    )
    assert "play" in body["message"]
    match = account.post(MATCHES, {"players": 2, "seats": [{"bot": "greedy"}]}, format="json")
    deal = match.json()["current_deal"]
    if deal["turn"] == 0:
        move = {"card": deal["legal"][0], "ply": deal["ply"]}
        error(
            reader.post(f"{MATCHES}/{match.json()['id']}/moves", move, format="json"),
            403,
            "insufficient_scope",
        )
    error(reader.post(f"{MATCHES}/{match.json()['id']}/resign"), 403, "insufficient_scope")
    # Checking a record only reads: allowed.
    check = reader.post("/api/v1/records/check", {"format": "x"}, format="json")
    assert check.status_code == 400 and check.json()["code"] == "invalid_record"


def test_personal_tokens_cannot_manage_tokens_or_the_account() -> None:
    account = client(register("alice"))
    key = account.post(TOKENS, {"name": "p", "scopes": ["read", "play"]}, format="json")
    personal = client(key.json()["token"])
    error(personal.get(TOKENS), 403, "insufficient_scope")
    error(personal.post(TOKENS, {"name": "more"}, format="json"), 403, "insufficient_scope")
    error(personal.post("/api/v1/auth/token/revoke"), 403, "insufficient_scope")
    error(personal.post(f"{ME}/bot"), 403, "insufficient_scope")


def test_token_input_is_validated_field_by_field() -> None:
    account = client(register("alice"))
    body = error(account.post(TOKENS, {"scopes": ["admin"]}, format="json"), 400, "invalid_input")
    assert set(body["details"]) == {"name", "scopes[0]"}
    assert body["details"]["scopes[0]"][0]["code"] == "invalid_choice"
    assert body["details"]["name"][0]["code"] == "required"


def test_a_third_party_bot_registers_as_a_bot_and_shows_as_one() -> None:
    key = register("my-engine", bot=True)
    me = client(key).get(ME).json()
    assert me["is_bot"] is True and me["bot_level"] is None
    user = User.objects.get(username="my-engine")
    assert user.third_party_bot and not user.is_bot  # it signs in; the workers don't play it
    alice = client(register("alice"))
    match = alice.post(MATCHES, {"players": 2, "seats": ["open"]}, format="json").json()
    joined = client(key).post(f"{MATCHES}/{match['id']}/join", {}, format="json")
    assert joined.status_code == 200
    seats = {s["user"]: s for s in joined.json()["seats"]}
    assert seats["my-engine"]["is_bot"] is True and seats["my-engine"]["bot_level"] is None
    assert seats["alice"]["is_bot"] is False
    profile = alice.get("/api/v1/players/my-engine").json()
    assert profile["is_bot"] is True


def test_an_account_switches_to_a_bot_only_before_its_first_match() -> None:
    key = register("engine")
    switched = client(key).post(f"{ME}/bot")
    assert switched.status_code == 200 and switched.json()["is_bot"] is True
    assert client(key).post(f"{ME}/bot").status_code == 200  # idempotent
    alice_key = register("alice")
    alice = client(alice_key)
    alice.post(MATCHES, {"players": 2, "seats": [{"bot": "greedy"}]}, format="json")
    error(alice.post(f"{ME}/bot"), 409, "bot_switch_refused")
    assert alice.get(ME).json()["is_bot"] is False


def test_the_leaderboard_filters_bots() -> None:
    from accounts.models import Rating

    register("person")
    register("engine", bot=True)
    for name in ("person", "engine"):
        Rating.objects.create(
            user=User.objects.get(username=name), category="1v1", mu=30.0, sigma=1.0, games=20
        )
    viewer = client(register("viewer"))

    def names(**params: str) -> set[str]:
        response = viewer.get("/api/v1/leaderboard", params)
        assert response.status_code == 200, response.json()
        return {e["username"] for e in response.json()["results"]}

    assert names() == {"person", "engine"}
    assert names(bots="exclude") == {"person"}
    assert names(bots="only") == {"engine"}
    rows = viewer.get("/api/v1/leaderboard").json()["results"]
    assert {r["username"]: r["is_bot"] for r in rows} == {"person": False, "engine": True}
    error(viewer.get("/api/v1/leaderboard", {"bots": "maybe"}), 400, "invalid_input")
