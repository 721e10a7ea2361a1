"""The clocks' routes: invitations, declining, leaving, returning to a seat, rematches."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from briscola_service.exceptions import ErrorSerializer
from briscola_service.pagination import StandardPagination
from games.clocks import selectors, services
from games.http import READ_ERRORS, query_params, reads_of_one_moment
from games.matches import selectors as match_selectors
from games.matches.apis import ERRORS, _detail, etag_header
from games.matches.serializers import (
    DeclineInput,
    MatchDetailOutput,
    MatchListFilters,
    MatchSummaryOutput,
)


class InvitationListApi(APIView):
    pagination_class = StandardPagination

    @extend_schema(
        operation_id="invitations_list",
        tags=["matches"],
        summary="Waiting matches with a seat reserved for you (join or decline them)",
        responses={200: MatchSummaryOutput(many=True), **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request) -> Response:
        filters = MatchListFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        queryset = selectors.invitations_for_user(user=request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self) or []
        data = [
            match_selectors.match_summary(m, sorted(m.seats.all(), key=lambda s: s.number))
            for m in page
        ]
        return paginator.get_paginated_response(MatchSummaryOutput(data, many=True).data)


class MatchDeclineApi(APIView):
    @extend_schema(
        operation_id="matches_decline",
        tags=["matches"],
        summary="Decline your invitation (the match is called off; `reason` is optional)",
        description="403 `not_invited` without an unanswered invitation; 409 "
        "`match_not_joinable` once the match started.",
        request=DeclineInput,
        parameters=[etag_header(200)],
        responses={200: MatchDetailOutput, **ERRORS},
    )
    def post(self, request: Request, match_id: str) -> Response:
        data = DeclineInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.invitation_decline(
            match_id=match_id, user=request.user, reason=data.validated_data["reason"]
        )
        return _detail(request, match_id)


class MatchLeaveApi(APIView):
    @extend_schema(
        operation_id="matches_leave",
        tags=["matches"],
        summary="Leave a match still waiting for players (its creator aborts it instead)",
        description="409 `cannot_leave` for the creator or once the match started.",
        request=None,
        parameters=[etag_header(200)],
        responses={200: MatchDetailOutput, **ERRORS},
    )
    def post(self, request: Request, match_id: str) -> Response:
        services.match_leave(match_id=match_id, user=request.user)
        return _detail(request, match_id)


class SeatReturnApi(APIView):
    @extend_schema(
        operation_id="matches_return",
        tags=["matches"],
        summary="Take back your seat from the timeout bot",
        description="For a seat the timeout bot holds or played for. 409 `match_over` once "
        "the match is over (finished or aborted), as for a move or a resignation then; 409 "
        "`seat_not_left` for a seat you never left, in a match still playing.",
        request=None,
        parameters=[etag_header(200)],
        responses={
            200: MatchDetailOutput,
            **ERRORS,
            409: OpenApiResponse(
                ErrorSerializer,
                description="`match_over`: the match is over (finished or aborted). "
                "`seat_not_left`: you never left your seat.",
            ),
        },
    )
    def post(self, request: Request, match_id: str) -> Response:
        services.seat_return(match_id=match_id, user=request.user)
        return _detail(request, match_id)


class MatchRematchApi(APIView):
    @extend_schema(
        operation_id="matches_rematch",
        tags=["matches"],
        summary="Propose (or accept) a rematch of a finished match: the new match",
        description="The same table, seats rotated by one, the same settings; it starts "
        "once every person has accepted (this call, by each of them); bots accept at once. "
        "Refuse it by declining the new match. 201 when this call created it; 200 with "
        "the rematch already proposed (accepted by this call, or as it is when called "
        "again). 409 `match_not_finished` before the end.",
        request=None,
        parameters=[etag_header(200, 201)],
        responses={
            201: MatchDetailOutput,
            200: OpenApiResponse(
                MatchDetailOutput,
                description="The rematch already proposed: accepted by this call, or as it is.",
            ),
            **ERRORS,
        },
    )
    def post(self, request: Request, match_id: str) -> Response:
        new, created = services.rematch_offer(match_id=match_id, user=request.user)
        return _detail(request, new.pk, 201 if created else 200)
