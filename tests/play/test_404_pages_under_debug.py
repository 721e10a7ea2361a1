"""An address that names no match or deal answers the site's 404 page (its top bar, a way
back to the lobby, status 404) even with DEBUG on, as under ``make run``: never Django's
technical 404 page, which lists every URL pattern of the service."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from django.test import Client, override_settings

from accounts.models import User

pytestmark = pytest.mark.django_db


@override_settings(DEBUG=True)
@pytest.mark.parametrize(
    "url",
    [f"/play/{uuid.UUID(int=7)}/", f"/play/{uuid.UUID(int=7)}/replay/", "/replay/999999/"],
    ids=["table", "match-replay", "deal-replay"],
)
@pytest.mark.parametrize(("language", "title"), [("en", "Not found"), ("it", "Pagina non trovata")])
def test_an_unknown_match_or_deal_is_the_sites_404_page_under_debug(
    user_factory: Callable[..., User], url: str, language: str, title: str
) -> None:
    client = Client()
    client.force_login(user_factory(username="alice"))
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 404
    html = response.content.decode()
    assert f"<h1>{title}</h1>" in html
    assert 'href="/play/"' in html  # back to the lobby
    # Not Django's technical page: no URL patterns, no "DEBUG = True" notice.
    assert "URLconf" not in html and "DEBUG = True" not in html and "api/v1/" not in html
