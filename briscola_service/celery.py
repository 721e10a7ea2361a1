"""The Celery app; its configuration is the Django settings prefixed with CELERY_."""

import os
from typing import Any

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")

app = Celery("briscola_service")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="briscola_service.celery.worker_heartbeat", ignore_result=True)
def worker_heartbeat() -> None:
    """Periodic (beat): a worker marks itself seen, for /statusz."""
    from briscola_service.health import worker_heartbeat as mark_seen

    mark_seen()


# Request ids and metrics follow the tasks (briscola_service.logs, briscola_service.metrics).
@signals.before_task_publish.connect
def _publishing(sender: str | None = None, headers: dict[str, Any] | None = None, **_: Any) -> None:
    from briscola_service import logs

    logs.task_headers_add(headers=headers)


@signals.task_prerun.connect
def _starting(sender: Any = None, task: Any = None, **_: Any) -> None:
    from briscola_service import logs, metrics

    logs.task_request_id_set(task=task)
    metrics.TASKS.labels(getattr(task, "name", str(sender)), "run").inc()


@signals.task_postrun.connect
def _ended(task: Any = None, **_: Any) -> None:
    from briscola_service import logs

    logs.task_request_id_reset(task=task)


@signals.task_retry.connect
def _retried(sender: Any = None, **_: Any) -> None:
    from briscola_service import metrics

    metrics.TASKS.labels(getattr(sender, "name", str(sender)), "retried").inc()


@signals.task_failure.connect
def _failed(sender: Any = None, **_: Any) -> None:
    from briscola_service import metrics

    metrics.TASKS.labels(getattr(sender, "name", str(sender)), "failed").inc()


@signals.worker_init.connect
def _exporter(**_: Any) -> None:
    """A worker serves its metrics on CELERY_METRICS_PORT, when set."""
    from django.conf import settings

    from briscola_service import metrics

    if settings.CELERY_METRICS_PORT:
        metrics.start_worker_exporter(settings.CELERY_METRICS_PORT)
