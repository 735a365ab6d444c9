"""The ``hello`` handshake: version, password, name or ladder account, heartbeat; ``welcome``.

A connection's first message must be ``hello`` (the route table, ``routes.Router``, enforces
it). ``Handshake.hello`` checks it, names the peer, answers ``welcome`` with what this server
offers, and hands a seat token to its table (``Resume``), which puts the player back in the
seat.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from tongits.engine import option_choices
from tongits.protocol import (
    PROTOCOL_MINOR,
    PROTOCOL_VERSION,
    ErrorCode,
    Hello,
    PlayerKind,
    ProtocolError,
    Welcome,
    to_dict,
)
from tongits.protocol.keepalive import MAX_HEARTBEAT, MIN_HEARTBEAT
from tongits.protocol.message_maps import WelcomeMap

from .config import ServerConfig
from .ladder.ladder import Ladder
from .lobby import Lobby, check_name
from .net.access import PasswordGate
from .net.peer import Peer
from .table import bots
from .table.requests import Resume

log = logging.getLogger("tongits.server")

SERVER_VERSION = "tongits/0.1"
#: What this server offers, each documented in docs/PROTOCOL.md ("Capabilities"); the server's
#: bot policies follow as ``bot:NAME``.
CAPABILITIES = [
    "text_mode", "spectate", "chat", "bots", "private_tables", "resume",
    # since 1.1
    "match_length", "sync", "auto_next", "remote_bots", "text_errors", "lobby_pages",
    "heartbeat",
    # since 1.2
    "ladder",
]


class Handshake:
    """Answers ``hello``. ``transport`` says the capabilities of the transport now (TLS,
    invite links); ``quota_key`` what a peer's password failures are counted under."""

    def __init__(self, config: ServerConfig, gate: PasswordGate, lobby: Lobby, ladder: Ladder,
                 transport: Callable[[], list[str]], quota_key: Callable[[str], str]) -> None:
        self.config = config
        self.gate = gate
        self.lobby = lobby
        self.ladder = ladder
        self._transport = transport
        self._quota_key = quota_key

    async def hello(self, peer: Peer, msg: Hello) -> None:
        """Check ``msg``, name ``peer``, answer ``welcome``; resume its seat if it gave a
        token."""
        if msg.version != PROTOCOL_VERSION:
            raise ProtocolError(
                ErrorCode.VERSION_UNSUPPORTED,
                f"this server speaks version {PROTOCOL_VERSION}, not {msg.version}",
            )
        await self.gate.check(self._quota_key(peer.host), msg.password)
        name = check_name(msg.name, self.config.name_max, "name")
        if msg.account is not None:
            name = peer.account = self.ladder.login(msg.account)
        if msg.heartbeat is not None and not MIN_HEARTBEAT <= msg.heartbeat <= MAX_HEARTBEAT:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"hello.heartbeat must be {MIN_HEARTBEAT:g} "
                                f"to {MAX_HEARTBEAT:g} seconds")
        table = self.lobby.table_of_token(msg.token) if msg.token is not None else None
        peer.name, peer.kind, peer.auto_next = name, PlayerKind(msg.kind), msg.auto_next
        peer.heartbeat = msg.heartbeat
        peer.send(self._welcome(msg))
        log.info("connection %d: hello from %r (%s)", peer.id, name, msg.kind)
        if table is not None and msg.token is not None:
            await table.call(peer, Resume(msg.token, msg.seq))

    def _welcome(self, msg: Hello) -> WelcomeMap:
        password = ["password"] if self.gate.required else []
        return to_dict(Welcome(
            id=msg.id, version=PROTOCOL_VERSION, minor=PROTOCOL_MINOR,
            server=f"{self.config.name} ({SERVER_VERSION})",
            capabilities=[*CAPABILITIES, *self._transport(), *password,
                          *(f"bot:{n}" for n in bots.policy_names())],
            options=option_choices(),
        ))
