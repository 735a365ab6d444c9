"""The engine's exceptions: a player's mistake is an ``IllegalMove`` or ``InvalidMove`` with a
short machine code that passes unchanged onto the wire; a malformed hand record is a
``RecordError``. Anything else escaping the engine is a bug."""

from __future__ import annotations

import json
from enum import StrEnum


class RuleCode(StrEnum):
    """Every code of a player's mistake (``IllegalMove``, ``InvalidMove``), in the order
    ``Hand.why_illegal`` checks. The wire passes them on unchanged: each is also a game code
    (3xxx) of ``tongits.protocol.ErrorCode``, which the tests check."""

    HAND_OVER = "hand_over"
    NOT_YOUR_TURN = "not_your_turn"
    MALFORMED_MOVE = "malformed_move"
    DUPLICATE_CARD = "duplicate_card"
    DEALER_FIRST_TURN = "dealer_first_turn"
    CALL_AT_START = "call_at_start"
    ALREADY_ACQUIRED = "already_acquired"
    NO_CALL = "no_call"
    MUST_ANSWER = "must_answer"
    MUST_ACQUIRE = "must_acquire"
    NOT_OPENED = "not_opened"
    CALL_BLOCKED = "call_blocked"
    NO_SUCH_MELD = "no_such_meld"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    MUST_KEEP_CARD = "must_keep_card"
    EMPTY_DISCARD = "empty_discard"
    PICK_NEEDS_MELD = "pick_needs_meld"
    CANNOT_SAPAW = "cannot_sapaw"
    SAPAWABLE_DISCARD = "sapawable_discard"
    NOT_FOUR_OF_A_KIND = "not_four_of_a_kind"
    NOT_A_MELD = "not_a_meld"
    BAD_MOVE = "bad_move"
    BAD_CARD = "bad_card"


class RecordCode(StrEnum):
    """Every code of an unreadable hand record or table option (``RecordError``)."""

    BAD_JSON = "bad_json"
    BAD_RECORD = "bad_record"
    BAD_DECK = "bad_deck"
    BAD_DEALER = "bad_dealer"
    BAD_ACTION = "bad_action"
    BAD_OPTIONS = "bad_options"


def shown(value: object, limit: int = 40) -> str:
    """``value``, as received from a client or read from a file, the way an error message shows
    it: in JSON's spelling (``null``, ``true``, ``"Zz"``), which a client in any language reads,
    never Python's (``None``, ``True``, ``'Zz'``); cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, default=lambda v: type(v).__name__)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RuleError(Exception):
    """Base of the engine's typed errors; ``code`` is stable, ``message`` is for people."""

    def __init__(self, code: RuleCode | RecordCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class InvalidMove(RuleError):
    """The move is malformed: unknown action, missing field, unreadable card."""


class IllegalMove(RuleError):
    """The move is well formed but not legal now (wrong turn, card not held, not a meld…)."""


class RecordError(RuleError):
    """A hand record cannot be read: bad JSON, wrong deck, unknown option or action."""


class ReplayError(RecordError):
    """Action ``index`` of a hand record is malformed or illegal (``code`` is the move's)."""

    def __init__(self, index: int, cause: RuleError) -> None:
        super().__init__(cause.code, f"action {index}: {cause.message}")
        self.index = index
