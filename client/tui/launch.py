"""The sub-commands that open a screen: ``play`` (an embedded server with bots), ``connect``
(a remote server, through the lobby) and ``discover`` (servers on the LAN).

``play`` is the only place in the client that imports ``tongits.server``: the server runs in
the same Trio guest run as the client's connection, on a free loopback port.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from typing import Any

import trio

from ..connection import Connection as Conn
from .app import TableScreen
from .net import NetSession
from .session import FakeSession, Session


def quiet_logging() -> None:
    """Keep log lines off the full screen: to the file $TONGITS_LOG if set, else nowhere."""
    path = os.environ.get("TONGITS_LOG")
    handler: logging.Handler = logging.FileHandler(path) if path else logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if path else logging.CRITICAL)


def run_screen(session: Session) -> int:
    """Show the table screen until quit; the terminal is restored on every exit path."""
    quiet_logging()
    asyncio.run(TableScreen(session).run())
    return 0


def play(
    *,
    name: str = "You",
    bots: int = 2,
    timer: float = 0.0,
    options: dict[str, Any] | None = None,
    bot_policy: str = "greedy",
    bot_delay: float = 0.8,
    listen: str = "127.0.0.1",
    offline: bool = False,
    seed: int | str | None = None,
) -> int:
    """One command, one game: a server in this process, ``bots`` server bots, our seat."""
    if offline:
        from tongits.engine import Options

        return run_screen(
            FakeSession(
                names=(name, "Bot 1", "Bot 2"),
                options=Options.from_dict(options),
                seed=seed if seed is not None else secrets.token_hex(4),
                bot_delay=bot_delay,
                timer=timer or None,
            )
        )

    async def embedded_server(nursery: trio.Nursery) -> tuple[str, int]:
        from tongits.server.app import Server
        from tongits.server.config import ServerConfig

        config = ServerConfig(
            host=listen,
            port=0,
            name=f"tongits play on {socket.gethostname()}",
            timer=timer,
            bot_delay=bot_delay,
            bot_policy=bot_policy,
            log_level="WARNING",
        )
        server = Server(config)
        listeners = await nursery.start(server.serve)
        return "127.0.0.1", listeners[0].socket.getsockname()[1]

    async def sit_down(conn: Conn) -> None:
        await conn.create_table("play", options=options or {}, timer=timer, bots=bots)

    return run_screen(NetSession("127.0.0.1", 0, name=name, join=sit_down, prelude=embedded_server))


def parse_options(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a table-options map: true/false and integers are typed."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"tongits: option {item!r} is not KEY=VALUE")
        value: Any = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        elif raw.isdigit():
            value = int(raw)
        out[key.strip()] = value
    return out


def main(args: Any) -> int:
    """Dispatch of ``tongits play | connect | discover`` (argparse namespace from cli.py)."""
    if args.command == "play":
        options = parse_options(args.option)
        from tongits.engine import Options, RecordError

        try:
            Options.from_dict(options)
        except RecordError as error:
            raise SystemExit(f"tongits play: {error.message}") from None
        return play(
            name=args.name,
            bots=args.bots,
            timer=args.timer,
            options=options,
            bot_policy=args.policy,
            bot_delay=args.bot_delay,
            listen=args.listen,
            offline=args.offline,
        )
    if args.command == "connect":
        from .lobby import connect

        return connect(args.address, args.name, tls=args.tls, password_file=args.password_file)
    if args.command == "trust":
        from .dial import trust

        return trust(args.address, args.fingerprint)
    if args.command == "discover":
        from .discovery import print_servers

        return print_servers(port=args.port, timeout=args.timeout)
    return 2
