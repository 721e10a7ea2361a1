"""The replay page's words without a browser: Italian as the play pages speak it, the
play pages' top bar with its language switch, and no card code in the page of its own."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal
from tests.leak_audit import CARD_TOKEN

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def deal_in_play(user_factory: Callable[..., User], games: Any) -> tuple[Deal, User]:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = match_create(creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")])
    match_join(match_id=match.pk, user=bob)
    games.play(match, 5)
    return Deal.objects.get(match=match), alice


def test_the_replay_page_in_italian(deal_in_play: tuple[Deal, User]) -> None:
    deal, alice = deal_in_play
    client = signed_in(alice)
    page = client.get(f"/replay/{deal.pk}/", HTTP_ACCEPT_LANGUAGE="it-IT,it;q=0.9").content.decode()
    assert '<html lang="it">' in page
    assert "Mano 1 di 1" in page and "Il tavolo della partita" in page
    assert 'aria-label="Scorri la mano"' in page
    # The language switch of the play pages' top bar, to English.
    assert 'name="language" value="en"' in page
    found = re.search(r'<script id="replay-strings" type="application/json">(.*?)</script>', page)
    assert found, page
    words = json.loads(found.group(1))
    assert words["move_of"] == "Mossa %(ply)s / %(plies)s"
    assert (words["rank_names"]["A"], words["suit_names"]["d"]) == ("Asso", "Denari")
    assert words["card_name"] == "%(rank)s di %(suit)s"
    english = client.get(f"/replay/{deal.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="en">' in english and "Deal 1 of 1" in english


def test_the_replay_page_holds_no_card_code(deal_in_play: tuple[Deal, User]) -> None:
    """The page's own words name cards by rank and suit, never by code: a code in the page
    could only be a card of the deal (what tests/hardening/test_no_leaks.py looks for)."""
    deal, alice = deal_in_play
    for language in ("en", "it"):
        page = signed_in(alice).get(f"/replay/{deal.pk}/", HTTP_ACCEPT_LANGUAGE=language)
        assert CARD_TOKEN.findall(page.content.decode()) == []
