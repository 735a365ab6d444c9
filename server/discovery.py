"""The server's answer to LAN discovery (protocol/discovery.py): a small UDP responder task."""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio
from tongits.protocol.discovery import answer

log = logging.getLogger("tongits.server")


async def serve_discovery(
    *,
    name: str,
    port: int,
    host: str = "0.0.0.0",
    udp_port: int | None = None,
    tables: Callable[[], int] | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer discovery queries on ``udp_port`` (default: the TCP ``port``'s number) until
    cancelled; ``task_status`` gets the bound UDP port. Bound to ``host``, so a server that
    listens on loopback only is found only from this machine."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    with sock:
        sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEADDR, 1)
        await sock.bind((host, port if udp_port is None else udp_port))
        task_status.started(sock.getsockname()[1])
        while True:
            data, sender = await sock.recvfrom(2048)
            reply = answer(data, name=name, port=port, tables=tables() if tables else None)
            if reply is not None:
                await sock.sendto(reply, sender)


async def answer_discovery(name: str, host: str, port: int, tables: Callable[[], int]) -> None:
    """``serve_discovery`` as a best-effort extra: a busy UDP port is logged, not fatal."""
    try:
        await serve_discovery(name=name, host=host, port=port, tables=tables)
    except OSError as error:
        log.warning("LAN discovery not answered on UDP %s:%d: %s", host, port, error)
