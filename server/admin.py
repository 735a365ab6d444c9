"""The host's control channel: ``tongits-server status``, ``close TABLE``, ``remove PLAYER``.

A running ``tongits-server`` listens on a Unix socket, ``DATA_DIR/admin.sock``, made readable
and writable by its owner only (0600, in a 0700 directory): only the same user on the same
machine (and root) can reach it; nothing of it is on the network. One JSON line in, one JSON
line out:

* ``{"command": "status"}`` → uptime, connections, TLS fingerprint, database size, every table
  (its lobby entry), every connection (name, address, table, seat) and the ladder (accounts,
  anchors among them, queued players, matches rated and being played);
* ``{"command": "close", "table": "t3"}`` → everyone at the table gets ``closed_by_host`` and the
  table closes for good;
* ``{"command": "remove", "player": "Ana"}`` (a name, or a connection number) → the player
  loses the seat for good (a bot plays it out), and the connection gets ``removed_by_host``.

The answer is ``{"ok": true, …}`` or ``{"ok": false, "error": "…"}``.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from tongits.protocol import ErrorCode, ProtocolError
from tongits.protocol.phrases import counted

from .table.requests import HostClose, HostRemove

if TYPE_CHECKING:
    from .app import Server

log = logging.getLogger("tongits.server")

SOCKET_NAME = "admin.sock"
MAX_REQUEST = 4096


class AdminError(Exception):
    """The admin socket cannot be reached or answered an error; ``str()`` says which."""


async def serve_admin(
    server: Server,
    directory: Path,
    task_status: trio.TaskStatus[Path | None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer admin requests on ``directory/admin.sock`` until cancelled. A socket another
    live server answers on is left alone (that server keeps it; this one has none)."""
    path = directory / SOCKET_NAME
    try:
        if not _claim(path):
            log.warning("another server answers on %s: no admin socket for this one (to "
                        "manage both, start this one with a --data-dir of its own and give "
                        "`tongits-server status` the same)", path)
            task_status.started(None)
            return
        sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            await sock.bind(str(path))
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        sock.listen(8)
    except OSError as error:
        log.warning("no admin socket at %s: %s", path, error)
        task_status.started(None)
        return
    log.info("admin socket %s (tongits-server status)", path)
    listener = trio.SocketListener(sock)
    task_status.started(path)
    try:
        async with listener, trio.open_nursery() as nursery:
            while True:
                stream = await listener.accept()
                nursery.start_soon(_serve_one, server, stream)
    finally:
        path.unlink(missing_ok=True)


def _claim(path: Path) -> bool:
    """Make ``path`` free for this server's admin socket (its folder private); False if
    another live server answers on it."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if _alive(path):
        return False
    path.unlink(missing_ok=True)
    return True


def _alive(path: Path) -> bool:
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


async def _serve_one(server: Server, stream: trio.SocketStream) -> None:
    async with stream:
        with trio.move_on_after(5):
            data = b""
            while b"\n" not in data and len(data) < MAX_REQUEST:
                chunk = await stream.receive_some(MAX_REQUEST)
                if not chunk:
                    break
                data += chunk
            try:
                request = json.loads(data.decode("utf-8"))
                if not isinstance(request, dict):
                    raise ValueError("not a JSON object")
                reply = await answer(server, request)
            except (ValueError, UnicodeDecodeError) as error:
                reply = {"ok": False, "error": f"bad request: {error}"}
            with suppress(trio.BrokenResourceError):  # it hung up (a probe by ``_alive``)
                await stream.send_all(json.dumps(reply).encode() + b"\n")


async def answer(server: Server, request: dict[str, Any]) -> dict[str, Any]:
    """The reply to one admin request (also what the tests call)."""
    command = request.get("command")
    if command == "status":
        return {"ok": True, **status(server)}
    if command == "close":
        table = server.lobby.tables.get(str(request.get("table")))
        if table is None:
            return {"ok": False, "error": f"no open table {request.get('table')!r}"}
        await table.call(None, HostClose())
        return {"ok": True, "closed": table.id}
    if command == "remove":
        wanted = str(request.get("player"))
        peers = [p for p in server.peers if p.name == wanted or str(p.id) == wanted]
        if not peers:
            return {"ok": False, "error": f"nobody called {wanted!r} is connected"}
        for peer in peers:
            link = peer.table
            if link is not None:
                with suppress(ProtocolError):  # the table closed meanwhile
                    await link.call(peer, HostRemove())
            peer.kick(ErrorCode.REMOVED_BY_HOST, "the host removed you from the server")
        return {"ok": True, "removed": [f"{p.name} ({p.address})" for p in peers]}
    return {"ok": False, "error": f"unknown command {command!r} (status, close, remove)"}


def status(server: Server) -> dict[str, Any]:
    config = server.config
    db_bytes = 0
    if config.db != ":memory:":
        for suffix in ("", "-wal", "-shm"):
            with suppress(OSError):  # no such file (yet)
                db_bytes += os.path.getsize(config.db + suffix)
    return {
        "server": config.name,
        "uptime": round(time.monotonic() - server.started, 1),
        "tls": server.tls.fingerprint if server.tls is not None else None,
        "tls_required": config.tls_required,
        "password": server.gate.required,
        "db": config.db,
        "db_bytes": db_bytes,
        "connections": len(server.peers),
        "tables": [t.summary() for t in server.lobby.tables.values() if not t.closed],
        "ladder": {"accounts": server.ladder.accounts,
                   "anchors": len(server.matchmaker.anchors),
                   "queued": len(server.matchmaker.queue), "rated": server.ladder.rated,
                   "playing": len(server.ladder.pending)},
        "players": [
            {"id": p.id, "name": p.name, "kind": p.kind.value, "address": p.address,
             "tls": p.secure, "table": p.table.id if p.table is not None else None,
             "seat": p.seat}
            for p in sorted(server.peers, key=lambda p: p.id)
        ],
    }


def request(directory: Path, message: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """Send one admin request to the server whose data directory is ``directory``."""
    path = directory / SOCKET_NAME
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            sock.sendall(json.dumps(message).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError as error:
            hint = (": is tongits-server running with this --data-dir (or --config)?"
                    if error.errno in (errno.ENOENT, errno.ECONNREFUSED) else "")
            raise AdminError(f"cannot reach {path}: {error.strerror or error}{hint}") from None
    try:
        reply = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise AdminError(f"no answer from {path}") from None
    if not isinstance(reply, dict):
        raise AdminError(f"no answer from {path}")
    if not reply.get("ok"):
        raise AdminError(str(reply.get("error", "refused")))
    return reply


def format_status(reply: dict[str, Any]) -> str:
    """``tongits-server status`` as text for a person."""
    uptime = int(reply.get("uptime", 0))
    hours, rest = divmod(uptime, 3600)
    lines = [
        f"server     {reply.get('server')}  up {hours}h{rest // 60:02d}m{rest % 60:02d}s",
        f"tls        {reply.get('tls') or 'off'}"
        + ("  (required)" if reply.get("tls_required") else ""),
        f"password   {'yes' if reply.get('password') else 'no'}",
        f"database   {reply.get('db')}  {int(reply.get('db_bytes', 0)) / 1e6:.2f} MB",
        f"connected  {reply.get('connections')}",
    ]
    ladder = reply.get("ladder")
    if isinstance(ladder, dict):  # a server older than the ladder's line says none
        lines.append(
            f"ladder     {counted(int(ladder.get('accounts', 0)), 'account')} "
            f"({counted(int(ladder.get('anchors', 0)), 'anchor')}) · "
            f"{ladder.get('queued')} queued · "
            f"{counted(int(ladder.get('rated', 0)), 'match', 'matches')} rated · "
            f"{ladder.get('playing')} in progress")
    tables = reply.get("tables") or []
    lines.append(f"tables     {len(tables)}")
    for t in tables:
        seats = ", ".join(
            f"{s.get('name')}{'*' if s.get('player') == 'bot' else ''}"
            for s in t.get("seats") or [] if isinstance(s, dict) and s.get("name")
        )
        state = f"hand {int(t.get('hands', 0)) + 1}" if t.get("started") else "waiting"
        private = " private" if t.get("private") else ""
        lines.append(f"  {t.get('table'):<6} {str(t.get('name'))[:16]:<16} {state:<8}"
                     f"{private}  {seats}")
    players = reply.get("players") or []
    lines.append(f"players    {len(players)}")
    for p in players:
        where = f"{p.get('table')} seat {p.get('seat')}" if p.get("table") else "lobby"
        lines.append(f"  #{p.get('id'):<5} {str(p.get('name') or '(no hello)'):<16} "
                     f"{p.get('address'):<22} {'tls ' if p.get('tls') else ''}{where}")
    return "\n".join(lines)
