"""Fixtures for the replay tests: deals played through games.matches.services, and viewers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal, Match


@pytest.fixture(autouse=True)
def replay_fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@dataclass
class Table:
    """A 2- or 4-player match of people, its first deal, and every kind of viewer."""

    match: Match
    deal: Deal
    seated: dict[int, User]
    stranger: User
    admin: User
    clients: dict[str, APIClient]

    def refresh(self) -> None:
        self.deal.refresh_from_db()
        self.match.refresh_from_db()


@pytest.fixture
def table(
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    deterministic_seeds: None,
) -> Callable[..., Table]:
    """``table(players=2, public=False)``: people in every seat, nothing played yet."""

    def make(*, players: int = 2, public: bool = False, format: str = "single") -> Table:
        people = [
            user_factory(username=f"p{players}{'pub' if public else ''}{i}") for i in range(players)
        ]
        match = match_create(
            creator=people[0],
            players=players,
            format=format,
            seats=[SeatSpec("user", u.username) for u in people[1:]],
            public=public,
        )
        for user in people[1:]:
            match = match_join(match_id=match.pk, user=user)
        stranger = user_factory(username=f"stranger{players}{int(public)}")
        admin = user_factory(
            username=f"admin{players}{int(public)}", is_staff=True, is_superuser=True
        )
        clients = {
            "anonymous": APIClient(),
            "stranger": auth_client(stranger),
            "admin": auth_client(admin),
        }
        for i, user in enumerate(people):
            clients[f"seat{i}"] = auth_client(user)
        deal = Deal.objects.select_related("match").get(match=match, number=1)
        return Table(match, deal, dict(enumerate(people)), stranger, admin, clients)

    return make
