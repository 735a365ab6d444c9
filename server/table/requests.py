"""What a connection hands a table besides the client's own messages, and the type of all the
requests a table takes. Kept apart so that connections (``peer``) and tables (``actor``) both
name them without knowing each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from tongits.protocol import ClientMessage


@dataclass(slots=True)
class Resume:
    """Internal request: ``peer`` said ``hello`` with a seat token, having seen state ``seq``."""

    token: str
    seq: int | None = None


@dataclass(slots=True)
class Disconnected:
    """Internal request: ``peer``'s connection has ended."""


@dataclass(slots=True)
class HostRemove:
    """Internal request from the host (server/admin.py): ``peer`` loses its seat for good (a
    bot plays it out) and its connection is closed with ``removed_by_host``."""


@dataclass(slots=True)
class HostClose:
    """Internal request from the host, or from the lobby making room for a new table
    (``Lobby.make_room``): everyone at the table is told ``closed_by_host`` (with ``reason``
    as the message, if given) and the table closes for good. Its ``peer`` is None."""

    reason: str | None = None


@dataclass(slots=True)
class SeatBot:
    """Internal request from the ladder's matchmaker (its ``peer`` is None): a server bot of
    ``policy`` sits in ``seat`` under the ladder account ``name``, before the match starts."""

    seat: int
    policy: str
    name: str


TableRequest: TypeAlias = (
    ClientMessage | Resume | Disconnected | HostRemove | HostClose | SeatBot
)
