"""The play pages without a browser: sign up with the API's rules and errors, sign in,
who may open the lobby and the table, and the Italian catalog as committed."""

from __future__ import annotations

import gettext
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings

from accounts.models import User
from games.matches.services import SeatSpec, match_create
from games.play.strings import card_names, rank_labels

LOCALE = Path(__file__).parents[2] / "games" / "locale" / "it" / "LC_MESSAGES"


@pytest.mark.django_db
def test_sign_up_has_the_apis_rules_and_errors_next_to_the_field(
    api_client: Any, fast_password_hashing: None
) -> None:
    client = Client()
    page = client.get("/play/signup/").content.decode()
    assert '<label for="id_username">Username</label>' in page
    assert '<label for="id_password">Password</label>' in page
    assert 'href="/play/signin/"' in page  # the link to the other page
    for username, password, field in (
        ("carla", "short", "password"),
        ("carla", "12345678901", "password"),
        ("bot-carla", "a-long-password-1", "username"),
        ("carla carla", "a-long-password-1", "username"),
    ):
        page = client.post("/play/signup/", {"username": username, "password": password})
        assert page.status_code == 200
        html = page.content.decode()
        api = api_client.post(
            "/api/v1/auth/register", {"username": username, "password": password}, format="json"
        ).json()
        # The API's own messages for the field, shown under it.
        errors = re.search(rf'<ul class="field-errors" id="id_{field}-errors">(.*?)</ul>', html)
        assert errors, html
        assert api["details"][field], api
        for entry in api["details"][field]:  # {code, message} each (issue 16)
            message = entry["message"]
            assert message.replace("'", "&#x27;") in errors.group(1), (message, errors.group(1))
        assert not User.objects.filter(username=username).exists()
    response = client.post("/play/signup/", {"username": "carla", "password": "a-long-password-1"})
    assert response.status_code == 302 and response["Location"] == "/play/"
    assert client.get("/play/").status_code == 200  # signed in
    taken = Client().post("/play/signup/", {"username": "Carla", "password": "a-long-pass-2"})
    assert "That user name is already taken." in taken.content.decode()


@pytest.mark.django_db
def test_sign_in_and_out(user_factory: Callable[..., User], fast_password_hashing: None) -> None:
    user_factory(username="dora")
    client = Client()
    assert client.get("/play/")["Location"] == "/play/signin/?next=/play/"
    bad = client.post("/play/signin/", {"username": "dora", "password": "wrong-password"})
    assert bad.status_code == 200 and "_auth_user_id" not in client.session
    # The error says what is true of letter case ("DORA" is dora; the password is exact),
    # and the page opens with the focus in the user name field, described by the error.
    html = bad.content.decode()
    assert (
        '<div id="form-errors" role="alert"><p class="error">Wrong user name or password. '
        "The password is case-sensitive; the user name is not.</p></div>"
    ) in html
    assert "may be case-sensitive" not in html
    username = re.search(r'<input type="text" name="username"[^>]*>', html)
    assert username and 'aria-describedby="form-errors"' in username.group(0), html
    assert " autofocus" in username.group(0)
    assert html.count(" autofocus") == 1
    capitals = Client().post("/play/signin/", {"username": "DORA", "password": "a-long-password-1"})
    assert capitals.status_code == 302
    good = client.post(
        "/play/signin/?next=/play/", {"username": "dora", "password": "a-long-password-1"}
    )
    assert good.status_code == 302 and good["Location"] == "/play/"
    lobby = client.get("/play/").content.decode()
    assert 'data-me="dora"' in lobby and 'name="csrfmiddlewaretoken"' in lobby
    out = client.post("/play/signout/")
    assert out["Location"] == "/play/signin/" and "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_the_table_is_a_shell_the_api_fills(user_factory: Callable[..., User]) -> None:
    """The page shows nothing of the match itself: the table reads it from the API (which
    says what the viewer may see). Only an id that names no match gets the site's 404."""
    erin, frank = user_factory(username="erin"), user_factory(username="frank")
    match = match_create(creator=frank, players=2, format="single", seats=[SeatSpec("open")])
    client = Client()
    client.force_login(erin)
    page = client.get(f"/play/{match.pk}/").content.decode()
    assert f'data-api="/api/v1/matches/{match.pk}"' in page
    # The stream route exists: the table waits on it (and polls if it fails).
    assert f'data-stream="/api/v1/matches/{match.pk}/stream"' in page
    # How long a trick taken stays in view, in milliseconds (PLAY_TRICK_HOLD_SECONDS).
    assert 'data-trick-hold-ms="1500"' in page
    with override_settings(PLAY_TRICK_HOLD_SECONDS=0.25):
        page = client.get(f"/play/{match.pk}/").content.decode()
    assert 'data-trick-hold-ms="250"' in page
    unknown = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/api/v1/matches/{unknown}").status_code == 404
    missing = client.get(f"/play/{unknown}/")
    assert missing.status_code == 404 and "Back to the lobby" in missing.content.decode()
    assert client.get("/play/not-a-uuid/").status_code == 404


@pytest.mark.django_db
def test_italian_pages_by_accept_language_and_by_the_switch(
    user_factory: Callable[..., User],
) -> None:
    client = Client()
    page = client.get("/play/signup/", HTTP_ACCEPT_LANGUAGE="it-IT,it;q=0.9").content.decode()
    assert '<html lang="it">' in page and ">Nome utente</label>" in page
    # The switch keeps English for a browser that asks for Italian.
    client.post("/i18n/setlang/", {"language": "en", "next": "/play/signup/"})
    page = client.get("/play/signup/", HTTP_ACCEPT_LANGUAGE="it-IT,it;q=0.9").content.decode()
    assert '<html lang="en">' in page and ">Username</label>" in page


def _po_entries() -> dict[tuple[str | None, str], str]:
    """The .po's translated entries (singular ones), by (context, msgid)."""
    text = (LOCALE / "django.po").read_text(encoding="utf-8")
    entries = {}
    for block in text.split("\n\n"):
        if "msgid_plural" in block:
            continue

        def field(name: str, block: str = block) -> str | None:
            found = re.search(rf'^{name} ((?:".*"\n?)+)', block + "\n", re.M)
            if not found:
                return None
            return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(1))).replace('\\"', '"')

        msgid = field("msgid")
        if msgid:
            entries[(field("msgctxt"), msgid)] = field("msgstr") or ""
    return entries


def test_the_italian_catalog_is_complete_and_compiled() -> None:
    """Every string has its Italian, none is fuzzy, and the committed .mo says the same as
    the .po (compilemessages was run after the last change)."""
    po = _po_entries()
    assert len(po) > 100
    assert "#, fuzzy" not in (LOCALE / "django.po").read_text(encoding="utf-8")
    assert [key for key, value in po.items() if not value] == []
    with open(LOCALE / "django.mo", "rb") as handle:
        mo = gettext.GNUTranslations(handle)
    for (context, msgid), msgstr in po.items():
        got = mo.pgettext(context, msgid) if context else mo.gettext(msgid)
        assert got == msgstr, (context, msgid)


def test_card_names_in_both_languages() -> None:
    from django.utils import translation

    with translation.override("en"):
        english = card_names()
    with translation.override("it"):
        italian = card_names()
    assert len(english) == len(italian) == 40
    assert english["Ad"] == "Ace of Coins" and italian["Ad"] == "Asso di Denari"
    assert english["Cb"] == "Knight of Batons" and italian["Cb"] == "Cavallo di Bastoni"
    assert english["Fs"] == "Knave of Swords" and italian["Fs"] == "Fante di Spade"
    assert english["Rc"] == "King of Cups" and italian["Rc"] == "Re di Coppe"
    # docs/rules.md's English names (Knave, Batons); a corner letter for every rank.
    with translation.override("en"):
        corners = rank_labels()
    assert (corners["R"], corners["C"], corners["F"]) == ("K", "Kt", "J")
    with translation.override("it"):
        corners = rank_labels()
    assert (corners["R"], corners["C"], corners["F"]) == ("R", "C", "F")
