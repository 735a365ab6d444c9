"""Where a paced action's latency accrues (bench/server_load.py ``--trace``).

A (b) action's time, as its client measures it, is split at four stamps, each taken on one
clock (``CLOCK_REALTIME``, in ns) by whoever holds the bytes at that moment:

* the move reaches the server's socket (the kernel's receive stamp, ``SO_TIMESTAMPNS``),
* the server reads it (after the loop woke its reader),
* the server hands the answer to its socket (the first frame written to that connection
  after the read: the state showing the move, once its batch is committed),
* the answer reaches the client's socket (the kernel's receive stamp again),

and the client's own moment of handling the state (its task resumed). So a tail is seen
where it is: in the server's loop before it read the move (``server_wait``), in the server's
work and its end-of-round commit (``server_work``), or in the bench's client process
(``client_queue``: the answer was in its socket and the client had not got to it). The
stamps are taken in the server by wrapping ``Peer``'s read and write (``trace_server``), in
the child process of the bench only; the client side reads its sockets with ``recvmsg``.
Each connection's ``TCP_NODELAY`` is checked too (Nagle's delay would add up to 40 ms).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import struct
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

#: Linux's ``SO_TIMESTAMPNS`` (its control message has the same number): the kernel stamps
#: each received packet, and ``recvmsg`` hands the stamp of the data it returns
SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@ll")
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size)


def stamped_socket(fd: int) -> socket.socket:
    """A socket object on the same connection as ``fd`` (a duplicate descriptor: closing it
    leaves ``fd`` open), with the kernel's receive stamps turned on."""
    sock = socket.socket(fileno=os.dup(fd))
    sock.setblocking(False)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    return sock


def receive_stamped(sock: socket.socket, size: int) -> tuple[bytes, int]:
    """``recv`` with the kernel's receive stamp (ns) of what it returned (0 if none came)."""
    data, ancillary, _, _ = sock.recvmsg(size, _ANCILLARY)
    stamp = 0
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanos = _TIMESPEC.unpack(payload[:_TIMESPEC.size])
            stamp = seconds * 1_000_000_000 + nanos
    return data, stamp


def nodelay(sock: socket.socket | trio.socket.SocketType) -> bool:
    return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


class _LoopCount(trio.abc.Instrument):
    """How often Trio's loop runs a task step and passes through its I/O wait (one pass
    wakes every task whose socket became readable): what an action costs the scheduler."""

    def __init__(self) -> None:
        self.steps = self.passes = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps += 1

    def before_io_wait(self, timeout: float) -> None:
        self.passes += 1


class _ServerStamps:
    """The stamps of one server process (``trace_server``): per request, (arrived, read,
    written) in ns, how many of its sockets have ``TCP_NODELAY``, and its loop's task steps
    and passes so far."""

    def __init__(self) -> None:
        self.loop = _LoopCount()
        self.rows: list[tuple[int, int, int]] = []
        self.sockets = self.nodelay = 0
        self._stamped: dict[int, socket.socket] = {}
        #: per connection, (arrived, read) of the request read and not yet answered
        self._pending: dict[int, tuple[int, int]] = {}

    def socket_of(self, peer: int, fd: int) -> socket.socket:
        sock = self._stamped.get(peer)
        if sock is None:
            sock = self._stamped[peer] = stamped_socket(fd)
            self.sockets += 1
            self.nodelay += nodelay(sock)
        return sock

    def read(self, peer: int, data: bytes, arrived: int) -> None:
        if not data:
            self._stamped.pop(peer).close()
        elif peer not in self._pending:
            self._pending[peer] = (arrived, time.time_ns())

    def written(self, peer: int) -> None:
        got = self._pending.pop(peer, None)
        if got is not None:
            self.rows.append((*got, time.time_ns()))

    def dump(self, path: str) -> None:
        with open(path + ".part", "w") as f:
            json.dump({"rows": self.rows, "sockets": self.sockets, "nodelay": self.nodelay,
                       "steps": self.loop.steps, "passes": self.loop.passes}, f)
        os.replace(path + ".part", path)


def trace_server(path: str) -> Callable[[], Awaitable[None]]:
    """Stamp every connection's reads and first writes after them in this (server) process;
    on ``SIGUSR1`` the stamps so far go to ``path`` as JSON. Returns the task that waits for
    the signal."""
    from tongits.server.net.peer import Peer

    stamps = _ServerStamps()
    receive, push = Peer._receive_bytes, Peer._push

    async def _receive_bytes(self: Peer) -> bytes | bytearray:
        trio_sock = self._socket
        if trio_sock is None:
            return await receive(self)
        sock = stamps.socket_of(self.id, trio_sock.fileno())
        while True:
            await trio.lowlevel.wait_readable(trio_sock)
            try:
                data, arrived = receive_stamped(sock, 65536)
            except BlockingIOError:
                continue
            except OSError:
                return b""
            stamps.read(self.id, data, arrived)
            return data

    def _push(self: Peer, data: bytes) -> bool:
        stamps.written(self.id)
        return push(self, data)

    Peer._receive_bytes = _receive_bytes  # type: ignore[method-assign]
    Peer._push = _push  # type: ignore[method-assign]

    async def dump_on_signal() -> None:
        trio.lowlevel.add_instrument(stamps.loop)
        with trio.open_signal_receiver(signal.SIGUSR1) as signals:
            async for _ in signals:
                stamps.dump(path)

    return dump_on_signal


def server_stamps(pid: int, path: str) -> dict[str, Any]:
    """Ask the server process ``pid`` for its stamps (``trace_server``) and read them."""
    os.kill(pid, signal.SIGUSR1)
    for _ in range(200):
        if os.path.exists(path):
            with open(path) as f:
                got: dict[str, Any] = json.load(f)
            os.unlink(path)
            return got
        time.sleep(0.05)
    raise RuntimeError("the server did not write its stamps")


def summary(client_rows: list[tuple[int, int, int]], server: dict[str, Any],
            window: tuple[int, int], client_nodelay: bool,
            before: dict[str, Any]) -> dict[str, Any]:
    """p50/p99 (µs) of each part of an action's time: ``client_rows`` are (sent, arrived,
    handled) per timed action, the server's rows (arrived, read, written) per request, those
    whose move arrived within ``window`` (ns) only. ``before``: the server's stamps at the
    window's start, for its loop's task steps and passes per request answered since."""
    start, end = window
    rows = [row for row in server["rows"] if start <= row[0] <= end]
    parts = {
        "server_wait": [read - arrived for arrived, read, _ in rows],
        "server_work": [written - read for _, read, written in rows],
        "to_client_kernel": [arrived - sent for sent, arrived, _ in client_rows if arrived],
        "client_queue": [handled - arrived for _, arrived, handled in client_rows if arrived],
        "client_total": [handled - sent for sent, _, handled in client_rows],
    }
    out: dict[str, Any] = {}
    for name, values in parts.items():
        values.sort()
        out[name] = {"p50": _quantile(values, 0.5), "p99": _quantile(values, 0.99),
                     "mean": round(statistics.fmean(values) / 1e3, 1) if values else None}
    answered = max(1, len(server["rows"]) - len(before["rows"]))
    out["task_steps_per_request"] = round((server["steps"] - before["steps"]) / answered, 2)
    out["loop_passes_per_request"] = round((server["passes"] - before["passes"]) / answered, 3)
    out["server_sockets_nodelay"] = f"{server['nodelay']}/{server['sockets']}"
    out["client_nodelay"] = client_nodelay
    return out


def _quantile(ordered: list[int], q: float) -> float | None:
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e3, 1)


def describe(parts: dict[str, Any]) -> str:
    """One line of ``summary``."""
    said = [f"{name} {parts[name]['p50']}/{parts[name]['p99']}" for name in (
        "server_wait", "server_work", "to_client_kernel", "client_queue", "client_total")]
    return (f"p50/p99 µs: {', '.join(said)}; per request answered, the server's loop took "
            f"{parts['task_steps_per_request']} task steps in "
            f"{parts['loop_passes_per_request']} passes; TCP_NODELAY on "
            f"{parts['server_sockets_nodelay']} server sockets, on the clients' "
            f"{'yes' if parts['client_nodelay'] else 'no'}")
