"""The Django project: settings, URLs, the Celery app and the API error handler."""

from .celery import app as celery_app

__all__ = ("celery_app",)
