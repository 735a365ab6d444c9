"""A browser's side of the server's port without a browser: raw HTTP requests and a WebSocket
client (wsproto) speaking the protocol's text mode, over any Trio stream.

No test lives here; the tests (and bench/web.py) import these helpers.
"""

from __future__ import annotations

import json
from typing import Any

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Message,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)


class WebSocketRefused(Exception):
    """The server answered the upgrade with an HTTP status (``status``) instead of 101."""

    def __init__(self, status: int) -> None:
        super().__init__(f"upgrade refused with {status}")
        self.status = status


async def read_response(stream: trio.abc.Stream) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data


class WebSocketClient:
    """The protocol's text mode over a WebSocket: ``send`` a message map, ``receive`` the next
    one (None once the server closed); ``frames`` keeps every text frame received."""

    def __init__(self, stream: trio.abc.Stream, ws: WSConnection) -> None:
        self.stream = stream
        self._ws = ws
        self._inbox: list[str] = []
        self._partial = ""
        self.closed = False
        self.close_code: int | None = None
        self.frames: list[str] = []

    @classmethod
    async def open(cls, stream: trio.abc.Stream, host: str = "127.0.0.1",
                   origin: str | None = None, path: str = "/ws") -> WebSocketClient:
        ws = WSConnection(ConnectionType.CLIENT)
        extra = [(b"Origin", origin.encode())] if origin is not None else []
        await stream.send_all(ws.send(Request(host=host, target=path, extra_headers=extra)))
        client = cls(stream, ws)
        while True:
            data = await stream.receive_some(65536)
            if not data:
                raise WebSocketRefused(0)
            ws.receive_data(bytes(data))
            for event in ws.events():
                if isinstance(event, AcceptConnection):
                    return client
                if isinstance(event, RejectConnection):
                    raise WebSocketRefused(event.status_code)
                if isinstance(event, RejectData):
                    continue
                client._take(event)

    def _take(self, event: object) -> None:
        if isinstance(event, TextMessage):
            self._partial += event.data
            if event.message_finished:
                self.frames.append(self._partial)
                self._inbox.append(self._partial)
                self._partial = ""
        elif isinstance(event, CloseConnection):
            self.closed = True
            self.close_code = event.code

    async def send(self, msg: dict[str, Any]) -> None:
        await self.send_text(json.dumps(msg))

    async def send_text(self, text: str) -> None:
        await self.stream.send_all(self._ws.send(Message(data=text)))

    async def send_raw(self, event: object) -> None:
        """Any wsproto event (a binary message, a ping)."""
        await self.stream.send_all(self._ws.send(event))  # type: ignore[arg-type]

    async def receive(self) -> dict[str, Any] | None:
        while not self._inbox:
            if self.closed:
                return None
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self.closed = True
                return None
            self._ws.receive_data(bytes(data))
            for event in self._ws.events():
                self._take(event)
        msg: dict[str, Any] = json.loads(self._inbox.pop(0))
        return msg

    async def receive_type(self, kind: str) -> dict[str, Any]:
        """Skip messages until one of ``type`` ``kind``; AssertionError if the server closes
        first."""
        while True:
            msg = await self.receive()
            assert msg is not None, f"closed before a {kind}"
            if msg["type"] == kind:
                return msg
