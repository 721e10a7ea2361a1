"""The JSON shapes the API answers, as TypedDicts (see the service's /api/schema/).

Only the fields a client usually reads are listed; the dicts hold every field the
server sent."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

MatchStatus = Literal["waiting", "active", "finished", "aborted"]
MatchFormat = Literal["single", "first_to_2", "first_to_3"]
Scope = Literal["read", "play"]


class Seat(TypedDict):
    seat: int
    team: int
    user: str | None
    is_bot: bool
    bot_level: str | None
    joined: bool


class TableCard(TypedDict):
    seat: int
    card: str


class Trick(TypedDict):
    leader: int
    cards: list[str]
    seats: list[int]
    winner: int
    points: int


class DealSummary(TypedDict):
    id: int
    number: int
    dealer: int
    status: Literal["active", "finished", "abandoned"]
    commitment: str
    seed: str | None
    points: list[int] | None
    winner: int | None


class DealView(DealSummary):
    """The current deal as your seat sees it."""

    players: int
    seat: int | None
    team: int | None
    hand: list[str]
    partner_hand: list[str] | None
    hand_sizes: list[int]
    briscola: str
    trump: str
    briscola_on_table: bool
    briscola_holder: int | None
    stock_count: int
    leader: int
    table: list[TableCard]
    tricks: list[Trick]
    turn: int | None
    ply: int
    legal: list[str]
    over: bool


class MatchSummary(TypedDict):
    id: str
    players: int
    format: MatchFormat
    status: MatchStatus
    public: bool
    rated: bool
    created_by: str
    created_at: str
    started_at: str | None
    finished_at: str | None
    last_move_at: str | None
    seats: list[Seat]
    deals_won: list[int]
    winner: int | None
    end_reason: Literal["played", "resigned", "aborted"] | None


class Match(MatchSummary):
    your_seat: int | None
    ratings: Literal["unrated", "pending", "applied"]
    rating_changes: list[dict[str, object]]
    deals: list[DealSummary]
    current_deal: DealView | None


class Event(TypedDict):
    id: int
    type: str
    at: str
    deal: NotRequired[int]


class Events(TypedDict):
    last_id: int
    events: list[Event]


class Account(TypedDict):
    username: str
    is_bot: bool
    bot_level: str | None
    date_joined: str


class AccessToken(TypedDict):
    id: int
    name: str
    scopes: list[Scope]
    prefix: str
    created_at: str
    last_used_at: str | None
    token: NotRequired[str]  # only in the answer that created it
