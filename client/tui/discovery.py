"""Finding servers on the LAN by UDP broadcast (both sides optional).

A client broadcasts one datagram ``{"type": "discover", "version": 1}`` (JSON) to the discovery
port (by default 7777, the same number as the TCP port). A server that runs ``serve_discovery``
answers the sender with ``{"type": "server", "version": 1, "name": …, "port": TCP port,
"tables": n}``. Nothing else is sent and unknown datagrams are ignored, so the responder is
safe to leave running; it is a small Trio task the server (or ``tongits play``) may start.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

DISCOVERY_PORT = 7777
VERSION = 1
QUERY = json.dumps({"type": "discover", "version": VERSION}).encode()


@dataclass(frozen=True, slots=True)
class Found:
    host: str
    port: int
    name: str
    tables: int | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def answer(data: bytes, *, name: str, port: int, tables: int | None = None) -> bytes | None:
    """The reply to one datagram, or ``None`` if it is not a discovery query (pure)."""
    try:
        query = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(query, dict) or query.get("type") != "discover":
        return None
    reply: dict[str, Any] = {"type": "server", "version": VERSION, "name": name, "port": port}
    if tables is not None:
        reply["tables"] = tables
    return json.dumps(reply).encode()


async def serve_discovery(
    *,
    name: str,
    port: int,
    host: str = "0.0.0.0",
    udp_port: int = DISCOVERY_PORT,
    tables: Callable[[], int] | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer discovery queries on ``udp_port`` until cancelled; reports the bound UDP port."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    with sock:
        sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEADDR, 1)
        await sock.bind((host, udp_port))
        task_status.started(sock.getsockname()[1])
        while True:
            data, sender = await sock.recvfrom(2048)
            reply = answer(data, name=name, port=port, tables=tables() if tables else None)
            if reply is not None:
                await sock.sendto(reply, sender)


def discover(
    port: int = DISCOVERY_PORT,
    timeout: float = 1.5,
    targets: tuple[str, ...] = ("255.255.255.255", "127.0.0.1"),
) -> list[Found]:
    """Broadcast a query and collect the answers that arrive within ``timeout`` seconds."""
    found: dict[tuple[str, int], Found] = {}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        for target in targets:
            try:
                sock.sendto(QUERY, (target, port))
            except OSError:
                continue
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                data, (host, _) = sock.recvfrom(2048)
            except (TimeoutError, OSError):
                break
            try:
                reply = json.loads(data.decode())
                tcp = int(reply["port"])
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                continue
            if reply.get("type") == "server":
                tables = reply.get("tables")
                found[(host, tcp)] = Found(
                    host,
                    tcp,
                    str(reply.get("name", "?")),
                    tables if isinstance(tables, int) else None,
                )
    return sorted(found.values(), key=lambda f: (f.host, f.port))


def print_servers(port: int = DISCOVERY_PORT, timeout: float = 1.5) -> int:
    """``tongits discover``: one line per server found; exit status 1 if none."""
    servers = discover(port, timeout)
    if not servers:
        print(f"no Tongits server answered on UDP port {port} within {timeout:g} s")
        return 1
    for s in servers:
        tables = f"  {s.tables} tables" if s.tables is not None else ""
        print(f"{s.address:<22} {s.name}{tables}    tongits connect {s.address} --name NAME")
    return 0
