"""Helpers for the server tests: a server on port 0 or on in-memory streams, clients, and
raw frames written by hand.

No test lives here; the tests import these helpers (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

import msgpack
import trio
import trio.testing
from tongits.client.connection import Connection, connect_stream, open_connection
from tongits.engine import SeatView
from tongits.engine.policies import get_policy
from tongits.protocol import Codec, HandResult, Mode, ServerMessage, State, sniff
from tongits.server import Journal, MemoryJournal, Server, ServerConfig
from tongits.server.net.web import http_start

M = TypeVar("M", bound=ServerMessage)

#: Every I/O test on real sockets runs under this cap, in seconds.
TIME_CAP = 30
#: The cap of tests on the virtual clock (``autojump_clock``): a deadlock jumps straight to it.
VIRTUAL_CAP = 24 * 3600
#: A client's first frame, as a map, for tests that write raw frames.
HELLO = {"type": "hello", "id": 0, "version": 1, "name": "fuzz", "kind": "human"}


def quick_config(**changes: Any) -> ServerConfig:
    """Port 0, no turn timer, bots play at once, no rate limits: a server for tests."""
    values: dict[str, Any] = {"port": 0, "timer": 0.0, "bot_delay": 0.0, "rate": 0.0,
                              "connection_rate": 0.0, "table_rate": 0.0}
    values.update(changes)
    return ServerConfig.from_mapping(values)


@asynccontextmanager
async def tcp_server(**changes: Any) -> AsyncIterator[tuple[Server, int]]:
    """A server on 127.0.0.1, a free port."""
    server = Server(quick_config(**changes), MemoryJournal())
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(server.serve)
        yield server, listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


Connect = Callable[..., AbstractAsyncContextManager[Connection]]


@asynccontextmanager
async def memory_server(
    journal: Journal | None = None, **changes: Any
) -> AsyncIterator[tuple[Server, Connect]]:
    """A server fed by in-memory streams (deterministic with ``autojump_clock``); yields it and
    ``connect(name, address="memory", **kw)``, an async context manager giving a ``Connection``.
    Give the same ``journal`` to a second server to restart it."""
    server = Server(quick_config(**changes), journal if journal is not None else MemoryJournal())
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))

        def connect(
            name: str, address: str = "memory", **kw: Any
        ) -> AbstractAsyncContextManager[Connection]:
            client, server_side = trio.testing.memory_stream_pair()
            nursery.start_soon(server.handle_stream, server_side, address)
            return connect_stream(client, name=name, **kw)

        yield server, connect
        nursery.cancel_scope.cancel()


def tcp_connect(port: int, name: str, **kw: Any) -> AbstractAsyncContextManager[Connection]:
    return open_connection("127.0.0.1", port, name=name, **kw)


async def next_of(conn: Connection, kind: type[M], pred: Callable[[M], bool] | None = None) -> M:
    """Skip pushed messages until one of ``kind`` (matching ``pred``) arrives."""
    while True:
        msg = await conn.receive()
        if isinstance(msg, kind) and (pred is None or pred(msg)):
            return msg


async def my_turn(conn: Connection) -> State:
    return await next_of(conn, State, lambda s: bool(s.legal))


async def play_hands(
    conn: Connection, hands: int, policy: str = "greedy", seen: list[ServerMessage] | None = None
) -> list[HandResult]:
    """Play ``hands`` hands with a policy deciding from the view received over the wire, asking
    for the next hand after each result; returns the results. ``seen`` collects every message."""
    bot = get_policy(policy, seed=conn.seat)
    results: list[HandResult] = []
    acted = -1

    async def act(state: State) -> None:
        nonlocal acted
        acted = state.seq
        await conn.move(bot(SeatView.from_dict(state.view, state.legal)))

    if conn.last_state is not None and conn.last_state.legal:
        await act(conn.last_state)
    while True:
        msg = await conn.receive()
        if seen is not None:
            seen.append(msg)
        if isinstance(msg, State) and msg.legal and msg is conn.last_state and msg.seq > acted:
            await act(msg)
        elif isinstance(msg, HandResult):
            results.append(msg)
            if len(results) == hands:
                return results
            await conn.next_hand()


def capped(test: Callable[..., Any]) -> Callable[..., Any]:
    """Run an async test on the virtual clock under ``VIRTUAL_CAP``."""

    @functools.wraps(test)
    async def run(*args: Any, **kwargs: Any) -> Any:
        with trio.fail_after(VIRTUAL_CAP):
            return await test(*args, **kwargs)

    return run


def frame(obj: Any) -> bytes:
    """``obj`` as one binary frame, written by hand (no codec), for raw and broken input."""
    payload: bytes = msgpack.packb(obj)
    return struct.pack(">I", len(payload)) + payload


async def exchange(server: Server, data: bytes) -> list[dict[str, Any]]:
    """Send ``data`` on a fresh in-memory connection; every frame until the server closes it or
    stays quiet for a (virtual) minute. Bytes that open an HTTP request (a browser, answered
    by the page's side of the port) get an HTTP answer and no frame."""
    client, server_side = trio.testing.memory_stream_pair()
    frames: list[dict[str, Any]] = []
    codec = Codec(sniff(data[0]) if data else Mode.BINARY)  # the server answers in its mode
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, server_side, "memory")
        await client.send_all(data)
        with trio.move_on_after(60):
            while True:
                chunk = await client.receive_some(65536)
                if not chunk:
                    break
                if not frames and not codec.buffered and chunk.startswith(b"HTTP/1.1 "):
                    assert http_start(data), data
                    break
                codec.receive_data(chunk)
                while (msg := codec.next_message()) is not None:
                    frames.append(msg)
        await client.aclose()
    return frames


async def until(condition: Callable[[], bool], interval: float = 0.01) -> None:
    """Return once ``condition()`` holds, looked at every ``interval`` seconds; the caller's
    cap (``capped``, ``fail_after``) bounds the wait.

    For white-box tests that wait on the server's insides (a peer seated, a journal drained,
    a table created by another client), which have no event to await."""
    while not condition():  # noqa: ASYNC110 - server internals offer no event to wait on
        await trio.sleep(interval)
