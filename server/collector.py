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
frees cycles that die young, such as those a closed connection leaves; survivors are not
walked again until a full collection every ``full_every`` seconds, which frees the cycles that
die old and costs a pause proportional to everything alive (0.2-0.3 s with 1,000 tables).
Nothing else in the server relies on the collector: almost all of its garbage is freed by
reference counting the moment it is dropped.
"""

from __future__ import annotations

import gc
import logging
import time

import trio

log = logging.getLogger("tongits.server")

#: Young collections still run on their own after this many net allocations, for bursts that
#: do not yield to the collector's task (restoring many tables from the journal at start-up).
BURST_THRESHOLD = 20_000

#: A threshold that is never reached: the older generations are collected only on schedule.
_NEVER = 1 << 30


class Collector:
    """Runs young collections every ``young_every`` seconds and full ones every
    ``full_every`` seconds. The collector is process-wide: only a program (``tongits-server``,
    a benchmark's server process) installs it, never a ``Server`` (tests run many in one
    process)."""

    def __init__(self, young_every: float, full_every: float) -> None:
        if young_every <= 0 or full_every <= 0:
            raise ValueError("collection intervals must be > 0")
        self.young_every = young_every
        self.full_every = full_every

    def install(self) -> None:
        """Collect and freeze what exists now (modules, classes, configuration), and stop
        CPython from collecting the older generations on its own. Call it before serving."""
        gc.collect()
        gc.freeze()
        gc.set_threshold(BURST_THRESHOLD, _NEVER, _NEVER)

    async def run(self) -> None:
        """Collect on schedule until cancelled."""
        full_at = trio.current_time() + self.full_every
        while True:
            await trio.sleep(self.young_every)
            if trio.current_time() < full_at:
                gc.collect(0)
                continue
            start = time.perf_counter()
            freed = gc.collect()
            log.info("full garbage collection: %d objects freed, %.0f ms", freed,
                     1000 * (time.perf_counter() - start))
            full_at = trio.current_time() + self.full_every
