"""A body that is not JSON is 400 ``malformed_request`` with a message for people: what is
wrong, and where, never Python's words (``sys.set_int_max_str_digits()``, ``'utf-8'
codec can't decode byte 0xff in position 23``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User
from tests.hardening.conftest import assert_clean_error

pytestmark = pytest.mark.django_db

PYTHON_WORDS = ("sys.", "codec", "position", "char ", "utf-8-sig", "decode", "compliant")


@pytest.fixture
def client(user_factory: Callable[..., User], auth_client: Callable[[User], APIClient]) -> Any:
    return auth_client(user_factory(username="carol"))


@pytest.mark.parametrize(
    ("raw", "content_type", "message"),
    [
        (
            b'{"players":' + b"9" * 5000 + b"}",
            "application/json",
            "JSON parse error - a number in the body has too many digits.",
        ),
        (
            b'{"players":2,"seats":"\xff"}',
            "application/json",
            "JSON parse error - the body is not valid UTF-8 (byte 23).",
        ),
        (
            b'{"players":2,"seats":"\xe2\x82"}',
            "application/json",
            "JSON parse error - the body is not valid UTF-8 (byte 23).",
        ),
        (
            b'{"players":NaN}',
            "application/json",
            "JSON parse error - NaN, Infinity and -Infinity are not JSON numbers.",
        ),
        (
            b'{"players":2,',
            "application/json",
            "JSON parse error - Expecting property name enclosed in double quotes "
            "(line 1, column 14).",
        ),
        (
            b'\xef\xbb\xbf{"players":2}',
            "application/json",
            "JSON parse error - the body starts with a byte order mark (BOM), "
            "which JSON does not allow.",
        ),
    ],
)
def test_malformed_bodies_are_explained_in_words_for_people(
    client: APIClient, raw: bytes, content_type: str, message: str
) -> None:
    response = client.post("/api/v1/matches", raw, content_type=content_type)
    body = assert_clean_error(response, 400, "malformed_request")
    assert body["message"] == message
    assert not any(word in body["message"] for word in PYTHON_WORDS), body
