"""A Trio connection to a Tongits server, shared by the terminal client, the bot SDK and tests.

::

    async with open_connection("127.0.0.1", 7777, name="Ana") as conn:
        joined = await conn.create_table("Friday", bots=2, timer=0)
        async for msg in conn:                      # state, hand_result, chat, seat_update…
            if isinstance(msg, State) and msg.legal:
                await conn.move(msg.legal[0])

``request`` sends a request with a fresh ``id`` and returns its reply, or raises
``ServerError`` for an ``error`` frame that answers it. Every other server message (pushed
``state``, ``hand_result``, ``chat``, ``seat_update``, and errors that answer no request) arrives
on the connection's receive channel: iterate the connection or call ``receive``. ``token``
holds the latest seat token from ``joined`` and ``seq`` the newest ``seq`` of a ``state`` or
``hand_result`` at that table: after a disconnect, open a new connection with ``token=`` and
``seq=`` and the resumed ``state`` lists in ``missed`` exactly the events of the hand that
happened meanwhile (the server keeps the seat for its grace period, then lets a bot stand in
until the token comes back). ``last_state`` is the newest ``state`` received, even if it is
still waiting in the channel (act only on that one: an older ``state`` in the channel may offer
moves that are no longer legal).

A network that drops without closing (a friend's Wi-Fi) is noticed on both sides when the
connection says a ``heartbeat`` (``open_connection(heartbeat=10)``, as the terminal client and
the SDK's bots do): a ``ping`` goes out every period, the server treats a client silent for
three periods as gone, and a ``ping`` left unanswered for ``PONG_WAIT`` periods ends the
connection here (``ConnectionClosed``, ``lost`` says why) so the caller can reconnect with its
token. The sockets also get ``keepalive.dead_peer_options``.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import socket
import struct
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import trio
from tongits.engine import Move
from tongits.protocol import (
    PROTOCOL_VERSION,
    AddBot,
    Chat,
    ClientMessage,
    Codec,
    CreateTable,
    Error,
    GetStandings,
    HandResult,
    Hello,
    Join,
    Joined,
    LadderStandings,
    Leave,
    ListTables,
    Mode,
    MoveRequest,
    NextHand,
    Ping,
    ProtocolError,
    Queue,
    Register,
    Registered,
    RemoveBot,
    Reply,
    ServerMessage,
    Spectate,
    Start,
    State,
    Tables,
    Unqueue,
    Welcome,
    parse_server,
    to_dict,
)
from tongits.protocol.keepalive import DEFAULT_DEAD_PEER_TIMEOUT, PONG_WAIT, dead_peer_options
from tongits.protocol.maps import TableInfoMap
from tongits.protocol.transport import Endpoint

from .tls import ClientTLS, open_stream

log = logging.getLogger("tongits.client")


class ServerError(Exception):
    """An ``error`` frame from the server; ``code`` is the stable wire code."""

    def __init__(self, error: Error) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error
        self.code = error.code
        self.message = error.message


class ConnectionClosed(Exception):
    """The connection ended: the server closed it (``error`` holds its last error frame, if
    any), or this side gave it up for lost (``lost`` says why: the server went silent)."""

    def __init__(self, error: Error | None = None, lost: str | None = None) -> None:
        super().__init__(f"connection closed: {error.code}" if error
                         else f"connection lost: {lost}" if lost else "connection closed")
        self.error = error
        self.lost = lost


class Connection:
    """One session with a server over a Trio stream. Build it with ``open_connection`` (TCP)
    or ``connect_stream`` (any stream); both run the reader in a nursery and say ``hello``."""

    def __init__(self, stream: trio.abc.Stream, *, text: bool = False, buffer: int = 10_000):
        self.stream = stream
        self.codec = Codec(Mode.TEXT if text else Mode.BINARY)
        self.welcome: Welcome | None = None
        self.token: str | None = None
        self.table: str | None = None
        self.seat: int | None = None
        #: the join code the last ``spectate`` gave: watching a private table again (after a
        #: lost connection) needs it again
        self.watch_code: str | None = None
        self.closed_by: Error | None = None
        self.last_state: State | None = None
        self.seq: int | None = None
        #: the invite link of the private table this connection created and still sits at
        self.invite: str | None = None
        #: the last ``joined`` received, and the event the next one sets (``next_joined``)
        self.last_joined: Joined | None = None
        self._joined_event = trio.Event()
        self._ids = itertools.count(1)
        self._waiting: dict[int | str, trio.MemorySendChannel[ServerMessage]] = {}
        self._push_send, self._push = trio.open_memory_channel[ServerMessage](buffer)
        self._send_lock = trio.Lock()
        self._reader_done = False
        self._reader_scope = trio.CancelScope()
        #: why this side ended the connection (the server stopped answering), else None
        self.lost: str | None = None
        #: ``trio.current_time()`` when the server was last known to be there: its last bytes,
        #: or the close or reset that ended the connection, heard as it came (``silent_for``)
        self.alive_at = trio.current_time()

    # ----- requests -----------------------------------------------------------------------

    async def request(self, msg: ClientMessage | dict[str, Any]) -> ServerMessage:
        """Send a request with a new ``id`` and wait for its reply; ``ServerError`` if refused."""
        data = dict(msg if isinstance(msg, dict) else to_dict(msg))
        ref = next(self._ids)
        data["id"] = ref
        send, receive = trio.open_memory_channel[ServerMessage](1)
        self._waiting[ref] = send
        try:
            if self._reader_done:  # nobody would ever route the reply
                raise ConnectionClosed(self.closed_by, self.lost)
            await self.send(data)
            try:
                reply = await receive.receive()
            except trio.EndOfChannel:
                raise ConnectionClosed(self.closed_by, self.lost) from None
        finally:
            self._waiting.pop(ref, None)
        if isinstance(reply, Error):
            raise ServerError(reply)
        return reply

    async def send(self, msg: ClientMessage | dict[str, Any]) -> None:
        """Send a message without waiting for any reply."""
        data = msg if isinstance(msg, dict) else to_dict(msg)
        async with self._send_lock:
            await self.stream.send_all(self.codec.encode(data))

    async def hello(
        self,
        name: str,
        kind: Literal["human", "bot"] = "human",
        token: str | None = None,
        seq: int | None = None,
        password: str | None = None,
        heartbeat: float | None = None,
        account: str | None = None,
    ) -> Welcome:
        reply = await self.request(Hello(version=PROTOCOL_VERSION, name=name, kind=kind,
                                         token=token, seq=seq, password=password,
                                         heartbeat=heartbeat, account=account))
        assert isinstance(reply, Welcome)
        self.welcome = reply
        return reply

    async def list_tables(
        self, offset: int = 0, limit: int | None = None, open: bool = False,
        table: str | None = None,
    ) -> list[TableInfoMap]:
        """One page of the lobby (the first by default; ``table``: only that table's entry;
        see ``tables`` in docs/PROTOCOL.md)."""
        reply = await self.request(ListTables(offset=offset, limit=limit, open=open,
                                              table=table))
        assert isinstance(reply, Tables)
        return reply.tables

    async def create_table(
        self,
        name: str,
        *,
        options: dict[str, Any] | None = None,
        timer: float | None = None,
        private: bool = False,
        bots: int = 0,
        auto_start: bool = True,
        hands: int | None = None,
        target: int | None = None,
        rematch: str | None = None,
        token: str | None = None,
    ) -> Joined:
        """A new table, where we sit in seat 0; with ``rematch`` (a finished match's table id)
        and ``token`` (our seat's token there): the table the players of that match who ask
        share, made with its settings (the others here are then ignored) or joined."""
        msg = CreateTable(name=name, options=options or {}, timer=timer, private=private,
                          bots=bots, auto_start=auto_start, hands=hands, target=target,
                          rematch=rematch, token=token)
        return await self._joined(msg)

    async def join(self, table: str, seat: int | None = None, code: str | None = None) -> Joined:
        return await self._joined(Join(table=table, seat=seat, code=code))

    async def spectate(self, table: str, code: str | None = None) -> Joined:
        """Watch ``table``; a private one needs its ``code`` (from its invite link)."""
        joined = await self._joined(Spectate(table=table, code=code))
        self.watch_code = code
        return joined

    async def leave(self) -> None:
        await self.request(Leave())
        self.table = self.seat = self.token = self.seq = self.invite = None

    async def register(self, name: str) -> Registered:
        """A new ladder account (since 1.2): its name and secret key."""
        reply = await self.request(Register(name=name))
        assert isinstance(reply, Registered)
        return reply

    async def queue(self) -> None:
        """Wait for a ladder match; ``joined`` is pushed when the matchmaker seats us."""
        await self.request(Queue())

    async def next_joined(self) -> Joined:
        """The next ``joined`` to arrive (the one the ladder pushes when it seats us), left
        among the pushed messages for whoever reads them."""
        await self._joined_event.wait()
        assert self.last_joined is not None
        return self.last_joined

    async def unqueue(self) -> None:
        await self.request(Unqueue())

    async def standings(self, offset: int = 0, limit: int | None = None) -> LadderStandings:
        """One page of the ladder, best first."""
        reply = await self.request(GetStandings(offset=offset, limit=limit))
        assert isinstance(reply, LadderStandings)
        return reply

    async def add_bot(self, seat: int, policy: str | None = None) -> None:
        await self.request(AddBot(seat=seat, policy=policy))

    async def remove_bot(self, seat: int) -> None:
        await self.request(RemoveBot(seat=seat))

    async def start(self) -> None:
        await self.request(Start())

    async def move(self, move: Move | Mapping[str, Any]) -> None:
        """Play a move: an engine ``Move`` or its dict form (``{"action": "draw"}``)."""
        data = move.to_dict() if isinstance(move, Move) else move
        await self.request(MoveRequest(move=data))

    async def chat(self, text: str) -> None:
        await self.request(Chat(text=text))

    async def next_hand(self) -> None:
        await self.request(NextHand())

    async def ping(self) -> None:
        await self.request(Ping())

    async def run_heartbeat(self, period: float) -> None:
        """Send a ``ping`` every ``period`` seconds (the promise of ``hello.heartbeat``); a
        ``pong`` that does not come within ``PONG_WAIT`` periods means the server or the
        network between is gone: the connection ends here (``lost``) as if the server had
        closed it. The ``pong`` answers its own request, so it never reaches ``receive``."""
        wait = PONG_WAIT * period
        while True:
            await trio.sleep(period)
            try:
                with trio.move_on_after(wait) as waiting:
                    await self.ping()
            except ConnectionClosed:
                return
            if waiting.cancelled_caught:
                self.lost = f"no answer from the server for {wait:g} s"
                self.abandon()
                self._reader_scope.cancel()
                return

    def silent_for(self) -> float:
        """Seconds since the server was last known to be there. A connection that died without
        a word (a network gone: no answer to a ``ping``, or the kernel's timeout) ended that
        long ago, not when this side noticed, 20 to 30 s later; one the server closed or reset
        ended when it was heard, and says 0."""
        return trio.current_time() - self.alive_at

    def abandon(self) -> None:
        """Have the coming close reset the connection (``SO_LINGER`` 0) instead of ending it
        gracefully: what the kernel still holds unsent is dropped. A graceful close would keep
        sending it, and once a dead link came back a ``hello`` with our token left in it would
        reach the server after the connection we resumed with, and take the seat from it."""
        sock = _socket_of(self.stream)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    async def _joined(self, msg: ClientMessage) -> Joined:
        reply = await self.request(msg)
        assert isinstance(reply, Joined)
        return reply

    def _note(self, msg: ServerMessage) -> None:
        if isinstance(msg, State):
            self.last_state = msg
            self.seq = highest_seq(self.seq, msg.seq)
        elif isinstance(msg, HandResult):
            self.seq = highest_seq(self.seq, msg.seq)
        elif isinstance(msg, Joined):
            self.last_joined = msg
            self._joined_event.set()
            self._joined_event = trio.Event()
            if msg.table != self.table:
                self.seq = self.invite = None
            self.table, self.seat = msg.table, msg.seat
            if msg.token is not None:
                self.token = msg.token
            if msg.invite is not None:
                self.invite = msg.invite

    # ----- pushed messages ----------------------------------------------------------------

    async def receive(self) -> ServerMessage:
        """The next pushed message; ``ConnectionClosed`` once the connection has ended."""
        try:
            return await self._push.receive()
        except trio.EndOfChannel:
            raise ConnectionClosed(self.closed_by, self.lost) from None

    def __aiter__(self) -> AsyncIterator[ServerMessage]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ServerMessage]:
        async for msg in self._push:
            yield msg

    async def run_reader(self) -> None:
        """Read and route server messages until the stream ends, or the heartbeat gives the
        server up (run by the nursery)."""
        try:
            with self._reader_scope:
                while True:
                    try:
                        data = await self.stream.receive_some(65536)
                    except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
                        if not isinstance(error.__cause__, TimeoutError):  # a reset, heard
                            self.alive_at = trio.current_time()
                        break
                    self.alive_at = trio.current_time()  # bytes, or the server's close
                    if not data:
                        break
                    self.codec.receive_data(data)
                    while (raw := self.codec.next_message()) is not None:
                        try:
                            msg = parse_server(raw)
                        except ProtocolError as error:
                            self._unreadable(raw, error)
                            continue
                        await self._route(msg)
        finally:
            self._reader_done = True
            self._push_send.close()
            for waiter in self._waiting.values():
                waiter.close()

    def _unreadable(self, raw: Mapping[Any, Any], error: ProtocolError) -> None:
        """A server message that is not what the protocol says (a server with a bug, or a
        hostile one): logged and left out, so that nothing past the reader meets a map not of
        its type. A request it answers is refused with the reason (``ServerError``) rather
        than left waiting."""
        log.warning("a message from the server that cannot be read was ignored: %s", error)
        waiter = self._waiting.pop(error.ref, None) if error.ref is not None else None
        if waiter is not None:
            waiter.send_nowait(Error(code=error.code, number=error.number, ref=error.ref,
                                     message=f"the server's reply cannot be read: "
                                             f"{error.message}"))

    async def _route(self, msg: ServerMessage) -> None:
        ref = msg.ref if isinstance(msg, Error) else msg.id if isinstance(msg, Reply) else None
        waiter = self._waiting.pop(ref, None) if ref is not None else None
        if waiter is not None:
            # Noted here, in the order of arrival: a ``joined`` noted once its requester wakes
            # would come after the ``state`` pushed behind it, and forget that state's ``seq``.
            self._note(msg)
            waiter.send_nowait(msg)
            return
        if isinstance(msg, Error):
            self.closed_by = msg
        self._note(msg)
        await self._push_send.send(msg)

    async def aclose(self) -> None:
        await self.stream.aclose()


@asynccontextmanager
async def connect_stream(
    stream: trio.abc.Stream,
    *,
    name: str,
    kind: Literal["human", "bot"] = "human",
    token: str | None = None,
    seq: int | None = None,
    text: bool = False,
    password: str | None = None,
    heartbeat: float | None = None,
    account: str | None = None,
) -> AsyncIterator[Connection]:
    """A ``Connection`` over ``stream`` that has said ``hello`` (as the ladder ``account``
    whose key is given, if any); closed on exit. A refused
    ``hello`` (``bad_password``, ``bad_token``…, or a connection closed with an error before the
    reply, such as ``tls_required``) raises its ``ServerError`` as it is. With ``heartbeat``
    the connection promises a ``ping`` every that many seconds and runs ``run_heartbeat``
    (a ``welcome`` that does not come within ``PONG_WAIT`` periods: ``trio.TooSlowError``)."""
    conn = Connection(stream, text=text)
    refused: ServerError | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.run_reader)
        try:
            try:
                with trio.fail_after(PONG_WAIT * heartbeat if heartbeat else math.inf):
                    await conn.hello(name, kind, token, seq, password, heartbeat, account)
            except trio.TooSlowError:
                conn.abandon()
                raise
            except ServerError as error:
                refused = error
            except ConnectionClosed as closed:
                if closed.error is None:
                    raise
                refused = ServerError(closed.error)  # e.g. tls_required, sent before any reply
            else:
                if heartbeat:
                    nursery.start_soon(conn.run_heartbeat, heartbeat)
                yield conn
        finally:
            nursery.cancel_scope.cancel()
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await conn.aclose()
    if refused is not None:
        raise refused


@asynccontextmanager
async def open_connection(
    host: str,
    port: int,
    *,
    name: str,
    kind: Literal["human", "bot"] = "human",
    token: str | None = None,
    seq: int | None = None,
    text: bool = False,
    connect_timeout: float = math.inf,
    tls: ClientTLS | bool = False,
    password: str | None = None,
    heartbeat: float | None = None,
    dead_peer_timeout: float = DEFAULT_DEAD_PEER_TIMEOUT,
    account: str | None = None,
) -> AsyncIterator[Connection]:
    """Connect over TCP, or TLS if ``tls`` (True: system authorities, pins in the user's
    known-servers file, unverified certificates refused; see client/tls.py), and say
    ``hello`` (resuming the seat of ``token`` if given; ``password`` if the server has one).
    ``TrustError`` if the server's certificate is not trusted. ``connect_timeout`` bounds the
    TCP (and TLS) connection only: the caller's cancel scope bounds the rest. ``heartbeat``:
    see ``connect_stream``; ``dead_peer_timeout`` (0: the system's) has the kernel end the
    connection when the server stops acknowledging (``keepalive.dead_peer_options``)."""
    endpoint = Endpoint(host, port, tls=bool(tls))
    with trio.fail_after(connect_timeout):
        stream = await open_stream(endpoint, tls if isinstance(tls, ClientTLS) else None)
    sock = _socket_of(stream)
    if sock is not None:
        dead_peer_options(sock, dead_peer_timeout)
    async with connect_stream(stream, name=name, kind=kind, token=token, seq=seq,
                              text=text, password=password, heartbeat=heartbeat,
                              account=account) as conn:
        yield conn


def highest_seq(held: int | None, seq: int) -> int:
    """The ``seq`` to resume from after one more ``state`` or ``hand_result``: the highest
    received (a state that catches up may repeat a lower one, docs/PROTOCOL.md)."""
    return seq if held is None else max(held, seq)


def _socket_of(stream: trio.abc.Stream) -> trio.socket.SocketType | None:
    """The TCP socket under ``stream`` (plain or TLS), if there is one."""
    while isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    return stream.socket if isinstance(stream, trio.SocketStream) else None
