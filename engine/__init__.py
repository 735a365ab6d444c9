"""Tongits rules engine (RULES.md): pure and deterministic, no I/O, no clock.

A hand is a pure function of ``(options, dealer, deck order)`` and its moves; ``Hand.legal_moves``
is the single source of truth for what may be played, and ``seat_view`` (``LiveView`` read at one
state) the single place that decides what a seat may know.
"""

# first: the finder that decides whether each compiled module runs as its extension
from . import compiled  # noqa: F401
from .cards import DECK, Card, Suit, cards_str, parse_cards
from .count import Arrangement, best_arrangement, hand_count
from .errors import (
    IllegalMove,
    InvalidMove,
    RecordCode,
    RecordError,
    ReplayError,
    RuleCode,
    RuleError,
)
from .hand import End, Hand, Phase, Result, Step
from .match import Match, MatchLength, deck_for
from .melds import MeldKind, TableMeld, is_meld, meld_kind
from .moves import Action, Move
from .options import (
    MAX_ANTE,
    CallTie,
    Options,
    SapawBlock,
    Scoring,
    StockoutNoneOpen,
    option_choices,
)
from .record import FORMAT, HandRecord, hand_record
from .settlement import ChipItem, ChipItemMap, Settlement, Why
from .view import LiveView, MeldView, SeatView, seat_view

__all__ = [
    "DECK",
    "FORMAT",
    "Action",
    "Arrangement",
    "CallTie",
    "Card",
    "ChipItem",
    "ChipItemMap",
    "End",
    "Hand",
    "HandRecord",
    "IllegalMove",
    "InvalidMove",
    "LiveView",
    "MeldKind",
    "MeldView",
    "Match",
    "MatchLength",
    "Move",
    "MAX_ANTE",
    "Options",
    "option_choices",
    "Phase",
    "RecordCode",
    "RecordError",
    "ReplayError",
    "Result",
    "RuleCode",
    "RuleError",
    "SapawBlock",
    "Scoring",
    "SeatView",
    "Settlement",
    "Step",
    "StockoutNoneOpen",
    "Suit",
    "TableMeld",
    "Why",
    "best_arrangement",
    "cards_str",
    "deck_for",
    "hand_count",
    "hand_record",
    "is_meld",
    "meld_kind",
    "parse_cards",
    "seat_view",
]
