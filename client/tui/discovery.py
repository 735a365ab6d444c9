"""``tongits discover``: find servers on the LAN by UDP broadcast (protocol/discovery.py)."""

from __future__ import annotations

import ipaddress
import socket
import struct
import sys
import time

from tongits.protocol.discovery import DISCOVERY_PORT, QUERY, ServerAnnouncement, read_answer
from tongits.protocol.phrases import counted


def discover(
    port: int = DISCOVERY_PORT,
    timeout: float = 1.5,
    targets: tuple[str, ...] | None = None,
) -> list[ServerAnnouncement]:
    """Broadcast a query and collect the answers that arrive within ``timeout`` seconds.
    ``targets``: where the query goes (default: every network's broadcast address,
    ``255.255.255.255`` and this machine)."""
    if targets is None:
        targets = (*broadcast_addresses(), "255.255.255.255", "127.0.0.1")
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


def broadcast_addresses() -> list[str]:
    """The broadcast address of each IPv4 network this machine is on (Linux: each
    interface's address and netmask; elsewhere none). They reach a LAN where
    ``255.255.255.255`` does not: a machine with no default route (a LAN without a gateway: a
    switch, a router cut off from the internet) sends that nowhere, "network is unreachable",
    and a machine on several networks sends it out of the default one only."""
    if not sys.platform.startswith("linux"):  # (the ioctls' numbers are Linux's)
        return []
    import fcntl
    addresses: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                address, mask = (socket.inet_ntoa(fcntl.ioctl(probe.fileno(), call,
                                                              request)[20:24])
                                 for call in (_SIOCGIFADDR, _SIOCGIFNETMASK))
            except OSError:  # no IPv4 address on it, or not Linux
                continue
            network = ipaddress.IPv4Network(f"{address}/{mask}", strict=False)
            broadcast = str(network.broadcast_address)
            if network.prefixlen < 31 and not network.is_loopback and broadcast not in addresses:
                addresses.append(broadcast)
    return addresses


#: Linux's ioctls for an interface's address and netmask (linux/sockios.h).
_SIOCGIFADDR, _SIOCGIFNETMASK = 0x8915, 0x891B


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
