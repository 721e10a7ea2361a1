"""The games API: one view per operation; parse input, call a service or selector."""

from __future__ import annotations

from typing import Any

from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from briscola_service.exceptions import ErrorSerializer
from briscola_service.idempotency.apis import (
    IDEMPOTENCY_ERRORS,
    IDEMPOTENCY_KEY_PARAMETER,
    idempotent,
    replayed_header,
)
from briscola_service.pagination import StandardPagination
from games.clocks import services as clocks
from games.http import DEAL_ID, READ_ERRORS, DealAddressedApi, query_params, reads_of_one_moment
from games.matches import selectors, services, snapshots
from games.matches.serializers import (
    DealRecordOutput,
    EventsFilter,
    EventsOutput,
    MatchCreateInput,
    MatchDetailOutput,
    MatchJoinInput,
    MatchListFilters,
    MatchSummaryOutput,
    MoveInput,
)

# What a write may answer: a read's errors, and 409 when the match has moved on.
ERRORS = {**READ_ERRORS, 409: ErrorSerializer}


def _detail(request: Request, match_id: Any, status_code: int = 200) -> Response:
    with selectors.rows_of_one_moment():  # the row, seats, deals and moves of one moment
        match = selectors.match_get(match_id=match_id)
        snapshot = selectors.match_snapshot_for_user(match=match, user=request.user)
    return _detail_response(snapshot, request.user, status_code)


def _detail_response(snapshot: selectors.MatchSnapshot, user: Any, status_code: int) -> Response:
    """``user``'s match detail, as the snapshot builds it: already JSON-ready, in exactly the
    shape ``MatchDetailOutput`` documents (tests/matches/test_api_detail_shape.py proves it on
    every kind of match). Running the serializer over it on every poll and every move cost
    more than the move's own transaction; the serializer stays the schema. With its
    ``ETag`` (see MatchDetailApi), which a later GET may send back to get a 304."""
    response = Response(snapshot.detail_for(user), status=status_code)
    response["ETag"] = selectors.match_detail_etag(
        pk=snapshot.match_id, version=snapshot.version, user=user
    )
    patch_vary_headers(response, ["Authorization"])
    return response


def etag_header(*codes: int) -> OpenApiParameter:
    """The `ETag` that every match detail answer carries (:func:`_detail_response`, and a
    304 of MatchDetailApi), as a response header of ``codes``."""
    return OpenApiParameter(
        "ETag",
        str,
        OpenApiParameter.HEADER,
        response=list(codes),
        required=True,
        description=(
            "The version of this match detail as you see it: send it back in "
            "`If-None-Match` on `GET /matches/{match_id}` to get 304 while nothing changed."
        ),
    )


# The bot levels a match may seat, as the server checks them (an unknown one: 400), named
# in the description so that it does not go stale when a level is added.
_BOT_LEVELS = ", ".join(f"`{level}`" for level in selectors.bot_levels_seatable())


class MatchListCreateApi(APIView):
    pagination_class = StandardPagination  # also makes the schema say so

    @extend_schema(
        operation_id="matches_list",
        tags=["matches"],
        summary="Matches you can see: yours, public ones and ones with an open seat",
        parameters=[
            OpenApiParameter("status", str, enum=["waiting", "active", "finished", "aborted"]),
            OpenApiParameter("mine", bool, description="Only matches you have a seat in."),
            OpenApiParameter(
                "open",
                bool,
                description="Only matches you can join (open seats, and your invitations).",
            ),
        ],
        responses={200: MatchSummaryOutput(many=True), **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request) -> Response:
        filters = MatchListFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        options = {
            k: v for k, v in filters.validated_data.items() if k in ("status", "mine", "open")
        }
        queryset = selectors.matches_list(user=request.user, **options)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self) or []
        data = [
            selectors.match_summary(m, sorted(m.seats.all(), key=lambda s: s.number)) for m in page
        ]
        return paginator.get_paginated_response(MatchSummaryOutput(data, many=True).data)

    @extend_schema(
        operation_id="matches_create",
        tags=["matches"],
        summary="Create a match; you take seat 0 (or, for an exhibition, no seat)",
        description=(
            '`seats` lists seats 1.. in order: `{"bot": "<level>"}` (a level: '
            f"{_BOT_LEVELS}), "
            '`{"user": "<username>"}` (an invitation) or `"open"`. The match starts '
            "as soon as every seat is taken.\n\n"
            '**Time limits**: `"time_control": {"per_move_seconds": 5..600}` or '
            '`{"per_move_hours": 1..168}` (none: untimed), `"on_timeout": "forfeit"|"bot"`, '
            '`"timeout_bot": "greedy"`. Out of range: 400 `invalid_time_control`. Over '
            "`MATCH_ACTIVE_LIMIT` matches waiting or active: 429 `too_many_active_matches`."
            "\n\n"
            "**Exhibitions** (bot-only matches, administrators only): list *every* seat, "
            'seat 0 included, each a bot, e.g. `{"players": 2, "seats": [{"bot": "expert"}, '
            '{"bot": "greedy"}]}`. The creator sits nowhere and watches as a spectator; '
            "the bots play the whole match on their own (in the background with a Celery "
            "worker; within this request when tasks run in-process). Errors: "
            "`exhibition_admins_only` 403 for a user who is not an administrator (staff with "
            "the permission to view deals), `invalid_match` "
            "400 when a listed seat is not a bot.\n\n"
            "Send an `Idempotency-Key` header to make a retry safe: see the parameter."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER, replayed_header(201), etag_header(201)],
        request=MatchCreateInput,
        responses={201: MatchDetailOutput, **ERRORS, **IDEMPOTENCY_ERRORS},
    )
    def post(self, request: Request) -> Response:
        return idempotent(request, lambda: self._create(request))

    def _create(self, request: Request) -> Response:
        data = MatchCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        match = services.match_create(
            creator=request.user,
            players=values["players"],
            format=values["format"],
            seats=values["seats"],
            public=values["public"],
            rated=values["rated"],
            partners_last_hand=values.get("options", {}).get("partners_last_hand", True),
            time_control=clocks.time_control_parse(
                values.get("time_control"), values.get("on_timeout"), values.get("timeout_bot")
            ),
        )
        return _detail(request, match.pk, status.HTTP_201_CREATED)


class MatchDetailApi(APIView):
    @extend_schema(
        operation_id="matches_retrieve",
        tags=["matches"],
        summary="The match and its current deal, as you may see it",
        description=(
            "Answers with an `ETag`. To poll cheaply, send it back in `If-None-Match`: "
            "while nothing in the match changed, the answer is 304 Not Modified with no "
            "body (one small query instead of reading and replaying the deal)."
        ),
        parameters=[
            OpenApiParameter(
                "If-None-Match",
                str,
                OpenApiParameter.HEADER,
                description="The `ETag` of the last detail you read (`*`: any; 304 if the "
                "match exists and you may see it).",
            ),
            etag_header(200, 304),
        ],
        responses={
            200: MatchDetailOutput,
            304: OpenApiResponse(description="Not modified since the `ETag` you sent."),
            **READ_ERRORS,
        },
    )
    # Not reads_of_one_moment: the version check that answers most polls (304) decides
    # only whether to read, and a transaction would add three round trips to it; the
    # detail it may go on to read is one moment (_detail).
    def get(self, request: Request, match_id: str) -> Response:
        response = self._get(request, match_id)
        if response.status_code == status.HTTP_200_OK and "*" in _if_none_match_raw(request):
            # `*` matches any current representation (RFC 9110, 13.1.2): one the viewer
            # may see, so only once the detail was built (a stranger still gets 403).
            not_modified = Response(status=status.HTTP_304_NOT_MODIFIED)
            not_modified["ETag"] = response["ETag"]
            patch_vary_headers(not_modified, ["Authorization"])
            return not_modified
        return response

    def _get(self, request: Request, match_id: str) -> Response:
        found = selectors.match_version(match_id=match_id)  # one small query
        if found is not None:
            pk, version = found
            etag = selectors.match_detail_etag(pk=pk, version=version, user=request.user)
            if etag in _if_none_match(request):
                response = Response(status=status.HTTP_304_NOT_MODIFIED)
                response["ETag"] = etag
                patch_vary_headers(response, ["Authorization"])
                return response
            snapshot = snapshots.snapshot_get(pk, version)  # kept by the move that made it
            if snapshot is not None:
                return _detail_response(snapshot, request.user, status.HTTP_200_OK)
        return _detail(request, match_id)


def _if_none_match_raw(request: Request) -> set[str]:
    header = request.headers.get("If-None-Match", "")
    return {tag.strip() for tag in header.split(",") if tag.strip()}


def _if_none_match(request: Request) -> set[str]:
    """The entity tags of an ``If-None-Match`` header (weak comparison: W/ dropped)."""
    return {f"W/{tag.removeprefix('W/')}" for tag in _if_none_match_raw(request) if tag != "*"}


class MatchJoinApi(APIView):
    @extend_schema(
        operation_id="matches_join",
        tags=["matches"],
        summary="Take an open seat, or the seat you were invited to",
        request=MatchJoinInput,
        parameters=[etag_header(200)],
        responses={200: MatchDetailOutput, **ERRORS},
    )
    def post(self, request: Request, match_id: str) -> Response:
        data = MatchJoinInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.match_join(match_id=match_id, user=request.user, **data.validated_data)
        return _detail(request, match_id)


class MatchAbortApi(APIView):
    @extend_schema(
        operation_id="matches_abort",
        tags=["matches"],
        summary="Call off a match still waiting for players (its creator, or an administrator)",
        description=(
            "Answers the match, aborted. Errors: `not_match_creator` 403, `match_not_found` "
            "404, `match_started` 409 (the match is being played: resign instead), "
            "`match_over` 409 (it is finished, or aborted already)."
        ),
        request=None,
        parameters=[etag_header(200)],
        responses={
            200: MatchDetailOutput,
            **ERRORS,
            409: OpenApiResponse(ErrorSerializer, description="`match_started`, `match_over`."),
        },
    )
    def post(self, request: Request, match_id: str) -> Response:
        services.match_abort(match_id=match_id, user=request.user)
        return _detail(request, match_id)


class MoveCreateApi(APIView):
    @extend_schema(
        operation_id="matches_moves_create",
        tags=["matches"],
        summary="Play a card",
        description=(
            "`card` is one of your `legal` cards; `ply` is the deal's `ply` you last saw "
            "(a JSON integer) and `deal` the id of that deal (`current_deal.id`; optional, "
            "recommended). Answers the match as the move left it. Errors: `invalid_card` 400, "
            "`card_not_in_hand` 400, `not_a_player` 403, `match_not_found` 404, "
            "`stale_deal` 409 (details.current_deal: the deal you named is not the "
            "current one), `stale_ply` 409 (details.current_ply), `not_your_turn` 409, "
            "`match_over` 409, `match_not_started` 409.\n\n"
            "Send an `Idempotency-Key` header to make a retry safe: the retry of a move "
            "that was played answers its first response instead of `stale_ply`."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER, replayed_header(201), etag_header(201)],
        request=MoveInput,
        responses={201: MatchDetailOutput, **ERRORS, **IDEMPOTENCY_ERRORS},
    )
    def post(self, request: Request, match_id: str) -> Response:
        return idempotent(request, lambda: self._play(request, match_id))

    def _play(self, request: Request, match_id: str) -> Response:
        data = MoveInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        played = services.move_play(
            match_id=match_id,
            user=request.user,
            card=values["card"],
            ply=values["ply"],
            deal_id=values.get("deal"),
        )
        if played.stale:  # a bot replied in-process (no broker): show the match as it is now
            return _detail(request, match_id, status.HTTP_201_CREATED)
        # The match as the move left it, from what the move's transaction read and wrote.
        return _detail_response(played.snapshot, request.user, status.HTTP_201_CREATED)


class MatchResignApi(APIView):
    @extend_schema(
        operation_id="matches_resign",
        tags=["matches"],
        summary="Resign: the match ends at once and the other team wins",
        request=None,
        parameters=[etag_header(200)],
        responses={200: MatchDetailOutput, **ERRORS},
    )
    def post(self, request: Request, match_id: str) -> Response:
        services.match_resign(match_id=match_id, user=request.user)
        return _detail(request, match_id)


class MatchEventsApi(APIView):
    @extend_schema(
        operation_id="matches_events",
        tags=["matches"],
        summary="What happened after event `after`, as you may know it",
        description=(
            "Events are numbered from 1, the same for every viewer; each has its `type`, "
            "`at` (when it happened) and the facts of that type. Cards you may not know "
            "are null. Poll with `after=<last_id>`."
        ),
        parameters=[
            OpenApiParameter(
                "after", {"type": "integer", "minimum": 0}, description="Last id seen."
            )
        ],
        responses={200: EventsOutput, **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request, match_id: str) -> Response:
        data = EventsFilter(data=query_params(request))
        data.is_valid(raise_exception=True)
        match = selectors.match_get(match_id=match_id)
        events = selectors.match_events_for_user(
            match=match, user=request.user, after=data.validated_data["after"]
        )
        return Response(events)


class DealRecordApi(DealAddressedApi):
    @extend_schema(
        parameters=[DEAL_ID],
        operation_id="deals_retrieve",
        tags=["deals"],
        summary="A finished deal's full record (seed, deck, moves, tricks, draws, points)",
        description=(
            "Once the deal is over: to its players, and to everyone (anonymous visitors "
            "too) when the match is public; `deal_not_over` 403 while it is played."
        ),
        responses={200: DealRecordOutput, **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request, deal_id: str) -> Response:
        deal = selectors.deal_get(deal_id=deal_id, viewer=request.user)
        return Response(selectors.deal_record_for_user(deal=deal, user=request.user))
