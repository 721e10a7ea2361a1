"""POST /api/v1/matches: seats, invitations, start, and every error (issue #3)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from rest_framework.test import APIClient

from games.models import Deal, Match, Seat

if TYPE_CHECKING:
    from conftest import ExpectError, Player

URL = "/api/v1/matches"
HEX64 = re.compile(r"^[0-9a-f]{64}$")


@pytest.mark.django_db
def test_creator_takes_seat_zero_and_each_seat_kind_is_kept(
    player: Callable[..., Player],
) -> None:
    alice, bob = player("alice"), player("bob")
    body = alice.create(
        players=4,
        format="first_to_3",
        seats=[{"bot": "random"}, {"user": "bob"}, "open"],
        public=True,
        rated=True,
        options={"partners_last_hand": False},
    )
    assert body["status"] == "waiting"
    assert body["players"] == 4 and body["format"] == "first_to_3"
    assert body["public"] is True and body["rated"] is True
    assert body["options"] == {"partners_last_hand": False}
    assert body["created_by"] == "alice"
    assert body["your_seat"] == 0
    seats = body["seats"]
    assert [s["seat"] for s in seats] == [0, 1, 2, 3]
    assert [s["team"] for s in seats] == [0, 1, 0, 1]
    assert seats[0] == {
        "seat": 0,
        "team": 0,
        "user": "alice",
        "is_bot": False,
        "bot_level": None,
        "joined": True,
        "away": False,
        "bot_holds": False,
    }
    assert seats[1]["is_bot"] and seats[1]["bot_level"] == "random" and seats[1]["joined"]
    assert seats[2]["user"] == "bob" and not seats[2]["joined"]  # an invitation
    assert seats[3]["user"] is None and not seats[3]["joined"]  # open
    assert body["current_deal"] is None and body["deals"] == []
    assert body["started_at"] is None
    match = Match.objects.get(pk=body["id"])
    assert not match.partners_last_hand
    assert Seat.objects.get(match=match, number=2).user_id == bob.user.pk
    assert not Deal.objects.filter(match=match).exists()


@pytest.mark.django_db
def test_defaults_single_private_unrated_partners_option_on(player: Callable[..., Player]) -> None:
    alice = player("alice")
    body = alice.post(URL, {"players": 2, "seats": ["open"]}, status=201)
    assert body["format"] == "single"
    assert body["public"] is False and body["rated"] is False
    assert body["options"] == {"partners_last_hand": True}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("players", "seats"),
    [
        (2, [{"bot": "greedy"}]),
        (2, [{"bot": "random"}]),
        (4, [{"bot": "random"}, {"bot": "greedy"}, {"bot": "greedy"}]),
        (4, [{"bot": "greedy"}, {"bot": "greedy"}, {"bot": "greedy"}]),
    ],
)
def test_a_match_with_only_bots_starts_at_once(
    player: Callable[..., Player], players: int, seats: list[Any]
) -> None:
    alice = player("alice")
    body = alice.create(players=players, seats=seats)
    assert body["status"] == "active"
    assert body["started_at"] is not None
    assert all(s["joined"] for s in body["seats"])
    assert len({s["user"] for s in body["seats"]}) == players  # one account per seat
    assert len(body["deals"]) == 1
    deal = body["current_deal"]
    assert deal is not None
    assert deal["id"] == body["deals"][0]["id"]
    assert HEX64.match(deal["commitment"])
    assert deal["seed"] is None and body["deals"][0]["seed"] is None
    assert len(deal["hand"]) == 3
    assert deal["stock_count"] == 40 - 3 * players
    # The bots replied until it is alice's turn.
    now = alice.detail(body["id"])["current_deal"]
    assert now["turn"] == 0
    assert now["ply"] == len(now["table"]) == (0 - (deal["dealer"] + 1)) % players


@pytest.mark.django_db
def test_the_same_invitation_name_is_case_insensitive(player: Callable[..., Player]) -> None:
    alice, _ = player("alice"), player("bob")
    body = alice.create(players=4, seats=[{"user": "Bob"}, "open", "open"])
    assert body["seats"][1]["user"] == "bob"
    alice.error(
        "post",
        URL,
        {"players": 4, "seats": [{"user": "bob"}, {"user": "BOB"}, "open"]},
        400,
        "invalid_match",
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code", "detail_key"),
    [
        ({"players": 2, "seats": []}, 400, "invalid_match", "seats"),
        ({"players": 2, "seats": ["open", "open"]}, 400, "invalid_match", "seats"),
        ({"players": 4, "seats": ["open"]}, 400, "invalid_match", "seats"),
        ({"players": 2, "seats": [{"bot": "grandmaster"}]}, 400, "invalid_match", "bot"),
        ({"players": 2, "seats": [{"user": "nobody"}]}, 400, "invalid_match", "user"),
        ({"players": 2, "seats": [{"user": "bot-greedy"}]}, 400, "invalid_match", "user"),
        ({"players": 2, "seats": [{"user": "alice"}]}, 400, "invalid_match", "seat"),
        ({"players": 2, "seats": [{"user": "ALICE"}]}, 400, "invalid_match", "seat"),
        (
            {"players": 4, "seats": [{"user": "bob"}, "open", {"user": "bob"}]},
            400,
            "invalid_match",
            "seat",
        ),
        ({"players": 3, "seats": ["open", "open"]}, 400, "invalid_input", "players"),
        ({"seats": ["open"]}, 400, "invalid_input", "players"),
        ({"players": 2}, 400, "invalid_input", "seats"),
        ({"players": 2, "seats": ["open"], "colour": "red"}, 400, "invalid_input", "colour"),
        (
            {"players": 2, "seats": ["open"], "options": {"swap_seven": True}},
            400,
            "invalid_input",
            "options.swap_seven",
        ),
        ({"players": 2, "seats": ["open"], "format": "best_of_5"}, 400, "invalid_input", "format"),
        ({"players": 2, "seats": [{"robot": "greedy"}]}, 400, "invalid_input", "seats[0]"),
        ({"players": 2, "seats": [{"bot": ""}]}, 400, "invalid_input", "seats[0]"),
        ({"players": 2, "seats": ["closed"]}, 400, "invalid_input", "seats[0]"),
        ({"players": 2, "seats": "open"}, 400, "invalid_input", "seats"),
        ({"players": 2, "seats": ["open"], "public": "perhaps"}, 400, "invalid_input", "public"),
        ([1, 2], 400, "invalid_input", None),
    ],
)
def test_create_errors(
    player: Callable[..., Player],
    body: Any,
    status: int,
    code: str,
    detail_key: str | None,
) -> None:
    alice, _ = player("alice"), player("bob")
    error = alice.error("post", URL, body, status, code)
    if detail_key is not None:
        assert detail_key in error["details"], error
        if code == "invalid_input":  # one entry per field: a list of {code, message}
            for entries in error["details"].values():
                assert entries and all(set(e) == {"code", "message"} for e in entries)
            assert detail_key in error["message"]
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_malformed_json_is_malformed_request(
    player: Callable[..., Player], expect_error: ExpectError
) -> None:
    alice = player("alice")
    response = alice.client.post(URL, data='{"players": 2,', content_type="application/json")
    expect_error(response, 400, "malformed_request")
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_unauthenticated_is_401_not_authenticated(
    api_client: APIClient, expect_error: ExpectError
) -> None:
    body = {"players": 2, "seats": [{"bot": "greedy"}]}
    response = api_client.post(URL, body, format="json")
    expect_error(response, 401, "not_authenticated")
    expect_error(api_client.get(URL), 401, "not_authenticated")
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_bad_token_is_401_authentication_failed(
    api_client: APIClient, expect_error: ExpectError
) -> None:
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    body = {"players": 2, "seats": [{"bot": "greedy"}]}
    expect_error(api_client.post(URL, body, format="json"), 401, "authentication_failed")
    assert not Match.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"players": "2"}, "players"),
        ({"players": 2.0}, "players"),
        ({"format": 1}, "format"),
        ({"public": "yes"}, "public"),
        ({"public": 1}, "public"),
        ({"rated": "true"}, "rated"),
        ({"options": {"partners_last_hand": "no"}}, "options.partners_last_hand"),
    ],
)
def test_a_body_takes_json_types_only(
    player: Callable[..., Player], extra: dict[str, Any], field: str
) -> None:
    """``"2"`` is not 2 and ``"yes"`` not true: each refused with the field code
    ``invalid``, as a ``ply`` of ``"2"`` is, and no match is made."""
    alice = player("alice")
    body = {"players": 2, "seats": [{"bot": "greedy"}], **extra}
    error = alice.error("post", URL, body, 400, "invalid_input")
    assert [e["code"] for e in error["details"][field]] == ["invalid"], error
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_a_move_names_its_deal_with_a_json_integer(player: Callable[..., Player]) -> None:
    alice = player("alice")
    match_id = alice.create()["id"]
    view = alice.detail(match_id)["current_deal"]
    body = {"card": view["legal"][0], "ply": view["ply"], "deal": str(view["id"])}
    error = alice.error("post", f"{URL}/{match_id}/moves", body, 400, "invalid_input")
    assert [e["code"] for e in error["details"]["deal"]] == ["invalid"]
    alice.move_in_deal(match_id, view["legal"][0], view["ply"], view["id"])
