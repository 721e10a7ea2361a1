"""ASGI entry point: Django behind the request limits of briscola_service.serving.

Served by gunicorn with uvicorn workers: ``gunicorn briscola_service.asgi -k
briscola_service.serving.Worker`` (see README, "Serving").
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")

from briscola_service.serving import guard  # noqa: E402

application = guard(get_asgi_application())
