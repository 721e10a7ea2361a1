"""The API throttles: anonymous requests by client IP, signed-in ones by account.

Their history lives in the ``throttle`` cache (Redis when REDIS_URL is set, so that all
web workers count together; process memory otherwise). Rates: DEFAULT_THROTTLE_RATES.
When that cache cannot be reached, requests are let through (and a warning logged): an
outage of Redis must not take the API down with it.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import BaseCache, caches
from redis.exceptions import RedisError
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

logger = logging.getLogger(__name__)


class _FromCurrentSettings:
    """The cache and rates as configured now (DRF reads both once, at import); fails open."""

    scope: str

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            allowed: bool = super().allow_request(request, view)  # type: ignore[misc]
        except (RedisError, OSError) as exc:
            logger.warning("throttle cache unavailable, request let through: %s", exc)
            return True
        return allowed

    @property
    def cache(self) -> BaseCache:
        return caches["throttle"]

    def get_rate(self) -> str | None:
        rate: str | None = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return rate


class AnonThrottle(_FromCurrentSettings, AnonRateThrottle):
    """Scope ``anon``: requests without a valid token, counted per client IP."""


class UserThrottle(_FromCurrentSettings, UserRateThrottle):
    """Scope ``user``: requests per account (per client IP when anonymous)."""
