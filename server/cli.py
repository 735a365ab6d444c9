"""``tongits-server``: run a Tongits server (see docs/HOSTING.md)."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import fields

import trio

from .app import Server
from .collector import Collector
from .config import ServerConfig

_HELP = {
    "host": "address to listen on (0.0.0.0 for every interface, e.g. a LAN)",
    "discovery": "answer `tongits discover` on UDP, same port number and address as TCP",
    "port": "TCP port (0 picks a free one)",
    "name": "server name shown to clients",
    "timer": "default seconds per decision for new tables (0 = no timer)",
    "bot_delay": "seconds a server bot waits before it plays",
    "bot_policy": "default policy of server bots (random, greedy, strong)",
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
    "max_tables": "most open tables",
    "max_tables_per_address": "most open tables created from one IP address (an IPv6 /64)",
    "max_frame_size": "largest frame or text line accepted, in bytes",
    "queue_size": "messages queued for a client before it is dropped as a slow reader",
    "queue_bytes": "bytes queued for a client before it is dropped as a slow reader",
    "handshake_timeout": "seconds a new connection may stay silent (between bytes) before hello",
    "frame_timeout": "seconds a frame or line may take from its first byte to its end",
    "chat_max": "longest chat line, in characters",
    "name_max": "longest player or table name, in characters",
    "log_level": "DEBUG, INFO, WARNING or ERROR",
    "gc_young": "seconds between collections of young cyclic garbage (short keeps each pause "
    "short)",
    "gc_full": "seconds between full garbage collections (each pauses the server, 0.2-0.3 s "
    "with 1,000 busy tables)",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tongits-server",
        description="Host Tongits tables: lobby, seats, timers, server bots, spectators.",
        epilog="Every option is also a key of the --config TOML file (dashes or underscores); "
        "the command line wins over the file.",
    )
    parser.add_argument("--config", metavar="FILE", help="TOML file with the settings below")
    defaults = ServerConfig()
    for f in fields(ServerConfig):
        default = getattr(defaults, f.name)
        kind = type(default)
        parser.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            type=_parse_bool if kind is bool else kind,
            default=None,
            metavar=f.name.upper(),
            help=f"{_HELP.get(f.name, f.name)} (default: {default})",
        )
    return parser


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


def main(argv: list[str] | None = None) -> int:
    try:
        config = load_config(argv)
    except (OSError, ValueError) as exc:
        print(f"tongits-server: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from .store import SQLiteJournal, StoreError, empty_file_warning

    log = logging.getLogger("tongits.server")
    warning = empty_file_warning(config.db)
    if warning is not None:
        log.warning("%s", warning)
    try:
        journal = SQLiteJournal(config.db, sync=config.db_sync)
    except (OSError, StoreError) as exc:
        log.error("cannot open the database: %s", exc)
        return 1
    try:
        skipped = journal.load(skip_damaged=config.skip_damaged)
    except StoreError as exc:
        log.error("cannot start: %s", exc)
        journal.close()
        return 1
    if skipped:
        log.warning("%s is damaged: not serving table %s (left in the file)", config.db,
                    ", ".join(skipped))
    log.info("database %s", config.db)
    failed = False
    try:
        collector = Collector(config.gc_young, config.gc_full)
        collector.install()
        server = Server(config, journal)
        trio.run(_serve, server, collector)
        failed = server.failure is not None  # the journal failed: already logged
    except* OSError as group:  # the port is taken, the address is not this machine's…
        log.error("cannot serve: %s", _first_leaf(group))
        failed = True
    finally:
        try:
            journal.close()
        except StoreError as exc:
            if not failed:
                log.error("cannot save the last entries: %s", exc)
                failed = True
    return 1 if failed else 0


def _first_leaf(error: BaseException) -> BaseException:
    """The first exception inside nested exception groups (Trio's nurseries wrap them)."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


async def _serve(server: Server, collector: Collector) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collector.run)
        await server.run_until_signal()
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    sys.exit(main())
