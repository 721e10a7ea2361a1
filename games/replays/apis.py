"""The replay API: step through a deal, export it, verify it, check a record.

Replays, exports and verifications of a *public* match's finished deals are open to
anonymous visitors too (docs/rules.md: once over, a public match's deals are public); any
other anonymous request answers 401 ``not_authenticated``. Checking a record needs an
account.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from briscola_service.exceptions import ErrorSerializer
from briscola_service.parsers import MAX_JSON_DEPTH, JSONTooDeepError, json_loads
from briscola_service.serializers import QueryIntegerField
from games import rules
from games.http import (
    DEAL_ID,
    READ_ERRORS,
    DealAddressedApi,
    OpenToPublicDealsApi,
    query_params,
    reads_of_one_moment,
)
from games.matches import selectors
from games.matches.serializers import DealRecordBody, StrictSerializer
from games.replays import selectors as replays
from games.replays.serializers import (
    MatchExportOutput,
    RecordCheckOutput,
    ReplayOutput,
    VerifyOutput,
)

# An export is JSON at `.../export` and the text notation at `.../export.txt`: one media
# type per operation, so a generated client knows how to read each answer (errors are JSON
# on both). `.../export?format=text` still answers the text, for the clients written
# before `export.txt`, but the JSON operation's schema does not declare it.
DEAL_EXPORT_RESPONSES = {200: DealRecordBody, **READ_ERRORS}
MATCH_EXPORT_RESPONSES = {200: MatchExportOutput, **READ_ERRORS}
TEXT_EXPORT_RESPONSES = {(200, "text/plain"): OpenApiTypes.STR, **READ_ERRORS}
CONTENT_DISPOSITION = OpenApiParameter(
    "Content-Disposition",
    str,
    OpenApiParameter.HEADER,
    response=[200],
    description='`inline; filename="deal-<id>.txt"` (a deal) or '
    '`inline; filename="match-<id>.txt"` (a match).',
)


class ReplayQuery(StrictSerializer):
    ply = QueryIntegerField(
        min_value=0, max_value=40, required=False, help_text="The position after N moves."
    )
    seat = QueryIntegerField(
        min_value=0, max_value=3, required=False, help_text="See the deal as this seat saw it."
    )


class ExportQuery(StrictSerializer):
    # `text`: kept for the clients written before `export.txt` (not in the schema).
    format = serializers.ChoiceField(choices=["json", "text"], default="json")


class TextExportQuery(StrictSerializer):
    """`export.txt` takes no query parameter: `?format=` there is an unknown field."""


class QueryFormatIsNotARenderer(DefaultContentNegotiation):
    """Here ``?format=`` picks the export's notation, not one of DRF's renderers."""

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        return renderers[0], str(renderers[0].media_type)


class DealReplayApi(DealAddressedApi):
    @extend_schema(
        operation_id="deals_replay",
        tags=["replays"],
        summary="A deal step by step, and the position after `ply` moves",
        description=(
            "`steps` are the deal's events up to the position (deal started, hands dealt, "
            "each card played, each trick won, each draw, the end), each with `at_ply`, the "
            "moves played once it happened; `position` is the deal after `ply` moves "
            "(default: all of them): the full view (every hand, the stock) without `seat`, "
            "or `seat`'s own view (its hand only) with it. While the deal is played, a "
            "player may ask only for their own seat (`replay_seat_forbidden` 403) and only "
            "up to the present (`replay_beyond_present` 403); others get `deal_not_over` "
            "403. Administrators may see anything at any time."
        ),
        parameters=[
            DEAL_ID,
            OpenApiParameter(
                "ply",
                {"type": "integer", "minimum": 0, "maximum": 40},
                description="0 to the number of moves.",
            ),
            OpenApiParameter(
                "seat",
                {"type": "integer", "minimum": 0, "maximum": 3},
                description="A seat of the deal.",
            ),
        ],
        responses={200: ReplayOutput, **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request, deal_id: str) -> Response:
        query = ReplayQuery(data=query_params(request))
        query.is_valid(raise_exception=True)
        deal = selectors.deal_get(deal_id=deal_id, viewer=request.user)
        return Response(
            replays.deal_replay_for_user(
                deal=deal,
                user=request.user,
                ply=query.validated_data.get("ply"),
                seat=query.validated_data.get("seat"),
            )
        )


class DealVerifyApi(DealAddressedApi):
    @extend_schema(
        parameters=[DEAL_ID],
        operation_id="deals_verify",
        tags=["replays"],
        summary="Check a finished deal: seed vs commitment, deck, moves vs recorded result",
        description=(
            "Four checks of the record against what the server published: `commitment` "
            "(the revealed seed hashes to the commitment published at the start), `deck` "
            "(the seed shuffles to the deck played), `result` (the moves replay to the "
            "recorded points and winner) and `move_seats` (each move was logged for the seat "
            "whose turn it was). See docs/verify.md to check offline."
        ),
        responses={200: VerifyOutput, **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request, deal_id: str) -> Response:
        deal = selectors.deal_get(deal_id=deal_id, viewer=request.user)
        return Response(replays.deal_verify_for_user(deal=deal, user=request.user))


def _text(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    return response


def _deal_text(request: Request, deal_id: str) -> HttpResponse:
    deal = selectors.deal_get(deal_id=deal_id, viewer=request.user)
    record = replays.deal_export_for_user(deal=deal, user=request.user)
    return _text(replays.deal_export_text(deal=deal, record=record), f"deal-{deal.pk}.txt")


def _match_text(request: Request, match_id: str) -> HttpResponse:
    match = selectors.match_get(match_id=match_id)
    exported = replays.match_export_for_user(match=match, user=request.user)
    text = replays.match_export_text(match=match, exported=exported)
    return _text(text, f"match-{match.pk}.txt")


DEAL_TEXT = (
    "a header (players, dealer, briscola, seed, commitment, result), then one line per "
    "trick, e.g. `7. Ad 3d  winner S0 +21`"
)
MATCH_TEXT = "each deal that is over: its header and tricks in the text notation"


def _kept_for_compatibility(text_path: str) -> str:
    return (
        f"The text notation is `GET {text_path}` (`text/plain`). `?format=text` here still "
        "answers that text, kept for compatibility with clients written before it: new "
        "clients use `export.txt`. (`?format=json` is the default and the same as none.)"
    )


class DealExportApi(DealAddressedApi):
    content_negotiation_class = QueryFormatIsNotARenderer
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="deals_export",
        tags=["replays"],
        summary="Export a deal: its record (JSON)",
        description=(
            "The `briscola-deal/1` record with `seed`, `commitment` and `result`, which "
            "`python -m games.rules verify` checks offline. "
            + _kept_for_compatibility("/api/v1/deals/{deal_id}/export.txt")
        ),
        parameters=[DEAL_ID],
        responses=DEAL_EXPORT_RESPONSES,
    )
    @reads_of_one_moment
    def get(self, request: Request, deal_id: str) -> Any:
        query = ExportQuery(data=query_params(request, keep_format=True))
        query.is_valid(raise_exception=True)
        if query.validated_data["format"] == "text":
            return _deal_text(request, deal_id)
        deal = selectors.deal_get(deal_id=deal_id, viewer=request.user)
        record = replays.deal_export_for_user(deal=deal, user=request.user)
        return Response(record.to_dict())


class DealExportTextApi(DealAddressedApi):
    content_negotiation_class = QueryFormatIsNotARenderer  # errors are JSON, whatever Accept
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="deals_export_text",
        tags=["replays"],
        summary="Export a deal in the readable text notation (text/plain)",
        description=(
            f"The deal as text: {DEAL_TEXT}. The same access rules and errors (JSON) as "
            "`GET /api/v1/deals/{deal_id}/export`, whose record it writes out."
        ),
        parameters=[DEAL_ID, CONTENT_DISPOSITION],
        responses=TEXT_EXPORT_RESPONSES,
    )
    @reads_of_one_moment
    def get(self, request: Request, deal_id: str) -> HttpResponse:
        TextExportQuery(data=query_params(request, keep_format=True)).is_valid(raise_exception=True)
        return _deal_text(request, deal_id)


class MatchExportApi(OpenToPublicDealsApi):
    content_negotiation_class = QueryFormatIsNotARenderer
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="matches_export",
        tags=["replays"],
        summary="Export a match: the records of its deals that are over (JSON)",
        description=(
            "The records of the deals that are over. "
            + _kept_for_compatibility("/api/v1/matches/{match_id}/export.txt")
        ),
        responses=MATCH_EXPORT_RESPONSES,
    )
    @reads_of_one_moment
    def get(self, request: Request, match_id: str) -> Any:
        query = ExportQuery(data=query_params(request, keep_format=True))
        query.is_valid(raise_exception=True)
        if query.validated_data["format"] == "text":
            return _match_text(request, match_id)
        match = selectors.match_get(match_id=match_id)
        return Response(replays.match_export_for_user(match=match, user=request.user))


class MatchExportTextApi(OpenToPublicDealsApi):
    content_negotiation_class = QueryFormatIsNotARenderer  # errors are JSON, whatever Accept
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="matches_export_text",
        tags=["replays"],
        summary="Export a match in the readable text notation (text/plain)",
        description=(
            f"The match as text: {MATCH_TEXT}. The same access rules and errors (JSON) as "
            "`GET /api/v1/matches/{match_id}/export`."
        ),
        parameters=[CONTENT_DISPOSITION],
        responses=TEXT_EXPORT_RESPONSES,
    )
    @reads_of_one_moment
    def get(self, request: Request, match_id: str) -> HttpResponse:
        TextExportQuery(data=query_params(request, keep_format=True)).is_valid(raise_exception=True)
        return _match_text(request, match_id)


class RecordCheckApi(APIView):
    required_scope = "read"  # a POST that only reads: a read token may check records
    # The body is read raw (below), so drf-spectacular cannot tell that one is needed: an
    # absent body is 400 `invalid_record`; the schema says so (briscola_service.openapi).
    request_body_required = True

    @extend_schema(
        operation_id="records_check",
        tags=["replays"],
        summary="Replay a deal record you send; the replay, or where the record is wrong",
        description=(
            "The body is a `briscola-deal/1` record (or the body of `GET /deals/{id}`, "
            "whose `record` is used), at most 64 kB. Answers the replay (tricks, draws, "
            "points, winner, complete) with its `steps`, and `verify`: every check when the "
            "record carries a seed and a commitment, else the `result` check when it "
            "carries a result. A bad record: 400 `invalid_record` with "
            "`details.where` (e.g. `moves[12]`)."
        ),
        request={"application/json": OpenApiTypes.OBJECT},
        responses={
            200: RecordCheckOutput,
            **READ_ERRORS,
            413: ErrorSerializer,
            415: ErrorSerializer,
        },
    )
    def post(self, request: Request) -> Response:
        # The view reads the raw body itself (to bound it and name where a record is
        # wrong), so it checks the media type as the JSON parser would: JSON only.
        content_type = request.content_type.split(";")[0].strip().lower()
        if content_type != "application/json" and not content_type.endswith("+json"):
            raise UnsupportedMediaType(content_type or "(none)")
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > replays.RECORD_MAX_BYTES:
            raise replays.RecordTooLargeError()
        raw = request.body
        if len(raw) > replays.RECORD_MAX_BYTES:
            raise replays.RecordTooLargeError()
        try:
            data = json_loads(raw.decode("utf-8"))
        except JSONTooDeepError:
            raise rules.RecordError(
                f"nested deeper than {MAX_JSON_DEPTH} levels", where="record"
            ) from None
        except UnicodeDecodeError:
            raise rules.RecordError("not UTF-8 text", where="record") from None
        except json.JSONDecodeError as exc:
            raise rules.RecordError(
                f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                where="record",
            ) from None
        except ValueError as exc:  # NaN or Infinity: not JSON
            raise rules.RecordError(f"not valid JSON: {exc}", where="record") from None
        return Response(replays.record_check(data=data))
