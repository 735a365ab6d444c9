"""The cyclic garbage collector on the server's schedule instead of CPython's.

CPython's generational collector suits programs whose objects die young or live for good. A
server's connections are neither: each parked reader or table task holds a chain of coroutines
that lives until its connection's next message, about a second, and is then replaced. Left to
itself the collector let those chains pile up in the young generation (its allocation count is
net of frees, and old chains freed as new ones were made kept it low), then walked them all at
once: with 3,000 connections, young collections of 15-120 ms every few seconds, each one
stalling every table (measured with ``bench/server_load.py``).

So the program takes the collector over with ``Collector``: what exists at start-up is frozen
out of its reach; a young collection every ``young_every`` seconds walks only what was made
since the last one (about a millisecond's work with 3,000 connections at 20 per second) and
frees cycles that die young, such as those a closed connection leaves. It is taken in a round
of the event loop that runs anyway (``_YoungCollections``, just before the loop waits for I/O),
never by waking the loop for it: a loop asleep has made nothing to collect, and each wake-up
of an idle loop cost 0.4 ms of CPU here (caches taken over by other work meanwhile), twenty
times a second for a timer's sake on a server with few tables. Survivors are not
walked again until a full collection every ``full_every`` seconds, which frees the cycles that
die old and costs a pause proportional to everything alive (0.2-0.3 s with 1,000 tables).
Nothing else in the server relies on the collector: almost all of its garbage is freed by
reference counting the moment it is dropped.

A serving heap makes no cycles that die old (counted with ``bench/server_load.py``: after
start-up a full collection freed nothing, even once every connection had closed), so a full
collection would pause every table to find nothing. The collector first asks a copy of the
process (``os.fork``: the copy shares the heap as it is, and the server pauses only for the
fork, a few ms) how much a full collection would free (``cyclic_garbage``), and collects only
if there is something to free.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable

import trio

log = logging.getLogger("tongits.server")

#: Young collections still run on their own after this many net allocations, for bursts that
#: do not yield to the collector's task (restoring many tables from the journal at start-up).
BURST_THRESHOLD = 20_000

#: Seconds the copy of ``cyclic_garbage`` may take (a full collection of the largest heaps takes
#: well under one); past that it is killed and the server collects itself.
CHECK_TIMEOUT = 30.0

#: A threshold that is never reached: the older generations are collected only on schedule.
_NEVER = 1 << 30


async def cyclic_garbage() -> int:
    """How many objects a full collection would free now, counted in a copy of this process
    made by ``os.fork`` while the server serves on; -1 if it cannot be told. The copy closes
    every file first (whatever a finalizer run by its collection does reaches no socket or
    database of the server's), counts, says the number through a pipe and ends."""
    if not hasattr(os, "fork"):
        return -1
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return -1
    if pid == 0:  # the copy: nothing of the server's runs here
        try:
            os.closerange(0, write)
            os.closerange(write + 1, 1 << 20)
            gc.set_debug(gc.DEBUG_SAVEALL)  # counted, not freed
            os.write(write, str(gc.collect()).encode())
        finally:
            os._exit(0)
    os.close(write)
    said = b""
    try:
        async with trio.lowlevel.FdStream(read) as pipe:
            with trio.move_on_after(CHECK_TIMEOUT):  # a copy stuck on a lock a thread held
                while chunk := await pipe.receive_some():
                    said += chunk
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        await trio.to_thread.run_sync(os.waitpid, pid, 0)
    return int(said) if said.isdigit() else -1


class _YoungCollections(trio.abc.Instrument):
    """A young collection before the event loop waits for I/O, once ``every`` seconds have
    passed since the last: as often as the schedule says while the loop is busy, never on a
    wake-up of its own."""

    def __init__(self, every: float) -> None:
        self.every = every
        #: ``trio.current_time`` without the two calls that find the run's clock each round
        self._now = trio.lowlevel.current_clock().current_time
        self.due = self._now() + every

    def before_io_wait(self, timeout: float) -> None:
        now = self._now()
        if now >= self.due:
            gc.collect(0)
            self.due = now + self.every


class Collector:
    """Runs young collections every ``young_every`` seconds (in rounds of the event loop that
    run anyway) and full ones every ``full_every`` seconds. The collector is process-wide:
    only a program (``tongits-server``, a benchmark's server process) installs it, never a
    ``Server`` (tests run many in one process)."""

    def __init__(self, young_every: float, full_every: float,
                 check: Callable[[], Awaitable[int]] = cyclic_garbage) -> None:
        if young_every <= 0 or full_every <= 0:
            raise ValueError("collection intervals must be > 0")
        self.young_every = young_every
        self.full_every = full_every
        #: how many objects a full collection would free (-1: unknown), asked before each
        self.check = check

    def install(self) -> None:
        """Collect and freeze what exists now (modules, classes, configuration), and stop
        CPython from collecting the older generations on its own. Call it before serving."""
        gc.collect()
        gc.freeze()
        gc.set_threshold(BURST_THRESHOLD, _NEVER, _NEVER)

    async def run(self) -> None:
        """Collect on schedule until cancelled."""
        young = _YoungCollections(self.young_every)
        trio.lowlevel.add_instrument(young)
        try:
            await self._full_collections()
        finally:
            trio.lowlevel.remove_instrument(young)

    async def _full_collections(self) -> None:
        while True:
            await trio.sleep(self.full_every)
            found = await self.check()
            if found == 0:
                log.info("full garbage collection skipped: a copy of the heap holds no cycle")
                continue
            start = time.perf_counter()
            freed = gc.collect()
            log.info("full garbage collection: %d objects freed, %.0f ms", freed,
                     1000 * (time.perf_counter() - start))
