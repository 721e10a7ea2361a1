"""CORS (django-cors-headers): off by default; with CORS_ALLOWED_ORIGINS, an allowed
origin's preflight and requests get the headers, a refused origin's do not (issue 16)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

ALLOWED = "https://cards.example"
REFUSED = "https://evil.example"
URL = "/api/v1/matches"


def preflight(client: APIClient, origin: str) -> Any:
    return client.options(
        URL,
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type, idempotency-key",
    )


def test_off_by_default(api_client: APIClient, settings: Any) -> None:
    assert settings.CORS_ALLOWED_ORIGINS == []
    response = preflight(api_client, ALLOWED)
    assert "access-control-allow-origin" not in response.headers
    response = api_client.get(URL, HTTP_ORIGIN=ALLOWED)
    assert "access-control-allow-origin" not in response.headers


def test_an_allowed_origin_gets_preflight_and_request_headers(
    api_client: APIClient, settings: Any, user_factory: Any, auth_client: Any
) -> None:
    settings.CORS_ALLOWED_ORIGINS = [ALLOWED]
    response = preflight(api_client, ALLOWED)  # no token: a preflight never carries one
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert "POST" in response.headers["access-control-allow-methods"]
    allowed = response.headers["access-control-allow-headers"].lower()
    assert {"authorization", "content-type", "idempotency-key"} <= {
        h.strip() for h in allowed.split(",")
    }
    assert "access-control-allow-credentials" not in response.headers

    alice = auth_client(user_factory(username="alice"))
    got = alice.get(URL, HTTP_ORIGIN=ALLOWED)
    assert got.status_code == 200
    assert got.headers["access-control-allow-origin"] == ALLOWED
    assert "etag" in got.headers["access-control-expose-headers"].lower()


def test_a_refused_origin_gets_no_cors_headers(api_client: APIClient, settings: Any) -> None:
    settings.CORS_ALLOWED_ORIGINS = [ALLOWED]
    response = preflight(api_client, REFUSED)
    assert "access-control-allow-origin" not in response.headers
    response = api_client.get(URL, HTTP_ORIGIN=REFUSED)
    assert "access-control-allow-origin" not in response.headers
    # Not the API: no CORS even for an allowed origin.
    response = api_client.get("/admin/login/", HTTP_ORIGIN=ALLOWED)
    assert "access-control-allow-origin" not in response.headers
