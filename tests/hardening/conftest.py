"""Fixtures for the hardening tests: accounts with tokens, and the one error shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

ERROR_KEYS = {"code", "message", "details"}


def assert_clean_error(response: Any, status: int | None = None, code: str | None = None) -> Any:
    """A 4xx in the one JSON error shape (and the given status and code, if any)."""
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    if status is not None:
        assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) == ERROR_KEYS, body
    assert isinstance(body["code"], str) and body["code"], body
    assert isinstance(body["message"], str) and body["message"], body
    assert isinstance(body["details"], dict), body
    if code is not None:
        assert body["code"] == code, body
    return body


@pytest.fixture
def clean_error() -> Callable[..., Any]:
    """``clean_error(response, status=None, code=None)``: see assert_clean_error."""
    return assert_clean_error


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
