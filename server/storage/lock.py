"""One writer to a database: a lock file beside it, held while the journal is open.

Two servers on one file (a second `tongits-server` started in the same directory on another
port, a second `tongits play` in another terminal) each restored the same tables and journaled
moves of their own into them; the first to create a table under an id the other had used
stopped saving ("UNIQUE constraint failed") and lost what followed. The lock is an advisory
``flock`` on ``PATH.lock``, not on the database: SQLite's own locks are POSIX locks, which a
process drops when it closes any descriptor of the file, so a second descriptor of ours on the
database could be closed only after SQLite's. The kernel releases the lock when the process
ends, however it ends, so a crash leaves nothing to clean up. Readers (``tongits export``,
``sqlite3 … .backup``) take no lock. Where there is no ``fcntl`` (Windows) nothing is locked.
"""

from __future__ import annotations

import contextlib
import os

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


class DatabaseInUse(Exception):
    """Another process holds the database's lock: ``pid`` (None if it did not say)."""

    def __init__(self, path: str, pid: int | None) -> None:
        who = f"another process (pid {pid})" if pid is not None else "another process"
        super().__init__(f"{path} is in use by {who}: a database serves one server at a time")
        self.path, self.pid = path, pid


class DatabaseLock:
    """The lock of the database at ``path``, taken at once (``DatabaseInUse`` if another
    process holds it); the file names the holder's pid, for the refusal's words."""

    def __init__(self, path: str) -> None:
        self._fd: int | None = None
        if fcntl is None:
            return
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            raise DatabaseInUse(path, int(holder) if holder.isdigit() else None) from None
        except OSError:  # a file system without locks (ENOLCK): served unlocked, as before
            os.close(fd)
            return
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Let the next process have the database. The file stays: removing it would let a
        process that opened it just before take a lock on a file nobody else can find."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
