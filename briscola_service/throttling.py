"""The throttles: fixed-window counters that count atomically.

Every throttle is a counter per (scope, identity) that lives for the rate's period from
its first hit: "60/min" lets 60 requests through in the minute that starts with the
first, then refuses (429 ``throttled``, ``details.retry_after`` and a Retry-After header)
until that minute is over. Counting is atomic, so parallel requests can never get more
than the limit through in one window:

- with Redis (the ``throttle`` cache is a Redis cache, so every web worker and instance
  counts together), one Lua script does INCR, sets the expiry on the first hit and reads
  what is left of the window, in one round trip;
- without Redis (``make run``: one process), a dictionary under a lock, keyed the same
  way (the ``throttle`` cache's key prefix included, so tests can start afresh).

When Redis cannot be reached, requests are let through (and a warning logged): an outage
of Redis must not take the API down with it.

The scopes (rates in ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``, "none" turns one off):

- ``anon`` (per client IP) and ``user`` (per account): every API request;
- ``login_ip``: every password check (the API's token and register endpoints, the sign-up
  and sign-in pages, the admin's and the browsable API's login forms), per client IP: the
  CPU a password hash costs, and guessing from one address;
- ``login_user``: *wrong* passwords for one user name (NFKC, lower-cased) *from one
  address*; once over, that name's password checks from that address are refused before
  the check. Counted per (address, name), so that nobody can lock a person out of
  signing in by failing on purpose from elsewhere (as a per-name count of every attempt
  from anywhere did);
- ``login_user_all``: wrong passwords for one user name from every address together, a
  ceiling ten times ``login_user``'s by default (``LOGIN_USER_ALL_FACTOR``; a
  ``login_user_all`` rate in the settings overrides it), so that guessing spread over
  many addresses is bounded too. Refused like ``login_user`` once over, from every
  address: locking a name out takes that many failures a window, from many addresses.
  Sign-ins that succeed count in neither (only in ``login_ip``);
- ``auth_failure``: requests whose API token is wrong, per client IP, counted after the
  lookup: over the limit, a wrong token is 429 instead of 401. Valid tokens are never
  refused for it (see briscola_service.authentication).

``login_user`` and ``login_user_all`` count failures, which are known only after the
check; counted after it, parallel guesses each read the counter before any was counted
and all went through (30 wrong passwords at once for one name: 20 checked where 10 are
allowed). So each check takes its place in the counter first, atomically, as if it would
fail (:func:`take`: refused when that passes the limit), and a check that does not fail
gives it back (:func:`give_back`): the counter is the failures plus the checks in
flight, and never more than the limit are made in a window.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
import time
import unicodedata
from dataclasses import dataclass
from typing import Any

from django.core.cache import BaseCache, caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError
from rest_framework.exceptions import Throttled
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

logger = logging.getLogger(__name__)

# INCR; on the first hit of a window set its expiry; return the count and the window's
# remaining milliseconds (a key that somehow lost its expiry gets it back).
_HIT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    ttl = tonumber(ARGV[1])
end
return {count, ttl}
"""

# Give a hit back: DECR only while the window lives (DECR on a missing key would make a
# counter of -1 with no expiry), never below 0.
_GIVE_BACK_SCRIPT = """
if (tonumber(redis.call('GET', KEYS[1]) or '0')) > 0 then
    return redis.call('DECR', KEYS[1])
end
return 0
"""


@dataclass(frozen=True)
class Count:
    """How many hits the current window has had, and the seconds until it ends."""

    hits: int
    remaining: float


class _LocalCounters:
    """The fallback without Redis: exact within one process (``make run`` is one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[int, float]] = {}

    def _live(self, key: str, now: float) -> tuple[int, float] | None:
        window = self._windows.get(key)
        if window is not None and window[1] <= now:
            del self._windows[key]
            return None
        return window

    def hit(self, key: str, period: float) -> Count:
        now = time.monotonic()
        with self._lock:
            if len(self._windows) > 100_000:  # forget ended windows now and then
                for old in [k for k, (_, end) in self._windows.items() if end <= now]:
                    del self._windows[old]
            window = self._live(key, now)
            hits, end = (window[0] + 1, window[1]) if window else (1, now + period)
            self._windows[key] = (hits, end)
        return Count(hits, end - now)

    def give_back(self, key: str) -> None:
        now = time.monotonic()
        with self._lock:
            window = self._live(key, now)
            if window is not None and window[0] > 0:
                self._windows[key] = (window[0] - 1, window[1])

    def peek(self, key: str) -> Count:
        now = time.monotonic()
        with self._lock:
            window = self._live(key, now)
        return Count(window[0], window[1] - now) if window else Count(0, 0.0)


_local = _LocalCounters()


def throttle_cache() -> BaseCache:
    """The cache that names (and, with Redis, holds) the counters: ``throttle``."""
    return caches["throttle"]


def _redis_client(cache: BaseCache) -> Any:
    return cache._cache.get_client(write=True)  # type: ignore[attr-defined]


def hit(name: str, period: float) -> Count:
    """Count one hit on the counter ``name`` whose windows last ``period`` seconds."""
    cache = throttle_cache()
    key = cache.make_key(name)
    if isinstance(cache, RedisCache):
        client = _redis_client(cache)
        hits, ttl_ms = client.eval(_HIT_SCRIPT, 1, key, max(1, int(period * 1000)))
        return Count(int(hits), int(ttl_ms) / 1000)
    return _local.hit(key, period)


def unhit(name: str) -> None:
    """Take one hit back from the counter ``name`` (nothing once its window ended)."""
    cache = throttle_cache()
    key = cache.make_key(name)
    if isinstance(cache, RedisCache):
        _redis_client(cache).eval(_GIVE_BACK_SCRIPT, 1, key)
        return
    _local.give_back(key)


def peek(name: str) -> Count:
    """The counter ``name`` as it is, without counting a hit."""
    cache = throttle_cache()
    key = cache.make_key(name)
    if isinstance(cache, RedisCache):
        pipe = _redis_client(cache).pipeline(transaction=False)
        hits, ttl_ms = pipe.get(key).pttl(key).execute()
        if hits is None:
            return Count(0, 0.0)
        return Count(int(hits), max(0, int(ttl_ms)) / 1000)
    return _local.peek(key)


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """ "60/min" -> (60, 60); None when the throttle is off."""
    if rate is None:
        return None
    num, period = rate.split("/")
    return int(num), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]


# ``login_user_all``, unless the settings give it a rate: ``login_user``'s, times this.
LOGIN_USER_ALL_FACTOR = 10


def rate_of(scope: str) -> tuple[int, int] | None:
    """The current (limit, period) of a scope, read at each request (settings may change)."""
    rates = api_settings.DEFAULT_THROTTLE_RATES
    if scope == "login_user_all" and scope not in rates:
        base = parse_rate(rates.get("login_user"))
        return None if base is None else (base[0] * LOGIN_USER_ALL_FACTOR, base[1])
    rate: str | None = rates.get(scope)
    return parse_rate(rate)


def client_ip(request: Any) -> str:
    """The client's address as the per-address limits count it: as DRF's throttles see it
    (NUM_PROXIES decides), an IPv6 address by its /64, the block one customer is given (a
    host picks any address in it at will: counted one by one, an outside audit noted, one
    client is as many addresses as it likes)."""
    return address_block(str(BaseThrottle().get_ident(request)))


def address_block(address: str) -> str:
    """``address``, or for IPv6 its /64 (``2001:db8:1:2::/64``); an IPv4-mapped IPv6
    address as its IPv4; anything that is no address as it is."""
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def _retry_after(count: Count) -> int:
    return max(1, math.ceil(count.remaining))


def _counted(scope: str, ident: str) -> tuple[Count, int] | None:
    """Count a hit for ``ident`` in ``scope``: the counter and the limit; None when the
    scope is off or the counters cannot be reached (a warning logged: let through)."""
    rate = rate_of(scope)
    if rate is None:
        return None
    limit, period = rate
    try:
        return hit(f"{scope}:{ident}", period), limit
    except (RedisError, OSError) as exc:
        logger.warning("throttle cache unavailable, request let through: %s", exc)
        return None


def check(scope: str, ident: str) -> None:
    """Count a hit for ``ident`` in ``scope``; raise ``Throttled`` when over the limit.

    Lets the request through (with a warning) when the counters cannot be reached.
    """
    counted = _counted(scope, ident)
    if counted is not None and counted[0].hits > counted[1]:
        raise Throttled(wait=_retry_after(counted[0]))


def refuse_if_over(scope: str, ident: str) -> None:
    """Raise ``Throttled`` if ``ident`` is already over the limit of ``scope`` (no hit)."""
    rate = rate_of(scope)
    if rate is None:
        return
    try:
        count = peek(f"{scope}:{ident}")
    except (RedisError, OSError) as exc:
        logger.warning("throttle cache unavailable, request let through: %s", exc)
        return
    if count.hits >= rate[0]:
        raise Throttled(wait=_retry_after(count))


def take(scope: str, ident: str) -> None:
    """Before a check whose failures ``scope`` counts: count it now, as a failure (raise
    ``Throttled``, the hit given back, when that passes the limit); :func:`give_back`
    once it did not fail. Lets the check through (with a warning) when the counters
    cannot be reached."""
    counted = _counted(scope, ident)
    if counted is not None and counted[0].hits > counted[1]:
        give_back(scope, ident)
        raise Throttled(wait=_retry_after(counted[0]))


def give_back(scope: str, ident: str) -> None:
    """A check :func:`take` counted did not fail: it counts no more."""
    if rate_of(scope) is None:
        return
    try:
        unhit(f"{scope}:{ident}")
    except (RedisError, OSError) as exc:
        logger.warning("throttle cache unavailable, hit not given back: %s", exc)


def _name_ident(username: str) -> str:
    """A user name as the login counters know it: as names are looked up (NFKC, lower
    case), at most 150 characters, always encodable (a lone surrogate as its escape)."""
    name = unicodedata.normalize("NFKC", username.strip()).lower()[:150]
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def _login_idents(request: Any, username: str) -> tuple[str, str]:
    """(the address and the name: ``login_user``'s identity, the name: ``login_user_all``'s).
    The address first: it has no ``|``, so no two pairs make one identity."""
    name = _name_ident(username)
    return f"{client_ip(request)}|{name}", name


_NAME_SCOPES = ("login_user", "login_user_all")


def check_password_attempt(request: Any, username: str, *, counts_failure: bool = True) -> None:
    """Before a password check: count it per client IP (``Throttled`` over
    ``login_ip``), and refuse it (``Throttled``) when the name has failed too often from
    this address (``login_user``) or from all of them (``login_user_all``); then
    :func:`password_check_begin`. With ``counts_failure=False`` the name's counters are
    only read: registering (it sets a password, it checks none), and the token endpoint's
    throttle, whose view begins the check itself once the body is valid."""
    check("login_ip", client_ip(request))
    if counts_failure:
        password_check_begin(request, username)
        return
    for scope, ident in zip(_NAME_SCOPES, _login_idents(request, username), strict=True):
        refuse_if_over(scope, ident)


def password_check_begin(request: Any, username: str) -> None:
    """Right before checking a password for ``username``: count the check as a failure of
    the name, from this address and from all (:func:`take`; ``Throttled``, nothing
    counted, when either is over). :func:`password_check_passed` gives it back unless
    the password was wrong (or the name unknown)."""
    taken: list[tuple[str, str]] = []
    try:
        for scope, ident in zip(_NAME_SCOPES, _login_idents(request, username), strict=True):
            take(scope, ident)
            taken.append((scope, ident))
    except Throttled:
        for scope, ident in taken:
            give_back(scope, ident)
        raise


def password_check_passed(request: Any, username: str) -> None:
    """The check :func:`password_check_begin` counted did not find a wrong password: it
    counts for the name no more."""
    for scope, ident in zip(_NAME_SCOPES, _login_idents(request, username), strict=True):
        give_back(scope, ident)


# --- DRF throttle classes ------------------------------------------------------------------


class _CountingThrottle(BaseThrottle):
    """A DRF throttle over ``check``: ``allow_request`` counts, ``wait`` says how long."""

    scope: str

    def __init__(self) -> None:
        self._wait: float | None = None

    def ident_for(self, request: Any) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Any, view: Any) -> bool:
        ident = self.ident_for(request)
        if ident is None:
            return True
        try:
            check(self.scope, ident)
        except Throttled as exc:
            self._wait = exc.wait
            return False
        return True

    def wait(self) -> float | None:
        return self._wait


class AnonThrottle(_CountingThrottle):
    """Scope ``anon``: requests without a valid token, counted per client IP."""

    scope = "anon"

    def ident_for(self, request: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return client_ip(request)


class UserThrottle(_CountingThrottle):
    """Scope ``user``: requests per account (per client IP when anonymous)."""

    scope = "user"

    def ident_for(self, request: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return f"u{request.user.pk}"
        return f"ip{client_ip(request)}"


class PasswordCheckThrottle(BaseThrottle):
    """For the API endpoints that check or set a password (token, register): one attempt
    per request, counted per client IP, and refused while the user name in the body is
    over its failures (see :func:`check_password_attempt`). The token endpoint then
    counts its check as a failure of the name (:func:`password_check_begin`) once the
    body is valid, and gives it back unless the password was wrong."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Any, view: Any) -> bool:
        username = ""
        data = request.data
        if isinstance(data, dict) and isinstance(data.get("username"), str):
            username = data["username"]
        try:
            check_password_attempt(request, username, counts_failure=False)
        except Throttled as exc:
            self._wait = exc.wait
            return False
        return True

    def wait(self) -> float | None:
        return self._wait
