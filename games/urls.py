from django.urls import path

from games import apis

urlpatterns = [
    path("matches", apis.MatchListCreateApi.as_view(), name="matches"),
    path("matches/<str:match_id>", apis.MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<str:match_id>/join", apis.MatchJoinApi.as_view(), name="match-join"),
    path("matches/<str:match_id>/abort", apis.MatchAbortApi.as_view(), name="match-abort"),
    path("matches/<str:match_id>/moves", apis.MoveCreateApi.as_view(), name="match-moves"),
    path("matches/<str:match_id>/resign", apis.MatchResignApi.as_view(), name="match-resign"),
    path("matches/<str:match_id>/events", apis.MatchEventsApi.as_view(), name="match-events"),
    path("deals/<int:deal_id>", apis.DealRecordApi.as_view(), name="deal-detail"),
]
