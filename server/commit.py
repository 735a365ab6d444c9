"""Group commit: the entries of many tables made durable in one transaction, before anyone
hears of them.

Committing each action in its own transaction cost more than anything else a busy server did
for that action (a transaction writes a WAL frame and takes and releases its locks; 20-50 µs
against 5 for the insert itself). So tables and the lobby journal through ``GroupCommit``:
their entries gather in a *batch*, and a table's step ends by handing the peers it corked to
``hold`` instead of uncorking them. A batch is written and committed in one transaction; only
then do the messages of its steps leave. No message that shows a change leaves before the
change is committed.

A batch is written in the server's own thread, at once: with SQLite in WAL mode a commit only
writes the log, a few pages, in less time than handing it to another thread and hearing back
would take (that round trip, the thread's wake-ups and the interpreter lock passed back and
forth, cost more than the commit itself: 36 system calls per action against 18, 16 of them
futex calls). A batch whose commit waits on the disk (``Journal.waits``: an fsync, for the
checkpoint of a long log or with ``db_sync = full``) is handed to a writer thread instead,
which owns the journal until it is done: the loop serves on meanwhile, and what the tables
journal in the meantime forms the next batch, handed over the moment the first one is
committed (the classic group commit: the slower the disk, the larger the batches).

When no batch is being written and no table has a step coming (a request waiting, a bot about
to play), ``hold`` hands the batch over at once: waiting would cost a lone action a scheduling
round and share the commit with nobody. Otherwise the commit task hands it over in the next
round, after every table that ran in this one has added its entries and held its peers
(PostgreSQL's ``commit_siblings`` works alike).

A peer may have messages in two batches (one being written, one gathering): each batch knows
how many of the peer's held frames are its own, and the peer lets out exactly those when the
batch is committed (``Peer.release``), so the order of a peer's messages is kept and none
leaves early. A step that journaled nothing (a chat line, a refused move) still waits behind a
batch being written that holds messages of the same peers.

If a commit fails (a full disk, a broken file) nothing more is committed and nothing held is
ever let out: ``failed`` is set, and the server tells every client it is stopping and exits
(``Server.serve``). Carrying on would tell players of moves a restart would not know. Nothing
they were told is lost; a restart resumes every table from its last committed entry.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import trio

from .entries import Entry
from .journal import Journal

if TYPE_CHECKING:
    from .peer import Peer

log = logging.getLogger("tongits.server")

#: One journal call of a batch: ``(table, entry, finished)`` appends, ``(table, None, None)``
#: closes the table.
Op = tuple[str, Entry | None, dict[str, Any] | None]

#: Called in the Trio thread when a batch is written: with the error if it failed.
Done = Callable[[BaseException | None], None]


def write(journal: Journal, ops: list[Op]) -> None:
    """Apply a batch to ``journal`` and commit it."""
    for table, entry, finished in ops:
        if entry is None:
            journal.close_table(table)
        else:
            journal.append(table, entry, finished)
    journal.commit()


class _Thread:
    """The thread that writes the batches whose commit waits on the disk, one at a time, and
    reports each one back to the Trio loop; the journal is its own while it writes one."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._token = trio.lowlevel.current_trio_token()
        self._jobs: queue.SimpleQueue[tuple[list[Op], Done] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="journal writer", daemon=True)
        self._thread.start()

    def submit(self, ops: list[Op], done: Done) -> None:
        self._jobs.put((ops, done))

    def stop(self) -> None:
        """Let the batch being written finish, then end the thread (the journal is the
        caller's again)."""
        self._jobs.put(None)
        self._thread.join()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            ops, done = job
            error: BaseException | None = None
            try:
                write(self.journal, ops)
            except Exception as exc:  # noqa: BLE001 - reported to the loop
                error = exc
            try:
                self._token.run_sync_soon(done, error)
            except trio.RunFinishedError:
                return


class GroupCommit:
    """A ``Journal`` for the tables and the lobby over the real one, plus ``hold``,
    ``settled`` and the commit task ``run`` (started by the lobby with the table tasks)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        #: requests handed to tables and not yet taken, and tables about to act on their
        #: own (kept by ``Table``): while there are some, more entries are on their way
        self.waiting = 0
        #: set when a commit has failed; ``error`` says why
        self.failed = trio.Event()
        self.error: BaseException | None = None
        #: the writer thread, started when a commit first waits on the disk
        self._thread: _Thread | None = None
        #: the gathering batch: its journal calls, and its peers with how many of their held
        #: frames it covers
        self._ops: list[Op] = []
        self._held: dict[Peer, int] = {}
        #: the batch being written: its peers (None when none is)
        self._writing: dict[Peer, int] | None = None
        self._scheduled = False
        self._stopped = False  # the commit task has ended: everything is written here
        self._handed = 0  # batches handed to the writer so far
        self._written = 0  # ... and written (committed and let out)
        self._wake = trio.lowlevel.ParkingLot()
        self._landed = trio.lowlevel.ParkingLot()

    # ----- the Journal calls of tables and the lobby ------------------------------------------

    def append(self, table: str, entry: Entry, finished: dict[str, Any] | None = None) -> None:
        self._ops.append((table, entry, finished))

    def close_table(self, table: str) -> None:
        self._ops.append((table, None, None))
        self.hold([])

    def open_tables(self) -> list[list[Entry]]:
        return self.journal.open_tables()

    def last_table_number(self) -> int:
        return self.journal.last_table_number()

    # ----- holding messages until their changes are committed ----------------------------------

    def hold(self, peers: list[Peer]) -> None:
        """Uncork ``peers`` once what has been journaled so far is committed: at once if
        nothing is pending; else with the gathering batch, which is handed to the writer right
        now if nothing is being written and no table has a step coming, else in the commit
        task's round (or when the batch being written lands)."""
        if not self._ops and not self._held and self._writing is None and not self.error:
            for peer in peers:
                peer.uncork()
            return
        for peer in peers:
            self._held[peer] = peer.held()
        if self._writing is not None or self.error or (self._scheduled and not self._stopped):
            return
        if self.waiting <= 0 or self._stopped:
            self._hand_over()
            return
        self._schedule()

    async def settled(self) -> None:
        """Yield until what has been journaled so far is committed and its messages have left
        (at least one checkpoint): a table does this before it acts on its own, so that a
        bot's thinking never delays the news of the change before it."""
        gathering = bool(self._ops or self._held)
        if not gathering and self._writing is None:
            await trio.lowlevel.checkpoint()
            return
        target = self._handed + (1 if gathering else 0)
        if gathering and self._writing is None:
            self._schedule()
        while self._written < target:
            await self._landed.park()

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self._wake.unpark()

    def _hand_over(self) -> None:
        """Hand the gathering batch to the writer (nothing may be being written)."""
        ops, self._ops = self._ops, []
        self._writing, self._held = self._held, {}
        self._handed += 1
        if not ops:  # only steps that journaled nothing, behind the batch that was being written
            self._written_back(None)
            return
        if self.journal.waits() and not self._stopped:
            if self._thread is None:
                self._thread = _Thread(self.journal)
            self._thread.submit(ops, self._written_back)
            return
        try:
            write(self.journal, ops)
        except Exception as exc:  # noqa: BLE001 - reported to every table by ``_fail``
            self._written_back(exc)
            return
        self._written_back(None)

    def _written_back(self, error: BaseException | None) -> None:
        """A batch is committed (or failed): let out what waited for it, hand over the next."""
        if error is not None:
            self._fail(error)
            return
        held, self._writing = self._writing or {}, None
        self._written += 1
        later = self._held
        for peer, count in held.items():
            still = later.get(peer)
            if still is None:
                peer.uncork()
            else:
                peer.release(count)
                later[peer] = still - count
        self._landed.unpark_all()
        if (self._ops or self._held) and not self._scheduled:
            self._hand_over()  # everything gathered meanwhile, in one batch

    def _fail(self, error: BaseException) -> None:
        self.error = error
        log.error("the journal cannot commit (%s: %s): stopping; nothing more is saved and "
                  "nothing unsaved is sent", type(error).__name__, error)
        self.failed.set()

    # ----- the commit task -------------------------------------------------------------------

    async def run(self) -> None:
        """Hand batches over when asked to (``hold``, ``settled``), in the round after. When
        cancelled (the server stops), the writer thread finishes its batch, what is still
        gathered is written here, and the journal is the caller's again."""
        try:
            while True:
                await self._wake.park()
                self._scheduled = False
                if self._writing is None and not self.error and (self._ops or self._held):
                    self._hand_over()
        finally:
            if self._thread is not None:
                self._thread.stop()
                self._thread = None
            self._writing = None
            self._scheduled, self._stopped = False, True
            if self._ops and not self.error:
                ops, self._ops = self._ops, []
                try:
                    write(self.journal, ops)
                except Exception as exc:  # noqa: BLE001 - nobody heard of these entries
                    log.warning("entries journaled as the server stopped are lost: %s", exc)
