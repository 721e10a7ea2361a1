"""Token authentication that answers every malformed credential with a clean 401."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import authentication
from rest_framework.exceptions import AuthenticationFailed

from briscola_service import throttling

# DRF's keys are 40 hexadecimal digits; anything far from that shape is refused before
# it reaches the database (a NUL byte, say, which PostgreSQL would refuse with an error).
TOKEN_KEY = re.compile(r"[0-9A-Za-z]{1,128}")


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``; a header that is not Latin-1 or a key that is not
    alphanumeric is 401 ``authentication_failed``, never a 500. A bot account's token (one
    an admin made by hand) is refused like a revoked one: bots play through the service's
    workers only (see accounts.backends for password logins)."""

    def authenticate(self, request: Any) -> Any:
        """Failed token authentications are counted per client IP (scope ``auth_failure``);
        an address over the limit gets 429 before its token is looked up."""
        if not request.META.get("HTTP_AUTHORIZATION"):
            return None
        ip = throttling.client_ip(request)
        throttling.refuse_if_over("auth_failure", ip)
        try:
            return super().authenticate(request)
        except UnicodeError:
            throttling.record("auth_failure", ip)
            raise AuthenticationFailed("Invalid token header.") from None
        except AuthenticationFailed:
            throttling.record("auth_failure", ip)
            raise

    def authenticate_credentials(self, key: str) -> Any:
        if not TOKEN_KEY.fullmatch(key):
            raise AuthenticationFailed("Invalid token.")
        user, token = super().authenticate_credentials(key)
        if getattr(user, "is_bot", False):
            raise AuthenticationFailed("Bot accounts cannot sign in.")
        return user, token
