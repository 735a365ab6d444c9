"""The hand record (docs/RECORD.md): a hand as JSON, replayable move by move."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .cards import CARD_NAMES
from .errors import RecordCode, RecordError, ReplayError, RuleError
from .hand import Hand
from .moves import Move
from .options import Options
from .view import step_forms
from .wire import RecordMap

_card_name = CARD_NAMES.__getitem__

FORMAT = "tongits-hand/1"


@dataclass(frozen=True, slots=True)
class HandRecord:
    """A parsed record: the deal, the moves, the stored result if there was one, and the
    names of the seats' players if the writer knew them."""

    options: Options
    dealer: int
    deck: tuple[str, ...]
    actions: tuple[dict[str, Any], ...]
    result: dict[str, Any] | None = field(default=None)
    names: tuple[str, str, str] | None = field(default=None)

    def name(self, seat: int) -> str:
        """Who played ``seat``: the player's name, else ``seat N``."""
        return self.names[seat] if self.names is not None and self.names[seat] else \
            f"seat {seat}"

    @classmethod
    def from_dict(cls, data: Any) -> HandRecord:
        if not isinstance(data, dict):
            raise RecordError(RecordCode.BAD_RECORD, "a hand record is a JSON object")
        if data.get("format") != FORMAT:
            raise RecordError(
                RecordCode.BAD_RECORD, f"format must be {FORMAT!r}, not {data.get('format')!r}"
            )
        deck = data.get("deck")
        if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
            raise RecordError(RecordCode.BAD_DECK, "deck must be a list of 52 card strings")
        actions = data.get("actions", [])
        if not isinstance(actions, list):
            raise RecordError(RecordCode.BAD_RECORD, "actions must be a list")
        result = data.get("result")
        if result is not None and not isinstance(result, dict):
            raise RecordError(RecordCode.BAD_RECORD, "result must be an object")
        dealer = data.get("dealer")
        if isinstance(dealer, bool) or dealer not in (0, 1, 2):
            raise RecordError(RecordCode.BAD_DEALER, f"dealer must be 0, 1 or 2, not {dealer!r}")
        names = data.get("names")
        if names is not None and not (
            isinstance(names, list) and len(names) == 3 and all(isinstance(n, str) for n in names)
        ):
            raise RecordError(RecordCode.BAD_RECORD, "names must be a list of 3 strings")
        return cls(
            Options.from_dict(data.get("options")), dealer, tuple(deck), tuple(actions), result,
            (names[0], names[1], names[2]) if names is not None else None,
        )

    @classmethod
    def loads(cls, text: str) -> HandRecord:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise RecordError(RecordCode.BAD_JSON, f"not JSON: {exc}") from None
        return cls.from_dict(data)

    def replay(self, *, upto: int | None = None) -> Hand:
        """Play the actions onto a fresh hand; ``ReplayError`` names the first bad one."""
        hand = Hand(self.deck, self.dealer, self.options)
        for index, action in enumerate(self.actions[:upto]):
            try:
                if not isinstance(action, dict):
                    raise RecordError(RecordCode.BAD_ACTION, "an action is an object")
                seat = action.get("seat")
                if isinstance(seat, bool) or seat not in (0, 1, 2):
                    raise RecordError(
                        RecordCode.BAD_ACTION, f"seat must be 0, 1 or 2, not {seat!r}"
                    )
                hand.apply(seat, Move.from_dict(action))
            except RuleError as exc:
                raise ReplayError(index, exc) from None
        return hand


def hand_record(hand: Hand, names: Sequence[str] | None = None) -> RecordMap:
    """The record of a hand so far (with ``result`` once it is over, and the seats' player
    ``names`` when given). Its actions are the views' own maps of the steps (``step_forms``:
    shared, read-only): a server ends hands by the thousand, and converting every step again
    cost more than the rest of the record."""
    out: RecordMap = {
        "format": FORMAT,
        "options": hand.options.to_dict(),
        "dealer": hand.dealer,
        "deck": list(map(_card_name, hand.deck)),
        "actions": [form for form, step in zip(step_forms(hand), hand.steps, strict=True)
                    if not step.auto],
    }
    if hand.result is not None:
        out["result"] = hand.result.to_dict()
    if names is not None:
        out["names"] = list(names)
    return out
