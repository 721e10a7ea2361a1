"""WSGI entry point (gunicorn briscola_service.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")

application = get_wsgi_application()
