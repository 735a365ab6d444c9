"""Worker threads the server hands blocking work to, one thread per kind of work.

The event loop serves every table and connection; work that would hold it (a slow bot's
search, the ladder's bcrypt and standings queries) runs in a worker thread instead. One thread
per kind: that Python holds the interpreter's lock anyway, so a second thread would only take
turns with the loop more, and a flood of requests waits for the one thread, not in the loop.
"""

from __future__ import annotations

import trio


class OneThread:
    """The ``limiter`` for ``trio.to_thread.run_sync`` that lets one thread at a time do this
    kind of work, made in each Trio run on first use (a limiter belongs to the run that made
    it: the tests and benchmarks start many)."""

    __slots__ = ("_limiter",)

    def __init__(self, name: str) -> None:
        self._limiter: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar(name)

    def __call__(self) -> trio.CapacityLimiter:
        try:
            return self._limiter.get()
        except LookupError:
            limiter = trio.CapacityLimiter(1)
            self._limiter.set(limiter)
            return limiter
