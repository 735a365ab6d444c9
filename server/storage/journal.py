"""Where a table's log goes: the seam for persistence.

A table's state is a replay of its entries (``TableLogState.replay``; the entries are typed
values, ``table/entries.py``, which a store keeps in their ``to_dict`` form). The table
applies an entry and then ``append``s it; what the change makes the table say leaves only
once ``commit`` has made it durable (``commit.GroupCommit``), so a store that writes entries
durably in ``commit`` (SQLite, ``store.SQLiteJournal``) holds every action anyone heard of,
once, after a crash.
A move that ends a hand comes with its hand record (``finished``), stored with it.

``MemoryJournal`` keeps everything in memory (tests restart a server on it); ``NullJournal``
forgets.
"""

from __future__ import annotations

from typing import Protocol, TypedDict

from tongits.engine.wire import RecordMap

from ..table.entries import Entry


class FinishedHand(TypedDict):
    """A hand ended by the entry it is appended with: its number in the match (from 1), the
    seats' names then and its hand record (with its result)."""

    hand: int
    names: list[str]
    record: RecordMap


class Journal(Protocol):
    """The store interface.

    ``finished`` (with a move that ends a hand): a ``FinishedHand``. ``close_table`` says the
    table is gone: it is not restored any more, its hand records stay. ``open_tables`` gives
    the log of every table not closed, for a restart; ``last_table_number`` the highest ``N``
    of the table ids ``tN`` ever used, so that ids are never reused.

    ``waits`` says whether the next ``commit`` will wait on a disk (an fsync: every commit of
    a journal that syncs each one, or the checkpoint a long write-ahead log is due for). A
    server makes that batch's calls from a writer thread (``commit.GroupCommit``) and serves on
    meanwhile; every other batch it writes in its own thread, at once.
    """

    def append(self, table: str, entry: Entry, finished: FinishedHand | None = None) -> None:
        ...

    def close_table(self, table: str) -> None: ...

    def commit(self) -> None:
        """Make everything appended so far durable (``commit.GroupCommit`` calls it before
        anything is said about those entries, for one or many tables at once)."""

    def waits(self) -> bool: ...

    def open_tables(self) -> list[list[Entry]]: ...

    def last_table_number(self) -> int: ...


class NullJournal:
    def append(self, table: str, entry: Entry, finished: FinishedHand | None = None) -> None:
        pass

    def close_table(self, table: str) -> None:
        pass

    def commit(self) -> None:
        pass

    def waits(self) -> bool:
        return False

    def open_tables(self) -> list[list[Entry]]:
        return []

    def last_table_number(self) -> int:
        return 0


class MemoryJournal:
    """Entries and hand records per table id, in memory: for tests and replay checks."""

    def __init__(self) -> None:
        self.entries: dict[str, list[Entry]] = {}
        self.hands: dict[str, list[FinishedHand]] = {}
        self.closed: set[str] = set()

    def append(self, table: str, entry: Entry, finished: FinishedHand | None = None) -> None:
        self.entries.setdefault(table, []).append(entry)
        if finished is not None:
            self.hands.setdefault(table, []).append(finished)

    def close_table(self, table: str) -> None:
        self.closed.add(table)

    def commit(self) -> None:
        pass

    def waits(self) -> bool:
        return False

    def open_tables(self) -> list[list[Entry]]:
        return [list(e) for t, e in self.entries.items() if t not in self.closed]

    def last_table_number(self) -> int:
        return max((table_number(t) for t in self.entries), default=0)


def table_number(table: str) -> int:
    """``N`` of a table id ``tN`` (0 for any other id)."""
    digits = table[1:]
    return int(digits) if table.startswith("t") and digits.isdigit() else 0
