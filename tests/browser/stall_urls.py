"""The service's URLs plus one that stalls: a test's URLconf (``settings.ROOT_URLCONF``)
for what Playwright's routes cannot fake, an answer whose headers come and whose body
stops halfway (``route.fulfill`` sends a whole body at once)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from django.http import HttpRequest, StreamingHttpResponse
from django.urls import path

from briscola_service.urls import urlpatterns as service_urlpatterns

RELEASE = threading.Event()
"""Set by the test once it is done: the stalled body then ends (the server's thread too)."""


def _half_a_body() -> Iterator[bytes]:
    yield b'{"code": "ok", "message": "'
    RELEASE.wait(timeout=30)
    yield b'late"}'


def stalled_body(request: HttpRequest) -> StreamingHttpResponse:
    return StreamingHttpResponse(_half_a_body(), content_type="application/json")


urlpatterns = [path("stall-body/", stalled_body), *service_urlpatterns]
