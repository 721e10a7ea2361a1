"""The record of a write done under an ``Idempotency-Key``.

A row is inserted in the same transaction as the write it records, and only when that
write succeeded: it exists if and only if the write committed, so a crash can never
leave a key that claims a success the database does not hold.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class IdempotencyKey(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(
        max_length=64, help_text="SHA-256 of the method, path and canonical JSON body."
    )
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=255)
    status_code = models.PositiveSmallIntegerField()
    response_json = models.TextField(
        help_text="The response body as JSON text (text, not jsonb: key order is kept)."
    )
    response_headers_json = models.TextField(
        default="{}",
        help_text="The headers the view set on the first answer (ETag, Vary, ...), as JSON.",
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_unique_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key} {self.method} {self.path} -> {self.status_code}"
