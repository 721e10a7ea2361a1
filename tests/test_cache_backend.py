"""briscola_service.cache.RedisCache: Django's Redis cache, one redis-py client per pool."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.conf import settings

from briscola_service.cache import RedisCache

pytestmark = pytest.mark.redis


def redis_cache(**options: Any) -> RedisCache:
    return RedisCache(settings.REDIS_URL, {"KEY_PREFIX": "test-cache-backend", "OPTIONS": options})


def test_one_client_serves_every_call() -> None:
    cache = redis_cache()
    first = cache._cache.get_client(write=True)
    assert cache._cache.get_client(write=True) is first
    assert cache._cache.get_client("any key") is first  # one server: reads use it too


def test_it_is_a_working_cache_shared_by_threads() -> None:
    cache = redis_cache(socket_timeout=2)
    cache.set("k", {"a": [1, 2]}, timeout=30)
    seen: list[Any] = []

    def read() -> None:
        seen.append(cache.get("k"))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [{"a": [1, 2]}] * 8
    assert cache.add("k", "other", timeout=30) is False  # add does not overwrite
    assert cache.delete("k") is True
    assert cache.get("k") is None


def test_the_settings_use_it_with_redis() -> None:
    assert settings.CACHES["default"]["BACKEND"] == "briscola_service.cache.RedisCache"
    assert settings.CACHES["throttle"]["BACKEND"] == "briscola_service.cache.RedisCache"
