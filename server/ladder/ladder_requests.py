"""The ladder's requests (since 1.2): ``register``, ``get_standings``, ``queue``, ``unqueue``.

``register`` (limited per address and server-wide: ``ladder.Registrations``) and
``standings`` are answered from the ladder's worker thread, the others at once; a queued
connection hears ``joined`` when the matchmaker seats it (``matchmaker.Matchmaker``).
``LadderDesk.routes`` are the entries of the route table (``routes.Router``) for them.
"""

from __future__ import annotations

from typing import Any

import trio
from tongits.protocol import (
    ErrorCode,
    GetStandings,
    LadderStandings,
    ProtocolError,
    Queue,
    Register,
    Registered,
    Unqueue,
    ok_message,
    to_dict,
)

from ..config import ServerConfig
from ..lobby import check_name
from ..net.peer import Peer
from ..routes import Route, charge
from .ladder import MAX_STANDINGS_PAGE, Ladder, Registrations
from .matchmaker import Matchmaker


class LadderDesk:
    """Answers the ladder's requests from ``ladder`` (accounts, ratings) and ``matchmaker``
    (the queue)."""

    def __init__(self, config: ServerConfig, ladder: Ladder, matchmaker: Matchmaker) -> None:
        self.config = config
        self.ladder = ladder
        self.matchmaker = matchmaker
        self.registrations = Registrations(config.ladder_accounts_per_address,
                                           config.ladder_max_accounts)

    @property
    def routes(self) -> dict[type[Any], Route]:
        return {Register: self._register, GetStandings: self._standings,
                Queue: self._queue, Unqueue: self._unqueue}

    async def _register(self, peer: Peer, msg: Register) -> None:
        charge(peer, "register")
        name = check_name(msg.name, self.config.name_max, "name")
        self.registrations.take(peer.quota, self.ladder.accounts, trio.current_time())
        key = await self.ladder.register_in_worker(name)
        peer.send(to_dict(Registered(id=msg.id, name=name, key=key)))

    async def _standings(self, peer: Peer, msg: GetStandings) -> None:
        if msg.offset < 0 or (msg.limit is not None and msg.limit < 1):
            raise ProtocolError(ErrorCode.BAD_FIELD, "offset must be ≥ 0 and limit ≥ 1")
        limit = min(msg.limit or MAX_STANDINGS_PAGE, MAX_STANDINGS_PAGE)
        page, total = await self.ladder.standings_in_worker(msg.offset, limit)
        end = msg.offset + len(page)
        peer.send(to_dict(LadderStandings(
            id=msg.id, players=[a.to_dict(msg.offset + i + 1) for i, a in enumerate(page)],
            total=total, offset=msg.offset, next=end if end < total else None,
        )))

    async def _queue(self, peer: Peer, msg: Queue) -> None:
        if peer.account is None:
            raise ProtocolError(ErrorCode.NEEDS_ACCOUNT,
                                "queue needs a ladder account: register, then hello with "
                                "its key as account")
        self.matchmaker.enqueue(peer, peer.account)
        peer.send(ok_message(msg.id))

    async def _unqueue(self, peer: Peer, msg: Unqueue) -> None:
        self.matchmaker.dequeue(peer)
        peer.send(ok_message(msg.id))
