"""Input and output serializers of the games API (outputs document the JSON shapes)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from briscola_service.openapi import schema_component
from briscola_service.serializers import (
    QueryIntegerField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictSerializer,
)
from games import rules
from games.matches.services import SeatSpec
from games.models import (
    DealStatus,
    EndReason,
    MatchEventKind,
    MatchFormat,
    MatchStatus,
    OnTimeout,
)


@extend_schema_field(
    {
        "oneOf": [
            schema_component(
                "OpenSeat",
                {
                    "type": "string",
                    "enum": ["open"],
                    "description": "A seat open to anyone who joins.",
                },
            ),
            schema_component(
                "BotSeat",
                {
                    "type": "object",
                    "description": "A seat for the service's bot of this level.",
                    "properties": {"bot": {"type": "string", "example": "greedy"}},
                    "required": ["bot"],
                    "additionalProperties": False,
                },
            ),
            schema_component(
                "UserSeat",
                {
                    "type": "object",
                    "description": "A seat reserved for this user (an invitation).",
                    "properties": {"user": {"type": "string", "example": "alice"}},
                    "required": ["user"],
                    "additionalProperties": False,
                },
            ),
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
            schema_component(
                "LiveTimeControl",
                {
                    "type": "object",
                    "description": "Live: seconds for each move.",
                    "properties": {
                        "per_move_seconds": {"type": "integer", "minimum": 5, "maximum": 600}
                    },
                    "required": ["per_move_seconds"],
                    "additionalProperties": False,
                },
            ),
            schema_component(
                "CorrespondenceTimeControl",
                {
                    "type": "object",
                    "description": "Correspondence: hours for each move.",
                    "properties": {
                        "per_move_hours": {"type": "integer", "minimum": 1, "maximum": 168}
                    },
                    "required": ["per_move_hours"],
                    "additionalProperties": False,
                },
            ),
        ],
        "nullable": True,
    }
)
class TimeControlField(serializers.JSONField):
    """``{"per_move_seconds": 5..600}`` (live) or ``{"per_move_hours": 1..168}``."""


# Taken as any JSON and checked by games.clocks (400 invalid_time_control), so every bad
# value gets that code; the schema says what is valid.
@extend_schema_field({"type": "string", "enum": [*OnTimeout.values, None], "nullable": True})
class OnTimeoutField(serializers.JSONField):
    """``"forfeit"``, ``"bot"`` or null (forfeit)."""


@extend_schema_field({"type": "string", "nullable": True, "example": "greedy"})
class TimeoutBotField(serializers.JSONField):
    """A bot level or null (greedy)."""


class MatchOptionsSerializer(StrictSerializer):
    partners_last_hand = StrictBooleanField(default=True)


class MatchCreateInput(StrictSerializer):
    players = StrictChoiceField(choices=[2, 4])
    format = StrictChoiceField(choices=MatchFormat.choices, default=MatchFormat.SINGLE)
    seats = serializers.ListField(
        child=SeatSpecField(),
        max_length=4,
        help_text="Seats 1 onwards; or every seat, all bots, for an exhibition (admins only).",
    )
    public = StrictBooleanField(default=False)
    rated = StrictBooleanField(default=False)
    options = MatchOptionsSerializer(required=False)
    # Checked by games.clocks (400 invalid_time_control), so every bad value gets that code.
    time_control = TimeControlField(required=False, allow_null=True)
    on_timeout = OnTimeoutField(
        required=False,
        allow_null=True,
        help_text='`"forfeit"` (default, or null: the absent side loses) or `"bot"`.',
    )
    timeout_bot = TimeoutBotField(
        required=False,
        allow_null=True,
        help_text="The level of the bot that plays for an absent seat (null: greedy).",
    )


class MatchJoinInput(StrictSerializer):
    seat = StrictIntegerField(
        min_value=0,
        max_value=3,
        required=False,
        help_text="The seat to take; default: the first free.",
    )


class MoveInput(StrictSerializer):
    card = StrictCharField(max_length=8, help_text="A card code such as 'Ad' or '3b'.")
    ply = StrictIntegerField(
        min_value=0,
        max_value=39,
        help_text="The deal's `ply` (cards played so far) you saw: a JSON integer.",
    )
    deal = StrictIntegerField(
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
    page = QueryIntegerField(min_value=1, required=False)
    page_size = QueryIntegerField(min_value=1, required=False)  # above 100: 100


class DeclineInput(StrictSerializer):
    reason = StrictCharField(max_length=200, required=False, default="", allow_blank=True)


class EventsFilter(StrictSerializer):
    after = QueryIntegerField(min_value=0, required=False, default=0)


# -- outputs (documentation of the shapes the selectors build) ------------------------

CARD = "A card code: rank (A 3 R C F 7 6 5 4 2) then suit (c d s b), e.g. `Ad` (docs/rules.md)."


def _card(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(help_text=kwargs.pop("help_text", CARD), **kwargs)


def _cards(help_text: str, **kwargs: Any) -> serializers.ListField:  # type: ignore[type-arg]
    return serializers.ListField(child=serializers.CharField(), help_text=help_text, **kwargs)


SEAT = "A seat number: 0..players-1 in playing order (partners sit opposite)."
TEAM = "A team: 0 (seats 0 and 2) or 1 (seats 1 and 3); in 2-player matches the seat."


class SeatOutput(serializers.Serializer):  # type: ignore[type-arg]
    seat = serializers.IntegerField(help_text=SEAT)
    team = serializers.IntegerField(help_text=TEAM)
    user = serializers.CharField(allow_null=True, help_text="Who sits there; null: open seat.")
    is_bot = serializers.BooleanField(
        help_text="A bot: one of the service's own (`bot_level` set) or a third party's."
    )
    bot_level = serializers.CharField(
        allow_null=True, help_text="The service bot's level; null for people and third-party bots."
    )
    joined = serializers.BooleanField(help_text="False while an invitation is not yet taken.")
    away = serializers.BooleanField(help_text="The timeout bot played this seat's last turn.")
    bot_holds = serializers.BooleanField(
        help_text="After 3 timeouts in a row the bot plays the seat until its person returns."
    )


class TrickOutput(serializers.Serializer):  # type: ignore[type-arg]
    leader = serializers.IntegerField(help_text="The seat that led the trick.")
    cards = _cards("The cards in the order played, from the leader.")
    seats = serializers.ListField(
        child=serializers.IntegerField(), help_text="Who played each card, in order."
    )
    winner = serializers.IntegerField(help_text="The seat that won the trick.")
    points = serializers.IntegerField(help_text="Card points in the trick.")


class TableCardOutput(serializers.Serializer):  # type: ignore[type-arg]
    seat = serializers.IntegerField(help_text="Who played it.")
    card = _card()


class DealSummaryOutput(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField(help_text="The deal's id (`/api/v1/deals/{id}`).")
    number = serializers.IntegerField(help_text="1 for the match's first deal.")
    dealer = serializers.IntegerField(help_text="The dealer's seat; the seat after leads.")
    status = serializers.ChoiceField(choices=DealStatus.choices)
    commitment = serializers.CharField(help_text="SHA-256 of the seed, published at the start.")
    seed = serializers.CharField(allow_null=True, help_text="Revealed when the deal ends.")
    points = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Card points per team, once the deal is over (61+ wins, 60-60 is drawn).",
    )
    winner = serializers.IntegerField(allow_null=True, help_text="The winning team; null: none.")


class SeatViewOutput(serializers.Serializer):  # type: ignore[type-arg]
    """A deal as one seat may see it (docs/rules.md, "What each seat may know")."""

    players = serializers.IntegerField(help_text="2 or 4.")
    dealer = serializers.IntegerField(help_text="The dealer's seat; the seat after leads.")
    seat = serializers.IntegerField(allow_null=True, help_text="Your seat; null for a spectator.")
    team = serializers.IntegerField(allow_null=True, help_text="Your team; null for a spectator.")
    hand = _cards("Your hand (empty for a spectator).")
    partner_hand = _cards(
        "Your partner's hand in the last three tricks of a 4-player deal with the "
        "`partners_last_hand` option; else null.",
        allow_null=True,
    )
    hand_sizes = serializers.ListField(
        child=serializers.IntegerField(), help_text="Cards in each seat's hand, by seat."
    )
    briscola = _card(help_text="The face-up card; its suit is trump for the deal.")
    trump = serializers.ChoiceField(
        choices=["c", "d", "s", "b"], help_text="The trump suit (the briscola's)."
    )
    briscola_on_table = serializers.BooleanField(help_text="The face-up card is not drawn yet.")
    briscola_holder = serializers.IntegerField(
        allow_null=True,
        help_text="The seat that drew the face-up card and has not played it yet; else null.",
    )
    stock_count = serializers.IntegerField(help_text="Cards left to draw, the face-up one too.")
    leader = serializers.IntegerField(help_text="The seat that leads (led) the current trick.")
    table = TableCardOutput(many=True, help_text="The current trick's cards so far, in order.")
    tricks = TrickOutput(many=True, help_text="The finished tricks, in order.")
    points = serializers.ListField(
        child=serializers.IntegerField(), help_text="Card points captured so far, by team."
    )
    turn = serializers.IntegerField(
        allow_null=True, help_text="The seat to play; null when nobody is (the deal is over)."
    )
    ply = serializers.IntegerField(
        help_text="Cards played so far in the deal: send it with your move (`stale_ply` if old)."
    )
    legal = _cards("The cards you may play now: your hand on your turn, else empty.")
    over = serializers.BooleanField(help_text="The deal has ended.")
    winner = serializers.IntegerField(
        allow_null=True, help_text="The winning team once the deal is over; null: none (yet)."
    )


class DealViewOutput(SeatViewOutput, DealSummaryOutput):
    """The current deal: its public summary and your seat's view of it."""


class MatchSummaryOutput(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.UUIDField()
    players = serializers.ChoiceField(choices=[2, 4], help_text="Seats at the table.")
    format = serializers.ChoiceField(choices=MatchFormat.choices, help_text="When the match ends.")
    options = MatchOptionsSerializer()
    status = serializers.ChoiceField(choices=MatchStatus.choices)
    public = serializers.BooleanField(help_text="Everyone may watch it.")
    rated = serializers.BooleanField(help_text="Its result moves the players' ratings.")
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True, help_text="When every seat was taken.")
    finished_at = serializers.DateTimeField(allow_null=True)
    last_move_at = serializers.DateTimeField(
        allow_null=True, help_text="When the last card of the match was played; null: none yet."
    )
    seats = SeatOutput(many=True)
    deals_won = serializers.ListField(
        child=serializers.IntegerField(), help_text="Deals won by team 0 and team 1."
    )
    winner = serializers.IntegerField(
        allow_null=True, help_text="The winning team; null while playing, or for a draw."
    )
    end_reason = serializers.ChoiceField(
        choices=EndReason.choices,
        allow_null=True,
        help_text="Why the match ended; null: it has not.",
    )
    time_control = TimeControlField(
        allow_null=True, help_text='`{"per_move_seconds": N}`, `{"per_move_hours": N}` or null.'
    )
    on_timeout = serializers.ChoiceField(
        choices=["bot", "forfeit"], help_text="What a timeout does: the bot plays, or forfeit."
    )
    timeout_bot = serializers.CharField(help_text="The bot level that plays for an absent seat.")
    to_move = serializers.IntegerField(allow_null=True, help_text="The seat to play.")
    deadline = serializers.DateTimeField(
        allow_null=True, help_text="When the seat to move (a person) must have played."
    )
    seconds_left = serializers.IntegerField(allow_null=True, help_text="Until `deadline`.")
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="A waiting match is called off then."
    )
    rematch_of = serializers.UUIDField(
        allow_null=True, help_text="The finished match this one is a rematch of."
    )


class RatingChangeOutput(serializers.Serializer):  # type: ignore[type-arg]
    match = serializers.UUIDField()
    category = serializers.ChoiceField(choices=["1v1", "2v2"], help_text="`1v1` or `2v2`.")
    finished_at = serializers.DateTimeField()
    result = serializers.ChoiceField(choices=["win", "draw", "loss"])
    rating_before = serializers.IntegerField()
    rating_after = serializers.IntegerField()
    diff = serializers.IntegerField()
    provisional = serializers.BooleanField(help_text="The rating after is still provisional.")


class SeatRatingChangeOutput(RatingChangeOutput):
    seat = serializers.IntegerField()
    user = serializers.CharField()


RATINGS = {
    "unrated": "the match does not move ratings (not rated, or aborted)",
    "pending": "a rated match not yet finished, or finished and not rated yet (soon)",
    "applied": "`rating_changes` lists each player's change",
}


class MatchDetailOutput(MatchSummaryOutput):
    your_seat = serializers.IntegerField(allow_null=True, help_text="Null: you are not seated.")
    ratings = serializers.ChoiceField(
        choices=list(RATINGS),
        help_text="Where the rating changes are: "
        + "; ".join(f"`{k}`: {v}" for k, v in RATINGS.items())
        + ".",
    )
    rating_changes = SeatRatingChangeOutput(
        many=True, help_text="Each player's rating change once `ratings` is `applied`; else []."
    )
    deals = DealSummaryOutput(many=True, help_text="The match's deals so far, in order.")
    current_deal = DealViewOutput(
        allow_null=True, help_text="The last deal as your seat sees it; null before the start."
    )


# -- events ---------------------------------------------------------------------------


class _EventBase(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField(help_text="1, 2, ...: the same numbering for every viewer.")
    at = serializers.DateTimeField(help_text="When it happened.")


def _event(name: str, doc: str, fields: dict[str, Any]) -> type:
    attrs: dict[str, Any] = {"type": serializers.ChoiceField(choices=[name]), **fields}
    attrs["__doc__"] = doc
    camel = "".join(part.title() for part in name.split("_"))
    return type(f"{camel}Event", (_EventBase,), attrs)


def deal_event_fields() -> dict[str, tuple[str, dict[str, Any]]]:
    """The events of a deal as the rules engine tells them (``rules.deal_events``): for
    each type, its description and its fields (new instances at each call)."""
    return {
        "deal_started": (
            "A deal began.",
            {
                "dealer": serializers.IntegerField(),
                "briscola": _card(help_text="The face-up card."),
                "first_to_play": serializers.IntegerField(),
            },
        ),
        "hand_dealt": (
            "A seat's first three cards.",
            {
                "seat": serializers.IntegerField(),
                "cards": _cards("The cards; null unless you may know them.", allow_null=True),
            },
        ),
        "card_played": (
            "A card was played.",
            {
                "ply": serializers.IntegerField(help_text="0 for the deal's first card."),
                "seat": serializers.IntegerField(),
                "card": _card(),
            },
        ),
        "trick_won": (
            "A trick was completed.",
            {
                "trick": serializers.IntegerField(help_text="0 for the deal's first trick."),
                "winner": serializers.IntegerField(help_text="The seat that won it."),
                "cards": _cards("Its cards in the order played."),
                "points": serializers.IntegerField(),
            },
        ),
        "card_drawn": (
            "A seat drew from the stock.",
            {
                "seat": serializers.IntegerField(),
                "card": _card(allow_null=True, help_text="Null unless you may know it."),
                "briscola": serializers.BooleanField(help_text="It was the face-up card."),
            },
        ),
        "deal_ended": (
            "A deal was played out.",
            {
                "points": serializers.ListField(child=serializers.IntegerField()),
                "winner": serializers.IntegerField(allow_null=True, help_text="Null: drawn."),
                "drawn": serializers.BooleanField(help_text="60-60: nobody won it."),
            },
        ),
    }


def _match_event_types() -> dict[str, type]:
    deal_fields = deal_event_fields()
    for _doc, fields in deal_fields.values():
        fields["deal"] = serializers.IntegerField(help_text="The deal's id.")
    deal_fields["deal_started"][1].update(
        number=serializers.IntegerField(help_text="1 for the match's first deal."),
        commitment=serializers.CharField(help_text="SHA-256 of the deal's seed."),
    )
    deal_fields["deal_ended"][1]["seed"] = serializers.CharField(help_text="Now revealed.")
    types = {
        "match_created": (
            "The match was created.",
            {
                "players": serializers.IntegerField(),
                "format": serializers.ChoiceField(choices=MatchFormat.choices),
            },
        ),
        "match_started": ("Every seat was taken.", {"seats": SeatOutput(many=True)}),
        **deal_fields,
        "deal_abandoned": (
            "The match ended during this deal.",
            {"deal": serializers.IntegerField(), "seed": serializers.CharField()},
        ),
        "match_ended": (
            "The match finished or was aborted.",
            {
                "status": serializers.ChoiceField(choices=MatchStatus.choices),
                "reason": serializers.ChoiceField(choices=EndReason.choices, allow_null=True),
                "winner": serializers.IntegerField(allow_null=True),
                "deals_won": serializers.ListField(child=serializers.IntegerField()),
            },
        ),
    }
    types.update(clock_event_fields())
    return {name: _event(name, doc, fields) for name, (doc, fields) in types.items()}


def clock_event_fields() -> dict[str, tuple[str, dict[str, Any]]]:
    """The match's own events (``MatchEventKind``, recorded by games.clocks.services), as
    the event log answers them: each with its data, and ``deal``/``ply`` when it happened
    during a deal (before the card at ``ply``)."""

    def placed() -> dict[str, Any]:
        return {
            "deal": serializers.IntegerField(
                required=False, help_text="The deal it happened in; absent outside a deal."
            ),
            "ply": serializers.IntegerField(
                required=False, help_text="It happened before the card at this ply."
            ),
        }

    def seat() -> serializers.IntegerField:
        return serializers.IntegerField(help_text="The seat's number.")

    fields: dict[str, tuple[str, dict[str, Any]]] = {
        MatchEventKind.SEAT_TIMED_OUT: (
            "A seat's deadline passed.",
            {
                "seat": seat(),
                "action": serializers.ChoiceField(
                    choices=["abort", "forfeit", "bot"],
                    help_text="`abort`: the match was called off (no card played yet); "
                    "`forfeit`: that side lost; `bot`: the timeout bot played the card.",
                ),
                **placed(),
            },
        ),
        MatchEventKind.SEAT_TAKEN_BY_BOT: (
            "After timeouts in a row, the timeout bot holds the seat until its person returns.",
            {
                "seat": seat(),
                "bot": serializers.CharField(help_text="The timeout bot's level."),
                **placed(),
            },
        ),
        MatchEventKind.SEAT_RETURNED: (
            "The person of a seat marked away plays it again.",
            {
                "seat": seat(),
                "by": serializers.ChoiceField(
                    choices=["move", "return"],
                    help_text="`move`: they played a card; `return`: `POST .../return`.",
                ),
                **placed(),
            },
        ),
        MatchEventKind.INVITATION_DECLINED: (
            "An invited person declined: the match was called off.",
            {
                "seat": seat(),
                "user": serializers.CharField(help_text="Who declined."),
                "reason": serializers.CharField(
                    allow_blank=True, help_text="Their reason; empty if none was given."
                ),
            },
        ),
        MatchEventKind.SEAT_LEFT: (
            "A person left the waiting match: the seat is free again.",
            {"seat": seat(), "user": serializers.CharField(help_text="Who left.")},
        ),
        MatchEventKind.MATCH_EXPIRED: ("Nobody joined in time: the match was called off.", {}),
        MatchEventKind.REMATCH_PROPOSED: (
            "A rematch of this match was proposed.",
            {
                "match": serializers.UUIDField(help_text="The rematch's id."),
                "by": serializers.CharField(help_text="Who proposed it."),
            },
        ),
    }
    assert set(fields) == set(MatchEventKind.values), "every event kind has its schema"
    return {str(name): value for name, value in fields.items()}


EVENT_TYPES = _match_event_types()

EventOutput = PolymorphicProxySerializer(
    component_name="Event",
    serializers=EVENT_TYPES,
    resource_type_field_name="type",
    many=True,
)


class EventsOutput(serializers.Serializer):  # type: ignore[type-arg]
    last_id = serializers.IntegerField(help_text="The last event's id: send it as `after`.")
    events = EventOutput


# -- a deal's record --------------------------------------------------------------------


class RecordResultOutput(serializers.Serializer):  # type: ignore[type-arg]
    points = serializers.ListField(child=serializers.IntegerField())
    winner = serializers.IntegerField(allow_null=True)


class DealRecordBody(serializers.Serializer):  # type: ignore[type-arg]
    """A `briscola-deal/1` record: what `python -m games.rules verify` checks offline."""

    format = serializers.ChoiceField(choices=[rules.RECORD_FORMAT])
    players = serializers.IntegerField()
    dealer = serializers.IntegerField()
    seed = serializers.CharField(required=False)
    commitment = serializers.CharField(required=False)
    deck = _cards('The 40 cards in dealing order (docs/rules.md, "Canonical deck order").')
    moves = _cards("The cards played, in order.")
    result = RecordResultOutput(required=False)


class RecordTrickOutput(serializers.Serializer):  # type: ignore[type-arg]
    leader = serializers.IntegerField()
    cards = _cards("In the order played.")
    winner = serializers.IntegerField()
    points = serializers.IntegerField()


DRAWS = "`[seat, card]` pairs in the order drawn."


# A card code as a pattern: a rank, then a suit (games.rules.cards).
CARD_PATTERN = f"^[{''.join(rules.RANKS)}][{''.join(rules.SUITS)}]$"

# One draw is sent as the pair `[seat, card]` (games.rules: the replay and the full view).
# OpenAPI 3.0.3 has no tuples (an array's `items` is one schema), so the pair is typed as
# exactly as it can say: two items, each the seat (an integer 0..3) or a card code.
DRAW = schema_component(
    "Draw",
    {
        "type": "array",
        "description": (
            "One draw, the pair `[seat, card]`: first the seat that drew (an integer, "
            "0..players-1), then the card it drew (a card code, e.g. `Ad`)."
        ),
        "items": {
            "oneOf": [
                {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 3,
                    "description": "First item: the seat that drew.",
                },
                {
                    "type": "string",
                    "pattern": CARD_PATTERN,
                    "description": "Second item: the card drawn, a card code.",
                },
            ]
        },
        "minItems": 2,
        "maxItems": 2,
        "example": [1, "Ad"],
    },
)


@extend_schema_field(DRAW)
class DrawField(serializers.JSONField):
    """One draw: ``[seat, card]``."""


def draws_field(help_text: str = DRAWS, **kwargs: Any) -> serializers.ListField:  # type: ignore[type-arg]
    return serializers.ListField(child=DrawField(), help_text=help_text, **kwargs)


class DealRecordOutput(DealSummaryOutput):
    match = serializers.UUIDField()
    record = DealRecordBody(help_text=f"The `{rules.RECORD_FORMAT}` record.")
    initial_hands = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Each seat's first three cards.",
    )
    tricks = RecordTrickOutput(many=True)
    draws = draws_field()
    final_points = serializers.ListField(child=serializers.IntegerField())
    complete = serializers.BooleanField(help_text="Every card was played.")
