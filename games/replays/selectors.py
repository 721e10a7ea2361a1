"""Reads for replays: a deal step by step, its export, its verification, record checks.

Who may replay what (docs/rules.md, "What each seat may know"):

- while a deal is played, one of its players may replay it only from their own seat and
  only up to the present (the position after the moves already made);
- once it is over (finished, or abandoned when the match ended early), everything about
  it is open to its players, and to everyone if the match is public;
- administrators (staff who may view deals: games.matches.selectors.is_admin) may replay
  any deal, from any seat, at any time, except in a match they play in: there they are
  players like the others.

Secrets are stripped by :mod:`games.rules.views` only: a seat's position is
``seat_view`` of the deal replayed up to the asked ply, never a full view filtered here.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from accounts.models import User
from briscola_service.exceptions import ServiceError
from games import rules
from games.errors import DealNotOverError, MatchPrivateError
from games.matches.selectors import (
    deal_moves,
    deal_record_for_user,
    deal_summary,
    deck_for_seed,
    match_seats,
    match_summary,
    seat_of_user,
    staff_powers,
)
from games.models import Deal, DealStatus, Match, Move

JSON = dict[str, Any]

# A record is about 1 kB; a generous bound keeps the check endpoint cheap.
RECORD_MAX_BYTES = 64 * 1024


class ReplaySeatForbiddenError(ServiceError):
    code = "replay_seat_forbidden"
    status = 403
    message = "While the deal is being played you may replay it only from your own seat."


class ReplayBeyondPresentError(ServiceError):
    code = "replay_beyond_present"
    status = 403
    message = "While the deal is being played you may replay it only up to the present."


class RecordTooLargeError(ServiceError):
    code = "record_too_large"
    status = 413
    message = f"A deal record is at most {RECORD_MAX_BYTES} bytes."


def replay_steps(events: list[JSON]) -> list[JSON]:
    """``deal_events`` numbered, each with ``at_ply``: the moves played once it happened."""
    steps = []
    at_ply = 0
    for index, event in enumerate(events):
        if event["type"] == "card_played":
            at_ply = event["ply"] + 1
        steps.append({"step": index, "at_ply": at_ply, **event})
    return steps


def deal_replay_for_user(
    *, deal: Deal, user: User, ply: int | None = None, seat: int | None = None
) -> JSON:
    """The deal up to ``ply`` moves (default: all the viewer may see), as ``seat`` saw it
    then (None: the full view, every hand), with the steps that led there."""
    match = deal.match
    seats = match_seats(match)
    admin = staff_powers(user, seats)
    mine = seat_of_user(seats, user)
    if not (admin or mine is not None or match.public):
        raise MatchPrivateError()
    if seat is not None and seat >= match.players:
        raise ValidationError({"seat": [f"A seat of this deal is 0 to {match.players - 1}."]})
    moves = deal_moves(deal)
    present = len(moves)
    if not deal.is_over and not admin:
        if mine is None:
            raise DealNotOverError()
        if seat != mine.number:
            raise ReplaySeatForbiddenError(
                "While the deal is being played you may replay it only from your own seat "
                f"(add ?seat={mine.number}).",
                details={"your_seat": mine.number},
            )
        if ply is not None and ply > present:
            raise ReplayBeyondPresentError(details={"current_ply": present})
    if ply is None:
        ply = present
    elif ply > present:
        raise ValidationError({"ply": [f"This deal has {present} moves: ply is 0 to {present}."]})

    state = rules.replay_moves(match.players, deal.dealer, deck_for_seed(deal.seed), moves[:ply])
    # Past this point the viewer may see everything (deal over, or an administrator) unless
    # a seat was asked for, and then the rules engine builds that seat's view.
    if seat is None:
        position = rules.full_view(state, before_end=True).to_dict()
        events = rules.deal_events(state, None, before_end=True)
    else:
        position = rules.seat_view(
            state, seat, partners_last_hand=match.partners_last_hand
        ).to_dict()
        events = rules.deal_events(state, seat)
    return {
        "deal": {**deal_summary(deal), "players": match.players, "match": str(match.id)},
        "match": match_summary(match, seats),
        "your_seat": mine.number if mine else None,
        "seat": seat,
        "ply": ply,
        "plies": present,
        "steps": replay_steps(events),
        "position": position,
    }


# -- export -------------------------------------------------------------------------------


def _export_record(body: JSON) -> rules.DealRecord:
    """The exported record: the deal's moves with its seed, commitment and stored result."""
    result = None
    if body["points"] is not None:
        result = rules.RecordResult((body["points"][0], body["points"][1]), body["winner"])
    record = rules.DealRecord.from_dict(body["record"])
    return rules.DealRecord(
        record.players,
        record.dealer,
        record.deck,
        record.moves,
        record.seed,
        body["commitment"],
        result,
    )


def _names(match: Match) -> list[str]:
    return [s.user.username if s.user else "open" for s in match_seats(match)]


def deal_export_for_user(*, deal: Deal, user: User) -> rules.DealRecord:
    """The deal's record to export; the same permissions as :func:`deal_record_for_user`."""
    return _export_record(deal_record_for_user(deal=deal, user=user))


def deal_export_text(*, deal: Deal, record: rules.DealRecord) -> str:
    header = f"Deal: {deal.pk} (number {deal.number} of match {deal.match_id}, {deal.status})\n"
    return header + rules.record_text(record, names=_names(deal.match))


def match_export_for_user(*, match: Match, user: User) -> JSON:
    """Every deal of the match that is over, as records to export."""
    seats = match_seats(match)
    if not (staff_powers(user, seats) or seat_of_user(seats, user) is not None or match.public):
        raise MatchPrivateError()
    deals = []
    for deal in match.deals.exclude(status=DealStatus.ACTIVE).order_by("number"):
        deal.match = match
        deals.append(
            {
                "id": deal.pk,
                "number": deal.number,
                "status": deal.status,
                "record": deal_export_for_user(deal=deal, user=user).to_dict(),
            }
        )
    return {
        "match": str(match.id),
        "players": match.players,
        "seats": [s.user.username if s.user else None for s in seats],
        "deals": deals,
    }


def match_export_text(*, match: Match, exported: JSON) -> str:
    parts = [f"Match: {match.pk} ({match.format}, {match.status})\n"]
    names = [n or "open" for n in exported["seats"]]
    for deal in exported["deals"]:
        record = rules.DealRecord.from_dict(deal["record"])
        parts.append(
            f"Deal: {deal['id']} (number {deal['number']}, {deal['status']})\n"
            + rules.record_text(record, names=names)
        )
    return "\n".join(parts)


# -- verification -------------------------------------------------------------------------


def deal_verify_for_user(*, deal: Deal, user: User) -> JSON:
    """Check the deal's seed against its commitment, its deck, and its moves against the
    stored result. Only once the deal is over (administrators: any time)."""
    body = deal_record_for_user(deal=deal, user=user)  # the permissions of the record
    record = _export_record(body)
    checks = rules.verify_record(record.to_dict())
    # The move log also names who played each move: it must be the seat whose turn it was.
    log = list(Move.objects.filter(deal=deal).order_by("ply").values_list("ply", "seat", "card"))
    state = rules.Deal(record.players, record.dealer, deck_for_seed(deal.seed))
    seat_check = rules.Check("move_seats", True, f"all {len(log)} moves by the seat to play")
    for ply, seat, card in log:
        if state.turn != seat:
            seat_check = rules.Check(
                "move_seats",
                False,
                f"move {ply} ({card}) is logged for seat {seat}, but seat {state.turn} was to play",
            )
            break
        try:
            state.play(card)
        except rules.RulesError as exc:
            seat_check = rules.Check("move_seats", False, f"move {ply}: {exc.message}")
            break
    checks.append(seat_check)
    return {
        "deal": deal.pk,
        "ok": all(c.ok for c in checks),
        "algorithm": rules.SHUFFLE_ALGORITHM,
        "seed": deal.seed,
        "commitment": deal.commitment,
        "checks": [c.to_dict() for c in checks],
    }


# -- importing a record -------------------------------------------------------------------


def record_check(*, data: Any) -> JSON:
    """Replay a record someone sends: the replay, its steps, and ``verify``: every check
    when the record carries a seed and a commitment; without them, when it carries a
    result, whether the replay gives that result (it was answered with the replay's
    points and no word that the record's own said otherwise). Raises ``RecordError``
    (invalid_record, ``details.where``) for a record that cannot be read or replayed."""
    if isinstance(data, dict) and "record" in data and "format" not in data:
        data = data["record"]  # the body of GET /deals/{id}, pasted whole
    record = rules.DealRecord.from_dict(data)
    replay = record.replay()
    result: JSON = {
        **replay.to_dict(),
        "moves": len(record.moves),
        "steps": replay_steps(rules.deal_events(replay.deal, None, before_end=True)),
    }
    if isinstance(data, dict) and data.get("seed") is not None and data.get("commitment"):
        checks = rules.verify_record(data)
    elif record.result is not None:
        checks = [rules.result_check(record.result, replay)]
    else:
        return result
    result["verify"] = {"ok": all(c.ok for c in checks), "checks": [c.to_dict() for c in checks]}
    return result
