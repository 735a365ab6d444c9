"""Typed protocol messages: one frozen dataclass per message type, one registry per direction.

A message's wire form is a map with a ``type`` tag and its fields. ``parse_client`` (used by
the server) and ``parse_server`` (used by clients) turn a decoded map into a message, checking
field types and ignoring unknown fields; ``to_dict`` turns a message back into a map, leaving out
fields that are None. An absent field and an explicit null mean the same thing.

Client requests may carry an ``id`` (int or str); the reply echoes it as ``id`` and an error
as ``ref``. ``view``, ``event``, ``legal``, ``result``, ``options`` and ``move`` are plain maps
defined by the engine (docs/RECORD.md); their types are ``tongits.engine.wire``'s, and a field
of one is checked to be a map, no more (the engine's readers, ``SeatView.from_dict`` and the
like, check the rest). The maps the protocol itself defines (``maps``: a ``seats`` entry, a
table of the lobby, the standings, a hand's result, a seat's change) are checked whole against
their ``TypedDict``, every key and value: a client reads a message's maps as typed, where they
arrive, without checking them again.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from enum import StrEnum
from typing import (
    Any,
    ClassVar,
    Literal,
    NotRequired,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
    overload,
)

from tongits.engine.errors import shown
from tongits.engine.wire import MoveMap, RecordMap, StepMap, ViewMap

from .errors import ErrorCode, ProtocolError
from .limits import check_request, is_request_id
from .maps import (
    ErrorMap,
    HandResultMap,
    LadderEntryMap,
    OkMap,
    SeatChangeMap,
    SeatMap,
    StandingsMap,
    StateMap,
    TableInfoMap,
)
from .message_maps import (
    AddBotMap,
    ChatLineMap,
    ChatMap,
    CreateTableMap,
    GetStandingsMap,
    HandResultMessageMap,
    HelloMap,
    JoinedMap,
    JoinMap,
    LadderStandingsMap,
    LeaveMap,
    ListTablesMap,
    MatchOverMap,
    MoveRequestMap,
    NextHandMap,
    PingMap,
    PongMap,
    QueueMap,
    RegisteredMap,
    RegisterMap,
    RemoveBotMap,
    SeatUpdateMap,
    SpectateMap,
    StartMap,
    SyncMap,
    TablesMap,
    UnqueueMap,
    WelcomeMap,
)

PROTOCOL_VERSION = 1
#: Additions since 1.0 (all optional, so a 1.0 peer ignores them): ``welcome.minor``,
#: ``welcome.options``; 1.2 adds the ladder (``register``, ``hello.account``, ``queue``,
#: ``unqueue``, ``standings``); 1.3 adds ``seat_update.deadline``; 1.4
#: ``hand_result.result.why``; 1.5 ``chat.n``, ``chat.earlier`` and the error ``chat_too_fast``.
PROTOCOL_MINOR = 5

JSONMap = dict[str, Any]
RequestId = int | str


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Base of all messages; ``TYPE`` is the wire tag."""

    TYPE: ClassVar[str]

    def __post_init__(self) -> None:
        for f in _spec(type(self)):
            value = getattr(self, f.name)
            if not f.check(value):
                raise ProtocolError(
                    ErrorCode.BAD_FIELD,
                    f"{self.TYPE}.{f.name} must be {_describe(f.hint)}, "
                    f"got {_WIRE_TYPES.get(type(value), 'something else')}",
                )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientMessage(Message):
    """A request from client to server."""

    id: RequestId | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerMessage(Message):
    """A message from server to client."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply(ServerMessage):
    """A server message answering one request, whose ``id`` it echoes."""

    id: RequestId | None = None


# Client → server.


class PlayerKind(StrEnum):
    """Who plays a seat: ``hello.kind`` (what a client says it is) and the ``player`` of a
    ``seats`` entry (what everyone is shown)."""

    HUMAN = "human"
    BOT = "bot"


class SeatChange(StrEnum):
    """What just happened to a seat: the ``change`` of a ``seat_update``."""

    SAT = "sat"
    LEFT = "left"
    AWAY = "away"
    BACK = "back"
    REPLACED = "replaced"
    STAND_IN = "stand_in"


@dataclass(frozen=True, slots=True, kw_only=True)
class Hello(ClientMessage):
    """``token`` resumes a seat; ``seq`` is the last ``seq`` the client saw at that table, so
    that the resumed ``state`` lists exactly the events it missed. ``auto_next`` (since 1.1):
    the client counts as having asked for the next hand as soon as a hand ends. ``password`` is
    the server password, when the server has one (``bad_password`` otherwise). ``heartbeat``
    (since 1.1): the client sends a message (a ``ping``) at least every that many seconds, and
    the server may treat it as gone after three periods of silence (``keepalive``). ``account``
    (since 1.2): the secret key ``register`` gave; the connection then plays as that account,
    under its name, and may ``queue`` for the ladder."""

    TYPE = "hello"
    version: int
    name: str
    kind: Literal["human", "bot"]  # a ``PlayerKind``'s value
    token: str | None = None
    seq: int | None = None
    auto_next: bool = False
    password: str | None = field(default=None, repr=False)
    heartbeat: float | None = None
    account: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ListTables(ClientMessage):
    """One page of the lobby (since 1.1): ``limit`` tables from ``offset`` in the lobby's order
    (tables with a free seat and no match yet first, then the others, oldest first); ``open``
    lists only the first kind. The server caps ``limit`` (``MAX_PAGE``) and the page's size.
    ``table`` (since 1.1) lists only that table (none if it is closed or unknown): a client
    reads its own table's entry in one request, however many tables the lobby holds."""

    TYPE = "list_tables"
    offset: int = 0
    limit: int | None = None
    open: bool = False
    table: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTable(ClientMessage):
    """``timer`` is seconds per turn, 0 for none, None for the server's default; ``bots`` seats
    that many server bots at once; ``auto_start`` False waits for the owner's ``start``.
    ``hands`` and ``target`` (since 1.1) declare the match's length (``MatchLength``).
    ``rematch`` and ``token`` (since 1.1): another match for the players of the finished match
    at table ``rematch``, the caller proving it sat there with that seat's ``token``. The first
    such request makes a table with the old one's settings (its own fields are then ignored);
    the others of the old table are seated at that same table, so friends stay together."""

    TYPE = "create_table"
    name: str
    options: JSONMap = field(default_factory=dict)
    timer: float | None = None
    private: bool = False
    bots: int = 0
    auto_start: bool = True
    hands: int | None = None
    target: int | None = None
    rematch: str | None = None
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Join(ClientMessage):
    TYPE = "join"
    table: str
    seat: int | None = None
    code: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Spectate(ClientMessage):
    TYPE = "spectate"
    table: str
    code: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Leave(ClientMessage):
    TYPE = "leave"


@dataclass(frozen=True, slots=True, kw_only=True)
class AddBot(ClientMessage):
    TYPE = "add_bot"
    seat: int
    policy: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveBot(ClientMessage):
    TYPE = "remove_bot"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Start(ClientMessage):
    TYPE = "start"


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveRequest(ClientMessage):
    """A seat asks to play ``move``, a hand-record action without its seat, e.g.
    ``{"action": "draw"}`` (named apart from the engine's ``Move``, which it carries)."""

    TYPE = "move"
    move: Mapping[str, Any]  # checked by the server (``Move.from_dict``), whoever sent it


@dataclass(frozen=True, slots=True, kw_only=True)
class Chat(ClientMessage):
    TYPE = "chat"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Ping(ClientMessage):
    TYPE = "ping"


@dataclass(frozen=True, slots=True, kw_only=True)
class NextHand(ClientMessage):
    TYPE = "next_hand"


@dataclass(frozen=True, slots=True, kw_only=True)
class Sync(ClientMessage):
    """Since 1.1: ask for the table as it is now (answered ``ok``, then one ``state``)."""

    TYPE = "sync"


@dataclass(frozen=True, slots=True, kw_only=True)
class Register(ClientMessage):
    """Since 1.2: make a ladder account named ``name``; answered ``registered`` with its key."""

    TYPE = "register"
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Queue(ClientMessage):
    """Since 1.2: wait for a rated ladder match (needs ``hello.account``); answered ``ok``,
    then, when the matchmaker seats the connection, ``joined`` as for a ``join``."""

    TYPE = "queue"


@dataclass(frozen=True, slots=True, kw_only=True)
class Unqueue(ClientMessage):
    """Since 1.2: stop waiting for a ladder match (``ok`` even if not queued)."""

    TYPE = "unqueue"


@dataclass(frozen=True, slots=True, kw_only=True)
class GetStandings(ClientMessage):
    """Since 1.2: one page of the ladder, best first; answered ``standings``."""

    TYPE = "standings"
    offset: int = 0
    limit: int | None = None


# Server → client.


@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome(Reply):
    """``options`` (since 1.1): every table option ``create_table`` accepts and its values
    (``tongits.engine.option_choices``), so a client can offer them without knowing them."""

    TYPE = "welcome"
    version: int
    server: str
    capabilities: list[str]
    minor: int | None = None
    options: list[JSONMap] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Tables(Reply):
    """``total``: the tables the request's filter matches; ``next``: the ``offset`` of the next
    page, absent on the last one (both since 1.1)."""

    TYPE = "tables"
    tables: list[TableInfoMap]
    total: int | None = None
    offset: int | None = None
    next: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Joined(Reply):
    """``seat`` is None for a spectator; ``token`` resumes the session after a disconnect;
    ``code`` is the join code of a private table, sent to its creator with ``invite``, the link
    that opens the table's seat (``tongits connect LINK``, protocol/transport.py)."""

    TYPE = "joined"
    table: str
    seat: int | None = None
    token: str | None = None
    spectator: bool
    code: str | None = None
    invite: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class State(ServerMessage):
    """The table as one seat (or a spectator) sees it; ``deadline`` is seconds from now.
    ``missed`` is set only on the state that answers a resume: the events of the current hand
    after the client's ``seq`` (the whole hand's history without one). ``hand`` (since 1.1) is
    the hand's number in the match, from 1. ``standings`` (since 1.1) is set only on a state
    that catches a client up (a resume, a ``sync``, a spectator's first): the match so far, as
    in ``hand_result``, once a hand has been settled (else the client would learn it only at
    the next ``hand_result``)."""

    TYPE = "state"
    table: str
    seq: int
    hand: int | None = None
    view: ViewMap
    event: StepMap | None = None
    legal: list[MoveMap] | None = None
    deadline: float | None = None
    seats: list[SeatMap]
    missed: list[StepMap] | None = None
    standings: StandingsMap | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HandResult(ServerMessage):
    """A hand has ended. ``last`` (since 1.1) is True on the last hand of a match with a
    declared length: ``match_over`` follows and the table closes, so nobody sends
    ``next_hand``; absent otherwise. ``next_deal`` (since 1.1): seconds until the table deals
    the next hand by itself, on its timer, if not every player has asked before; absent when
    nothing deals it but the players (no timer) or no hand follows (the match is over).
    ``record`` (since 1.1): the hand's record (docs/RECORD.md) with the seats' names, for the
    players to keep."""

    TYPE = "hand_result"
    table: str
    seq: int
    result: HandResultMap
    standings: StandingsMap
    last: bool | None = None
    next_deal: float | None = None
    record: RecordMap | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchOver(ServerMessage):
    """Since 1.1: the match reached its declared length (``reason``: ``hands`` or ``target``);
    ``standings`` is the final ledger. The table closes: everyone is back in the lobby. Since
    1.2, a ladder match's ``forfeits``: the seats that forfeited (ranked last), when any did."""

    TYPE = "match_over"
    table: str
    reason: str
    standings: StandingsMap
    forfeits: list[int] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatLine(ServerMessage):
    """A chat line said at a table; ``seat`` is None for a spectator. ``n`` (since 1.5): the
    line's number at its table, from 1; ``earlier`` (since 1.5): said before the recipient
    joined, began watching or came back (sent right after its state: what it missed)."""

    TYPE = "chat"
    table: str
    seat: int | None = None
    name: str
    text: str
    n: int | None = None
    earlier: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatUpdate(ServerMessage):
    """``change`` says what just happened, when it concerns one seat: ``{"seat": 1, "change":
    "sat" | "left" | "away" | "back" | "replaced" | "stand_in"}``. ``deadline`` (since 1.3):
    seconds left to the human to act, as in ``state``: a player back from a stand-in on its
    own turn has a whole turn again, and the other screens learn it here (no ``state`` is
    sent them: nothing was played)."""

    TYPE = "seat_update"
    table: str
    seats: list[SeatMap]
    change: SeatChangeMap | None = None
    deadline: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Registered(Reply):
    """Since 1.2: the new account's ``name`` and its secret ``key`` (shown once: the server
    keeps only its digest)."""

    TYPE = "registered"
    name: str
    key: str = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class LadderStandings(Reply):
    """Since 1.2: ``players`` from ``offset`` in ladder order (``rank``, ``name``, ``rating``,
    ``mu``, ``sigma``, ``matches``, ``anchor``), ``total`` accounts, ``next`` the offset of the
    next page (absent on the last)."""

    TYPE = "standings"
    players: list[LadderEntryMap]
    total: int
    offset: int
    next: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Pong(Reply):
    TYPE = "pong"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ok(Reply):
    TYPE = "ok"


@dataclass(frozen=True, slots=True, kw_only=True)
class Error(ServerMessage):
    """Built by ``errors.error_message``; ``ref`` is the ``id`` of the failed request."""

    TYPE = "error"
    code: str
    number: int
    message: str
    ref: RequestId | None = None


CLIENT_MESSAGES: Mapping[str, type[ClientMessage]] = {
    cls.TYPE: cls
    for cls in (
        Hello,
        ListTables,
        CreateTable,
        Join,
        Spectate,
        Leave,
        AddBot,
        RemoveBot,
        Start,
        MoveRequest,
        Chat,
        Ping,
        NextHand,
        Sync,
        Register,
        Queue,
        Unqueue,
        GetStandings,
    )
}
SERVER_MESSAGES: Mapping[str, type[ServerMessage]] = {
    cls.TYPE: cls
    for cls in (
        Welcome,
        Tables,
        Joined,
        State,
        HandResult,
        MatchOver,
        ChatLine,
        SeatUpdate,
        Pong,
        Ok,
        Error,
        Registered,
        LadderStandings,
    )
}

_M = TypeVar("_M", bound=Message)


def parse_client(d: dict[Any, Any]) -> ClientMessage:
    """The client request in ``d``, its every value within the limits of ``limits`` (the edge
    of the server); raises ``ProtocolError`` with ``ref`` set to its id."""
    check_request(d)
    return _parse(d, CLIENT_MESSAGES)


def parse_server(d: Mapping[Any, Any]) -> ServerMessage:
    """The server message in ``d``; raises ``ProtocolError``."""
    return _parse(d, SERVER_MESSAGES)


@overload
def to_dict(msg: Hello) -> HelloMap: ...
@overload
def to_dict(msg: ListTables) -> ListTablesMap: ...
@overload
def to_dict(msg: CreateTable) -> CreateTableMap: ...
@overload
def to_dict(msg: Join) -> JoinMap: ...
@overload
def to_dict(msg: Spectate) -> SpectateMap: ...
@overload
def to_dict(msg: Leave) -> LeaveMap: ...
@overload
def to_dict(msg: AddBot) -> AddBotMap: ...
@overload
def to_dict(msg: RemoveBot) -> RemoveBotMap: ...
@overload
def to_dict(msg: Start) -> StartMap: ...
@overload
def to_dict(msg: MoveRequest) -> MoveRequestMap: ...
@overload
def to_dict(msg: Chat) -> ChatMap: ...
@overload
def to_dict(msg: Ping) -> PingMap: ...
@overload
def to_dict(msg: NextHand) -> NextHandMap: ...
@overload
def to_dict(msg: Sync) -> SyncMap: ...
@overload
def to_dict(msg: Register) -> RegisterMap: ...
@overload
def to_dict(msg: Queue) -> QueueMap: ...
@overload
def to_dict(msg: Unqueue) -> UnqueueMap: ...
@overload
def to_dict(msg: GetStandings) -> GetStandingsMap: ...
@overload
def to_dict(msg: Welcome) -> WelcomeMap: ...
@overload
def to_dict(msg: Tables) -> TablesMap: ...
@overload
def to_dict(msg: Joined) -> JoinedMap: ...
@overload
def to_dict(msg: State) -> StateMap: ...
@overload
def to_dict(msg: HandResult) -> HandResultMessageMap: ...
@overload
def to_dict(msg: MatchOver) -> MatchOverMap: ...
@overload
def to_dict(msg: ChatLine) -> ChatLineMap: ...
@overload
def to_dict(msg: SeatUpdate) -> SeatUpdateMap: ...
@overload
def to_dict(msg: Registered) -> RegisteredMap: ...
@overload
def to_dict(msg: LadderStandings) -> LadderStandingsMap: ...
@overload
def to_dict(msg: Pong) -> PongMap: ...
@overload
def to_dict(msg: Ok) -> OkMap: ...
@overload
def to_dict(msg: Error) -> ErrorMap: ...
@overload
def to_dict(msg: Message) -> Mapping[str, Any]: ...
def to_dict(msg: Message) -> Any:
    """The wire map of ``msg``: its ``type`` and every field that is not None. Its type is the
    message class's map (``message_maps``, one overload per class; a message whose class is
    not known statically gets a plain mapping), checked against the class by a test."""
    d: JSONMap = {"type": msg.TYPE}
    for name in _field_names(type(msg)):
        value = getattr(msg, name)
        if value is not None:
            d[name] = value
    return d


def ok_message(ref: RequestId | None) -> OkMap:
    """``to_dict(Ok(id=ref))``, without making and checking an ``Ok``: ``ref`` is the id of a
    request already parsed, and the server answers every move with one."""
    return {"type": "ok"} if ref is None else {"type": "ok", "id": ref}


_FIELD_NAMES: dict[type[Message], tuple[str, ...]] = {}


def _field_names(cls: type[Message]) -> tuple[str, ...]:
    """The field names of a message class, looked up once (``fields`` walks the class's
    dataclass fields anew on every call, and the server makes an ``ok`` for every move)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _parse(d: Mapping[Any, Any], registry: Mapping[str, type[_M]]) -> _M:
    ref = d.get("id")
    if not is_request_id(ref):
        ref = None
    kind = d.get("type")
    if kind is None:
        raise ProtocolError(ErrorCode.BAD_FIELD, 'message has no "type"', ref)
    cls = registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown type {shown(kind)}", ref)
    kwargs: dict[str, Any] = {}
    for f in _spec(cls):
        value = d.get(f.name)
        if value is not None:
            kwargs[f.name] = value
        elif f.required:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"{kind}.{f.name} is missing", ref)
    try:
        return cls(**kwargs)
    except ProtocolError as error:
        error.ref = ref
        raise


_Check = Callable[[object], bool]


@dataclass(frozen=True, slots=True)
class _Field:
    """A message field as parsing and validation use it: ``check`` tells whether a decoded
    value fits the type ``hint``."""

    name: str
    hint: Any
    check: _Check
    required: bool


_SPECS: dict[type[Message], tuple[_Field, ...]] = {}


def _spec(cls: type[Message]) -> tuple[_Field, ...]:
    """The fields of ``cls`` with their checks, built once per class (every message is
    validated, so this is on the path of every request and reply)."""
    spec = _SPECS.get(cls)
    if spec is None:
        hints = get_type_hints(cls)
        spec = _SPECS[cls] = tuple(
            _Field(f.name, hints[f.name], _checker(hints[f.name]),
                   f.default is MISSING and f.default_factory is MISSING)
            for f in fields(cls)
        )
    return spec


def _checker(hint: Any) -> _Check:
    """A function telling whether a value decoded from JSON or msgpack fits the type ``hint``
    (a bool is not a number)."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return _union_checker(get_args(hint))
    if origin is Literal:
        allowed = get_args(hint)
        return lambda value: any(type(value) is type(arg) and value == arg for arg in allowed)
    if origin is list:
        (item,) = get_args(hint)
        check_item = _checker(item)
        return lambda value: isinstance(value, list) and all(check_item(v) for v in value)
    if hint in CHECKED_MAPS:
        return _map_checker(hint)
    if origin is dict and get_args(hint)[1] is not Any:
        key, item = (_checker(arg) for arg in get_args(hint))
        return lambda value: isinstance(value, dict) and all(
            key(k) and item(v) for k, v in value.items())
    if origin is dict or origin is Mapping or is_typeddict(hint):
        return lambda value: isinstance(value, dict)
    if hint is type(None):
        return lambda value: value is None
    if hint is float:
        return lambda value: isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return lambda value: type(value) is int or (isinstance(value, int)
                                                    and not isinstance(value, bool))
    return lambda value: isinstance(value, hint)


def _union_checker(args: tuple[Any, ...]) -> _Check:
    """The check of a value that fits one of the types ``args`` (None among them: may be
    None)."""
    checks = tuple(_checker(arg) for arg in args if arg is not type(None))
    optional = len(checks) < len(args)
    if len(checks) == 1:
        (only,) = checks
        return (lambda value: value is None or only(value)) if optional else only
    if len(checks) == 2:
        first, second = checks
        return lambda value: (optional and value is None) or first(value) or second(value)
    return lambda value: (optional and value is None) or any(c(value) for c in checks)


#: The protocol's own maps (``maps``), checked whole where a message carrying one is parsed,
#: each with its name in docs/PROTOCOL.md for the error that says one is wrong.
CHECKED_MAPS: Mapping[Any, str] = {
    SeatMap: "seats entry", SeatChangeMap: "seat change", StandingsMap: "standings",
    HandResultMap: "result", TableInfoMap: "table entry", LadderEntryMap: "ladder entry",
}


def _map_checker(typed: Any) -> _Check:
    """A check that a value is a map with every required key of the ``TypedDict`` ``typed``,
    each key it has (of those ``typed`` names; others are ignored, as unknown fields are) of
    its type. (``__required_keys__`` misses a postponed ``NotRequired``: the hints keep it.)"""
    hints = get_type_hints(typed, include_extras=True)
    required = tuple((name, _checker(hint)) for name, hint in hints.items()
                     if get_origin(hint) is not NotRequired)
    optional = tuple((name, _checker(get_args(hint)[0])) for name, hint in hints.items()
                     if get_origin(hint) is NotRequired)
    absent = object()

    def check(value: object) -> bool:
        if not isinstance(value, dict):
            return False
        for name, check_value in required:
            item = value.get(name, absent)
            if item is absent or not check_value(item):
                return False
        for name, check_value in optional:
            item = value.get(name, absent)
            if item is not absent and not check_value(item):
                return False
        return True

    return check


def _describe(hint: Any) -> str:
    if hint in CHECKED_MAPS:
        return f"a {CHECKED_MAPS[hint]} map (docs/PROTOCOL.md)"
    if get_origin(hint) in (Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in get_args(hint))
    if get_origin(hint) is Literal:
        return " or ".join(shown(arg) for arg in get_args(hint))
    if get_origin(hint) is list:
        return f"list of {_describe(get_args(hint)[0])}"
    if get_origin(hint) in (dict, Mapping) or is_typeddict(hint):
        return "map"
    return _WIRE_TYPES.get(hint, str(hint.__name__))


#: The types of decoded values, named as JSON and msgpack name them (never Python's names: a
#: client in another language sent a boolean, not a ``bool``).
_WIRE_TYPES: dict[Any, str] = {
    type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string",
    dict: "map", list: "list", bytes: "binary",
}
