"""The fan-out bus: "match X changed", "user U has news", from the writes to the streams.

Only ids cross the bus, never an event's body: each stream reads the match as it is now
and builds its own viewer's event (games.live.events). So a message may be lost,
duplicated or late without any stream showing a seat more than it may know, and without
loss: a stream woken late reads the match as it is and catches up (its resume path), and
a stream that was not woken at all re-reads on its next heartbeat.

Two buses, one interface:

- :class:`RedisBus` (when ``REDIS_URL`` is set): a write publishes on a Redis channel after
  its transaction commits; each process has one listener thread, subscribed to every
  channel of this service (``PSUBSCRIBE``), that rings the doorbells of its own streams.
  A move accepted by one web instance so reaches the streams of every other. When Redis
  is down, publishing fails quietly (logged: the move stands) and the listener retries;
  when it is back, every stream of the process is rung once to re-read (nothing lost).
- :class:`LocalBus` (no Redis: ``make run``, the tests): the same doorbells rung in
  process.

A doorbell belongs to one stream and its event loop; ringing it from any thread is safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

# A doorbell keeps at most this many unread messages; past it, one "resync" stands for all.
MAX_PENDING = 256


def match_key(match_id: object) -> str:
    return f"m:{match_id}"


def user_key(user_id: object) -> str:
    return f"u:{user_id}"


class Doorbell:
    """What one stream waits on: rung (in the stream's event loop) when one of its keys is
    published. Make it inside the stream's loop."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.loop = asyncio.get_running_loop()
        self.keys: set[str] = set(keys)
        self._event = asyncio.Event()
        self._messages: list[dict[str, Any]] = []

    def _ring(self, message: dict[str, Any]) -> None:  # runs in self.loop
        if len(self._messages) >= MAX_PENDING:
            self._messages = [{"type": "resync"}]
        else:
            self._messages.append(message)
        self._event.set()

    async def wait(self, timeout: float) -> list[dict[str, Any]]:
        """The messages rung since the last call; [] after ``timeout`` seconds of silence."""
        if not self._event.is_set():
            try:
                await asyncio.wait_for(self._event.wait(), timeout)
            except TimeoutError:
                return []
        self._event.clear()
        messages, self._messages = self._messages, []
        return messages


class Bus:
    """The doorbells of this process, by key, and a generation counter per key.

    ``generation(key)`` grows on every delivery for ``key``: a reader that notes it before
    reading the database knows its read saw every change delivered so far (see
    games.live.events.MatchReader)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bells: dict[str, set[Doorbell]] = {}
        self._generation: dict[str, int] = {}
        self._tick = 0

    # -- streams --------------------------------------------------------------------------

    def subscribe(self, bell: Doorbell) -> None:
        with self._lock:
            for key in bell.keys:
                self._bells.setdefault(key, set()).add(bell)
        self._started()

    def add_keys(self, bell: Doorbell, keys: Iterable[str]) -> None:
        with self._lock:
            for key in keys:
                bell.keys.add(key)
                self._bells.setdefault(key, set()).add(bell)

    def unsubscribe(self, bell: Doorbell) -> None:
        with self._lock:
            for key in bell.keys:
                bells = self._bells.get(key)
                if bells is not None:
                    bells.discard(bell)
                    if not bells:
                        del self._bells[key]
                        self._generation.pop(key, None)

    def subscribers(self) -> int:
        with self._lock:
            return len({bell for bells in self._bells.values() for bell in bells})

    def generation(self, key: str) -> int:
        """Grows with every delivery for ``key``. A key nobody listens to answers the
        latest generation of any key (so nothing read before it looks fresh)."""
        with self._lock:
            return self._generation.get(key, self._tick)

    # -- delivery -------------------------------------------------------------------------

    def deliver(self, key: str, message: dict[str, Any]) -> None:
        """Ring every doorbell of ``key`` in this process (from any thread)."""
        with self._lock:
            self._tick += 1
            bells = list(self._bells.get(key, ()))
            if bells:
                self._generation[key] = self._tick
        self._ring(bells, message)

    def deliver_all(self, message: dict[str, Any]) -> None:
        """Ring every doorbell of this process: after an outage, everyone re-reads."""
        with self._lock:
            self._tick += 1
            for key in self._bells:
                self._generation[key] = self._tick
            bells = list({bell for bells in self._bells.values() for bell in bells})
        self._ring(bells, message)

    def _ring(self, bells: list[Doorbell], message: dict[str, Any]) -> None:
        for bell in bells:
            try:
                bell.loop.call_soon_threadsafe(bell._ring, message)
            except RuntimeError:  # its loop is closed: the stream is gone
                self.unsubscribe(bell)

    # -- writes ---------------------------------------------------------------------------

    def publish(self, key: str, message: dict[str, Any]) -> None:
        raise NotImplementedError

    def _started(self) -> None:
        """Start whatever delivers messages to this process (once)."""


class LocalBus(Bus):
    """Without Redis: a publish rings this process's doorbells directly."""

    def publish(self, key: str, message: dict[str, Any]) -> None:
        self.deliver(key, message)


class RedisBus(Bus):
    """Redis pub/sub: publish on ``<prefix><key>``; one listener thread per process."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__()
        import redis

        self._redis = redis
        self.url = url
        self.prefix = prefix
        timeout = settings.REDIS_SOCKET_TIMEOUT
        self._publisher = redis.Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout
        )
        self._listener: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.connected = threading.Event()

    def publish(self, key: str, message: dict[str, Any]) -> None:
        self._publisher.publish(self.prefix + key, json.dumps(message))

    def _started(self) -> None:
        with self._start_lock:
            if self._listener is None or not self._listener.is_alive():
                self._listener = threading.Thread(
                    target=self._listen, name="live-bus-listener", daemon=True
                )
                self._listener.start()

    def _listen(self) -> None:
        """Forever: subscribe, deliver, and after any failure wait and subscribe again.
        Each (re)subscription rings every stream once: whatever was published while this
        process was not listening is read from the database, not lost."""
        redis = self._redis
        delay = 0.1
        down_since: float | None = None
        while True:
            pubsub = None
            try:
                client = redis.Redis.from_url(
                    self.url, socket_connect_timeout=1, socket_keepalive=True
                )
                pubsub = client.pubsub(ignore_subscribe_messages=True)
                pubsub.psubscribe(self.prefix + "*")
                self.connected.set()
                if down_since is not None:
                    logger.warning(
                        "live bus: Redis is back after %.1f s", time.monotonic() - down_since
                    )
                    down_since = None
                delay = 0.1
                self.deliver_all({"type": "resync"})
                while True:
                    found = pubsub.get_message(timeout=5.0)
                    if found is None:
                        pubsub.ping()  # a dead connection shows up here
                        continue
                    self._handle(found)
            except (redis.RedisError, OSError) as exc:
                self.connected.clear()
                if down_since is None:
                    down_since = time.monotonic()
                    logger.warning("live bus: Redis unavailable, retrying: %s", exc)
            except Exception:  # never let the listener die: streams would go deaf
                self.connected.clear()
                logger.exception("live bus: listener failed, restarting")
            finally:
                if pubsub is not None:
                    with contextlib.suppress(Exception):  # already failing; the loop retries
                        pubsub.close()
            time.sleep(delay)
            delay = min(delay * 2, 2.0)

    def _handle(self, found: dict[str, Any]) -> None:
        if found.get("type") not in ("pmessage", "message"):
            return
        channel = found["channel"]
        if isinstance(channel, bytes):
            channel = channel.decode()
        try:
            message = json.loads(found["data"])
        except (ValueError, TypeError):
            return
        if isinstance(message, dict):
            self.deliver(channel.removeprefix(self.prefix), message)


_bus: Bus | None = None
_bus_lock = threading.Lock()


def get_bus() -> Bus:
    """This process's bus: Redis pub/sub with ``REDIS_URL``, else in-process."""
    global _bus
    with _bus_lock:
        if _bus is None:
            url = settings.REDIS_URL
            if url and settings.LIVE_BUS != "local":
                db = (urlparse(url).path or "/0").lstrip("/") or "0"
                _bus = RedisBus(url, f"{settings.LIVE_CHANNEL_PREFIX}{db}:")
            else:
                _bus = LocalBus()
        return _bus


def set_bus(bus: Bus | None) -> None:
    """Replace this process's bus (tests)."""
    global _bus
    with _bus_lock:
        _bus = bus


# -- what the writes call ------------------------------------------------------------------


def publish_quietly(key: str, message: dict[str, Any]) -> bool:
    """Publish; a failure is logged, never raised (the streams' resume path recovers)."""
    try:
        get_bus().publish(key, message)
    except Exception as exc:
        logger.warning("live bus: not published (%s): %s", key, exc)
        return False
    return True


def match_changed_on_commit(match_id: object, *, users: Iterable[object] = ()) -> None:
    """Once the current transaction commits, tell the streams that match ``match_id``
    changed (and the account streams of ``users``, who may not be watching the match
    yet: an invitation, a seat just taken). Never fails the write."""
    match = str(match_id)
    user_ids = [str(u) for u in users]

    def publish() -> None:
        publish_quietly(match_key(match), {"match": match})
        for user in user_ids:
            publish_quietly(user_key(user), {"match": match})

    transaction.on_commit(publish, robust=True)


def user_changed_on_commit(user_id: object, *, reason: str = "") -> None:
    """Once the current transaction commits, tell ``user_id``'s streams to look again
    (``reason`` "credentials": at their credentials)."""
    message = {"user": str(user_id), "reason": reason}
    transaction.on_commit(lambda: publish_quietly(user_key(user_id), message), robust=True)
