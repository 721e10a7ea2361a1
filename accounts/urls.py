from django.urls import path

from accounts import apis

app_name = "accounts"

urlpatterns = [
    path("register", apis.RegisterApi.as_view(), name="register"),
    path("token", apis.TokenObtainApi.as_view(), name="token-obtain"),
    path("token/revoke", apis.TokenRevokeApi.as_view(), name="token-revoke"),
    path("me", apis.MeApi.as_view(), name="me"),
    path("me/bot", apis.BotSwitchApi.as_view(), name="me-bot"),
    path("tokens", apis.AccessTokenListCreateApi.as_view(), name="tokens"),
    path("tokens/<str:token_id>", apis.AccessTokenRevokeApi.as_view(), name="token-revoke-one"),
]
