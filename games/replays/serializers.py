"""Output serializers of the replay API: they document the JSON shapes the selectors build
(tests/replays check real answers against them)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from games.matches.serializers import (
    DealRecordBody,
    DealSummaryOutput,
    MatchSummaryOutput,
    RecordTrickOutput,
    SeatViewOutput,
    deal_event_fields,
    draws_field,
)
from games.models import DealStatus


def _step(name: str, doc: str, fields: dict[str, Any]) -> type:
    attrs: dict[str, Any] = {
        "step": serializers.IntegerField(help_text="0, 1, ...: the step's position."),
        "at_ply": serializers.IntegerField(help_text="Cards played once it had happened."),
        "type": serializers.ChoiceField(choices=[name]),
        **fields,
        "__doc__": doc,
    }
    camel = "".join(part.title() for part in name.split("_"))
    return type(f"{camel}Step", (serializers.Serializer,), attrs)


def replay_step_serializers() -> dict[str, type]:
    return {name: _step(name, doc, fields) for name, (doc, fields) in deal_event_fields().items()}


def steps_field() -> PolymorphicProxySerializer:
    return PolymorphicProxySerializer(
        component_name="ReplayStep",
        serializers=replay_step_serializers(),
        resource_type_field_name="type",
        many=True,
    )


class ReplayDealOutput(DealSummaryOutput):
    players = serializers.IntegerField()
    match = serializers.UUIDField()


FULL = "In the full view only (no `seat` asked): "


class ReplayPositionOutput(SeatViewOutput):
    """The deal after `ply` moves: a seat's view, or (no `seat`) the full view."""

    deck = serializers.ListField(
        child=serializers.CharField(), required=False, help_text=FULL + "the 40 cards in order."
    )
    hands = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text=FULL + "every seat's hand.",
    )
    initial_hands = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text=FULL + "every seat's first three cards.",
    )
    stock = serializers.ListField(
        child=serializers.CharField(), required=False, help_text=FULL + "the stock, top first."
    )
    draws = draws_field(FULL + "`[seat, card]` pairs in the order drawn.", required=False)
    moves = serializers.ListField(
        child=serializers.CharField(), required=False, help_text=FULL + "the cards played."
    )


class ReplayOutput(serializers.Serializer):  # type: ignore[type-arg]
    deal = ReplayDealOutput()
    match = MatchSummaryOutput()
    your_seat = serializers.IntegerField(allow_null=True, help_text="Null: you are not seated.")
    seat = serializers.IntegerField(allow_null=True, help_text="The seat asked for; null: all.")
    ply = serializers.IntegerField(help_text="The position shown: after this many moves.")
    plies = serializers.IntegerField(help_text="Moves played in the deal so far.")
    steps = steps_field()
    position = ReplayPositionOutput()


class CheckOutput(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField(help_text="e.g. `commitment`, `deck`, `result`, `move_seats`.")
    ok = serializers.BooleanField()
    detail = serializers.CharField()


class VerifyOutput(serializers.Serializer):  # type: ignore[type-arg]
    deal = serializers.IntegerField()
    ok = serializers.BooleanField(help_text="Every check passed.")
    algorithm = serializers.CharField(help_text="The shuffle algorithm (docs/verify.md).")
    seed = serializers.CharField()
    commitment = serializers.CharField()
    checks = CheckOutput(many=True)


class MatchExportDealOutput(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=DealStatus.choices)
    record = DealRecordBody()


class MatchExportOutput(serializers.Serializer):  # type: ignore[type-arg]
    match = serializers.UUIDField()
    players = serializers.IntegerField()
    seats = serializers.ListField(
        child=serializers.CharField(allow_null=True), help_text="User names by seat."
    )
    deals = MatchExportDealOutput(many=True, help_text="The deals that are over, in order.")


class RecordVerifyOutput(serializers.Serializer):  # type: ignore[type-arg]
    ok = serializers.BooleanField()
    checks = CheckOutput(many=True)


class RecordCheckOutput(serializers.Serializer):  # type: ignore[type-arg]
    players = serializers.IntegerField()
    dealer = serializers.IntegerField()
    briscola = serializers.CharField()
    tricks = RecordTrickOutput(many=True)
    draws = draws_field()
    points = serializers.ListField(child=serializers.IntegerField())
    winner = serializers.IntegerField(allow_null=True)
    complete = serializers.BooleanField(help_text="Every card was played.")
    moves = serializers.IntegerField(help_text="Moves in the record.")
    steps = steps_field()
    verify = RecordVerifyOutput(
        required=False,
        help_text=(
            "Every check (commitment, deck, moves, result) when the record carries a seed "
            "and a commitment; else, when it carries a result, the `result` check alone "
            "(the replay gives the recorded points and winner); absent otherwise."
        ),
    )
