"""``tongits-server``: run a Tongits server (see docs/HOSTING.md)."""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from dataclasses import fields
from typing import TYPE_CHECKING

import trio

from .admin import serve_admin
from .app import Server
from .collector import Collector
from .config import ServerConfig
from .ladder.ladder import Ladder, ladder_path
from .net.access import load_password
from .net.tls import ServerTLS, TLSSetupError
from .table.bots import policy_names

if TYPE_CHECKING:
    from .storage.store import SQLiteJournal

_HELP = {
    "host": "address to listen on (0.0.0.0 for every interface, e.g. a LAN)",
    "discovery": "answer `tongits discover` on UDP, same port number and address as TCP",
    "port": "TCP port (0 picks a free one)",
    "name": "server name shown to clients",
    "timer": "default seconds per decision for new tables (0 = no timer)",
    "bot_delay": "seconds a server bot waits before it plays",
    "bot_policy": f"default policy of server bots ({', '.join(policy_names())})",
    "grace": "seconds a disconnected player keeps the seat before a server bot stands in",
    "pregame_grace": "seconds a disconnected player keeps the seat of a table whose match has "
    "not started (a table nobody is left at closes then)",
    "db": "SQLite file holding every table's log and hand records (:memory: keeps nothing)",
    "db_sync": "normal (survives a killed server) or full (also a power cut; slower)",
    "skip_damaged": "start on a damaged database: serve the tables whose logs can be read and "
    "name the others in the log (they stay in the file)",
    "max_connections": "most connections at once",
    "max_per_address": "most connections at once from one IP address",
    "rate": "messages per second a connection may send, on average (0 = no limit)",
    "burst": "messages a connection may send at once above the rate",
    "limit_loopback": "apply max_per_address and rate to 127.0.0.1/::1 too (local bots and "
    "benchmarks are exempt by default)",
    "idle_timeout": "seconds a connection away from any table may stay silent (0 = no limit)",
    "dead_peer_timeout": "seconds after which a connection whose peer went silent without "
    "closing (a dropped Wi-Fi) is closed, the player then away (TCP keepalive and user "
    "timeout; 0 = the system's defaults)",
    "max_tables": "most open tables",
    "max_tables_per_address": "most open tables created from one IP address (an IPv6 /64)",
    "max_tables_per_network": "most open tables created from one IPv6 /48",
    "evict_idle": "on a full server, a new table closes the one where no human has moved for "
    "longest, if for at least this many seconds (0 = never)",
    "table_reserve": "share of max_tables kept for creators whose network (an IPv4 /24, an "
    "IPv6 /48) holds no open table (0 = none)",
    "max_frame_size": "largest frame or text line accepted, in bytes",
    "queue_size": "messages queued for a client before it is dropped as a slow reader",
    "queue_bytes": "bytes queued for a client before it is dropped as a slow reader",
    "handshake_timeout": "seconds a new connection may stay silent (between bytes) before hello",
    "frame_timeout": "seconds a frame or line may take from its first byte to its end",
    "chat_max": "longest chat line, in characters",
    "table_rate": "tables a second one IP address may make, in bursts of twice "
    "max_tables_per_address (0 = no limit)",
    "connection_rate": "new connections a second one IP address may open, in bursts of "
    "max_per_address (0 = no limit)",
    "chat_rate": "chat lines a second one address may say at one table (0 = no limit)",
    "chat_burst": "chat lines one address may say at one table at once",
    "name_max": "longest player or table name, in characters",
    "log_level": "DEBUG, INFO, WARNING or ERROR",
    "gc_young": "seconds between collections of young cyclic garbage (short keeps each pause "
    "short)",
    "gc_full": "seconds between full garbage collections (each first counted in a forked "
    "copy of the server and skipped when there is nothing to free; one that runs pauses the "
    "server, 0.2-0.3 s with 1,000 busy tables)",
    "data_dir": "where the server keeps its self-signed certificate and admin socket "
    "(default: ~/.local/share/tongits-server)",
    "tls_cert": "PEM certificate (chain) for TLS on the same port; re-read on SIGHUP",
    "tls_key": "PEM private key of --tls-cert",
    "tls_self_signed": "serve TLS with a certificate made and kept in the data directory",
    "tls_required": "refuse plain (non-TLS) connections with tls_required",
    "password_file": "file whose first line is the server password (or set TONGITS_PASSWORD; "
    "never give a password on the command line)",
    "invite_password": "put the server password in invite links",
    "web": "serve the browser page (HTTP) and the protocol over WebSocket on the same port "
    "(HTTPS and WSS with TLS)",
    "public_address": "HOST[:PORT] friends use to reach this server, for invite links "
    "(default: the address the creator connected to)",
    "web_hosts": "host names browsers may reach this server by, comma-separated, besides IP "
    "addresses, localhost, this machine's name and --public-address's (any other is refused "
    "421: DNS rebinding)",
    "ladder_hands": "hands of a rated ladder match",
    "ladder_anchors": "server bots seeded as ladder accounts (anchor-NAME), comma-separated",
    "ladder_anchor_wait": "seconds a queued player waits for other players before anchors "
    "fill its ladder table",
    "ladder_accounts_per_address": "ladder accounts one address may register in an hour "
    "(loopback is exempt unless --limit-loopback)",
    "ladder_max_accounts": "ladder accounts the server holds at most; register is then refused "
    "with too_many_accounts",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tongits-server",
        description="Host Tongits tables: lobby, seats, timers, server bots, spectators.",
        epilog="Every option is also a key of the --config TOML file (dashes or underscores); "
        "the command line wins over the file. The server password is read from "
        "--password-file or TONGITS_PASSWORD, never from the command line. "
        "`tongits-server [--data-dir DIR] status | close TABLE | remove PLAYER` manages a "
        "running server from the same machine.",
    )
    parser.add_argument("--config", metavar="FILE", help="TOML file with the settings below")
    # taken as a prefix of --password-file, "--password pw" read a file named pw and said
    # only "[Errno 2] No such file or directory: 'pw'"
    parser.add_argument("--password", type=_refuse_password, help=argparse.SUPPRESS)
    defaults = ServerConfig()
    for f in fields(ServerConfig):
        default = getattr(defaults, f.name)
        kind = type(default)
        parser.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            type=_parse_bool if kind is bool else kind,
            nargs="?" if kind is bool else None,
            const=True if kind is bool else None,
            default=None,
            metavar=f.name.upper(),
            help=_help(f.name, default),
        )
    return parser


def _help(name: str, default: object) -> str:
    """An option's help with its default, unless it has none to show (an empty path or
    list: ``(default: )`` told nothing) or its help already says it in words."""
    text = _HELP.get(name, name)
    if default == "" or "(default:" in text:
        return text
    return f"{text} (default: {default})"


def _refuse_password(_text: str) -> str:
    """``--password``'s value is never taken: ``ps`` shows a command line to every user."""
    raise argparse.ArgumentTypeError(
        "a password is never given on the command line (every user of the machine can read "
        "it there): put it in a file and give --password-file FILE, or set TONGITS_PASSWORD")


def _parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def load_config(argv: list[str] | None = None) -> ServerConfig:
    args = build_parser().parse_args(argv)
    config = ServerConfig()
    if args.config:
        config = ServerConfig.from_file(args.config, config)
    given = {f.name: getattr(args, f.name) for f in fields(ServerConfig)}
    return ServerConfig.from_mapping({k: v for k, v in given.items() if v is not None}, config)


ADMIN_COMMANDS = ("status", "close", "remove")


def build_admin_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tongits-server",
        description="Manage the tongits-server running on this machine (same user only), "
        "through the admin socket in its data directory.",
    )
    parser.add_argument("--data-dir", default="", help="the server's --data-dir (default: "
                        "~/.local/share/tongits-server)")
    parser.add_argument("--config", metavar="FILE", help="the server's settings file: its "
                        "data_dir, unless --data-dir is given")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    status = sub.add_parser("status", help="tables, players, uptime, database size")
    status.add_argument("--json", action="store_true", help="print the raw JSON answer")
    close = sub.add_parser("close", help="close a table: everyone at it is told so")
    close.add_argument("table", help="table id, e.g. t3")
    remove = sub.add_parser("remove", help="remove a player: the seat goes to a bot for good")
    remove.add_argument("player", help="the player's name, or #N connection number")
    return parser


def _is_admin(argv: list[str]) -> bool:
    """Whether ``argv`` is ``[--data-dir DIR] [--config FILE] status|close|remove …``."""
    words = list(argv)
    while words and words[0].startswith(("--data-dir", "--config")):
        words = words[1:] if "=" in words[0] else words[2:]
    return bool(words) and words[0] in ADMIN_COMMANDS


def admin_main(argv: list[str]) -> int:
    import json

    from .admin import AdminError, format_status, request

    args = build_admin_parser().parse_args(argv)
    config = ServerConfig()
    if args.config:
        try:
            config = ServerConfig.from_file(args.config)
        except (OSError, ValueError) as exc:
            print(f"tongits-server {args.command}: {exc}", file=sys.stderr)
            return 2
    directory = ServerConfig(data_dir=args.data_dir or config.data_dir).data_path
    message: dict[str, str] = {"command": args.command}
    if args.command == "close":
        message["table"] = args.table
    elif args.command == "remove":
        message["player"] = args.player.lstrip("#")
    try:
        reply = request(directory, message)
    except AdminError as exc:
        print(f"tongits-server {args.command}: {exc}", file=sys.stderr)
        return 1
    if args.command == "status":
        print(json.dumps(reply, indent=2) if args.json else format_status(reply))
    elif args.command == "close":
        print(f"table {reply['closed']} closed")
    else:
        print("removed " + ", ".join(reply["removed"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if _is_admin(argv):
        return admin_main(argv)
    try:
        config = load_config(argv)
        password = load_password(config.password_file or None)
    except (OSError, ValueError) as exc:
        print(f"tongits-server: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from .storage.store import StoreError

    log = logging.getLogger("tongits.server")
    try:
        tls = _server_tls(config)
    except TLSSetupError as exc:
        log.error("%s", exc)
        return 1
    if tls is not None:
        log.info("TLS certificate %s, fingerprint %s%s", tls.cert, tls.fingerprint,
                 " (TLS required)" if config.tls_required else "")
    if password is not None:
        log.info("a server password is required (from %s)",
                 config.password_file or "TONGITS_PASSWORD")
    stores = _open_stores(config, log)
    if stores is None:
        return 1
    journal, ladder = stores
    failed = False
    try:
        collector = Collector(config.gc_young, config.gc_full)
        collector.install()
        server = Server(config, journal, tls=tls, password=password, ladder=ladder)
        trio.run(_serve, server, collector)
        failed = server.failure is not None  # the journal failed: already logged
    except* OSError as group:  # the port is taken, the address is not this machine's…
        log.error("cannot serve: %s", _first_leaf(group))
        failed = True
    finally:
        ladder.close()
        try:
            journal.close()
        except StoreError as exc:
            if not failed:
                log.error("cannot save the last entries: %s", exc)
                failed = True
    return 1 if failed else 0


def _server_tls(config: ServerConfig) -> ServerTLS | None:
    """The server's certificate: self-signed, from files, or none (plain TCP only)."""
    if config.tls_self_signed:
        return ServerTLS.self_signed(config.data_path, config.name)
    if config.tls_cert:
        return ServerTLS.from_files(config.tls_cert, config.tls_key)
    return None


def _open_stores(config: ServerConfig, log: logging.Logger) -> tuple[SQLiteJournal, Ladder] | None:
    """The journal and the ladder's file beside it; None, after logging why, if either cannot
    be opened."""
    journal = _open_journal(config, log)
    if journal is None:
        return None
    path = ladder_path(config.db)
    try:
        return journal, Ladder(path)
    except sqlite3.Error as exc:
        log.error("cannot open the ladder's database %s: %s", path, exc)
        journal.close()
        return None


def _open_journal(config: ServerConfig, log: logging.Logger) -> SQLiteJournal | None:
    """The database opened and its tables read back (damaged ones skipped if the config says
    so); None, after logging why, if the server cannot start on it."""
    from .storage.lock import DatabaseInUse
    from .storage.store import SQLiteJournal, StoreError, empty_file_warning

    warning = empty_file_warning(config.db)
    if warning is not None:
        log.warning("%s", warning)
    try:
        journal = SQLiteJournal(config.db, sync=config.db_sync)
    except DatabaseInUse as exc:
        log.error("cannot start: %s; stop that server first, or give this one a database of "
                  "its own (--db FILE)", exc)
        return None
    except (OSError, StoreError) as exc:
        log.error("cannot open the database: %s", exc)
        return None
    try:
        skipped = journal.load(skip_damaged=config.skip_damaged)
    except StoreError as exc:
        log.error("cannot start: %s", exc)
        journal.close()
        return None
    if skipped:
        log.warning("%s is damaged: not serving table %s (left in the file)", config.db,
                    ", ".join(skipped))
    log.info("database %s", config.db)
    return journal


def _first_leaf(error: BaseException) -> BaseException:
    """The first exception inside nested exception groups (Trio's nurseries wrap them)."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


async def _serve(server: Server, collector: Collector) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collector.run)
        await nursery.start(serve_admin, server, server.config.data_path)
        await server.run_until_signal()
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    sys.exit(main())
