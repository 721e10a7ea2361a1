from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

REGISTER = "/api/v1/auth/register"
TOKEN = "/api/v1/auth/token"
REVOKE = "/api/v1/auth/token/revoke"
ME = "/api/v1/auth/me"


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == code
    assert isinstance(body["message"], str) and body["message"]
    assert isinstance(body["details"], dict)
    return body


def register(client: APIClient, username: str, password: str = "a-long-password-1") -> Any:
    return client.post(REGISTER, {"username": username, "password": password}, format="json")


def with_token(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_register_returns_a_token_that_works(api_client: APIClient) -> None:
    response = register(api_client, "alice")
    assert response.status_code == 201
    body = response.json()
    assert body["username"] == "alice"

    me = with_token(body["token"]).get(ME)
    assert me.status_code == 200
    assert me.json()["username"] == "alice"
    assert me.json()["is_bot"] is False
    assert me.json()["bot_level"] is None  # null for people, as everywhere else
    assert "date_joined" in me.json()


def test_register_duplicate_username_is_409(api_client: APIClient) -> None:
    assert register(api_client, "alice").status_code == 201
    assert_error(register(api_client, "alice"), 409, "username_taken")
    assert_error(register(api_client, "ALICE"), 409, "username_taken")


def test_register_weak_password_is_400(api_client: APIClient) -> None:
    body = assert_error(register(api_client, "bob", "123"), 400, "invalid_registration")
    assert body["details"]["password"]


def test_register_bot_prefix_is_reserved(api_client: APIClient) -> None:
    body = assert_error(register(api_client, "bot-random"), 400, "invalid_registration")
    assert body["details"]["username"]


def test_register_missing_fields_is_invalid_input(api_client: APIClient) -> None:
    body = assert_error(api_client.post(REGISTER, {}, format="json"), 400, "invalid_input")
    assert set(body["details"]) == {"username", "password"}


def test_malformed_json_is_400(api_client: APIClient) -> None:
    response = api_client.post(REGISTER, "{not json", content_type="application/json")
    assert_error(response, 400, "malformed_request")


def test_token_obtain(api_client: APIClient) -> None:
    registered = register(api_client, "carol").json()["token"]
    response = api_client.post(
        TOKEN, {"username": "carol", "password": "a-long-password-1"}, format="json"
    )
    assert response.status_code == 200
    assert response.json() == {"token": registered}


def test_token_obtain_bad_credentials_is_401(api_client: APIClient) -> None:
    register(api_client, "dave")
    wrong = api_client.post(TOKEN, {"username": "dave", "password": "nope-nope-1"}, format="json")
    assert_error(wrong, 401, "invalid_credentials")
    nobody = api_client.post(
        TOKEN, {"username": "nobody", "password": "a-long-password-1"}, format="json"
    )
    assert_error(nobody, 401, "invalid_credentials")


def test_revoke_kills_the_old_token(api_client: APIClient) -> None:
    old = register(api_client, "erin").json()["token"]
    assert with_token(old).post(REVOKE).status_code == 204
    assert_error(with_token(old).get(ME), 401, "authentication_failed")

    new = api_client.post(
        TOKEN, {"username": "erin", "password": "a-long-password-1"}, format="json"
    ).json()["token"]
    assert new != old
    assert with_token(new).get(ME).status_code == 200


def test_me_requires_authentication(api_client: APIClient) -> None:
    response = api_client.get(ME)
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    # Credentials in a scheme the API does not read: said so, with the one to use.
    response = api_client.get(ME, HTTP_AUTHORIZATION="Basic YWxpY2U6c2VjcmV0")
    assert_error(response, 401, "not_authenticated")
    message = response.json()["message"]
    assert "'Basic'" in message and "Authorization: Bearer <token>" in message
    assert "YWxp" not in message
    # A bare token without a scheme: said so, the header not repeated (it is a secret).
    bare = "0123456789abcdef0123456789abcdef01234567"
    response = api_client.get(ME, HTTP_AUTHORIZATION=bare)
    assert_error(response, 401, "not_authenticated")
    assert "Authorization: Bearer <token>" in response.json()["message"]
    assert bare[:6] not in response.content.decode()


def test_revoke_requires_authentication(api_client: APIClient) -> None:
    assert_error(api_client.post(REVOKE), 401, "not_authenticated")


def test_wrong_method_is_405(api_client: APIClient) -> None:
    assert_error(api_client.get(REGISTER), 405, "method_not_allowed")


def test_fixtures_make_authenticated_clients(user_factory: Any, auth_client: Any) -> None:
    user = user_factory(username="frank")
    assert user.auth_token.key
    response = auth_client(user).get(ME)
    assert response.status_code == 200
    assert response.json()["username"] == "frank"


def test_a_bot_account_cannot_sign_in_even_with_a_password_or_token(
    api_client: APIClient, settings: Any
) -> None:
    """Bots play through the service's workers only: a password or a token an admin gave
    one by hand gets it nowhere (API token, session login, the admin)."""
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from accounts.services import bot_account_ensure

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    bot = bot_account_ensure(level="greedy")
    bot.set_password("a-long-password-1")
    bot.is_staff = True  # even an admin bot
    bot.save()
    token = Token.objects.create(user=bot)

    assert_error(with_token(token.key).get(ME), 401, "authentication_failed")
    credentials = {"username": bot.username, "password": "a-long-password-1"}
    assert_error(api_client.post(TOKEN, credentials, format="json"), 401, "invalid_credentials")
    browser = Client()
    assert browser.login(**credentials) is False
    browser.post("/admin/login/", credentials)
    assert "_auth_user_id" not in browser.session
    browser.force_login(bot)  # a session made before the rule: refused on its next request
    assert browser.get("/api/v1/auth/me").status_code in (401, 403)
    assert browser.get("/admin/").status_code == 302


def test_auth_bodies_refuse_unknown_fields_as_the_match_bodies_do(api_client: APIClient) -> None:
    """A typo is an error, not a silent default (``unknown_field``, as matches and moves)."""
    body = {"username": "alice", "password": "a-long-password-1"}
    refused = assert_error(
        api_client.post(REGISTER, {**body, "is_bot": True}, format="json"), 400, "invalid_input"
    )
    assert refused["details"] == {
        "is_bot": [{"code": "unknown_field", "message": "Unknown field."}]
    }
    token = register(api_client, "alice").json()["token"]
    refused = assert_error(
        api_client.post(TOKEN, {**body, "remember": True}, format="json"), 400, "invalid_input"
    )
    assert set(refused["details"]) == {"remember"}
    refused = assert_error(
        with_token(token).post(
            "/api/v1/auth/tokens", {"name": "bot", "scope": ["play"]}, format="json"
        ),
        400,
        "invalid_input",
    )
    assert refused["details"]["scope"][0]["code"] == "unknown_field"


@pytest.mark.parametrize(
    ("field", "value"),
    [("bot", "yes"), ("bot", 1), ("username", 12345), ("password", 12345678901234)],
)
def test_register_takes_json_types_only(api_client: APIClient, field: str, value: Any) -> None:
    body = {"username": "alice", "password": "a-long-password-1", field: value}
    refused = assert_error(api_client.post(REGISTER, body, format="json"), 400, "invalid_input")
    assert [e["code"] for e in refused["details"][field]] == ["invalid"]
    assert not register(api_client, "bob").json().get("code")  # a well-typed body is fine


def test_personal_token_bodies_take_json_types_only(api_client: APIClient) -> None:
    token = register(api_client, "alice").json()["token"]
    for body, field in [({"name": 5}, "name"), ({"name": "x", "scopes": [1]}, "scopes[0]")]:
        refused = assert_error(
            with_token(token).post("/api/v1/auth/tokens", body, format="json"),
            400,
            "invalid_input",
        )
        assert [e["code"] for e in refused["details"][field]] == ["invalid"], refused


# --- Sign-in is case-insensitive, as names are unique regardless of case --------------------


@pytest.mark.parametrize("typed", ["zed", "ZED", "Zed", "zEd"])
def test_token_sign_in_takes_the_name_in_any_letter_case(api_client: APIClient, typed: str) -> None:
    """``Zed`` and ``zed`` are one name (registering ``zed`` is ``username_taken``): so
    ``zed`` signs ``Zed`` in, and gets Zed's token."""
    token = register(api_client, "Zed").json()["token"]
    assert_error(register(api_client, "zed"), 409, "username_taken")
    response = api_client.post(
        TOKEN, {"username": typed, "password": "a-long-password-1"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["token"] == token
    wrong = {"username": typed, "password": "a-wrong-password"}
    assert_error(api_client.post(TOKEN, wrong, format="json"), 401, "invalid_credentials")


def test_token_sign_in_normalises_the_name_as_registration_does(api_client: APIClient) -> None:
    register(api_client, "Zed")
    full_width = "\uff3a\uff45\uff44"  # ＺＥＤ: NFKC makes it ZED
    body = {"username": full_width, "password": "a-long-password-1"}
    assert api_client.post(TOKEN, body, format="json").status_code == 200


def test_a_name_with_a_control_character_is_nobodys(api_client: APIClient) -> None:
    register(api_client, "zed")
    body = {"username": "zed\x07", "password": "a-long-password-1"}
    assert_error(api_client.post(TOKEN, body, format="json"), 401, "invalid_credentials")


@pytest.mark.parametrize(
    ("path", "signed_in"),
    [("/play/signin/", "/play/"), ("/admin/login/", "/admin/"), ("/api-auth/login/", None)],
)
def test_the_sign_in_forms_take_the_name_in_any_letter_case(
    user_factory: Any, path: str, signed_in: str | None
) -> None:
    from django.test import Client

    user = user_factory(username="Zed", is_staff=True)
    client = Client()
    response = client.post(path, {"username": "zED", "password": "a-long-password-1"})
    assert response.status_code == 302, response.content[:500]
    assert client.session["_auth_user_id"] == str(user.pk)
    if signed_in is not None:
        assert client.get(signed_in).status_code == 200
