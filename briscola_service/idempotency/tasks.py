"""Periodic cleanup of old idempotency keys (celery beat: CELERY_BEAT_SCHEDULE)."""

from __future__ import annotations

from celery import shared_task

from briscola_service.idempotency import services


@shared_task(name="idempotency.tasks.idempotency_keys_cleanup", ignore_result=True)
def idempotency_keys_cleanup() -> int:
    """Delete the idempotency keys past their time to live; safe to run twice or to lose."""
    return services.idempotency_keys_delete_expired()
