"""One client connection on the server side: its outgoing queue and its writer.

Tables and the lobby call ``Peer.send`` (never blocks). When nothing is waiting to go out, the
frame is handed to the kernel at once with a non-blocking write on the socket: most messages
leave in the task that made them, with no wake-up of another task (a whole scheduling round
less per message, and no coroutines made and thrown away for it). What the kernel does not take
waits, in order, in a queue bounded in messages and in bytes that the connection's writer task
drains. A client that does not read fills its queue and is disconnected with ``slow_reader``;
nobody ever waits for it, and it never holds more than ``queue_bytes`` of the server's memory.
``kick`` sends one last error frame and ends the connection.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import trio
from tongits.protocol import Chat, Codec, ErrorCode, PlayerKind, error_message
from tongits.protocol.transport import Invite

from ..table.requests import TableRequest

if TYPE_CHECKING:
    from .websocket import Inbound

log = logging.getLogger("tongits.server")


class Carrier(Protocol):
    """A framing of the wire around the codec's frames (``websocket.WebSocketCarrier``): a
    browser's connection is the same ``Peer``, only its bytes are wrapped on the way out and
    unwrapped on the way in."""

    def outbound(self, data: bytes) -> bytes: ...

    def last(self, data: bytes) -> bytes: ...

    def inbound(self, data: bytes | bytearray, budget: float = ...) -> Inbound: ...

    @property
    def ended(self) -> bool: ...


class TableLink(Protocol):
    """What a connection knows of the table it sits at or watches (``actor.Table``): its id,
    how to hand it a request and wait for it (``call``), tell it the connection has ended
    (``disconnected``, which never waits and is never dropped) and say a chat line there."""

    @property
    def id(self) -> str: ...

    async def call(self, peer: Peer, msg: TableRequest) -> None: ...

    def disconnected(self, peer: Peer) -> None: ...

    def chat(self, peer: Peer, msg: Chat) -> None: ...


_ids = itertools.count(1)

#: How long the final error frame of a kicked connection may take to leave.
FINAL_FRAME_GRACE = 2.0


class Peer:
    """A connected client: who it is (after ``hello``) and where it sits.

    ``table``, ``seat`` and ``token`` are set by the table that seats the peer, in the table's
    own task; the connection's reader only reads them to route requests.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        codec: Codec,
        queue_size: int,
        address: str,
        *,
        rate: float = 0.0,
        burst: int = 1,
        queue_bytes: int = 256 * 1024,
    ):
        self.id = next(_ids)
        self.stream = stream
        self.codec = codec
        self.address = address
        self.host = address.rsplit(":", 1)[0]
        #: what the per-address limits count this peer under (its IPv4 address or IPv6 /64);
        #: None when they do not apply (loopback)
        self.quota: str | None = None
        self.rate, self.burst = rate, burst
        self._tokens = float(burst)
        self._refilled = trio.current_time()
        self.name: str | None = None
        #: the ladder account it said in ``hello`` (its name), if any
        self.account: str | None = None
        self.kind = PlayerKind.HUMAN
        #: said in ``hello`` (since 1.1): counts as having asked for every next hand
        self.auto_next = False
        #: said in ``hello`` (since 1.1): the client sends something at least every that many
        #: seconds, so a longer silence means it is gone (None: it may be silent for ever)
        self.heartbeat: float | None = None
        self.table: TableLink | None = None
        self.seat: int | None = None
        self.token: str | None = None
        self.closed = False
        #: the connection has ended (set once, by the server, when its table is told)
        self.gone = False
        #: the socket behind ``stream``, written directly while nothing is queued (None for
        #: other streams, e.g. the in-memory ones of tests: everything goes through the writer)
        self._socket = stream.socket if isinstance(stream, trio.SocketStream) else None
        self._queue_size = queue_size
        self._queue_bytes = queue_bytes
        #: bytes in ``_pending``
        self._queued = 0
        #: encoded frames the kernel has not taken yet, oldest first; the first one may be the
        #: rest of a frame that was partly written
        self._pending: deque[bytes] = deque()
        self._partial = False
        self._writing = False
        self._wake = trio.lowlevel.ParkingLot()
        self._cork: list[bytes] | None = None
        self._final: bytes | None = None
        self._drop = False
        self._write_scope = trio.CancelScope()
        #: messages accepted by ``send`` (for the log)
        self.sent = 0
        #: the invite link of private tables this peer creates, less table and code
        self.invite: Invite | None = None
        #: whether the connection is TLS
        self.secure = False
        #: the WebSocket around the codec's frames of a browser's connection (None: the
        #: codec's frames are the wire's bytes)
        self.carrier: Carrier | None = None
        #: when the last WebSocket ping or pong came (they reach no codec, but the heartbeat
        #: hears them)
        self.pinged_at = -math.inf

    def __repr__(self) -> str:
        return f"<peer {self.id} {self.name or '?'}@{self.address}>"

    def use_stream(self, stream: trio.abc.Stream) -> None:
        """Speak over ``stream`` from now on (the TLS layer over the socket): every frame then
        goes through it, none straight to the socket."""
        self.stream = stream
        self._socket = None
        self.secure = True

    @property
    def hello_done(self) -> bool:
        return self.name is not None

    def take_token(self, cost: float = 1.0) -> bool:
        """Token bucket: whether ``cost`` more messages are within ``rate`` per second on
        average with bursts up to ``burst`` (always true when ``rate`` is 0)."""
        if self.tokens() < cost:
            return False
        self._tokens -= cost
        return True

    def tokens(self) -> float:
        """How many messages may be sent now (infinite when ``rate`` is 0)."""
        if self.rate <= 0:
            return math.inf
        now = trio.current_time()
        self._tokens = min(self.burst, self._tokens + (now - self._refilled) * self.rate)
        self._refilled = now
        return self._tokens

    def send(self, msg: Mapping[str, Any]) -> None:
        """Send ``msg`` now if the socket takes it, else queue it for the writer; a full queue
        disconnects the peer as a slow reader. While corked, hold it until ``uncork``."""
        if not self.closed:
            self.send_frame(self.codec.encode(msg))

    def send_frame(self, data: bytes) -> None:
        """``send`` for a message already encoded in this peer's mode (``Codec.frame``): a
        message sent to many is encoded once per mode, not once per peer."""
        if self.closed:
            return
        self.sent += 1
        if self.carrier is not None:
            data = self.carrier.outbound(data)
        if self._cork is not None:
            self._cork.append(data)
            return
        self._push(data)

    def cork(self) -> None:
        """Hold what is sent from now until ``uncork``: the messages of one change of a table
        (a reply, the new state, a hand's result) then leave in one write."""
        if self._cork is None:
            self._cork = []

    def uncork(self) -> bool:
        """Send what was held since ``cork``, in order, as one piece. A closed peer's writer
        waits for the cork to go before it ends, so it is woken even when nothing was held.
        Whether a task was woken (the writer: what the socket did not take waits for it)."""
        held, self._cork = self._cork, None
        woke = self._let_out(held) if held else False
        if self.closed:
            woke = bool(self._wake.unpark()) or woke
        return woke

    def held(self) -> int:
        """How many frames are held (0 when not corked)."""
        return len(self._cork) if self._cork is not None else 0

    def release(self, count: int) -> bool:
        """Send the first ``count`` held frames, as one piece, and keep holding the rest (the
        messages of a change committed before the changes of the rest, ``GroupCommit``).
        Whether a task was woken, as ``uncork`` says."""
        held = self._cork
        if held is None or count <= 0:
            return False
        self._cork = held[count:]
        return self._let_out(held[:count])

    def _let_out(self, held: list[bytes]) -> bool:
        data = b"".join(held) if len(held) > 1 else held[0]
        if not self.closed:
            return self._push(data)
        if not self._drop:  # kicked meanwhile: the writer sends it before the last frame
            self._pending.append(data)
            return bool(self._wake.unpark())
        return False

    def _push(self, data: bytes) -> bool:
        """Write ``data`` now, or queue it and wake the writer: whether a task was woken."""
        sock = self._socket
        if sock is not None and not self._pending and not self._writing:
            # What the kernel takes without waiting (0 also when the socket is closed or
            # broken: the writer then meets the error and ends the connection).
            try:
                written = os.write(sock.fileno(), data)
            except OSError:
                written = 0
            if written == len(data):
                return False
            if written:
                data = data[written:]
                self._partial = True
        if (len(self._pending) >= self._queue_size
                or self._queued + len(data) > self._queue_bytes):
            log.warning("%r: outgoing queue full (%d messages, %d bytes), disconnecting", self,
                        len(self._pending), self._queued)
            self.kick(ErrorCode.SLOW_READER, "too many unread messages", flush=False)
            self._write_scope.cancel()  # it is not reading: nothing more will reach it
            return True
        self._pending.append(data)
        self._queued += len(data)
        return bool(self._wake.unpark())

    async def receive(self) -> bytes | bytearray:
        """The next chunk the peer sent (b"" at the end of the connection), unwrapped by the
        ``carrier`` if there is one (the codec's bytes of the next frames that held any)."""
        carrier = self.carrier
        if carrier is not None and carrier.ended:
            return b""
        data = await self._receive_bytes()
        while carrier is not None and data:
            text = self.unwrap(data)
            if text or carrier.ended or self.closed:
                return text
            data = await self._receive_bytes()
        return data

    async def receive_by(self, deadline: float) -> bytes | bytearray | None:
        """``receive``, waiting until ``deadline`` (``trio.current_time``) at most: the next
        chunk, b"" at the end of the connection (or when it broke), None if the deadline
        passed first."""
        try:
            if deadline == math.inf:  # a seated player: no cancel scope made for every read
                if self.carrier is None:  # nothing to unwrap: one coroutine less a read
                    return await self._receive_bytes()
                return await self.receive()
            with trio.move_on_at(deadline):
                return await self.receive()
            return None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    def unwrap(self, data: bytes | bytearray) -> bytes:
        """The codec's bytes in wire bytes ``data`` of a connection with a ``carrier`` (b""
        when they held none: a control frame, the end, or a breach of the carrier's rules,
        which ends the connection with an error)."""
        assert self.carrier is not None
        got = self.carrier.inbound(data, self.tokens())
        if got.controls:  # a ping or pong is a message: same rate limit, heard as a ping
            self.pinged_at = trio.current_time()
            self.take_token(got.controls)  # within the budget: text is charged by the codec
        if got.reply:  # control frames: they go out as they are, around any cork
            self._push(got.reply)
        if got.refusal is not None:
            self.kick(*got.refusal)
            return b""
        return got.text

    async def _receive_bytes(self) -> bytes | bytearray:
        """The next chunk of wire bytes. A plain socket is read directly once it is
        readable: ``SocketStream.receive_some`` first tries a read that fails (the reader
        waits for the next message right after handling one), then waits, reads, and yields
        once more, twice the work for the same bytes."""
        sock = self._socket
        if sock is None:
            return await self.stream.receive_some(65536)
        fd = sock.fileno()
        if fd < 0:  # closed by another task while this one was not waiting: the end
            return b""
        while True:  # (closed while waiting: the wait raises ClosedResourceError)
            await trio.lowlevel.wait_readable(fd)
            try:
                return os.read(fd, 65536)
            except BlockingIOError:
                continue  # woken with nothing to read after all
            except OSError:
                return b""  # reset, or closed meanwhile: the end of this connection

    def kick(self, code: str, message: str, ref: int | str | None = None, *,
             flush: bool = True) -> None:
        """End the connection with one last ``error`` frame. With ``flush`` what is already
        queued goes first; without, what is not yet being written is dropped. Either way the
        writer gets ``FINAL_FRAME_GRACE`` to finish: a peer that does not read in that time
        (a slow reader) is closed without the frame."""
        if self.closed:
            return
        self.closed = True
        self._final = self.codec.encode(error_message(code, message, ref))
        if self.carrier is not None:
            self._final = self.carrier.last(self._final)
        self._drop = not flush
        self._write_scope.deadline = trio.current_time() + FINAL_FRAME_GRACE
        self._wake.unpark()

    def finish(self) -> None:
        """End the connection after everything already queued has been written, which may
        take ``FINAL_FRAME_GRACE`` at most (a peer that has stopped reading gets no longer)."""
        if not self.closed:
            self.closed = True
            self._write_scope.deadline = trio.current_time() + FINAL_FRAME_GRACE
            self._wake.unpark()

    async def run_writer(self) -> None:
        """Write what the socket did not take at once, all that is queued in one go, until the
        peer is closed; then the final error frame, unless a frame was left half written."""
        pending = self._pending
        with self._write_scope:
            while True:
                if self._drop:
                    # What is left goes nowhere; half a frame already on the wire cannot be
                    # finished with another frame after it.
                    if self._partial:
                        self._final = None
                    pending.clear()
                    break
                if not pending:
                    if self.closed and self._cork is None:
                        break
                    await self._wake.park()
                    continue
                data = b"".join(pending) if len(pending) > 1 else pending[0]
                pending.clear()
                self._queued = 0
                self._writing = self._partial = True
                await self.stream.send_all(data)
                self._writing = self._partial = False
        if self._final is not None and not self._partial:
            with trio.move_on_after(FINAL_FRAME_GRACE):
                await self.stream.send_all(self._final)
