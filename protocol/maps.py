"""The maps inside server messages that the protocol itself defines (docs/PROTOCOL.md): a
``seats`` entry, a ``seat_update``'s ``change``, the match's ``standings``, a ``hand_result``'s
``result``, a table of the lobby's ``tables``, and the ``state`` message the server builds by
hand (its fan-out encodes it in parts). The engine's maps (view, step, meld, move) are
``tongits.engine.wire``'s.

Each is a ``TypedDict``, the type of every builder and of the message field that carries it,
so that mypy fails when two builders of one map disagree. They are plain dicts at run time; a
message parsed from the wire is checked to be a map, no more (its reader checks the rest).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NotRequired, TypedDict

from tongits.engine import ChipItemMap, Match
from tongits.engine.wire import MoveMap, ResultMap, StepMap, ViewMap


class SeatMap(TypedDict):
    """One seat as ``seats`` shows it; an empty seat has only ``seat`` and ``player`` (None).
    ``grace``: seconds left of an away human's grace period (never in the lobby's listing)."""

    seat: int
    player: str | None
    name: NotRequired[str]
    connected: NotRequired[bool]
    timeouts: NotRequired[int]
    policy: NotRequired[str | None]
    remote: NotRequired[Literal[True]]
    stand_in: NotRequired[Literal[True]]
    away: NotRequired[Literal[True]]
    grace: NotRequired[float]
    owner: NotRequired[Literal[True]]


class TableInfoMap(TypedDict):
    """A table as the lobby's ``tables`` lists it: its seats (no ``grace`` countdown), how
    many players of each kind and spectators, its options and timer, and how far its match
    has gone (``hands`` settled, ``match_length`` declared: ``{}`` for an open-ended one; a
    1.0 server sends none)."""

    table: str
    name: str
    seats: list[SeatMap]
    players: int
    humans: int
    bots: int
    spectators: int
    options: dict[str, Any]
    timer: float
    private: bool
    started: bool
    hands: int
    match_length: NotRequired[dict[str, int]]  # since 1.1


class OkMap(TypedDict):
    """An ``ok`` reply (``messages.ok_message``)."""

    type: Literal["ok"]
    id: NotRequired[int | str]


class ErrorMap(TypedDict):
    """An ``error`` (``errors.error_message``): ``ref`` is the failed request's ``id``."""

    type: Literal["error"]
    code: str
    number: int
    message: str
    ref: NotRequired[int | str]


class SeatChangeMap(TypedDict):
    """A ``seat_update``'s ``change``: what just happened to one seat (a ``SeatChange``)."""

    seat: int
    change: str


class LadderEntryMap(TypedDict):
    """One account of a ladder ``standings`` reply: its rank (1 best), name, conservative
    rating (``mu - 3 sigma``), openskill ``mu`` and ``sigma``, rated matches, and the policy of
    an anchor account (a server bot)."""

    rank: int
    name: str
    rating: float
    mu: float
    sigma: float
    matches: int
    anchor: NotRequired[str]


class StandingsMap(TypedDict):
    """The match so far: hands settled, chips and wins per seat, the pot and, once a hand has
    been dealt, what the last hand took from the pot and the next dealer."""

    hands: int
    chips: list[int]
    wins: list[int]
    pot: int
    names: list[str | None]
    pot_taken: NotRequired[int]
    dealer: NotRequired[int]


def standings_map(match: Match | None, names: Sequence[str | None],
                  pot_taken: int = 0) -> StandingsMap:
    """The standings of ``match`` (None: not started) with the seats' ``names``; ``pot_taken``:
    what the last hand took from the pot. The one builder of the map, for a server's tables
    and for the client's offline game alike."""
    if match is None:
        return {"hands": 0, "chips": [0, 0, 0], "wins": [0, 0, 0], "pot": 0,
                "names": list(names)}
    return {
        "hands": match.hands_played,
        "chips": list(match.ledger),
        "wins": list(match.wins),
        "pot": match.pot,
        "pot_taken": pot_taken,
        "dealer": match.dealer,
        "names": list(names),
    }


class HandResultMap(ResultMap):
    """A ``hand_result``'s ``result``: the engine's, with every seat's cards (sorted), what
    the winner took from the pot and (1.4) why each seat's chips are what they are."""

    hands: list[list[str]]
    pot_taken: int
    why: NotRequired[list[list[ChipItemMap]]]


class StateHead(TypedDict):
    """What every recipient's ``state`` of one change has alike: all but the view."""

    type: Literal["state"]
    table: str
    seq: int
    hand: NotRequired[int]  # since 1.1: the server always sends it, a 1.0 server never did
    seats: list[SeatMap]
    deadline: NotRequired[float]


class StateMap(StateHead):
    """A whole ``state`` message for one recipient."""

    view: ViewMap
    event: NotRequired[StepMap]
    legal: NotRequired[list[MoveMap]]
    missed: NotRequired[list[StepMap]]
    standings: NotRequired[StandingsMap]
