"""The Celery app; its configuration is the Django settings prefixed with CELERY_."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")

app = Celery("briscola_service")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
