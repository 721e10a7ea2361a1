"""A small typed client for the Briscola service's HTTP API.

    from briscola_client import Client, StalePlyError

    client = Client.login("http://127.0.0.1:8000", "carla", "a-long-password-1")
    match = client.create_match(players=2, format="first_to_2", seats=[{"bot": "greedy"}])
    while match["status"] not in ("finished", "aborted"):
        match = client.wait_for_turn(match["id"])
        deal = match["current_deal"]
        if match["status"] == "active" and deal is not None:
            try:
                match = client.play(match["id"], deal["legal"][0], deal["ply"])
            except StalePlyError:
                pass  # the deal moved on: look again

Standard library only; no import of the service's code.
"""

from briscola_client.client import Client, MatchFeed, PollingFeed, Response, StreamFeed
from briscola_client.errors import (
    AuthenticationError,
    BriscolaError,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    NotFoundError,
    NotYourTurnError,
    StalePlyError,
    ThrottledError,
)

__all__ = [
    "AuthenticationError",
    "BriscolaError",
    "Client",
    "ConflictError",
    "ForbiddenError",
    "InvalidInputError",
    "MatchFeed",
    "NotFoundError",
    "NotYourTurnError",
    "PollingFeed",
    "Response",
    "StalePlyError",
    "StreamFeed",
    "ThrottledError",
]
