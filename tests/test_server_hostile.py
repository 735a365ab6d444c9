"""Hostile and broken input: fuzzed bytes and messages, illegal moves, limits, and a leak check
of every frame sent while many random hands are played. Each fuzz example runs a whole server
on in-memory streams on a virtual clock."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_support import (
    HELLO,
    capped,
    exchange,
    frame,
    memory_server,
    next_of,
    play_hands,
    quick_config,
)
from tongits.client.connection import ServerError
from tongits.engine import DECK, Move, RuleError
from tongits.protocol import (
    CLIENT_MESSAGES,
    SERVER_MESSAGES,
    Codec,
    ErrorCode,
    HandResult,
    Mode,
    SeatUpdate,
    State,
)
from tongits.server import MemoryJournal, Server
from tongits.server.net.peer import Peer
from tongits.server.table.actor import Table

KNOWN_CODES = {code.value for code in ErrorCode}


#: What a Python repr looks like in an error message (``unknown action None``, ``{'a': 1}``,
#: ``b'x'``): a client in another language sent ``null``, ``true`` or a map (issue #10.5).
PYTHON_REPR = re.compile(r"\b(None|True|False)\b|\bb'|\bb\"|(?:^|[\s:(\[{])'")


def _check_frames(frames: list[dict[str, Any]]) -> None:
    for msg in frames:
        assert msg.get("type") in SERVER_MESSAGES, msg
        if msg["type"] == "error":
            assert msg["code"] in KNOWN_CODES, msg
            assert msg["message"] != "internal server error", msg
            assert not PYTHON_REPR.search(msg["message"]), msg


def _fuzz(data: bytes) -> None:
    """Run a server with one table in play, throw ``data`` at it, and check that it answers
    with typed errors only, leaves the table's log alone and still serves the table."""

    async def main() -> None:
        journal = MemoryJournal()
        server = Server(quick_config(bot_delay=3600.0, grace=86400.0), journal)
        async with trio.open_nursery() as nursery:
            await nursery.start(lambda task_status: server.serve(listen=False,
                                                                 task_status=task_status))
            frames = await exchange(server, frame(HELLO) + frame(
                {"type": "create_table", "id": 1, "name": "Target", "bots": 2, "timer": 0}))
            assert any(f["type"] == "joined" for f in frames)
            before = {t: list(e) for t, e in journal.entries.items()}
            frames = await exchange(server, data)
            _check_frames(frames)
            assert journal.entries == before
            frames = await exchange(server, frame(HELLO) + frame({"type": "ping", "id": 7}))
            assert {"type": "pong", "id": 7} in frames
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


#: Requests whose errors once quoted the value the Python way (``None``, ``True``, ``'Zz'``).
_ODD_VALUES: list[dict[str, Any]] = [
    {"type": "create_table", "name": "x", "options": {"ante": None}},
    {"type": "create_table", "name": "x", "options": {"ante": True}},
    {"type": "create_table", "name": "x", "options": {"pick_to_sapaw": None}},
    {"type": "create_table", "name": "x", "options": {"sapaw_block": False}},
    {"type": "create_table", "name": "x", "options": {"jokers": 1}},
    {"type": "create_table", "name": "x", "target": True},
    {"type": "join", "table": "t9"},
    {"type": "list_tables", "offset": True},
    {"type": "nonsense"},
    {"type": None},
    {"type": "move", "move": {"action": "discard", "card": True}},
    {"type": "move", "move": {"action": "meld", "cards": [None, {"a": 1}]}},
    {"type": "move", "move": {"action": "discard", "card": "Zz"}},
    {"type": "move", "move": {"action": None}},
]


@capped
async def test_error_messages_spell_what_was_sent_as_json(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Issue #10.5: a value is quoted as the client wrote it (``null``, ``true``, ``"Zz"``),
    never as Python prints it, in both modes."""
    server = Server(quick_config(), MemoryJournal())
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))
        requests: list[dict[str, Any]] = [{**r, "id": n} for n, r in enumerate(_ODD_VALUES, 1)]
        seated = {"type": "create_table", "id": 99, "name": "Seated", "bots": 2, "timer": 0}
        requests.insert(len(requests) - 4, seated)  # the moves need a seat
        for data in (frame(HELLO) + b"".join(frame(r) for r in requests),
                     b"".join(json.dumps(r).encode() + b"\n" for r in [HELLO, *requests])):
            errors = [f for f in await exchange(server, data) if f["type"] == "error"]
            assert {e.get("ref") for e in errors} >= set(range(1, len(_ODD_VALUES) + 1)) - {10}
            _check_frames(errors)
        nursery.cancel_scope.cancel()


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                     st.floats(allow_nan=False), st.text(max_size=20), st.binary(max_size=20))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


def _message_with_a_bad_field() -> st.SearchStrategy[dict[str, Any]]:
    """A known client message type with every declared field present and one of them (or the
    ``id``) set to an arbitrary value."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        kind = draw(st.sampled_from(sorted(CLIENT_MESSAGES)))
        names = [f for f in CLIENT_MESSAGES[kind].__dataclass_fields__ if f != "TYPE"]
        msg: dict[str, Any] = {"type": kind}
        for name in names:
            msg[name] = draw(_values)
        return msg

    return build()


_fuzz_settings = settings(max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])


@_fuzz_settings
@given(st.binary(max_size=300), st.booleans())
def test_random_bytes(data: bytes, after_hello: bool) -> None:
    _fuzz((frame(HELLO) if after_hello else b"") + data)


@_fuzz_settings
@given(st.lists(_values, min_size=1, max_size=4), st.booleans())
def test_valid_msgpack_of_wrong_shapes(values: list[Any], text: bool) -> None:
    if text:
        data = json.dumps(HELLO).encode() + b"\n" + b"".join(
            json.dumps(v, default=repr).encode() + b"\n" for v in values)
        _fuzz(b"{" + data[1:])
    else:
        _fuzz(frame(HELLO) + b"".join(frame(v) for v in values))


@_fuzz_settings
@given(st.lists(_message_with_a_bad_field(), min_size=1, max_size=3))
def test_wrong_types_in_every_field(messages: list[dict[str, Any]]) -> None:
    _fuzz(frame(HELLO) + b"".join(frame(m) for m in messages))


@_fuzz_settings
@given(st.integers(65537, 2**32 - 1), st.binary(max_size=50), st.integers(0, 30))
def test_huge_lengths_and_truncated_frames(length: int, tail: bytes, cut: int) -> None:
    _fuzz(frame(HELLO) + struct.pack(">I", length) + tail)
    whole = frame({"type": "ping", "id": 1, "pad": "x" * 20})
    _fuzz(frame(HELLO) + whole[: max(1, len(whole) - 1 - cut)])


_cards = st.sampled_from([str(c) for c in DECK] + ["1x", "", "Zz"])
_moves = st.fixed_dictionaries(
    {"action": st.sampled_from(["draw", "pick", "meld", "secret", "sapaw", "discard", "call",
                                "challenge", "fold", "nonsense"])},
    optional={"cards": st.lists(_cards, max_size=4), "card": _cards,
              "meld": st.integers(-2, 6)},
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_moves, min_size=1, max_size=8))
def test_out_of_turn_and_illegal_moves_leave_the_table_unchanged(
    moves: list[dict[str, Any]],
) -> None:
    async def main() -> None:
        journal = MemoryJournal()
        async with (
            memory_server(journal, bot_delay=3600.0) as (_server, connect),
            connect("Ana") as ana,
        ):
            joined = await ana.create_table("Moves", bots=2, timer=0)
            state = await next_of(ana, State)
            legal = [Move.from_dict(m) for m in state.legal or []]
            before = list(journal.entries[joined.table])
            for move in moves:
                try:
                    if Move.from_dict(move) in legal:
                        continue
                except RuleError:
                    pass
                with pytest.raises(ServerError) as refused:
                    await ana.move(move)
                code = refused.value.code
                assert code not in ("internal_error",)
                assert code == "bad_field" or refused.value.error.number >= 3000
            assert journal.entries[joined.table] == before
            await ana.ping()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


# ----- limits -----------------------------------------------------------------------------------


async def _closing_error(server: Server, data: bytes, address: str = "10.0.0.1:1") -> str:
    client, server_side = trio.testing.memory_stream_pair()
    codec = Codec(Mode.BINARY)
    last = ""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, server_side, address)
        await client.send_all(data)
        while True:
            chunk = await client.receive_some(65536)
            if not chunk:
                break
            codec.receive_data(chunk)
            while (msg := codec.next_message()) is not None:
                if msg["type"] == "error":
                    last = msg["code"]
    return last


@capped
async def test_rate_limit_closes_with_rate_limited(autojump_clock: trio.testing.MockClock) -> None:
    server = Server(quick_config(rate=5.0, burst=10), MemoryJournal())
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))
        pings = b"".join(frame({"type": "ping", "id": i}) for i in range(30))
        assert await _closing_error(server, frame(HELLO) + pings) == "rate_limited"
        nursery.cancel_scope.cancel()


@capped
async def test_connection_limits_per_address_and_total(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with (
        memory_server(max_per_address=2, max_connections=4, idle_timeout=0.0,
                      handshake_timeout=5.0) as (server, connect),
        connect("A", address="10.0.0.1:1"),
        connect("B", address="10.0.0.1:2"),
    ):
        assert await _closing_error(server, frame(HELLO)) == "too_many_connections"
        async with connect("C", address="10.0.0.2:1"):
            loopback = await _closing_error(server, b"\x00\x00", "127.0.0.1:9")
            assert loopback == "handshake_timeout"  # served: loopback is exempt
            async with connect("D", address="10.0.0.3:1"):
                code = await _closing_error(server, frame(HELLO), "10.0.0.4:1")
                assert code == "too_many_connections"


@capped
async def test_an_address_opens_connections_at_its_pace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """One address may open ``max_per_address`` connections at once, then ``connection_rate``
    a second, however briefly each stays: a connection cut for its rate came back at once and
    started afresh (a TLS handshake 560 times a second from one address). Another address is
    served meanwhile, and the first one again once its bucket has refilled."""
    async with memory_server(max_per_address=3, connection_rate=0.1,
                             idle_timeout=1.0) as (server, _connect):
        for _ in range(3):  # each served, then closed as idle after 1 s
            assert await _closing_error(server, frame(HELLO)) == "idle_timeout"
        assert await _closing_error(server, frame(HELLO)) == "too_many_connections"
        assert await _closing_error(server, frame(HELLO), "10.0.0.2:1") == "idle_timeout"
        await trio.sleep(10.0)
        assert await _closing_error(server, frame(HELLO)) == "idle_timeout"


@capped
async def test_handshake_and_idle_timeouts(autojump_clock: trio.testing.MockClock) -> None:
    async with memory_server(handshake_timeout=5.0, idle_timeout=50.0) as (server, connect):
        # Silent: closed without a word (the encoding is unknown before the first byte).
        assert await _closing_error(server, b"") == ""
        assert await _closing_error(server, b"\x00\x00") == "handshake_timeout"
        started = trio.current_time()
        assert await _closing_error(server, frame(HELLO)) == "idle_timeout"
        assert trio.current_time() - started >= 50.0
        async with connect("Ana") as ana:  # seated players are never idle
            await ana.create_table("Think", bots=2, timer=0)
            await trio.sleep(500)
            await ana.ping()


@capped
async def test_max_tables_and_frame_size(autojump_clock: trio.testing.MockClock) -> None:
    async with memory_server(max_tables=1, max_frame_size=1000) as (server, connect):
        async with connect("Ana") as ana, connect("Ben") as ben:
            await ana.create_table("Only", bots=2)
            with pytest.raises(ServerError) as refused:
                await ben.create_table("Second", bots=2)
            assert refused.value.code == "too_many_tables"
        big = frame(HELLO) + frame({"type": "chat", "text": "x" * 2000})
        assert await _closing_error(server, big) == "frame_too_large"


@capped
async def test_a_wrong_token_reveals_nothing(autojump_clock: trio.testing.MockClock) -> None:
    async with memory_server() as (server, connect), connect("Ana") as ana:
        await ana.create_table("Mine", bots=2, timer=0)
        assert ana.token is not None
        forged = ana.token[:-1] + ("A" if ana.token[-1] != "A" else "B")
        frames = await exchange(server, frame({**HELLO, "token": forged}))
        error, closing = [f for f in frames if f["type"] == "error"]
        assert error["code"] == "bad_token" and error["message"] == "unknown or expired token"
        assert closing["code"] == "handshake_timeout"  # the hello was refused
        assert not [f for f in frames if f["type"] in ("state", "joined")]


# ----- leaks ------------------------------------------------------------------------------------


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for k, v in obj.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(obj, list | tuple):
        return [s for v in obj for s in _strings(v)]
    return []


def _secrets_for(peer: Peer) -> set[str] | None:
    """What ``peer`` must not see now: other seats' hands, the stock, others' secret melds;
    None when there is no hand in play (or it is over: then everything is revealed)."""
    table = peer.table
    if not isinstance(table, Table) or table.state.hand is None or table.state.hand.over:
        return None
    hand, seat = table.state.hand, peer.seat
    hidden = {str(c) for c in hand.stock}
    for other in range(3):
        if other != seat:
            hidden |= {str(c) for c in hand.hands[other]}
    for meld in hand.melds:
        if meld.secret and meld.owner != seat:
            hidden |= {str(c) for c in meld.cards}
    return hidden


@capped
async def test_no_frame_leaks_hidden_cards_or_the_seed(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaks: list[tuple[Any, ...]] = []
    checked = [0]
    original: Callable[[Peer, bytes], None] = Peer.send_frame

    def send(peer: Peer, data: bytes) -> None:
        # every message leaves through send_frame, encoded: check the bytes that go out
        msg = json.loads(data) if peer.codec.mode is Mode.TEXT else msgpack.unpackb(data[4:])
        hidden = _secrets_for(peer)
        if hidden is not None:
            checked[0] += 1
            shown = set(_strings(msg)) & hidden
            seed = str(peer.table.state.seed) if isinstance(peer.table, Table) else ""
            if shown or (seed and seed in json.dumps(msg)):
                leaks.append((peer.seat, msg.get("type"), shown))
        original(peer, data)

    monkeypatch.setattr(Peer, "send_frame", send)
    async with (
        memory_server() as (_server, connect),
        connect("Ana") as ana, connect("Ben") as ben, connect("Cy") as cy, connect("Sam") as sam,
    ):
        joined = await ana.create_table("Leaks", auto_start=False)
        await ben.join(joined.table)
        await cy.join(joined.table)
        await sam.spectate(joined.table)
        await ana.start()
        async with trio.open_nursery() as nursery:
            for conn in (ben, cy):
                nursery.start_soon(play_hands, conn, 12, "random")
            results = await play_hands(ana, 12, "random")
        assert len(results) == 12
        await next_of(sam, HandResult)
    assert checked[0] > 500
    assert not leaks, leaks[:3]


@capped
async def test_slow_reader_is_dropped_and_the_table_goes_on(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(queue_size=32) as (server, connect), connect("Ana") as ana:
        joined = await ana.create_table("Slow", bots=1, timer=5)
        client, server_side = trio.testing.lockstep_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.handle_stream, server_side, "memory")
            await client.send_all(frame(HELLO) + frame({"type": "join", "id": 1,
                                                         "table": joined.table}))
            # never read: the slow seat is dropped (and kept for a resume), the table plays on
            update = await next_of(ana, SeatUpdate, lambda u: u.change == {"seat": 2,
                                                                          "change": "away"})
            assert update.seats[2]["name"] == "fuzz"
            assert not any(p.name == "fuzz" for p in server.peers)
            await play_hands(ana, 1)
            nursery.cancel_scope.cancel()
