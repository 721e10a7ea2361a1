from django.urls import path

from games.clocks import apis as clock_apis
from games.live import apis as live_apis
from games.matches import apis
from games.players import apis as player_apis
from games.replays.apis import (
    DealExportApi,
    DealExportTextApi,
    DealReplayApi,
    DealVerifyApi,
    MatchExportApi,
    MatchExportTextApi,
    RecordCheckApi,
)

urlpatterns = [
    path("matches", apis.MatchListCreateApi.as_view(), name="matches"),
    path("matches/<str:match_id>", apis.MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<str:match_id>/join", apis.MatchJoinApi.as_view(), name="match-join"),
    path("matches/<str:match_id>/abort", apis.MatchAbortApi.as_view(), name="match-abort"),
    path("matches/<str:match_id>/moves", apis.MoveCreateApi.as_view(), name="match-moves"),
    path("matches/<str:match_id>/resign", apis.MatchResignApi.as_view(), name="match-resign"),
    path("matches/<str:match_id>/events", apis.MatchEventsApi.as_view(), name="match-events"),
    path("invitations", clock_apis.InvitationListApi.as_view(), name="invitations"),
    path(
        "matches/<str:match_id>/decline", clock_apis.MatchDeclineApi.as_view(), name="match-decline"
    ),
    path("matches/<str:match_id>/leave", clock_apis.MatchLeaveApi.as_view(), name="match-leave"),
    path("matches/<str:match_id>/return", clock_apis.SeatReturnApi.as_view(), name="match-return"),
    path(
        "matches/<str:match_id>/rematch", clock_apis.MatchRematchApi.as_view(), name="match-rematch"
    ),
    path("matches/<str:match_id>/stream", live_apis.MatchStreamApi.as_view(), name="match-stream"),
    path("stream", live_apis.AccountStreamApi.as_view(), name="account-stream"),
    path("deals/<str:deal_id>", apis.DealRecordApi.as_view(), name="deal-detail"),
    path("players/<str:username>", player_apis.PlayerDetailApi.as_view(), name="player-detail"),
    path(
        "players/<str:username>/rating-history",
        player_apis.PlayerRatingHistoryApi.as_view(),
        name="player-rating-history",
    ),
    path(
        "players/<str:username>/matches",
        player_apis.PlayerMatchesApi.as_view(),
        name="player-matches",
    ),
    path("leaderboard", player_apis.LeaderboardApi.as_view(), name="leaderboard"),
    path("deals/<str:deal_id>/replay", DealReplayApi.as_view(), name="deal-replay"),
    path("deals/<str:deal_id>/verify", DealVerifyApi.as_view(), name="deal-verify"),
    path("deals/<str:deal_id>/export", DealExportApi.as_view(), name="deal-export"),
    path("deals/<str:deal_id>/export.txt", DealExportTextApi.as_view(), name="deal-export-text"),
    path("matches/<str:match_id>/export", MatchExportApi.as_view(), name="match-export"),
    path(
        "matches/<str:match_id>/export.txt",
        MatchExportTextApi.as_view(),
        name="match-export-text",
    ),
    path("records/check", RecordCheckApi.as_view(), name="records-check"),
]
