"""The wire map of each message (``messages.to_dict``), one ``TypedDict`` per message class.

``to_dict`` is one generic function (the ``type`` tag and every field that is not None), and
its overloads give each message class its map here, so that a reader of ``to_dict(msg)`` is
checked by mypy against the keys and types the message really has. A field that may be None
is ``NotRequired`` (``to_dict`` leaves it out); every other field, defaults included, is
always there. tests/test_protocol_messages.py checks each map against its message class's
fields, so a field added to a message without its map (or the other way round) fails there.

``ok``, ``error`` and ``state`` have their maps in ``maps`` (the server also builds them by
hand, ``ok_message``, ``error_message`` and the fan-out).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from tongits.engine.wire import RecordMap

from .maps import (
    HandResultMap,
    LadderEntryMap,
    SeatChangeMap,
    SeatMap,
    StandingsMap,
    TableInfoMap,
)


class WithIdMap(TypedDict):
    """The ``id`` a client request may carry, and the reply that echoes it."""

    id: NotRequired[int | str]


class HelloMap(WithIdMap):
    type: Literal["hello"]
    version: int
    name: str
    kind: Literal["human", "bot"]
    token: NotRequired[str]
    seq: NotRequired[int]
    auto_next: bool
    password: NotRequired[str]
    heartbeat: NotRequired[float]
    account: NotRequired[str]


class ListTablesMap(WithIdMap):
    type: Literal["list_tables"]
    offset: int
    limit: NotRequired[int]
    open: bool
    table: NotRequired[str]


class CreateTableMap(WithIdMap):
    type: Literal["create_table"]
    name: str
    options: dict[str, Any]
    timer: NotRequired[float]
    private: bool
    bots: int
    auto_start: bool
    hands: NotRequired[int]
    target: NotRequired[int]
    rematch: NotRequired[str]
    token: NotRequired[str]


class JoinMap(WithIdMap):
    type: Literal["join"]
    table: str
    seat: NotRequired[int]
    code: NotRequired[str]


class SpectateMap(WithIdMap):
    type: Literal["spectate"]
    table: str
    code: NotRequired[str]


class LeaveMap(WithIdMap):
    type: Literal["leave"]


class AddBotMap(WithIdMap):
    type: Literal["add_bot"]
    seat: int
    policy: NotRequired[str]


class RemoveBotMap(WithIdMap):
    type: Literal["remove_bot"]
    seat: int


class StartMap(WithIdMap):
    type: Literal["start"]


class MoveRequestMap(WithIdMap):
    type: Literal["move"]
    move: Mapping[str, Any]


class ChatMap(WithIdMap):
    type: Literal["chat"]
    text: str


class PingMap(WithIdMap):
    type: Literal["ping"]


class NextHandMap(WithIdMap):
    type: Literal["next_hand"]


class SyncMap(WithIdMap):
    type: Literal["sync"]


class RegisterMap(WithIdMap):
    type: Literal["register"]
    name: str


class QueueMap(WithIdMap):
    type: Literal["queue"]


class UnqueueMap(WithIdMap):
    type: Literal["unqueue"]


class GetStandingsMap(WithIdMap):
    type: Literal["standings"]
    offset: int
    limit: NotRequired[int]


class WelcomeMap(WithIdMap):
    type: Literal["welcome"]
    version: int
    server: str
    capabilities: list[str]
    minor: NotRequired[int]
    options: NotRequired[list[dict[str, Any]]]


class TablesMap(WithIdMap):
    type: Literal["tables"]
    tables: list[TableInfoMap]
    total: NotRequired[int]
    offset: NotRequired[int]
    next: NotRequired[int]


class JoinedMap(WithIdMap):
    type: Literal["joined"]
    table: str
    seat: NotRequired[int]
    token: NotRequired[str]
    spectator: bool
    code: NotRequired[str]
    invite: NotRequired[str]


class HandResultMessageMap(TypedDict):
    type: Literal["hand_result"]
    table: str
    seq: int
    result: HandResultMap
    standings: StandingsMap
    last: NotRequired[bool]
    next_deal: NotRequired[float]
    record: NotRequired[RecordMap]


class MatchOverMap(TypedDict):
    type: Literal["match_over"]
    table: str
    reason: str
    standings: StandingsMap
    forfeits: NotRequired[list[int]]


class ChatLineMap(TypedDict):
    type: Literal["chat"]
    table: str
    seat: NotRequired[int]
    name: str
    text: str
    n: NotRequired[int]
    earlier: NotRequired[bool]


class SeatUpdateMap(TypedDict):
    type: Literal["seat_update"]
    table: str
    seats: list[SeatMap]
    change: NotRequired[SeatChangeMap]
    deadline: NotRequired[float]


class RegisteredMap(WithIdMap):
    type: Literal["registered"]
    name: str
    key: str


class LadderStandingsMap(WithIdMap):
    type: Literal["standings"]
    players: list[LadderEntryMap]
    total: int
    offset: int
    next: NotRequired[int]


class PongMap(WithIdMap):
    type: Literal["pong"]
