"""The server's wire behaviour: text mode over a raw socket, bad input, slow readers, codes."""

from __future__ import annotations

import json
import struct
from typing import Any

import msgpack
import pytest
import trio
import trio.testing
from server_support import (
    TIME_CAP,
    capped,
    memory_server,
    my_turn,
    next_of,
    tcp_connect,
    tcp_server,
    until,
)
from tongits.client.connection import ServerError
from tongits.engine import Action, Card, Hand, Move, Options, RuleCode, SeatView, deck_for
from tongits.protocol import ErrorCode, MatchOver, State, to_dict


class LineClient:
    """A text-mode client on a raw socket, as ``nc`` would be."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def send(self, obj: dict[str, Any]) -> None:
        await self.stream.send_all(json.dumps(obj).encode() + b"\n")

    async def line(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            data = await self.stream.receive_some(65536)
            if not data:
                raise EOFError
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        msg = json.loads(line)
        assert isinstance(msg, dict) and "type" in msg
        return msg

    async def until(self, kind: str, **match: Any) -> dict[str, Any]:
        while True:
            msg = await self.line()
            if msg["type"] == kind and all(msg.get(k) == v for k, v in match.items()):
                return msg


async def test_text_mode_plays_over_a_raw_socket() -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            client = LineClient(await trio.open_tcp_stream("127.0.0.1", port))
            await client.send({"type": "hello", "id": 1, "version": 1, "name": "nc",
                               "kind": "human"})
            welcome = await client.line()
            assert welcome["type"] == "welcome" and welcome["id"] == 1
            await client.send({"type": "create_table", "id": 2, "name": "Text", "bots": 2})
            joined = await client.until("joined", id=2)
            assert joined["seat"] == 0 and joined["token"]
            moves = 0
            while moves < 6:
                msg = await client.line()
                if msg["type"] == "state" and msg.get("legal"):
                    legal = msg["legal"]
                    move = next((m for m in legal if m["action"] == "draw"), legal[-1])
                    await client.send({"type": "move", "id": 10 + moves, "move": move})
                    ok = await client.until("ok", id=10 + moves)
                    assert ok == {"type": "ok", "id": 10 + moves}
                    moves += 1
                if msg["type"] == "hand_result":
                    break
            await client.send({"type": "nonsense", "id": 99})
            error = await client.until("error", ref=99)
            assert error["code"] == "unknown_type" and error["number"] == 1004
            await client.send({"type": "ping", "id": 100})
            assert (await client.until("pong"))["id"] == 100
            await client.stream.aclose()


def _keys_named(value: Any, key: str) -> int:
    """How many maps inside ``value`` (a decoded message) have ``key``."""
    if isinstance(value, dict):
        return (key in value) + sum(_keys_named(v, key) for v in value.values())
    if isinstance(value, list):
        return sum(_keys_named(v, key) for v in value)
    return 0


def _check_legal_once(state: dict[str, Any]) -> bool:
    """A ``state`` as it came off the wire holds the seat's legal moves exactly once, as
    ``state.legal``, and only when the seat is to act; the moves are the engine's for what the
    seat knows. True when it offered moves."""
    view = state["view"]
    seat = view["seat"]
    to_act = seat is not None and view["to_act"] == seat
    assert _keys_named(state, "legal") == (1 if to_act else 0), state
    if not to_act:
        return False
    rebuilt = SeatView.from_dict(view, state["legal"])
    assert list(rebuilt.legal) == rebuilt.position().legal_moves(seat)
    return True


async def test_every_state_holds_the_seats_legal_moves_once() -> None:
    """A whole match over a raw text-mode socket (plus a ``sync`` and a binary spectator): every
    ``state`` frame carries the moves once, beside the view, never inside it."""
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            client = LineClient(await trio.open_tcp_stream("127.0.0.1", port))
            await client.send({"type": "hello", "id": 1, "version": 1, "name": "nc",
                               "kind": "human"})
            await client.until("welcome")
            await client.send({"type": "create_table", "id": 2, "name": "Once", "bots": 2,
                               "hands": 2})
            table = (await client.until("joined", id=2))["table"]
            async with tcp_connect(port, "Sam") as sam:
                await sam.spectate(table)
                await client.send({"type": "start", "id": 3})
                offered = states = 0
                request = 10
                while True:
                    msg = await client.line()
                    if msg["type"] == "match_over":
                        break
                    if msg["type"] == "hand_result":
                        await client.send({"type": "next_hand", "id": request})
                        request += 1
                    if msg["type"] != "state":
                        continue
                    states += 1
                    if _check_legal_once(msg):
                        offered += 1
                        if offered == 3:  # ask for the table once mid-hand: the same rule holds
                            await client.send({"type": "sync", "id": request})
                            await client.until("ok", id=request)
                            assert _check_legal_once(await client.until("state"))
                            request += 1
                        await client.send({"type": "move", "id": request,
                                           "move": msg["legal"][-1]})
                        request += 1
                assert offered > 3 and states > offered
                watched = 0
                while True:
                    seen = await sam.receive()
                    if isinstance(seen, State):
                        watched += 1
                        assert _keys_named(to_dict(seen), "legal") == 0
                    elif isinstance(seen, MatchOver):
                        break
                assert watched > offered
            await client.stream.aclose()


async def _raw_exchange(port: int, data: bytes) -> list[dict[str, Any]]:
    """Send ``data`` after a binary hello, read every frame until the server closes."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    hello = msgpack.packb({"type": "hello", "version": 1, "name": "raw", "kind": "bot"})
    await stream.send_all(struct.pack(">I", len(hello)) + hello + data)
    unpacker = b""
    frames: list[dict[str, Any]] = []
    while True:
        chunk = await stream.receive_some(65536)
        if not chunk:
            break
        unpacker += chunk
        while len(unpacker) >= 4:
            (length,) = struct.unpack(">I", unpacker[:4])
            if len(unpacker) < 4 + length:
                break
            frames.append(msgpack.unpackb(unpacker[4 : 4 + length]))
            unpacker = unpacker[4 + length :]
    await stream.aclose()
    return frames


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (struct.pack(">I", 3) + b"\xc1\xc1\xc1", "malformed_frame"),
        (struct.pack(">I", 10_000_000), "frame_too_large"),
        (struct.pack(">I", 1) + msgpack.packb(7), "not_a_map"),
    ],
)
async def test_bad_frames_get_an_error_and_the_connection_closes(data: bytes, code: str) -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (server, port):
            frames = await _raw_exchange(port, data)
            assert [f["type"] for f in frames] == ["welcome", "error"]
            assert frames[-1]["code"] == code
            assert frames[-1]["number"] == ErrorCode[code.upper()].number
            with trio.fail_after(5):
                await until(lambda: not server.peers)


async def test_a_bad_text_line_is_refused_and_the_connection_stays() -> None:
    """Lines are self-delimiting: a typo costs one ``error``, not the connection (a seated
    person at ``nc`` keeps the seat). Only a line past the size limit still closes it."""
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            client = LineClient(await trio.open_tcp_stream("127.0.0.1", port))
            await client.stream.send_all(b"{not json\n")
            assert (await client.until("error"))["code"] == "malformed_frame"
            await client.send({"type": "hello", "version": 1, "name": "nc", "kind": "human"})
            await client.until("welcome")
            for line, code in ((b"{not json\n", "malformed_frame"), (b"[1, 2]\n", "not_a_map"),
                               (b"\xff\xfe{}\n", "malformed_frame"),
                               (b'{"type": "pong"}\n', "unknown_type")):
                await client.stream.send_all(line)
                assert (await client.until("error"))["code"] == code
            await client.send({"type": "ping", "id": 5})
            assert (await client.until("pong"))["id"] == 5
            await client.stream.send_all(b"x" * 70_000)
            assert (await client.until("error"))["code"] == "frame_too_large"
            with pytest.raises(EOFError):
                await client.line()


@pytest.mark.parametrize("opening", [b"\n", b"  \r\n", b"\xef\xbb\xbf", b"\t"])
async def test_text_mode_tolerates_leading_whitespace_and_a_byte_order_mark(
    opening: bytes,
) -> None:
    """Anything but 0x00 first is text mode (a binary frame's first byte is always 0x00)."""
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            client = LineClient(await trio.open_tcp_stream("127.0.0.1", port))
            hello = b'{"type":"hello","version":1,"name":"nc","kind":"human"}\n'
            await client.stream.send_all(opening + hello)
            assert (await client.until("welcome"))["version"] == 1
            await client.stream.aclose()


@capped
async def test_illegal_and_out_of_turn_moves_are_refused_and_play_goes_on(
    autojump_clock: object,
) -> None:
    async with (
        memory_server() as (_server, connect),
        connect("Ana") as ana, connect("Ben") as ben, connect("Cai") as cai,
    ):
        joined = await ana.create_table("Strict")
        await ben.join(joined.table)
        await cai.join(joined.table)
        conns = [ana, ben, cai]
        first = await next_of(ana, State)
        to_act = first.view["to_act"]
        assert to_act is not None
        mover, idle = conns[to_act], conns[(to_act + 1) % 3]
        state = first if to_act == 0 else await my_turn(mover)
        hand = set(state.view["hand"])
        missing = next(str(c) for c in map(Card, range(52)) if str(c) not in hand)
        cases: list[tuple[Any, dict[str, Any], str]] = [
            (idle, {"action": "draw"}, "not_your_turn"),
            (mover, {"action": "discard", "card": missing}, "card_not_in_hand"),
            (mover, {"action": "fly"}, "bad_move"),
            (mover, {"action": "discard", "card": "Zz"}, "bad_card"),
            (mover, {"action": "discard"}, "bad_move"),
        ]
        for conn, move, code in cases:
            with pytest.raises(ServerError) as exc:
                await conn.move(move)
            assert exc.value.code == code
        with pytest.raises(ServerError) as shape:
            await mover.request({"type": "move", "move": "draw"})
        assert shape.value.code == "bad_field"
        await mover.move(state.legal[-1] if state.legal else {})
        after = await next_of(idle, State, lambda s: s.seq > state.seq)
        assert after.event is not None and after.event["seat"] == to_act


@capped
async def test_slow_reader_is_dropped_and_the_table_goes_on(autojump_clock: object) -> None:
    async with memory_server(queue_size=4) as (server, connect), connect("Ana") as ana:
        joined = await ana.create_table("Watched", bots=2, auto_start=False)
        client, server_side = trio.testing.lockstep_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.handle_stream, server_side)
            hello = json.dumps({"type": "hello", "version": 1, "name": "slow",
                                "kind": "human"})
            spectate = json.dumps({"type": "spectate", "table": joined.table})
            await client.send_all(f"{hello}\n{spectate}\n".encode())
            await client.receive_some(10)
            await ana.start()
            dropped_at = None
            results = 0
            while results < 2:
                msg = await ana.receive()
                if isinstance(msg, State) and msg is ana.last_state and msg.legal:
                    await ana.move(msg.legal[-1])
                if msg.TYPE == "hand_result":
                    results += 1
                    await ana.next_hand()
                if dropped_at is None and len(server.peers) == 1:
                    dropped_at = results
            assert dropped_at == 0
            nursery.cancel_scope.cancel()


def test_engine_codes_all_have_numbers() -> None:
    """Every code the engine can give (the closed set ``RuleCode``) is a documented wire code
    with its own game number."""
    for code in RuleCode:
        wire = ErrorCode[code.name]
        assert wire.value == code.value and wire.number // 1000 == 3
    numbers = [c.number for c in ErrorCode]
    assert len(numbers) == len(set(numbers))
    hand = Hand(deck_for(1, 0), 0, Options())
    refused = hand.why_illegal(1, Move(Action.DRAW))
    assert refused is not None and refused.code is RuleCode.NOT_YOUR_TURN



async def _typed(server: Any, keystrokes: list[tuple[float, bytes]]) -> tuple[list[str], float]:
    """Type ``keystrokes`` (a pause, then bytes) on a fresh text connection, then keep still;
    the codes and types the server wrote and when (virtual seconds) it closed."""
    client, server_side = trio.testing.memory_stream_pair()
    got: list[str] = []
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, server_side, "10.0.0.9:1")

        async def typist() -> None:
            for pause, data in keystrokes:
                await trio.sleep(pause)
                await client.send_all(data)

        nursery.start_soon(typist)
        buffer = b""
        while chunk := await client.receive_some(65536):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            got += [msg.get("code", msg["type"]) for msg in map(json.loads, lines)]
        closed = trio.current_time() - started
        nursery.cancel_scope.cancel()
    return got, closed


HELLO_LINE = b'{"type":"hello","version":1,"name":"Ana","kind":"human"}\n'


@capped
async def test_a_person_typing_hello_is_served_and_a_dribble_is_not(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Before hello, handshake_timeout (10 s) is the silence allowed between keystrokes and the
    whole hello must come within frame_timeout (60 s); after it, a frame begun must end within
    frame_timeout and idle_timeout counts whole messages, not bytes (issue #16.7)."""
    async with memory_server(idle_timeout=300.0) as (server, _connect):
        slow_hello = [(0.8, bytes([b])) for b in HELLO_LINE]  # 45 s, pauses under 10 s
        ping = [(1.0, b'{"type":"ping"}\n')]
        got, _ = await _typed(server, [(9.0, b"\n"), *slow_hello, *ping])
        assert got[:2] == ["welcome", "pong"]
        assert got[-1] == "idle_timeout"

        got, closed = await _typed(server, [(1.0, b" "), (10.5, b"{")])
        assert got == ["handshake_timeout"] and closed < 12

        got, closed = await _typed(server, [(0.0, HELLO_LINE + b'{"type":')]
                                   + [(5.0, b" ")] * 40)
        assert got == ["welcome", "frame_timeout"] and 60 <= closed < 66

        got, closed = await _typed(server, [(0.0, HELLO_LINE)] + [(5.0, b"\n")] * 100)
        assert got == ["welcome", "idle_timeout"] and 300 <= closed < 306

        got, closed = await _typed(server, [])
        assert got == [] and closed == 10  # nothing is written before the client speaks
