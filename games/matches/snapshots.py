"""Match snapshots kept between requests, by version.

A move leaves its match at a new version; both players (and any spectator) then read that
version, each through ``GET /matches/{id}``, usually within milliseconds. The move's
transaction already holds everything those details are made of, so it keeps it here
(:func:`snapshot_put_on_commit`, once the move has committed) and each of those reads
costs one small query, the version's (:func:`games.matches.selectors.match_version`), instead of
reading the match, its seats, its deals and the move log again. The next move reads it
too (``services.move_play``): holding the match's lock, it reads the version and checks its
card against the snapshot of that version instead of the rows.

Why this is safe:

- the key is the match and its version, and a version never comes back with other
  content (what changes a detail changes the version: see ``match_version``), so a
  snapshot is only ever served for the very state it was made from; an entry that is
  not there (evicted, expired, never written, the cache down) is read from the database,
  as before;
- only snapshots made inside the transaction that wrote them, under the match's lock,
  are kept: reads outside a lock see each table at a slightly different moment, and one
  of those must not be served to everyone else;
- they are kept after the commit only (``transaction.on_commit``): a rolled-back move's
  version is reached again by another move, and must not find its snapshot here.

A user an administrator renames keeps the old name in the snapshots kept before, for at
most ``TTL_SECONDS`` (the version does not see names). What a snapshot holds, the seed of
a running deal included, stays on the server (the cache is Redis with ``REDIS_URL``,
process memory otherwise), like the database it comes from. When the cache cannot be
reached, reads and writes are skipped (and logged): the database answers, a little
slower.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.core.cache import caches
from django.db import transaction
from redis.exceptions import RedisError

from games.matches.selectors import MatchSnapshot

logger = logging.getLogger(__name__)

# Long enough for every viewer's next poll; a snapshot expires unread once the match has
# moved on (the version is in the key, nothing is invalidated).
TTL_SECONDS = 300

# Part of every key: change it whenever MatchSnapshot or CurrentDeal change shape, so that
# a new release never unpickles what an older one kept (it would lack the new fields).
LAYOUT = 2


def _key(match_id: Any, version: Sequence[Any]) -> str:
    return f"games:snapshot:{LAYOUT}:{match_id}:{'|'.join(str(v) for v in version)}"


def snapshot_get(match_id: Any, version: Sequence[Any]) -> MatchSnapshot | None:
    """The snapshot of ``match_id`` at ``version``, if one was kept."""
    try:
        found = caches["default"].get(_key(match_id, version))
    except (RedisError, OSError) as exc:
        logger.warning("snapshot cache unavailable, reading the database: %s", exc)
        return None
    return found if isinstance(found, MatchSnapshot) else None


def snapshot_put_on_commit(snapshot: MatchSnapshot) -> None:
    """Keep ``snapshot`` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: _put(snapshot))


def _put(snapshot: MatchSnapshot) -> None:
    try:
        caches["default"].set(
            _key(snapshot.match_id, snapshot.version), snapshot, timeout=TTL_SECONDS
        )
    except (RedisError, OSError) as exc:
        logger.warning("snapshot cache unavailable, not kept: %s", exc)
