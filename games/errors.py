"""Errors of the games service, each with a stable ``code`` and an HTTP status.

Errors from :mod:`games.rules` (invalid_card, not_your_turn, card_not_in_hand,
deal_over) carry their own code and status and reach the client unchanged.
"""

from briscola_service.exceptions import ServiceError, register_error_base
from games.bots import UnknownBotLevelError
from games.models import AppendOnlyError
from games.rules.errors import RulesError

# Rendered by duck typing (a code and a status): the schema's enum of codes lists them too.
for _base in (RulesError, UnknownBotLevelError, AppendOnlyError):
    register_error_base(_base)


class MatchNotFoundError(ServiceError):
    code = "match_not_found"
    status = 404
    message = "No such match."


class DealNotFoundError(ServiceError):
    code = "deal_not_found"
    status = 404
    message = "No such deal."


class NotAPlayerError(ServiceError):
    code = "not_a_player"
    status = 403
    message = "You do not play in this match."


class MatchPrivateError(ServiceError):
    code = "match_private"
    status = 403
    message = "This match is private to its players."


class StalePlyError(ServiceError):
    code = "stale_ply"
    status = 409
    message = "The deal has moved on since the position you sent."


class StaleDealError(StalePlyError):
    """A move names a deal that is not the match's current one (a move prepared in one
    deal must never land at the same ply of the next)."""

    code = "stale_deal"
    status = 409
    message = "That deal is over: the match has moved on to the next one."


class MatchNotStartedError(ServiceError):
    code = "match_not_started"
    status = 409
    message = "The match is still waiting for players."


class MatchStartedError(ServiceError):
    code = "match_started"
    status = 409
    message = (
        "The match has started: only a match still waiting for players can be aborted "
        "(resign instead)."
    )


class MatchOverError(ServiceError):
    code = "match_over"
    status = 409
    message = "The match is over."


class DealNotOverError(ServiceError):
    code = "deal_not_over"
    status = 403
    message = "The deal is still being played: its cards are secret until it ends."


class MatchNotJoinableError(ServiceError):
    code = "match_not_joinable"
    status = 409
    message = "The match is not waiting for players."


class SeatUnavailableError(ServiceError):
    code = "seat_unavailable"
    status = 409
    message = "That seat is not free."


class AlreadySeatedError(ServiceError):
    code = "already_seated"
    status = 409
    message = "You already have a seat in this match."


class InvalidMatchError(ServiceError):
    code = "invalid_match"
    status = 400
    message = "The match cannot be created as asked."


class NotMatchCreatorError(ServiceError):
    code = "not_match_creator"
    status = 403
    message = "Only the match's creator may do this."


class ExhibitionAdminsOnlyError(ServiceError):
    code = "exhibition_admins_only"
    status = 403
    message = "Only administrators may create a match with bots in every seat (an exhibition)."


# -- time limits, invitations, abandoned matches (games.clocks) ------------------------------


class InvalidTimeControlError(ServiceError):
    code = "invalid_time_control"
    status = 400
    message = (
        'A time control is {"per_move_seconds": 5..600} or {"per_move_hours": 1..168}, '
        'and on_timeout is "bot" or "forfeit".'
    )


class DeadlinePassedError(ServiceError):
    code = "deadline_passed"
    status = 409
    message = "Your time to play this card ran out: the timeout was applied instead."


class SeatHeldByBotError(ServiceError):
    code = "seat_held_by_bot"
    status = 409
    message = "The bot plays your seat after repeated timeouts: POST .../return to take it back."


class SeatNotLeftError(ServiceError):
    code = "seat_not_left"
    status = 409
    message = "You never left your seat: there is nothing to return to."


class NotInvitedError(ServiceError):
    code = "not_invited"
    status = 403
    message = "You have no unanswered invitation to this match."


class CannotLeaveError(ServiceError):
    code = "cannot_leave"
    status = 409
    message = "Only a person seated in a match still waiting for players may leave it."


class MatchNotFinishedError(ServiceError):
    code = "match_not_finished"
    status = 409
    message = "A rematch can be proposed only once the match has finished."


class TooManyActiveMatchesError(ServiceError):
    code = "too_many_active_matches"
    status = 429
    message = "You have too many matches waiting or being played: finish or abort some first."


# -- live streams (games.live) -------------------------------------------------------------


class InvalidEventIdError(ServiceError):
    code = "invalid_event_id"
    status = 400
    message = (
        "Last-Event-ID (or ?after=) must be the id of an event this stream sent: "
        "a whole number no greater than the match's latest."
    )


class TooManyStreamsError(ServiceError):
    code = "too_many_streams"
    status = 429
    message = "Too many open streams for this account: close one first."


class StreamsFullError(ServiceError):
    code = "streams_full"
    status = 503
    message = "This server holds as many open streams as it may: try again shortly."
