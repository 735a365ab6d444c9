"""One client connection on the server side: its outgoing queue and its writer.

Tables and the lobby call ``Peer.send`` (never blocks): a message goes into a bounded queue that
the connection's writer task drains. A client that does not read fills its queue and is
disconnected with ``slow_reader``; nobody ever waits for it. ``kick`` sends one last error frame
and ends the connection.
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING, Any

import trio
from tongits.protocol import Codec, ErrorCode, error_message

if TYPE_CHECKING:
    from .actor import Table

log = logging.getLogger("tongits.server")

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
    ):
        self.id = next(_ids)
        self.stream = stream
        self.codec = codec
        self.address = address
        self.host = address.rsplit(":", 1)[0]
        self.rate, self.burst = rate, burst
        self._tokens = float(burst)
        self._refilled = trio.current_time()
        self.name: str | None = None
        self.kind: str = "human"
        self.table: Table | None = None
        self.seat: int | None = None
        self.token: str | None = None
        self.closed = False
        self._queue_send, self._queue = trio.open_memory_channel[dict[str, Any]](queue_size)
        self._final: dict[str, Any] | None = None
        self._drop = False
        self._write_scope = trio.CancelScope()
        self.sent = 0

    def __repr__(self) -> str:
        return f"<peer {self.id} {self.name or '?'}@{self.address}>"

    @property
    def hello_done(self) -> bool:
        return self.name is not None

    def take_token(self) -> bool:
        """Token bucket: whether one more message is within ``rate`` per second on average
        with bursts up to ``burst`` (always true when ``rate`` is 0)."""
        if self.rate <= 0:
            return True
        now = trio.current_time()
        self._tokens = min(self.burst, self._tokens + (now - self._refilled) * self.rate)
        self._refilled = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def send(self, msg: dict[str, Any]) -> None:
        """Queue ``msg`` for the peer; a full queue disconnects it as a slow reader."""
        if self.closed:
            return
        try:
            self._queue_send.send_nowait(msg)
        except trio.WouldBlock:
            log.warning("%r: outgoing queue full, disconnecting", self)
            self.kick(ErrorCode.SLOW_READER, "too many unread messages", flush=False)
            self._write_scope.cancel()  # it is not reading: nothing more will reach it

    def kick(self, code: str, message: str, ref: int | str | None = None, *,
             flush: bool = True) -> None:
        """End the connection with one last ``error`` frame. With ``flush`` what is already
        queued goes first; without, what is not yet being written is dropped. Either way the
        writer gets ``FINAL_FRAME_GRACE`` to finish: a peer that does not read in that time
        (a slow reader) is closed without the frame."""
        if self.closed:
            return
        self.closed = True
        self._final = error_message(code, message, ref)
        self._drop = not flush
        self._queue_send.close()
        self._write_scope.deadline = trio.current_time() + FINAL_FRAME_GRACE

    def finish(self) -> None:
        """End the connection after everything already queued has been written."""
        if not self.closed:
            self.closed = True
            self._queue_send.close()

    async def run_writer(self) -> None:
        """Write queued messages, batching whatever is ready, until the queue is closed; then the
        final error frame, unless a cancelled write left half a frame on the stream."""
        encode = self.codec.encode
        torn = False
        with self._write_scope:
            async for msg in self._queue:
                if self._drop:
                    break
                batch = [encode(msg)]
                while True:
                    try:
                        batch.append(encode(self._queue.receive_nowait()))
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                torn = True
                await self.stream.send_all(b"".join(batch) if len(batch) > 1 else batch[0])
                torn = False
                self.sent += len(batch)
        if self._final is not None and not torn:
            with trio.move_on_after(FINAL_FRAME_GRACE):
                await self.stream.send_all(encode(self._final))
