"""The API throttles: anonymous requests by client IP, signed-in ones by account.

Their history lives in the ``throttle`` cache (Redis when REDIS_URL is set, so that all
web workers count together; process memory otherwise). Rates: DEFAULT_THROTTLE_RATES.
"""

from __future__ import annotations

from django.core.cache import BaseCache, caches
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class _FromCurrentSettings:
    """The cache and rates as configured now (DRF reads both once, at import)."""

    scope: str

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
