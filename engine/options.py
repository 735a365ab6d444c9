"""The table options of RULES.md §10 as one frozen config: no module-level flags in the logic."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any

from .errors import RecordCode, RecordError, shown

#: The largest ante: chips stay far inside what every encoding holds exactly (2**53) even after
#: a billion hands of a growing pot.
MAX_ANTE = 1_000_000


class SapawBlock(StrEnum):
    NEXT_TURN = "next_turn"
    HAND = "hand"


class CallTie(StrEnum):
    CHALLENGER = "challenger"
    CALLER = "caller"


class StockoutNoneOpen(StrEnum):
    COMPARE_ALL = "compare_all"
    VOID = "void"


class Scoring(StrEnum):
    PAYMENTS = "payments"
    TALLY = "tally"


@dataclass(frozen=True, slots=True)
class Options:
    """One table's house rules; the defaults are the classic rules of RULES.md."""

    pick_to_sapaw: bool = False
    sapaw_block: SapawBlock = SapawBlock.NEXT_TURN
    self_sapaw_blocks_call: bool = False
    tongits_needs_discard: bool = False
    call_tie: CallTie = CallTie.CHALLENGER
    stockout_none_open: StockoutNoneOpen = StockoutNoneOpen.COMPARE_ALL
    no_sapawable_discard: bool = False
    concealed_melds_count: bool = False
    scoring: Scoring = Scoring.PAYMENTS
    ante: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Options:
        """Build from a JSON-style dict; omitted keys take defaults, unknown keys or values raise
        ``RecordError(bad_options)``."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise RecordError(RecordCode.BAD_OPTIONS, "options must be an object")
        kinds = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in data.items():
            kind = kinds.get(key)
            if kind is None:
                raise RecordError(RecordCode.BAD_OPTIONS, f"unknown option {shown(key)}")
            enum = _ENUMS.get(key)
            if enum is not None:
                try:
                    values[key] = enum(raw)
                except ValueError:
                    choices = ", ".join(e.value for e in enum)
                    raise RecordError(RecordCode.BAD_OPTIONS,
                                      f"option {key}: {shown(raw)} is not one of {choices}"
                                      ) from None
            elif key == "ante":
                if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= MAX_ANTE:
                    raise RecordError(
                        RecordCode.BAD_OPTIONS,
                        f"option ante: {shown(raw)} is not an integer 0 to {MAX_ANTE}")
                values[key] = raw
            else:
                if not isinstance(raw, bool):
                    raise RecordError(
                        RecordCode.BAD_OPTIONS, f"option {key}: {shown(raw)} is not true or false"
                    )
                values[key] = raw
        return cls(**values)

    def to_dict(self, *, omit_defaults: bool = True) -> dict[str, Any]:
        """JSON-style dict; by default only the options that differ from RULES.md's defaults.
        Made once per options and kind (a hand record and a lobby listing each ask for it),
        a new copy each call."""
        key = (self, omit_defaults)
        out = _DICTS.get(key)
        if out is None:
            out = {k: (v.value if isinstance(v, StrEnum) else v) for k, v in asdict(self).items()}
            if omit_defaults:
                default = Options().to_dict(omit_defaults=False)
                out = {k: v for k, v in out.items() if default[k] != v}
            if len(_DICTS) >= _DICTS_MAX:
                _DICTS.clear()
            _DICTS[key] = out
        return dict(out)


#: ``Options.to_dict`` results by options and ``omit_defaults`` (cleared when this many: only
#: a few distinct options are in use at once). Every value in them is a str, int or bool.
_DICTS_MAX = 1024
_DICTS: dict[tuple[Options, bool], dict[str, Any]] = {}

_ENUMS: dict[str, type[StrEnum]] = {
    "sapaw_block": SapawBlock,
    "call_tie": CallTie,
    "stockout_none_open": StockoutNoneOpen,
    "scoring": Scoring,
}

#: What each option changes, in the words of RULES.md §10 (shown beside it by clients).
_ABOUT = {
    "pick_to_sapaw": "the discard top may also be taken to lay it off at once",
    "sapaw_block": "how long a lay-off onto your meld stops you calling",
    "self_sapaw_blocks_call": "laying off onto your own meld blocks your next call",
    "tongits_needs_discard": "Tongits only by discarding the last card",
    "call_tie": "who wins a tie between caller and a challenger",
    "stockout_none_open": "stock-out with nobody opened",
    "no_sapawable_discard": "a card that could be laid off may not be discarded",
    "concealed_melds_count": "every card in hand counts at the end",
    "scoring": "payments between seats, or a tally of points",
    "ante": "the two-wins-in-a-row pot",
}


def option_choices() -> list[dict[str, Any]]:
    """Every option of RULES.md §10 and what it may be, as JSON-style maps, so that a client
    offers exactly what ``Options.from_dict`` accepts and decides no rule itself: ``name``,
    ``about``, ``default``, and either ``values`` (every choice, the default first) or, for
    ``ante``, ``min`` and ``max``."""
    default = Options().to_dict(omit_defaults=False)
    out: list[dict[str, Any]] = []
    for name, value in default.items():
        choice: dict[str, Any] = {"name": name, "about": _ABOUT[name], "default": value}
        enum = _ENUMS.get(name)
        if enum is not None:
            choice["values"] = [e.value for e in enum]
        elif name == "ante":
            choice["min"], choice["max"] = 0, MAX_ANTE
        else:
            choice["values"] = [value, not value]
        out.append(choice)
    return out
