"""Group commit: the entries of many tables made durable in one transaction, before anyone
hears of them.

Committing each action in its own transaction cost more than anything else a busy server did
for that action (a transaction writes a WAL frame and takes and releases its locks; 20-50 µs
against 5 for the insert itself). So tables and the lobby journal through ``GroupCommit``:
entries go into the journal's open transaction, and a table's step ends by handing the peers it
corked to ``hold`` instead of uncorking them. No message that shows a change leaves before the
change is committed.

When no table has a step coming (a request waiting, a bot about to play), ``hold`` commits
at once: waiting would cost a lone
action a scheduling round and share the commit with nobody. Otherwise the commit task is woken;
it runs in the next round, after every table that ran in this one has added its entries and
held its peers, and commits them all at once (PostgreSQL's ``commit_siblings`` works alike).

If the commit fails (a full disk, a broken file) the server stops: carrying on would tell
players of moves a restart would not know. Nothing they were told is lost; a restart resumes
every table from its last committed entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from .journal import Entry, Journal

if TYPE_CHECKING:
    from .peer import Peer


class GroupCommit:
    """A ``Journal`` for the tables and the lobby over the real one, plus ``hold`` and the
    commit task ``run`` (started by the lobby with the table tasks)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._dirty = False
        self._scheduled = False
        #: requests handed to tables and not yet taken, and tables about to act on their
        #: own (kept by ``Table``): while there are some, more entries are on their way
        self.waiting = 0
        self._held: list[Peer] = []
        self._wake = trio.lowlevel.ParkingLot()
        self._committed = trio.lowlevel.ParkingLot()

    def append(self, table: str, entry: Entry, finished: dict[str, Any] | None = None) -> None:
        self.journal.append(table, entry, finished)
        self._dirty = True

    def close_table(self, table: str) -> None:
        self.journal.close_table(table)
        self._dirty = True
        self.hold([])

    def open_tables(self) -> list[list[Entry]]:
        return self.journal.open_tables()

    def last_table_number(self) -> int:
        return self.journal.last_table_number()

    def hold(self, peers: list[Peer]) -> None:
        """Uncork ``peers`` once what has been journaled so far is committed: at once if it
        all is; right now, with a commit, if no table has a step coming (nobody to share it
        with: a lone action does not pay for a round); else in the commit task's round."""
        if not self._dirty:
            for peer in peers:
                peer.uncork()
            return
        self._held.extend(peers)
        if self._scheduled:
            return
        if self.waiting <= 0:
            self._flush()
            return
        self._scheduled = True
        self._wake.unpark()

    async def settled(self) -> None:
        """Yield until what has been journaled so far is committed and its messages have left
        (at least one checkpoint): a table does this before it acts on its own, so that a
        bot's thinking never delays the news of the change before it."""
        if not self._dirty:
            await trio.lowlevel.checkpoint()
            return
        if not self._scheduled:
            self._scheduled = True
            self._wake.unpark()
        await self._committed.park()

    def _flush(self) -> None:
        """Commit, then let out what waited for it."""
        if self._dirty:
            self.journal.commit()
            self._dirty = False
        held, self._held = self._held, []
        for peer in held:
            peer.uncork()
        self._committed.unpark_all()

    async def run(self) -> None:
        """Commit when asked to (``hold`` or ``settled``), in the round after."""
        while True:
            await self._wake.park()
            self._scheduled = False
            self._flush()
