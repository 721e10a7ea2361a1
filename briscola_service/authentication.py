"""Token authentication: ``Authorization: Token <key>`` or ``Bearer <key>``, with the
account's token or one of its personal access tokens; every malformed credential is a
clean 401, and a personal token used beyond its scopes is 403 ``insufficient_scope``."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import authentication, exceptions, status
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import SAFE_METHODS

from accounts.models import AccessToken
from briscola_service import throttling

# DRF's keys are 40 hexadecimal digits; anything far from that shape is refused before
# it reaches the database (a NUL byte, say, which PostgreSQL would refuse with an error).
TOKEN_KEY = re.compile(r"[0-9A-Za-z]{1,128}")
KEYWORDS = (b"token", b"bearer")


class InsufficientScope(exceptions.APIException):
    status_code = status.HTTP_403_FORBIDDEN
    default_code = "insufficient_scope"
    default_detail = "This token's scopes do not allow this request."


def required_scope(request: Any) -> str:
    """``read`` for reads; ``play`` for writes, unless the view says its writes only read
    (``required_scope = "read"``, e.g. checking a record)."""
    view = (getattr(request, "parser_context", None) or {}).get("view")
    declared = getattr(view, "required_scope", None)
    if isinstance(declared, str):
        return declared
    return "read" if request.method in SAFE_METHODS else "play"


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>`` or ``Authorization: Bearer <key>``.

    The key is the account's token (``/auth/token``: every scope) or a personal access
    token (``/auth/tokens``: its own scopes; ``play`` allows reads too). A header that is
    not Latin-1 or a key that is not alphanumeric is 401 ``authentication_failed``, never
    a 500. A service bot's token (one an admin made by hand) is refused like a revoked one:
    those bots play through the service's workers only (see accounts.backends)."""

    def authenticate_header(self, request: Any) -> str:
        """A 401's ``WWW-Authenticate``: the scheme the documentation teaches (RFC 6750);
        ``Token`` is accepted too."""
        return 'Bearer realm="api"'

    def authenticate(self, request: Any) -> Any:
        """Wrong tokens are counted per client IP (scope ``auth_failure``); once over the
        limit, a wrong one is 429 (with Retry-After: a client retrying a revoked token is
        told to slow down) instead of 401. A valid token is never refused for it: refused
        before the lookup, as it was, every client behind one address (an office, a
        school, a server running several bots) got 429 while one of them kept retrying a
        stale token, 30 times a minute. A lookup is one indexed query on a pooled
        connection, and guessing a token (160 random bits) is hopeless, so the lookup is
        not what needs saving."""
        if not request.META.get("HTTP_AUTHORIZATION"):
            return None
        try:
            auth = authentication.get_authorization_header(request).split()
            if not auth or auth[0].lower() not in KEYWORDS:
                return None  # another scheme: not a credential of ours
            if len(auth) != 2:
                raise AuthenticationFailed(
                    "Invalid token header: send `Authorization: Bearer <token>`."
                )
            user, token = self.authenticate_credentials(auth[1].decode())
        except UnicodeError:
            throttling.check("auth_failure", throttling.client_ip(request))
            raise AuthenticationFailed("Invalid token header.") from None
        except AuthenticationFailed:
            throttling.check("auth_failure", throttling.client_ip(request))
            raise
        if isinstance(token, AccessToken):
            scope = required_scope(request)
            if scope not in token.scopes and not (scope == "read" and "play" in token.scopes):
                raise InsufficientScope(
                    f"This token's scopes ({', '.join(token.scopes) or 'none'}) do not "
                    f"include {scope!r}, which this request needs."
                )
        return user, token

    def authenticate_credentials(self, key: str) -> Any:
        # Imported here: accounts.services imports the error handler, which imports DRF's
        # views, which load this module from the settings.
        from accounts.services import access_token_find, access_token_touch

        if not TOKEN_KEY.fullmatch(key):
            raise AuthenticationFailed("Invalid token.")
        access = access_token_find(key=key)
        if access is not None:
            user = access.user
            if not user.is_active or user.is_bot:
                raise AuthenticationFailed("User inactive or deleted.")
            access_token_touch(token=access)
            return user, access
        user, token = super().authenticate_credentials(key)
        if getattr(user, "is_bot", False):
            raise AuthenticationFailed("Bot accounts cannot sign in.")
        return user, token
