"""The ladder's matchmaker: tables of three from the queue, by rating and waiting time.

``form_groups`` is the rule, a pure function: the longest-waiting client first, with the two
queued clients nearest its rating (mu) such that each pair of the three is within both players'
*windows*; a window is
``BASE_WINDOW`` mu wide and widens by ``WIDEN_PER_SECOND`` each second its player has waited,
so a strong player waits a little for a strong table and then takes what there is. A client that
has waited ``anchor_wait`` seconds and still lacks opponents gets the anchor accounts (the
server's bots, ``ladder.Ladder.seed_anchors``) nearest its rating in the empty seats: a lone
player is never stuck, and a table always holds at least one client (a table of server bots
only would have nobody to keep it open).

``Matchmaker`` runs it every ``MATCH_INTERVAL`` seconds in the server's table nursery: each
group gets a private table of ``ladder_hands`` hands that starts when its third seat is filled
(a ``ladder_dealing.LadderDealing`` table); the clients are seated as by ``join`` (each gets
``joined``), the anchors as server bots, in a shuffled seat order. A ladder table counts as a
table created by its longest-waiting client: against ``max_tables`` and that client's address's
share (``Lobby.admit``). While the server is full nobody is matched, and a client whose address
holds its share of tables waits until one of them closes. A client matched and gone (or seated
elsewhere) by the time its seat is filled, or gone from its seat before the match starts
(``LadderDealing.vacated``), forfeits the match, and a server bot plays its seat. If every
client seated so far leaves before the others are seated, the table closes, its match is void
and the clients not seated yet are queued again.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio
from tongits.engine import Options
from tongits.protocol import ErrorCode, Join, ProtocolError

from ..lobby import DealingFactory, Lobby, join_code
from ..table.entries import CreateEntry
from ..table.requests import SeatBot
from .ladder import Ladder
from .ladder_dealing import ladder_dealing, ladder_table

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..net.peer import Peer

log = logging.getLogger("tongits.server")

#: Seconds between two rounds of the matchmaker.
MATCH_INTERVAL = 1.0
#: The rating gap (in mu) any two queued players accept at once.
BASE_WINDOW = 3.0
#: How much wider a player's window gets each second it waits.
WIDEN_PER_SECOND = 0.5


@dataclass(frozen=True, slots=True)
class Contender:
    """One account that may be seated: ``since`` when it queued (anchors: never used)."""

    account: str
    mu: float
    since: float = 0.0
    anchor: str | None = None


def window(waited: float) -> float:
    return BASE_WINDOW + WIDEN_PER_SECOND * max(0.0, waited)


def form_groups(
    waiting: Sequence[Contender], anchors: Sequence[Contender], now: float, anchor_wait: float
) -> list[tuple[Contender, Contender, Contender]]:
    """Tables of three: each of the queued ``waiting`` in one group at most, anchors in any
    number of groups, no account twice in a group."""
    pool = sorted(waiting, key=lambda c: c.since)
    used: set[int] = set()
    groups: list[tuple[Contender, Contender, Contender]] = []
    for i, first in enumerate(pool):
        if i in used:
            continue
        nearby = sorted(
            (j for j, other in enumerate(pool)
             if j != i and j not in used and _within(first, other, now)),
            key=lambda j: abs(pool[j].mu - first.mu),
        )
        chosen: list[int] = []
        for j in nearby:
            if all(_within(pool[j], pool[k], now) for k in chosen):
                chosen.append(j)
            if len(chosen) == 2:
                break
        members = [pool[j] for j in chosen]
        if len(members) < 2 and now - first.since >= anchor_wait:
            members = _with_anchors(first, members, anchors)
        if len(members) == 2:
            used.add(i)
            used.update(chosen)
            groups.append((first, members[0], members[1]))
    return groups


def _within(a: Contender, b: Contender, now: float) -> bool:
    """Whether two queued players may sit together: distinct accounts, each within the
    other's window."""
    return a.account != b.account and abs(a.mu - b.mu) <= min(window(now - a.since),
                                                               window(now - b.since))


def _with_anchors(
    first: Contender, members: list[Contender], anchors: Sequence[Contender]
) -> list[Contender]:
    """``members`` (``first``'s opponents so far) completed to two with the anchors nearest
    ``first``'s rating."""
    members = list(members)
    taken = {first.account, *(m.account for m in members)}
    for anchor in sorted(anchors, key=lambda a: abs(a.mu - first.mu)):
        if len(members) == 2:
            break
        if anchor.account not in taken:
            members.append(anchor)
            taken.add(anchor.account)
    return members


@dataclass(slots=True)
class Queued:
    peer: Peer
    account: str
    since: float


class Matchmaker:
    """The queue and the task that seats it (see the module's docstring)."""

    def __init__(self, ladder: Ladder, lobby: Lobby, config: ServerConfig) -> None:
        self.ladder = ladder
        self.lobby = lobby
        self.config = config
        self.anchors = ladder.seed_anchors(
            p for p in config.ladder_anchors.split(",") if p.strip()
        )
        self.queue: dict[int, Queued] = {}
        self._rng = random.Random(secrets.randbits(64))
        #: set when the queue gets its first player (``run`` waits for it)
        self._someone = trio.Event()

    def dealing_for(self, table_id: str) -> DealingFactory | None:
        """The dealing of a table restored from the journal: a ``LadderDealing`` if the
        table plays a pending ladder match (``Lobby.restore``)."""
        return ladder_dealing(self.ladder) if self.ladder.is_ladder_table(table_id) else None

    def enqueue(self, peer: Peer, account: str) -> None:
        """``peer`` waits for a match as ``account``; refused while it sits at a table or
        its account is queued on another live connection or plays a ladder match. (A table
        whose match has just ended has let its players go and rated the match in the step
        that ended it, before ``match_over`` went out: ``queue`` at once is accepted.)"""
        if peer.table is not None:
            raise ProtocolError(ErrorCode.ALREADY_SEATED, f"already at table {peer.table.id}")
        for queued in self.queue.values():
            if queued.account == account and queued.peer is not peer and not queued.peer.gone:
                raise ProtocolError(ErrorCode.NOT_READY, f"{account} is queued already")
        for table_id, match in self.ladder.pending.items():
            if account in match.seats:
                raise ProtocolError(ErrorCode.NOT_READY,
                                    f"{account} plays a ladder match at table {table_id}")
        if peer.id not in self.queue:
            self.queue[peer.id] = Queued(peer, account, trio.current_time())
            self._someone.set()

    def dequeue(self, peer: Peer) -> None:
        self.queue.pop(peer.id, None)

    async def run(self) -> None:
        """Every ``MATCH_INTERVAL`` seconds while anyone is queued (idle otherwise)."""
        while True:
            if not self.queue:
                self._someone = trio.Event()
                await self._someone.wait()
            await trio.sleep(MATCH_INTERVAL)
            await self.match_round()

    async def match_round(self) -> None:
        """Form what tables the queue allows now and seat them."""
        for key in [k for k, q in self.queue.items() if q.peer.gone or q.peer.table is not None]:
            del self.queue[key]
        if not self.queue or len(self.lobby.tables) >= self.config.max_tables:
            return
        by_account = {q.account: q for q in self.queue.values() if self._may_open(q)}
        waiting = [Contender(q.account, self.ladder.account(q.account).mu, q.since)
                   for q in by_account.values()]
        anchors = [Contender(name, self.ladder.account(name).mu,
                             anchor=self.ladder.account(name).anchor) for name in self.anchors]
        groups = form_groups(waiting, anchors, trio.current_time(),
                             self.config.ladder_anchor_wait)
        for group in groups:
            members = list(group)
            self._rng.shuffle(members)
            for m in members:
                if m.anchor is None:
                    del self.queue[by_account[m.account].peer.id]
            await self._seat(members, by_account, group[0])

    def _may_open(self, queued: Queued) -> bool:
        """Whether the address of ``queued`` may have one more table (``Lobby.check_quota``)."""
        try:
            self.lobby.check_quota(queued.peer.quota)
        except ProtocolError:
            return False
        return True

    async def _seat(self, members: list[Contender], by_account: dict[str, Queued],
                    first: Contender) -> None:
        """Open a table for ``members`` (in seat order), counted as ``first``'s, and seat
        them."""
        code = join_code()
        quota = by_account[first.account].peer.quota
        try:
            self.lobby.admit(quota)
            table = self.lobby.open(CreateEntry(
                table="", name="ladder: " + ", ".join(m.account for m in members),
                seed=secrets.randbits(64), options=Options(), timer=self.config.timer,
                private=True, code=code, auto_start=True, hands=self.config.ladder_hands,
                target=None,
            ), ladder_table(self.ladder), quota)
        except ProtocolError as exc:
            log.info("ladder: cannot open a table (%s); the players wait on", exc)
            for m in members:
                if m.anchor is None:
                    queued = by_account[m.account]
                    self.queue[queued.peer.id] = queued
            return
        self.ladder.match_formed(table.id, [m.account for m in members])
        log.info("ladder: table %s for %s", table.id, ", ".join(m.account for m in members))
        # The clients first: a table with no client connected would close as deserted.
        order = sorted(range(3), key=lambda s: members[s].anchor is not None)
        for done, seat in enumerate(order):
            m = members[seat]
            peer = by_account[m.account].peer if m.anchor is None else None
            try:
                if peer is not None and peer.table is None and not peer.gone:
                    await table.call(peer, Join(table=table.id, seat=seat, code=code))
                    continue
                if peer is not None:  # it went, or sat elsewhere, since it was matched
                    self.ladder.forfeit(table.id, seat)
                await table.call(None, SeatBot(seat, m.anchor or self.config.bot_policy,
                                               m.account))
            except ProtocolError as exc:
                # The table closed meanwhile: every client seated so far left it. Its match
                # is void (``Lobby.table_ended``); the clients not seated yet wait on.
                log.info("ladder: table %s could not be seated (%s)", table.id, exc)
                self._requeue(by_account[members[s].account] for s in order[done:]
                              if members[s].anchor is None)
                return

    def _requeue(self, clients: Iterable[Queued]) -> None:
        """``clients``, matched to a table that closed before they sat, queue again (as
        long as they waited before)."""
        for queued in clients:
            if not queued.peer.gone and queued.peer.table is None:
                self.queue[queued.peer.id] = queued
                self._someone.set()


