"""The engine's exceptions: a player's mistake is an ``IllegalMove`` or ``InvalidMove`` with a
short machine code that passes unchanged onto the wire; a malformed hand record is a
``RecordError``. Anything else escaping the engine is a bug."""

from __future__ import annotations


class RuleError(Exception):
    """Base of the engine's typed errors; ``code`` is stable, ``message`` is for people."""

    def __init__(self, code: str, message: str) -> None:
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
