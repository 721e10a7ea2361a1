"""Briscola rules: pure Python, standard library only. See docs/rules.md.

The public API::

    from games.rules import Card, Deal, Match, shuffled_deck, seat_view
    deal = Deal.from_seed(players=2, dealer=0, seed="abc")
    deal.play(deal.legal_moves()[0])
    seat_view(deal, 1).to_dict()
"""

from .cards import CARDS, RANKS, SUITS, TOTAL_POINTS, Card, parse_card, parse_cards
from .deal import (
    PLAYER_COUNTS,
    WINNING_POINTS,
    Deal,
    Draw,
    Trick,
    replay_moves,
    team_of,
    trick_winner_index,
)
from .errors import (
    CardNotInHandError,
    DealOverError,
    IllegalMoveError,
    InvalidCardError,
    InvalidDealError,
    MatchOverError,
    NotYourTurnError,
    RecordError,
    RulesError,
)
from .match import FORMATS, Match
from .records import (
    RECORD_FORMAT,
    Check,
    DealRecord,
    RecordResult,
    Replay,
    record_text,
    replay_record,
    result_check,
    verify_record,
)
from .shuffle import (
    SHUFFLE_ALGORITHM,
    first_dealer,
    new_seed,
    seed_commitment,
    shuffled_deck,
)
from .views import (
    DealNotOverError,
    FullView,
    SeatView,
    TrickView,
    deal_events,
    full_view,
    seat_view,
    spectator_view,
)

__all__ = [
    "CARDS",
    "FORMATS",
    "PLAYER_COUNTS",
    "RANKS",
    "RECORD_FORMAT",
    "SHUFFLE_ALGORITHM",
    "SUITS",
    "TOTAL_POINTS",
    "WINNING_POINTS",
    "Card",
    "CardNotInHandError",
    "Check",
    "Deal",
    "DealNotOverError",
    "DealOverError",
    "DealRecord",
    "Draw",
    "FullView",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidDealError",
    "Match",
    "MatchOverError",
    "NotYourTurnError",
    "RecordError",
    "RecordResult",
    "Replay",
    "RulesError",
    "SeatView",
    "Trick",
    "TrickView",
    "deal_events",
    "first_dealer",
    "full_view",
    "new_seed",
    "parse_card",
    "parse_cards",
    "record_text",
    "replay_moves",
    "replay_record",
    "result_check",
    "seat_view",
    "seed_commitment",
    "shuffled_deck",
    "spectator_view",
    "team_of",
    "trick_winner_index",
    "verify_record",
]
