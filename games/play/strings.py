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
    "F": lambda: pgettext("card rank", "Knave"),
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
    "b": lambda: pgettext("card suit", "Batons"),
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
        # A late click after the clock ran out and a bot played the seat's card.
        "timed_out_bot": _("Your time ran out: a bot played for you. Look again and choose."),
        # "Take my seat back" when the seat was back already (a card played meanwhile).
        "seat_not_left": _("Your seat is yours already: play when it is your turn."),
        "not_invited": _("You have no invitation to this match."),
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
        "invalid_time_control": _(
            "That time control is not offered: 5 to 600 seconds, or 1 to 168 hours, a move."
        ),
        "deal_not_found": _("No such deal."),
        "not_authenticated": _("Please sign in again."),
        "authentication_failed": _("Please sign in again."),
        "permission_denied": _("You may not do that."),
        "throttled": _("Too many requests: wait a moment."),
        "service_unavailable": _("The service is busy: try again in a moment."),
        "network": _("The server cannot be reached: check the connection."),
        "timeout": _("The server did not answer in time: try again."),
        "error": _("Something went wrong."),
    }


def rank_labels() -> dict[str, str]:
    """The letters in a card's corner: A 3 R C F in Italian; in English A 3 K, Kt for the
    Knight (its usual English abbreviation: N is chess's) and J for the Knave (the Jack of a
    French pack, docs/rules.md: its usual corner)."""
    return {
        "A": pgettext("card corner", "A"),
        "3": "3",
        "R": pgettext("card corner", "K"),
        "C": pgettext("card corner", "Kt"),
        "F": pgettext("card corner", "J"),
        **{rank: rank for rank in "76542"},
    }


def format_names() -> dict[str, str]:
    """A match's format in words, by its API value."""
    return {
        "single": _("single deal"),
        "first_to_2": _("first to 2 deals"),
        "first_to_3": _("first to 3 deals"),
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
        "you_side": _("You"),
        "their_team": _("Their team"),
        # The sides in the middle of a sentence (the score told to a screen reader).
        "your_team_lower": _("your team"),
        "their_team_lower": _("their team"),
        # Told to a screen reader when the score changed (the numbers alone are not).
        "score_news_points": _("Points so far: %(us_name)s %(us)s, %(them_name)s %(them)s."),
        "score_news_deals": _("Deals won: %(us_name)s %(us)s, %(them_name)s %(them)s."),
        "your_turn": _("Your turn: choose a card"),
        "your_turn_short": _("Your turn"),
        # While the card chosen is on its way to the server.
        "playing_card": _("Playing %(card)s…"),
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
        # At the end of a match in which the timeout bot played for the viewer's seat (the
        # match's events seat_timed_out, seat_taken_by_bot): the result alone hid it.
        "end_bot_played": _("A bot played for you after your time ran out."),
        "end_bot_held": _(
            "A bot held your seat and played your cards after your time ran out three times "
            "in a row."
        ),
        "deal_won": _("Your team wins the deal"),
        "deal_lost": _("The other team wins the deal"),
        "deal_drawn": _("Drawn deal, 60 each"),
        "deal_won_1v1": _("You win the deal"),
        "deal_lost_1v1": _("%(name)s wins the deal"),
        "points_of": _("%(side)s: %(points)s points"),
        "cards_taken": _("Cards taken by %(side)s"),
        "cards_taken_you": _("Cards you took"),
        "replay": _("Replay this deal"),
        "next_deal": _("Next deal"),
        "rematch": _("Rematch"),
        "lobby": _("Back to the lobby"),
        "resign": _("Resign"),
        "resign_confirm": _("Resign the match? The other team wins it."),
        # Two players: the opponent wins it, by name.
        "resign_confirm_1v1": _("Resign the match? %(name)s wins it."),
        # Before every person at the table has played a card, a resignation calls the match
        # off (unrated, nobody wins) rather than losing it.
        "resign_confirm_early": _(
            "Resign now? Not everyone has played a card yet, so the match will be called "
            "off: unrated, and nobody wins it."
        ),
        # While a trick just taken is shown, before the card(s) led after it.
        "trick_taken_then_turn": _("%(name)s takes the trick: your turn next"),
        # The timeout bot and the person's seat (on_timeout "bot").
        "bot_plays_your_card": _("Your time ran out: a bot is playing this card for you"),
        "bot_plays_held_seat": _("A bot is playing your card"),
        # Short: the banner holds them beside "Take my seat back" and above the hand, with
        # the whole table still on a phone's screen (390x844) in Italian.
        "bot_played_for_you": _("Your time ran out and a bot played a card for you."),
        "bot_holds_your_seat": _(
            "Three timeouts in a row: a bot holds your seat and plays your cards."
        ),
        "away_tag": _("away: a bot played for them"),
        "bot_holds_tag": _("away: a bot plays for them"),
        # A rematch proposed by another player of the finished match.
        "rematch_proposed": _("%(name)s proposes a rematch."),
        "rematch_accept": _("Accept the rematch"),
        # A trump card in the hand: its accessible name says so.
        "trump_card": _("%(card)s, trump"),
        # A table still waiting for players, called off by the person who opened it.
        "cancel": pgettext("call off a table", "Cancel"),
        "cancel_confirm": _("Cancel this table? Nobody will be able to join it."),
        "replay_match": _("Replay"),
        # How a match ended, by its end_reason (the API's), when it was not played out.
        "ended": {
            "resigned": _("Ended by a resignation"),
            "timeout": _("Ended on time: a player ran out of time"),
            "timeout_you": _("Ended on time: you ran out of time"),
            "timeout_your_team": _("Ended on time: your team ran out of time"),
            "timeout_other": _("Ended on time: %(name)s ran out of time"),
            "timeout_other_team": _("Ended on time: the other team ran out of time"),
            # Untimed (the idle limit): the side that did not play lost the match.
            "abandoned": _("Ended: a player did not play for too long"),
            "abandoned_you": _("Ended: you did not play for too long"),
            "abandoned_your_team": _("Ended: your team did not play for too long"),
            "abandoned_other": _("Ended: %(name)s did not play for too long"),
            "abandoned_other_team": _("Ended: the other team did not play for too long"),
            "resigned_early": _("Called off: a player resigned before everyone had played a card"),
            "aborted": _("Called off"),
            "abort_window": _("Called off: a first card was never played"),
            "declined": _("Called off: the invitation was declined"),
            "expired": _("Called off: nobody joined in time"),
        },
        "time_left": _("Time left"),
        "deadline": _("Play by"),
        "per_move_seconds": _("%(n)s s per move"),
        "per_move_hours": _("%(n)s h per move"),
        "on_timeout": {
            "bot": _("%(time)s, then a bot plays"),
            "forfeit": _("%(time)s, or the match is lost"),
        },
        # A person's first card of the match has a longer window (at least 30 s); missing
        # it calls the match off (unrated, nobody wins) rather than losing it. Short: the
        # clock's line holds it on a phone.
        "first_card_seconds": _("First card: %(n)s s, else called off"),
        "first_card_hours": _("First card: %(n)s h, else called off"),
        "match_of": _("%(players)s players, %(format)s"),
        "formats": format_names(),
        "status": {
            "waiting": _("waiting"),
            "active": _("in play"),
            "finished": _("finished"),
            "aborted": _("called off"),
        },
        "join": _("Join"),
        "decline": _("Decline"),
        "invited_you": _("%(name)s invites you to this match: join or decline."),
        # The lobby's own words for a match it could not create.
        "no_such_user": _("No player is called %(name)s: check the user name."),
        "invite_yourself": _("You have a seat already: invite other people."),
        "invited_twice": _("%(name)s is invited twice."),
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


def replay_strings() -> dict[str, object]:
    """The words of the replay page's script (games/static/games/replay.js)."""
    return {
        # A card's name is put together in the page ("Asso di Denari"), so that the page
        # holds no card code of its own: every code in it is one its viewer may see
        # (tests/hardening/test_no_leaks.py reads the page for codes).
        "card_name": _("%(rank)s of %(suit)s"),
        "rank_names": {rank: name() for rank, name in RANK_NAMES.items()},
        "suit_names": {suit: name() for suit, name in SUIT_NAMES.items()},
        "rank_labels": rank_labels(),
        "errors": error_messages(),
        # The seats by their players' names, the sides as the table says them.
        "open_seat": _("open seat"),
        "you": _("you"),
        "partner": _("partner"),
        "opponent": _("opponent"),
        "with_partner": _("with %(name)s"),
        "you_side": _("You"),
        "your_team": _("Your team"),
        "their_team": _("Their team"),
        "hidden_card": _("a hidden card"),
        "dealer": _("dealer"),
        "to_play": _("to play"),
        "holds_briscola": _("holds the briscola"),
        "briscola_held": _("Briscola %(card)s, held by %(seat)s"),
        "briscola_gone": _("Briscola %(card)s, played"),
        "stock": _("%(n)s cards left to draw"),
        "last_trick": _("Last trick"),
        "trick_of": _("Trick %(n)s: %(seat)s +%(points)s"),
        # The move shown, counted as the log counts: "Move 5 / 40" after the fifth card.
        "move_of": _("Move %(ply)s / %(plies)s"),
        "won": {
            "you": _("You win %(points)s-%(other)s"),
            "your_team": _("Your team wins %(points)s-%(other)s"),
            "their_team": _("The other team wins %(points)s-%(other)s"),
            "name": _("%(name)s wins %(points)s-%(other)s"),
            "pair": _("%(names)s win %(points)s-%(other)s"),
        },
        "drawn": _("Drawn, 60-60"),
        "abandoned": _("Abandoned"),
        "log": {
            "deal_started": _("Dealer %(seat)s; briscola %(card)s"),
            "hand_dealt": _("%(seat)s is dealt %(cards)s"),
            "hand_dealt_hidden": _("%(seat)s is dealt 3 cards"),
            "card_played": _("Move %(n)s: %(seat)s plays %(card)s"),
            "trick_won": _("%(seat)s takes trick %(n)s, +%(points)s"),
            "card_drawn": _("%(seat)s draws %(card)s"),
            "card_drawn_hidden": _("%(seat)s draws a card"),
            "card_drawn_briscola": _("%(seat)s draws %(card)s (the briscola)"),
            "deal_ended": _("End: %(result)s"),
            "deal_ended_drawn": _("End: %(points)s, drawn"),
        },
        "load_failed": _("The replay could not be loaded."),
        "sign_in": _("Sign in"),
    }
