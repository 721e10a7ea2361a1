"""The lobby's choices without a browser: the computer's levels by name, in English and in
Italian, and the time controls within the API's own ranges."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.test import Client

from accounts.models import User
from games.clocks.services import PER_MOVE_HOURS, PER_MOVE_SECONDS

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_lobby_offers_three_levels_by_name_and_the_apis_time_controls(
    user_factory: Callable[..., User],
) -> None:
    client = signed_in(user_factory(username="dora"))
    for language, names in (
        ("en", ["Easy", "Medium", "Hard"]),
        ("it", ["Facile", "Medio", "Difficile"]),
    ):
        page = client.get("/play/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        levels = re.findall(
            r'<input type="radio" name="level" value="(\w+)"(?: checked)?> ([^<]+)</label>', page
        )
        assert levels == list(zip(["random", "greedy", "expert"], names, strict=True)), levels
        # Both forms offer no clock (the default), live and correspondence play.
        clocks = re.findall(r'name="clock" value="(\w+)"( checked)?', page)
        assert clocks == [("none", " checked"), ("live", ""), ("correspondence", "")] * 2
        # The number fields take what POST /matches takes, no more, no less.
        for prefix in ("bot", "people"):
            seconds = re.search(
                rf'id="{prefix}-seconds" name="seconds" min="(\d+)" max="(\d+)"', page
            )
            hours = re.search(rf'id="{prefix}-hours" name="hours" min="(\d+)" max="(\d+)"', page)
            assert seconds and hours, page
            assert tuple(map(int, seconds.groups())) == PER_MOVE_SECONDS
            assert tuple(map(int, hours.groups())) == PER_MOVE_HOURS
        assert page.count('name="on_timeout" value="forfeit" checked') == 2
        # The timeout bot's level, in each form: the same three by name, Medium first chosen.
        for prefix in ("bot", "people"):
            select = re.search(
                rf'<select id="{prefix}-timeout-bot" name="timeout_bot">(.*?)</select>', page, re.S
            )
            assert select, page
            options = re.findall(
                r'<option value="(\w+)"( selected)?>([^<]+)</option>', select.group(1)
            )
            assert options == [
                ("random", "", names[0]),
                ("greedy", " selected", names[1]),
                ("expert", "", names[2]),
            ], options
        label = "Livello di quel bot" if language == "it" else "That bot's level"
        assert label in page


def test_the_lobbys_own_words_in_both_languages(user_factory: Callable[..., User]) -> None:
    """The lobby's words beside the play pages' (the ``lobby-strings`` JSON): a match of
    four's partner, and more names invited than the table has seats."""
    import json

    client = signed_in(user_factory(username="ettore"))
    for language, partner, too_many in (
        ("en", "with %(name)s", "Too many names: a table of 2 has room for one other person"),
        ("it", "con %(name)s", "Troppi nomi: un tavolo da 2 ha posto per una sola altra persona"),
    ):
        page = client.get("/play/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        found = re.search(
            r'<script id="lobby-strings" type="application/json">(.*?)</script>', page
        )
        assert found, page
        words = json.loads(found.group(1))
        assert words["with_partner"] == partner
        assert words["too_many_invited"]["2"].startswith(too_many)
        assert "%(n)s" in words["too_many_invited"]["4"]
