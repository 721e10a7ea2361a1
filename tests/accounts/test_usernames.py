"""User names (issue 19, item 7): NFKC, a documented character set, one account per name
in any letter case and per look-alike skeleton, enforced by the database; invitations
and profiles find the one account a name means."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import UsernameTakenError, user_register
from accounts.usernames import normalize, username_problems, username_skeleton
from games.matches.services import SeatSpec, match_create
from tests.accounts.test_auth_api import assert_error, register

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

FULLWIDTH_BOT = "\uff42\uff4f\uff54-expert"  # ｂｏｔ-expert
BOLD_BOT = "\U0001d41b\U0001d428\U0001d42d-expert"  # 𝐛𝐨𝐭-expert
CYRILLIC_BOT = "b\u043et-expert"  # bоt-expert, a Cyrillic о
KELVIN = "\u212a"  # K, the Kelvin sign


def test_nfkc_and_the_skeleton() -> None:
    assert normalize(FULLWIDTH_BOT) == normalize(BOLD_BOT) == "bot-expert"
    assert normalize(f"{KELVIN}ate") == "Kate"
    same = ["Alice", "alice", "AIice", "A1ice", "Alicé", "ALICE"]
    assert {username_skeleton(name) for name in same} == {"allce"}
    assert username_skeleton("ann_b") == username_skeleton("ann.b") == username_skeleton("ann-b")
    assert username_skeleton("Łukasz") == "lukasz" and username_skeleton("Ørsted") == "orsted"
    assert username_skeleton("ali") == username_skeleton("all")  # errs on refusing
    assert username_skeleton("modern") == username_skeleton("rnodern")
    assert username_skeleton("alice") != username_skeleton("alicia")


@pytest.mark.parametrize(
    "name",
    ["alice", "Niccolò", "Łukasz", "ann_b", "a.b-c_d", "x", "Zoë2", "a" * 30, "botany", "bot"],
)
def test_allowed_names(name: str) -> None:
    assert username_problems(normalize(name)) == []


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a" * 31,
        "a b",
        "a\x00b",
        "a\u200bb",  # zero-width space
        "alice@home",
        "a+b",
        "-alice",
        "alice.",
        "a__b",
        CYRILLIC_BOT,
        "αλίκη",  # Greek
        "a×b",
        "bot-expert",
        "Bot-Expert",
        "b0t-expert",
        "BOT_expert",
        "bot.expert",
        FULLWIDTH_BOT,
        BOLD_BOT,
    ],
)
def test_refused_names(name: str) -> None:
    assert username_problems(normalize(name)), name


@pytest.mark.parametrize("name", [FULLWIDTH_BOT, BOLD_BOT, CYRILLIC_BOT, "B0T_expert", "bot.x"])
def test_bot_look_alikes_are_refused_at_registration(api_client: APIClient, name: str) -> None:
    body = assert_error(register(api_client, name), 400, "invalid_registration")
    assert body["details"]["username"]
    assert not User.objects.exclude(is_bot=True).exists()


def test_names_are_stored_nfkc_and_look_alikes_of_a_name_are_taken(api_client: APIClient) -> None:
    created = register(api_client, f"{KELVIN}ate")  # the Kelvin sign: stored as "Kate"
    assert created.status_code == 201 and created.json()["username"] == "Kate"
    assert User.objects.get().username == "Kate"
    for copy in ("Kate", "kate", "KATE", f"{KELVIN}ATE", "\uff2bate"):  # Ｋate
        assert_error(register(api_client, copy), 409, "username_taken")
    assert register(api_client, "Carla").status_code == 201
    for look_alike in ("CarIa", "Car1a", "Carlà", "carla"):
        assert_error(register(api_client, look_alike), 409, "username_taken")
    assert User.objects.count() == 2


def test_the_database_enforces_both_keys() -> None:
    """Past the service (a direct insert, as a race would): the unique indexes refuse."""
    User.objects.create(username="alice")
    for other in ("ALICE", "AIice", "alicé"):
        with pytest.raises(IntegrityError), transaction.atomic():
            User.objects.create(username=other)
    assert list(User.objects.values_list("username", "username_key")) == [("alice", "allce")]


def test_a_rename_moves_the_skeleton() -> None:
    user = User.objects.create(username="alice")
    user.username = "Bruna"
    user.save()
    user.refresh_from_db()
    assert user.username_key == "bruna"
    assert User.objects.create(username="alice").username_key == "allce"


def test_invitations_and_profiles_find_the_one_account(user_factory: Any, auth_client: Any) -> None:
    """The issue's case: "Caseyb1140" invited as "caseyb1140" seated another account.
    Now only one can exist, and every spelling finds it."""
    casey = user_register(username="Caseyb1140", password="a-long-password-1")[0]
    alice = user_factory(username="alice")
    for spelling in ("caseyb1140", "CASEYB1140", "\uff43aseyb1140"):  # ｃaseyb1140
        match = match_create(
            creator=alice, players=2, format="single", seats=[SeatSpec("user", spelling)]
        )
        assert match.seats.get(number=1).user_id == casey.pk
        body = auth_client(alice).get(f"/api/v1/players/{spelling}").json()
        assert body["username"] == "Caseyb1140"
    with pytest.raises(UsernameTakenError):
        user_register(username="caseyb1140", password="a-long-password-1")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("no_stray_connections")
def test_concurrent_registrations_of_case_variants_make_one_account(together: Any) -> None:
    """8 registrations at once of one name in 8 letter cases (the issue made 5 accounts):
    exactly one account, and 7 clean ``username_taken``."""
    variants = ["caseyb1140", "Caseyb1140", "CASEYB1140", "cAseyb1140", "caSeyb1140"]
    variants += ["casEyb1140", "caseYb1140", "CaseyB1140"]

    def job(name: str) -> Any:
        return lambda: user_register(username=name, password="a-long-password-1")

    outcomes = together([job(name) for name in variants])
    won = [o for o in outcomes if o.error is None]
    lost = [o for o in outcomes if o.error is not None]
    assert len(won) == 1, [o.error for o in outcomes]
    assert all(isinstance(o.error, UsernameTakenError) for o in lost), [o.error for o in lost]
    assert User.objects.filter(username__iexact="caseyb1140").count() == 1
