"""Browsers on the server's one port: the page over HTTP/1.1, the protocol over WebSocket.

A connection whose first bytes are ``GET `` or ``HEAD `` (plain, or the first bytes inside
TLS) is a browser: h11 (sans-IO) reads its requests. ``/`` and ``/t/TABLE`` answer the page
(the page reads the table and join code from its own address), ``/app.js``, ``/style.css``,
``/icon.svg`` and ``/manifest.webmanifest`` its parts (package data in ``page/``, read once at
start), ``/phrases.json`` the phrasebook (``tongits.protocol.phrases``: the terminal's words),
and ``/ws``
upgrades to a WebSocket that carries the protocol's text mode (``websocket.py``); from then on
the connection is an ordinary ``Peer``.

What a browser may do is bounded as a TCP client's is: the request line and headers together
at most ``MAX_HEAD`` bytes (``431`` beyond), a request head begun must be finished within the
frame timeout and the connection may not stay silent longer than the handshake timeout, at most
``MAX_REQUESTS`` requests on one connection, and the connection counts against the server's
connection limits from its first byte. The upgrade is refused (``403``) when its ``Origin`` is
not the page's own host, so no other site's page can open a session in a visitor's browser.
A request is refused (``421``) when its ``Host`` is a name the server does not go by
(``own_names``): a page of another site whose name was rebound to this server's address (DNS
rebinding) passes the Origin check, since its Origin and Host are both that name, but not
this one. A ``Host`` that is an IP address cannot be such a page and is served.
Every answer carries a strict Content-Security-Policy: the page runs only its own script and
style, and connects only to its own origin. The files go gzip-compressed to a browser that
accepts it, each with an ``ETag``: a browser keeps them and asks again with ``If-None-Match``
(``Cache-Control: no-cache``), which a ``304`` without a body answers while they are the same.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import html
import ipaddress
import json
import logging
import math
import re
import socket
from collections.abc import Callable, Collection
from dataclasses import dataclass
from http import HTTPStatus
from importlib import resources
from urllib.parse import parse_qs, unquote, urlsplit

import h11
import trio
from tongits.protocol.phrases import PHRASES
from tongits.protocol.transport import AddressError, Endpoint

from .lan import friends_host, is_wildcard
from .peer import Peer
from .websocket import VERSION, UpgradeError, WebSocketCarrier

log = logging.getLogger("tongits.server")

#: The request line and headers of one request together, in bytes.
MAX_HEAD = 8192
#: Requests served on one connection (a page load takes four).
MAX_REQUESTS = 32
#: The path that upgrades to the protocol's WebSocket.
SOCKET_PATH = "/ws"
#: Seconds a browser refused for a full server is told to wait (``Retry-After``).
RETRY_AFTER = 30

#: The page runs its own script and style only (no inline code, no third-party origin) and
#: connects to its own origin only ('self' includes ws:/wss: to it in CSP Level 3).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
_SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    # a table's address holds its join code: never send it to anyone as a referrer
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cache-control", b"no-cache"),
]

#: The page's files: URL path -> (file in ``page/``, content type).
_FILES = {
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/icon.svg": ("icon.svg", "image/svg+xml"),
    "/manifest.webmanifest": ("manifest.webmanifest", "application/manifest+json"),
}
_PAGE = ("index.html", "text/html; charset=utf-8")
#: The page's placeholder for the name of the table an invite link opens into (``WebSite``).
INVITED_TO = b'<meta name="invited-to" content="">'
#: The name of an open table for its id and an invite link's code, or None: no such table, or
#: one the link may not name (``Lobby.invite_name``).
TableNamer = Callable[[str, str | None], str | None]
#: A ``Host`` header: a name or an address (IPv6 in brackets), perhaps a port; nothing else.
_HOST = re.compile(rb"(?P<name>[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<port>\d{1,5}))?")

def http_start(head: bytes | bytearray) -> bool | None:
    """Whether a connection's first bytes ``head`` open an HTTP request (``GET `` or
    ``HEAD ``); None while they are a proper beginning of one (more bytes will tell). A text
    mode line starts with ``{`` or white space, a binary frame with 0x00, TLS with 0x16, so no
    client of the protocol is ever taken for a browser."""
    for method in (b"GET ", b"HEAD "):
        if head.startswith(method):
            return True
        if method.startswith(head):
            return None
    return False


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file of the page: its bytes, gzip-compressed too, and its ``ETag`` (a digest of
    the bytes, so a new release's file is never taken for the kept one)."""

    body: bytes
    content_type: str
    gzipped: bytes
    etag: bytes

    @classmethod
    def of(cls, body: bytes, content_type: str) -> StaticFile:
        # mtime=0: the same bytes give the same compressed file on every start
        digest = hashlib.sha256(body).hexdigest()[:20]
        return cls(body, content_type, gzip.compress(body, 9, mtime=0), f'"{digest}"'.encode())


def load_page() -> dict[str, StaticFile]:
    """The page's files by URL path (``/`` is the page), read from the package, and the
    phrasebook as JSON."""
    folder = resources.files("tongits.server.net").joinpath("page")
    files = {path: StaticFile.of(folder.joinpath(name).read_bytes(), kind)
             for path, (name, kind) in _FILES.items()}
    files["/"] = StaticFile.of(folder.joinpath(_PAGE[0]).read_bytes(), _PAGE[1])
    files["/phrases.json"] = StaticFile.of(
        json.dumps(dict(PHRASES), ensure_ascii=False).encode(), "application/json")
    return files


@functools.lru_cache(maxsize=64)
def invite_page(page: StaticFile, name: str) -> StaticFile:
    """The page naming the table ``name`` its invite link opens into, in ``INVITED_TO`` (read
    by the script: the page runs no inline code); kept for the tables asked for last."""
    named = f'<meta name="invited-to" content="{html.escape(name)}">'.encode()
    return StaticFile.of(page.body.replace(INVITED_TO, named, 1), page.content_type)


@dataclass(frozen=True, slots=True)
class Upgraded:
    """A connection that became a WebSocket: its carrier and the wire bytes that followed the
    upgrade request (the first frames, if the client did not wait for the answer)."""

    carrier: WebSocketCarrier
    trailing: bytes


class _Gone(Exception):
    """The connection broke, or an answer did not leave in time: nothing more to serve."""


class WebSite:
    """Serves one connection's HTTP requests until it upgrades or ends. ``handshake_timeout``
    bounds every silence, ``frame_timeout`` the time from a request's first byte to its end
    and the time an answer may take to leave (0 means no limit, as in ``ServerConfig``)."""

    def __init__(self, handshake_timeout: float, frame_timeout: float,
                 names: Collection[str] = ("localhost",),
                 name_table: TableNamer | None = None) -> None:
        """``names``: the host names the server goes by (``own_names``), lower case;
        ``name_table``: the name of the table an invite link's page (``/t/TABLE``) opens into,
        which the page's first form names (None: it names the id the link holds)."""
        self.files = load_page()
        self.name_table = name_table
        self.silence = handshake_timeout or math.inf
        self.frame_timeout = frame_timeout or math.inf
        self.names = frozenset(names)

    async def serve(self, peer: Peer, head: bytes, *,
                    redirect: bool = False) -> Upgraded | None:
        """Answer ``peer``'s requests, the first beginning with ``head``; the upgrade if one
        asked for the WebSocket and was accepted, else None once the connection is over.
        With ``redirect`` (a plain connection to a server that requires TLS) the only answer
        is a redirect to the same address over HTTPS."""
        try:
            return await self._serve(peer, head, redirect)
        except _Gone:
            return None

    async def refuse_busy(self, peer: Peer, head: bytes, reason: str, deadline: float) -> None:
        """Answer the request beginning with ``head`` ``503`` with ``reason`` and a
        ``Retry-After``: the server or the browser's address has no connection to spare, and
        a browser shows an HTTP answer where a protocol error line would be garbage. The head
        is read to its end (a client still sending when the connection closes may lose the
        answer), ``MAX_HEAD`` bytes or until ``deadline``, but not parsed: whatever it asks,
        the answer is the same."""
        while b"\r\n\r\n" not in head and len(head) <= MAX_HEAD:
            data = await peer.receive_by(deadline)
            if data is None:
                break
            if not data:
                return
            head += data
        answer = plain_answer(503, reason, [(b"retry-after", str(RETRY_AFTER).encode())],
                              head=head.startswith(b"HEAD "))
        with contextlib.suppress(_Gone):
            await self._write(peer, answer)

    async def _serve(self, peer: Peer, head: bytes, redirect: bool) -> Upgraded | None:
        http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        http.receive_data(head)
        for _ in range(MAX_REQUESTS):
            request = await self._next_request(peer, http)
            if request is None:
                return None
            host = dict(request.headers).get(b"host")
            bodiless = request.method == b"HEAD"
            if host is not None and self.own_host(host) is None:
                log.info("connection %d: a request for %r, not one of this server's names",
                         peer.id, host)
                await self._refuse(peer, http, 421, f"this server does not go by the name "
                                   f"{host.decode('ascii', 'replace')!r} (its host may add it "
                                   "with --web-hosts)", head=bodiless)
                return None
            if redirect:
                await self._redirect(peer, http, request, head=bodiless)
                return None
            upgraded = await self._answer(peer, http, request)
            if upgraded is not None or http.our_state is not h11.DONE:
                return upgraded
            try:
                if not isinstance(http.next_event(), h11.EndOfMessage):
                    return None  # a body we do not read: the connection cannot go on
                http.start_next_cycle()
            except (h11.RemoteProtocolError, h11.LocalProtocolError):
                return None  # the client said Connection: close, or broke HTTP
        return None

    async def _next_request(self, peer: Peer, http: h11.Connection) -> h11.Request | None:
        begun = math.inf if not http.trailing_data[0] else trio.current_time()
        while True:
            try:
                event = http.next_event()
            except h11.RemoteProtocolError as error:
                await self._refuse(peer, http, error.error_status_hint, str(error))
                return None
            if isinstance(event, h11.Request):
                if _head_size(event) > MAX_HEAD:  # h11 bounds only a head still incomplete
                    await self._refuse(peer, http, 431, "request line and headers too large")
                    return None
                return event
            if event is not h11.NEED_DATA:
                return None
            now = trio.current_time()
            data = await peer.receive_by(min(now + self.silence, begun + self.frame_timeout))
            if data is None:
                if begun < math.inf:
                    await self._refuse(peer, http, 408, "the request took too long")
                return None
            if not data:
                return None
            begun = min(begun, now)
            http.receive_data(bytes(data))

    async def _answer(self, peer: Peer, http: h11.Connection,
                      request: h11.Request) -> Upgraded | None:
        target = request.target.decode("ascii", "replace")
        path = urlsplit(target).path
        if request.method not in (b"GET", b"HEAD"):
            await self._refuse(peer, http, 405, "only GET and HEAD", [(b"allow", b"GET, HEAD")])
            return None
        if path == SOCKET_PATH:
            return await self._upgrade(peer, http, request)
        page = self.files.get("/" if path == "/" or _is_table_path(path) else path)
        if page is not None and _is_table_path(path) and self.name_table is not None:
            code = parse_qs(urlsplit(target).query).get("code", [None])[0]
            name = self.name_table(unquote(path.split("/")[2]), code)
            if name is not None:
                page = invite_page(page, name)
        if page is None:
            await self._refuse(peer, http, 404, "not found", keep=True,
                               head=request.method == b"HEAD")
            return None
        fields = dict(request.headers)
        headers = [(b"etag", page.etag), (b"vary", b"accept-encoding"), *_SECURITY_HEADERS]
        if page.etag in _tags(fields.get(b"if-none-match", b"")):
            response = h11.Response(status_code=304, headers=headers, reason=b"Not Modified")
            await self._send(peer, http, response, b"")
            return None
        body = page.body
        if _accepts_gzip(fields.get(b"accept-encoding", b"")):
            body = page.gzipped
            headers.append((b"content-encoding", b"gzip"))
        headers += [(b"content-type", page.content_type.encode()),
                    (b"content-length", str(len(body)).encode())]
        response = h11.Response(status_code=200, headers=headers, reason=b"OK")
        await self._send(peer, http, response, b"" if request.method == b"HEAD" else body)
        return None

    async def _upgrade(self, peer: Peer, http: h11.Connection,
                       request: h11.Request) -> Upgraded | None:
        headers = list(request.headers)
        fields = {name: value for name, value in headers}
        if fields.get(b"upgrade", b"").lower() != b"websocket":
            await self._refuse(peer, http, 426, "this address speaks WebSocket only",
                               [(b"upgrade", b"websocket")])
            return None
        origin = fields.get(b"origin")
        if origin is not None and not same_host(origin, fields.get(b"host", b"")):
            log.info("connection %d: WebSocket from another site refused (origin %r, host %r)",
                     peer.id, origin, fields.get(b"host"))
            await self._refuse(peer, http, 403, "the page of another site may not connect")
            return None
        if not _paused(http):
            await self._refuse(peer, http, 400, "not a WebSocket upgrade")
            return None
        try:
            carrier, answer = WebSocketCarrier.accept(headers, request.target)
        except UpgradeError as error:
            extra = [(b"sec-websocket-version", VERSION)] if error.status == 426 else None
            await self._refuse(peer, http, error.status, f"not a WebSocket upgrade: {error}",
                               extra)
            return None
        await self._write(peer, answer)
        return Upgraded(carrier, http.trailing_data[0])

    async def _redirect(self, peer: Peer, http: h11.Connection, request: h11.Request, *,
                        head: bool) -> None:
        """Answer a plain request to a server that requires TLS: a redirect to the same page
        over HTTPS, built from the server's own name (``own_host``) and the target's path and
        query only (``@evil.example`` is no path). A WebSocket is refused with a word on
        ``wss://`` instead: no WebSocket client follows a redirect."""
        host = self.own_host(dict(request.headers).get(b"host", b""))
        if host is None:
            await self._refuse(peer, http, 400, "this server speaks HTTPS only", head=head)
            return
        target = urlsplit(request.target.decode("ascii", "replace"))
        path = target.path if target.path.startswith("/") else "/"
        if path == SOCKET_PATH:
            await self._refuse(peer, http, 403, f"this server accepts TLS only: open "
                               f"wss://{host}{SOCKET_PATH}, not ws://", head=head)
            return
        location = f"https://{host}{path}" + (f"?{target.query}" if target.query else "")
        await self._refuse(peer, http, 308, "this server speaks HTTPS only",
                           [(b"location", location.encode())], head=head)

    def own_host(self, host: bytes) -> str | None:
        """``host`` (a ``Host`` header: a name or address, perhaps a port) rebuilt from its
        parts if it names this server: an IP address, or one of ``names``; else None."""
        parts = _HOST.fullmatch(host)
        if parts is None or (parts["port"] and int(parts["port"]) > 65535):
            return None
        name = parts["name"].decode("ascii").lower().rstrip(".")
        try:
            address = ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            if name not in self.names:
                return None
        else:
            name = f"[{address}]" if address.version == 6 else str(address)
        return f"{name}:{int(parts['port'])}" if parts["port"] else name

    async def _refuse(self, peer: Peer, http: h11.Connection, status: int, reason: str,
                      extra: list[tuple[bytes, bytes]] | None = None, *,
                      keep: bool = False, head: bool = False) -> None:
        """Answer ``status`` with ``reason`` as a short text (but to a ``HEAD``: ``head``);
        the connection then closes unless ``keep`` (a 404 spoils nothing)."""
        body = f"{status} {reason}\n".encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8"),
                   (b"content-length", str(len(body)).encode()), *_SECURITY_HEADERS,
                   *(extra or [])]
        if not keep:
            headers.append((b"connection", b"close"))
        try:
            response = h11.Response(status_code=status, headers=headers,
                                    reason=HTTPStatus(status).phrase.encode())
            await self._send(peer, http, response, b"" if head else body)
        except h11.LocalProtocolError:
            # h11 cannot answer in its state (e.g. the request line itself was garbage before
            # any request began): write the answer by hand.
            await self._write(peer, plain_answer(status, reason, extra or [], head=head))

    async def _send(self, peer: Peer, http: h11.Connection, response: h11.Response,
                    body: bytes) -> None:
        data = http.send(response) or b""
        if body:
            data += http.send(h11.Data(data=body)) or b""
        data += http.send(h11.EndOfMessage()) or b""
        await self._write(peer, data)

    async def _write(self, peer: Peer, data: bytes) -> None:
        """Send ``data``; ``_Gone`` if it did not leave within the frame timeout (a client
        that does not read is cut off like a slow TCP reader) or the connection broke."""
        with trio.move_on_after(self.frame_timeout):
            try:
                await peer.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                raise _Gone from None
            return
        log.info("connection %d: an HTTP answer did not leave in time", peer.id)
        raise _Gone


def plain_answer(status: int, reason: str, extra: list[tuple[bytes, bytes]], *,
                 head: bool = False) -> bytes:
    """An answer written without h11, which answers only a request it has parsed: ``status``
    with ``reason`` as its text (none to a ``HEAD``), the security headers and ``extra``; the
    connection closes after it."""
    body = f"{status} {reason}\n".encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"),
               (b"content-length", str(len(body)).encode()), *_SECURITY_HEADERS, *extra,
               (b"connection", b"close")]
    lines = [b"HTTP/1.1 %d %s" % (status, HTTPStatus(status).phrase.encode()),
             *(name + b": " + value for name, value in headers)]
    return b"\r\n".join(lines) + b"\r\n\r\n" + (b"" if head else body)


def _head_size(request: h11.Request) -> int:
    """The bytes of a request's line and headers (as received, but for white space)."""
    return (len(request.method) + len(request.target) + 11
            + sum(len(name) + len(value) + 4 for name, value in request.headers))


def _paused(http: h11.Connection) -> bool:
    """Whether h11 has read all of an upgrade request (a GET has no body) and stopped there:
    what follows is the other protocol's."""
    try:
        return (isinstance(http.next_event(), h11.EndOfMessage)
                and http.next_event() is h11.PAUSED)
    except h11.RemoteProtocolError:
        return False


def _tags(if_none_match: bytes) -> list[bytes]:
    """The entity tags an ``If-None-Match`` names (weak ones as strong: the files are
    compared whole either way)."""
    return [tag.strip().removeprefix(b"W/") for tag in if_none_match.split(b",")]


def _accepts_gzip(accept_encoding: bytes) -> bool:
    """Whether an ``Accept-Encoding`` takes gzip (not refused with ``q=0``)."""
    for item in accept_encoding.lower().split(b","):
        coding, _, params = item.strip().partition(b";")
        if coding.strip() in (b"gzip", b"*"):
            q = params.strip().removeprefix(b"q=")
            try:
                return not params or float(q) > 0
            except ValueError:
                return False
    return False


def _is_table_path(path: str) -> bool:
    """``/t/TABLE``: the page, opening into that table."""
    parts = path.split("/")
    return len(parts) == 3 and parts[1] == "t" and bool(parts[2])


def browser_address(host: str, port: int, tls: bool, public_address: str = "") -> str:
    """The address a person opens in a browser to reach a server listening on ``host``:
    ``port``: the host's ``public_address`` (``HOST[:PORT]``, the one invite links give
    friends) if set and readable; for a wildcard address, the one a friend on the LAN types
    (``friends_host``); IPv6 addresses in brackets."""
    scheme = "https" if tls else "http"
    if public_address:
        with contextlib.suppress(AddressError):
            return f"{scheme}://{Endpoint.parse(public_address, port).hostport}/"
    if is_wildcard(host):
        host = friends_host(host)
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}/"


def own_names(host: str, public_address: str, extra: str) -> frozenset[str]:
    """The host names this server goes by, lower case: ``localhost``, this machine's name
    (short, fully qualified, and ``.local`` as mDNS says it on a LAN), the names of the
    listening ``host`` and of ``public_address`` (``HOST[:PORT]``), and ``extra`` (the
    ``web_hosts`` setting: names separated by commas). IP addresses need no name."""
    machine = socket.gethostname().lower()
    names = {"localhost", machine, f"{machine.split('.')[0]}.local", socket.getfqdn().lower(),
             host.lower(), urlsplit(f"//{public_address}").hostname or "",
             *(name.strip().lower() for name in extra.split(","))}
    return frozenset(name.rstrip(".") for name in names if name)


def same_host(origin: bytes, host: bytes) -> bool:
    """Whether a request's ``Origin`` (``scheme://host[:port]``) names the server it was sent
    to (its ``Host`` header): the page that opens the WebSocket is this server's own."""
    try:
        netloc = urlsplit(origin.decode("ascii")).netloc
    except (UnicodeDecodeError, ValueError):
        return False
    return bool(netloc) and netloc.lower() == host.decode("ascii", "replace").lower()
