"""What a connection speaks, told from its first bytes: TLS, a browser, or the protocol.

One port serves three kinds of client, as hypercorn's ``ProtocolWrapper`` serves HTTP/1.1 and
HTTP/2 behind one object: ``TransportWrapper.open`` reads a connection's first bytes and
leaves the ``Peer`` ready for the codec. A TLS record (``0x16``) starts the TLS handshake and
the sniffing goes on inside it; ``GET `` or ``HEAD `` is a browser, served by ``web.WebSite``
until it upgrades to the protocol's WebSocket (``Peer.carrier``); anything else is a client
of the protocol, whose encoding the codec picks from the same bytes. The wrapper also knows
how a refusal is said to each kind (``refuse``) and the address invite links name
(``invite_for``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import math

import trio
from tongits.protocol import Codec, ErrorCode, Mode
from tongits.protocol.transport import TLS_RECORD, AddressError, Endpoint, Invite

from ..config import ServerConfig
from .lan import friends_host, is_wildcard
from .peer import Peer
from .tls import ServerTLS
from .web import TableNamer, WebSite, http_start, own_names

log = logging.getLogger("tongits.server")


class TransportWrapper:
    """``tls`` serves TLS on the same port (``None``: plain only); ``invite_password`` is the
    password invite links carry (``None``: they carry none); ``name_table`` names the table
    an invite link's page opens into (``WebSite``)."""

    def __init__(self, config: ServerConfig, tls: ServerTLS | None,
                 invite_password: str | None = None,
                 name_table: TableNamer | None = None) -> None:
        self.config = config
        self.tls = tls
        #: the page and the WebSocket for browsers on the same port (None: ``--web false``)
        self.web = (WebSite(config.handshake_timeout, config.frame_timeout,
                            own_names(config.host, config.public_address, config.web_hosts),
                            name_table)
                    if config.web else None)
        self._invite_password = invite_password

    def capabilities(self) -> list[str]:
        """What ``welcome`` says of the transport (docs/PROTOCOL.md, "Capabilities")."""
        return ["invite_links", "tls"] if self.tls is not None else ["invite_links"]

    async def open(self, peer: Peer, data: bytes | bytearray) -> bytes | bytearray | None:
        """A connection's first bytes ``data``: TLS, a browser, or a client of the protocol.
        What the codec is to read (b"" when TLS has just started: the encoding is sniffed
        from the first bytes inside it, which come back here), or None if it is over."""
        if not peer.secure:
            started = await self._start_tls(peer, data)
            if started is None:
                return None
            if started:
                return b""
        if self.web is not None:
            return await self._serve_browser(peer, data)
        return data

    async def refuse(self, peer: Peer, data: bytes | bytearray, reason: str,
                     deadline: float) -> None:
        """Say ``too_many_connections`` with ``reason`` in the mode the connection's first
        bytes ``data`` pick: a browser's request (read until ``deadline`` at most) is answered
        HTTP ``503``, where the protocol's error line would be garbage on its screen."""
        if self.web is not None and http_start(data) is not False:
            await self.web.refuse_busy(peer, bytes(data), reason, deadline)
            return
        peer.codec.receive_data(data[:1])
        peer.kick(ErrorCode.TOO_MANY_CONNECTIONS, reason)

    def invite_for(self, stream: trio.abc.Stream) -> Invite:
        """The invite link of a connection's private tables, less table and code: the public
        address if configured, else the address the connection came in on; but a host who
        plays on the server's own machine comes in on a loopback address, which is no address
        for friends: a server listening on every address names the one the LAN reaches it on
        (``friends_host``)."""
        port, host = self.config.port, self.config.host
        if isinstance(stream, trio.SocketStream):
            with contextlib.suppress(OSError):  # the socket closed already: the configured one
                host, port = stream.socket.getsockname()[:2]
        if is_wildcard(self.config.host) and (is_wildcard(host) or _is_loopback(host)):
            host = friends_host(self.config.host)
        try:
            endpoint = (Endpoint.parse(self.config.public_address, port)
                        if self.config.public_address else Endpoint(host, port))
        except AddressError:
            endpoint = Endpoint(host, port)
        endpoint = Endpoint(endpoint.host, endpoint.port, tls=self.tls is not None)
        return Invite(endpoint, "", None, self._invite_password)

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
            more = await peer.receive_by(now + (self.config.handshake_timeout or math.inf))
            if not more:
                return None
            head += more
        if not browser:
            return head
        upgraded = await self.web.serve(peer, head, redirect=insecure)
        if upgraded is None:
            return None
        peer.carrier = upgraded.carrier
        peer.codec = Codec(Mode.TEXT, max_frame_size=self.config.max_frame_size)
        log.info("connection %d: a browser's WebSocket", peer.id)
        return peer.unwrap(upgraded.trailing) if upgraded.trailing else b""

    async def _start_tls(self, peer: Peer, data: bytes | bytearray) -> bool | None:
        """The connection's first bytes ``data``: a TLS record (``0x16``) starts the TLS
        handshake (True: what follows is read from inside it, where the codec then sniffs the
        encoding); anything else is a plain connection (False: ``data`` is its first
        message), refused under ``tls_required``. None if the connection is over."""
        if data[0] == TLS_RECORD:
            return await self._handshake_tls(peer, data)
        if self.config.tls_required:
            if self.web is not None and http_start(data) is not False:
                await self._serve_browser(peer, data, insecure=True)  # sent to https://
                return None
            peer.codec.receive_data(data)  # so the refusal is in the client's encoding
            peer.kick(ErrorCode.TLS_REQUIRED, "this server accepts TLS connections only: "
                      "connect to tls://HOST:PORT (or give --tls)")
            return None
        return False

    async def _handshake_tls(self, peer: Peer, data: bytes | bytearray) -> bool | None:
        """TLS over ``peer``'s stream, begun by ``data``: True once the handshake is done,
        None if it failed (or this server has no certificate)."""
        if self.tls is None:
            # Every `tongits connect` to a server with a password asks this first (before the
            # password would go in clear): the line said only how to start TLS, and a host read
            # a mistake in each friend's arrival.
            log.info("connection %d: a TLS handshake, refused: this server has no certificate "
                     "(tongits connect tries one before it sends a password in clear; to serve "
                     "TLS, start the server with --tls-cert/--tls-key or --tls-self-signed)",
                     peer.id)
            return None
        secure = self.tls.wrap(peer.stream, data)
        try:
            with trio.fail_after(self.config.handshake_timeout or math.inf):
                await secure.do_handshake()
        except trio.TooSlowError:
            log.info("connection %d: TLS handshake failed: not finished within %g s", peer.id,
                     self.config.handshake_timeout)
            return None
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            log.info("connection %d: TLS handshake failed: %s", peer.id, error.__cause__ or error)
            return None
        peer.use_stream(secure)
        return True


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (an address a socket gave, or the name ``localhost``) is this machine
    to itself only: 127.x, ::1, or 127.x mapped into IPv6 (a dual-stack listener's)."""
    try:
        address = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:  # a name
        return host == "localhost"
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback
