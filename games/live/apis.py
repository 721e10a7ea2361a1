"""The stream routes: ``GET /api/v1/matches/{id}/stream`` and ``GET /api/v1/stream``.

Everything that can refuse a stream happens in the request, before the stream starts,
with the usual error body: authentication (401), the request rate (429 ``throttled``: an
opening counts as any request of the account), the match (404, 403), ``Last-Event-ID``
or ``?after=`` (400 ``invalid_event_id``), the per-account and per-address caps (429
``too_many_streams``) and the process's (503 ``streams_full``), each 429 and 503 with
Retry-After, ``Accept`` (406). Then the response's body is an async iterator
(games.live.streams) that the ASGI server drives: the request's thread and its database
connection are given back at once.

Served by a WSGI server (``manage.py runserver``, the test client), a stream cannot wait:
it answers the events owed now and ends; a client reconnects with ``Last-Event-ID``, as
EventSource does by itself. Under ASGI it stays open.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.db import connection
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.authentication import SessionAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import ErrorDetail, NotAuthenticated, ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import AccessToken
from briscola_service import throttling
from briscola_service.authentication import TokenAuthentication
from briscola_service.exceptions import ErrorSerializer
from games.errors import InvalidEventIdError, StreamsFullError, TooManyStreamsError
from games.http import READ_ERRORS, query_params
from games.live import streams
from games.live.events import WIRES, Wire, call_db, encode, is_settled, position
from games.live.serializers import AccountStreamEvent, MatchStreamEvent

_EVENT_ID = re.compile(r"[0-9]{1,15}")


class _StreamRenderer(BaseRenderer):
    charset = None

    def render(self, data: Any, media_type: Any = None, renderer_context: Any = None) -> Any:
        return encode(data).encode()


class EventStreamRenderer(_StreamRenderer):
    media_type = "text/event-stream"
    format = "sse"


class NdjsonRenderer(_StreamRenderer):
    media_type = "application/x-ndjson"
    format = "ndjson"


def _credential(request: Request, auth: Any) -> streams.Credential:
    """What the stream's viewer signed in with (SessionAuthentication leaves ``auth`` None)."""
    if isinstance(auth, Token):
        return streams.Credential("token", auth.key)
    if isinstance(auth, AccessToken):
        return streams.Credential("access_token", str(auth.pk))
    return streams.Credential("session", request._request.session.session_key or "")


# The query parameters a stream takes (DRF's ``?format=`` switch aside): any other is
# refused, 400 ``invalid_input`` with ``unknown_field`` under its name, as every endpoint
# of the API refuses what it does not know (a typo is an error, not a silent default).
_QUERY_PARAMETERS = {"after"}


def _refuse_unknown_parameters(request: Request) -> None:
    unknown = sorted(set(query_params(request)) - _QUERY_PARAMETERS)
    if unknown:
        raise ValidationError(
            {name[:40]: [ErrorDetail("Unknown field.", code="unknown_field")] for name in unknown}
        )


def _after(request: Request, message: str | None = None) -> int | None:
    """``Last-Event-ID`` (what EventSource sends when it reconnects), else ``?after=``.
    An empty ``Last-Event-ID`` is no id at all (EventSource's own reading of it); the
    header's id may have spaces around it, the query's may not (``?after=+3``, where
    ``+`` is a space, is refused). ``message``: the error's, if not the match stream's."""
    raw = request.headers.get("Last-Event-ID")
    if raw is not None and not raw.strip():
        raw = None
    raw = raw.strip() if raw is not None else query_params(request).get("after")
    if raw is None:
        return None
    if not _EVENT_ID.fullmatch(raw):
        raise InvalidEventIdError(message, details={"last_event_id": raw[:40]})
    return int(raw)


def _streaming(
    request: Request, wire: Wire, body: Any, first: list[bytes]
) -> StreamingHttpResponse:
    if isinstance(request._request, ASGIRequest):
        content: Any = body
        # The stream will wait without this thread: its connection is not kept open for it.
        if not connection.in_atomic_block:
            connection.close()
    else:
        content = _served_now(first)
    response = StreamingHttpResponse(content, content_type=wire.media_type)
    response["Cache-Control"] = "no-cache, no-store"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    return response


def _served_now(chunks: list[bytes]) -> Iterator[bytes]:
    yield from chunks


def _nothing_more() -> HttpResponse:
    """A settled match's stream resumed after its last event: 204 No Content (and no
    Content-Type, which Django would have set to text/html for the body it has not)."""
    response = HttpResponse(status=204)
    del response["Content-Type"]
    response["Cache-Control"] = "no-cache, no-store"
    return response


class _StreamApi(APIView):
    """Authentication happens in :meth:`_start`, through the few threads that read the
    database for the streams (events.call_db), not in the request's own thread: served by
    ASGI, each request has a thread and would open a connection of its own. The request-rate
    throttles (the API's defaults) count the opening there too, once the viewer is known:
    the cap on open streams alone let a client open, close and reopen streams without end.
    A page's EventSource reopening its stream every ``LIVE_RETRY_MS`` stays far inside."""

    renderer_classes = [EventStreamRenderer, NdjsonRenderer]
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []
    authenticators = [TokenAuthentication, SessionAuthentication]
    # The message of ``invalid_event_id`` (None: the error's own, the match stream's).
    event_id_message: str | None = None

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(response, Response):  # an error: JSON, as every error of the API
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)

    def _start(self, request: Request) -> tuple[Wire, int | None, streams.Viewer, streams.Slot]:
        wire = WIRES[request.accepted_renderer.media_type]
        user, auth = self._authenticate(request)
        super().check_throttles(request)  # 429 throttled, per account as every request
        _refuse_unknown_parameters(request)  # 400 invalid_input (unknown_field)
        after = _after(request, self.event_id_message)
        viewer = streams.Viewer(user=user, credential=_credential(request, auth))
        return wire, after, viewer, self._slot(user, request)

    def _authenticate(self, request: Request) -> tuple[Any, Any]:
        """The user and credentials, as DRF's authenticators find them (401 without)."""
        for authenticator in (cls() for cls in self.authenticators):
            found = authenticator.authenticate(request)
            if found is not None:
                request.user, request.auth = found
                return found
        raise NotAuthenticated()

    def _slot(self, user: Any, request: Request) -> streams.Slot:
        # 429 too_many_streams (per account, per address), 503 streams_full
        return streams.slots.take(user.pk, throttling.client_ip(request))

    def handle_exception(self, exc: Exception) -> Any:
        response = super().handle_exception(exc)
        if isinstance(exc, TooManyStreamsError | StreamsFullError):
            response["Retry-After"] = str(exc.details["retry_after"])
        return response

    def perform_authentication(self, request: Request) -> None:
        """Not here, in the request's thread: in :meth:`_start` (DRF would otherwise set
        the request's user to anonymous, hiding the session's)."""

    def check_throttles(self, request: Request) -> None:
        """Not here, before authentication (every opening would count as anonymous, per
        address): in :meth:`_start`, once the viewer is known."""

    def get_authenticate_header(self, request: Request) -> str:
        return "Token"  # as TokenAuthentication says it: a 401, not a 403


def _stream_response(event: Any) -> dict[Any, OpenApiResponse]:
    """A stream's 200 in both formats. An NDJSON line is one event, ``event``'s component;
    an SSE block is text that no JSON schema can describe: its fields are, with ``data``
    (the same JSON object as the line) naming that component."""
    component = event.component_name
    sse_event = {
        "type": "object",
        "description": f"One SSE event. `data` is a `{component}`, as JSON.",
        "properties": {
            "id": {"type": "string", "description": f"The event's `id` (`{component}.id`)."},
            "event": {"type": "string", "description": f"Its `type` (`{component}.type`)."},
            "data": {
                "type": "string",
                "description": f"The event: a `{component}`, as JSON (one line).",
            },
        },
        "required": ["id", "event", "data"],
    }
    description = (
        f"Each event is a `{component}`: in NDJSON one per line (an empty line keeps "
        "alive), in SSE the `data` of a block whose `id` and `event` are its `id` and "
        "`type` (a comment keeps alive)."
    )
    return {
        (200, "text/event-stream"): OpenApiResponse(sse_event, description=description),
        (200, "application/x-ndjson"): OpenApiResponse(event, description=description),
    }


_NOTHING_MORE = {
    204: OpenApiResponse(
        description="No Content: the match is over (and rated, if rated) and the client "
        "resumed after its last event (`Last-Event-ID` or `after` = the last id): nothing "
        "more will come. EventSource stops reconnecting on it; so should any client."
    )
}
# Errors are JSON, whatever the stream's format.
_STREAM_ERRORS = {
    (code, "application/json"): ErrorSerializer for code in (*READ_ERRORS, 406, 429, 503)
}
_RESUME = [
    OpenApiParameter(
        "Last-Event-ID",
        str,
        OpenApiParameter.HEADER,
        description="Resume after this event id (what EventSource sends by itself).",
    ),
    OpenApiParameter(
        "after",
        {"type": "integer", "minimum": 0},
        description="Resume after this event id (the same as `Last-Event-ID`, which wins).",
    ),
]


class MatchStreamApi(_StreamApi):
    @extend_schema(
        operation_id="matches_stream",
        tags=["live"],
        summary="The match as it changes: Server-Sent Events or NDJSON",
        description=(
            "`Accept: text/event-stream` answers Server-Sent Events; `Accept: "
            "application/x-ndjson` one JSON object per line. Both carry the same events, "
            "each a `MatchStreamEvent`. The first is a `match` event: your whole match "
            "detail, the body `GET /api/v1/matches/{id}` answers. Then one event per change "
            "(a `MatchStreamUpdate`), of type `seat_joined`, `match_started`, `card_played`, "
            "`deal_finished`, `deal_started`, `match_finished`, `match_aborted`, "
            "`rating_changed` or `match_event` (a clock event: a timeout, a seat left or "
            "given back, a rematch proposed; the match's event log tells which), `changes` "
            "listing each change the event carries. Every such event has `id` (the "
            "match's position: strictly increasing, the same for every viewer), `etag` "
            "(the ETag of `detail`), `detail` (your match detail after the change) and, "
            "for a card played, `move` {deal, ply, seat, card}. A heartbeat (an SSE "
            "comment, an empty NDJSON line) comes every 15 s of silence. The stream ends "
            "once the match is over and rated (or aborted), or with a `stream_closed` "
            "event {id, reason} (a `MatchStreamClosed`: its `id` is the last event's): "
            "`match_private`, `match_not_found` (the match is gone), `token_revoked` (the "
            "token it was opened with, the account's or a personal one, was revoked), "
            "`signed_out` (its session signed out or the password changed).\n\n"
            "Resume with `Last-Event-ID` (or `?after=`): every event after that id, in "
            "order; from before the current deal, one `match` event with the whole detail. "
            "After the last event of a match that is over: 204 No Content (stop)."
            " Errors before the stream starts: 400 `invalid_event_id`, 401, 403 "
            "`match_private`, 404 `match_not_found`, 406 for another `Accept`, 400 "
            "`invalid_input` for a query parameter other than `after` (`unknown_field`), 429 "
            "`throttled` (an opening counts in the account's request rate, as any request), "
            "429 `too_many_streams` (`LIVE_MAX_STREAMS_PER_ACCOUNT` open streams per "
            "account, 32 by default; `LIVE_MAX_STREAMS_PER_ADDRESS` per client address, "
            "64 by default, `details.per` `address`), 503 `streams_full` (the server's own "
            "cap on open streams); each with `Retry-After`."
        ),
        parameters=_RESUME,
        responses={**_stream_response(MatchStreamEvent), **_NOTHING_MORE, **_STREAM_ERRORS},
        examples=[
            OpenApiExample(
                "SSE",
                media_type="text/event-stream",
                response_only=True,
                value=(
                    'id: 7\nevent: card_played\ndata: {"id":7,"type":"card_played",'
                    '"changes":["card_played"],"match":"…","etag":"W/\\"…\\"",'
                    '"move":{"deal":12,"ply":4,"seat":1,"card":"7s"},"detail":{…}}\n\n'
                ),
            )
        ],
    )
    def get(self, request: Request, match_id: str) -> StreamingHttpResponse:
        return call_db(self._get, request, match_id)

    def _get(self, request: Request, match_id: str) -> StreamingHttpResponse:
        wire, after, viewer, slot = self._start(request)
        try:
            snapshot, first = streams.match_stream_start(match_id, after, viewer.user)
            if not first and is_settled(snapshot):
                # Nothing owed and nothing more will come: 204, on which EventSource stops
                # (an empty 200 would have it reconnect for ever).
                slot.release()
                return _nothing_more()
            body = streams.match_stream(
                wire=wire,
                viewer=viewer,
                match_id=snapshot.match_id,
                first=first,
                seen=snapshot,
                last=position(snapshot.version),
                slot=slot,
            )
            response = _streaming(
                request, wire, body, [wire.opening(), *(wire.event(e) for e in first)]
            )
        except BaseException:
            slot.release()
            raise
        response._resource_closers.append(slot.release)
        if not isinstance(request._request, ASGIRequest):
            slot.release()
        return response


class AccountStreamApi(_StreamApi):
    event_id_message = (
        "Last-Event-ID (or ?after=) must be the id of an event this stream sent: a whole number."
    )

    @extend_schema(
        operation_id="account_stream",
        tags=["live"],
        summary="Your account's news as it happens: Server-Sent Events or NDJSON",
        description=(
            "Each event is an `AccountStreamEvent`. The first is `account` (an "
            "`AccountStreamSnapshot`): `matches`, each match of yours being played or "
            "waiting for players (an `AccountStreamMatch`: `your_turn`, `invited`, `status`, "
            "`deal`, `ply`, ...). Then one event per change (an `AccountStreamUpdate`), the "
            "match's item with `type` `invitation_received`, `match_started`, `your_turn`, "
            "`match_finished` (also for a match called off) or `rating_changed`. Ids grow "
            "strictly; a reconnection (with or without `Last-Event-ID`) starts with a fresh "
            "`account` event, so nothing is missed. The stream ends with a `stream_closed` "
            "event {id, reason} when its credentials no longer sign in (`token_revoked`, "
            "`signed_out`). Heartbeats, formats, limits and errors as for the match stream."
        ),
        parameters=_RESUME,
        responses={**_stream_response(AccountStreamEvent), **_STREAM_ERRORS},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        return call_db(self._get, request)

    def _get(self, request: Request) -> StreamingHttpResponse:
        wire, _after_id, viewer, slot = self._start(request)
        try:
            watched, items = streams.account_start(viewer.user)
            body = streams.account_stream(
                wire=wire, viewer=viewer, watched=watched, items=items, slot=slot
            )
            first = {"id": 0, "type": streams.ACCOUNT, "matches": list(items.values())}
            response = _streaming(request, wire, body, [wire.opening(), wire.event(first)])
        except BaseException:
            slot.release()
            raise
        response._resource_closers.append(slot.release)
        if not isinstance(request._request, ASGIRequest):
            slot.release()
        return response
