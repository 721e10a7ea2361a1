"""Running a write once per ``Idempotency-Key``.

The key's record is written in the same transaction as the write, and only when the
write succeeded (2xx): a retry after a committed write is answered from the record; a
retry after a failed, rolled back or crashed one runs again, as if it were the first.
While the first request is still running, its twin is refused at once (409) rather than
queued: on PostgreSQL the first holds a transaction-level advisory lock on (user, key),
which the twin tries without waiting. Elsewhere (SQLite, which runs one write at a time)
the unique (user, key) constraint is the guard: the second commit fails and rolls back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from rest_framework.utils.encoders import JSONEncoder as DRFJSONEncoder

from briscola_service.exceptions import ServiceError
from briscola_service.idempotency.models import IdempotencyKey

KEY_PATTERN = re.compile(r"[\x21-\x7e]{1,255}")


class InvalidIdempotencyKeyError(ServiceError):
    code = "invalid_idempotency_key"
    status = 400
    message = "An Idempotency-Key is 1 to 255 visible ASCII characters (a UUID, say)."


class IdempotencyKeyReusedError(ServiceError):
    code = "idempotency_key_reused"
    status = 422
    message = (
        "This Idempotency-Key was used for a different request (another body or endpoint); "
        "use a new key for a new request."
    )


class IdempotencyKeyInFlightError(ServiceError):
    code = "idempotency_key_in_flight"
    status = 409
    message = (
        "A request with this Idempotency-Key is still being processed; retry in a moment "
        "to get its response."
    )


@dataclass(frozen=True)
class IdempotentResult:
    status_code: int
    body: Any
    replayed: bool
    # The first answer's own headers (ETag, Vary, Location, ...), replayed with it.
    headers: dict[str, str] = field(default_factory=dict)


def idempotency_fingerprint(*, method: str, path: str, body: Any) -> str:
    """What makes two requests "the same": method, path and the body as canonical JSON."""
    canonical = json.dumps(
        [method.upper(), path, body],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
        cls=DjangoJSONEncoder,
        default=str,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _expired_before(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - settings.IDEMPOTENCY_KEY_TTL


def _try_lock(user_id: int, key: str) -> bool:
    """PostgreSQL: take the (user, key) advisory lock until the transaction ends, or
    return False at once if a twin holds it. Other databases: always True."""
    if connection.vendor != "postgresql":
        return True
    digest = hashlib.sha256(f"idempotency:{user_id}:{key}".encode()).digest()
    lock_id = int.from_bytes(digest[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [lock_id])
        row = cursor.fetchone()
    return bool(row and row[0])


def idempotent_call(
    *,
    user_id: int,
    key: str,
    fingerprint: str,
    method: str,
    path: str,
    call: Callable[[], tuple[int, Any, dict[str, str]]],
) -> IdempotentResult:
    """Run ``call`` (a write answering ``(status, body, headers)``) once for ``(user_id, key)``.

    Holds the (user, key) advisory lock (PostgreSQL) for the whole transaction, which
    also wraps ``call``'s own transactions: the write and its key commit together.
    Raises ``IdempotencyKeyInFlightError`` (409) while a twin runs,
    ``IdempotencyKeyReusedError`` (422) when the key recorded another request.
    """
    if not KEY_PATTERN.fullmatch(key):
        raise InvalidIdempotencyKeyError(details={"header": "Idempotency-Key"})
    with transaction.atomic():
        if not _try_lock(user_id, key):
            raise IdempotencyKeyInFlightError()
        record = IdempotencyKey.objects.filter(user_id=user_id, key=key).first()
        if record is not None and record.created_at < _expired_before():
            record.delete()
            record = None
        if record is not None:
            if record.fingerprint != fingerprint:
                raise IdempotencyKeyReusedError(
                    details={"first_used": {"method": record.method, "path": record.path}}
                )
            return IdempotentResult(
                record.status_code,
                json.loads(record.response_json),
                True,
                json.loads(record.response_headers_json or "{}"),
            )
        status_code, body, headers = call()
        if 200 <= status_code < 300:
            try:
                with transaction.atomic():
                    IdempotencyKey.objects.create(
                        user_id=user_id,
                        key=key,
                        fingerprint=fingerprint,
                        method=method.upper(),
                        path=path[:255],
                        status_code=status_code,
                        # DRF's encoder, as its JSONRenderer used for the first answer:
                        # the replay is the same JSON (times to the microsecond).
                        response_json=json.dumps(body, cls=DRFJSONEncoder),
                        response_headers_json=json.dumps(headers),
                    )
            except IntegrityError:
                # A twin committed the same key first (possible without advisory locks):
                # this write is rolled back with the whole transaction.
                raise IdempotencyKeyInFlightError() from None
    return IdempotentResult(status_code, body, False, headers)


def idempotency_keys_delete_expired(*, now: datetime | None = None) -> int:
    """Delete the keys older than ``settings.IDEMPOTENCY_KEY_TTL``; returns how many."""
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=_expired_before(now)).delete()
    return deleted
