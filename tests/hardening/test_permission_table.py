"""Who gets what: every endpoint, every role, every phase of a match, as one table.

Each row is one request: an endpoint (its URL template and method), the phase the match
is in, the role asking, and the exact answer expected: the status, and for a 4xx of the
API the error ``code`` in the one JSON shape {code, message, details}. Each row is its
own test, its id reading like ``GET /api/v1/matches/{match}/events [active] stranger ->
403 match_private``; its writes are rolled back when it ends and every row first checks
that its world is exactly as built (see "The world each row runs in"), so rows cannot
interfere.

Roles:

- ``anonymous``: no credentials;
- ``stranger``: a person with an account who sits nowhere in the match;
- ``player``: the match's creator, in seat 0;
- ``opponent``: another person, invited to seat 1 (seated once the match is active);
- ``admin``: ``is_staff`` and ``is_superuser`` (games.matches.selectors.is_admin: staff);
- ``staff_player``: a staff account (``is_staff``) seated at the table, in the
  ``staff_*`` phases only (seat 1, as the opponent elsewhere): a staff member who plays
  sees what their seat sees, and staff powers apply only to matches they are not playing
  in (issue 19, item 6);
- ``bot``: a service bot account (``is_bot``, made by accounts.services.bot_account_ensure).
  It has an unusable password and no token, so it cannot sign in at all: its rows check
  that the token endpoint, the admin login and the browsable API's login refuse it and
  that its (reserved) user name cannot be registered; every other endpoint sees it as
  ``anonymous``.

Phases: ``-`` (no match needed), ``waiting`` (seat 1 reserved for the opponent),
``waiting_open`` (seat 1 open to anyone), ``active`` (mid-deal, a few moves played, seat
0 to play), ``finished`` (the single deal played out), their ``_public`` twins,
``resigned`` (the opponent resigned mid-deal: the deal is abandoned), ``aborted`` (a
waiting match with an open seat, called off by its creator), and ``staff_waiting`` /
``staff_active`` (as ``waiting`` / ``active``, with ``staff_player`` invited to or seated
in seat 1 instead of the opponent).

Write rows send a valid body (a legal card for the seat to play, a creatable match), so
that the answer is about permission, not validation. API requests carry a token;
``(session)`` rows sign in with a session cookie instead (admin, HTML pages), and
``(session, no CSRF token)`` rows check that a session-authenticated write without a CSRF
token is refused.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import transaction
from django.db.models import Count
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import bot_account_ensure
from games import rules
from games.matches.selectors import deal_state
from games.matches.services import (
    SeatSpec,
    match_abort,
    match_create,
    match_join,
    match_resign,
    move_play,
)
from games.models import Deal, Match, MatchStatus, Move
from tests.hardening.conftest import assert_clean_error

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-password-1"  # tests/conftest.py's DEFAULT_PASSWORD
PEOPLE = ("anonymous", "stranger", "player", "opponent", "admin")
ROLES = (*PEOPLE, "bot", "staff_player")
SEAT_OF = {"player": 0, "opponent": 1, "staff_player": 1}
ACTIVE_PLY = 3  # at least this many moves are played in an "active" match

# --- Expectations --------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    status: int
    code: str | None = None  # the error code of a JSON 4xx
    location: str | None = None  # a redirect's target; "{url}" is the URL asked for
    sees_match: bool | None = None  # a list: whether the phase's match is in it
    logged_in: bool | None = None  # a login form: whether the client is signed in after

    def __str__(self) -> str:
        text = f"{self.status}"
        if self.code:
            text += f" {self.code}"
        if self.sees_match is not None:
            text += " listed" if self.sees_match else " not listed"
        if self.logged_in is not None:
            text += " signed in" if self.logged_in else " not signed in"
        return text


OK = Expect(200)
CREATED = Expect(201)
NO_CONTENT = Expect(204)
LISTED = Expect(200, sees_match=True)
UNLISTED = Expect(200, sees_match=False)
NOT_ALLOWED = Expect(405, "method_not_allowed")
NOT_ACCEPTABLE = Expect(406, "not_acceptable")
SSE, NDJSON = "text/event-stream", "application/x-ndjson"
ANON = Expect(401, "not_authenticated")
BAD_CREDENTIALS = Expect(401, "invalid_credentials")
PRIVATE = Expect(403, "match_private")
# A deal (a sequential id) the viewer may not see answers as a deal that does not exist.
NO_DEAL = Expect(404, "deal_not_found")
NOT_PLAYER = Expect(403, "not_a_player")
NOT_CREATOR = Expect(403, "not_match_creator")
NOT_OVER = Expect(403, "deal_not_over")
SEAT_FORBIDDEN = Expect(403, "replay_seat_forbidden")
BEYOND_PRESENT = Expect(403, "replay_beyond_present")
EXHIBITION = Expect(403, "exhibition_admins_only")
CSRF = Expect(403, "permission_denied")
BAD_INPUT = Expect(400, "invalid_input")
NOT_JOINABLE = Expect(409, "match_not_joinable")
NOT_STARTED = Expect(409, "match_not_started")
OVER = Expect(409, "match_over")
STARTED = Expect(409, "match_started")
SEAT_TAKEN = Expect(409, "seat_unavailable")
ALREADY_SEATED = Expect(409, "already_seated")
NOT_YOUR_TURN = Expect(409, "not_your_turn")
HTML_OK = Expect(200)
HTML_FORBIDDEN = Expect(403)
HTML_NO_DEAL = Expect(404)  # the page of a deal that does not exist
HTML_NOT_ALLOWED = Expect(405)
NOT_INVITED = Expect(403, "not_invited")  # games.clocks
CANNOT_LEAVE = Expect(409, "cannot_leave")
SEAT_NOT_LEFT = Expect(409, "seat_not_left")
NOT_FINISHED = Expect(409, "match_not_finished")
TO_REPLAY_LOGIN = Expect(302, location="/play/signin/?next={url}")
TO_SIGN_IN = TO_REPLAY_LOGIN
TO_LOBBY = Expect(302, location="/play/")
SIGNED_OUT = Expect(302, location="/play/signin/", logged_in=False)
TO_ADMIN_LOGIN = Expect(302, location="/admin/login/?next={url}")

# --- Bodies: functions of the world and the role -------------------------------------------

Body = Callable[["World", str], Any] | None


def credentials(world: World, role: str) -> dict[str, str]:
    """The role's own user name and password (anonymous: an account that does not exist)."""
    user = world.users.get(role)
    return {"username": user.username if user else "nobody", "password": PASSWORD}


def registration(world: World, role: str) -> dict[str, str]:
    """A new account; the bot tries to register a bot's (reserved) user name."""
    name = world.users["bot"].username if role == "bot" else "newcomer"
    return {"username": name, "password": PASSWORD}


def token_request(world: World, role: str) -> dict[str, Any]:
    return {"name": "ci", "scopes": ["read"]}


def match_vs_bot(world: World, role: str) -> dict[str, Any]:
    return {"players": 2, "format": "single", "seats": [{"bot": "greedy"}]}


def exhibition(world: World, role: str) -> dict[str, Any]:
    return {"players": 2, "format": "single", "seats": [{"bot": "greedy"}, {"bot": "random"}]}


def legal_move(world: World, role: str) -> dict[str, Any]:
    """A move a seat could make now: the role's own card when it sits and it is not its
    turn (so the answer is not_your_turn, not card_not_in_hand), else the legal card of
    the seat to play (what a stranger would have to guess to play for someone)."""
    deal = world.deal
    if deal is None:
        return {"card": "Ad", "ply": 0}
    state = deal_state(deal)
    if state.turn is None:
        return {"card": state.moves[-1].code, "ply": 39}
    seat = SEAT_OF.get(role)
    if seat is not None and seat != state.turn:
        return {"card": state.hands[seat][0].code, "ply": state.ply}
    return {"card": state.legal_moves()[0].code, "ply": state.ply}


def nothing(world: World, role: str) -> dict[str, Any]:
    return {}


def deal_record(world: World, role: str) -> dict[str, Any]:
    return {"format": "briscola-deal/1", "players": 2, "dealer": 0, "seed": "table", "moves": []}


def admin_change_form(world: World, role: str) -> dict[str, Any]:
    return {"public": "on", "players": "2", "format": "single"}


def login_form(world: World, role: str) -> dict[str, str]:
    return {**credentials(world, role), "next": "/admin/"}


# --- The rows ------------------------------------------------------------------------------

VIAS = {
    "token": "",  # APIClient, Authorization: Token <key>
    "session": " (session)",  # django.test.Client signed in with a session cookie
    "session_no_csrf": " (session, no CSRF token)",  # APIClient enforcing CSRF checks
    "form": " (login form)",  # django.test.Client posting the role's credentials
}


@dataclass(frozen=True)
class Row:
    method: str
    url: str  # {match}, {deal}, {player}: the world's match, its latest deal, seat 0's name
    phase: str
    role: str
    expect: Expect
    body: Body = None
    via: str = "token"
    accept: str | None = None  # an Accept header

    @property
    def id(self) -> str:
        accept = f" (Accept: {self.accept})" if self.accept else ""
        via = VIAS[self.via]
        return f"{self.method} {self.url}{accept} [{self.phase}] {self.role}{via} -> {self.expect}"

    @property
    def path(self) -> str:
        return self.url.split("?")[0]


def table(
    method: str,
    url: str,
    phase: str,
    *,
    body: Body = None,
    via: str = "token",
    accept: str | None = None,
    **by_role: Expect,
) -> list[Row]:
    unknown = set(by_role) - set(ROLES)
    assert not unknown, unknown
    assert via in VIAS, via
    return [Row(method, url, phase, role, by_role[role], body, via, accept) for role in by_role]


def everyone(expect: Expect, *, anonymous: Expect = ANON) -> dict[str, Expect]:
    """The same answer for every person with an account, and ``anonymous`` otherwise."""
    return {"anonymous": anonymous, **{role: expect for role in PEOPLE[1:]}}


MATCH = "/api/v1/matches/{match}"
DEAL = "/api/v1/deals/{deal}"
PLAYER = "/api/v1/players/{player}"
ADMIN_MATCH = "/admin/games/match/{match}/change/"

ROWS: list[Row] = [
    # --- The site, the schema and the docs: open to all --------------------------------
    *table("GET", "/", "-", via="session", anonymous=Expect(302, location="/play/")),
    *table("GET", "/api/schema/", "-", anonymous=OK, stranger=OK),
    # The schema's errors are negotiated like the schema itself (YAML unless JSON is asked).
    *table(
        "POST",
        "/api/schema/",
        "-",
        accept="application/json",
        anonymous=NOT_ALLOWED,
        stranger=NOT_ALLOWED,
    ),
    *table("GET", "/api/docs/", "-", anonymous=OK, stranger=OK),
    *table("POST", "/api/docs/", "-", stranger=HTML_NOT_ALLOWED),  # an HTML page
    *table(
        "GET",
        "/api/v1/no-such-endpoint",
        "-",
        anonymous=Expect(404, "not_found"),
        stranger=Expect(404, "not_found"),
    ),
    # --- Accounts ------------------------------------------------------------------------
    # Registering needs no account (a signed-in person's credentials are ignored); bot
    # names are reserved.
    *table(
        "POST",
        "/api/v1/auth/register",
        "-",
        body=registration,
        **everyone(CREATED, anonymous=CREATED),
        bot=Expect(400, "invalid_registration"),
    ),
    *table("GET", "/api/v1/auth/register", "-", anonymous=NOT_ALLOWED),
    # A password gets the token; a bot account has no usable password: refused.
    *table(
        "POST",
        "/api/v1/auth/token",
        "-",
        body=credentials,
        **everyone(OK, anonymous=BAD_CREDENTIALS),
        bot=BAD_CREDENTIALS,
    ),
    *table("GET", "/api/v1/auth/token", "-", anonymous=NOT_ALLOWED),
    *table("POST", "/api/v1/auth/token/revoke", "-", **everyone(NO_CONTENT)),
    *table("GET", "/api/v1/auth/token/revoke", "-", anonymous=ANON, stranger=NOT_ALLOWED),
    *table("GET", "/api/v1/auth/me", "-", **everyone(OK)),
    *table("POST", "/api/v1/auth/me", "-", stranger=NOT_ALLOWED),
    # Personal access tokens: every account manages its own (with its account token).
    *table("GET", "/api/v1/auth/tokens", "-", **everyone(OK)),
    *table("POST", "/api/v1/auth/tokens", "-", body=token_request, **everyone(CREATED)),
    *table("DELETE", "/api/v1/auth/tokens/999999", "-", **everyone(Expect(404, "token_not_found"))),
    # Becoming a (third-party) bot's account: only before the account's first match (the
    # player and the opponent sit in the matches of the other phases, built alongside).
    *table(
        "POST",
        "/api/v1/auth/me/bot",
        "-",
        anonymous=ANON,
        stranger=OK,
        player=Expect(409, "bot_switch_refused"),
        opponent=Expect(409, "bot_switch_refused"),
        admin=OK,
    ),
    # The browsable API's login and the admin's login: a bot cannot sign in; the admin
    # login takes staff only.
    *table("GET", "/api-auth/login/", "-", via="session", anonymous=HTML_OK),
    *table(
        "POST",
        "/api-auth/login/",
        "-",
        via="form",
        body=credentials,
        anonymous=Expect(200, logged_in=False),
        stranger=Expect(302, logged_in=True),
        bot=Expect(200, logged_in=False),
    ),
    *table(
        "POST",
        "/admin/login/",
        "-",
        via="form",
        body=login_form,
        anonymous=Expect(200, logged_in=False),
        stranger=Expect(200, logged_in=False),
        admin=Expect(302, location="/admin/", logged_in=True),
        bot=Expect(200, logged_in=False),
    ),
    # --- Matches: the collection ---------------------------------------------------------
    # Everyone with an account lists the matches they may see: theirs, public ones, ones
    # with an open seat; administrators all.
    *table(
        "GET",
        "/api/v1/matches",
        "waiting",
        anonymous=ANON,
        stranger=UNLISTED,
        player=LISTED,
        opponent=LISTED,
        admin=LISTED,
    ),
    *table("GET", "/api/v1/matches", "waiting_open", **everyone(LISTED)),
    *table(
        "GET",
        "/api/v1/matches",
        "active",
        anonymous=ANON,
        stranger=UNLISTED,
        player=LISTED,
        opponent=LISTED,
        admin=LISTED,
    ),
    *table("GET", "/api/v1/matches", "active_public", **everyone(LISTED)),
    *table(
        "GET",
        "/api/v1/matches",
        "finished",
        anonymous=ANON,
        stranger=UNLISTED,
        player=LISTED,
        opponent=LISTED,
        admin=LISTED,
    ),
    *table("GET", "/api/v1/matches", "finished_public", **everyone(LISTED)),
    *table(
        "GET",
        "/api/v1/matches",
        "aborted",
        anonymous=ANON,
        stranger=UNLISTED,
        player=LISTED,
        opponent=UNLISTED,
        admin=LISTED,
    ),
    *table("POST", "/api/v1/matches", "-", body=match_vs_bot, **everyone(CREATED)),
    # Exhibitions (bots in every seat) are for administrators.
    *table(
        "POST",
        "/api/v1/matches",
        "-",
        body=exhibition,
        **{**everyone(EXHIBITION), "admin": CREATED},
    ),
    *table(
        "DELETE", "/api/v1/matches", "-", anonymous=ANON, stranger=NOT_ALLOWED, admin=NOT_ALLOWED
    ),
    # --- One match: what it looks like to each role --------------------------------------
    # Players, invitees and admins see it; anyone sees a public one or one with an open
    # seat.
    *table(
        "GET",
        MATCH,
        "waiting",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", MATCH, "waiting_open", **everyone(OK)),
    *table(
        "GET", MATCH, "active", anonymous=ANON, stranger=PRIVATE, player=OK, opponent=OK, admin=OK
    ),
    *table("GET", MATCH, "active_public", **everyone(OK)),
    *table(
        "GET", MATCH, "finished", anonymous=ANON, stranger=PRIVATE, player=OK, opponent=OK, admin=OK
    ),
    *table("GET", MATCH, "finished_public", **everyone(OK)),
    *table(
        "GET",
        MATCH,
        "aborted",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=PRIVATE,
        admin=OK,
    ),
    *table("GET", MATCH, "active", via="session", player=OK, stranger=PRIVATE),
    *table("PUT", MATCH, "active", body=nothing, anonymous=ANON, player=NOT_ALLOWED),
    *table("DELETE", MATCH, "active", player=NOT_ALLOWED, admin=NOT_ALLOWED),
    # Its events: the same audience as the match.
    *table(
        "GET",
        MATCH + "/events",
        "waiting",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", MATCH + "/events", "waiting_open", **everyone(OK)),
    *table(
        "GET",
        MATCH + "/events",
        "active",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", MATCH + "/events", "active_public", **everyone(OK)),
    *table(
        "GET",
        MATCH + "/events",
        "finished",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", MATCH + "/events", "finished_public", **everyone(OK)),
    *table("POST", MATCH + "/events", "active", body=nothing, player=NOT_ALLOWED),
    # Its live stream (issue 13): the same audience as the match, in both formats (served
    # by WSGI here: the events owed, then the end); errors in JSON before any stream.
    *[
        row
        for phase, accept in (
            ("waiting", SSE),
            ("active", SSE),
            ("active", NDJSON),
            ("finished", NDJSON),
        )
        for row in table(
            "GET",
            MATCH + "/stream",
            phase,
            accept=accept,
            anonymous=ANON,
            stranger=PRIVATE,
            player=OK,
            opponent=OK,
            admin=OK,
        )
    ],
    *table("GET", MATCH + "/stream", "waiting_open", accept=SSE, **everyone(OK)),
    *table("GET", MATCH + "/stream", "active_public", accept=NDJSON, **everyone(OK)),
    *table(
        "GET", MATCH + "/stream", "active", via="session", accept=SSE, player=OK, stranger=PRIVATE
    ),
    *table("GET", MATCH + "/stream", "active", accept="application/json", player=NOT_ACCEPTABLE),
    *table("POST", MATCH + "/stream", "active", body=nothing, player=NOT_ALLOWED),
    # The account stream: everyone with an account, about their own matches.
    *table("GET", "/api/v1/stream", "-", accept=SSE, **everyone(OK)),
    *table("GET", "/api/v1/stream", "-", accept=NDJSON, **everyone(OK)),
    *table("GET", "/api/v1/stream", "-", accept="application/json", stranger=NOT_ACCEPTABLE),
    *table("POST", "/api/v1/stream", "-", body=nothing, stranger=NOT_ALLOWED),
    # --- Joining: the invitee takes the reserved seat, anyone an open one ----------------
    *table(
        "POST",
        MATCH + "/join",
        "waiting",
        body=nothing,
        anonymous=ANON,
        # A stranger to a private match learns no more from a join than from a GET (the
        # re-audit read its status and seats from join's 409s).
        stranger=PRIVATE,
        player=ALREADY_SEATED,
        opponent=OK,
        admin=SEAT_TAKEN,
    ),
    *table(
        "POST",
        MATCH + "/join",
        "waiting_open",
        body=nothing,
        **{**everyone(OK), "player": ALREADY_SEATED},
    ),
    *(
        row
        for phase in ("active", "finished")
        for row in table(
            "POST",
            MATCH + "/join",
            phase,
            body=nothing,
            **{**everyone(NOT_JOINABLE), "stranger": PRIVATE},
        )
    ),
    # (an aborted match's open seat was never the opponent's: a stranger there, as GET says)
    *table(
        "POST",
        MATCH + "/join",
        "aborted",
        body=nothing,
        **{**everyone(NOT_JOINABLE), "stranger": PRIVATE, "opponent": PRIVATE},
    ),
    *table("POST", MATCH + "/join", "active_public", body=nothing, **everyone(NOT_JOINABLE)),
    *table("GET", MATCH + "/join", "waiting_open", stranger=NOT_ALLOWED),
    # --- Aborting: the creator (or an admin) calls off a waiting match --------------------
    *table(
        "POST",
        MATCH + "/abort",
        "waiting",
        anonymous=ANON,
        stranger=NOT_CREATOR,
        player=OK,
        opponent=NOT_CREATOR,
        admin=OK,
    ),
    *table(
        "POST",
        MATCH + "/abort",
        "waiting_open",
        anonymous=ANON,
        stranger=NOT_CREATOR,
        player=OK,
        opponent=NOT_CREATOR,
        admin=OK,
    ),
    *table(
        "POST",
        MATCH + "/abort",
        "active",
        anonymous=ANON,
        stranger=NOT_CREATOR,
        player=STARTED,
        opponent=NOT_CREATOR,
        admin=STARTED,
    ),
    *table(
        "POST",
        MATCH + "/abort",
        "finished",
        anonymous=ANON,
        stranger=NOT_CREATOR,
        player=OVER,
        opponent=NOT_CREATOR,
        admin=OVER,
    ),
    *table("GET", MATCH + "/abort", "waiting", player=NOT_ALLOWED),
    # --- Time limits, invitations, rematches (games.clocks, issue 14) ---------------------
    # Invitations: the invitee's own list; declining: the invitee only, while waiting.
    *table(
        "GET",
        "/api/v1/invitations",
        "waiting",
        anonymous=ANON,
        stranger=UNLISTED,
        player=UNLISTED,
        opponent=LISTED,
        admin=UNLISTED,
    ),
    *table("POST", "/api/v1/invitations", "waiting", opponent=NOT_ALLOWED),
    *table(
        "POST",
        MATCH + "/decline",
        "waiting",
        body=nothing,
        anonymous=ANON,
        stranger=NOT_INVITED,
        player=NOT_INVITED,
        opponent=OK,
        admin=NOT_INVITED,
    ),
    *table(
        "POST",
        MATCH + "/decline",
        "active",
        body=nothing,
        **everyone(NOT_INVITED),
    ),
    *table("GET", MATCH + "/decline", "waiting", opponent=NOT_ALLOWED),
    # Leaving: a seated person other than the creator, before the start.
    *table(
        "POST",
        MATCH + "/leave",
        "waiting_open",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=CANNOT_LEAVE,
        opponent=NOT_PLAYER,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/leave",
        "active",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=CANNOT_LEAVE,
        opponent=CANNOT_LEAVE,
        admin=NOT_PLAYER,
    ),
    *table("GET", MATCH + "/leave", "waiting_open", player=NOT_ALLOWED),
    # Returning: only to a seat the timeout bot took.
    *table(
        "POST",
        MATCH + "/return",
        "active",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=SEAT_NOT_LEFT,
        opponent=SEAT_NOT_LEFT,
        admin=NOT_PLAYER,
    ),
    *table("GET", MATCH + "/return", "active", player=NOT_ALLOWED),
    # Rematches: a player of a finished match.
    *table(
        "POST",
        MATCH + "/rematch",
        "active",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=NOT_FINISHED,
        opponent=NOT_FINISHED,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/rematch",
        "finished",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=CREATED,
        opponent=CREATED,
        admin=NOT_PLAYER,
    ),
    *table("GET", MATCH + "/rematch", "finished", player=NOT_ALLOWED),
    # --- Moves: only a seated player, only on their turn ---------------------------------
    *table(
        "POST",
        MATCH + "/moves",
        "waiting",
        body=legal_move,
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=NOT_STARTED,
        opponent=NOT_PLAYER,  # invited, not seated yet
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/moves",
        "waiting_open",
        body=legal_move,
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=NOT_STARTED,
        opponent=NOT_PLAYER,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/moves",
        "active",
        body=legal_move,
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=CREATED,
        opponent=NOT_YOUR_TURN,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/moves",
        "active_public",
        body=legal_move,
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=CREATED,
        opponent=NOT_YOUR_TURN,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/moves",
        "finished",
        body=legal_move,
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=OVER,
        opponent=OVER,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/moves",
        "active",
        body=legal_move,
        via="session_no_csrf",
        player=CSRF,
        stranger=CSRF,
    ),
    *table("GET", MATCH + "/moves", "active", player=NOT_ALLOWED),
    # --- Resigning: a seated player of an active match -----------------------------------
    *table(
        "POST",
        MATCH + "/resign",
        "waiting",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=NOT_STARTED,
        opponent=NOT_PLAYER,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/resign",
        "active",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=OK,
        opponent=OK,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/resign",
        "active_public",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=OK,
        opponent=OK,
        admin=NOT_PLAYER,
    ),
    *table(
        "POST",
        MATCH + "/resign",
        "finished",
        anonymous=ANON,
        stranger=NOT_PLAYER,
        player=OVER,
        opponent=OVER,
        admin=NOT_PLAYER,
    ),
    *table("GET", MATCH + "/resign", "active", player=NOT_ALLOWED),
    # --- A match's export: the deals that are over, to its seated players (anyone for a
    # public match, anonymous visitors included); admins always.
    *table(
        "GET",
        MATCH + "/export",
        "waiting",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=PRIVATE,  # invited, not seated: no deals to see anyway
        admin=OK,
    ),
    *table(
        "GET",
        MATCH + "/export",
        "active",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", MATCH + "/export", "active_public", **everyone(OK, anonymous=OK)),
    *table(
        "GET",
        MATCH + "/export",
        "finished",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", MATCH + "/export", "finished_public", **everyone(OK, anonymous=OK)),
    *table("GET", MATCH + "/export?format=text", "finished", anonymous=ANON, player=OK),
    # The text notation has its own path: the same people, the same answers.
    *table(
        "GET",
        MATCH + "/export.txt",
        "waiting",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=PRIVATE,
        admin=OK,
    ),
    *table(
        "GET",
        MATCH + "/export.txt",
        "finished",
        anonymous=ANON,
        stranger=PRIVATE,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", MATCH + "/export.txt", "finished_public", **everyone(OK, anonymous=OK)),
    *table("POST", MATCH + "/export.txt", "finished", anonymous=NOT_ALLOWED, player=NOT_ALLOWED),
    *table("POST", MATCH + "/export", "finished", anonymous=NOT_ALLOWED, player=NOT_ALLOWED),
    # --- A deal's record: once over, to its players (everyone if public); admins always --
    *table(
        "GET",
        DEAL,
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=NOT_OVER,
        opponent=NOT_OVER,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL,
        "active_public",
        # As /export and /verify (the same permissions): not over yet, for anyone.
        anonymous=NOT_OVER,
        stranger=NOT_OVER,
        player=NOT_OVER,
        opponent=NOT_OVER,
        admin=OK,
    ),
    *table(
        "GET", DEAL, "finished", anonymous=ANON, stranger=NO_DEAL, player=OK, opponent=OK, admin=OK
    ),
    # A public match's finished deals are open to all, anonymous visitors included, as
    # their /export and /verify.
    *table("GET", DEAL, "finished_public", **everyone(OK, anonymous=OK)),
    *table(
        "GET", DEAL, "resigned", anonymous=ANON, stranger=NO_DEAL, player=OK, opponent=OK, admin=OK
    ),
    *table("POST", DEAL, "finished", player=NOT_ALLOWED),
    # --- Replays: during a deal a player replays only their own seat, up to now ----------
    *table(
        "GET",
        DEAL + "/replay",
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=SEAT_FORBIDDEN,
        opponent=SEAT_FORBIDDEN,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/replay?seat=0",
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=SEAT_FORBIDDEN,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/replay?seat=1",
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=SEAT_FORBIDDEN,
        opponent=OK,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/replay?seat=0&ply=40",
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=BEYOND_PRESENT,
        opponent=SEAT_FORBIDDEN,
        admin=BAD_INPUT,  # no secret beyond the present for an admin: there is no such ply
    ),
    *table(
        "GET",
        DEAL + "/replay",
        "active_public",
        anonymous=NOT_OVER,
        stranger=NOT_OVER,
        player=SEAT_FORBIDDEN,
        opponent=SEAT_FORBIDDEN,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/replay?seat=1",
        "active_public",
        anonymous=NOT_OVER,
        stranger=NOT_OVER,
        player=SEAT_FORBIDDEN,
        opponent=OK,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/replay",
        "finished",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/replay?seat=0&ply=40",
        "finished",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", DEAL + "/replay", "finished_public", **everyone(OK, anonymous=OK)),
    *table("GET", DEAL + "/replay?seat=1", "finished_public", **everyone(OK, anonymous=OK)),
    *table(
        "GET",
        DEAL + "/replay",
        "resigned",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("POST", DEAL + "/replay", "finished", anonymous=NOT_ALLOWED, player=NOT_ALLOWED),
    # --- Verify and export: the permissions of the record, and public deals to anyone ----
    *table(
        "GET",
        DEAL + "/verify",
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=NOT_OVER,
        opponent=NOT_OVER,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/verify",
        "active_public",
        anonymous=NOT_OVER,
        stranger=NOT_OVER,
        player=NOT_OVER,
        opponent=NOT_OVER,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/verify",
        "finished",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", DEAL + "/verify", "finished_public", **everyone(OK, anonymous=OK)),
    *table(
        "GET",
        DEAL + "/verify",
        "resigned",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("POST", DEAL + "/verify", "finished", player=NOT_ALLOWED),
    *table(
        "GET",
        DEAL + "/export",
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=NOT_OVER,
        opponent=NOT_OVER,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/export",
        "active_public",
        anonymous=NOT_OVER,
        stranger=NOT_OVER,
        player=NOT_OVER,
        opponent=NOT_OVER,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/export",
        "finished",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/export?format=text",
        "finished",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", DEAL + "/export", "finished_public", **everyone(OK, anonymous=OK)),
    *table(
        "GET",
        DEAL + "/export.txt",
        "active",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=NOT_OVER,
        opponent=NOT_OVER,
        admin=OK,
    ),
    *table(
        "GET",
        DEAL + "/export.txt",
        "finished",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("GET", DEAL + "/export.txt", "finished_public", **everyone(OK, anonymous=OK)),
    *table("POST", DEAL + "/export.txt", "finished", player=NOT_ALLOWED),
    *table(
        "GET",
        DEAL + "/export",
        "resigned",
        anonymous=ANON,
        stranger=NO_DEAL,
        player=OK,
        opponent=OK,
        admin=OK,
    ),
    *table("POST", DEAL + "/export", "finished", player=NOT_ALLOWED),
    # --- Checking a record someone sends: any account ------------------------------------
    *table("POST", "/api/v1/records/check", "-", body=deal_record, **everyone(OK)),
    *table("GET", "/api/v1/records/check", "-", anonymous=ANON, stranger=NOT_ALLOWED),
    # --- Players and the leaderboard: any account ----------------------------------------
    *table("GET", PLAYER, "-", **everyone(OK)),
    *table("POST", PLAYER, "-", stranger=NOT_ALLOWED),
    *table("GET", PLAYER + "/rating-history", "-", **everyone(OK)),
    *table("POST", PLAYER + "/rating-history", "-", stranger=NOT_ALLOWED),
    # A player's matches: only those the viewer may see.
    *table(
        "GET",
        PLAYER + "/matches",
        "waiting",
        anonymous=ANON,
        stranger=UNLISTED,
        player=LISTED,
        opponent=LISTED,
        admin=LISTED,
    ),
    *table("GET", PLAYER + "/matches", "waiting_open", **everyone(LISTED)),
    *table(
        "GET",
        PLAYER + "/matches",
        "active",
        anonymous=ANON,
        stranger=UNLISTED,
        player=LISTED,
        opponent=LISTED,
        admin=LISTED,
    ),
    *table("GET", PLAYER + "/matches", "active_public", **everyone(LISTED)),
    *table(
        "GET",
        PLAYER + "/matches",
        "finished",
        anonymous=ANON,
        stranger=UNLISTED,
        player=LISTED,
        opponent=LISTED,
        admin=LISTED,
    ),
    *table("GET", PLAYER + "/matches", "finished_public", **everyone(LISTED)),
    *table("POST", PLAYER + "/matches", "-", stranger=NOT_ALLOWED),
    *table("GET", "/api/v1/leaderboard", "-", **everyone(OK)),
    *table("POST", "/api/v1/leaderboard", "-", stranger=NOT_ALLOWED),
    # --- The replay page (HTML): anonymous visitors log in first unless the deal is a
    # public match's finished deal; the API behind it decides what the page shows.
    *table(
        "GET",
        "/replay/{deal}/",
        "active",
        via="session",
        anonymous=TO_REPLAY_LOGIN,
        # The page names the deal's number, format, status and (once over) every seat's
        # user: a private match's are for its players and administrators only; anyone
        # else gets the page of a deal that does not exist (deal ids are sequential).
        stranger=HTML_NO_DEAL,
        player=HTML_OK,
        opponent=HTML_OK,
        admin=HTML_OK,
    ),
    *table(
        "GET",
        "/replay/{deal}/",
        "active_public",
        via="session",
        **everyone(HTML_OK, anonymous=TO_REPLAY_LOGIN),
    ),
    *table(
        "GET",
        "/replay/{deal}/",
        "finished",
        via="session",
        anonymous=TO_REPLAY_LOGIN,
        stranger=HTML_NO_DEAL,  # see above
        player=HTML_OK,
        opponent=HTML_OK,
        admin=HTML_OK,
    ),
    *table(
        "GET",
        "/replay/{deal}/",
        "finished_public",
        via="session",
        **everyone(HTML_OK, anonymous=OK),
    ),
    *table(
        "POST",
        "/replay/{deal}/",
        "finished_public",
        via="session",
        anonymous=HTML_NOT_ALLOWED,
        player=HTML_NOT_ALLOWED,
    ),
    # --- The play pages (HTML): shells over the API, which decides what they show --------
    *table("GET", "/play/", "-", via="session", **everyone(HTML_OK, anonymous=TO_SIGN_IN)),
    *table("POST", "/play/", "-", via="session", stranger=HTML_NOT_ALLOWED),
    # The table of a private match: 403 to a stranger, as the API's match_private (the page
    # says so); a public match's to everyone signed in.
    *table(
        "GET",
        "/play/{match}/",
        "active",
        via="session",
        **{**everyone(HTML_OK, anonymous=TO_SIGN_IN), "stranger": HTML_FORBIDDEN},
    ),
    *table(
        "GET",
        "/play/{match}/",
        "active_public",
        via="session",
        **everyone(HTML_OK, anonymous=TO_SIGN_IN),
    ),
    # The lobby's "Replay": to the first deal's replay page for whoever may see the match,
    # the site's 404 for anyone else (as the API's match list would not show it).
    *table(
        "GET",
        "/play/{match}/replay/",
        "active",
        via="session",
        anonymous=TO_SIGN_IN,
        stranger=Expect(404),
        player=Expect(302),
        opponent=Expect(302),
        admin=Expect(302),
    ),
    *table(
        "GET",
        "/play/{match}/replay/",
        "active_public",
        via="session",
        **everyone(Expect(302), anonymous=TO_SIGN_IN),
    ),
    *table("GET", "/play/signup/", "-", via="session", **everyone(TO_LOBBY, anonymous=HTML_OK)),
    *table("GET", "/play/signin/", "-", via="session", **everyone(TO_LOBBY, anonymous=HTML_OK)),
    # Signing in takes people only (a bot's account cannot), as the API's token does.
    *table(
        "POST",
        "/play/signin/",
        "-",
        via="form",
        body=credentials,
        anonymous=Expect(200, logged_in=False),
        stranger=Expect(302, location="/play/", logged_in=True),
        bot=Expect(200, logged_in=False),
    ),
    # Signing up registers through the API's own service: a bot's name is reserved.
    *table(
        "POST",
        "/play/signup/",
        "-",
        via="form",
        body=registration,
        anonymous=Expect(302, location="/play/", logged_in=True),
        bot=Expect(200, logged_in=False),
    ),
    *table(
        "GET",
        "/play/signout/",
        "-",
        via="session",
        **everyone(HTML_NOT_ALLOWED, anonymous=HTML_NOT_ALLOWED),
    ),
    *table(
        "POST",
        "/play/signout/",
        "-",
        via="session",
        **everyone(SIGNED_OUT, anonymous=SIGNED_OUT),
    ),
    # --- The admin: staff only, and read-only about games --------------------------------
    *table(
        "GET",
        "/admin/",
        "-",
        via="session",
        **{**everyone(TO_ADMIN_LOGIN, anonymous=TO_ADMIN_LOGIN), "admin": HTML_OK},
    ),
    *table(
        "GET",
        ADMIN_MATCH,
        "finished",
        via="session",
        **{**everyone(TO_ADMIN_LOGIN, anonymous=TO_ADMIN_LOGIN), "admin": HTML_OK},
    ),
    *table(
        "POST",
        ADMIN_MATCH,
        "finished",
        via="session",
        body=admin_change_form,
        anonymous=TO_ADMIN_LOGIN,
        player=TO_ADMIN_LOGIN,
        admin=HTML_FORBIDDEN,  # nothing about a game is editable
    ),
    *table(
        "GET",
        "/admin/games/deal/{deal}/change/",
        "finished",
        via="session",
        anonymous=TO_ADMIN_LOGIN,
        stranger=TO_ADMIN_LOGIN,
        admin=HTML_OK,
    ),
    *table(
        "GET",
        "/admin/accounts/user/",
        "-",
        via="session",
        anonymous=TO_ADMIN_LOGIN,
        stranger=TO_ADMIN_LOGIN,
        admin=HTML_OK,
    ),
    # --- Staff seated at a table (issue 19, item 6): their seat's view, no staff powers.
    # ``admin`` (staff, no seat) keeps them in the same match.
    *table("GET", MATCH, "staff_active", staff_player=OK, admin=OK, stranger=PRIVATE),
    *table("GET", MATCH + "/events", "staff_active", staff_player=OK, admin=OK),
    *table("GET", DEAL, "staff_active", staff_player=NOT_OVER, player=NOT_OVER, admin=OK),
    *table("GET", DEAL + "/verify", "staff_active", staff_player=NOT_OVER, admin=OK),
    *table("GET", DEAL + "/export", "staff_active", staff_player=NOT_OVER, admin=OK),
    *table("GET", MATCH + "/export", "staff_active", staff_player=OK, admin=OK),
    *table("GET", DEAL + "/replay", "staff_active", staff_player=SEAT_FORBIDDEN, admin=OK),
    *table("GET", DEAL + "/replay?seat=0", "staff_active", staff_player=SEAT_FORBIDDEN),
    *table("GET", DEAL + "/replay?seat=1", "staff_active", staff_player=OK, admin=OK),
    *table("GET", DEAL + "/replay?seat=1&ply=40", "staff_active", staff_player=BEYOND_PRESENT),
    *table(
        "POST",
        MATCH + "/moves",
        "staff_active",
        body=legal_move,
        staff_player=NOT_YOUR_TURN,
        admin=NOT_PLAYER,
        player=CREATED,
    ),
    *table("POST", MATCH + "/resign", "staff_active", staff_player=OK, admin=NOT_PLAYER),
    *table("POST", MATCH + "/abort", "staff_waiting", staff_player=NOT_CREATOR, admin=OK),
    *table("GET", MATCH, "staff_waiting", staff_player=OK, stranger=PRIVATE),
    *table("GET", "/replay/{deal}/", "staff_active", via="session", staff_player=HTML_OK),
    # The admin shows a live deal's seed only when asked, with a warning, and never to a
    # staff member seated at the table (tests/hardening/test_no_leaks.py reads the pages).
    *table(
        "GET",
        "/admin/games/deal/{deal}/change/",
        "staff_active",
        via="session",
        staff_player=HTML_OK,
        admin=HTML_OK,
    ),
    *table(
        "GET",
        "/admin/games/deal/{deal}/change/?reveal_live_deal=1",
        "staff_active",
        via="session",
        staff_player=HTML_OK,
        admin=HTML_OK,
    ),
]

# --- The world each row runs in ------------------------------------------------------------
#
# Building a played-out deal takes 40 moves through games.matches.services, about 0.3 s: too slow
# to repeat for each of hundreds of rows. So, as Django's TestCase.setUpTestData does, one
# world per phase is built once for this module inside a transaction that is rolled back
# at its end; each row (a function-scoped test) runs inside its own savepoint, rolled back
# after it, on copies of its world's objects. A write made by one row (a move, a
# resignation, a revoked token, a new account or match) is therefore gone before the next
# row starts, and every row first checks that the database is still exactly as built.

PHASES = (
    "-",
    "waiting",
    "waiting_open",
    "active",
    "active_public",
    "finished",
    "finished_public",
    "resigned",
    "aborted",
    "staff_waiting",
    "staff_active",
)
PHASE_STATUS = {
    "waiting": MatchStatus.WAITING,
    "waiting_open": MatchStatus.WAITING,
    "active": MatchStatus.ACTIVE,
    "finished": MatchStatus.FINISHED,
    "resigned": MatchStatus.FINISHED,
    "aborted": MatchStatus.ABORTED,
    "staff_waiting": MatchStatus.WAITING,
    "staff_active": MatchStatus.ACTIVE,
}


@dataclass
class World:
    users: dict[str, User]
    match: Match | None = None
    deal: Deal | None = None

    def url(self, template: str) -> str:
        return template.format(
            match=self.match.pk if self.match else "no-match",
            deal=self.deal.pk if self.deal else 0,
            player=self.users["player"].username,
        )

    def copy(self) -> World:
        """Copies of the objects (a signing in updates the user's last_login, say)."""
        return World(
            {role: copy.copy(user) for role, user in self.users.items()},
            copy.copy(self.match),
            copy.copy(self.deal),
        )

    def assert_pristine(self, snapshot: Snapshot) -> None:
        """Nothing another row did is left: every match and its moves, accounts, tokens."""
        assert take_snapshot() == snapshot


Snapshot = tuple[dict[str, int], list[tuple[Any, str, int]]]


def take_snapshot() -> Snapshot:
    """Two queries: the counts of accounts and tokens; each match's status and moves."""
    accounts = User.objects.aggregate(
        users=Count("id", distinct=True), tokens=Count("auth_token", distinct=True)
    )
    matches = Match.objects.annotate(moves=Count("deals__moves")).order_by("pk")
    return accounts, list(matches.values_list("pk", "status", "moves"))


def _person(username: str, **fields: Any) -> User:
    user = User(username=username, **fields)
    user.set_password(PASSWORD)
    user.save()
    Token.objects.create(user=user)
    return user


def _play(match: Match, *, until: Callable[[rules.Deal], bool]) -> None:
    """Each seat to play plays its first legal card until ``until(state)`` holds or the
    deal is over."""
    users = {s.number: s.user for s in match.seats.select_related("user")}
    deal = Deal.objects.select_related("match").filter(match=match).latest("number")
    state = deal_state(deal)
    while state.turn is not None and not until(state):
        card = state.legal_moves()[0]
        move_play(match_id=match.pk, user=users[state.turn], card=card.code, ply=state.ply)
        state.play(card)


def _build_world(phase: str, users: dict[str, User]) -> World:
    world = World(users)
    if phase == "-":
        return world
    public = phase.endswith("_public")
    base = phase.removesuffix("_public")
    opponent = "opponent"
    if base.startswith("staff_"):  # staff_player takes the opponent's place
        base, opponent = base.removeprefix("staff_"), "staff_player"
    seat = (
        SeatSpec("open")
        if base in ("waiting_open", "aborted")
        else SeatSpec("user", users[opponent].username)
    )
    match = match_create(
        creator=users["player"], players=2, format="single", seats=[seat], public=public
    )
    if base == "aborted":
        match_abort(match_id=match.pk, user=users["player"])
    elif base in ("active", "finished", "resigned"):
        match = match_join(match_id=match.pk, user=users[opponent])
        if base == "finished":
            _play(match, until=lambda state: False)
        else:
            _play(match, until=lambda state: state.ply >= ACTIVE_PLY and state.turn == 0)
        if base == "resigned":
            match_resign(match_id=match.pk, user=users["opponent"])
    world.match = Match.objects.get(pk=match.pk)
    world.deal = Deal.objects.select_related("match").filter(match=match).order_by("number").last()
    assert world.match.status == PHASE_STATUS[base], (phase, world.match.status)
    if base == "active":
        assert world.deal is not None
        state = deal_state(world.deal)
        assert state.ply >= ACTIVE_PLY and state.turn == 0, (state.ply, state.turn)
    if base == "finished":
        assert Move.objects.filter(deal__match=match).count() == 40
    return world


@pytest.fixture(scope="module")
def worlds(
    django_db_setup: None, django_db_blocker: Any
) -> Iterator[tuple[dict[str, World], Snapshot]]:
    seeds = itertools.count(1)
    with (
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]),
        transaction.atomic(),
    ):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(rules, "new_seed", lambda: f"permission-table-{next(seeds)}")
            users = {
                "player": _person("player"),
                "opponent": _person("opponent"),
                "stranger": _person("stranger"),
                "admin": _person("admin", is_staff=True, is_superuser=True),
                "staff_player": _person("staffplayer", is_staff=True, is_superuser=True),
                "bot": bot_account_ensure(level="random"),
            }
            built = {phase: _build_world(phase, users) for phase in PHASES}
        yield built, take_snapshot()
        transaction.set_rollback(True)


def client_for(row: Row, world: World) -> Client:
    user = None if row.role == "bot" else world.users.get(row.role)  # a bot has no token
    if row.via == "token":
        api = APIClient()
        if user is not None:
            api.credentials(HTTP_AUTHORIZATION=f"Token {user.auth_token.key}")
        return api
    if row.via == "session_no_csrf":
        api = APIClient(enforce_csrf_checks=True)
        if user is not None:
            api.force_login(user)
        return api
    client = Client()
    if row.via == "session" and user is not None:
        client.force_login(user)
    return client


def send(client: Client, row: Row, world: World) -> Any:
    url = world.url(row.url)
    body = row.body(world, row.role) if row.body is not None else None
    method = getattr(client, row.method.lower())
    headers = {"HTTP_ACCEPT": row.accept} if row.accept else {}
    if isinstance(client, APIClient) and body is not None:
        return method(url, body, format="json", **headers)
    return method(url, body, **headers) if body is not None else method(url, **headers)


def is_json_api(path: str) -> bool:
    """The JSON API: its errors are in the one shape (the docs page is HTML)."""
    return path.startswith("/api/") and not path.startswith("/api/docs/")


# --- The test ------------------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_permission(row: Row, worlds: tuple[dict[str, World], Snapshot]) -> None:
    built, snapshot = worlds
    world = built[row.phase].copy()
    world.assert_pristine(snapshot)
    client = client_for(row, world)
    response = send(client, row, world)
    expect = row.expect
    url = world.url(row.url)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    shown = body[:400]
    assert response.status_code < 500, (response.status_code, shown)
    assert response.status_code == expect.status, (response.status_code, shown)
    if 400 <= expect.status < 500 and is_json_api(url):
        assert_clean_error(response, expect.status, expect.code)
    else:
        assert expect.code is None, "only the JSON API's 4xx have a code"
    if expect.location is not None:
        assert response["Location"] == expect.location.format(url=url), response["Location"]
    if expect.sees_match is not None:
        assert world.match is not None
        listed = {m["id"] for m in response.json()["results"]}
        assert (str(world.match.pk) in listed) == expect.sees_match, listed
    if expect.logged_in is not None:
        assert ("_auth_user_id" in client.session) == expect.logged_in


# --- The table covers the whole API --------------------------------------------------------


def _routes(patterns: list[URLPattern | URLResolver], prefix: str = "") -> list[str]:
    routes = []
    for pattern in patterns:
        text = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if text.startswith(("admin/", "api-auth/")):
                continue  # third-party sites: rows above sample them
            routes += _routes(pattern.url_patterns, text)
        else:
            routes.append(text)
    return routes


PLACEHOLDERS = {
    "match_id": "{match}",
    "deal_id": "{deal}",
    "username": "{player}",
    "token_id": "999999",
}


def _as_template(route: str) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: PLACEHOLDERS[m.group(1)], route)


def test_every_api_route_has_a_row_for_every_person() -> None:
    """A new endpoint fails here until it gets its rows: one per role at least."""
    routes = {
        _as_template(r)
        for r in _routes(get_resolver().url_patterns)
        if r.startswith(("api/v1/", "replay/", "play/"))
    }
    assert routes, "no routes found"
    covered: dict[str, set[str]] = {}
    for row in ROWS:
        covered.setdefault(row.path, set()).add(row.role)
    missing = {route: sorted(set(PEOPLE) - covered.get(route, set())) for route in routes}
    assert {route: roles for route, roles in missing.items() if roles} == {}
