"""A network that drops without closing (a friend's Wi-Fi): both sides notice, the player is
``away`` and comes back by himself.

The server side runs on in-memory streams and the virtual clock (a client that says a
``heartbeat`` and then goes silent; a 1.0 client that says none and is silent for hours). The
whole path runs on loopback through ``BlackHole``, a TCP proxy that stops forwarding in both
directions without closing anything, as a dead link does.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from screen_support import settle
from server_support import (
    TIME_CAP,
    capped,
    memory_server,
    my_turn,
    next_of,
    tcp_server,
    until,
)
from tongits.client.connection import Connection, ConnectionClosed, ServerError, open_connection
from tongits.client.sdk import Bot
from tongits.client.tui.app import TableScreen
from tongits.client.tui.net import NetSession, SessionOptions
from tongits.engine import Move, SeatView
from tongits.engine.policies import get_policy
from tongits.protocol import Codec, ErrorCode, Pong, SeatUpdate, State
from tongits.protocol.keepalive import HEARTBEAT_MISSES, PONG_WAIT, keepalive_settings
from tongits.server import Server, ServerConfig


def _change(seat: int | None, change: str) -> Any:
    return lambda update: update.change == {"seat": seat, "change": change}


class BlackHole:
    """A TCP proxy on 127.0.0.1 in front of ``port``. While ``blocked``, nothing crosses in
    either direction and nothing is closed: what was read waits (as a dead link's packets wait
    in the kernel to be sent again) and crosses, with the end of the stream, once it forwards
    again. New connections made meanwhile are closed at once (the route is gone)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.listen_port = 0
        self.blocked = False
        self._open = trio.Event()
        self._open.set()

    def block(self) -> None:
        self.blocked = True
        self._open = trio.Event()

    def unblock(self) -> None:
        self.blocked = False
        self._open.set()

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.listen_port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._relay, listeners)

    async def _relay(self, client: trio.SocketStream) -> None:
        if self.blocked:
            await client.aclose()
            return
        server = await trio.open_tcp_stream("127.0.0.1", self.port)
        async with client, server, trio.open_nursery() as nursery:
            nursery.start_soon(self._forward, client, server, nursery.cancel_scope)
            nursery.start_soon(self._forward, server, client, nursery.cancel_scope)

    async def _forward(self, source: trio.SocketStream, sink: trio.SocketStream,
                       done: trio.CancelScope) -> None:
        try:
            while True:
                data = await source.receive_some(65536)
                await self._open.wait()
                if not data:
                    break
                await sink.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        done.cancel()


@asynccontextmanager
async def behind_black_hole(**config: Any) -> AsyncIterator[tuple[Server, int, BlackHole]]:
    """A server on a free port and a ``BlackHole`` in front of it: (server, its port, hole)."""
    async with tcp_server(**config) as (server, port), trio.open_nursery() as nursery:
        hole = BlackHole(port)
        await nursery.start(hole.serve)
        yield server, port, hole
        nursery.cancel_scope.cancel()


# ----- the server: heartbeat clients, and 1.0 clients ------------------------------------------


async def _silent_heartbeat_client(
    server: Server, nursery: trio.Nursery, heartbeat: float
) -> Connection:
    """A connection that says ``heartbeat`` in ``hello`` and then never pings."""
    client, server_side = trio.testing.memory_stream_pair()
    nursery.start_soon(server.handle_stream, server_side, "memory")
    conn = Connection(client)
    nursery.start_soon(conn.run_reader)
    await conn.hello("Ben", heartbeat=heartbeat)
    return conn


@capped
async def test_a_seated_heartbeat_client_that_goes_silent_is_away_after_three_periods(
    autojump_clock: object,
) -> None:
    async with memory_server() as (server, connect), connect("Ana") as ana, \
            trio.open_nursery() as nursery:
        joined = await ana.create_table("friday", bots=1, timer=0)
        ben = await _silent_heartbeat_client(server, nursery, heartbeat=5)
        seated = await ben.join(joined.table)
        silent_since = trio.current_time()
        away = await next_of(ana, SeatUpdate, _change(seated.seat, "away"))
        waited = trio.current_time() - silent_since
        assert HEARTBEAT_MISSES * 5 <= waited < HEARTBEAT_MISSES * 5 + 1
        assert seated.seat is not None and away.seats[seated.seat]["away"] is True
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await ben.receive()
        assert closed.value.error is not None
        assert closed.value.error.code == ErrorCode.IDLE_TIMEOUT
        nursery.cancel_scope.cancel()


@capped
async def test_a_seated_client_without_heartbeat_may_stay_silent_for_hours(
    autojump_clock: object,
) -> None:
    async with memory_server() as (server, connect), connect("Ana") as ana:
        await ana.create_table("friday", bots=2, timer=0)
        await my_turn(ana)
        await trio.sleep(6 * 3600)
        assert [peer.name for peer in server.peers] == ["Ana"]
        await ana.ping()  # still served
        seats = (await ana.request({"type": "ping"}), ana.last_state)
        assert isinstance(seats[0], Pong)
        assert seats[1] is not None and not seats[1].seats[0].get("away")


@capped
async def test_a_pinging_client_keeps_its_seat_and_its_pings_disturb_nothing(
    autojump_clock: object,
) -> None:
    """The client's own heartbeat: binary and text mode, under the server's default rate
    limit; its pongs never reach ``receive`` and ``seq`` does not move while nobody plays."""
    async with memory_server(rate=20.0, burst=60) as (server, connect):
        for text in (False, True):
            async with connect("Ana", text=text, heartbeat=1.0) as ana:
                await ana.create_table(f"friday {text}", bots=2, timer=0)
                state = await my_turn(ana)
                await trio.sleep(600)
                assert any(peer.heartbeat == 1.0 for peer in server.peers)
                assert ana.seq == state.seq and ana.lost is None
                with trio.move_on_after(1):
                    pushed = await ana.receive()
                    raise AssertionError(f"pushed while nobody played: {pushed}")
                assert state.legal
                await ana.move(state.legal[0])
                moved = await next_of(ana, State)
                assert moved.seq > state.seq
                await ana.leave()


@capped
async def test_a_heartbeat_out_of_bounds_is_refused(autojump_clock: object) -> None:
    async with memory_server() as (server, _connect), trio.open_nursery() as nursery:
        for heartbeat in (0.1, 301.0):
            with pytest.raises(ServerError) as refused:
                await _silent_heartbeat_client(server, nursery, heartbeat)
            assert refused.value.code == ErrorCode.BAD_FIELD
        nursery.cancel_scope.cancel()


def test_the_welcome_offers_the_heartbeat() -> None:
    from tongits.server.handshake import CAPABILITIES

    assert "heartbeat" in CAPABILITIES


# ----- the kernel's check: socket options on both sides ----------------------------------------


def _options(sock: Any) -> dict[str, int]:
    read = {"keepalive": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)}
    for name in ("TCP_KEEPIDLE", "TCP_KEEPINTVL", "TCP_KEEPCNT", "TCP_USER_TIMEOUT"):
        if hasattr(socket, name):
            read[name] = sock.getsockopt(socket.IPPROTO_TCP, getattr(socket, name))
    return read


def _expected(timeout: float) -> dict[str, int]:
    want = {"keepalive": 1}
    want.update((k, v) for k, v in keepalive_settings(timeout).items() if hasattr(socket, k))
    return want


async def test_accepted_and_client_sockets_notice_a_dead_peer() -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server(dead_peer_timeout=24.0) as (server, port), open_connection(
            "127.0.0.1", port, name="Ana", dead_peer_timeout=12.0
        ) as ana:
            await ana.ping()
            (peer,) = server.peers
            assert isinstance(peer.stream, trio.SocketStream)
            assert _options(peer.stream.socket) == _expected(24.0)
            assert isinstance(ana.stream, trio.SocketStream)
            assert _options(ana.stream.socket) == _expected(12.0)
    assert keepalive_settings(24.0)["TCP_USER_TIMEOUT"] == 24_000
    assert keepalive_settings(24.0)["TCP_KEEPIDLE"] == 12


async def test_a_dead_peer_timeout_of_zero_leaves_the_system_defaults() -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server(dead_peer_timeout=0.0) as (server, port), open_connection(
            "127.0.0.1", port, name="Ana", dead_peer_timeout=0
        ) as ana:
            await ana.ping()
            (peer,) = server.peers
            assert isinstance(peer.stream, trio.SocketStream)
            assert peer.stream.socket.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0


# ----- the whole path through a link that goes dead ----------------------------------------------


async def test_a_connection_the_server_closed_ended_when_it_was_heard(
    autojump_clock: object,
) -> None:
    """A server that closes (or resets) the connection is heard at once: the connection ended
    then, however long the server had been quiet before (``silent_for`` 0), unlike a link that
    died without a word."""
    client, server_side = trio.testing.memory_stream_pair()
    conn = Connection(client)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.run_reader)
        await trio.sleep(50)  # a quiet table: nothing said for 50 s
        await server_side.aclose()
    assert conn.silent_for() == 0


async def test_through_a_dead_link_both_sides_notice_and_the_player_comes_back() -> None:
    """Ben (heartbeat 1 s) behind the black hole; Ana, at the same table, directly. The link
    dies: the server says ``away`` within three periods, Ben's connection gives up within
    three; the link comes back: Ben resumes with his token, the table hears ``back``."""
    heartbeat = 1.0
    with trio.fail_after(TIME_CAP):
        async with behind_black_hole(grace=60.0) as (_server, port, hole), open_connection(
            "127.0.0.1", port, name="Ana"
        ) as ana:
            joined = await ana.create_table("friday", bots=1, timer=0)
            async with open_connection("127.0.0.1", hole.listen_port, name="Ben",
                                       heartbeat=heartbeat) as ben:
                seated = await ben.join(joined.table)
                token, seq = ben.token, ben.seq
                await trio.sleep(2.5 * heartbeat)  # pings cross while the link lives
                assert ben.lost is None
                hole.block()
                dropped = trio.current_time()
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await ben.receive()
                noticed = trio.current_time() - dropped
                assert closed.value.lost is not None and closed.value.error is None
                assert noticed <= (PONG_WAIT + 1) * heartbeat + 0.5
                # the link died when it went silent, not when it was noticed (its last pong
                # came at most a period before the drop)
                assert noticed <= ben.silent_for() <= noticed + heartbeat + 0.5
                seq = ben.seq
            await next_of(ana, SeatUpdate, _change(seated.seat, "away"))
            away = trio.current_time() - dropped
            assert away <= HEARTBEAT_MISSES * heartbeat + 1.0
            hole.unblock()
            async with open_connection("127.0.0.1", hole.listen_port, name="Ben", token=token,
                                       seq=seq, heartbeat=heartbeat) as back:
                state = await next_of(back, State)
                assert back.seat == seated.seat and state.view["seat"] == seated.seat
                await next_of(ana, SeatUpdate, _change(seated.seat, "back"))


# ----- the terminal client through a dead link -------------------------------------------------


class HiddenServer:
    """The prelude of a ``NetSession``: a server and a ``BlackHole`` in front of it, in the
    session's Trio run; a spectator at the table notes the ``seat_update`` changes of seat 0."""

    def __init__(self) -> None:
        self.hole: BlackHole | None = None
        self.nursery: trio.Nursery | None = None
        self.port = 0
        self.changes: list[str] = []

    async def __call__(self, nursery: trio.Nursery) -> tuple[str, int]:
        server = Server(ServerConfig(port=0, timer=0.0, bot_delay=0.0, log_level="WARNING"))
        self.nursery = nursery
        listeners = await nursery.start(server.serve)
        self.port = listeners[0].socket.getsockname()[1]
        self.hole = BlackHole(self.port)
        await nursery.start(self.hole.serve)
        return "127.0.0.1", self.hole.listen_port

    async def watch(self, table: str) -> None:
        async with open_connection("127.0.0.1", self.port, name="watcher") as conn:
            await conn.spectate(table)
            async for msg in conn:
                if isinstance(msg, SeatUpdate) and msg.change and msg.change.get("seat") == 0:
                    self.changes.append(str(msg.change["change"]))


def test_the_screen_says_the_link_is_lost_and_comes_back_to_its_seat_by_itself() -> None:
    """Ana's screen (heartbeat 1 s) behind the black hole: the link dies, the screen says it
    is reconnecting and the table sees her ``away``; the link comes back, she is back in her
    seat with the same token and the table sees ``back``."""
    hidden = HiddenServer()
    seen: dict[str, Any] = {}

    async def sit_and_watch(conn: Connection) -> None:
        joined = await conn.create_table("friday", timer=0, bots=2)
        assert hidden.nursery is not None
        hidden.nursery.start_soon(hidden.watch, joined.table)

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=sit_and_watch, prelude=hidden, retry_delays=(0.2,), heartbeat=1.0))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            banners: list[str] = []
            shown = screen.on_update

            def note(update: Any) -> None:
                shown(update)
                banners.append(screen.state.banner or "")

            screen.on_update = note  # type: ignore[method-assign]
            task = asyncio.create_task(screen.run())

            def in_trio(fn: Any) -> None:
                session._trio.run_sync_soon(fn)  # type: ignore[union-attr]

            try:
                await settle(lambda: bool(screen.state.view and screen.state.view.legal))
                token = session.token
                assert hidden.hole is not None
                loop = asyncio.get_running_loop()
                in_trio(hidden.hole.block)
                dropped = loop.time()
                await settle(lambda: any("reconnecting" in b for b in banners))
                seen["screen noticed"] = loop.time() - dropped
                seen["banner"] = next(b for b in banners if "reconnecting" in b)
                await settle(lambda: "away" in hidden.changes)
                seen["table noticed"] = loop.time() - dropped
                in_trio(hidden.hole.unblock)
                seen["outage"] = loop.time() - dropped
                await settle(lambda: "back" in hidden.changes)
                await settle(lambda: screen.state.banner is None)
                seen["said"] = [line.text for line in screen.state.log()
                                if line.text.startswith("connection back after")]
                seen["token"] = (token, session.token)
                seen["legal"] = bool(screen.state.view and screen.state.view.legal)
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert seen["screen noticed"] <= (PONG_WAIT + 1) * 1.0 + 1.0
    assert seen["table noticed"] <= HEARTBEAT_MISSES * 1.0 + 1.0
    assert "connection lost" in seen["banner"] and "seat is kept" in seen["banner"]
    assert seen["token"][0] == seen["token"][1] is not None
    assert seen["legal"]  # back in her seat, her turn as it was
    # the log counts the outage from when the link went silent, not from when it was noticed
    (said,) = seen["said"]
    assert int(said.split()[3]) >= seen["outage"] - 1


# ----- coming back after a bot stood in ---------------------------------------------------------


@capped
async def test_coming_back_from_a_stand_in_keeps_the_deadline_of_the_seat_to_act(
    autojump_clock: object,
) -> None:
    """Ben's stand-in hands his seat back while Ana is to act: her turn still ends when her
    screen said (the table's timer is not started again for her)."""
    async with memory_server(timer=30.0, grace=5.0) as (_server, connect), \
            connect("Ana") as ana:
        joined = await ana.create_table("friday", bots=1)
        async with connect("Ben") as ben:
            seated = await ben.join(joined.table)
            token = ben.token
        await next_of(ana, SeatUpdate, _change(seated.seat, "stand_in"))
        state = ana.last_state
        if state is None or not state.legal:
            state = await my_turn(ana)
        assert state.deadline is not None
        ends = trio.current_time() + state.deadline
        await trio.sleep(state.deadline / 2)
        async with connect("Ben", token=token):
            await next_of(ana, SeatUpdate, _change(seated.seat, "back"))
            moved = await next_of(ana, State, lambda s: not s.legal)
            assert moved.view["history"][-1].get("timeout") is True
            assert trio.current_time() <= ends + 0.01


async def test_an_sdk_bot_behind_a_dead_link_resumes_its_seat_and_finishes_its_hands() -> None:
    """The link dies as the bot sends its fifth move, for 5 s: the bot (heartbeat 1 s) gives
    the connection up, retries while the route is gone, and resumes once it is back."""
    greedy = get_policy("greedy", seed=1)
    decisions = itertools.count(1)

    with trio.fail_after(TIME_CAP):
        async with behind_black_hole() as (_server, _port, hole), \
                trio.open_nursery() as nursery:

            async def cut_for(seconds: float) -> None:
                hole.block()
                await trio.sleep(seconds)
                hole.unblock()

            async def policy(view: SeatView) -> Move:
                if next(decisions) == 5:
                    nursery.start_soon(cut_for, 5.0)
                return greedy(view)

            bot = Bot(policy, port=hole.listen_port, name="wifi", create=True, bots=2, hands=2,
                      timer=0, heartbeat=1.0, retry_delays=(0.2,) * 50)
            run = await bot.run()
    assert run.reconnects == 1 and len(run.hands) == 2


async def test_a_connection_given_up_is_reset_so_nothing_it_held_arrives_later() -> None:
    """A server that answers ``hello`` and then nothing (its kernel still acknowledges): the
    heartbeat gives it up and the close is a reset, which drops anything still unsent (a
    ``hello`` with our token, delivered after the link came back, would take the seat from
    the connection we resumed with)."""
    ended: dict[str, str] = {}

    async def mute(stream: trio.SocketStream) -> None:
        codec = Codec()
        while (raw := codec.next_message()) is None:
            codec.receive_data(await stream.receive_some(65536))
        welcome = {"type": "welcome", "id": raw["id"], "version": 1, "server": "mute",
                   "capabilities": []}
        await stream.send_all(codec.encode(welcome))
        try:
            while await stream.receive_some(65536):
                pass  # pings, never answered
            ended["how"] = "closed"
        except trio.BrokenResourceError:
            ended["how"] = "reset"

    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(trio.serve_tcp, mute, 0)
            port = listeners[0].socket.getsockname()[1]
            async with open_connection("127.0.0.1", port, name="Ben", heartbeat=1.0) as conn:
                with pytest.raises(ConnectionClosed):
                    await conn.receive()
                assert conn.lost is not None
            await until(lambda: "how" in ended)
            nursery.cancel_scope.cancel()
    assert ended["how"] == "reset"
