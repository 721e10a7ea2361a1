"""Account endpoints: one view per operation, each with its own input/output serializers."""

from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from accounts.models import AccessToken, TokenScope, User
from accounts.services import (
    InvalidCredentialsError,
    access_token_create,
    access_token_revoke,
    token_obtain,
    token_revoke,
    user_become_bot,
    user_register,
)
from briscola_service.exceptions import ErrorSerializer
from briscola_service.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictSerializer,
)
from briscola_service.throttling import (
    PasswordCheckThrottle,
    password_check_begin,
    password_check_passed,
)

# The default throttles, and one password check per request (per IP, and refused while the
# user name is over its failures).
PASSWORD_THROTTLES: list[Any] = [*api_settings.DEFAULT_THROTTLE_CLASSES, PasswordCheckThrottle]

# Managing tokens and the account needs the account's own token (or a session): a
# personal access token has no "account" scope, so it gets 403 insufficient_scope.
ACCOUNT_SCOPE = "account"


class RegisterApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []  # anonymous by design; no CSRF/session involved
    throttle_classes = PASSWORD_THROTTLES

    @extend_schema_serializer(component_name="RegisterInput")
    class InputSerializer(StrictSerializer):
        username = StrictCharField(max_length=150)
        password = StrictCharField(max_length=128, trim_whitespace=False, write_only=True)
        bot = StrictBooleanField(
            default=False,
            help_text="A bot's account (a program you run): shown as a bot everywhere.",
        )

    @extend_schema_serializer(component_name="RegisteredAccountOutput")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        token = serializers.CharField(help_text="The account's token: every scope.")

    @extend_schema(
        operation_id="auth_register",
        tags=["auth"],
        summary="Create an account and get its API token",
        description=(
            "Send the token as `Authorization: Bearer <token>` (or `Token <token>`). "
            '`"bot": true` registers a bot you run yourself: it plays through this API like '
            "a person and is shown as a bot (`is_bot`) everywhere."
        ),
        request=InputSerializer,
        responses={201: OutputSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user, token = user_register(**serializer.validated_data)
        output = self.OutputSerializer({"username": user.username, "token": token})
        return Response(output.data, status=status.HTTP_201_CREATED)


class TokenObtainApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []
    throttle_classes = PASSWORD_THROTTLES

    @extend_schema_serializer(component_name="TokenObtainInput")
    class InputSerializer(StrictSerializer):
        username = StrictCharField(max_length=150)
        password = StrictCharField(max_length=128, trim_whitespace=False, write_only=True)

    @extend_schema_serializer(component_name="TokenOutput")
    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(
        operation_id="auth_token_obtain",
        tags=["auth"],
        summary="Get the API token for a user name and password",
        description=(
            "The account's token (every scope); the user name in any letter case. Send it as "
            "`Authorization: Bearer <token>` "
            "(or `Token <token>`). For programs, prefer personal access tokens "
            "(`/auth/tokens`): several, named, scoped, each revoked on its own."
        ),
        request=InputSerializer,
        responses={200: OutputSerializer, 400: ErrorSerializer, 401: ErrorSerializer},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        username = serializer.validated_data["username"]
        password_check_begin(request, username)  # a failure of the name until known not
        wrong = False
        try:
            token = token_obtain(**serializer.validated_data)
        except InvalidCredentialsError:
            wrong = True
            raise
        finally:
            if not wrong:
                password_check_passed(request, username)
        return Response(self.OutputSerializer({"token": token}).data)


class TokenRevokeApi(APIView):
    permission_classes = [IsAuthenticated]
    required_scope = ACCOUNT_SCOPE

    @extend_schema(
        operation_id="auth_token_revoke",
        tags=["auth"],
        summary="Revoke the current API token",
        description="The old token stops working at once; obtain a new one with a password.",
        request=None,
        responses={204: None, 401: ErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        assert isinstance(request.user, User)
        token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="AccountOutput")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        is_bot = serializers.BooleanField(help_text="A bot: the service's own, or one you run.")
        bot_level = serializers.CharField(
            allow_null=True, help_text="The service bot's level; null for everyone else."
        )
        date_joined = serializers.DateTimeField()

    @extend_schema(
        operation_id="auth_me",
        tags=["auth"],
        summary="The authenticated account",
        responses={200: OutputSerializer, 401: ErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        assert isinstance(request.user, User)
        return Response(_me(request.user))


def _me(user: User) -> dict[str, Any]:
    return dict(
        MeApi.OutputSerializer(
            {
                "username": user.username,
                "is_bot": user.plays_as_bot,
                "bot_level": user.bot_level or None,
                "date_joined": user.date_joined,
            }
        ).data
    )


class BotSwitchApi(APIView):
    permission_classes = [IsAuthenticated]
    required_scope = ACCOUNT_SCOPE

    @extend_schema(
        operation_id="auth_me_bot",
        tags=["auth"],
        summary="Make this account a bot's account (before its first match)",
        description=(
            "For a program you run: the account is shown as a bot everywhere from now on "
            "(and can be filtered on the leaderboard). Only before the account's first "
            "match: `bot_switch_refused` 409 after. Needs the account's token."
        ),
        request=None,
        responses={
            200: MeApi.OutputSerializer,
            401: ErrorSerializer,
            403: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request: Request) -> Response:
        assert isinstance(request.user, User)
        has_played = import_string(settings.ACCOUNTS_HAS_PLAYED)
        user = user_become_bot(user=request.user, has_played=has_played)
        return Response(_me(user))


class AccessTokenOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=TokenScope.choices))
    prefix = serializers.CharField(help_text="The key's first characters, to tell them apart.")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(
        allow_null=True, help_text="To the minute; null: never used."
    )


def _token_json(token: AccessToken) -> dict[str, Any]:
    return {
        "id": token.pk,
        "name": token.name,
        "scopes": token.scopes,
        "prefix": token.prefix,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
    }


class AccessTokenListCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    required_scope = ACCOUNT_SCOPE
    pagination_class = None

    @extend_schema_serializer(component_name="AccessTokenCreateInput")
    class InputSerializer(StrictSerializer):
        name = StrictCharField(max_length=100, help_text="What the token is for.")
        scopes = serializers.ListField(
            child=StrictChoiceField(choices=TokenScope.choices),
            default=list,
            help_text="`read` (every GET) and/or `play` (writes too). Default: `read` only.",
        )

    @extend_schema_serializer(component_name="AccessTokenCreatedOutput")
    class CreatedOutput(AccessTokenOutput):
        token = serializers.CharField(help_text="The key: shown this once, keep it secret.")

    @extend_schema(
        operation_id="auth_tokens_list",
        tags=["auth"],
        summary="Your personal access tokens (never their keys)",
        responses={200: AccessTokenOutput(many=True), 401: ErrorSerializer, 403: ErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        tokens = AccessToken.objects.filter(user=request.user).order_by("created_at", "id")
        return Response(AccessTokenOutput([_token_json(t) for t in tokens], many=True).data)

    @extend_schema(
        operation_id="auth_tokens_create",
        tags=["auth"],
        summary="Create a personal access token",
        description=(
            "Several per account, each with a name and scopes, revoked one by one. A `read` "
            "token gets 403 `insufficient_scope` for any write. Managing tokens needs the "
            "account's token (`/auth/token`), not a personal one."
        ),
        request=InputSerializer,
        responses={
            201: CreatedOutput,
            400: ErrorSerializer,
            401: ErrorSerializer,
            403: ErrorSerializer,
            409: OpenApiResponse(ErrorSerializer, description="`too_many_tokens`."),
        },
    )
    def post(self, request: Request) -> Response:
        assert isinstance(request.user, User)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        scopes = data.validated_data["scopes"] or [TokenScope.READ]
        token, key = access_token_create(
            user=request.user, name=data.validated_data["name"], scopes=scopes
        )
        body = self.CreatedOutput({**_token_json(token), "token": key}).data
        return Response(body, status=status.HTTP_201_CREATED)


class AccessTokenRevokeApi(APIView):
    permission_classes = [IsAuthenticated]
    required_scope = ACCOUNT_SCOPE

    @extend_schema(
        operation_id="auth_tokens_revoke",
        tags=["auth"],
        summary="Revoke a personal access token: its next request is 401",
        # Any text in the URL (accounts/urls.py): an id that cannot be one is
        # `token_not_found` too, not the generic `not_found` of an unknown URL.
        parameters=[OpenApiParameter("token_id", int, OpenApiParameter.PATH)],
        request=None,
        responses={204: None, 401: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def delete(self, request: Request, token_id: str) -> Response:
        assert isinstance(request.user, User)
        access_token_revoke(user=request.user, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
