"""The entries of a table's log, as typed values, and their one stored form.

A table changes only by applying an entry (``table.TableLogState.apply``), and its journal
keeps the entries in order (``journal.Journal``), so that ``TableLogState.replay`` rebuilds it
after a restart. Each kind of entry is a frozen dataclass here; ``to_dict`` gives the map the
SQLite journal stores (one JSON object with a ``kind``) and ``entry_from_dict`` reads it back,
so a database written before the entries had types reads the same. The kinds, in order of use:

* ``create`` — the table: its id, name, options, timer, privacy, join code, match seed,
  ``auto_start`` and match length (``hands``/``target``, ``MatchLength``)
* ``sit`` — a human (with the digest of its seat token) or a bot (with its policy) takes a
  seat; ``program``: a human seat held by a client that said it is a bot
* ``vacate`` — before the match: the seat is empty again
* ``stand_in`` — during the match a bot takes a human's seat; ``returnable`` (the human was away
  past the grace period) keeps the seat's token so that the human can take the seat back
* ``back`` — the human of a returnable stand-in seat is back
* ``start`` — the match begins and the first hand is dealt
* ``move`` — one action of the current hand; ``timeout``: the server played it for a seat whose
  time ran out
* ``deal`` — the next hand of the match is dealt

``start`` and ``deal`` may carry the ``deck`` and ``dealer`` of the hand (the arena's duplicate
deals, server/arena.py; no request can put one there); without them the match deals from its
seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NotRequired, TypeAlias, TypedDict

from tongits.engine import Card, Move, Options, RuleError
from tongits.engine.hand import check_deck
from tongits.engine.wire import MoveMap
from tongits.protocol import PlayerKind


class EntryKind(StrEnum):
    """The ``kind`` of a stored entry."""

    CREATE = "create"
    SIT = "sit"
    VACATE = "vacate"
    STAND_IN = "stand_in"
    BACK = "back"
    START = "start"
    MOVE = "move"
    DEAL = "deal"


class CreateMap(TypedDict):
    """A stored ``create`` entry (``CreateEntry.to_dict``)."""

    kind: str
    table: str
    name: str
    options: dict[str, Any]
    timer: float
    private: bool
    code: str | None
    seed: int | str
    auto_start: bool
    hands: NotRequired[int]
    target: NotRequired[int]


class SitMap(TypedDict):
    kind: str
    seat: int
    name: str
    player: str
    token_hash: NotRequired[str]
    policy: NotRequired[str]
    program: NotRequired[bool]


class SeatEntryMap(TypedDict):
    """A stored ``vacate`` or ``back`` entry: the kind and the seat."""

    kind: str
    seat: int


class StandInMap(TypedDict):
    kind: str
    seat: int
    policy: str | None
    returnable: NotRequired[bool]


class DealMap(TypedDict):
    """A stored ``start`` or ``deal`` entry, with the hand's own deck and dealer if it has
    them."""

    kind: str
    deck: NotRequired[list[str]]
    dealer: NotRequired[int | None]


class MoveEntryMap(TypedDict):
    kind: str
    seat: int
    move: MoveMap
    timeout: NotRequired[bool]


#: The stored form of any entry (``to_dict``), one JSON object in the journal.
EntryMap: TypeAlias = CreateMap | SitMap | SeatEntryMap | StandInMap | DealMap | MoveEntryMap


@dataclass(frozen=True, slots=True)
class CreateEntry:
    """The first entry of every table's log."""

    table: str
    name: str
    seed: int | str
    options: Options = Options()
    timer: float = 0.0
    private: bool = False
    code: str | None = None
    auto_start: bool = True
    hands: int | None = None
    target: int | None = None

    def to_dict(self) -> CreateMap:
        out: CreateMap = {
            "kind": EntryKind.CREATE.value, "table": self.table, "name": self.name,
            "options": self.options.to_dict(), "timer": self.timer, "private": self.private,
            "code": self.code, "seed": self.seed, "auto_start": self.auto_start,
        }
        if self.hands is not None:
            out["hands"] = self.hands
        if self.target is not None:
            out["target"] = self.target
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CreateEntry:
        seed = data["seed"]
        if not isinstance(seed, int | str) or isinstance(seed, bool):
            raise ValueError(f"seed {seed!r} is not a number or a text")
        timer = data.get("timer") or 0
        if not isinstance(timer, int | float):
            raise ValueError(f"timer {timer!r} is not a number")
        return cls(
            table=_text(data, "table"), name=_text(data, "name"), seed=seed,
            options=Options.from_dict(data.get("options")),
            timer=float(timer), private=bool(data.get("private")),
            code=_text_or_none(data, "code"), auto_start=bool(data.get("auto_start", True)),
            hands=_count_or_none(data, "hands"), target=_count_or_none(data, "target"),
        )


@dataclass(frozen=True, slots=True)
class SitEntry:
    """Who takes a seat: a human (``token_hash``) or a bot (``policy``)."""

    seat: int
    name: str
    player: PlayerKind
    token_hash: str | None = None
    policy: str | None = None
    program: bool = False

    def to_dict(self) -> SitMap:
        out: SitMap = {"kind": EntryKind.SIT.value, "seat": self.seat, "name": self.name,
                       "player": self.player.value}
        if self.token_hash is not None:
            out["token_hash"] = self.token_hash
        if self.policy is not None:
            out["policy"] = self.policy
        if self.program:
            out["program"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SitEntry:
        return cls(_seat(data), _text(data, "name"), PlayerKind(data["player"]),
                   _text_or_none(data, "token_hash"), _text_or_none(data, "policy"),
                   bool(data.get("program")))


@dataclass(frozen=True, slots=True)
class VacateEntry:
    seat: int

    def to_dict(self) -> SeatEntryMap:
        return {"kind": EntryKind.VACATE.value, "seat": self.seat}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VacateEntry:
        return cls(_seat(data))


@dataclass(frozen=True, slots=True)
class StandInEntry:
    seat: int
    policy: str | None
    returnable: bool = False

    def to_dict(self) -> StandInMap:
        out: StandInMap = {"kind": EntryKind.STAND_IN.value, "seat": self.seat,
                           "policy": self.policy}
        if self.returnable:
            out["returnable"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StandInEntry:
        return cls(_seat(data), _text_or_none(data, "policy"), bool(data.get("returnable")))


@dataclass(frozen=True, slots=True)
class BackEntry:
    seat: int

    def to_dict(self) -> SeatEntryMap:
        return {"kind": EntryKind.BACK.value, "seat": self.seat}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BackEntry:
        return cls(_seat(data))


@dataclass(frozen=True, slots=True)
class StartEntry:
    """The match begins; ``deck``/``dealer``: the first hand's, if not the match's own."""

    deck: tuple[Card, ...] | None = None
    dealer: int | None = None

    def to_dict(self) -> DealMap:
        return _deal_dict(EntryKind.START, self.deck, self.dealer)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StartEntry:
        return cls(*_deal_fields(data))


@dataclass(frozen=True, slots=True)
class DealEntry:
    """The next hand is dealt; ``deck``/``dealer``: its own, if not the match's."""

    deck: tuple[Card, ...] | None = None
    dealer: int | None = None

    def to_dict(self) -> DealMap:
        return _deal_dict(EntryKind.DEAL, self.deck, self.dealer)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DealEntry:
        return cls(*_deal_fields(data))


@dataclass(frozen=True, slots=True)
class MoveEntry:
    """One action of the current hand (the commonest entry by far: built on the table's task
    with no conversion, turned into its map only where it is stored)."""

    seat: int
    move: Move
    timeout: bool = False

    def to_dict(self) -> MoveEntryMap:
        out: MoveEntryMap = {"kind": EntryKind.MOVE.value, "seat": self.seat,
                             "move": self.move.to_dict()}
        if self.timeout:
            out["timeout"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MoveEntry:
        return cls(_seat(data), Move.from_dict(data["move"]), bool(data.get("timeout")))


Entry: TypeAlias = (CreateEntry | SitEntry | VacateEntry | StandInEntry | BackEntry | StartEntry
                    | DealEntry | MoveEntry)

_READERS: dict[str, Callable[[dict[str, Any]], Entry]] = {
    EntryKind.CREATE: CreateEntry.from_dict,
    EntryKind.SIT: SitEntry.from_dict,
    EntryKind.VACATE: VacateEntry.from_dict,
    EntryKind.STAND_IN: StandInEntry.from_dict,
    EntryKind.BACK: BackEntry.from_dict,
    EntryKind.START: StartEntry.from_dict,
    EntryKind.DEAL: DealEntry.from_dict,
    EntryKind.MOVE: MoveEntry.from_dict,
}


def entry_from_dict(data: Any) -> Entry:
    """The entry a stored map holds (the inverse of ``to_dict``); ``ValueError`` naming what is
    wrong for anything else, so that a damaged log is reported, not half read."""
    if not isinstance(data, dict):
        raise ValueError(f"a table entry is an object, not {type(data).__name__}")
    kind = data.get("kind")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        raise ValueError(f"unknown table entry {kind!r}")
    try:
        return reader(data)
    except KeyError as exc:
        raise ValueError(f"a {kind} entry without {exc.args[0]!r}") from None
    except (TypeError, ValueError, RuleError) as exc:
        raise ValueError(f"a malformed {kind} entry: {exc}") from None


def _deal_dict(kind: EntryKind, deck: tuple[Card, ...] | None,
               dealer: int | None) -> DealMap:
    out: DealMap = {"kind": kind.value}
    if deck is not None:
        out["deck"] = [str(card) for card in deck]
        out["dealer"] = dealer
    return out


def _deal_fields(data: dict[str, Any]) -> tuple[tuple[Card, ...] | None, int | None]:
    deck = data.get("deck")
    if deck is None:
        return None, None
    if not isinstance(deck, list):
        raise ValueError("a deck is a list of cards")
    return check_deck(deck), _seat(data, "dealer")


def _seat(data: dict[str, Any], key: str = "seat") -> int:
    seat = data[key]
    if type(seat) is not int or not 0 <= seat < 3:
        raise ValueError(f"{key} {seat!r} is not 0, 1 or 2")
    return seat


def _text(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"{key} {value!r} is not a text")
    return value


def _text_or_none(data: dict[str, Any], key: str) -> str | None:
    return None if data.get(key) is None else _text(data, key)


def _count_or_none(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is not None and (type(value) is not int or value < 1):
        raise ValueError(f"{key} {value!r} is not a positive whole number")
    return value
