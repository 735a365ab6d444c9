"""The wire forms of the engine's values: the maps that views, steps, melds, moves, results,
hand records, a match's state and a hand's review are sent and stored as (docs/PROTOCOL.md,
docs/RECORD.md).

Each is a ``TypedDict``, the return type of every function that builds one (the ``to_dict``s
and the shared view parts of ``view.py``), so that mypy fails when two builders of one map
disagree on a key or on what it holds. They are plain dicts at run time.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class MoveMap(TypedDict):
    """A move (``Move.to_dict``): the hand record's action, without ``seat``."""

    action: str
    cards: NotRequired[list[str]]
    card: NotRequired[str]
    meld: NotRequired[int]


class StepMap(MoveMap):
    """A step of a history (``Step.to_dict``): the move with its ``seat``, and ``auto`` (a
    fold the engine played) and ``timeout`` (a move the server played) when set."""

    seat: int
    auto: NotRequired[bool]
    timeout: NotRequired[bool]


class MeldMap(TypedDict):
    """A meld as a seat sees it (``MeldView.to_dict``): no ``cards`` (None) for another seat's
    secret meld before the hand is over; ``laid_off`` maps a card to the seat that laid it."""

    id: int
    owner: int
    secret: bool
    cards: list[str] | None
    laid_off: NotRequired[dict[str, int]]


class ResultMap(TypedDict):
    """How a hand ended (``Result.to_dict``), as in the hand record."""

    end: str
    winner: int | None
    counts: list[int]
    burned: list[int]
    challengers: list[int]
    chips: list[int]


class ViewFixed(TypedDict):
    """The entries of a view that stay the same for the whole hand."""

    dealer: int
    options: dict[str, Any]


class ViewBase(TypedDict):
    """The entries every seat's view of one state has alike but ``melds`` and ``history``."""

    hand_sizes: list[int]
    stock: int
    discards: list[str]
    opened: list[bool]
    blocked: list[bool]
    to_act: int | None
    phase: str
    turn: int
    caller: int | None
    result: NotRequired[ResultMap]
    revealed: NotRequired[list[list[str]]]


class ViewMap(ViewFixed, ViewBase):
    """A seat's (or a spectator's, ``seat`` None) whole view (``SeatView.to_dict``,
    ``view.seat_view_dict``); ``count`` is the count of ``hand`` (RULES.md §7), None for a
    spectator."""

    seat: int | None
    hand: list[str]
    count: int | None
    melds: list[MeldMap]
    history: list[StepMap]


class ViewShared(ViewFixed, ViewBase):
    """The entries every seat's view of one state has alike (``ViewParts.shared``) while a
    secret meld on the table makes the seats' melds and histories differ."""


class ViewSharedWhole(ViewShared):
    """``ViewShared`` when no secret meld is on the table: the melds and the history too."""

    melds: list[MeldMap]
    history: list[StepMap]


class ViewOwn(TypedDict):
    """A seat's own entries of its view (``ViewParts.own``), no key in common with the shared
    ones: ``melds`` and (``view.seat_view_parts``) ``history`` when those are a
    ``ViewShared``, not a ``ViewSharedWhole``."""

    seat: int | None
    hand: list[str]
    count: int | None
    melds: NotRequired[list[MeldMap]]
    history: NotRequired[list[StepMap]]


class RecordMap(TypedDict):
    """A hand record (``record.hand_record``; docs/RECORD.md)."""

    format: str
    options: dict[str, Any]
    dealer: int
    deck: list[str]
    actions: list[StepMap]
    result: NotRequired[ResultMap]
    names: NotRequired[list[str]]


class MatchMap(TypedDict):
    """A match between hands (``Match.to_dict``): what ``Match.from_dict`` rebuilds it from."""

    options: dict[str, Any]
    seed: int | str
    hands_played: int
    dealer: int
    ledger: list[int]
    pot: int
    streak_seat: int | None
    streak: int
    wins: list[int]


class DecisionMap(TypedDict):
    """One reviewed decision (``review.Decision.to_dict``): the move played, the best one, the
    chips lost by the choice with the half-width of its 95 % interval (``None`` over a single
    world), whether it is marked costly, whether the best move begins a Tongits, and each
    valued move's value."""

    index: int
    played: MoveMap
    best: MoveMap
    loss: float
    margin: float | None
    costly: bool
    tongits: bool
    values: dict[str, float]


class SeatReviewMap(TypedDict):
    """A seat's review of one hand (``review.SeatReview.to_dict``; ``tongits review --json``)."""

    seat: int
    decisions: list[DecisionMap]
    total_loss: float
