"""Where a table's log goes: the seam for persistence.

A table's state is a replay of its entries (``TableState.replay``). The table appends every
entry to its ``Journal`` *before* applying it, so a store that writes entries durably in
``append`` (SQLite, for instance) holds everything needed to rebuild every table after a crash.
``MemoryJournal`` keeps entries in memory; ``NullJournal`` forgets them.
"""

from __future__ import annotations

from typing import Any, Protocol

Entry = dict[str, Any]


class Journal(Protocol):
    """The store interface. ``append`` must not block the event loop for long: it runs inside
    the table's task. ``close_table`` says the table is gone and its entries may be archived."""

    def append(self, table: str, entry: Entry) -> None: ...

    def close_table(self, table: str) -> None: ...


class NullJournal:
    def append(self, table: str, entry: Entry) -> None:
        pass

    def close_table(self, table: str) -> None:
        pass


class MemoryJournal:
    """Entries per table id, in memory: for tests and for replay checks."""

    def __init__(self) -> None:
        self.entries: dict[str, list[Entry]] = {}
        self.closed: set[str] = set()

    def append(self, table: str, entry: Entry) -> None:
        self.entries.setdefault(table, []).append(entry)

    def close_table(self, table: str) -> None:
        self.closed.add(table)
