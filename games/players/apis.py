"""The players and leaderboard API: ratings, rating history, statistics, matches."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.ratings import selectors as rating_selectors
from accounts.ratings.math import CATEGORIES, CATEGORY_1V1, display_rating
from briscola_service.pagination import StandardPagination
from games.http import READ_ERRORS, query_params, reads_of_one_moment
from games.matches.serializers import RatingChangeOutput
from games.players import selectors as player_selectors
from games.players.serializers import (
    CategoryFilter,
    LeaderboardEntryOutput,
    LeaderboardFilter,
    PageFilter,
    PlayerMatchOutput,
    PlayerOutput,
)


def _category_parameter(description: str) -> OpenApiParameter:
    return OpenApiParameter("category", str, enum=list(CATEGORIES), description=description)


class PlayerDetailApi(APIView):
    @extend_schema(
        operation_id="players_retrieve",
        tags=["players"],
        summary="A player's ratings per category (with the provisional flag) and statistics",
        responses={200: PlayerOutput, **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request, username: str) -> Response:
        PageFilter(data={}).is_valid(raise_exception=True)
        player = rating_selectors.player_get(username=username)
        data = {
            "username": player.username,
            "is_bot": player.plays_as_bot,
            "bot_level": player.bot_level or None,
            "date_joined": player.date_joined,
            "ratings": rating_selectors.player_ratings(player),
            "stats": rating_selectors.player_stats(player),
        }
        return Response(PlayerOutput(data).data)


class PlayerRatingHistoryApi(APIView):
    pagination_class = StandardPagination  # also makes the schema say so

    @extend_schema(
        operation_id="players_rating_history",
        tags=["players"],
        summary="A player's rating changes that you may see, newest first (paginated)",
        description=(
            "Only the changes of matches you may see, as the player's match list: a "
            "private match's are shown to its players and administrators only."
        ),
        parameters=[_category_parameter("Only this category (default: both).")],
        responses={200: RatingChangeOutput(many=True), **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request, username: str) -> Response:
        filters = CategoryFilter(data=query_params(request))
        filters.is_valid(raise_exception=True)
        player = rating_selectors.player_get(username=username)
        queryset = player_selectors.player_rating_history(
            player=player, viewer=request.user, category=filters.validated_data.get("category")
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self) or []
        data = [rating_selectors.rating_change_json(c) for c in page]
        return paginator.get_paginated_response(RatingChangeOutput(data, many=True).data)


class PlayerMatchesApi(APIView):
    pagination_class = StandardPagination  # also makes the schema say so

    @extend_schema(
        operation_id="players_matches",
        tags=["players"],
        summary="The player's matches that you may see, newest first (paginated)",
        responses={200: PlayerMatchOutput(many=True), **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request, username: str) -> Response:
        PageFilter(data=query_params(request)).is_valid(raise_exception=True)
        player = rating_selectors.player_get(username=username)
        queryset = player_selectors.player_matches(player=player, viewer=request.user)
        paginator = self.pagination_class()
        page = list(paginator.paginate_queryset(queryset, request, view=self) or [])
        data = player_selectors.player_matches_json(player=player, matches=page)
        return paginator.get_paginated_response(PlayerMatchOutput(data, many=True).data)


class LeaderboardApi(APIView):
    pagination_class = StandardPagination  # also makes the schema say so

    @extend_schema(
        operation_id="leaderboard",
        tags=["players"],
        summary="Players with a settled (non-provisional) rating, best first (paginated)",
        parameters=[
            _category_parameter("Default 1v1."),
            OpenApiParameter(
                "bots",
                str,
                enum=["include", "exclude", "only"],
                description="Bots (the service's and third parties'): `include` (default), "
                "`exclude` (people only) or `only`.",
            ),
        ],
        responses={200: LeaderboardEntryOutput(many=True), **READ_ERRORS},
    )
    @reads_of_one_moment
    def get(self, request: Request) -> Response:
        filters = LeaderboardFilter(data=query_params(request))
        filters.is_valid(raise_exception=True)
        category = filters.validated_data.get("category", CATEGORY_1V1)
        queryset = rating_selectors.leaderboard(
            category=category, bots=filters.validated_data["bots"]
        )
        paginator = self.pagination_class()
        page = list(paginator.paginate_queryset(queryset, request, view=self) or [])
        first_rank = (paginator.page.start_index() if page else 1) if paginator.page else 1
        data = [
            {
                "rank": first_rank + i,
                "username": r.user.username,
                "is_bot": r.user.plays_as_bot,
                "rating": display_rating(r.mu),
                "deviation": rating_selectors.rating_json(r.mu, r.sigma, r.games)["deviation"],
                "games": r.games,
            }
            for i, r in enumerate(page)
        ]
        return paginator.get_paginated_response(LeaderboardEntryOutput(data, many=True).data)
