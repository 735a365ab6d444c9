"""The server's settings: one frozen dataclass, read from a TOML file and the command line.

Every field is a ``--flag`` of ``tongits-server`` (underscores become dashes) and a top-level key
of the ``--config`` file; the command line wins over the file, the file over the defaults.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from tongits.protocol import DEFAULT_MAX_FRAME_SIZE
from tongits.protocol.keepalive import DEFAULT_DEAD_PEER_TIMEOUT

from .table.bots import policy_names

#: ``ServerConfig.check``: the numeric settings, what each must be, in words.
_BOUNDS: tuple[tuple[tuple[str, ...], Callable[[float], bool], str], ...] = (
    (("timer", "bot_delay", "handshake_timeout", "grace", "pregame_grace", "idle_timeout",
      "rate", "chat_rate", "connection_rate", "table_rate", "frame_timeout",
      "dead_peer_timeout", "evict_idle", "ladder_anchor_wait"),
     lambda v: v >= 0, "≥ 0"),
    (("max_connections", "max_per_address", "max_tables", "max_tables_per_address",
      "max_tables_per_network", "max_frame_size", "burst", "queue_size", "queue_bytes",
      "chat_max", "chat_burst", "name_max", "ladder_hands", "ladder_accounts_per_address",
      "ladder_max_accounts"),
     lambda v: v >= 1, "≥ 1"),
    (("gc_young", "gc_full"), lambda v: v > 0, "> 0"),
    (("table_reserve",), lambda v: 0 <= v < 1, "≥ 0 and < 1"),
)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 7777
    name: str = "tongits"
    timer: float = 30.0
    bot_delay: float = 0.8
    bot_policy: str = "greedy"
    grace: float = 60.0
    pregame_grace: float = 10.0
    db: str = "tongits.db"
    db_sync: str = "normal"
    skip_damaged: bool = False
    max_connections: int = 4096
    max_per_address: int = 64
    #: new connections a second one address may open, in bursts of ``max_per_address``
    connection_rate: float = 4.0
    max_tables: int = 2000
    max_tables_per_address: int = 8
    #: tables a second one address may make, in bursts of twice ``max_tables_per_address``
    table_rate: float = 0.1
    #: open tables created from one IPv6 /48 (a site holds 65,536 /64s)
    max_tables_per_network: int = 16
    #: on a full server (``max_tables``), a new table closes the one where no human has moved
    #: for longest, if that is at least this many seconds (0: never)
    evict_idle: float = 600.0
    #: the share of ``max_tables`` kept for creators whose network (an IPv4 /24, an IPv6 /48)
    #: holds no open table: many addresses that keep playing cannot take the last ones
    table_reserve: float = 0.25
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    rate: float = 20.0
    burst: int = 60
    limit_loopback: bool = False
    queue_size: int = 256
    queue_bytes: int = 256 * 1024
    handshake_timeout: float = 10.0
    idle_timeout: float = 900.0
    frame_timeout: float = 60.0
    #: seconds after which the kernel closes a connection whose peer went silent without
    #: closing (a dropped Wi-Fi): unacknowledged data (TCP_USER_TIMEOUT) or unanswered
    #: keepalive probes; the player is then away as after any disconnect (0: the system's
    #: defaults, which take minutes to hours)
    dead_peer_timeout: float = DEFAULT_DEAD_PEER_TIMEOUT
    chat_max: int = 200
    #: chat lines a second one address may say at one table, and its burst (``chat_pace``)
    chat_rate: float = 1.0
    chat_burst: int = 8
    name_max: int = 32
    log_level: str = "INFO"
    discovery: bool = True
    gc_young: float = 0.05
    gc_full: float = 600.0
    data_dir: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    tls_self_signed: bool = False
    tls_required: bool = False
    password_file: str = ""
    invite_password: bool = False
    public_address: str = ""
    #: host names the page is served under besides IP addresses, localhost, this machine's
    #: name and ``public_address``'s (comma-separated): a request for any other name is
    #: refused (DNS rebinding)
    web_hosts: str = ""
    #: serve the page and the protocol's WebSocket to browsers on the same port
    web: bool = True
    #: hands of a rated ladder match
    ladder_hands: int = 6
    #: the server bots seeded as ladder anchor accounts (comma-separated policies)
    ladder_anchors: str = "random,greedy,strong,expert"
    #: seconds a queued client waits for other clients before anchors fill its table
    ladder_anchor_wait: float = 10.0
    #: ladder accounts one address may make in an hour (a bucket refilling over the hour)
    ladder_accounts_per_address: int = 10
    #: ladder accounts the server holds at most (anchors included)
    ladder_max_accounts: int = 100_000

    @classmethod
    def from_mapping(cls, data: dict[str, Any], base: ServerConfig | None = None) -> ServerConfig:
        """``base`` (default: the defaults) with the keys of ``data``; unknown keys or values of
        the wrong type raise ``ValueError``."""
        base = base or cls()
        kinds = {f.name: type(getattr(base, f.name)) for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            name = key.replace("-", "_")
            kind = kinds.get(name)
            if kind is None:
                raise ValueError(f"unknown setting {key!r}")
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if type(value) is not kind:
                raise ValueError(f"setting {key!r} must be {kind.__name__}, not {value!r}")
            values[name] = value
        config = replace(base, **values)
        config.check()
        return config

    @classmethod
    def from_file(cls, path: str | Path, base: ServerConfig | None = None) -> ServerConfig:
        with open(path, "rb") as f:
            return cls.from_mapping(tomllib.load(f), base)

    def check(self) -> None:
        """``ValueError`` naming the first setting out of its range or at odds with another."""
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port {self.port} is out of range")
        for names, within, words in _BOUNDS:
            for name in names:
                if not within(getattr(self, name)):
                    raise ValueError(f"{name} must be {words}")
        if self.bot_policy not in policy_names():  # else every table seating a bot would fail
            raise ValueError(f"bot_policy must be one of {', '.join(policy_names())}, "
                             f"not {self.bot_policy!r}")
        unknown = [p for p in self.ladder_anchors.split(",") if p.strip()
                   and p.strip() not in policy_names()]
        if unknown:
            raise ValueError(f"ladder_anchors: no bot policy {unknown[0]!r}")
        self._check_tls_and_db()

    def _check_tls_and_db(self) -> None:
        if self.db_sync not in ("normal", "full"):
            raise ValueError("db_sync must be normal or full")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("tls_cert and tls_key go together")
        if self.tls_cert and self.tls_self_signed:
            raise ValueError("tls_self_signed makes its own certificate: drop tls_cert/tls_key")
        if self.tls_required and not (self.tls_cert or self.tls_self_signed):
            raise ValueError("tls_required needs tls_cert and tls_key, or tls_self_signed")

    @property
    def data_path(self) -> Path:
        """Where the server keeps its own files (the self-signed certificate, the admin
        socket): ``data_dir``, else ``$XDG_DATA_HOME/tongits-server`` (default
        ``~/.local/share/tongits-server``)."""
        if self.data_dir:
            return Path(self.data_dir).expanduser()
        base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
        return Path(base) / "tongits-server"

    @property
    def tls_enabled(self) -> bool:
        return bool(self.tls_cert) or self.tls_self_signed
