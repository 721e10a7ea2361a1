"""The table page's status: 404 for an id that names no match, 403 for a match the viewer
may not see (the API's 403 ``match_private``; the page said so under a 200), 200 for its
players and for anyone when it is public."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from django.test import Client

from accounts.models import User
from games.matches.services import SeatSpec, match_create

pytestmark = pytest.mark.django_db


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_table_page_answers_as_the_api_does(user_factory: Callable[..., User]) -> None:
    alice, bob, carol = (user_factory(username=n) for n in ("alice", "bob", "carol"))
    private = match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("user", "bob")]
    )
    public = match_create(
        creator=alice, players=2, format="single", seats=[SeatSpec("bot", "random")], public=True
    )
    page = "/play/{}/"
    assert _signed_in(alice).get(page.format(private.pk)).status_code == 200
    assert _signed_in(bob).get(page.format(private.pk)).status_code == 200  # invited
    stranger = _signed_in(carol)
    refused = stranger.get(page.format(private.pk))
    assert refused.status_code == 403
    assert b'id="play"' in refused.content  # the table, which says why
    assert stranger.get(f"/api/v1/matches/{private.pk}").status_code == 403
    assert stranger.get(page.format(public.pk)).status_code == 200
    assert stranger.get(page.format(uuid.uuid4())).status_code == 404
