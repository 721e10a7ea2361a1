"""Run by tests/clients/test_clients_play.py with a throwaway environment's Python, in
which the client openapi-python-client generated from the live schema is installed: it
registers, plays a whole first_to_2 match against the greedy bot, and reads the events,
the finished deals' records, replays, verifications and exports (the JSON record and the
text notation, each its own operation), every answer parsed into the generated (typed)
models or, for the text, a ``str``. Argv: BASE_URL USERNAME. Prints ``finished <deals_won>``."""

from __future__ import annotations

import sys
import time

from briscola_service_api_client import AuthenticatedClient, Client
from briscola_service_api_client.api.auth import auth_me, auth_register
from briscola_service_api_client.api.deals import deals_retrieve
from briscola_service_api_client.api.matches import (
    matches_create,
    matches_events,
    matches_moves_create,
    matches_retrieve,
)
from briscola_service_api_client.api.replays import (
    deals_export,
    deals_export_text,
    deals_replay,
    deals_verify,
    matches_export_text,
)
from briscola_service_api_client.models import (
    AccountOutput,
    BotSeat,
    DealRecordBody,
    DealRecordOutput,
    Error,
    EventsOutput,
    MatchCreateInputRequest,
    MatchDetailOutput,
    MatchFormatEnum,
    MatchStatusEnum,
    MoveInputRequest,
    PlayersEnum,
    RegisteredAccountOutput,
    RegisterInputRequest,
    ReplayOutput,
    VerifyOutput,
)


def expect(value: object, cls: type) -> object:
    assert isinstance(value, cls), f"expected {cls.__name__}, got {value!r}"
    return value


def main() -> None:
    base, username = sys.argv[1], sys.argv[2]
    anonymous = Client(base_url=base, raise_on_unexpected_status=True)
    registered = auth_register.sync(
        client=anonymous,
        body=RegisterInputRequest(username=username, password="a-long-password-1"),
    )
    assert isinstance(registered, RegisteredAccountOutput), registered
    client = AuthenticatedClient(
        base_url=base, token=registered.token, raise_on_unexpected_status=True
    )
    me = auth_me.sync(client=client)
    assert isinstance(me, AccountOutput) and me.username == username and me.bot_level is None

    match = matches_create.sync(
        client=client,
        body=MatchCreateInputRequest(
            players=PlayersEnum.VALUE_2,
            format_=MatchFormatEnum.FIRST_TO_2,
            seats=[BotSeat(bot="greedy")],
        ),
    )
    assert isinstance(match, MatchDetailOutput), match
    moves = 0
    deadline = time.monotonic() + 300
    while match.status != MatchStatusEnum.FINISHED:
        assert time.monotonic() < deadline, "the match did not finish in time"
        deal = match.current_deal
        assert deal is not None
        if deal.turn is not None and deal.turn == deal.seat:
            played = matches_moves_create.sync(
                match.id, client=client, body=MoveInputRequest(card=deal.legal[0], ply=deal.ply)
            )
            if isinstance(played, Error):  # a stale read: look again
                assert played.code.value in ("stale_ply", "not_your_turn"), played
            else:
                moves += 1
        else:
            time.sleep(0.02)
        match = matches_retrieve.sync(match.id, client=client)  # type: ignore[assignment]
        assert isinstance(match, MatchDetailOutput), match

    events = matches_events.sync(match.id, client=client)
    assert isinstance(events, EventsOutput) and events.last_id == len(events.events)
    assert events.events[-1].type_.value == "match_ended"
    for summary in match.deals:
        expect(deals_retrieve.sync(summary.id, client=client), DealRecordOutput)
        replay = deals_replay.sync(summary.id, client=client)
        assert isinstance(replay, ReplayOutput) and replay.ply == replay.plies == 40
        verified = deals_verify.sync(summary.id, client=client)
        assert isinstance(verified, VerifyOutput) and verified.ok, verified
        # The record (JSON) and the text notation: each operation has its one media type.
        record = deals_export.sync(summary.id, client=client)
        assert isinstance(record, DealRecordBody) and len(record.moves) == 40, record
        text = deals_export_text.sync(summary.id, client=client)
        assert isinstance(text, str) and f"Seed: {record.seed}" in text, text
    match_text = matches_export_text.sync(str(match.id), client=client)
    assert isinstance(match_text, str) and match_text.startswith(f"Match: {match.id}"), match_text
    assert moves >= 20
    print(f"finished {match.deals_won[0]}-{match.deals_won[1]}", flush=True)


if __name__ == "__main__":
    main()
