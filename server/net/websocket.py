"""The protocol's text mode inside a WebSocket (RFC 6455): one JSON message per text frame.

A browser cannot open a plain TCP connection, so a page speaks the documented protocol over a
WebSocket on the server's one port (``web.py`` answers the upgrade). The connection stays the
same ``Peer`` with the same codec, limits and timeouts: ``WebSocketCarrier`` only turns the
bytes on the wire into text-mode lines and back (``Peer.carrier``), so there is no second
implementation of sessions.

* In: wsproto (sans-IO) parses the frames, unmasks them, checks UTF-8 and answers pings and
  the closing handshake. Pings and pongs are counted (``Inbound.controls``): each costs the
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


class UpgradeError(Exception):
    """A WebSocket upgrade request that cannot be accepted (wsproto's reason in ``str()``)."""


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


def _refusal(event: Event, over_budget: bool) -> tuple[str, str] | None:
    """Why the connection ends at ``event`` (error code, message), if it does: a binary
    message, or one message more than the rate limit allows."""
    if isinstance(event, BytesMessage):
        return (ErrorCode.MALFORMED_FRAME,
                "a binary WebSocket message: send each message as one text frame of JSON")
    if over_budget:
        return (ErrorCode.RATE_LIMITED, "more messages per second than the rate limit allows "
                "(WebSocket pings and pongs count)")
    return None


def text_frame(payload: bytes) -> bytes:
    """``payload`` (UTF-8) as one unmasked, unfragmented text frame (RFC 6455 §5.2)."""
    size = len(payload)
    if size < 126:
        return bytes((_TEXT_FRAME, size)) + payload
    if size < 0x10000:
        return _LENGTH16.pack(_TEXT_FRAME, 126, size) + payload
    return _LENGTH64.pack(_TEXT_FRAME, 127, size) + payload


class WebSocketCarrier:
    """One accepted WebSocket: the server side of ``Peer.carrier``."""

    def __init__(self, connection: WSConnection) -> None:
        self._ws = connection
        #: the peer closed the WebSocket (or broke its framing): nothing more comes in
        self.ended = False

    @classmethod
    def accept(cls, headers: list[tuple[bytes, bytes]], target: bytes,
               ) -> tuple[WebSocketCarrier, bytes]:
        """The carrier for an upgrade request already read (its ``headers`` and ``target``)
        and the handshake's answer (``101 Switching Protocols``) to send; ``UpgradeError`` if
        the request is no valid WebSocket upgrade."""
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
        """The codec's frames (text lines) as WebSocket text frames."""
        if data.endswith(b"\n") and data.count(b"\n") == 1:
            return text_frame(data[:-1])
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
        ws = self._ws
        text: list[bytes] = []
        reply: list[bytes] = []
        controls = messages = 0
        try:
            ws.receive_data(bytes(data))
            for event in ws.events():
                messages += _is_message(event)
                refusal = _refusal(event, messages > budget)
                if refusal is not None:
                    return Inbound(refusal=refusal)
                controls += isinstance(event, Ping | Pong)
                if isinstance(event, TextMessage):
                    chunk = event.data.replace("\n", " ").replace("\r", " ")
                    text.append(chunk.encode("utf-8"))
                    if event.message_finished:
                        text.append(b"\n")
                elif isinstance(event, Ping):
                    reply.append(ws.send(event.response()))
                elif isinstance(event, CloseConnection):
                    if ws.state is not ConnectionState.CLOSED:
                        reply.append(ws.send(event.response()))
                    self.ended = True
                    break
        except (RemoteProtocolError, LocalProtocolError):  # bytes after the close: ignored
            self.ended = True
        return Inbound(b"".join(text), b"".join(reply), controls)
