"""Account endpoints: one view per operation, each with its own input/output serializers."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from accounts.models import User
from accounts.services import token_obtain, token_revoke, user_register
from briscola_service.exceptions import ErrorSerializer
from briscola_service.throttling import PasswordCheckThrottle

# The default throttles, and one password check per request (per IP and per user name).
PASSWORD_THROTTLES: list[Any] = [*api_settings.DEFAULT_THROTTLE_CLASSES, PasswordCheckThrottle]


class RegisterApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []  # anonymous by design; no CSRF/session involved
    throttle_classes = PASSWORD_THROTTLES

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=128, trim_whitespace=False, write_only=True)

    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        token = serializers.CharField()

    @extend_schema(
        operation_id="auth_register",
        tags=["auth"],
        summary="Create an account and get its API token",
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

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=128, trim_whitespace=False, write_only=True)

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(
        operation_id="auth_token_obtain",
        tags=["auth"],
        summary="Get the API token for a user name and password",
        description="Send it as `Authorization: Token <token>`.",
        request=InputSerializer,
        responses={200: OutputSerializer, 400: ErrorSerializer, 401: ErrorSerializer},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = token_obtain(**serializer.validated_data)
        return Response(self.OutputSerializer({"token": token}).data)


class TokenRevokeApi(APIView):
    permission_classes = [IsAuthenticated]

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

    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        is_bot = serializers.BooleanField()
        bot_level = serializers.CharField()
        date_joined = serializers.DateTimeField()

    @extend_schema(
        operation_id="auth_me",
        tags=["auth"],
        summary="The authenticated account",
        responses={200: OutputSerializer, 401: ErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(request.user).data)
