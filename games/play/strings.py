"""The words the pages' JavaScript shows, in the request's language (Django's gettext).

They travel inside the page (``json_script``), so the table needs no catalog request.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from games.rules import RANKS, SUITS

RANK_NAMES = {
    "A": lambda: pgettext("card rank", "Ace"),
    "3": lambda: pgettext("card rank", "Three"),
    "R": lambda: pgettext("card rank", "King"),
    "C": lambda: pgettext("card rank", "Knight"),
    "F": lambda: pgettext("card rank", "Jack"),
    "7": lambda: pgettext("card rank", "Seven"),
    "6": lambda: pgettext("card rank", "Six"),
    "5": lambda: pgettext("card rank", "Five"),
    "4": lambda: pgettext("card rank", "Four"),
    "2": lambda: pgettext("card rank", "Two"),
}
SUIT_NAMES = {
    "c": lambda: pgettext("card suit", "Cups"),
    "d": lambda: pgettext("card suit", "Coins"),
    "s": lambda: pgettext("card suit", "Swords"),
    "b": lambda: pgettext("card suit", "Clubs"),
}


def card_names() -> dict[str, str]:
    """Every card's name by its code: {"Ad": "Ace of Coins"} ("Asso di Denari")."""
    return {
        f"{rank}{suit}": _("%(rank)s of %(suit)s")
        % {"rank": RANK_NAMES[rank](), "suit": SUIT_NAMES[suit]()}
        for rank in RANKS
        for suit in SUITS
    }


def error_messages() -> dict[str, str]:
    """The API's error codes a player can meet, as the page says them."""
    return {
        "stale_ply": _("The table moved on: look again and choose."),
        "not_your_turn": _("It is not your turn."),
        "match_over": _("The match is over."),
        "card_not_in_hand": _("That card is not in your hand."),
        "invalid_card": _("That card cannot be played."),
        "not_a_player": _("You do not play in this match."),
        "match_not_found": _("No such match."),
        "match_private": _("This match is private to its players."),
        "match_not_started": _("The match is still waiting for players."),
        "match_not_joinable": _("The match is not waiting for players."),
        "seat_unavailable": _("That seat is not free."),
        "already_seated": _("You already have a seat in this match."),
        "invalid_match": _("The match cannot be created as asked."),
        "invalid_input": _("Something in the request is not right."),
        "not_authenticated": _("Please sign in again."),
        "authentication_failed": _("Please sign in again."),
        "permission_denied": _("You may not do that."),
        "throttled": _("Too many requests: wait a moment."),
        "service_unavailable": _("The service is busy: try again in a moment."),
        "network": _("The server cannot be reached: check the connection."),
        "error": _("Something went wrong."),
    }


def rank_labels() -> dict[str, str]:
    """The letter in a card's corner: A 3 R C F in Italian, A 3 K N J in English."""
    return {
        "A": pgettext("card corner", "A"),
        "3": "3",
        "R": pgettext("card corner", "K"),
        "C": pgettext("card corner", "N"),
        "F": pgettext("card corner", "J"),
        **{rank: rank for rank in "76542"},
    }


def table_strings() -> dict[str, object]:
    return {
        "cards": card_names(),
        "rank_labels": rank_labels(),
        "errors": error_messages(),
        "you": _("you"),
        "partner": _("partner"),
        "opponent": _("opponent"),
        "team": _("Team %(n)s"),
        "your_team": _("Your team"),
        "their_team": _("Their team"),
        "your_turn": _("Your turn: choose a card"),
        "your_turn_short": _("Your turn"),
        "their_turn": _("%(name)s to play"),
        "waiting": _("Waiting for players to join"),
        "dealer": _("dealer"),
        "to_play": _("to play"),
        "hidden_card": _("a hidden card"),
        "cards_in_hand": _("%(n)s cards in hand"),
        "stock": _("%(n)s cards in the stock"),
        "briscola": _("Briscola"),
        "briscola_held": _("Briscola %(card)s, drawn by %(name)s"),
        "briscola_gone": _("Briscola %(card)s, played"),
        "points_so_far": _("Points so far"),
        "score": _("Deals won"),
        "trick_won_by": _("Taken by %(name)s, %(points)s points"),
        "last_trick": _("Last trick"),
        "no_trick_yet": _("No trick taken yet."),
        "played_by": _("%(card)s, played by %(name)s"),
        "deal_over": _("Deal %(n)s is over"),
        "match_won": _("You won the match!"),
        "match_lost": _("You lost the match."),
        "match_over_title": _("The match is over"),
        "deal_won": _("Your team wins the deal"),
        "deal_lost": _("The other team wins the deal"),
        "deal_drawn": _("Drawn deal, 60 each"),
        "points_of": _("%(side)s: %(points)s points"),
        "cards_taken": _("Cards taken by %(side)s"),
        "replay": _("Replay this deal"),
        "next_deal": _("Next deal"),
        "rematch": _("Rematch"),
        "lobby": _("Back to the lobby"),
        "resign": _("Resign"),
        "resign_confirm": _("Resign the match? The other team wins it."),
        "resigned": _("Ended by a resignation"),
        "time_left": _("Time left"),
        "deadline": _("Play by"),
        "time_control": _("Time control"),
        "match_of": _("Match %(format)s, %(players)s players"),
        "formats": {
            "single": _("single deal"),
            "first_to_2": _("first to 2 deals"),
            "first_to_3": _("first to 3 deals"),
        },
        "status": {
            "waiting": _("waiting"),
            "active": _("in play"),
            "finished": _("finished"),
            "aborted": _("called off"),
        },
        "join": _("Join"),
        "open": _("Open"),
        "open_seat": _("open seat"),
        "invited": _("invited: %(name)s"),
        "nothing_here": _("Nothing here yet."),
        "vs": _("vs"),
        "won": _("won"),
        "lost": _("lost"),
        "drawn": _("drawn"),
        "bot": _("bot"),
    }
