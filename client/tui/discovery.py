"""``tongits discover``: find servers on the LAN by UDP broadcast (protocol/discovery.py)."""

from __future__ import annotations

import socket
import time

from tongits.protocol.discovery import DISCOVERY_PORT, QUERY, ServerAnnouncement, read_answer

from .words import counted


def discover(
    port: int = DISCOVERY_PORT,
    timeout: float = 1.5,
    targets: tuple[str, ...] = ("255.255.255.255", "127.0.0.1"),
) -> list[ServerAnnouncement]:
    """Broadcast a query and collect the answers that arrive within ``timeout`` seconds."""
    found: dict[tuple[str, int], ServerAnnouncement] = {}
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
            except OSError:
                break
            server = read_answer(data, host)
            if server is not None:
                found[(server.host, server.port)] = server
    return sorted(found.values(), key=lambda f: (f.host, f.port))


def print_servers(port: int = DISCOVERY_PORT, timeout: float = 1.5) -> int:
    """One line per server found; exit status 1 if none."""
    servers = discover(port, timeout)
    if not servers:
        print(f"no Tongits server answered on UDP port {port} within {timeout:g} s")
        return 1
    for s in servers:
        tables = f"  {counted(s.tables, 'table')}" if s.tables is not None else ""
        tls = f"  TLS {s.tls}" if s.tls else ""
        print(f"{s.address:<28} {s.name}{tables}{tls}    "
              f"tongits connect {s.address} --name NAME")
    return 0
