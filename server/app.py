"""The server: the listeners, the lobby's tables, the ladder's matchmaker, and the rooms a
connection goes through, wired together.

``Server.serve`` runs everything under one nursery and can be started with ``nursery.start``
(it reports the listeners, so a test can bind port 0). ``Server.handle_stream`` serves any
``trio.abc.Stream``, which lets tests use in-memory streams with a virtual clock.

A connection is served by the connection room (``connection.Connections``: limits, reader,
timeouts), opened by the transport wrapper (``transport.TransportWrapper``: TLS, a browser,
the protocol), greeted by the handshake (``handshake.Handshake``), and each of its requests
goes where the route table sends it (``routes.Router``; the ladder's entries are
``ladder_requests.LadderDesk``'s).
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
import time
from functools import partial

import trio
from tongits.protocol import ErrorCode
from tongits.protocol.phrases import counted
from trio.socket import AF_INET

from .config import ServerConfig
from .handshake import Handshake
from .ladder.ladder import Ladder
from .ladder.ladder_requests import LadderDesk
from .ladder.matchmaker import Matchmaker
from .lobby import Lobby
from .net.access import PasswordGate
from .net.connection import Connections, address_key
from .net.discovery import answer_discovery
from .net.peer import Peer
from .net.tls import ServerTLS
from .net.transport import TransportWrapper
from .net.web import browser_address
from .routes import Router
from .storage.journal import Journal, NullJournal
from .table import bots

log = logging.getLogger("tongits.server")

#: How long shutdown waits for connections to flush their last frame.
SHUTDOWN_GRACE = 2.0

#: ``accept`` errors that mean "no capacity now" (file descriptors, memory): retried after
#: ``ACCEPT_RETRY`` seconds instead of ending the listener (as ``trio.serve_listeners`` does).
_ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
ACCEPT_RETRY = 0.1


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
        self.config = config = config or ServerConfig()
        self.lobby = Lobby(config, journal or NullJournal())
        self.ladder = ladder if ladder is not None else Ladder()
        self.matchmaker = Matchmaker(self.ladder, self.lobby, config)
        self.gate = PasswordGate(password)
        self.transport = TransportWrapper(
            config, tls, password if config.invite_password else None,
            partial(self.lobby.invite_name, codeless=not self.gate.required))
        handshake = Handshake(config, self.gate, self.lobby, self.ladder,
                              self.transport.capabilities, address_key)
        desk = LadderDesk(config, self.ladder, self.matchmaker)
        #: where each request goes, by its class
        self.router = Router(config, self.lobby, handshake, desk.routes)
        self.connections = Connections(config, self.transport, self.router.request,
                                       self.matchmaker.dequeue)
        self.started = time.monotonic()
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
            bots.warm()  # before any table: a first expert bot would stall the others
            async with trio.open_nursery() as tables:
                self.lobby.bind(tables)
                tables.start_soon(self._stop_if_the_journal_fails)
                restored = self.lobby.restore(self.matchmaker.dealing_for)
                if restored:
                    log.info("restored %d table%s from the journal", restored,
                             "" if restored == 1 else "s")
                self.ladder.void_missing(self.lobby.tables)
                tables.start_soon(self.matchmaker.run, name="ladder matchmaker")
                async with trio.open_nursery() as connections:
                    self._connections = connections
                    listeners = await self._listen(tables) if listen else []
                    task_status.started(listeners)
                    await trio.sleep_forever()

    async def _listen(self, tables: trio.Nursery) -> list[trio.SocketListener]:
        """Open the listeners of ``config`` and accept on each; answer discovery on the IPv4
        ones (under ``tables``, which outlives the connections)."""
        assert self._connections is not None
        config = self.config
        listeners = await trio.open_tcp_listeners(config.port, host=config.host)
        for listener in listeners:
            self._connections.start_soon(self._accept, listener)
        for listener in listeners:
            host, port = listener.socket.getsockname()[:2]
            log.info("%s listening on %s port %d", config.name, host, port)
            if config.discovery and listener.socket.family == AF_INET:
                await tables.start(answer_discovery, config.name, host, port,
                                   self.lobby.count, self.tls_mode)
        return listeners

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
    def tls(self) -> ServerTLS | None:
        """The certificate TLS is served with on the same port (None: plain only)."""
        return self.transport.tls

    @tls.setter
    def tls(self, tls: ServerTLS | None) -> None:
        self.transport.tls = tls

    @property
    def tls_mode(self) -> str | None:
        """What discovery says about TLS: ``required``, ``optional`` or None (plain only)."""
        if self.tls is None:
            return None
        return "required" if self.config.tls_required else "optional"

    async def shutdown(self) -> None:
        """Tell every connection the server is going away, give them a moment, stop."""
        log.info("shutting down: %s, %s", counted(len(self.peers), "connection"),
                 counted(len(self.lobby.tables), "table"))
        self.connections.kick_all(ErrorCode.SHUTTING_DOWN, "the server is shutting down")
        await self.connections.until_none(SHUTDOWN_GRACE)
        self._cancel.cancel()

    async def _stop_if_the_journal_fails(self) -> None:
        """A commit failed (a full disk): nothing more can be saved, so nothing more may be
        played. Every client is told (``shutting_down``; what was held for the failed commit
        never leaves), then the server stops; ``failure`` says why (``GroupCommit`` logged
        it)."""
        journal = self.lobby.journal
        await journal.failed.wait()
        self.failure = journal.error
        self.connections.kick_all(
            ErrorCode.SHUTTING_DOWN,
            "the server cannot save games any more (its disk may be full) and is stopping",
            flush=False)
        await self.connections.until_none(SHUTDOWN_GRACE)
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
                    address = browser_address(host, port, self.config.tls_enabled,
                                              self.config.public_address)
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

    # ----- connections ---------------------------------------------------------------------

    @property
    def peers(self) -> set[Peer]:
        """The open connections."""
        return self.connections.peers

    async def handle_stream(self, stream: trio.abc.Stream, address: str = "memory") -> None:
        """Serve one connection until it ends (``Connections.handle_stream``)."""
        await self.connections.handle_stream(stream, address)
