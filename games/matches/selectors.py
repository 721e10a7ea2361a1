"""Reads: a deal's state by replay, and everything a viewer may see of matches and deals.

Secrecy is decided by :mod:`games.rules.views`; this module only decides *who* the
viewer is (a seat, a spectator, an administrator) and what they may ask for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Exists, Max, OuterRef, Q, QuerySet, Subquery
from django.utils.crypto import salted_hmac

from accounts.models import RatingChange, User
from accounts.ratings.selectors import rating_change_json, rating_changes_by_match
from games import rules
from games.bots import LEVELS as BOT_LOGIC
from games.clocks.selectors import clock_summary, seconds_left
from games.errors import (
    DealNotFoundError,
    DealNotOverError,
    MatchNotFoundError,
    MatchPrivateError,
)
from games.models import Deal, DealStatus, Match, MatchEvent, MatchStatus, Move, Seat

JSON = dict[str, Any]


@lru_cache(maxsize=4096)
def deck_for_seed(seed: str) -> tuple[rules.Card, ...]:
    return rules.shuffled_deck(seed)


def deal_moves(deal: Deal) -> list[str]:
    """The deal's move log: card codes in play order."""
    return list(Move.objects.filter(deal=deal).order_by("ply").values_list("card", flat=True))


def deal_state(deal: Deal, *, moves: list[str] | None = None) -> rules.Deal:
    """The rules engine's replay of the deal's seed and move log."""
    if moves is None:
        moves = deal_moves(deal)
    return rules.replay_moves(deal.match.players, deal.dealer, deck_for_seed(deal.seed), moves)


def bot_levels_seatable() -> list[str]:
    """The bot levels a match may seat: those of settings.BOT_LEVELS that games.bots knows."""
    return [level for level in settings.BOT_LEVELS if level in BOT_LOGIC]


def match_get(*, match_id: Any, for_update: bool = False) -> Match:
    """The match, or MatchNotFoundError; ``for_update`` takes its row lock (in a transaction).

    The lock is FOR UPDATE OF the match only: a plain FOR UPDATE would lock the joined
    creator's account row too, and two users joining each other's matches would deadlock
    on the seats' foreign-key checks (tests/integration/test_pg_races.py).
    """
    queryset = Match.objects.select_related("created_by")
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    try:
        return queryset.get(id=match_id)
    except (Match.DoesNotExist, ValueError, ValidationError):  # not a UUID: no such match
        raise MatchNotFoundError() from None


def deal_get(*, deal_id: Any, viewer: Any = None) -> Deal:
    """The deal, or DealNotFoundError; ``deal_id`` as a URL gives it (any text: ``abc`` or
    ``-1`` names no deal, as a number of no deal does).

    With a ``viewer`` (a user, or Django's anonymous one), a deal that viewer may not see at
    all is not found either, and found so in the same single query as a missing id: deal
    ids are sequential, and a private deal must not be told from a missing one by its
    answer, nor by the time the answer takes (reading the match's seats to find out, one
    more query, took longer). "At all": a public match's, a staff member's, or one where the
    viewer holds a seat (joined or invited); what of the deal each viewer then sees is the
    callers' to say, and their checks stay (this one only cuts the hopeless reads short)."""
    text = str(deal_id)
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise DealNotFoundError()
    deals = Deal.objects.select_related("match").filter(id=int(text))
    if viewer is not None and not is_admin(viewer):
        if viewer.is_authenticated:
            seated = Seat.objects.filter(match=OuterRef("match"), user=viewer.pk)
            deals = deals.filter(Q(match__public=True) | Exists(seated))
        else:
            deals = deals.filter(match__public=True)
    found = deals.first()
    if found is None:
        raise DealNotFoundError()
    return found


def match_seats(match: Match) -> list[Seat]:
    return list(match.seats.select_related("user").order_by("number"))


def seat_of_user(seats: list[Seat], user: User) -> Seat | None:
    for seat in seats:
        if seat.user_id == user.pk and seat.joined_at is not None:
            return seat
    return None


ADMIN_PERMISSION = "games.view_deal"
"""What makes a staff member an administrator of the games: the permission to view deals
in the admin (a superuser has every permission)."""


def is_admin(user: User) -> bool:
    """Administrators may see every deal, at any time (see :func:`staff_powers`): staff
    who may view deals in the admin (:data:`ADMIN_PERMISSION`). A staff member without it
    (made staff for another part of the admin, such as the groups) is a player like any
    other: the API showed such an account every live hand and seed that the admin itself
    refused to show it (an outside audit)."""
    return bool(user.is_authenticated and user.is_staff and user.has_perm(ADMIN_PERMISSION))


def staff_powers(user: User, seats: Sequence[Seat]) -> bool:
    """Whether ``user`` acts as an administrator in the match of ``seats``: staff, and
    holding no seat in it (joined or invited). A staff member who plays sees what their
    seat sees, like anyone at the table."""
    return is_admin(user) and not any(seat.user_id == user.pk for seat in seats)


def match_visible_to(match: Match, seats: list[Seat], user: User) -> bool:
    """Players, invitees, admins; anyone for a public match or one with an open seat."""
    return _visible(match.public, match.status, [s.user_id for s in seats], user)


def _visible(public: bool, status: str, seat_users: Sequence[int | None], user: User) -> bool:
    if public or is_admin(user):
        return True
    if any(user_id == user.pk for user_id in seat_users):
        return True
    return status == MatchStatus.WAITING and any(user_id is None for user_id in seat_users)


def matches_visible_to(user: User) -> QuerySet[Match]:
    open_seat = Seat.objects.filter(match=OuterRef("pk"), user__isnull=True)
    mine = Seat.objects.filter(match=OuterRef("pk"), user=user)
    queryset = Match.objects.annotate(has_open_seat=Exists(open_seat), is_mine=Exists(mine))
    if is_admin(user):
        return queryset
    return queryset.filter(
        Q(public=True) | Q(is_mine=True) | Q(status=MatchStatus.WAITING, has_open_seat=True)
    )


def matches_list(
    *, user: User, status: str | None = None, mine: bool = False, open: bool = False
) -> QuerySet[Match]:
    queryset = matches_visible_to(user)
    if status:
        queryset = queryset.filter(status=status)
    if mine:
        queryset = queryset.filter(is_mine=True)
    if open:  # seats anyone may take, and the seats the user is invited to
        invited = Seat.objects.filter(match=OuterRef("pk"), user=user, joined_at__isnull=True)
        queryset = queryset.annotate(is_invited=Exists(invited)).filter(
            Q(has_open_seat=True) | Q(is_invited=True), status=MatchStatus.WAITING
        )
    return (
        queryset.select_related("created_by")
        .annotate(last_move_at=last_move_at_subquery())
        .prefetch_related("seats__user")
        .order_by("-created_at", "id")
    )


def seat_json(seat: Seat) -> JSON:
    user = seat.user
    return {
        "seat": seat.number,
        "team": seat.team,
        "user": user.username if user else None,
        "is_bot": bool(user and user.plays_as_bot),
        "bot_level": user.bot_level if user and user.is_bot else None,
        "joined": seat.joined_at is not None,
        "away": seat.away,
        "bot_holds": seat.bot_holds,
    }


_seat_json = seat_json


def deal_summary(deal: Deal) -> JSON:
    over = deal.status != DealStatus.ACTIVE
    return {
        "id": deal.pk,
        "number": deal.number,
        "dealer": deal.dealer,
        "status": deal.status,
        "commitment": deal.commitment,
        "seed": deal.seed if over else None,
        "points": [deal.points_team0, deal.points_team1] if over else None,
        "winner": deal.winner_team,
    }


def last_move_at_subquery() -> Subquery:
    """The time of a match's last move, for ``.annotate(last_move_at=...)`` on matches."""
    moves = Move.objects.filter(deal__match=OuterRef("pk")).order_by("-created_at")
    return Subquery(moves.values("created_at")[:1])


def _last_move_at(match: Match) -> Any:
    if hasattr(match, "last_move_at"):  # annotated by the list's query
        return match.last_move_at
    if match.status == MatchStatus.WAITING:
        return None
    return Move.objects.filter(deal__match=match).aggregate(at=Max("created_at"))["at"]


def match_summary(match: Match, seats: list[Seat]) -> JSON:
    return {
        "id": str(match.id),
        "players": match.players,
        "format": match.format,
        "options": {"partners_last_hand": match.partners_last_hand},
        "status": match.status,
        "public": match.public,
        "rated": match.rated,
        "created_by": match.created_by.username,
        "created_at": match.created_at,
        "started_at": match.started_at,
        "finished_at": match.finished_at,
        "last_move_at": _last_move_at(match),
        "seats": [_seat_json(s) for s in seats],
        "deals_won": list(match.deals_won),
        "winner": match.winner_team,
        "end_reason": match.end_reason or None,
        **clock_summary(match),
        "seconds_left": seconds_left(match.deadline),
    }


@lru_cache(maxsize=1024)
def _replayed(players: int, dealer: int, seed: str, moves: tuple[str, ...]) -> rules.Deal:
    return rules.replay_moves(players, dealer, deck_for_seed(seed), moves)


@dataclass(frozen=True)
class CurrentDeal:
    """A match's last deal as its details need it: the public summary, and what replays it
    (the seed stays on the server: views are made from the replayed state)."""

    summary: JSON
    players: int
    dealer: int
    seed: str
    moves: tuple[str, ...]
    abandoned: bool
    partners_last_hand: bool

    def state(self) -> rules.Deal:
        """The rules engine's replay of the deal: the caller's own, to play on."""
        return rules.replay_moves(self.players, self.dealer, deck_for_seed(self.seed), self.moves)

    def replayed(self) -> rules.Deal:
        """The same replay, shared by every view of this very position in the process (a
        move's viewers, each stream's event): to read, never to play on."""
        return _replayed(self.players, self.dealer, self.seed, self.moves)

    def view(self, seat: int | None) -> JSON:
        """The deal as ``seat`` (None: a spectator) may see it, with its public facts."""
        state = self.replayed()
        if seat is None:
            view = rules.spectator_view(state)
        else:
            view = rules.seat_view(state, seat, partners_last_hand=self.partners_last_hand)
        data = {**self.summary, **view.to_dict()}
        if self.abandoned:  # the match ended mid-deal: nobody is to play
            data["turn"] = None
            data["legal"] = []
        return data


@dataclass(frozen=True)
class MatchSnapshot:
    """A match at one version, as every viewer's detail is made from it.

    Built from what one transaction read (:func:`match_snapshot`); a move keeps the one it
    leaves behind in the cache (games.matches.snapshots), so that the next reads of that
    version, by every viewer, need no query beyond the version's own.
    """

    match_id: str
    summary: JSON
    public: bool
    status: str
    seats: tuple[tuple[int, int | None, bool], ...]  # (number, user id, joined), in order
    rating_changes: list[JSON]
    deals: list[JSON]
    current: CurrentDeal | None
    events: int = 0  # the match's clock events (games.clocks): timeouts, returns, ...

    @property
    def version(self) -> tuple[Any, ...]:
        """What the ``ETag`` is made of: the same values as :func:`match_version` reads,
        so the tag sent with a detail is always that of exactly the detail sent."""
        return (
            str(self.status),
            sum(1 for _, _, joined in self.seats if joined),
            len(self.deals),
            len(self.current.moves) if self.current else 0,
            len(self.rating_changes),
            self.events,
        )

    def joined_seat_of(self, user_id: Any) -> int | None:
        """The seat that user ``user_id`` has joined, if any."""
        return next((n for n, uid, joined in self.seats if joined and uid == user_id), None)

    def detail_for(self, user: User) -> JSON:
        """The match and its current deal as ``user`` may see them."""
        if not _visible(self.public, self.status, [uid for _, uid, _ in self.seats], user):
            raise MatchPrivateError()
        seat = self.joined_seat_of(user.pk)
        data = dict(self.summary)
        data["your_seat"] = seat
        data["ratings"] = ratings_state(self.summary, self.rating_changes)
        data["rating_changes"] = self.rating_changes
        data["deals"] = self.deals
        data["current_deal"] = self.current.view(seat) if self.current else None
        data["seconds_left"] = seconds_left(data.get("deadline"))
        return data


@contextmanager
def rows_of_one_moment() -> Iterator[None]:
    """Reads (a match's version, its row, seats, deals and moves) that all see the rows as
    they were at one moment. Out of a transaction each statement sees what was committed
    when it began, so a move committed between two of them mixed the states: the CI mimic
    under load caught a stream's snapshot with the bot's card (the person's turn) but the
    match's row of before it (the bot's turn: no deadline), and the table, taking the
    person's turn without a deadline for the timeout bot's, waited for ever. PostgreSQL:
    one REPEATABLE READ transaction; SQLite's read transaction is one moment already.
    Inside a transaction (a write's, a test's) the reads are that transaction's."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def match_snapshot(
    *,
    match: Match,
    seats: list[Seat] | None = None,
    deals: list[Deal] | None = None,
    states: dict[int, rules.Deal] | None = None,
) -> MatchSnapshot:
    """The match's snapshot. ``seats`` (in seat order), ``deals`` (in order) and ``states``
    (replayed deals by id) are what the caller read already, in the same transaction as
    ``match`` (a move: services.MovePlayed); whatever is missing is read here."""
    if seats is None:
        seats = match_seats(match)
    if deals is None:
        deals = list(match.deals.order_by("number"))
    current = None
    if deals:
        last = deals[-1]
        state = (states or {}).get(last.pk)
        moves = [card.code for card in state.moves] if state is not None else deal_moves(last)
        current = CurrentDeal(
            summary=deal_summary(last),
            players=match.players,
            dealer=last.dealer,
            seed=last.seed,
            moves=tuple(moves),
            abandoned=last.status == DealStatus.ABANDONED,
            partners_last_hand=match.partners_last_hand,
        )
    return MatchSnapshot(
        match_id=str(match.pk),
        summary=match_summary(match, seats),
        public=match.public,
        status=match.status,
        seats=tuple((s.number, s.user_id, s.joined_at is not None) for s in seats),
        rating_changes=match_rating_changes(match, seats),
        deals=[deal_summary(d) for d in deals],
        current=current,
        events=MatchEvent.objects.filter(match=match).count(),
    )


def match_snapshot_for_user(*, match: Match, user: User) -> MatchSnapshot:
    """The match's snapshot, read once ``user`` is found to be allowed to see the match
    (else MatchPrivateError, before the deals are read)."""
    seats = match_seats(match)
    if not match_visible_to(match, seats, user):
        raise MatchPrivateError()
    return match_snapshot(match=match, seats=seats)


def match_detail_for_user(*, match: Match, user: User) -> JSON:
    """The match and its current deal as ``user`` may see them."""
    return match_snapshot_for_user(match=match, user=user).detail_for(user)


# A match's version: what can change in its detail changes one of these (see match_version).
_VERSION_SQL = """
SELECT m.status,
  (SELECT COUNT(*) FROM {seat} s WHERE s.match_id = m.id AND s.joined_at IS NOT NULL),
  (SELECT COUNT(*) FROM {deal} d WHERE d.match_id = m.id),
  (SELECT COUNT(*) FROM {move} mv WHERE mv.deal_id =
     (SELECT d.id FROM {deal} d WHERE d.match_id = m.id ORDER BY d.number DESC LIMIT 1)),
  (SELECT COUNT(*) FROM {rating_change} rc WHERE rc.match_id = m.id),
  (SELECT COUNT(*) FROM {event} e WHERE e.match_id = m.id)
FROM {match} m WHERE m.id = %s
"""


def _match_key(match_id: Any) -> tuple[Any, Any] | None:
    """The match id as a UUID and as the database takes it; None when it is not one."""
    try:
        pk = Match._meta.pk.to_python(match_id)  # type: ignore[union-attr]
        return pk, Match._meta.pk.get_db_prep_value(pk, connection)  # type: ignore[union-attr]
    except ValidationError:  # not a UUID
        return None


def match_version(*, match_id: Any) -> tuple[Any, tuple[Any, ...]] | None:
    """The match's primary key and version, from one query; None when there is no match.

    What can change in a detail changes one of: the match's status, how many seats are
    taken, how many deals were dealt, how many cards the last deal has seen, how many
    rating changes were recorded for it. (Plain SQL: the ORM took longer to compile these
    subqueries than the database took to run them.)
    """
    found = _match_key(match_id)
    if found is None:
        return None
    pk, key = found
    version = _version_of(key)
    return None if version is None else (pk, version)


def match_lock_versioned(*, match_id: Any) -> tuple[Match, tuple[Any, ...]]:
    """The match, its row locked (in a transaction), and its version as of the lock, for a
    move (services.move_play). MatchNotFoundError when there is none. Its ``created_by``
    is read when first used.

    Two statements, not one: a ``SELECT ... FOR UPDATE`` that waited for the lock sees the
    locked row as the other transaction left it, but its subqueries see the database as
    it was when the statement began (PostgreSQL, READ COMMITTED), before what it waited
    for; the version is read by the next statement, which sees it all.
    """
    found = _match_key(match_id)
    if found is None:
        raise MatchNotFoundError()
    key = found[1]
    match = next(iter(Match.objects.raw(_lock_sql(), [key])), None)
    if connection.vendor != "postgresql":
        version = _version_of(key)
    elif (row := _version_of(key, _locked_version_sql())) is not None:
        # The clock once the lock is held (games.clocks.services.turn_start).
        *values, locked_at = row
        version = tuple(values)
        if match is not None:
            match.locked_at = locked_at  # type: ignore[attr-defined]
    else:
        version = None
    if match is None or version is None:
        raise MatchNotFoundError()
    return match, version


def _version_of(key: Any, sql: str | None = None) -> tuple[Any, ...] | None:
    with connection.cursor() as cursor:
        cursor.execute(sql or _version_sql(), [key])
        row = cursor.fetchone()
    return None if row is None else tuple(row)


def match_detail_etag(*, pk: Any, version: Sequence[Any], user: User) -> str:
    """The ETag of ``user``'s match detail at ``version`` (:func:`match_version`, or
    ``MatchSnapshot.version``, the same values read off a snapshot): an HMAC of the
    version and of the viewer (each viewer sees another detail), so it can be
    neither forged nor shared: a client that sends it back in ``If-None-Match`` gets 304
    only while nothing changed, and only if it is the viewer it was made for."""
    return _etag(pk, user, version)


def _etag(pk: Any, user: User, version: Sequence[Any]) -> str:
    viewer = user.pk if user.is_authenticated else "-"
    value = f"{pk}|{viewer}|{'|'.join(str(v) for v in version)}"
    digest = salted_hmac("games.match_detail_etag", value, algorithm="sha256").hexdigest()
    return f'W/"{digest[:32]}"'


@lru_cache(maxsize=1)
def _version_sql() -> str:
    return _VERSION_SQL.format(
        seat=Seat._meta.db_table,
        deal=Deal._meta.db_table,
        move=Move._meta.db_table,
        rating_change=RatingChange._meta.db_table,
        event=MatchEvent._meta.db_table,
        match=Match._meta.db_table,
    )


@lru_cache(maxsize=1)
def _locked_version_sql() -> str:
    """The version and, last, PostgreSQL's clock as this statement begins: after the lock
    statement, so once the lock is held."""
    version = _version_sql()
    at = version.rindex("\nFROM ")
    return f"{version[:at]},\n  STATEMENT_TIMESTAMP(){version[at:]}"


@lru_cache(maxsize=1)
def _lock_sql() -> str:
    # SQLite locks the whole database on write and has no row locks to take.
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    # db_now: the database's clock as the lock is asked for, for the match's deadline
    # (games.clocks), so that no worker's or web server's clock decides one: a card is in
    # time if it came before the deadline, however long it then waited for the lock.
    # PostgreSQL: the statement's start, as Django's Now() reads it (CURRENT_TIMESTAMP
    # would be the transaction's); SQLite: its CURRENT_TIMESTAMP (games.clocks.db_now).
    now = "STATEMENT_TIMESTAMP()" if connection.vendor == "postgresql" else "CURRENT_TIMESTAMP"
    return f"SELECT *, {now} AS db_now FROM {Match._meta.db_table} WHERE id = %s{lock}"


def ratings_state(summary: JSON, rating_changes: list[JSON]) -> str:
    """``unrated``, ``pending`` or ``applied``: where a match's rating changes are."""
    if not summary["rated"] or summary["status"] == MatchStatus.ABORTED:
        return "unrated"
    return "applied" if rating_changes else "pending"


def match_rating_changes(match: Match, seats: list[Seat]) -> list[JSON]:
    """Each seat's rating change, once a finished rated match has been rated (else [])."""
    if not match.rated or match.status != MatchStatus.FINISHED:
        return []
    changes = rating_changes_by_match([match.pk]).get(match.pk, {})
    out = []
    for seat in seats:
        change = changes.get(seat.user_id) if seat.user_id is not None else None
        if change is None or seat.user is None:
            continue
        out.append({"seat": seat.number, "user": seat.user.username, **rating_change_json(change)})
    return out


def match_events_for_user(*, match: Match, user: User, after: int = 0) -> JSON:
    """Everything that happened in the match after event ``after``, as ``user`` may know it.

    Events are numbered from 1 in the order they happened; the numbering is the same for
    every viewer, so a client asks for ``after=<the last id it saw>``.
    """
    seats = match_seats(match)
    if not match_visible_to(match, seats, user):
        raise MatchPrivateError()
    seat = seat_of_user(seats, user)
    viewer = seat.number if seat else None
    events: list[JSON] = [
        {
            "type": "match_created",
            "at": match.created_at,
            "players": match.players,
            "format": match.format,
        }
    ]
    # The clock's events (games.clocks) are placed where they happened: before the first
    # deal, at a turn of a deal (before the card played at that ply), after the match.
    clock = list(MatchEvent.objects.filter(match=match).order_by("id"))
    events += [_clock_event(e) for e in clock if e.deal is None and not e.after_end]
    if match.started_at is not None:
        events.append(
            {
                "type": "match_started",
                "at": match.started_at,
                "seats": [_seat_json(s) for s in seats],
            }
        )
    deals = list(match.deals.order_by("number"))
    # When each card was played: a card's event, and the trick, draws and end it caused.
    played_at: dict[tuple[int, int], Any] = {
        (deal_id, ply): at
        for deal_id, ply, at in Move.objects.filter(deal__match=match).values_list(
            "deal_id", "ply", "created_at"
        )
    }
    for deal in deals:
        deal.match = match
        state = deal_state(deal)
        at_turn = [e for e in clock if e.deal == deal.pk]
        at = deal.started_at
        for event in rules.deal_events(state, viewer):
            if event["type"] == "card_played":
                at = played_at.get((deal.pk, event["ply"]), at)
                while at_turn and (at_turn[0].ply or 0) <= event["ply"]:
                    events.append(_clock_event(at_turn.pop(0)))
            if event["type"] == "deal_started":
                event = {**event, "number": deal.number, "commitment": deal.commitment}
            if event["type"] == "deal_ended":
                event = {**event, "seed": deal.seed}
            events.append({**event, "at": at, "deal": deal.pk})
        events += [_clock_event(e) for e in at_turn]
        if deal.status == DealStatus.ABANDONED:
            events.append(
                {
                    "type": "deal_abandoned",
                    "at": deal.finished_at or match.finished_at or at,
                    "deal": deal.pk,
                    "seed": deal.seed,
                }
            )
    if match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED):
        events.append(
            {
                "type": "match_ended",
                "at": match.finished_at or match.created_at,
                "status": match.status,
                "reason": match.end_reason or None,
                "winner": match.winner_team,
                "deals_won": list(match.deals_won),
            }
        )
    events += [_clock_event(e) for e in clock if e.deal is None and e.after_end]
    numbered = [{"id": i, **e} for i, e in enumerate(events, start=1)]
    return {"last_id": len(numbered), "events": numbered[after:]}


def _clock_event(event: MatchEvent) -> JSON:
    placed = {"deal": event.deal, "ply": event.ply} if event.deal is not None else {}
    return {"type": event.kind, **event.data, **placed, "at": event.created_at}


def deal_record_for_user(*, deal: Deal, user: User) -> JSON:
    """A deal's full record: once it is over, to its players (to all if the match is
    public); at any time to administrators who do not play in the match."""
    match = deal.match
    seats = match_seats(match)
    admin = staff_powers(user, seats)
    is_player = seat_of_user(seats, user) is not None
    if not (admin or is_player or match.public):
        raise MatchPrivateError()
    if deal.status == DealStatus.ACTIVE and not admin:
        raise DealNotOverError()
    state = deal_state(deal)
    record = rules.DealRecord.from_deal(state, seed=deal.seed)
    full = rules.full_view(state, before_end=True)
    replay = rules.Replay(state, complete=state.is_over).to_dict()
    return {
        **deal_summary(deal),
        "seed": deal.seed,
        "match": str(match.id),
        "record": record.to_dict(),
        "initial_hands": full.to_dict()["initial_hands"],
        "tricks": replay["tricks"],
        "draws": replay["draws"],
        "final_points": replay["points"],
        "complete": replay["complete"],
    }
