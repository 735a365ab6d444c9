"""The benchmarks' client of the protocol's text mode: one JSON object per line over a stream.

``bench/web.py`` plays tables with it beside the page's WebSocket client, and
``bench/hostile.py`` greets, pings and plays through it while its attackers run. A benchmark
client, not the SDK's: it decodes nothing into typed messages, so what it measures is the
server's side. A connection that breaks or ends is ``None`` from ``receive``, never an error.
"""

from __future__ import annotations

import json
from typing import Any

import trio


class LineClient:
    """Text mode over a stream: ``send`` a map, ``receive`` the next one (None at the end)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self._buffer = b""

    async def send(self, msg: dict[str, Any]) -> None:
        await self.stream.send_all(json.dumps(msg).encode() + b"\n")

    async def receive(self) -> dict[str, Any] | None:
        while b"\n" not in self._buffer:
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            if not data:
                return None
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def receive_type(self, kind: str) -> dict[str, Any] | None:
        """The next message of type ``kind`` or an ``error`` (None at the end)."""
        while (msg := await self.receive()) is not None:
            if msg.get("type") in (kind, "error"):
                return msg
        return None
