"""LAN discovery datagrams (sans-IO): how ``tongits discover`` finds servers.

A client broadcasts one UDP datagram, ``{"type": "discover", "version": 1}`` as JSON, to the
server's port number (default 7777: the UDP port has the same number as the TCP port). A server
answers the sender with ``{"type": "server", "version": 1, "name": …, "port": TCP port,
"tables": n}``, plus ``"tls": "optional"`` or ``"required"`` when the server speaks TLS on
that port. Anything else is ignored, so a responder is safe to leave running.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DISCOVERY_PORT = 7777
DISCOVERY_VERSION = 1
QUERY = json.dumps({"type": "discover", "version": DISCOVERY_VERSION}).encode()


@dataclass(frozen=True, slots=True)
class ServerAnnouncement:
    """A server's answer as a client reads it (``host`` is where the datagram came from)."""

    host: str
    port: int
    name: str
    tables: int | None = None
    tls: str | None = None

    @property
    def address(self) -> str:
        """The address to connect to: ``tls://HOST:PORT`` when the server speaks TLS."""
        return f"{'tls://' if self.tls else ''}{self.host}:{self.port}"


def _json_map(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def answer(
    data: bytes, *, name: str, port: int, tables: int | None = None, tls: str | None = None
) -> bytes | None:
    """The server's reply to one datagram, or ``None`` if it is not a discovery query."""
    query = _json_map(data)
    if query is None or query.get("type") != "discover":
        return None
    reply: dict[str, Any] = {
        "type": "server",
        "version": DISCOVERY_VERSION,
        "name": name,
        "port": port,
    }
    if tables is not None:
        reply["tables"] = tables
    if tls is not None:
        reply["tls"] = tls
    return json.dumps(reply).encode()


def read_answer(data: bytes, host: str) -> ServerAnnouncement | None:
    """A server's answer received from ``host``, or ``None`` if the datagram is not one."""
    reply = _json_map(data)
    if reply is None or reply.get("type") != "server":
        return None
    port = reply.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        return None
    tables = reply.get("tables")
    tls = reply.get("tls")
    return ServerAnnouncement(
        host,
        port,
        str(reply.get("name", "?")),
        tables if isinstance(tables, int) and not isinstance(tables, bool) else None,
        tls if tls in ("optional", "required") else None,
    )
