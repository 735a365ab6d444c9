"""The server: listeners, one nursery per connection (a reader and a writer), the lobby.

``Server.serve`` runs everything under one nursery and can be started with ``nursery.start``
(it reports the listeners, so a test can bind port 0). ``Server.handle_stream`` serves any
``trio.abc.Stream``, which lets tests use in-memory streams with a virtual clock.

A connection's reader decodes requests and routes them: handshake and lobby requests are
handled here, table requests go to the table's inbox. Lobby-changing requests (create, join,
spectate, leave, resume) wait for the table's answer so that a connection is always at one
table at most.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import logging
import math
import os
import signal
import sys
import time
from collections import Counter
from typing import Any

import trio
from tongits.engine import option_choices
from tongits.protocol import (
    PROTOCOL_MINOR,
    PROTOCOL_VERSION,
    BadLine,
    Chat,
    Codec,
    CreateTable,
    ErrorCode,
    FramingError,
    GetStandings,
    Hello,
    Join,
    LadderStandings,
    ListTables,
    Mode,
    Ping,
    PlayerKind,
    Pong,
    ProtocolError,
    Queue,
    Register,
    Registered,
    Spectate,
    Tables,
    Unqueue,
    Welcome,
    error_message,
    ok_message,
    parse_client,
    to_dict,
)
from tongits.protocol.keepalive import (
    HEARTBEAT_MISSES,
    MAX_HEARTBEAT,
    MIN_HEARTBEAT,
    dead_peer_options,
)
from tongits.protocol.transport import TLS_RECORD, AddressError, Endpoint, Invite
from trio.socket import AF_INET

from . import bots
from .access import PasswordGate
from .actor import Table
from .config import ServerConfig
from .discovery import answer_discovery
from .errors import FATAL, error_frame, request_ref
from .journal import Journal, NullJournal
from .ladder import MAX_STANDINGS_PAGE, Ladder
from .lobby import Lobby, check_name
from .matchmaker import Matchmaker
from .peer import Peer
from .requests import Resume
from .tls import ServerTLS
from .web import WebSite, browser_address, http_start

log = logging.getLogger("tongits.server")

SERVER_VERSION = "tongits/0.1"
#: What this server offers, each documented in docs/PROTOCOL.md ("Capabilities"); the server's
#: bot policies follow as ``bot:NAME``.
CAPABILITIES = [
    "text_mode", "spectate", "chat", "bots", "private_tables", "resume",
    # since 1.1
    "match_length", "sync", "auto_next", "remote_bots", "text_errors", "lobby_pages",
    "heartbeat",
    # since 1.2
    "ladder",
]

#: How long shutdown waits for connections to flush their last frame.
SHUTDOWN_GRACE = 2.0
#: How long a refused connection (the server or its address is full) is read: its first bytes
#: pick the mode the refusal is said in (a browser's request head is read to its end to be
#: answered ``503``); after this, or the answer, it is closed.
REFUSAL_WAIT = 2.0
#: How long the refusal itself may take to leave, after ``REFUSAL_WAIT`` at most.
REFUSAL_ANSWER_GRACE = 0.5
#: Refused connections being answered at once (each for ``REFUSAL_WAIT`` at most); beyond
#: that, a refused connection is closed without a word.
MAX_REFUSING = 256

#: ``accept`` errors that mean "no capacity now" (file descriptors, memory): retried after
#: ``ACCEPT_RETRY`` seconds instead of ending the listener (as ``trio.serve_listeners`` does).
_ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
ACCEPT_RETRY = 0.1

#: What one ``list_tables`` costs in the rate limit, in messages: a page is the most
#: expensive reply (docs/PROTOCOL.md, "Limits").
LIST_TABLES_COST = 5

#: Bytes a ``tables`` reply keeps free beyond its head as measured with no ``total`` and
#: ``next`` (their digits, the list's header and brackets).
_PAGE_SLACK = 64


class Server:
    """``tls`` serves TLS on the same port (``None``: plain only); ``password`` is the server
    password ``hello`` must carry (``None``: anyone may sit down)."""

    def __init__(
        self,
        config: ServerConfig | None = None,
        journal: Journal | None = None,
        *,
        tls: ServerTLS | None = None,
        password: str | None = None,
        ladder: Ladder | None = None,
    ):
        """``ladder``: the rated ladder's accounts and ratings (default: kept in memory)."""
        self.config = config or ServerConfig()
        self.lobby = Lobby(self.config, journal or NullJournal())
        self.ladder = ladder if ladder is not None else Ladder()
        self.lobby.ladder = self.ladder
        self.matchmaker = Matchmaker(self.ladder, self.lobby, self.config)
        self.tls = tls
        #: the page and the WebSocket for browsers on the same port (None: ``--web false``)
        self.web = (WebSite(self.config.handshake_timeout, self.config.frame_timeout)
                    if self.config.web else None)
        self.gate = PasswordGate(password)
        self._invite_password = password if self.config.invite_password else None
        self.started = time.monotonic()
        self.peers: set[Peer] = set()
        #: set when the last connection has ended, once a shutdown waits for that
        self._no_peers: trio.Event | None = None
        self._per_host: Counter[str] = Counter()
        #: refused connections being answered (``_serve_refused``)
        self._refusing = 0
        self._cancel = trio.CancelScope()
        self._connections: trio.Nursery | None = None
        #: why the server stopped on its own (the journal could not commit), else None
        self.failure: BaseException | None = None

    async def serve(
        self,
        *,
        listen: bool = True,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run until cancelled or ``shutdown``; ``task_status`` gets the listeners."""
        with self._cancel:
            async with trio.open_nursery() as tables:
                self.lobby.bind(tables)
                tables.start_soon(self._stop_if_the_journal_fails)
                restored = self.lobby.restore()
                if restored:
                    log.info("restored %d table%s from the journal", restored,
                             "" if restored == 1 else "s")
                self.ladder.void_missing(self.lobby.tables)
                tables.start_soon(self.matchmaker.run, name="ladder matchmaker")
                async with trio.open_nursery() as connections:
                    self._connections = connections
                    listeners: list[trio.SocketListener] = []
                    if listen:
                        listeners = await trio.open_tcp_listeners(
                            self.config.port, host=self.config.host
                        )
                        for listener in listeners:
                            connections.start_soon(self._accept, listener)
                        for listener in listeners:
                            host, port = listener.socket.getsockname()[:2]
                            log.info("%s listening on %s port %d", self.config.name, host, port)
                            if self.config.discovery and listener.socket.family == AF_INET:
                                await tables.start(
                                    answer_discovery, self.config.name, host, port,
                                    self.lobby.count, self.tls_mode,
                                )
                    task_status.started(listeners)
                    await trio.sleep_forever()

    async def _accept(self, listener: trio.SocketListener) -> None:
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as exc:
                    if exc.errno not in _ACCEPT_CAPACITY_ERRNOS:
                        raise
                    # Out of file descriptors or memory: the connections already open go on;
                    # new ones wait in the kernel's backlog until some close.
                    log.warning("cannot accept a connection (%s); retrying in %g s",
                                os.strerror(exc.errno or 0), ACCEPT_RETRY)
                    await trio.sleep(ACCEPT_RETRY)
                    continue
                try:
                    host, port = stream.socket.getpeername()[:2]
                    address = f"{host}:{port}"
                except OSError:
                    address = "?"
                assert self._connections is not None
                self._connections.start_soon(self.handle_stream, stream, address)

    @property
    def tls_mode(self) -> str | None:
        """What discovery says about TLS: ``required``, ``optional`` or None (plain only)."""
        if self.tls is None:
            return None
        return "required" if self.config.tls_required else "optional"

    async def shutdown(self) -> None:
        """Tell every connection the server is going away, give them a moment, stop."""
        log.info("shutting down: %d connections, %d tables", len(self.peers),
                 len(self.lobby.tables))
        for peer in list(self.peers):
            peer.kick(ErrorCode.SHUTTING_DOWN, "the server is shutting down")
        await self._until_no_peers()
        self._cancel.cancel()

    async def _until_no_peers(self) -> None:
        """Wait until every connection has ended, ``SHUTDOWN_GRACE`` seconds at most."""
        if not self.peers:
            return
        if self._no_peers is None:
            self._no_peers = trio.Event()
        with trio.move_on_after(SHUTDOWN_GRACE):
            await self._no_peers.wait()

    async def _stop_if_the_journal_fails(self) -> None:
        """A commit failed (a full disk): nothing more can be saved, so nothing more may be
        played. Every client is told (``shutting_down``; what was held for the failed commit
        never leaves), then the server stops; ``failure`` says why (``GroupCommit`` logged
        it)."""
        journal = self.lobby.journal
        await journal.failed.wait()
        self.failure = journal.error
        for peer in list(self.peers):
            peer.kick(ErrorCode.SHUTTING_DOWN,
                      "the server cannot save games any more (its disk may be full) and is "
                      "stopping", flush=False)
        await self._until_no_peers()
        self._cancel.cancel()

    async def run_until_signal(self) -> None:
        """Serve until SIGINT or SIGTERM, then shut down gracefully (or until the server stops
        on its own: ``failure``); SIGHUP re-reads the TLS certificate. The bound addresses are
        printed on stdout, one ``listening on HOST:PORT`` line each (for scripts that start
        the server on port 0), then the address to open in a browser."""
        async with trio.open_nursery() as nursery:
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
                listeners = await nursery.start(self._serve_then_stop, nursery.cancel_scope)
                for listener in listeners:
                    host, port = listener.socket.getsockname()[:2]
                    print(f"listening on {host}:{port}", file=sys.stdout, flush=True)
                if listeners and self.config.web:
                    host, port = listeners[0].socket.getsockname()[:2]
                    address = browser_address(host, port, self.config.tls_enabled)
                    print(f"open {address} in a browser", file=sys.stdout, flush=True)
                async for signum in signals:
                    log.info("received %s", signal.Signals(signum).name)
                    if signum != signal.SIGHUP:
                        break
                    if self.tls is not None:
                        self.tls.reload()
                await self.shutdown()

    async def _serve_then_stop(
        self,
        scope: trio.CancelScope,
        *,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        await self.serve(task_status=task_status)
        scope.cancel()  # stopped on its own: no signal to wait for

    # ----- one connection -----------------------------------------------------------------

    async def handle_stream(self, stream: trio.abc.Stream, address: str = "memory") -> None:
        """Serve one connection until it ends. The connection's wall: whatever fails while
        serving it ends this connection only (logged once), never the server."""
        try:
            await self._serve_stream(stream, address)
        except Exception as exc:  # noqa: BLE001 - the last wall of a connection
            log.error("connection from %s failed", address, exc_info=exc)

    async def _serve_stream(self, stream: trio.abc.Stream, address: str) -> None:
        config = self.config
        if isinstance(stream, trio.SocketStream):
            dead_peer_options(stream.socket, config.dead_peer_timeout)
        limited = config.limit_loopback or not _is_loopback(address)
        peer = Peer(stream, Codec(max_frame_size=config.max_frame_size), config.queue_size,
                    address, rate=config.rate if limited else 0.0, burst=config.burst,
                    queue_bytes=config.queue_bytes)
        key = address_key(peer.host)
        peer.quota = key if limited else None
        refusal = None
        if len(self.peers) >= config.max_connections:
            refusal = "the server is full"
        elif limited and self._per_host[key] >= config.max_per_address:
            refusal = "too many connections from your address"
        if refusal is not None:
            await self._serve_refused(peer, refusal)
            return
        self.peers.add(peer)
        self._per_host[key] += 1
        peer.invite = self._inviter(stream)
        log.info("connection %d from %s opened", peer.id, address)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._write_then_stop, peer, nursery.cancel_scope)
                await self._read_guarded(peer)
                # The table hears of it now, not once the last frames are out: a writer may
                # take FINAL_FRAME_GRACE to give up on a peer that does not read.
                self._gone(peer)
        except trio.BrokenResourceError:
            pass
        finally:
            self._gone(peer)
            self.peers.discard(peer)
            if not self.peers and self._no_peers is not None:
                self._no_peers.set()
            self._per_host[key] -= 1
            if self._per_host[key] <= 0:
                del self._per_host[key]
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await peer.stream.aclose()
            log.info("connection %d (%s) closed after %d messages sent", peer.id,
                     peer.name or "no hello", peer.sent)

    def _inviter(self, stream: trio.abc.Stream) -> Invite | None:
        """The invite link of this connection's private tables, less table and code: the
        public address if configured, else the address the connection came in on."""
        port = self.config.port
        host = self.config.host
        if isinstance(stream, trio.SocketStream):
            with contextlib.suppress(OSError):  # the socket closed already: the configured one
                host, port = stream.socket.getsockname()[:2]
        try:
            endpoint = (Endpoint.parse(self.config.public_address, port)
                        if self.config.public_address else Endpoint(host, port))
        except AddressError:
            endpoint = Endpoint(host, port)
        endpoint = Endpoint(endpoint.host, endpoint.port, tls=self.tls is not None)
        return Invite(endpoint, "", None, self._invite_password)

    def _gone(self, peer: Peer) -> None:
        self.matchmaker.dequeue(peer)
        self._left(peer)

    @staticmethod
    def _left(peer: Peer) -> None:
        """The connection has ended: nothing more is read from it, what the table still says
        to it goes nowhere, and its table (if any) is told at once. Telling never waits and is
        never dropped (``Table.disconnected``), whatever the table is doing."""
        peer.finish()
        if not peer.gone:
            peer.gone = True
            if peer.table is not None:
                peer.table.disconnected(peer)

    async def _write_then_stop(self, peer: Peer, scope: trio.CancelScope) -> None:
        try:
            await peer.run_writer()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        except Exception:  # noqa: BLE001 - the connection's wall
            log.exception("connection %d: writer failed; closing the connection", peer.id)
        scope.cancel()

    async def _serve_refused(self, peer: Peer, reason: str) -> None:
        """Refuse ``peer``'s connection (the server or its address is full) with
        ``too_many_connections`` and ``reason``, said in the mode its first bytes pick (a
        browser gets HTTP ``503``). It is not one of the server's connections (it counts
        against no limit) and costs ``REFUSAL_WAIT`` + ``REFUSAL_ANSWER_GRACE`` at most,
        however slowly it sends: a flood of refused connections keeps nobody else out. At most
        ``MAX_REFUSING`` are answered at once; the others are closed without a word."""
        if self._refusing < MAX_REFUSING:
            self._refusing += 1
            deadline = trio.current_time() + REFUSAL_WAIT
            try:
                with trio.move_on_at(deadline + REFUSAL_ANSWER_GRACE):
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._write_then_stop, peer, nursery.cancel_scope)
                        data = await self._receive(peer, deadline)
                        if data:
                            await self._refuse(peer, data, reason, deadline)
                        peer.finish()
            except trio.BrokenResourceError:
                pass
            finally:
                self._refusing -= 1
        log.debug("connection from %s refused: %s", peer.address, reason)
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await peer.stream.aclose()

    async def _read_guarded(self, peer: Peer) -> None:
        """Read and handle ``peer``'s requests; a failure of ours is logged once and ends this
        connection with ``internal_error``."""
        try:
            await self._read(peer)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        except Exception:  # noqa: BLE001 - the connection's wall
            log.exception("connection %d (%s): internal error; closing the connection",
                          peer.id, peer.address)
            peer.kick(ErrorCode.INTERNAL_ERROR, "internal server error")

    async def _read(self, peer: Peer) -> None:
        """Read and handle the peer's messages until it closes or is closed.

        The server writes nothing before the client's first byte (until then the encoding is
        unknown): a socket that stays silent is closed without a word.

        Timeouts: before ``hello``, ``handshake_timeout`` of silence between bytes (a person
        typing at ``nc`` is served) and ``frame_timeout`` from the first byte for the whole
        ``hello``; after it, any frame begun must be finished within ``frame_timeout``, and a
        connection at no table must complete a message every ``idle_timeout`` (a byte now and
        then does not keep it open). A client that said a ``heartbeat`` in ``hello`` is closed
        (``idle_timeout``) after ``HEARTBEAT_MISSES`` periods without a byte, seated or not.
        """
        now = await self._read_hello(peer)
        if now is not None:
            await self._read_messages(peer, now)

    async def _read_hello(self, peer: Peer) -> float | None:
        """``_read`` up to the end of ``hello``: the time the last bytes came, or None if the
        connection is over."""
        config = self.config
        frame_timeout = config.frame_timeout or math.inf
        now = trio.current_time()
        first_byte = math.inf
        wait = config.handshake_timeout or math.inf
        while not peer.hello_done and not peer.closed:
            data = await self._receive(peer, min(now + wait, first_byte + frame_timeout))
            if data is None:
                if peer.codec.mode is not None:
                    peer.kick(ErrorCode.HANDSHAKE_TIMEOUT, "no hello in time")
                return None
            if not data:
                return None
            now = trio.current_time()
            first_byte = min(first_byte, now)
            if peer.codec.mode is None:
                opened = await self._open(peer, data)
                if opened is None:
                    return None
                now, data = trio.current_time(), opened
                if not data:
                    continue
            if await self._handle_data(peer, data) is None:
                return None
        return now

    async def _refuse(self, peer: Peer, data: bytes | bytearray, reason: str,
                      deadline: float) -> None:
        """Say ``too_many_connections`` with ``reason`` in the mode the connection's first
        bytes ``data`` pick: a browser's request (read until ``deadline`` at most) is answered
        HTTP ``503``, where the protocol's error line would be garbage on its screen."""
        if self.web is not None and http_start(data) is not False:
            async def receive(peer: Peer, until: float) -> bytes | bytearray | None:
                return await self._receive(peer, min(until, deadline))

            await self.web.refuse_busy(peer, bytes(data), receive, reason)
            return
        peer.codec.receive_data(data[:1])
        peer.kick(ErrorCode.TOO_MANY_CONNECTIONS, reason)

    async def _read_messages(self, peer: Peer, now: float) -> None:
        """``_read`` after ``hello`` (whose last bytes came at ``now``)."""
        config, codec = self.config, peer.codec
        frame_timeout = config.frame_timeout or math.inf
        idle = config.idle_timeout or math.inf
        last_message = begun = heard = now
        silence = HEARTBEAT_MISSES * peer.heartbeat if peer.heartbeat else math.inf
        while not peer.closed:
            # The idle timeout concerns connections at no table: a seated player may think.
            # A heartbeat client promised to say something every period, seated or not.
            deadline = min(last_message + idle if peer.table is None else math.inf,
                           heard + silence)
            if codec.buffered:
                deadline = min(deadline, begun + frame_timeout)
            data = await self._receive(peer, deadline)
            if data is None:
                if peer.pinged_at > heard:  # WebSocket pings only: heard, but no message
                    heard = peer.pinged_at
                    continue
                self._overdue(peer, begun, heard)
                return
            if not data:
                return
            had_begun = codec.buffered
            handled = await self._handle_data(peer, data)
            if handled is None:
                return
            now = heard = trio.current_time()
            if handled:
                last_message = now
            if handled or not had_begun:
                begun = now

    def _overdue(self, peer: Peer, begun: float, heard: float) -> None:
        """A deadline of ``_read_messages`` has passed: end the connection, saying which (a
        frame begun at ``begun`` not finished, nothing heard since ``heard`` from a heartbeat
        client, or no message while at no table)."""
        frame_timeout = self.config.frame_timeout or math.inf
        silence = HEARTBEAT_MISSES * peer.heartbeat if peer.heartbeat else math.inf
        if peer.codec.buffered and trio.current_time() >= begun + frame_timeout:
            peer.kick(ErrorCode.FRAME_TIMEOUT,
                      f"a frame was begun and not finished within {frame_timeout:g} s")
        elif trio.current_time() >= heard + silence:
            log.info("connection %d (%s): nothing heard for %g s (heartbeat %g s)",
                     peer.id, peer.name, silence, peer.heartbeat)
            peer.kick(ErrorCode.IDLE_TIMEOUT,
                      f"nothing heard for {silence:g} s (heartbeat {peer.heartbeat:g} s)")
        else:
            peer.kick(ErrorCode.IDLE_TIMEOUT,
                      f"no message for {self.config.idle_timeout or math.inf:g} s")

    async def _open(self, peer: Peer, data: bytes | bytearray) -> bytes | bytearray | None:
        """A connection's first bytes ``data``: TLS, a browser, or a client of the protocol.
        What the codec is to read (b"" when TLS has just started: the encoding is sniffed
        from the first bytes inside it, which come back here), or None if it is over."""
        if not peer.secure:
            started = await self._start_transport(peer, data)
            if started is None:
                return None
            if started:
                return b""
        if self.web is not None:
            return await self._serve_browser(peer, data)
        return data

    async def _serve_browser(self, peer: Peer, data: bytes | bytearray, *,
                             insecure: bool = False) -> bytes | None:
        """A connection's first bytes ``data`` (inside TLS, if any): an HTTP request is served
        by ``web`` and, if it upgrades to the protocol's WebSocket, the connection goes on as a
        text-mode peer behind ``Peer.carrier``. What the codec is to read next (``data`` itself
        for a client of the protocol), or None if the connection is over. ``insecure``: a
        plain connection to a server that requires TLS, whose requests are redirected to the
        same address over HTTPS."""
        assert self.web is not None
        head = bytes(data)
        now = trio.current_time()
        while (browser := http_start(head)) is None:
            more = await self._receive(peer, now + (self.config.handshake_timeout or math.inf))
            if not more:
                return None
            head += more
        if not browser:
            return head
        upgraded = await self.web.serve(peer, head, self._receive, redirect=insecure)
        if upgraded is None:
            return None
        peer.carrier = upgraded.carrier
        peer.codec = Codec(Mode.TEXT, max_frame_size=self.config.max_frame_size)
        log.info("connection %d: a browser's WebSocket", peer.id)
        return peer.unwrap(upgraded.trailing) if upgraded.trailing else b""

    async def _start_transport(self, peer: Peer, data: bytes | bytearray) -> bool | None:
        """The connection's first bytes ``data``: a TLS record (``0x16``) starts the TLS
        handshake (True: what follows is read from inside it, where the codec then sniffs the
        encoding); anything else is a plain connection (False: ``data`` is its first
        message), refused under ``tls_required``. None if the connection is over."""
        if data[0] == TLS_RECORD:
            if self.tls is None:
                log.info("connection %d: a TLS handshake, but this server has no certificate "
                         "(start it with --tls-cert/--tls-key or --tls-self-signed)", peer.id)
                return None
            secure = self.tls.wrap(peer.stream, data)
            try:
                with trio.fail_after(self.config.handshake_timeout or math.inf):
                    await secure.do_handshake()
            except (trio.BrokenResourceError, trio.ClosedResourceError,
                    trio.TooSlowError) as error:
                log.info("connection %d: TLS handshake failed: %s", peer.id,
                         error.__cause__ or error)
                return None
            peer.use_stream(secure)
            return True
        if self.config.tls_required:
            if self.web is not None and http_start(data) is not False:
                await self._serve_browser(peer, data, insecure=True)  # sent to https://
                return None
            peer.codec.receive_data(data)  # so the refusal is in the client's encoding
            peer.kick(ErrorCode.TLS_REQUIRED, "this server accepts TLS connections only: "
                      "connect to tls://HOST:PORT (or give --tls)")
            return None
        return False

    async def _receive(self, peer: Peer, deadline: float) -> bytes | bytearray | None:
        """The next chunk from the peer; b"" at end of stream, None if ``deadline`` passed."""
        try:
            if deadline == math.inf:  # a seated player: no cancel scope made for every read
                return await peer.receive()
            with trio.move_on_at(deadline):
                return await peer.receive()
            return None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    async def _handle_data(self, peer: Peer, data: bytes | bytearray) -> int | None:
        """Handle the messages ``data`` completes: how many, or None if the connection must
        end (a framing error, the rate limit)."""
        codec = peer.codec
        handled = 0
        try:
            codec.receive_data(data)
            while not peer.closed:
                try:
                    raw = codec.next_message()
                except BadLine as exc:  # text mode: only this line is lost
                    peer.send(error_message(exc.code, exc.message))
                    continue
                if raw is None:
                    break
                handled += 1
                if not peer.take_token():
                    peer.kick(ErrorCode.RATE_LIMITED,
                              f"more than {self.config.rate:g} messages per second",
                              request_ref(raw))
                    return None
                await self._request(peer, raw)
        except FramingError as exc:
            log.info("connection %d: %s", peer.id, exc)
            peer.kick(exc.code, exc.message)
            return None
        return handled

    async def _request(self, peer: Peer, raw: dict[Any, Any]) -> None:
        ref = request_ref(raw)
        try:
            msg = parse_client(raw)
            if not peer.hello_done:
                if not isinstance(msg, Hello):
                    raise ProtocolError(ErrorCode.HELLO_REQUIRED, "say hello first", ref)
                await self._hello(peer, msg)
            elif isinstance(msg, Hello):
                raise ProtocolError(ErrorCode.BAD_FIELD, "hello was already received")
            else:
                await self._route(peer, msg)
        except Exception as exc:  # noqa: BLE001 - mapped to an error frame in one place
            frame = error_frame(exc, ref)
            if frame["code"] in FATAL:
                peer.kick(frame["code"], frame["message"], frame.get("ref"))
            else:
                peer.send(frame)

    async def _hello(self, peer: Peer, msg: Hello) -> None:
        if msg.version != PROTOCOL_VERSION:
            raise ProtocolError(
                ErrorCode.VERSION_UNSUPPORTED,
                f"this server speaks version {PROTOCOL_VERSION}, not {msg.version}",
            )
        await self.gate.check(address_key(peer.host), msg.password)
        name = check_name(msg.name, self.config.name_max, "name")
        if msg.account is not None:
            name = peer.account = self.ladder.login(msg.account)
        if msg.heartbeat is not None and not MIN_HEARTBEAT <= msg.heartbeat <= MAX_HEARTBEAT:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"hello.heartbeat must be {MIN_HEARTBEAT:g} "
                                f"to {MAX_HEARTBEAT:g} seconds")
        table = self.lobby.table_of_token(msg.token) if msg.token is not None else None
        peer.name, peer.kind, peer.auto_next = name, PlayerKind(msg.kind), msg.auto_next
        peer.heartbeat = msg.heartbeat
        peer.send(to_dict(Welcome(
            id=msg.id, version=PROTOCOL_VERSION, minor=PROTOCOL_MINOR,
            server=f"{self.config.name} ({SERVER_VERSION})",
            capabilities=[*CAPABILITIES, *self._transport_capabilities(),
                          *(f"bot:{n}" for n in bots.policy_names())],
            options=option_choices(),
        )))
        log.info("connection %d: hello from %r (%s)", peer.id, name, msg.kind)
        if table is not None and msg.token is not None:
            await table.call(peer, Resume(msg.token, msg.seq))

    def _transport_capabilities(self) -> list[str]:
        caps = ["invite_links"]
        if self.tls is not None:
            caps.append("tls")
        if self.gate.required:
            caps.append("password")
        return caps

    def _list_tables(self, peer: Peer, msg: ListTables) -> None:
        """Answer with one page of the lobby, its entries spliced in as they were encoded
        (never a frame over ``max_frame_size``, the limit the server enforces)."""
        head = _tables_head(msg, 0, None)
        budget = self.config.max_frame_size - len(peer.codec.encode(head)) - _PAGE_SLACK
        page = self.lobby.page(msg, peer.codec.mode or Mode.BINARY, budget)
        head = _tables_head(msg, page.total, page.next)
        peer.send_encoded(peer.codec.encode_spliced(head, "tables", page.entries))

    async def _table_for(
        self, peer: Peer, msg: CreateTable | Join | Spectate
    ) -> tuple[Table, CreateTable | Join | Spectate]:
        """The table a request to sit or watch goes to (made for a ``create_table``), and the
        request it gets: a rematch's ``create_table`` becomes the old table's settings or a
        ``join`` of the table another player's rematch made (``Lobby.rematch``)."""
        if isinstance(msg, CreateTable) and msg.rematch is not None:
            return await self.lobby.rematch(msg, peer.quota)
        if isinstance(msg, CreateTable):
            await self.lobby.make_room(msg, peer.quota)
            return self.lobby.create(msg, peer.quota), msg
        return self.lobby.get(msg.table), msg

    async def _route(self, peer: Peer, msg: Any) -> None:
        if isinstance(msg, Ping):
            peer.send(to_dict(Pong(id=msg.id)))
        elif isinstance(msg, ListTables):
            if not peer.take_token(LIST_TABLES_COST - 1):
                raise ProtocolError(ErrorCode.RATE_LIMITED,
                                    f"list_tables counts as {LIST_TABLES_COST} messages")
            self._list_tables(peer, msg)
        elif isinstance(msg, Register | Queue | Unqueue | GetStandings):
            self._ladder_request(peer, msg)
        elif isinstance(msg, CreateTable | Join | Spectate):
            if peer.table is not None:
                raise ProtocolError(ErrorCode.ALREADY_SEATED, f"already at table {peer.table.id}")
            table, request = await self._table_for(peer, msg)
            await table.call(peer, request)
        else:
            if peer.table is None:
                raise ProtocolError(ErrorCode.NOT_SEATED, f"{msg.TYPE} needs a table")
            if isinstance(msg, Chat):
                peer.table.chat(peer, msg)
            else:
                await peer.table.call(peer, msg)


    def _ladder_request(self, peer: Peer, msg: Register | Queue | Unqueue | GetStandings) -> None:
        """The ladder's requests (since 1.2), answered at once; a queued connection hears
        ``joined`` when the matchmaker seats it (``matchmaker.Matchmaker``)."""
        if isinstance(msg, Register):
            if not peer.take_token(LIST_TABLES_COST - 1):
                raise ProtocolError(ErrorCode.RATE_LIMITED,
                                    f"register counts as {LIST_TABLES_COST} messages")
            name = check_name(msg.name, self.config.name_max, "name")
            key = self.ladder.register(name)
            peer.send(to_dict(Registered(id=msg.id, name=name, key=key)))
        elif isinstance(msg, GetStandings):
            if msg.offset < 0 or (msg.limit is not None and msg.limit < 1):
                raise ProtocolError(ErrorCode.BAD_FIELD, "offset must be ≥ 0 and limit ≥ 1")
            limit = min(msg.limit or MAX_STANDINGS_PAGE, MAX_STANDINGS_PAGE)
            page, total = self.ladder.standings(msg.offset, limit)
            end = msg.offset + len(page)
            peer.send(to_dict(LadderStandings(
                id=msg.id, players=[a.to_dict(msg.offset + i + 1) for i, a in enumerate(page)],
                total=total, offset=msg.offset, next=end if end < total else None,
            )))
        elif isinstance(msg, Queue):
            if peer.account is None:
                raise ProtocolError(ErrorCode.NEEDS_ACCOUNT,
                                    "queue needs a ladder account: register, then hello with "
                                    "its key as account")
            self.matchmaker.enqueue(peer, peer.account)
            peer.send(ok_message(msg.id))
        else:
            self.matchmaker.dequeue(peer)
            peer.send(ok_message(msg.id))


def _tables_head(msg: ListTables, total: int, next_offset: int | None) -> dict[str, Any]:
    """The ``tables`` reply to ``msg`` but its ``tables``, which are spliced in as encoded."""
    head: dict[str, Any] = dict(to_dict(Tables(id=msg.id, tables=[], total=total,
                                               offset=msg.offset, next=next_offset)))
    del head["tables"]
    return head


def address_key(host: str) -> str:
    """What the per-address limits count a host under: an IPv4 address itself, an IPv6 address
    by its /64 network (one subscriber usually holds a whole /64)."""
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _is_loopback(address: str) -> bool:
    """Whether ``address`` (``host:port``) is on this machine (127.0.0.0/8 or ::1)."""
    host = address.rsplit(":", 1)[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
