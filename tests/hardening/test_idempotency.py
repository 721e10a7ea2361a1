"""Idempotency-Key on POST /matches and POST /matches/{id}/moves: retries are safe."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connections
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from briscola_service.idempotency.models import IdempotencyKey
from briscola_service.idempotency.services import idempotency_keys_delete_expired
from briscola_service.idempotency.tasks import idempotency_keys_cleanup
from games.matches import apis
from games.models import Match, Move
from tests.hardening.conftest import assert_clean_error

MATCHES = "/api/v1/matches"

pytestmark = pytest.mark.django_db


def moves_url(match: Any) -> str:
    return f"{MATCHES}/{match.pk}/moves"


def key() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def people(user_factory: Callable[..., User]) -> tuple[User, User]:
    return user_factory(username="alice"), user_factory(username="bob")


def first_move(games: Any, match: Any) -> tuple[User, dict[str, Any]]:
    state = games.state(match)
    mover = games.seat_users(match)[state.turn]
    return mover, {"card": state.legal_moves()[0].code, "ply": state.ply}


def test_a_retried_move_answers_the_first_response_and_writes_nothing(
    people: tuple[User, User], games: Any, auth_client: Callable[[User], APIClient]
) -> None:
    match = games.person_match(*people)
    mover, body = first_move(games, match)
    client = auth_client(mover)
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    first = client.post(moves_url(match), body, format="json", **headers)
    assert first.status_code == 201, first.json()
    again = client.post(moves_url(match), body, format="json", **headers)
    assert again.status_code == 201
    assert again.json() == first.json()
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert Move.objects.filter(deal__match=match).count() == 1
    # Without the key the retry is what it always was: the deal has moved on.
    plain = client.post(moves_url(match), body, format="json")
    assert_clean_error(plain, 409, "stale_ply")


def test_a_retried_create_makes_one_match(
    people: tuple[User, User], auth_client: Callable[[User], APIClient]
) -> None:
    alice, _ = people
    client = auth_client(alice)
    body = {"players": 2, "format": "single", "seats": [{"user": "bob"}]}
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    first = client.post(MATCHES, body, format="json", **headers)
    assert first.status_code == 201, first.json()
    again = client.post(MATCHES, body, format="json", **headers)
    assert (again.status_code, again.json()) == (201, first.json())
    assert Match.objects.count() == 1
    # A new key is a new match.
    other = client.post(MATCHES, body, format="json", HTTP_IDEMPOTENCY_KEY=key())
    assert other.status_code == 201 and other.json()["id"] != first.json()["id"]
    assert Match.objects.count() == 2


def test_the_same_key_with_another_body_or_endpoint_is_422(
    people: tuple[User, User], games: Any, auth_client: Callable[[User], APIClient]
) -> None:
    match = games.person_match(*people)
    mover, body = first_move(games, match)
    client = auth_client(mover)
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    assert client.post(moves_url(match), body, format="json", **headers).status_code == 201
    changed = {**body, "ply": body["ply"] + 1}
    error = assert_clean_error(
        client.post(moves_url(match), changed, format="json", **headers),
        422,
        "idempotency_key_reused",
    )
    assert error["details"]["first_used"] == {"method": "POST", "path": moves_url(match)}
    create = {"players": 2, "seats": ["open"]}
    assert_clean_error(
        client.post(MATCHES, create, format="json", **headers), 422, "idempotency_key_reused"
    )
    assert Move.objects.filter(deal__match=match).count() == 1
    assert Match.objects.count() == 1


def test_keys_are_scoped_to_the_user(
    people: tuple[User, User], auth_client: Callable[[User], APIClient]
) -> None:
    alice, bob = people
    shared = {"HTTP_IDEMPOTENCY_KEY": "the-same-key"}
    body = {"players": 2, "seats": ["open"]}
    a = auth_client(alice).post(MATCHES, body, format="json", **shared)
    b = auth_client(bob).post(MATCHES, body, format="json", **shared)
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"]
    assert IdempotencyKey.objects.filter(key="the-same-key").count() == 2


def test_errors_are_not_recorded_so_the_key_can_be_retried(
    people: tuple[User, User], games: Any, auth_client: Callable[[User], APIClient]
) -> None:
    match = games.person_match(*people)
    mover, body = first_move(games, match)
    client = auth_client(mover)
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    stale = {**body, "ply": body["ply"] + 5}
    assert_clean_error(client.post(moves_url(match), stale, format="json", **headers), 409)
    assert not IdempotencyKey.objects.exists()
    assert client.post(moves_url(match), body, format="json", **headers).status_code == 201


def test_a_crash_after_the_write_leaves_neither_the_write_nor_the_key(
    people: tuple[User, User],
    games: Any,
    auth_client: Callable[[User], APIClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The key and the move commit together: a failure before the response rolls back both."""
    match = games.person_match(*people)
    mover, body = first_move(games, match)

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the worker died after the move was written")

    monkeypatch.setattr(apis.selectors.MatchSnapshot, "detail_for", crash)  # the response
    client = auth_client(mover)
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    with pytest.raises(RuntimeError):
        client.post(moves_url(match), body, format="json", **headers)
    assert not Move.objects.filter(deal__match=match).exists()
    assert not IdempotencyKey.objects.exists()
    monkeypatch.undo()
    assert client.post(moves_url(match), body, format="json", **headers).status_code == 201
    assert Move.objects.filter(deal__match=match).count() == 1


@pytest.mark.parametrize("bad", ["", "x" * 256, "two words", "caf\u00e9"])
def test_a_malformed_key_is_400(
    bad: str, people: tuple[User, User], auth_client: Callable[[User], APIClient]
) -> None:
    response = auth_client(people[0]).post(
        MATCHES, {"players": 2, "seats": ["open"]}, format="json", HTTP_IDEMPOTENCY_KEY=bad
    )
    assert_clean_error(response, 400, "invalid_idempotency_key")
    assert not Match.objects.exists()


def test_keys_are_kept_24_hours_then_cleaned_up(
    people: tuple[User, User], auth_client: Callable[[User], APIClient]
) -> None:
    alice, _ = people
    client = auth_client(alice)
    body = {"players": 2, "seats": ["open"]}
    old, recent = key(), key()
    for k in (old, recent):
        assert client.post(MATCHES, body, format="json", HTTP_IDEMPOTENCY_KEY=k).status_code == 201
    assert settings.IDEMPOTENCY_KEY_TTL.total_seconds() >= 24 * 3600
    IdempotencyKey.objects.filter(key=recent).update(
        created_at=timezone.now() - timedelta(hours=23)
    )
    IdempotencyKey.objects.filter(key=old).update(
        created_at=timezone.now() - settings.IDEMPOTENCY_KEY_TTL - timedelta(minutes=1)
    )
    # A 23-hour-old key still answers from its record.
    replay = client.post(MATCHES, body, format="json", HTTP_IDEMPOTENCY_KEY=recent)
    assert replay["Idempotent-Replayed"] == "true"
    assert idempotency_keys_cleanup() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == [recent]
    assert idempotency_keys_delete_expired() == 0


def test_an_expired_key_that_was_not_cleaned_up_yet_is_forgotten(
    people: tuple[User, User], auth_client: Callable[[User], APIClient]
) -> None:
    client = auth_client(people[0])
    body = {"players": 2, "seats": ["open"]}
    k = key()
    assert client.post(MATCHES, body, format="json", HTTP_IDEMPOTENCY_KEY=k).status_code == 201
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(days=2))
    again = client.post(MATCHES, body, format="json", HTTP_IDEMPOTENCY_KEY=k)
    assert again.status_code == 201 and "Idempotent-Replayed" not in again
    assert Match.objects.count() == 2


def test_the_cleanup_is_scheduled() -> None:
    entries = {e["task"]: e for e in settings.CELERY_BEAT_SCHEDULE.values()}
    entry = entries["idempotency.tasks.idempotency_keys_cleanup"]
    assert entry["schedule"] <= 24 * 3600


def test_the_header_is_in_the_schema(api_client: APIClient) -> None:
    schema = api_client.get("/api/schema/", {"format": "json"}).json()
    for path in ("/api/v1/matches", "/api/v1/matches/{match_id}/moves"):
        post = schema["paths"][path]["post"]
        header = [p for p in post["parameters"] if p["name"] == "Idempotency-Key"]
        assert header and header[0]["in"] == "header" and not header[0].get("required")
        assert "idempotency_key_reused" in header[0]["description"]
        assert {"409", "422"} <= set(post["responses"])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_twin_of_a_request_still_in_flight_gets_409(
    people: tuple[User, User],
    games: Any,
    auth_client: Callable[[User], APIClient],
    monkeypatch: pytest.MonkeyPatch,
    no_stray_connections: None,
) -> None:
    """Two threads, two connections: the first holds its move open; its twin is refused."""
    match = games.person_match(*people)
    mover, body = first_move(games, match)
    inside, release = threading.Event(), threading.Event()
    real_detail = apis.selectors.MatchSnapshot.detail_for

    def slow_detail(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "first":
            inside.set()
            assert release.wait(20)
        return real_detail(*args, **kwargs)

    monkeypatch.setattr(apis.selectors.MatchSnapshot, "detail_for", slow_detail)  # the response
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    results: dict[str, Any] = {}

    def first_request() -> None:
        try:
            results["first"] = auth_client(mover).post(
                moves_url(match), body, format="json", **headers
            )
        finally:
            connections.close_all()

    thread = threading.Thread(target=first_request, name="first", daemon=True)
    thread.start()
    try:
        assert inside.wait(20), "the first request never reached its write"
        twin = auth_client(mover).post(moves_url(match), body, format="json", **headers)
        assert_clean_error(twin, 409, "idempotency_key_in_flight")
    finally:
        release.set()
        thread.join(30)
    assert not thread.is_alive()
    assert results["first"].status_code == 201
    replay = auth_client(mover).post(moves_url(match), body, format="json", **headers)
    assert replay.status_code == 201 and replay.json() == results["first"].json()
    assert Move.objects.filter(deal__match=match).count() == 1
    connections.close_all()


# --- Headers (issue 19, item 13) ----------------------------------------------------------


def _header_names(response: Any) -> set[str]:
    return {name.lower() for name, _ in response.items()} - {"idempotent-replayed"}


def test_first_and_replayed_answers_keep_every_header_of_a_normal_answer(
    people: tuple[User, User], games: Any, auth_client: Callable[[User], APIClient]
) -> None:
    # A normal answer, without a key: the header set to match.
    plain = games.person_match(*people)
    mover, body = first_move(games, plain)
    normal = auth_client(mover).post(moves_url(plain), body, format="json")
    assert normal.status_code == 201
    assert normal["ETag"] and "Authorization" in normal["Vary"]

    match = games.person_match(*people)
    mover, body = first_move(games, match)
    client = auth_client(mover)
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    first = client.post(moves_url(match), body, format="json", **headers)
    again = client.post(moves_url(match), body, format="json", **headers)
    assert first.status_code == again.status_code == 201
    for response in (first, again):
        assert _header_names(response) == _header_names(normal)
        assert "Authorization" in response["Vary"]
    assert again["ETag"] == first["ETag"]
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first


def test_a_replayed_match_creation_keeps_its_etag_and_vary(
    people: tuple[User, User], auth_client: Callable[[User], APIClient]
) -> None:
    client = auth_client(people[0])
    body = {"players": 2, "seats": ["open"]}
    normal = client.post(MATCHES, body, format="json")
    headers = {"HTTP_IDEMPOTENCY_KEY": key()}
    first = client.post(MATCHES, body, format="json", **headers)
    again = client.post(MATCHES, body, format="json", **headers)
    assert normal.status_code == first.status_code == again.status_code == 201
    assert _header_names(first) == _header_names(again) == _header_names(normal)
    assert again["ETag"] == first["ETag"] and "Authorization" in again["Vary"]
