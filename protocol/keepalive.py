"""Noticing a peer that went silent without closing: a friend's Wi-Fi drops, a laptop sleeps.

TCP says nothing when a link dies quietly: the connection stays established, what is written
waits unacknowledged in the kernel, retransmitted with a backoff that reaches minutes, and a
side that only reads waits forever. Two things shorten that, on both sides of a connection:

* ``dead_peer_options``: the kernel's own check. ``TCP_USER_TIMEOUT`` (Linux) closes the
  connection when sent data stays unacknowledged for that long; keepalive probes
  (``SO_KEEPALIVE`` with ``TCP_KEEPIDLE``/``TCP_KEEPINTVL``/``TCP_KEEPCNT``) close an idle one
  whose peer answers none. Either way the next read fails and the connection ends as if closed.
* The heartbeat of ``hello`` (since 1.1): the client promises a message at least every
  ``heartbeat`` seconds (a ``ping``) and the server treats it as gone after ``HEARTBEAT_MISSES``
  periods of silence; the client treats the server as gone when a ``ping`` gets no ``pong``
  within ``PONG_WAIT`` periods. This one also works where the kernel's cannot see (a TLS
  terminator, a proxy that keeps its own TCP connection alive).
"""

from __future__ import annotations

import contextlib
import socket
from typing import Protocol

#: The heartbeat the client of this package says in ``hello``: a ``ping`` every 10 s.
DEFAULT_HEARTBEAT = 10.0
#: The heartbeats a client may say in ``hello``, in seconds (outside: ``bad_field``).
MIN_HEARTBEAT, MAX_HEARTBEAT = 1.0, 300.0
#: Periods of silence after which the server treats a heartbeat client as gone.
HEARTBEAT_MISSES = 3
#: Periods a client waits for the ``pong`` of its ``ping`` before it treats the server as
#: gone (with the ``ping`` sent every period, a silent server is noticed within 3 periods).
PONG_WAIT = 2
#: Keepalive probes unanswered before the kernel gives a connection up.
KEEPALIVE_PROBES = 3
#: The kernel's check on both sides by default: a dead peer is noticed within about 20 s.
DEFAULT_DEAD_PEER_TIMEOUT = 20.0


class OptionSocket(Protocol):
    """What ``dead_peer_options`` needs of a socket (a ``socket.socket`` or a Trio socket)."""

    def setsockopt(self, level: int, optname: int, value: int, /) -> None: ...


def keepalive_settings(timeout: float) -> dict[str, int]:
    """The options for ``timeout``, by name: probes start after half of it, and the probes
    (``KEEPALIVE_PROBES`` of them) take the other half; ``TCP_USER_TIMEOUT`` is in ms."""
    idle = max(1, round(timeout / 2))
    interval = max(1, round(timeout / (2 * KEEPALIVE_PROBES)))
    return {
        "TCP_KEEPIDLE": idle,
        "TCP_KEEPINTVL": interval,
        "TCP_KEEPCNT": KEEPALIVE_PROBES,
        "TCP_USER_TIMEOUT": max(1, round(timeout * 1000)),
    }


def dead_peer_options(sock: OptionSocket, timeout: float) -> None:
    """Have the kernel close ``sock`` when its peer stays silent about ``timeout`` seconds
    (0: leave the system's defaults). Options the platform lacks are skipped (macOS names
    ``TCP_KEEPIDLE`` ``TCP_KEEPALIVE`` and has no ``TCP_USER_TIMEOUT``); a socket that refuses
    one (not TCP, already closed) keeps the others."""
    if timeout <= 0:
        return
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in keepalive_settings(timeout).items():
        option = getattr(socket, name, None)
        if option is None and name == "TCP_KEEPIDLE":
            option = getattr(socket, "TCP_KEEPALIVE", None)
        if option is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, option, value)
