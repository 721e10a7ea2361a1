"""Deadlines under ``make run``, where there is no broker and no beat.

Why on the requests' way in and not a background thread: ``runserver`` runs the app in a
child process that its autoreloader restarts on every code change (a thread would have to
be started, and stopped, in the right one), SQLite takes a lock for each write (a thread
writing on its own would make requests wait at random), and tests would find a writer
they did not start. A deadline is seen through a request (the waiting player polls the
match) or a live stream: every request first runs the sweep, at most once per
``CLOCK_IN_PROCESS_SWEEP_SECONDS``, so the deadline is enforced before the request that
could see it is answered (a page as an API call: both show the match); and the stream of
a match that is due (its deadline or expiry come, its bot late:
games.live.streams.sweep_due) runs it as often, from the threads that read the database
for the streams, so a player who only watches is told within that time.
With a broker this does nothing: Celery beat runs the sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from games.clocks.services import sweep_in_process

logger = logging.getLogger(__name__)

_NOT_SWEPT = (f"/{settings.STATIC_URL.lstrip('/')}", "/healthz", "/readyz", "/statusz", "/metrics")


class InProcessClocksMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Every request but a static file's or a probe's: the pages too (the lobby, the
        # table, the admin) render the matches' state; an outside audit came back to the
        # lobby 45 s after its deadline, and the page said "Your turn" and the table
        # "Time left 0:00" until the page's own API calls ran the sweep.
        if not request.path.startswith(_NOT_SWEPT):
            try:
                sweep_in_process()
            except Exception:  # never fail the request for the sweep (the next one retries)
                logger.exception("the in-process clocks sweep failed")
        return self.get_response(request)
