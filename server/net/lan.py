"""This machine's address on its LAN: what the server prints and invite links give to friends
when it listens on every address (``--host 0.0.0.0``).

A phone types or taps this address, and most phones resolve no bare machine name, so an
address is found whenever the machine has one: the source address of its route out; on a LAN
with no route out (a party's switch, a router without an uplink, network namespaces), the
address of an interface that is up; the machine's name only when neither exists.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import struct
import sys
from collections.abc import Iterator

#: Linux's ioctl requests for an interface's flags and its IPv4 address, and the "up" flag.
_SIOCGIFFLAGS, _SIOCGIFADDR, _IFF_UP = 0x8913, 0x8915, 0x1


def is_wildcard(host: str) -> bool:
    """Whether a server listening on ``host`` listens on every address of the machine."""
    return host in ("0.0.0.0", "::", "")


def friends_host(listening: str) -> str:
    """How another machine on the LAN reaches a server listening on every address of
    ``listening``'s family: this machine's LAN address (``lan_address``), else its name. A
    listener on ``::`` takes IPv6 alone (Trio sets ``IPV6_V6ONLY``): its name, then."""
    address = lan_address() if listening != "::" else None
    return address or socket.gethostname()


def lan_address() -> str | None:
    """This machine's IPv4 address on its network, not loopback: the source address of its
    route out, found without sending anything (connecting a UDP socket only chooses a route and
    the address it leaves from); with no route out, the first address of an interface that is
    up; None with neither."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # (TEST-NET-1: an address no host has)
            address: str | None = probe.getsockname()[0]
        except OSError:
            address = None
    if address is None or ipaddress.ip_address(address).is_loopback:
        address = next(_interface_addresses(), None)
    return address


def _interface_addresses() -> Iterator[str]:
    """The IPv4 addresses of this machine's interfaces that are up, loopback's left out, in
    the kernel's order of interfaces (Linux; elsewhere none)."""
    if not sys.platform.startswith("linux"):
        return
    import fcntl  # (Unix only: this module is imported on Windows too)

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            with contextlib.suppress(OSError):
                flags = struct.unpack_from("H", fcntl.ioctl(probe, _SIOCGIFFLAGS, request), 16)[0]
                if flags & _IFF_UP:
                    address = socket.inet_ntoa(fcntl.ioctl(probe, _SIOCGIFADDR, request)[20:24])
                    if not ipaddress.ip_address(address).is_loopback:
                        yield address
