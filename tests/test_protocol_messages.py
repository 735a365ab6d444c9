"""Typed messages and error codes: round trips, validation, registries, unique codes."""

from __future__ import annotations

import dataclasses
import re
import types
from pathlib import Path
from typing import (
    Any,
    Literal,
    NotRequired,
    Union,
    cast,
    get_args,
    get_origin,
    get_overloads,
    get_type_hints,
)

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tongits.engine import Hand, deck_for, seat_view
from tongits.engine.wire import MoveMap
from tongits.protocol import (
    CLIENT_MESSAGES,
    PROTOCOL_VERSION,
    SERVER_MESSAGES,
    AddBot,
    Chat,
    ChatLine,
    Codec,
    CreateTable,
    Error,
    ErrorCode,
    GetStandings,
    HandResult,
    Hello,
    Join,
    Joined,
    LadderStandings,
    Leave,
    ListTables,
    MatchOver,
    Message,
    Mode,
    MoveRequest,
    NextHand,
    Ok,
    Ping,
    Pong,
    ProtocolError,
    Queue,
    Register,
    Registered,
    RemoveBot,
    SeatUpdate,
    Spectate,
    Start,
    State,
    Sync,
    Tables,
    Unqueue,
    Welcome,
    error_message,
    error_number,
    parse_client,
    parse_server,
    to_dict,
)
from tongits.protocol.maps import SeatMap, standings_map

MOVES: list[MoveMap] = [
    {"action": "draw"},
    {"action": "pick", "cards": ["7h", "7s"]},
    {"action": "pick", "meld": 3},
    {"action": "meld", "cards": ["4c", "5c", "6c"]},
    {"action": "secret", "cards": ["Qs", "Qh", "Qd"]},
    {"action": "sapaw", "card": "8d", "meld": 3},
    {"action": "discard", "card": "Kd"},
    {"action": "call"},
    {"action": "challenge"},
    {"action": "fold"},
]
SEATS: list[SeatMap] = [{"seat": 0, "name": "Ana", "player": "human", "connected": True}]
#: A view of a hand just dealt, as the server sends it.
VIEW = seat_view(Hand(deck_for("messages", 0), 0), 1).to_dict()
STANDINGS = standings_map(None, ["Ana", "Ben", None])

CLIENT_EXAMPLES: list[Message] = [
    Hello(version=PROTOCOL_VERSION, name="Ana", kind="human", id=1),
    Hello(version=1, name="bot-1", kind="bot", token="s3cret"),
    Hello(version=1, name="bot-2", kind="bot", auto_next=True),
    ListTables(id="lt"),
    CreateTable(name="Friday", options={"jokers": False}, timer=30, private=True, bots=2),
    CreateTable(name="Quick", timer=0.5),
    CreateTable(name="Ten", hands=10, target=100),
    Join(table="t1", seat=2, code="ABCD", id=7),
    Join(table="t1"),
    Spectate(table="t1", code="ABCD"),
    Leave(),
    AddBot(seat=1, policy="greedy"),
    RemoveBot(seat=1),
    Start(),
    *(MoveRequest(move=move, id=n) for n, move in enumerate(MOVES)),
    Chat(text="Magandang gabi!"),
    Ping(id=99),
    NextHand(),
    Sync(id=3),
    Hello(version=1, name="Ana", kind="bot", account="k3y"),
    Register(name="Ana", id=20),
    Queue(id=21),
    Unqueue(),
    GetStandings(offset=20, limit=20),
]
SERVER_EXAMPLES: list[Message] = [
    Welcome(version=1, server="tongits/0.1", capabilities=["text", "resume"], id=1),
    Welcome(version=1, minor=1, server="tongits/0.1", capabilities=[]),
    Tables(tables=[{"table": "t1", "name": "Friday", "seats": SEATS, "players": 1, "humans": 1,
                    "bots": 0, "spectators": 0, "options": {}, "timer": 0.0, "private": False,
                    "started": False, "hands": 0, "match_length": {}}], id="lt"),
    Joined(table="t1", seat=0, token="s3cret", spectator=False, id=7),
    Joined(table="t1", spectator=True),
    State(
        table="t1",
        seq=12,
        view=VIEW,
        event={"seat": 1, "action": "draw"},
        legal=MOVES[:2],
        deadline=29.5,
        seats=SEATS,
    ),
    State(table="t1", seq=0, view=VIEW, seats=[]),
    State(table="t1", seq=3, hand=2, view=VIEW, seats=[], standings=STANDINGS),
    MatchOver(table="t1", reason="hands", standings=STANDINGS),
    MatchOver(table="t2", reason="hands", standings=STANDINGS, forfeits=[2]),
    HandResult(table="t1", seq=40, result={"end": "call", "winner": 0, "counts": [3, 9, 12],
                                           "burned": [], "challengers": [1],
                                           "chips": [4, -2, -2], "hands": [[], [], []],
                                           "pot_taken": 0},
               standings=STANDINGS),
    ChatLine(table="t1", seat=0, name="Ana", text="hi"),
    ChatLine(table="t1", name="Watcher", text="go"),
    SeatUpdate(table="t1", seats=SEATS),
    Pong(id=99),
    Ok(),
    Error(code="table_full", number=2004, message="all three seats are taken", ref=7),
    Registered(name="Ana", key="k3y", id=20),
    LadderStandings(players=[{"rank": 1, "name": "Ana", "rating": 0.5, "mu": 25.5,
                              "sigma": 8.3, "matches": 2}], total=3, offset=0, next=1),
]


def test_examples_cover_every_type() -> None:
    assert {type(m) for m in CLIENT_EXAMPLES} == set(CLIENT_MESSAGES.values())
    assert {type(m) for m in SERVER_EXAMPLES} == set(SERVER_MESSAGES.values())


@pytest.mark.parametrize("message", CLIENT_EXAMPLES, ids=repr)
def test_client_round_trip(message: Message) -> None:
    assert parse_client(dict(to_dict(message))) == message


@pytest.mark.parametrize("message", SERVER_EXAMPLES, ids=repr)
def test_server_round_trip(message: Message) -> None:
    assert parse_server(to_dict(message)) == message


@pytest.mark.parametrize("mode", [Mode.BINARY, Mode.TEXT])
def test_round_trip_through_codec(mode: Mode) -> None:
    sender, receiver = Codec(mode), Codec()
    for message in CLIENT_EXAMPLES:
        receiver.receive_data(sender.encode(to_dict(message)))
        decoded = receiver.next_message()
        assert decoded is not None
        assert parse_client(decoded) == message
    for message in SERVER_EXAMPLES:
        receiver.receive_data(sender.encode(to_dict(message)))
        decoded = receiver.next_message()
        assert decoded is not None
        assert parse_server(decoded) == message


def test_to_dict_omits_none() -> None:
    assert to_dict(Join(table="t1")) == {"type": "join", "table": "t1"}
    assert to_dict(Joined(table="t1", spectator=True, id=3)) == {
        "type": "joined",
        "table": "t1",
        "spectator": True,
        "id": 3,
    }


def test_null_means_absent() -> None:
    assert parse_client({"type": "join", "table": "t1", "seat": None}) == Join(table="t1")
    assert parse_client({"type": "create_table", "name": "x", "private": None}) == CreateTable(
        name="x"
    )


def test_unknown_fields_ignored() -> None:
    parsed = parse_client({"type": "ping", "id": 4, "extra": [1, 2], 5: "int key"})
    assert parsed == Ping(id=4)


def test_chat_differs_by_direction() -> None:
    assert parse_client({"type": "chat", "text": "hi"}) == Chat(text="hi")
    line = {"type": "chat", "table": "t1", "seat": 2, "name": "Ben", "text": "hi"}
    assert parse_server(line) == ChatLine(table="t1", seat=2, name="Ben", text="hi")


@pytest.mark.parametrize(
    ("parse", "d"),
    [
        (parse_client, {"type": "welcome", "version": 1, "server": "x", "capabilities": []}),
        (parse_server, {"type": "hello", "version": 1, "name": "a", "kind": "bot"}),
        (parse_client, {"type": "nonsense", "id": "r1"}),
        (parse_client, {"type": 3, "id": "r1"}),
    ],
)
def test_unknown_type_rejected(parse: Any, d: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as raised:
        parse(d)
    assert raised.value.code == ErrorCode.UNKNOWN_TYPE
    assert raised.value.ref == d.get("id")


def test_missing_type_rejected() -> None:
    with pytest.raises(ProtocolError) as raised:
        parse_client({"id": 5, "table": "t1"})
    assert raised.value.code == ErrorCode.BAD_FIELD
    assert raised.value.ref == 5


@pytest.mark.parametrize(
    "d",
    [
        {"type": "join"},
        {"type": "join", "table": 5},
        {"type": "join", "table": "t1", "seat": "0"},
        {"type": "join", "table": "t1", "seat": True},
        {"type": "join", "table": "t1", "seat": 1.0},
        {"type": "hello", "version": 1, "name": "a", "kind": "alien"},
        {"type": "hello", "version": "1", "name": "a", "kind": "bot"},
        {"type": "create_table", "name": "x", "timer": "30"},
        {"type": "create_table", "name": "x", "timer": True},
        {"type": "create_table", "name": "x", "private": 1},
        {"type": "create_table", "name": "x", "options": []},
        {"type": "move", "move": "draw"},
        {"type": "ping", "id": 1.5},
        {"type": "ping", "id": [1]},
    ],
)
def test_bad_fields_rejected(d: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as raised:
        parse_client(d)
    assert raised.value.code == ErrorCode.BAD_FIELD


def test_bad_field_echoes_valid_id_only() -> None:
    with pytest.raises(ProtocolError) as raised:
        parse_client({"type": "join", "id": "j1"})
    assert raised.value.ref == "j1"
    with pytest.raises(ProtocolError) as raised:
        parse_client({"type": "join", "id": {"no": 1}})
    assert raised.value.ref is None


#: A valid map of each kind the protocol defines, for the messages that carry one.
STANDINGS = {"hands": 1, "chips": [1, -1, 0], "wins": [1, 0, 0], "pot": 0,
             "names": ["Ana", None, "Cara"]}
RESULT = {"end": "stock", "winner": 0, "counts": [3, 9, 12], "burned": [], "challengers": [],
          "chips": [2, -1, -1], "hands": [[], [], []], "pot_taken": 0}
TABLE = {"table": "t1", "name": "Friday", "seats": [{"seat": 0, "player": None}], "players": 0,
         "humans": 0, "bots": 0, "spectators": 0, "options": {}, "timer": 30.0,
         "private": False, "started": False, "hands": 0, "match_length": {}}


def test_the_protocols_own_maps_are_read_whole_and_unknown_keys_ignored() -> None:
    """A table entry, a seat, the standings and a result as the server sends them parse; a key
    a newer server adds is ignored, as an unknown field is."""
    tables = parse_server({"type": "tables", "tables": [{**TABLE, "colour": "green"}]})
    assert isinstance(tables, Tables) and tables.tables[0]["name"] == "Friday"
    over = parse_server({"type": "hand_result", "table": "t", "seq": 1, "result": RESULT,
                         "standings": STANDINGS})
    assert isinstance(over, HandResult) and over.standings["names"][1] is None


@pytest.mark.parametrize(
    ("d", "message"),
    [
        ({"type": "state", "table": "t", "seq": 1, "view": {}, "seats": [1]},
         "list of a seats entry map"),
        ({"type": "state", "table": "t", "seq": 1, "view": [], "seats": []},
         "state.view must be map, got list"),
        ({"type": "hand_result", "table": "t", "seq": 1, "result": RESULT, "standings": 3},
         r"hand_result.standings must be a standings map \(docs/PROTOCOL.md\), got integer"),
        # The protocol's own maps are checked whole: a key missing, or of the wrong type.
        ({"type": "hand_result", "table": "t", "seq": 1, "result": {}, "standings": STANDINGS},
         r"hand_result.result must be a result map \(docs/PROTOCOL.md\), got map"),
        ({"type": "state", "table": "t", "seq": 1, "view": {}, "seats": [{"player": None}]},
         "state.seats must be list of a seats entry map"),
        ({"type": "seat_update", "table": "t", "seats": [{"seat": 0, "player": "bot",
                                                          "away": False}]},
         "seat_update.seats must be list of a seats entry map"),
        ({"type": "tables", "tables": [{**TABLE, "hands": "4"}]},
         "tables.tables must be list of a table entry map"),
        ({"type": "tables", "tables": [{**TABLE, "match_length": {"hands": 1.5}}]},
         "tables.tables must be list of a table entry map"),
        ({"type": "match_over", "table": "t", "reason": "hands",
          "standings": {**STANDINGS, "chips": [1, "2", 3]}}, "match_over.standings must be"),
        ({"type": "welcome", "version": 1, "server": "s", "capabilities": [1]}, "list of string"),
        ({"type": "joined", "table": "t", "spectator": "no"},
         "joined.spectator must be boolean, got string"),
    ],
)
def test_bad_server_fields_named(d: dict[str, Any], message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        parse_server(d)


def test_construction_validates() -> None:
    with pytest.raises(ProtocolError):
        Join(table=cast(Any, 5))


@pytest.mark.parametrize("cls", [*CLIENT_MESSAGES.values(), *SERVER_MESSAGES.values()])
def test_messages_are_frozen_slotted_dataclasses(cls: type[Message]) -> None:
    assert dataclasses.is_dataclass(cls)
    assert "__slots__" in vars(cls)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_frozen() -> None:
    ping: Any = Ping()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ping.id = 3


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
all_fields = sorted(
    {
        f.name
        for cls in [*CLIENT_MESSAGES.values(), *SERVER_MESSAGES.values()]
        for f in dataclasses.fields(cls)
    }
)


@given(
    kind=st.sampled_from(sorted({*CLIENT_MESSAGES, *SERVER_MESSAGES, "bogus"})) | values,
    body=st.dictionaries(st.sampled_from(all_fields) | st.text(max_size=5), values, max_size=8),
)
def test_parse_raises_only_protocol_errors(kind: Any, body: dict[str, Any]) -> None:
    for parse in (parse_client, parse_server):
        try:
            message = parse({**body, "type": kind})
        except ProtocolError as error:
            assert error.code in (ErrorCode.BAD_FIELD, ErrorCode.UNKNOWN_TYPE)
        else:
            assert parse(dict(to_dict(message))) == message


def test_error_codes_and_numbers_unique() -> None:
    codes = [member.value for member in ErrorCode]
    numbers = [member.number for member in ErrorCode]
    assert len(set(codes)) == len(codes)
    assert len(set(numbers)) == len(numbers)
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", code) for code in codes)


@pytest.mark.parametrize(
    ("first", "digit"),
    [
        ("frame_too_large", 1),
        ("slow_reader", 1),
        ("bad_token", 2),
        ("bad_name", 2),
        ("illegal_move", 3),
        ("hand_over", 3),
        ("internal_error", 5),
        ("shutting_down", 5),
    ],
)
def test_error_ranges(first: str, digit: int) -> None:
    assert error_number(first) // 1000 == digit


def test_every_number_in_a_range() -> None:
    assert {member.number // 1000 for member in ErrorCode} == {1, 2, 3, 5}


def test_unknown_game_code_passes_through() -> None:
    assert error_number("some_future_engine_code") == 3000
    frame = error_message("some_future_engine_code", "no", ref=2)
    assert parse_server(frame) == Error(
        code="some_future_engine_code", number=3000, message="no", ref=2
    )


def test_error_message_frame() -> None:
    assert error_message(ErrorCode.NOT_YOUR_TURN, "seat 1 is to act", "m3") == {
        "type": "error",
        "code": "not_your_turn",
        "number": 3001,
        "message": "seat 1 is to act",
        "ref": "m3",
    }
    assert "ref" not in error_message("internal_error", "sorry")
    assert to_dict(parse_server(error_message("bad_token", "x", 1))) == error_message(
        "bad_token", "x", 1
    )


def test_protocol_error_carries_code() -> None:
    error = ProtocolError(ErrorCode.TABLE_FULL, "all seats taken", ref=3)
    assert (error.code, error.number, error.message, error.ref) == (
        "table_full",
        2004,
        "all seats taken",
        3,
    )
    assert type(error.code) is str


def test_every_code_documented() -> None:
    doc = (Path(__file__).parent.parent / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    for member in ErrorCode:
        assert re.search(rf"\|\s*{member.number}\s*\|\s*`{member.value}`\s*\|", doc), member


def test_every_message_documented() -> None:
    doc = (Path(__file__).parent.parent / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    for kind in {*CLIENT_MESSAGES, *SERVER_MESSAGES}:
        assert f"### `{kind}`" in doc, kind


def _without_none(hint: Any) -> tuple[Any, bool]:
    """``hint`` less None, and whether it admitted None (the field may be left out)."""
    if get_origin(hint) not in (Union, types.UnionType):
        return hint, False
    args = tuple(arg for arg in get_args(hint) if arg is not type(None))
    return (args[0] if len(args) == 1 else Union[args]), len(args) < len(get_args(hint))  # noqa: UP007


#: Each message class's map, as ``to_dict``'s overloads give it.
MAP_OF = {get_type_hints(f)["msg"]: get_type_hints(f)["return"] for f in get_overloads(to_dict)}


@pytest.mark.parametrize("cls", [*CLIENT_MESSAGES.values(), *SERVER_MESSAGES.values()],
                         ids=lambda cls: cls.TYPE)
def test_each_message_map_is_its_message(cls: type[Message]) -> None:
    """The map mypy gives ``to_dict(msg)`` (``message_maps``) has exactly the message's keys:
    ``type``, each field, of the field's type, required unless the field may be None (which
    ``to_dict`` leaves out). So a reader of a message's map and the message cannot disagree."""
    assert cls in MAP_OF, f"to_dict has no overload for {cls.__name__}"
    typed = MAP_OF[cls]
    keys = get_type_hints(typed)
    assert keys.pop("type") == Literal[cls.TYPE]
    # (``__required_keys__`` misses a postponed ``NotRequired``: the hints keep it)
    optional = {name for name, hint in get_type_hints(typed, include_extras=True).items()
                if get_origin(hint) is NotRequired}
    fields = get_type_hints(cls)
    fields = {f.name: fields[f.name] for f in dataclasses.fields(cls)}
    assert set(keys) == set(fields)
    for name, hint in fields.items():
        value, may_be_none = _without_none(hint)
        assert keys[name] == value, name
        assert (name in optional) == may_be_none, name



def _limits_problem(value: Any, depth: int) -> str | None:
    """The limits of docs/PROTOCOL.md ("Limits") as a plain walk, the first breach in order."""
    from tongits.protocol import limits

    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        if len(value) > limits.MAX_STRING:
            return "long"
        return None if limits.is_text(value) else "surrogate"
    if isinstance(value, int):
        return None if abs(value) <= limits.MAX_INT else "int"
    if isinstance(value, float):
        return None if value == value and abs(value) != float("inf") else "float"
    if depth > limits.MAX_DEPTH:
        return "deep"
    if len(value) > limits.MAX_ITEMS:
        return "items"
    pairs = value.items() if isinstance(value, dict) else [(None, item) for item in value]
    for key, item in pairs:
        problem = _limits_problem(key, limits.MAX_DEPTH + 1) or _limits_problem(item, depth + 1)
        if problem is not None:
            return problem
    return None


_edge_text = st.one_of(
    st.text(max_size=4), st.sampled_from(["é", "\ud800"]),
    st.tuples(st.sampled_from("aé"), st.integers(1023, 1026)).map(lambda c: c[0] * c[1]))
_edge_int = st.one_of(st.integers(-5, 5),
                      st.sampled_from([2**53 - 1, 2**53, -(2**53 - 1), -(2**53)]))
_limits_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(), _edge_text, _edge_int),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.lists(st.none(), min_size=64, max_size=65),
                            st.dictionaries(st.one_of(_edge_text, _edge_int), inner, max_size=3)),
    max_leaves=12)


@given(st.dictionaries(_edge_text, _limits_values, max_size=4))
def test_the_limits_refuse_a_request_exactly_when_a_value_breaks_one(raw: dict[Any, Any]) -> None:
    """The check's shortcuts for plain keys, strings and integers refuse what the plain walk
    refuses and nothing else: every string at most 1,024 characters of UTF-8-able text, every
    integer within 2**53 - 1, every number finite, nesting and sizes within bounds."""
    from tongits.protocol import limits

    raw.pop("id", None)
    expected = _limits_problem(raw, 1)
    try:
        limits.check_request(raw)
    except ProtocolError as error:
        assert expected is not None, error
    else:
        assert expected is None
