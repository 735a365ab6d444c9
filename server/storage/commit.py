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

A batch is handed over at the end of the event loop's round: when every task that was ready
has run and the loop is about to wait for I/O again (``_EndOfRound``, a Trio instrument). A
lone action is then committed the moment its step is done, with no task woken for it; the
actions of all the tables that stepped in the same round share one commit, and nothing waits
for company that may never come (PostgreSQL's ``commit_delay`` waits for it instead). Only a
round that runs long (``ROUND_SLICE`` of CPU: the hands of many tables ending together) is
committed in slices, so that its first tables are not told of their changes after its last.

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

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from ..table.entries import Entry
from .journal import FinishedHand, Journal

if TYPE_CHECKING:
    from ..net.peer import Peer

log = logging.getLogger("tongits.server")

#: Seconds of CPU a round of the event loop runs before the batch it has gathered is handed
#: over (``_EndOfRound``). A round of 20 tables' steps takes about 10 ms here, and the first of
#: them used to wait for the last before anyone heard of a change: in the second after 1,000
#: tables' hands ended together the server took up to 100 ms from a move's arrival to its
#: answer (bench/server_load.py ``--lock-step``), and 30-50 ms with 2 ms slices.
ROUND_SLICE = 0.002

#: One journal call of a batch: ``(table, entry, finished)`` appends, ``(table, None, None)``
#: closes the table.
Op = tuple[str, Entry | None, FinishedHand | None]

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


class _EndOfRound(trio.abc.Instrument):
    """Hands the gathering batch over each time the event loop has run every task that was
    ready and is about to wait for I/O. The loop has already chosen how long it will wait: if
    the batch woke a task (one waiting in ``settled``, a writer of a full socket) while the
    loop meant to sleep, the loop is woken at once (``run_sync_soon``) to run it.

    A round that has run for ``ROUND_SLICE`` seconds of the loop's CPU hands its batch over
    before the next table's step (``GroupCommit.step_begins`` asks ``slice_over``), and
    gathers the next one: the first tables of a long round (many tables that stepped
    together, the hands of many tables ended in the same second) are told of their changes
    then, instead of after the last table's step. (Asked by the steps, between two of them,
    not after every step of every task by a Trio hook: that hook cost each task step a call
    through Trio's instruments, ~2,500 instructions a paced action.) A task woken by that
    batch runs in the next round, as any task woken in this one. CPU, not wall time: a step
    the machine held up has no more to say, and a test's round is not cut in two by a busy
    machine."""

    def __init__(self, commits: GroupCommit) -> None:
        self.commits = commits
        self._token = trio.lowlevel.current_trio_token()
        self._start_slice()

    def _start_slice(self) -> None:
        #: the wall clock (``time.perf_counter``) before which the slice cannot have run out
        self.look_at = time.perf_counter() + ROUND_SLICE  # first: no later than the CPU's
        self._sliced_at = time.thread_time()

    def after_io_wait(self, timeout: float) -> None:
        self._start_slice()

    def slice_over(self) -> None:
        """A step begins and the wall clock has passed ``look_at``: hand the batch over if
        the round has used its slice of CPU."""
        # The thread's CPU clock is a system call (0.7 µs here), the wall clock is not (60
        # ns). A slice cannot have used more CPU than wall time, so the CPU clock is read only
        # once the wall clock says it may have run out, and again no sooner than the CPU it
        # lacked.
        used = time.thread_time() - self._sliced_at
        if used >= ROUND_SLICE:
            self._start_slice()
            self.commits.end_of_round()
        else:
            self.look_at = time.perf_counter() + ROUND_SLICE - used

    def before_io_wait(self, timeout: float) -> None:
        if self.commits.end_of_round() and timeout > 0:
            self._token.run_sync_soon(_nothing)


def _nothing() -> None:
    pass


class GroupCommit:
    """A ``Journal`` for the tables and the lobby over the real one, plus ``hold``,
    ``settled`` and ``run``, started by the lobby with the table tasks: while it runs, batches
    are handed over at the end of each round of the loop; before and after, at once."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
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
        self._rounds = False  # ``run`` is running: batches wait for the end of the round
        self._woke = False  # a batch let out woke a task (``end_of_round``)
        self._handed = 0  # batches handed to the writer so far
        self._written = 0  # ... and written (committed and let out)
        self._landed = trio.lowlevel.ParkingLot()
        #: the end-of-round hook while ``run`` runs (it says when a round's slice is over)
        self._round: _EndOfRound | None = None

    # ----- the Journal calls of tables and the lobby ------------------------------------------

    def append(self, table: str, entry: Entry, finished: FinishedHand | None = None) -> None:
        self._ops.append((table, entry, finished))

    def close_table(self, table: str) -> None:
        self._ops.append((table, None, None))
        self.hold([])

    def step_begins(self) -> None:
        """A table's step begins (before it corks its peers): a round that has run its
        slice of CPU hands its batch over first (``_EndOfRound``). Between two steps, never
        inside one: a peer of the batch that the step under way corks again would be let out
        whole, what the step had said so far included."""
        round_ = self._round
        if round_ is not None and time.perf_counter() >= round_.look_at:
            round_.slice_over()

    def open_tables(self) -> list[list[Entry]]:
        return self.journal.open_tables()

    def last_table_number(self) -> int:
        return self.journal.last_table_number()

    # ----- holding messages until their changes are committed ----------------------------------

    def hold(self, peers: list[Peer]) -> None:
        """Uncork ``peers`` once what has been journaled so far is committed: at once if
        nothing is pending; else with the gathering batch, handed over at the end of this
        round of the loop (or, while one is being written, at the end of the round in which
        it lands)."""
        if not self._ops and not self._held and self._writing is None and not self.error:
            for peer in peers:
                peer.uncork()
            return
        for peer in peers:
            self._held[peer] = peer.held()
        if not self._rounds:
            self.end_of_round()

    async def settled(self) -> None:
        """Yield until what has been journaled so far is committed and its messages have left
        (at least one checkpoint): a table does this before it acts on its own, so that a
        bot's thinking never delays the news of the change before it."""
        gathering = bool(self._ops or self._held)
        if not gathering and self._writing is None:
            await trio.lowlevel.checkpoint()
            return
        target = self._handed + (1 if gathering else 0)
        if not self._rounds:
            self.end_of_round()
        while self._written < target:
            await self._landed.park()

    def end_of_round(self) -> bool:
        """Hand the gathering batch over, unless one is being written (it follows that one
        when it lands) or the journal has failed; whether that woke a task (one waiting in
        ``settled``, a peer's writer, or every task when the journal failed)."""
        if self._writing is not None or self.error or not (self._ops or self._held):
            return False
        self._woke = False
        try:
            self._hand_over()
        except Exception as exc:  # noqa: BLE001 - e.g. letting a message out: a bug of ours
            self._fail(exc)
        return self._woke

    def _hand_over(self) -> None:
        """Hand the gathering batch to the writer (nothing may be being written)."""
        ops, self._ops = self._ops, []
        self._writing, self._held = self._held, {}
        self._handed += 1
        if not ops:  # only steps that journaled nothing, behind the batch that was being written
            self._written_back(None)
            return
        if self.journal.waits() and self._rounds:
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
        woke = False
        for peer, count in held.items():
            still = later.get(peer)
            if still is None:
                woke = peer.uncork() or woke
            else:
                woke = peer.release(count) or woke
                later[peer] = still - count
        # (Nobody waits in ``settled`` after most batches: the lot is asked first, one call
        # where emptying it is several.)
        landed = bool(self._landed) and bool(self._landed.unpark_all())
        self._woke = landed or woke or self._woke

    def _fail(self, error: BaseException) -> None:
        self.error = error
        self._woke = True
        log.error("the journal cannot commit (%s: %s): stopping; nothing more is saved and "
                  "nothing unsaved is sent", type(error).__name__, error)
        self.failed.set()

    # ----- while the server runs -------------------------------------------------------------

    async def run(self) -> None:
        """Hand batches over at the end of each round of the loop until cancelled (the server
        stops); then the writer thread finishes its batch, what is still gathered is written
        here, and the journal is the caller's again."""
        instrument = self._round = _EndOfRound(self)
        trio.lowlevel.add_instrument(instrument)
        self._rounds = True
        try:
            await trio.sleep_forever()
        finally:
            self._rounds, self._round = False, None
            with contextlib.suppress(KeyError):  # removed by Trio if it ever raised
                trio.lowlevel.remove_instrument(instrument)
            if self._thread is not None:
                self._thread.stop()
                self._thread = None
            self._writing = None
            if self._ops and not self.error:
                ops, self._ops = self._ops, []
                try:
                    write(self.journal, ops)
                except Exception as exc:  # noqa: BLE001 - nobody heard of these entries
                    log.warning("entries journaled as the server stopped are lost: %s", exc)
