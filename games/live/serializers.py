"""The streams' events as the OpenAPI schema declares them (they document, never serialize).

A client generated from the schema gets a model of each event: a match stream's
(``MatchStreamEvent``: the match after a change, or why the stream ended) and an account
stream's (``AccountStreamEvent``: the account's matches, one of them after a change, or
why the stream ended), each a ``oneOf`` told apart by ``type``. The enums are made of the
constants the streams write (events.MatchStreamChange, streams.AccountStreamChange,
streams.StreamClosedReason, ...): a type the code can send is a type the schema names, and
tests/live/test_stream_schema.py checks every event of real streams against them.

The detail an event carries is the ``MatchDetailOutput`` that ``GET /api/v1/matches/{id}``
answers (the same function builds both), referenced, not described twice.
"""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from games.live.events import MatchStreamChange
from games.live.streams import (
    ACCOUNT,
    CREDENTIAL_REASONS,
    STREAM_CLOSED,
    AccountStreamChange,
    StreamClosedReason,
)
from games.matches.serializers import CARD, SEAT, MatchDetailOutput, SeatRatingChangeOutput
from games.models import MatchStatus

# The one-value enums of ``type`` (the settings' ENUM_NAME_OVERRIDES name these very lists).
ACCOUNT_TYPE = [ACCOUNT]
STREAM_CLOSED_TYPE = [STREAM_CLOSED]

# -- a match's stream -----------------------------------------------------------------------


class MatchStreamMoveSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The card played (public once played)."""

    deal = serializers.IntegerField(help_text="The deal's id.")
    ply = serializers.IntegerField(help_text="0 for the deal's first card.")
    seat = serializers.IntegerField(help_text=SEAT)
    card = serializers.CharField(help_text=CARD)


class MatchStreamUpdateSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The match after a change (`match`: the whole of it, from scratch)."""

    id = serializers.IntegerField(
        help_text="The match's position after the change: the same for every viewer, strictly "
        "increasing. Resume after it with `Last-Event-ID` (or `?after=`)."
    )
    type = serializers.ChoiceField(
        choices=MatchStreamChange.choices,
        help_text="The weightiest of `changes`. `match`: the whole detail, from scratch (the "
        "first event, or a resumption from before the current deal).",
    )
    changes = serializers.ListField(
        child=serializers.ChoiceField(choices=MatchStreamChange.choices),
        help_text="Every change the event carries, in the order they happened, e.g. "
        '`["card_played", "deal_finished", "deal_started"]`.',
    )
    match = serializers.UUIDField(help_text="The match's id.")
    etag = serializers.CharField(
        help_text="The `ETag` that `GET /api/v1/matches/{id}` answers for `detail`."
    )
    move = MatchStreamMoveSerializer(
        required=False,
        help_text="The card played, when `changes` has `card_played`; absent when the event "
        "carries more than one card (a resumption across a deal's end; states between that "
        "were not kept any more, which a stream never makes up): read `detail`.",
    )
    detail = MatchDetailOutput(
        help_text="Your match detail after the change, as `GET /api/v1/matches/{id}` answers "
        "it: replace what you had (there is no delta to apply)."
    )


class MatchStreamClosedSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The server ended the stream: its last event."""

    id = serializers.IntegerField(
        help_text="The id of the last event the stream sent (or of the position it resumed "
        "from): not a new position, so resuming after it loses nothing."
    )
    type = serializers.ChoiceField(choices=STREAM_CLOSED_TYPE)
    reason = serializers.ChoiceField(
        choices=StreamClosedReason.choices,
        help_text="`match_private`: you may no longer see the match; `match_not_found`: the "
        "match is gone; `token_revoked`: the token the stream was opened with (the account's "
        "or a personal one) was revoked; `signed_out`: its session signed out, or the "
        "password changed.",
    )


MatchStreamEvent = PolymorphicProxySerializer(
    component_name="MatchStreamEvent",
    serializers={
        **dict.fromkeys(MatchStreamChange.values, MatchStreamUpdateSerializer),
        STREAM_CLOSED: MatchStreamClosedSerializer,
    },
    resource_type_field_name="type",
)


# -- an account's stream --------------------------------------------------------------------


class AccountStreamMatchSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """One of your matches as your account stream tells it: what state, whose turn."""

    match = serializers.UUIDField(help_text="The match's id.")
    status = serializers.ChoiceField(choices=MatchStatus.choices)
    players = serializers.ChoiceField(choices=[2, 4], help_text="Seats at the table.")
    rated = serializers.BooleanField(help_text="Its result moves the players' ratings.")
    your_seat = serializers.IntegerField(
        allow_null=True, help_text="Your seat; null: you are invited and have not joined."
    )
    invited = serializers.BooleanField(help_text="A seat is reserved for you: join to play.")
    your_turn = serializers.BooleanField(help_text="Your seat is to play.")
    deal = serializers.IntegerField(
        allow_null=True, help_text="The current deal's id; null before the first deal."
    )
    ply = serializers.IntegerField(
        allow_null=True, help_text="Cards played in the current deal; null before the first deal."
    )
    winner = serializers.IntegerField(
        allow_null=True, help_text="The winning team; null while playing, or for a draw."
    )
    rating_changes = SeatRatingChangeOutput(
        many=True, help_text="Your rating change, once the match is rated; else []."
    )


class AccountStreamSnapshotSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The first event of every connection: where each of your matches stands."""

    id = serializers.IntegerField(
        help_text="Strictly increasing along the stream (not a position: a reconnection "
        "starts with a fresh `account` event, whatever `Last-Event-ID` says)."
    )
    type = serializers.ChoiceField(choices=ACCOUNT_TYPE)
    matches = AccountStreamMatchSerializer(
        many=True,
        help_text="Each of your matches being played or waiting for players (a seat taken or "
        "reserved for you).",
    )


class AccountStreamUpdateSerializer(AccountStreamMatchSerializer):
    """One of your matches after a change that concerns you: `type` tells which."""

    id = serializers.IntegerField(help_text="Strictly increasing along the stream.")
    type = serializers.ChoiceField(
        choices=AccountStreamChange.choices,
        help_text="`match_finished` also for a match called off (`status` `aborted`).",
    )


class AccountStreamClosedSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The server ended the stream: its last event."""

    id = serializers.IntegerField(help_text="Strictly increasing along the stream.")
    type = serializers.ChoiceField(choices=STREAM_CLOSED_TYPE)
    reason = serializers.ChoiceField(
        choices=[c for c in StreamClosedReason.choices if c[0] in CREDENTIAL_REASONS],
        help_text="`token_revoked`: the token the stream was opened with (the account's or a "
        "personal one) was revoked; `signed_out`: its session signed out, or the password "
        "changed.",
    )


AccountStreamEvent = PolymorphicProxySerializer(
    component_name="AccountStreamEvent",
    serializers={
        ACCOUNT: AccountStreamSnapshotSerializer,
        **dict.fromkeys(AccountStreamChange.values, AccountStreamUpdateSerializer),
        STREAM_CLOSED: AccountStreamClosedSerializer,
    },
    resource_type_field_name="type",
)
