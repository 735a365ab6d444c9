"""The connection room: one connection served from its first byte to its close.

``Connections.handle_stream`` serves any ``trio.abc.Stream`` (a test hands it in-memory
streams with a virtual clock): the connection limits (``max_connections``, per address), a
writer task (``Peer.run_writer``) beside the reader, the reader's timeouts, the transport of
the first bytes (``transport.TransportWrapper``: TLS, a browser, the protocol), the framing
and the rate limit. An address may also open only ``connection_rate`` connections a second,
in bursts of ``max_per_address`` (``pace.AddressPace``): each connection's limits start
afresh, so one that came back at once whenever it was cut (``rate_limited``) made every
limit a connection's a reconnect loop, and an address could make the server do a TLS
handshake 560 times a second. Each decoded request goes to ``request`` (the route table,
``routes.Router.request``); when the connection ends its table is told at once and ``gone``
hears of it (the matchmaker's queue).
"""

from __future__ import annotations

import ipaddress
import logging
import math
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from tongits.protocol import BadLine, Codec, ErrorCode, FramingError, error_message
from tongits.protocol.keepalive import HEARTBEAT_MISSES, dead_peer_options
from tongits.protocol.phrases import counted

from ..config import ServerConfig
from ..errors import request_ref
from ..pace import AddressPace
from .peer import Peer
from .transport import TransportWrapper

log = logging.getLogger("tongits.server")

#: How long a refused connection (the server or its address is full) is read: its first bytes
#: pick the mode the refusal is said in (a browser's request head is read to its end to be
#: answered ``503``); after this, or the answer, it is closed.
REFUSAL_WAIT = 2.0
#: How long the refusal itself may take to leave, after ``REFUSAL_WAIT`` at most.
REFUSAL_ANSWER_GRACE = 0.5
#: Refused connections being answered at once (each for ``REFUSAL_WAIT`` at most); beyond
#: that, a refused connection is closed without a word.
MAX_REFUSING = 256
#: Addresses the new connections' bucket remembers before it forgets those that are full.
ARRIVAL_ADDRESSES = 4096


class Connections:
    """The open connections (``peers``) and how each is served: ``transport`` opens it,
    ``request`` handles each of its decoded requests, ``gone`` hears that it ended."""

    def __init__(self, config: ServerConfig, transport: TransportWrapper,
                 request: Callable[[Peer, dict[Any, Any]], Awaitable[None]],
                 gone: Callable[[Peer], None]) -> None:
        self.config = config
        self.transport = transport
        self._request = request
        self._gone = gone
        self.peers: set[Peer] = set()
        #: set when the last connection has ended, once a shutdown waits for that
        self._no_peers: trio.Event | None = None
        self._per_host: Counter[str] = Counter()
        self._arrivals = AddressPace(config.connection_rate, config.max_per_address,
                                     ARRIVAL_ADDRESSES)
        #: refused connections being answered (``_serve_refused``)
        self._refusing = 0

    def kick_all(self, code: str, message: str, *, flush: bool = True) -> None:
        """End every connection with one last ``error`` frame (``Peer.kick``)."""
        for peer in list(self.peers):
            peer.kick(code, message, flush=flush)

    async def until_none(self, grace: float) -> None:
        """Wait until every connection has ended, ``grace`` seconds at most."""
        if not self.peers:
            return
        if self._no_peers is None:
            self._no_peers = trio.Event()
        with trio.move_on_after(grace):
            await self._no_peers.wait()

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
        refusal = self._refusal(key, limited)
        if refusal is not None:
            await self._serve_refused(peer, refusal)
            return
        self.peers.add(peer)
        self._per_host[key] += 1
        peer.invite = self.transport.invite_for(stream)
        log.info("connection %d from %s opened", peer.id, address)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._write_then_stop, peer, nursery.cancel_scope)
                await self._read_guarded(peer)
                # The table hears of it now, not once the last frames are out: a writer may
                # take FINAL_FRAME_GRACE to give up on a peer that does not read.
                self._end(peer)
        except trio.BrokenResourceError:
            pass
        finally:
            self._end(peer)
            await self._close(peer, key)

    def _refusal(self, key: str, limited: bool) -> str | None:
        """Why a new connection from ``key`` is refused (the server or the address is full),
        or None."""
        if len(self.peers) >= self.config.max_connections:
            return "the server is full"
        if not limited:
            return None
        if self._per_host[key] >= self.config.max_per_address:
            return "too many connections from your address"
        wait = self._arrivals.take(key, trio.current_time())
        if wait:
            return f"too many new connections from your address: try again in {wait} s"
        return None

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
                        data = await peer.receive_by(deadline)
                        if data:
                            await self.transport.refuse(peer, data, reason, deadline)
                        peer.finish()
            except trio.BrokenResourceError:
                pass
            finally:
                self._refusing -= 1
        log.debug("connection from %s refused: %s", peer.address, reason)
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await peer.stream.aclose()

    async def _close(self, peer: Peer, key: str) -> None:
        """Forget the ended connection ``peer`` (counted under ``key``) and close its stream."""
        self.peers.discard(peer)
        if not self.peers and self._no_peers is not None:
            self._no_peers.set()
        self._per_host[key] -= 1
        if self._per_host[key] <= 0:
            del self._per_host[key]
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await peer.stream.aclose()
        log.info("connection %d (%s) closed after %s sent", peer.id,
                 peer.name or "no hello", counted(peer.sent, "message"))

    def _end(self, peer: Peer) -> None:
        """The connection has ended: ``gone`` hears of it, nothing more is read from it, what
        the table still says to it goes nowhere, and its table (if any) is told at once.
        Telling never waits and is never dropped (``Table.disconnected``), whatever the table
        is doing."""
        self._gone(peer)
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
            data = await peer.receive_by(min(now + wait, first_byte + frame_timeout))
            if data is None:
                if peer.codec.mode is not None:
                    peer.kick(ErrorCode.HANDSHAKE_TIMEOUT, "no hello in time")
                return None
            if not data:
                return None
            now = trio.current_time()
            first_byte = min(first_byte, now)
            if peer.codec.mode is None:
                opened = await self.transport.open(peer, data)
                if opened is None:
                    return None
                now, data = trio.current_time(), opened
                if not data:
                    continue
            if await self._handle_data(peer, data) is None:
                return None
        return now

    async def _read_messages(self, peer: Peer, now: float) -> None:
        """``_read`` after ``hello`` (whose last bytes came at ``now``)."""
        config, codec = self.config, peer.codec
        frame_timeout = config.frame_timeout or math.inf
        idle = config.idle_timeout or math.inf
        last_message = begun = heard = now
        silence = HEARTBEAT_MISSES * peer.heartbeat if peer.heartbeat else math.inf
        clock = trio.lowlevel.current_clock()  # (``trio.current_time`` finds it at every call)
        while not peer.closed:
            # The idle timeout concerns connections at no table: a seated player may think.
            # A heartbeat client promised to say something every period, seated or not.
            deadline = min(last_message + idle if peer.table is None else math.inf,
                           heard + silence)
            if codec.buffered:
                deadline = min(deadline, begun + frame_timeout)
            data = await peer.receive_by(deadline)
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
            now = heard = clock.current_time()
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
