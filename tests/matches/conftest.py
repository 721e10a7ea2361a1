"""Fixtures for the games API tests (issue #3's contract).

Bot replies are queued with ``transaction.on_commit``, which never fires inside a test's
transaction; every call made through :class:`Player` runs inside
``django_capture_on_commit_callbacks(execute=True)``, so the bots' replies (and the
replies they queue in turn) are played before the call returns to the test. The JSON of
the response is the state *before* the bots replied, as the request built it; read the
match again to see their moves.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User

ERROR_KEYS = {"code", "message", "details"}

Capture = Callable[..., AbstractContextManager[Any]]
ExpectError = Callable[[Any, int, str], dict[str, Any]]


def assert_error_shape(response: Any, status: int, code: str) -> dict[str, Any]:
    """The response is the error ``code`` with ``status``, in the one error shape."""
    body = response.json()
    assert response.status_code == status, (response.status_code, body)
    assert set(body) == ERROR_KEYS, body
    assert body["code"] == code, body
    assert isinstance(body["message"], str) and body["message"], body
    assert isinstance(body["details"], dict), body
    return body


class Player:
    """One user's API client; each call runs the bot replies it queues."""

    def __init__(self, user: User, client: APIClient, capture: Capture) -> None:
        self.user = user
        self.client = client
        self._capture = capture
        self.responses: list[tuple[int, Any]] = []
        self.on_response: Callable[[Player, Any], None] | None = None  # sees each response

    @property
    def name(self) -> str:
        return self.user.username

    def request(self, method: str, url: str, data: Any = None) -> Any:
        with self._capture(execute=True):
            if method == "get":
                response = self.client.get(url, data)
            else:
                response = self.client.post(url, data, format="json")
        body = response.json()
        if response.status_code >= 400:
            assert set(body) == ERROR_KEYS, (response.status_code, body)
            assert isinstance(body["details"], dict)
        self.responses.append((response.status_code, body))
        if self.on_response is not None:
            self.on_response(self, response)
        return response

    def get(self, url: str, params: dict[str, Any] | None = None, status: int = 200) -> Any:
        response = self.request("get", url, params)
        assert response.status_code == status, (response.status_code, response.json())
        return response.json()

    def post(self, url: str, body: Any = None, status: int = 200) -> Any:
        response = self.request("post", url, body)
        assert response.status_code == status, (response.status_code, response.json())
        return response.json()

    def error(self, method: str, url: str, body: Any, status: int, code: str) -> dict[str, Any]:
        return assert_error_shape(self.request(method, url, body), status, code)

    # -- the games API -------------------------------------------------------------------

    def create(
        self,
        *,
        players: int = 2,
        format: str = "single",
        seats: list[Any] | None = None,
        status: int = 201,
        **extra: Any,
    ) -> Any:
        body = {
            "players": players,
            "format": format,
            "seats": seats if seats is not None else [{"bot": "greedy"}],
            **extra,
        }
        return self.post("/api/v1/matches", body, status=status)

    def detail(self, match_id: str) -> Any:
        return self.get(f"/api/v1/matches/{match_id}")

    def join(self, match_id: str, body: Any = None, status: int = 200) -> Any:
        return self.post(f"/api/v1/matches/{match_id}/join", body or {}, status=status)

    def events(self, match_id: str, after: int | None = None) -> Any:
        params = {} if after is None else {"after": after}
        return self.get(f"/api/v1/matches/{match_id}/events", params)

    def move(self, match_id: str, card: str, ply: int, status: int = 201) -> Any:
        return self.post(
            f"/api/v1/matches/{match_id}/moves", {"card": card, "ply": ply}, status=status
        )

    def move_in_deal(self, match_id: str, card: str, ply: int, deal: int, status: int = 201) -> Any:
        body = {"card": card, "ply": ply, "deal": deal}
        return self.post(f"/api/v1/matches/{match_id}/moves", body, status=status)

    def play_first_legal(self, match_id: str) -> Any:
        """Play the first legal card of the caller's view; returns the 201 body."""
        deal = self.detail(match_id)["current_deal"]
        assert deal["legal"], f"{self.name} has no legal card: turn {deal['turn']}"
        return self.move(match_id, deal["legal"][0], deal["ply"])


@pytest.fixture(autouse=True)
def api_fast_password_hashing(settings: Any) -> None:
    """These tests authenticate with tokens: the passwords need not be costly to hash."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def player(
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    django_capture_on_commit_callbacks: Capture,
) -> Iterator[Callable[..., Player]]:
    """``player("alice")`` creates the account and returns its :class:`Player`."""
    numbers = itertools.count(1)

    def make(username: str | None = None, **fields: Any) -> Player:
        user = user_factory(username=username or f"person{next(numbers)}", **fields)
        return Player(user, auth_client(user), django_capture_on_commit_callbacks)

    yield make


def seats_by_number(people: list[Player], detail: Any) -> dict[int, Player]:
    """Which of ``people`` sits in each seat of the match ``detail`` describes."""
    names = {p.name: p for p in people}
    return {s["seat"]: names[s["user"]] for s in detail["seats"] if s["user"] in names}


@pytest.fixture
def play_out() -> Callable[..., Any]:
    """``play_out(match_id, people, stop=None, check_legal=False)``: the people play their
    first legal card in turn until the match is no longer active (or ``stop(detail)`` is
    true); returns the last detail read. Bots reply on their own. With ``check_legal``,
    every person's view is read before each move: only the seat to play has legal cards.
    """

    def run(
        match_id: str,
        people: list[Player],
        stop: Callable[[Any], bool] | None = None,
        check_legal: bool = False,
        limit: int = 400,
    ) -> Any:
        detail = people[0].detail(match_id)
        at = seats_by_number(people, detail)
        has_bots = any(s["is_bot"] for s in detail["seats"])
        for _ in range(limit):
            if detail["status"] != "active" or (stop is not None and stop(detail)):
                return detail
            turn = detail["current_deal"]["turn"]
            assert turn in at, f"seat {turn} is to play but nobody here sits there: bot stuck?"
            mover = at[turn]
            view = mover.detail(match_id)["current_deal"]
            assert view["turn"] == turn and view["legal"] == view["hand"] and view["legal"]
            if check_legal:
                for seat, person in at.items():
                    if seat != turn:
                        other = person.detail(match_id)["current_deal"]
                        assert other["turn"] == turn and other["legal"] == []
            detail = mover.move(match_id, view["legal"][0], view["ply"])
            if has_bots:  # the response was built before the bots replied
                detail = people[0].detail(match_id)
        raise AssertionError(f"the match did not end within {limit} moves")

    return run


@pytest.fixture
def expect_error() -> ExpectError:
    """``expect_error(response, status, code)``: see :func:`assert_error_shape`."""
    return assert_error_shape
