"""Fair queues: work queued per account and taken round-robin, at most K at a time each.

A Celery queue is first in, first out: one account that queues 600 bot replies makes
everyone else's wait behind all of them. Here the work itself waits in Redis, in one
queue per account (a sorted set: oldest first, each item once), and the Celery tasks are
only *tokens*: whichever token a worker runs takes the next item of the next account in
turn, so an account's item waits behind at most one item of each other account, however
many each has queued, and however many accounts an attacker registers.

The turn: the accounts with work form a ring ordered by when each was last served (a
sorted set). A token serves the account served longest ago, which then goes to the back.
An account that joins the ring (a new item after none) takes its place by when it was last
served (within ``SERVED_MEMORY_SECONDS``), not at the back: a player whose bot replies come
one at a time, each after its own move, goes before the accounts served since its last
one, and an account gains nothing by leaving and coming back. An account not served
lately joins at the back (so new accounts never jump the line).

An account also has at most ``limit`` items being worked on at once (its *leases*). An
account at its limit is passed over; a token that finds every account with work at its
limit ends without work and is *owed*: the next lease released sends a token in its place,
so the passed-over item is taken as soon as its account has room again.

What a lost or duplicated task cannot break:

- a lease expires by itself after ``lease_seconds`` (set it at the task's hard time limit),
  so a task killed mid-work holds its account's slot no longer than that;
- a token run twice takes two items (or finds none): the work must be idempotent;
- a token that took an item and died before its release is, when its task is delivered
  again (late acknowledgement), given the same item again (its id names what it took);
- an item whose task is lost for good is gone from the queue: the caller's own sweep (for
  bot replies, the beat's bot sweep) must find that work undone and push it again;
  pushing an item already queued keeps its place;
- every key expires ``KEY_TTL_SECONDS`` after its last push, so Redis keeps nothing
  forever.

The ring's order is a stamp: the server's time in milliseconds, times 1,000, plus a
counter, so that two turns in one millisecond keep their order. Each pool (one per kind of
task) has its own ring. The state is in the ``default`` cache's Redis (the broker's),
changed only by the Lua scripts below, each atomic, so any number of workers share it.
Keys are computed inside the scripts (``<prefix>{<pool>}:q:<account>``): fine on one Redis
server, not on a Redis Cluster.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

KEY_TTL_SECONDS = 3600
"""An account's queue, the ring and the debt expire this long after their last push."""
SERVED_MEMORY_SECONDS = 600
"""How long the ring remembers when an account was last served (see _PUSH)."""

# KEYS: ring, served, queue of the account, tags of the account. ARGV: account, item,
# ttl ms, tag. The item keeps its first score (ZADD NX) and tag: pushing it again keeps its
# place. An account that joins the ring takes its place by when it was last served (an
# account back with a new reply goes before those served since); one not served lately, at
# the back.
_PUSH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local stamp = now * 1000 + redis.call('INCR', KEYS[1] .. ':seq') % 1000
redis.call('PEXPIRE', KEYS[1] .. ':seq', ARGV[3])
local added = redis.call('ZADD', KEYS[3], 'NX', now, ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
if added == 1 and ARGV[4] ~= '' then
    redis.call('HSET', KEYS[4], ARGV[2], ARGV[4])
end
redis.call('PEXPIRE', KEYS[4], ARGV[3])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    local last = redis.call('ZSCORE', KEYS[2], ARGV[1])
    redis.call('ZADD', KEYS[1], last or stamp, ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return added
"""

# KEYS: ring, served, owed. ARGV: pool prefix, limit, lease ms, token id, ttl ms, memory ms.
# A token that took an item before (the same token id: a task delivered again because its
# worker died before acknowledging it) gets the same item again, with a new lease.
# Otherwise it visits the accounts of the ring once at most, the longest unserved first:
# one without items leaves the ring; one at its limit is passed over; the first one with
# room gives its oldest item (and its tag), takes a lease and goes to the back (if it has
# more). Returns {account, item, waited ms, passed over, tag}; account '' when nothing could
# be taken (then a token is owed if an account with work was passed over).
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local stamp = now * 1000 + redis.call('INCR', KEYS[1] .. ':seq') % 1000
redis.call('PEXPIRE', KEYS[1] .. ':seq', ARGV[5])
local limit = tonumber(ARGV[2])
local passed = 0
local record = ARGV[1] .. 't:' .. ARGV[4]
local before = redis.call('GET', record)
if before then
    local cut = string.find(before, '|', 1, true)
    local account = string.sub(before, 1, cut - 1)
    local leases = ARGV[1] .. 'l:' .. account
    redis.call('ZADD', leases, now + tonumber(ARGV[3]), ARGV[4])
    redis.call('PEXPIRE', leases, ARGV[3])
    return {account, string.sub(before, cut + 1), 0, 0, ''}
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', (now - tonumber(ARGV[6])) * 1000)
for _, account in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local queue = ARGV[1] .. 'q:' .. account
    local leases = ARGV[1] .. 'l:' .. account
    if redis.call('ZCARD', queue) == 0 then
        redis.call('ZREM', KEYS[1], account)
    else
        redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
        if redis.call('ZCARD', leases) >= limit then
            passed = passed + 1
        else
            local head = redis.call('ZPOPMIN', queue)
            local tags = ARGV[1] .. 'r:' .. account
            local tag = redis.call('HGET', tags, head[1]) or ''
            redis.call('HDEL', tags, head[1])
            if redis.call('ZCARD', queue) > 0 then
                redis.call('ZADD', KEYS[1], stamp, account)
            else
                redis.call('ZREM', KEYS[1], account)
            end
            redis.call('ZADD', KEYS[2], stamp, account)
            redis.call('ZADD', leases, now + tonumber(ARGV[3]), ARGV[4])
            redis.call('PEXPIRE', leases, ARGV[3])
            redis.call('SET', record, account .. '|' .. head[1], 'PX', ARGV[5])
            return {account, head[1], now - tonumber(head[2]), passed, tag}
        end
    end
end
if passed > 0 then
    redis.call('INCR', KEYS[3])
    redis.call('PEXPIRE', KEYS[3], ARGV[5])
end
return {'', '', 0, passed, ''}
"""

# KEYS: leases of the account, ring, owed. ARGV: token id, pool prefix.
# Drops the lease and the token's record; if a token is owed and an item waits, pays one
# back: returns the {account, item} at the head of the first queue with work (the new
# token's own item).
_RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', ARGV[2] .. 't:' .. ARGV[1])
local owed = tonumber(redis.call('GET', KEYS[3]) or '0')
if owed <= 0 then return {} end
for _, account in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    local head = redis.call('ZRANGE', ARGV[2] .. 'q:' .. account, 0, 0)
    if head[1] then
        redis.call('DECR', KEYS[3])
        return {account, head[1]}
    end
end
redis.call('DEL', KEYS[3])
return {}
"""


class FairQueuesUnavailableError(RuntimeError):
    """Fair queues need the ``default`` cache on Redis (they run with a broker only)."""


@dataclass(frozen=True)
class Taken:
    """An item taken from a pool, with the lease its account holds until released."""

    pool: str
    account: str
    item: str
    waited: float
    """Seconds the item waited in its account's queue (first push to take)."""
    lease: str
    tag: str = ""
    """What the pusher attached to the item (the request id a bot reply's logs carry)."""


@dataclass(frozen=True)
class Outcome:
    """What a take found: an item (``taken``), or none with ``passed`` accounts passed over
    at their limit (0: nothing queued in the pool)."""

    taken: Taken | None
    passed: int


def _client() -> Any:
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        raise FairQueuesUnavailableError("fair queues need the default cache on Redis")
    return cache._cache.get_client(write=True)


def _prefix(pool: str) -> str:
    return f"{settings.BOT_FAIR_KEY_PREFIX}{{{pool}}}:"


def _keys(pool: str) -> tuple[str, str, str]:
    prefix = _prefix(pool)
    return prefix + "ring", prefix + "served", prefix + "owed"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def push(pool: str, account: str, item: str, tag: str = "") -> bool:
    """Queue ``item`` for ``account`` in ``pool``, with ``tag`` (given back with it); False
    if it was queued already (it keeps its place and tag). Raises redis' errors."""
    ring, served, _owed = _keys(pool)
    queue, tags = _prefix(pool) + f"q:{account}", _prefix(pool) + f"r:{account}"
    added = _client().eval(
        _PUSH, 4, ring, served, queue, tags, account, item, KEY_TTL_SECONDS * 1000, tag
    )
    return bool(added)


def take(pool: str, *, limit: int, lease_seconds: float, token: str | None = None) -> Outcome:
    """The next item in turn from ``pool``, its account's lease taken (release it with
    :func:`release`). ``token`` names the taker (the Celery task's id): a token that took an
    item and was not released (its worker died; the task is delivered again) gets the same
    item again. Raises redis' errors."""
    ring, served, owed = _keys(pool)
    lease = token or uuid.uuid4().hex
    account, item, waited_ms, passed, tag = _client().eval(
        _TAKE,
        3,
        ring,
        served,
        owed,
        _prefix(pool),
        max(1, limit),
        max(1, int(lease_seconds * 1000)),
        lease,
        KEY_TTL_SECONDS * 1000,
        SERVED_MEMORY_SECONDS * 1000,
    )
    account = _text(account)
    if not account:
        return Outcome(None, int(passed))
    taken = Taken(pool, account, _text(item), int(waited_ms) / 1000, lease, _text(tag))
    return Outcome(taken, int(passed))


def release(taken: Taken) -> tuple[str, str] | None:
    """Give back ``taken``'s lease. If a token is owed (one found every account with work
    at its limit), returns the (account, item) the caller sends a new token for."""
    ring, _served, owed = _keys(taken.pool)
    leases = _prefix(taken.pool) + f"l:{taken.account}"
    paid = _client().eval(_RELEASE, 3, leases, ring, owed, taken.lease, _prefix(taken.pool))
    if not paid:
        return None
    return _text(paid[0]), _text(paid[1])


def leases_held(pool: str, account: str) -> int:
    """How many unexpired leases ``account`` holds in ``pool`` (for tests and operators)."""
    client = _client()
    t = client.time()
    now_ms = int(t[0]) * 1000 + int(t[1]) // 1000
    return int(client.zcount(_prefix(pool) + f"l:{account}", f"({now_ms}", "+inf"))


def queued(pool: str, account: str) -> list[str]:
    """The items ``account`` has waiting in ``pool``, oldest first."""
    return [_text(m) for m in _client().zrange(_prefix(pool) + f"q:{account}", 0, -1)]
