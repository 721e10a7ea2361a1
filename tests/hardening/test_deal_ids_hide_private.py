"""Deal ids are sequential: a deal the viewer may not see answers as one that does not exist.

For a private match's deals, finished and still being played, every deal-addressed
endpoint (the record, the replay, the verification, both exports) and the replay page give
a stranger and an anonymous visitor exactly the answer (status, code, message, details,
headers that matter) that a deal id naming no deal gives them: nobody can count the deals,
nor learn which are private. (A signed-in stranger: 404 ``deal_not_found``; an anonymous
visitor: 401 ``not_authenticated``, the replay page a redirect to sign in.) Nor by the
time the answer takes: both run the same database queries (one, for the deal).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.db.models import Max
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "/api/v1/deals/{id}",
    "/api/v1/deals/{id}/replay",
    "/api/v1/deals/{id}/replay?seat=0",
    "/api/v1/deals/{id}/replay?ply=3",
    "/api/v1/deals/{id}/verify",
    "/api/v1/deals/{id}/export",
    "/api/v1/deals/{id}/export?format=text",
    "/api/v1/deals/{id}/export.txt",
]
EXPECTED = {"stranger": (404, "deal_not_found"), "anonymous": (401, "not_authenticated")}


@pytest.fixture(autouse=True)
def fast_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def private_deals(
    user_factory: Callable[..., User], games: Any, deterministic_seeds: None
) -> dict[str, Any]:
    """A private match's finished deal and another's live deal, a stranger, an absent id."""
    first, second, third = (user_factory(username=f"hp{i}") for i in range(3))
    stranger = user_factory(username="hidestranger")
    finished_match = games.person_match(first, second)
    games.play(finished_match, 40)
    finished = games.current_deal(finished_match)
    assert finished.is_over
    live_match = match_create(
        creator=first, players=2, format="single", seats=[SeatSpec("user", third.username)]
    )
    live_match = match_join(match_id=live_match.pk, user=third)
    games.play(live_match, 5)
    live = games.current_deal(live_match)
    assert not live.is_over
    assert not finished_match.public and not live_match.public
    absent = (Deal.objects.aggregate(top=Max("id"))["top"] or 0) + 1000
    return {"finished": finished.pk, "live": live.pk, "absent": absent, "stranger": stranger}


def _api_client(viewer: str, stranger: User, auth_client: Callable[[User], APIClient]) -> Any:
    return APIClient() if viewer == "anonymous" else auth_client(stranger)


def _answer(response: Any, deal_id: int) -> tuple[Any, ...]:
    """Status, body and the headers that could tell, with the id asked for (in a URL: a
    page's own address, a sign-in's ``next``) and the per-request CSRF token set aside."""

    def plain(text: str) -> str:
        text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "csrf", text)
        for url in (f"/{deal_id}/", f"%2F{deal_id}%2F", f"/deals/{deal_id}"):
            text = text.replace(url, url.replace(str(deal_id), "<id>"))
        return text

    headers = {
        name: plain(response.headers.get(name, ""))
        for name in ("Content-Type", "WWW-Authenticate", "Location", "Content-Disposition")
    }
    return response.status_code, plain(response.content.decode()), headers


@pytest.mark.parametrize("viewer", ["stranger", "anonymous"])
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_private_deals_answer_as_absent_ones(
    private_deals: dict[str, Any],
    auth_client: Callable[[User], APIClient],
    viewer: str,
    endpoint: str,
) -> None:
    client = _api_client(viewer, private_deals["stranger"], auth_client)
    absent_id = private_deals["absent"]
    absent = client.get(endpoint.format(id=absent_id))
    status, code = EXPECTED[viewer]
    assert absent.status_code == status, absent.content
    assert absent.json()["code"] == code
    for kind in ("finished", "live"):
        deal_id = private_deals[kind]
        hidden = client.get(endpoint.format(id=deal_id))
        assert _answer(hidden, deal_id) == _answer(absent, absent_id), kind
        assert hidden.json() == absent.json(), kind  # status, code, message, details alike


@pytest.mark.parametrize("viewer", ["stranger", "anonymous"])
def test_an_id_that_cannot_be_one_answers_alike(
    private_deals: dict[str, Any], auth_client: Callable[[User], APIClient], viewer: str
) -> None:
    client = _api_client(viewer, private_deals["stranger"], auth_client)
    for endpoint in ENDPOINTS:
        hidden = client.get(endpoint.format(id=private_deals["finished"]))
        bad = client.get(endpoint.format(id="abc"))
        assert (bad.status_code, bad.json()) == (hidden.status_code, hidden.json()), endpoint


@pytest.mark.parametrize("viewer", ["stranger", "anonymous"])
def test_the_replay_page_of_a_private_deal_is_that_of_an_absent_one(
    private_deals: dict[str, Any], viewer: str
) -> None:
    client = Client()
    if viewer == "stranger":
        client.force_login(private_deals["stranger"])
    absent_id = private_deals["absent"]
    absent = client.get(f"/replay/{absent_id}/")
    if viewer == "stranger":
        assert absent.status_code == 404
    else:
        assert absent.status_code == 302 and absent.headers["Location"]
    for kind in ("finished", "live"):
        deal_id = private_deals[kind]
        hidden = client.get(f"/replay/{deal_id}/")
        assert _answer(hidden, deal_id) == _answer(absent, absent_id), kind


def _queries(client: Any, url: str, deal_id: int) -> list[str]:
    """The SQL a GET of ``url`` runs, the deal's id and the time (a session's expiry is
    compared with now) in it set aside."""
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    asked = rf'("games_deal"\."id" = ){deal_id}\b'
    now = r"'\d{4}-\d\d-\d\d[ T][^']*'"
    return [
        re.sub(now, "<now>", re.sub(asked, r"\1<id>", q["sql"])) for q in queries.captured_queries
    ]


@pytest.mark.parametrize("viewer", ["stranger", "anonymous"])
def test_a_private_deal_costs_the_queries_of_an_absent_one(
    private_deals: dict[str, Any], auth_client: Callable[[User], APIClient], viewer: str
) -> None:
    """Timing: a private deal's answer must not take longer than an absent id's (reading
    the match's seats to refuse it was one more query than a missing id's). The same
    queries, to the letter but for the id, on every endpoint and the replay page."""
    client = _api_client(viewer, private_deals["stranger"], auth_client)
    page = Client()
    if viewer == "stranger":
        page.force_login(private_deals["stranger"])
    absent_id = private_deals["absent"]
    for endpoint in [*ENDPOINTS, "/replay/{id}/"]:
        who = page if endpoint.startswith("/replay/") else client
        absent = _queries(who, endpoint.format(id=absent_id), absent_id)
        assert any("<id>" in sql for sql in absent), (endpoint, absent)
        for kind in ("finished", "live"):
            deal_id = private_deals[kind]
            assert _queries(who, endpoint.format(id=deal_id), deal_id) == absent, (endpoint, kind)
