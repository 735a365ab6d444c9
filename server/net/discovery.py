"""The server's answer to LAN discovery (protocol/discovery.py): a small UDP responder task."""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio
from tongits.protocol.discovery import answer

log = logging.getLogger("tongits.server")


async def _answer(
    sock: trio.socket.SocketType, *, name: str, port: int, tables: Callable[[], int] | None,
    tls: str | None = None,
) -> None:
    """Answer queries on the bound ``sock`` until cancelled, then close it. The socket is not
    shared (no SO_REUSEADDR): another socket on the port could take our queries."""
    with sock:
        while True:
            try:
                data, sender = await sock.recvfrom(2048)
                reply = answer(data, name=name, port=port,
                               tables=tables() if tables else None, tls=tls)
                if reply is not None:
                    await sock.sendto(reply, sender)
            except OSError as error:
                # e.g. ECONNREFUSED: a port we answered before was closed (ICMP); nothing to do
                log.debug("LAN discovery: %s", error)


async def answer_discovery(
    name: str,
    host: str,
    port: int,
    tables: Callable[[], int],
    tls: str | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer discovery queries on UDP ``host:port`` (the TCP listener's address and port
    number) until cancelled; ``tls`` (``optional`` or ``required``) is announced. Best effort:
    a busy UDP port is logged, not fatal. Started with ``nursery.start``, it reports once the
    socket is bound (or could not be), so a query sent after the server is up is answered."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    try:
        await sock.bind((host, port))
    except OSError as error:
        sock.close()
        log.warning("LAN discovery not answered on UDP %s:%d: %s", host, port, error)
        task_status.started()
        return
    task_status.started()
    await _answer(sock, name=name, port=port, tables=tables, tls=tls)
