"""Input and output serializers of the games API (outputs document the JSON shapes)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from games import rules
from games.matches.services import SeatSpec
from games.models import MatchFormat, MatchStatus


class StrictSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """Rejects fields it does not know, so a typo is an error, not a silent default."""

    # The schema says so too: additionalProperties false (briscola_service.openapi).
    rejects_unknown_fields = True

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": ["open"]},
            {
                "type": "object",
                "properties": {"bot": {"type": "string", "example": "greedy"}},
                "required": ["bot"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"user": {"type": "string", "example": "alice"}},
                "required": ["user"],
                "additionalProperties": False,
            },
        ]
    }
)
class SeatSpecField(serializers.Field):  # type: ignore[type-arg]
    """``"open"``, ``{"bot": "greedy"}`` or ``{"user": "alice"}``."""

    default_error_messages = {
        # Braces doubled: DRF formats error messages with str.format.
        "invalid": 'A seat is "open", {{"bot": "<level>"}} or {{"user": "<username>"}}.',
        "control": "A bot level or user name has no control characters (such as NUL).",
    }

    def to_internal_value(self, data: Any) -> SeatSpec:
        if data == "open":
            return SeatSpec("open")
        if isinstance(data, dict) and len(data) == 1:
            ((kind, value),) = data.items()
            if kind in ("bot", "user") and isinstance(value, str) and value:
                if "\x00" in value or any(ord(ch) < 32 for ch in value):
                    self.fail("control")
                return SeatSpec(kind, value)
        self.fail("invalid")
        raise AssertionError  # unreachable

    def to_representation(self, value: SeatSpec) -> Any:
        return "open" if value.kind == "open" else {value.kind: value.value}


@extend_schema_field(
    {
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "per_move_seconds": {"type": "integer", "minimum": 5, "maximum": 600}
                },
                "required": ["per_move_seconds"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"per_move_hours": {"type": "integer", "minimum": 1, "maximum": 168}},
                "required": ["per_move_hours"],
                "additionalProperties": False,
            },
        ],
        "nullable": True,
    }
)
class TimeControlField(serializers.JSONField):
    """``{"per_move_seconds": 5..600}`` (live) or ``{"per_move_hours": 1..168}``."""


class MatchOptionsSerializer(StrictSerializer):
    partners_last_hand = serializers.BooleanField(default=True)


class MatchCreateInput(StrictSerializer):
    players = serializers.ChoiceField(choices=[2, 4])
    format = serializers.ChoiceField(choices=MatchFormat.choices, default=MatchFormat.SINGLE)
    seats = serializers.ListField(
        child=SeatSpecField(),
        max_length=4,
        help_text="Seats 1 onwards; or every seat, all bots, for an exhibition (admins only).",
    )
    public = serializers.BooleanField(default=False)
    rated = serializers.BooleanField(default=False)
    options = MatchOptionsSerializer(required=False)
    # Checked by games.clocks (400 invalid_time_control), so every bad value gets that code.
    time_control = TimeControlField(required=False, allow_null=True)
    on_timeout = serializers.JSONField(
        required=False, help_text='`"forfeit"` (default: the absent side loses) or `"bot"`.'
    )
    timeout_bot = serializers.JSONField(
        required=False, help_text="The level of the bot that plays for an absent seat."
    )


class MatchJoinInput(StrictSerializer):
    seat = serializers.IntegerField(min_value=0, max_value=3, required=False)


class StrictCharField(serializers.CharField):
    """A JSON string only: DRF's CharField would turn the number 5 into "5"."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class MoveInput(StrictSerializer):
    card = StrictCharField(max_length=8, help_text="A card code such as 'Ad' or '3b'.")
    ply = serializers.IntegerField(
        min_value=0, max_value=39, help_text="The deal's move count you saw (`ply`)."
    )
    deal = serializers.IntegerField(
        min_value=1,
        max_value=2**63 - 1,
        required=False,
        help_text=(
            "The id of the deal you saw (`current_deal.id`). Recommended: a move prepared "
            "in one deal is then refused (409 `stale_deal`) instead of landing at the same "
            "ply of the next deal."
        ),
    )


class MatchListFilters(StrictSerializer):
    status = serializers.ChoiceField(choices=MatchStatus.choices, required=False)
    mine = serializers.BooleanField(required=False, default=False)
    open = serializers.BooleanField(required=False, default=False)
    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=100, required=False)


class DeclineInput(StrictSerializer):
    reason = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)


class EventsFilter(StrictSerializer):
    after = serializers.IntegerField(min_value=0, required=False, default=0)


# -- outputs (documentation of the shapes the selectors build) ------------------------


class SeatOutput(serializers.Serializer):  # type: ignore[type-arg]
    seat = serializers.IntegerField()
    team = serializers.IntegerField()
    user = serializers.CharField(allow_null=True)
    is_bot = serializers.BooleanField()
    bot_level = serializers.CharField(allow_null=True)
    joined = serializers.BooleanField()
    away = serializers.BooleanField(help_text="The timeout bot played this seat's last turn.")
    bot_holds = serializers.BooleanField(
        help_text="After 3 timeouts in a row the bot plays the seat until its person returns."
    )


class TrickOutput(serializers.Serializer):  # type: ignore[type-arg]
    leader = serializers.IntegerField()
    cards = serializers.ListField(child=serializers.CharField())
    seats = serializers.ListField(child=serializers.IntegerField())
    winner = serializers.IntegerField()
    points = serializers.IntegerField()


class TableCardOutput(serializers.Serializer):  # type: ignore[type-arg]
    seat = serializers.IntegerField()
    card = serializers.CharField()


class DealSummaryOutput(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    dealer = serializers.IntegerField()
    status = serializers.CharField()
    commitment = serializers.CharField(help_text="SHA-256 of the seed, published at the start.")
    seed = serializers.CharField(allow_null=True, help_text="Revealed when the deal ends.")
    points = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    winner = serializers.IntegerField(allow_null=True)


class DealViewOutput(DealSummaryOutput):
    players = serializers.IntegerField()
    seat = serializers.IntegerField(allow_null=True, help_text="Your seat; null for a spectator.")
    team = serializers.IntegerField(allow_null=True)
    hand = serializers.ListField(child=serializers.CharField())
    partner_hand = serializers.ListField(child=serializers.CharField(), allow_null=True)
    hand_sizes = serializers.ListField(child=serializers.IntegerField())
    briscola = serializers.CharField()
    trump = serializers.CharField()
    briscola_on_table = serializers.BooleanField()
    briscola_holder = serializers.IntegerField(allow_null=True)
    stock_count = serializers.IntegerField()
    leader = serializers.IntegerField()
    table = TableCardOutput(many=True)
    tricks = TrickOutput(many=True)
    turn = serializers.IntegerField(allow_null=True)
    ply = serializers.IntegerField()
    legal = serializers.ListField(child=serializers.CharField())
    over = serializers.BooleanField()


class MatchSummaryOutput(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.UUIDField()
    players = serializers.IntegerField()
    format = serializers.CharField()
    options = MatchOptionsSerializer()
    status = serializers.CharField()
    public = serializers.BooleanField()
    rated = serializers.BooleanField()
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    seats = SeatOutput(many=True)
    deals_won = serializers.ListField(child=serializers.IntegerField())
    winner = serializers.IntegerField(allow_null=True)
    end_reason = serializers.CharField(allow_null=True)
    time_control = serializers.DictField(
        allow_null=True, help_text='`{"per_move_seconds": N}`, `{"per_move_hours": N}` or null.'
    )
    on_timeout = serializers.CharField()
    timeout_bot = serializers.CharField()
    to_move = serializers.IntegerField(allow_null=True, help_text="The seat to play.")
    deadline = serializers.DateTimeField(
        allow_null=True, help_text="When the seat to move (a person) must have played."
    )
    seconds_left = serializers.IntegerField(allow_null=True, help_text="Until `deadline`.")
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="A waiting match is called off then."
    )
    rematch_of = serializers.UUIDField(allow_null=True)


class RatingChangeOutput(serializers.Serializer):  # type: ignore[type-arg]
    match = serializers.UUIDField()
    category = serializers.CharField(help_text="`1v1` or `2v2`.")
    finished_at = serializers.DateTimeField()
    result = serializers.ChoiceField(choices=["win", "draw", "loss"])
    rating_before = serializers.IntegerField()
    rating_after = serializers.IntegerField()
    diff = serializers.IntegerField()
    provisional = serializers.BooleanField(help_text="The rating after is still provisional.")


class SeatRatingChangeOutput(RatingChangeOutput):
    seat = serializers.IntegerField()
    user = serializers.CharField()


class MatchDetailOutput(MatchSummaryOutput):
    your_seat = serializers.IntegerField(allow_null=True)
    rating_changes = SeatRatingChangeOutput(
        many=True, help_text="A finished rated match: each player's rating change, once rated."
    )
    deals = DealSummaryOutput(many=True)
    current_deal = DealViewOutput(allow_null=True)


class EventsOutput(serializers.Serializer):  # type: ignore[type-arg]
    last_id = serializers.IntegerField()
    events = serializers.ListField(child=serializers.DictField())


class DealRecordOutput(DealSummaryOutput):
    match = serializers.UUIDField()
    record = serializers.DictField(help_text=f"The `{rules.RECORD_FORMAT}` record.")
    initial_hands = serializers.ListField(child=serializers.ListField())
    tricks = serializers.ListField(child=serializers.DictField())
    draws = serializers.ListField(child=serializers.ListField())
    final_points = serializers.ListField(child=serializers.IntegerField())
    complete = serializers.BooleanField()
