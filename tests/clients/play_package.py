"""Run by tests/clients/test_clients_play.py with a throwaway environment's Python in which
only clients/python (briscola-client) is installed: no project code, no other package.
It registers a bot account, makes personal tokens (a read one is refused a write, a
revoked one is refused everything), and plays a whole first_to_2 match against the
greedy bot through ``wait_for_turn``. Argv: BASE_URL USERNAME. Prints ``finished ...``."""

from __future__ import annotations

import sys

from briscola_client import (
    AuthenticationError,
    Client,
    ForbiddenError,
    InvalidInputError,
    StalePlyError,
)


def main() -> None:
    base, username = sys.argv[1], sys.argv[2]
    for name in ("django", "games", "accounts", "rest_framework"):
        assert name not in sys.modules
    account = Client.register(base, username, "a-long-password-1", bot=True)
    assert account.me()["is_bot"] is True
    player = Client(base, account.create_token("player", scopes=["play"])["token"])
    reader_token = account.create_token("reader", scopes=["read"])
    reader = Client(base, reader_token["token"])
    assert [t["name"] for t in account.tokens()] == ["player", "reader"]
    try:
        reader.create_match(players=2, seats=[{"bot": "greedy"}])
        raise AssertionError("a read token created a match")
    except ForbiddenError as exc:
        assert exc.code == "insufficient_scope" and exc.status == 403
    try:
        player.create_match(players=2, seats=[{"robot": "greedy"}])
        raise AssertionError("a bad seat was accepted")
    except InvalidInputError as exc:
        assert exc.code == "invalid_input" and "seats[0]" in exc.details

    match = player.create_match(players=2, format="first_to_2", seats=[{"bot": "greedy"}])
    seats = {s["user"]: s for s in match["seats"]}
    assert seats[username]["is_bot"] and seats["bot-greedy"]["bot_level"] == "greedy"
    player.feed = type(player.feed)(interval=0.02)  # a PollingFeed, polling faster
    while match["status"] not in ("finished", "aborted"):
        match = player.wait_for_turn(match["id"])
        deal = match["current_deal"]
        if match["status"] != "active" or deal is None:
            continue
        try:
            match = player.play(match["id"], deal["legal"][0], deal["ply"])
        except StalePlyError:
            continue
    assert match["status"] == "finished" and match["last_move_at"] is not None
    assert reader.match(match["id"])["id"] == match["id"]  # a read token reads
    events = reader.events(match["id"])
    assert events["events"][-1]["type"] == "match_ended" and events["events"][0]["at"]
    account.revoke_token(reader_token["id"])
    try:
        reader.me()
        raise AssertionError("a revoked token still worked")
    except AuthenticationError as exc:
        assert exc.status == 401
    print(f"finished {match['deals_won'][0]}-{match['deals_won'][1]}", flush=True)


if __name__ == "__main__":
    main()
