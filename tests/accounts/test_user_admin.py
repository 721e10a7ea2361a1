"""The user admin (an outside audit of the admin): a bot's level is one of the levels
there are, and the service's bot accounts keep the name and level the service gave them;
the forms check names by the API's rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from accounts.services import bot_account_ensure

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


@pytest.fixture
def admin_client(user_factory: Callable[..., User]) -> Client:
    root = user_factory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    return client


def change_data(user: User, **changes: Any) -> dict[str, Any]:
    """What the user's change form posts, with ``changes`` (None: the field left out)."""
    data: dict[str, Any] = {
        "username": user.username,
        "first_name": "",
        "last_name": "",
        "email": "",
        "is_active": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        "bot_level": user.bot_level,
    }
    if user.is_bot:
        data["is_bot"] = "on"
    for name, value in changes.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    return data


def post_change(client: Client, user: User, **changes: Any) -> Any:
    return client.post(f"/admin/accounts/user/{user.pk}/change/", change_data(user, **changes))


def form_errors(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 200, response.status_code  # the form again, not saved
    form = response.context["adminform"].form
    return {name: [str(e) for e in errors] for name, errors in form.errors.items()}


@pytest.mark.parametrize("level", ["expert2", "randon", "Greedy", " greedy"])
def test_a_bot_level_is_one_of_the_levels(
    admin_client: Client, user_factory: Callable[..., User], level: str
) -> None:
    alice = user_factory(username="alice")
    errors = form_errors(post_change(admin_client, alice, is_bot="on", bot_level=level))
    assert "bot_level" in errors and "valid choice" in errors["bot_level"][0], errors
    alice.refresh_from_db()
    assert (alice.is_bot, alice.bot_level) == (False, "")


def test_a_person_has_no_level_and_a_bot_needs_one_and_a_bots_name(
    admin_client: Client, user_factory: Callable[..., User]
) -> None:
    alice = user_factory(username="alice")
    errors = form_errors(post_change(admin_client, alice, bot_level="greedy"))
    assert errors == {"bot_level": ["Only a bot account has a level: leave it empty."]}
    errors = form_errors(post_change(admin_client, alice, is_bot="on"))
    assert errors == {"bot_level": ["A bot account needs a level."]}
    errors = form_errors(post_change(admin_client, alice, is_bot="on", bot_level="greedy"))
    assert "bot-greedy" in errors["bot_level"][0], errors
    alice.refresh_from_db()
    assert (alice.is_bot, alice.bot_level) == (False, "")
    # Other fields still save.
    response = post_change(admin_client, alice, first_name="Alice")
    assert response.status_code == 302
    alice.refresh_from_db()
    assert alice.first_name == "Alice"


@pytest.mark.parametrize(
    "changes",
    [
        {"bot_level": "expert2"},
        {"bot_level": "random"},
        {"bot_level": "", "is_bot": None},
        {"username": "bot-random"},
        {"username": "bot-expert-2"},
    ],
)
def test_the_service_bots_name_and_level_are_not_the_admins(
    admin_client: Client, changes: dict[str, Any]
) -> None:
    bot = bot_account_ensure(level="expert")
    page = admin_client.get(f"/admin/accounts/user/{bot.pk}/change/").content.decode()
    for field in ("username", "is_bot", "bot_level"):
        assert f'name="{field}"' not in page, field  # shown, not editable
    response = post_change(admin_client, bot, first_name="Expert", **changes)
    assert response.status_code == 302
    bot.refresh_from_db()
    assert (bot.username, bot.is_bot, bot.bot_level, bot.first_name) == (
        "bot-expert",
        True,
        "expert",
        "Expert",
    )
    assert bot_account_ensure(level="expert") == bot


def test_the_level_choices_are_the_levels_there_are(
    admin_client: Client, user_factory: Any
) -> None:
    from games.bots import LEVELS

    alice = user_factory(username="alice")
    response = admin_client.get(f"/admin/accounts/user/{alice.pk}/change/")
    choices = [
        value for value, _label in response.context["adminform"].form.fields["bot_level"].choices
    ]
    assert choices == ["", *LEVELS]


# --- Names: the API's rules (accounts.usernames) --------------------------------------


def post_add(client: Client, name: str) -> Any:
    return client.post(
        "/admin/accounts/user/add/",
        {
            "username": name,
            "usable_password": "true",
            "password1": "a-long-password-1",
            "password2": "a-long-password-1",
        },
    )


def add_errors(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 200, response.status_code  # the form again, not saved
    form = response.context["adminform"].form
    return {name: [str(e) for e in errors] for name, errors in form.errors.items()}


@pytest.mark.parametrize(
    ("existing", "name"),
    [
        ("alice", "a1ice"),
        ("alice", "ALICE"),
        ("alice", "AIice"),
        ("alice", "Alicé"),
        ("bob", "b0b"),
        ("ann_b", "ann.b"),
        ("modern", "rnodern"),
    ],
)
def test_a_look_alike_name_is_a_form_error_not_a_500(
    admin_client: Client, user_factory: Callable[..., User], existing: str, name: str
) -> None:
    holder = user_factory(username=existing)
    errors = add_errors(post_add(admin_client, name))
    assert errors == {
        "username": [f"That user name is taken: {existing} has it, or one that looks like it."]
    }
    # Renaming another account to it: the same.
    carol = user_factory(username="carol")
    errors = form_errors(post_change(admin_client, carol, username=name))
    assert errors["username"] == [
        f"That user name is taken: {existing} has it, or one that looks like it."
    ]
    carol.refresh_from_db()
    assert carol.username == "carol"
    assert set(User.objects.values_list("username", flat=True)) == {
        "root",
        holder.username,
        "carol",
    }


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("a b", "single '_', '-' or '.'"),
        ("alice@home", "single '_', '-' or '.'"),
        ("b\u043eb", "single '_', '-' or '.'"),  # a Cyrillic o
        ("a" * 31, "at most 30 characters"),
    ],
)
def test_a_name_outside_the_character_set_is_refused(
    admin_client: Client, name: str, words: str
) -> None:
    errors = add_errors(post_add(admin_client, name))
    assert words in errors["username"][0], errors
    assert not User.objects.exclude(username="root").exists()


def test_names_are_stored_nfkc_and_a_rename_of_ones_own_case_is_fine(
    admin_client: Client, user_factory: Callable[..., User]
) -> None:
    response = post_add(admin_client, "\uff41\uff4c\uff49\uff43\uff45")  # full-width alice
    assert response.status_code == 302
    alice = User.objects.get(username="alice")
    assert post_change(admin_client, alice, username="Alice").status_code == 302
    alice.refresh_from_db()
    assert alice.username == "Alice"


@pytest.mark.parametrize(
    "name", ["bot-fake", "bot-random-4", "bot-strong-3", "B0T_expert", "bot.x"]
)
def test_a_bots_name_is_refused_for_a_person(
    admin_client: Client, user_factory: Callable[..., User], name: str
) -> None:
    reserved = "User names starting with 'bot-' (or like it) are reserved for bots."
    assert add_errors(post_add(admin_client, name)) == {"username": [reserved]}
    carol = user_factory(username="carol")
    assert form_errors(post_change(admin_client, carol, username=name)) == {"username": [reserved]}
    assert not User.objects.filter(is_bot=False, username__istartswith="bot").exists()
    # The bot tables are not blocked: the service's bot account is made as it should.
    assert bot_account_ensure(level="random", copy=4).username == "bot-random-4"


def test_a_person_made_a_bot_here_takes_a_bots_name(
    admin_client: Client, user_factory: Callable[..., User]
) -> None:
    carol = user_factory(username="carol")
    response = post_change(
        admin_client, carol, username="bot-greedy-7", is_bot="on", bot_level="greedy"
    )
    assert response.status_code == 302
    carol.refresh_from_db()
    assert (carol.username, carol.is_bot, carol.bot_level) == ("bot-greedy-7", True, "greedy")
    assert bot_account_ensure(level="greedy", copy=7) == carol


def test_the_forms_errors_speak_italian(admin_client: Client, user_factory: Any) -> None:
    user_factory(username="alice")
    response = admin_client.post(
        "/admin/accounts/user/add/",
        {"username": "a1ice", "usable_password": "false"},
        HTTP_ACCEPT_LANGUAGE="it",
    )
    assert add_errors(response) == {
        "username": ["Questo nome utente è già preso: lo ha alice, o uno che gli somiglia."]
    }
