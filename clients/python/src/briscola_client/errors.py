"""The API's errors as exceptions: each carries the answer's stable ``code``."""

from __future__ import annotations

from typing import Any


class BriscolaError(Exception):
    """An error answer ``{"code", "message", "details"}`` with its HTTP ``status``.

    Switch on ``code`` (stable), not on ``message`` (for people). ``status`` is 0 when the
    server could not be reached at all (``code`` is then ``connection_error``).
    """

    def __init__(
        self, status: int, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code} ({status}): {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details: dict[str, Any] = details or {}


class InvalidInputError(BriscolaError):
    """400: ``details`` has one entry per refused field: a list of ``{code, message}``."""


class AuthenticationError(BriscolaError):
    """401: no token, a wrong one, or a revoked one."""


class ForbiddenError(BriscolaError):
    """403: e.g. ``not_a_player``, ``insufficient_scope`` (a ``read`` token writing)."""


class NotFoundError(BriscolaError):
    """404: e.g. ``match_not_found``."""


class ConflictError(BriscolaError):
    """409: the match moved on (``stale_ply``, ``not_your_turn``, ``match_over``...)."""


class StalePlyError(ConflictError):
    """409 ``stale_ply``: read the match again and decide again
    (``details["current_ply"]`` says where the deal is)."""


class NotYourTurnError(ConflictError):
    """409 ``not_your_turn``."""


class ThrottledError(BriscolaError):
    """429 ``throttled`` (only raised when the client is told not to wait it out)."""

    @property
    def retry_after(self) -> float:
        value = self.details.get("retry_after", 1)
        return float(value) if isinstance(value, int | float) else 1.0


_BY_CODE: dict[str, type[BriscolaError]] = {
    "stale_ply": StalePlyError,
    "not_your_turn": NotYourTurnError,
    "throttled": ThrottledError,
}
_BY_STATUS: dict[int, type[BriscolaError]] = {
    400: InvalidInputError,
    401: AuthenticationError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    429: ThrottledError,
}


def error_for(status: int, body: Any, reason: str = "") -> BriscolaError:
    """The exception for an error answer (any body: a proxy's HTML page too)."""
    if not isinstance(body, dict):
        body = {}
    code = str(body.get("code") or f"http_{status}")
    message = str(body.get("message") or reason or "HTTP error")
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or BriscolaError
    return cls(status, code, message, details)
