"""The protocol's text mode inside a WebSocket (RFC 6455): one JSON message per text frame.

A browser cannot open a plain TCP connection, so a page speaks the documented protocol over a
WebSocket on the server's one port (``web.py`` answers the upgrade). The connection stays the
same ``Peer`` with the same codec, limits and timeouts: ``WebSocketCarrier`` only turns the
bytes on the wire into text-mode lines and back (``Peer.carrier``), so there is no second
implementation of sessions.

* In: a browser's messages are single masked text frames, a few hundred bytes each: those
  are unmasked and checked as UTF-8 here (``_quick_frame``), which took a tenth of the
  server's CPU per action through wsproto. Anything else (a fragment, a control frame, a
  binary frame, a frame cut by the chunks it arrived in, a frame of 64 KiB or more, bytes
  that are no valid frame or no UTF-8) goes to wsproto (sans-IO), which parses the frames,
  unmasks them, checks UTF-8 and answers pings and the closing handshake. The carrier walks
  the headers of what it hands wsproto, to know when wsproto is between frames and no
  message is in progress again: only then are frames taken here, so the two parsers never
  share a frame. Pings and pongs are counted (``Inbound.controls``): each costs the
  sender a message of its rate limit and counts as heard for its heartbeat, as a text
  ``ping`` does (``Peer.unwrap``). Frames are parsed only while the sender's rate limit has
  room for the messages they end: a chunk holding thousands of tiny frames is refused
  after the first ones, not parsed whole.
  Each text message's data reaches the codec as it arrives, followed
  by a newline once the message is finished, so the codec's line limit and frame timeout
  apply to a WebSocket message as to a line. A newline inside a message is whitespace to
  JSON (a JSON string cannot hold one raw), so it becomes a space.
* Out: each text-mode line (the codec's frame, ending in ``\\n``) becomes one unmasked text
  frame. The header is written here rather than by wsproto, which would decode every frame
  to ``str`` and encode it again (the server's frames are already UTF-8 JSON).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from dataclasses import dataclass

from tongits.protocol import ErrorCode
from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Event,
    Ping,
    Pong,
    TextMessage,
)
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

#: The first byte of an unfragmented text frame (FIN, opcode 1).
_TEXT_FRAME = 0x81
_LENGTH16 = struct.Struct(">BBH")
_LENGTH64 = struct.Struct(">BBQ")


#: The WebSocket version this server speaks (RFC 6455's, the one every browser sends).
VERSION = b"13"


class UpgradeError(Exception):
    """A WebSocket upgrade request that cannot be accepted, the reason in ``str()``;
    ``status``: the HTTP answer, ``426`` for a version other than ``VERSION`` (RFC 6455 4.2.2:
    the client may try again with the version the answer names), else ``400``."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True, slots=True)
class Inbound:
    """What a chunk of wire bytes held: ``text`` for the codec (whole lines end in ``\\n``),
    ``reply`` to send back as it is (pongs, the closing handshake), ``controls``, how many
    pings and pongs came, and ``refusal`` (error code, message) when the peer broke the rules
    of this transport (a binary message): the connection ends with that error."""

    text: bytes = b""
    reply: bytes = b""
    controls: int = 0
    refusal: tuple[str, str] | None = None


def _is_message(event: Event) -> bool:
    """Whether ``event`` costs a message of the rate limit: a text message's end, a ping, a
    pong."""
    return isinstance(event, Ping | Pong) or (isinstance(event, TextMessage)
                                              and event.message_finished)


_OVER_BUDGET = ("more messages per second than the rate limit allows (WebSocket pings and "
                "pongs count)")


def _refusal(event: Event, over_budget: bool) -> tuple[str, str] | None:
    """Why the connection ends at ``event`` (error code, message), if it does: a binary
    message, or one message more than the rate limit allows."""
    if isinstance(event, BytesMessage):
        return (ErrorCode.MALFORMED_FRAME,
                "a binary WebSocket message: send each message as one text frame of JSON")
    if over_budget:
        return (ErrorCode.RATE_LIMITED, _OVER_BUDGET)
    return None


def _is_key(key: bytes) -> bool:
    """Whether ``key`` is a ``Sec-WebSocket-Key``: 16 bytes in base64 (RFC 6455 4.1)."""
    try:
        return len(base64.b64decode(key.strip(), validate=True)) == 16
    except binascii.Error:
        return False


def _line(payload: bytes) -> bytes:
    """A text message's payload as one line for the codec (its line breaks are spaces, as
    JSON's whitespace)."""
    return payload.replace(b"\n", b" ").replace(b"\r", b" ") + b"\n"


def text_frame(payload: bytes | memoryview) -> bytes:
    """``payload`` (UTF-8) as one unmasked, unfragmented text frame (RFC 6455 §5.2)."""
    size = len(payload)
    if size < 126:
        return bytes((_TEXT_FRAME, size)) + payload
    if size < 0x10000:
        return _LENGTH16.pack(_TEXT_FRAME, 126, size) + payload
    return _LENGTH64.pack(_TEXT_FRAME, 127, size) + payload


def _quick_frame(data: bytes, at: int) -> tuple[int, bytes] | None:
    """The frame at ``at`` if it is a whole message as browsers send one, complete in
    ``data``: a final, masked text frame with no reserved bits, under 64 KiB, of valid UTF-8.
    Returns (where it ends, its payload unmasked), or None (wsproto then parses it)."""
    if len(data) - at < 6 or data[at] != _TEXT_FRAME:
        return None
    size = data[at + 1] ^ 0x80  # the mask bit must be set
    start = at + 2
    if size == 126:
        if len(data) - at < 8:
            return None
        size = int.from_bytes(data[start:start + 2])
        start += 2
    elif size > 126:  # unmasked, or a 64-bit length
        return None
    end = start + 4 + size
    if end > len(data):
        return None
    mask = data[start:start + 4]
    masked = data[start + 4:end]
    payload = (int.from_bytes(masked, "little")
               ^ int.from_bytes(mask * (size // 4 + 1), "little") & ((1 << 8 * size) - 1)
               ).to_bytes(size, "little")
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return end, payload


def _header(head: bytes) -> tuple[int, int, int] | None:
    """A frame header's (length, payload length, first byte), or None if ``head`` holds only
    part of it."""
    if len(head) < 2:
        return None
    size, length = head[1] & 0x7F, 2 + 4 * (head[1] >> 7)
    if size == 126:
        length += 2
        if len(head) < 4:
            return None
        size = int.from_bytes(head[2:4])
    elif size == 127:
        length += 8
        if len(head) < 10:
            return None
        size = int.from_bytes(head[2:10])
    return length, size, head[0]


class WebSocketCarrier:
    """One accepted WebSocket: the server side of ``Peer.carrier``."""

    def __init__(self, connection: WSConnection) -> None:
        self._ws = connection
        #: the peer closed the WebSocket (or broke its framing): nothing more comes in
        self.ended = False
        #: wsproto's frame: the bytes of it still to come, and the part of its header seen
        #: while the rest of the header has not come
        self._owed = 0
        self._head = b""
        #: a message wsproto is parsing has fragments still to come
        self._continued = False

    @classmethod
    def accept(cls, headers: list[tuple[bytes, bytes]], target: bytes,
               ) -> tuple[WebSocketCarrier, bytes]:
        """The carrier for an upgrade request already read (its ``headers`` and ``target``)
        and the handshake's answer (``101 Switching Protocols``) to send; ``UpgradeError`` if
        the request is no valid WebSocket upgrade. wsproto checks that the key and version
        are there, not what they are: it answered a key of any length, and called a version
        other than 13 a missing header."""
        fields = dict(headers)
        version = fields.get(b"sec-websocket-version")
        if version is not None and version.strip() != VERSION:
            raise UpgradeError(f"WebSocket version {version.decode('ascii', 'replace')!r}: "
                               f"this server speaks {VERSION.decode()}", 426)
        key = fields.get(b"sec-websocket-key")
        if key is not None and not _is_key(key):
            raise UpgradeError("Sec-WebSocket-Key is not 16 bytes in base64")
        ws = WSConnection(ConnectionType.SERVER)
        try:
            ws.initiate_upgrade_connection(headers, target)
            for _ in ws.events():  # the handshake's Request
                pass
            answer = ws.send(AcceptConnection())
        except RemoteProtocolError as error:
            raise UpgradeError(str(error)) from None
        return cls(ws), answer

    def outbound(self, data: bytes) -> bytes:
        """The codec's frames (text lines) as WebSocket text frames. Nearly always one line
        (a state of a few KiB): its only newline, found by ``find`` (memchr; ``count`` reads
        byte by byte, 4 % of a browser seat's action), is its last byte, and the payload is
        copied once, into the frame."""
        last = len(data) - 1
        if last >= 0 and data.find(b"\n") == last:
            if 126 <= last < 0x10000:  # (a state: ``text_frame`` written out)
                return _LENGTH16.pack(_TEXT_FRAME, 126, last) + memoryview(data)[:last]
            return text_frame(memoryview(data)[:last])
        return b"".join(text_frame(line) for line in data.split(b"\n") if line)

    def last(self, data: bytes) -> bytes:
        """``outbound`` of a connection's last frame, then the closing handshake."""
        closing = b""
        if self._ws.state is ConnectionState.OPEN:
            closing = self._ws.send(CloseConnection(code=CloseReason.NORMAL_CLOSURE))
        return self.outbound(data) + closing

    def inbound(self, data: bytes | bytearray, budget: float = math.inf) -> Inbound:
        """Feed wire bytes; what they held. ``budget``: how many messages (finished text
        messages, pings and pongs) the sender may still send now; one more is refused with
        ``rate_limited``, and what follows it is not parsed."""
        data = bytes(data)
        if budget >= 1 and not self.ended and self._between_frames():  # one whole message
            quick = _quick_frame(data, 0)
            if quick is not None and quick[0] == len(data):
                return Inbound(_line(quick[1]))
        got = _Gathered(budget)
        at = 0
        while at < len(data) and not self.ended:
            quick = _quick_frame(data, at) if self._between_frames() else None
            if quick is not None:
                at, payload = quick
                if got.count(1):
                    return Inbound(refusal=got.refusal)
                got.text.append(_line(payload))
                continue
            end = self._frame_end(data, at)
            if not self._parse(data[at:end], got):
                return Inbound(refusal=got.refusal)
            at = end
        return Inbound(b"".join(got.text), b"".join(got.reply), got.controls)

    def _between_frames(self) -> bool:
        """Whether wsproto has no part of a frame and no unfinished message (the next frame
        may be taken here), and the connection is open."""
        return (not self._owed and not self._head and not self._continued
                and self._ws.state is ConnectionState.OPEN)

    def _frame_end(self, data: bytes, at: int) -> int:
        """Where in ``data`` the frame wsproto is in (or the one at ``at``) ends: ``len(data)``
        if it goes on past it."""
        if self._owed:
            return min(len(data), at + self._owed)
        header = _header(self._head + data[at:at + 14])
        if header is None:
            return len(data)
        length, size, _ = header
        return min(len(data), at + length + size - len(self._head))

    def _follow(self, piece: bytes) -> None:
        """Keep track of where wsproto's frames end as ``piece`` (from ``_frame_end``) goes
        to it."""
        if self._owed:
            self._owed -= len(piece)
            return
        head = self._head + piece
        header = _header(head)
        if header is None:
            self._head = head
            return
        length, size, first = header
        self._head, self._owed = b"", length + size - len(head)
        opcode, final = first & 0x0F, first & 0x80
        if opcode in (1, 2):  # a text or binary message begins; unfinished unless final
            self._continued = not final
        elif opcode == 0 and final:  # its last fragment
            self._continued = False

    def _parse(self, piece: bytes, got: _Gathered) -> bool:
        """Hand ``piece`` to wsproto and gather its events into ``got``; False if the peer
        broke the rules of this transport (``got.refusal`` says how)."""
        ws = self._ws
        self._follow(piece)
        try:
            ws.receive_data(piece)
            for event in ws.events():
                refusal = _refusal(event, got.count(_is_message(event)))
                if refusal is not None:
                    got.refusal = refusal
                    return False
                got.controls += isinstance(event, Ping | Pong)
                if isinstance(event, TextMessage):
                    chunk = event.data.replace("\n", " ").replace("\r", " ")
                    got.text.append(chunk.encode("utf-8"))
                    if event.message_finished:
                        got.text.append(b"\n")
                elif isinstance(event, Ping):
                    got.reply.append(ws.send(event.response()))
                elif isinstance(event, CloseConnection):
                    if ws.state is not ConnectionState.CLOSED:
                        got.reply.append(ws.send(event.response()))
                    self.ended = True
                    break
        except (RemoteProtocolError, LocalProtocolError):  # bytes after the close: ignored
            self.ended = True
        return True


class _Gathered:
    """What ``WebSocketCarrier.inbound`` has found so far in a chunk."""

    __slots__ = ("budget", "messages", "controls", "text", "reply", "refusal")

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.messages = self.controls = 0
        self.text: list[bytes] = []
        self.reply: list[bytes] = []
        self.refusal: tuple[str, str] | None = None

    def count(self, messages: int) -> bool:
        """Count ``messages`` more; whether that is more than the budget (then ``refusal``
        says so)."""
        self.messages += messages
        if self.messages > self.budget:
            self.refusal = (ErrorCode.RATE_LIMITED, _OVER_BUDGET)
            return True
        return False
