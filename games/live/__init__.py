"""Live streams: a match's changes and an account's news pushed to clients as they happen.

- :mod:`games.live.bus`: the fan-out bus. A write says only "match X changed" (or "user U
  has news"), after its transaction commits; Redis pub/sub carries it to every web
  instance when ``REDIS_URL`` is set, an in-process bus does otherwise.
- :mod:`games.live.events`: each stream builds its viewer's events itself, from the
  match's snapshot (games.matches.snapshots) and the same view function as the REST
  detail (``MatchSnapshot.detail_for``): nothing crosses the bus that a seat may not
  know, because nothing but ids crosses it.
- :mod:`games.live.apis`: ``GET /api/v1/matches/{id}/stream`` and ``GET /api/v1/stream``,
  as Server-Sent Events or NDJSON.

Services call only :func:`match_changed_on_commit` (and :func:`user_changed_on_commit`).
"""

from __future__ import annotations

from games.live.bus import match_changed_on_commit, user_changed_on_commit

__all__ = ["match_changed_on_commit", "user_changed_on_commit"]
