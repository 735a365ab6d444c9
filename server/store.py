"""The SQLite journal: every table's log and every finished hand, in one file.

Event-sourced: a table is the replay of its entries (``table.TableState``), so the database
holds only entries (``create``, ``sit``, ``move``…, as JSON) and, for each finished hand, its
hand record (docs/RECORD.md) with the names at the table. ``append`` adds an entry (with the
hand record it completes, all or nothing) to an open transaction that ``commit`` commits, for
one table or many at once (``commit.GroupCommit``), before any reply or broadcast about it
leaves: after ``kill -9`` at any moment, every action a client was told about is in the file,
and none twice.

WAL mode with ``synchronous=NORMAL`` survives a killed server process; ``FULL`` also survives a
power cut, at the cost of an fsync per commit. Seat tokens are stored only as SHA-256 digests
(inside ``sit`` entries). The file is read back by ``open_tables`` at start and by
``tongits export`` (``hand_records``, ``player_standings``); ``:memory:`` keeps nothing.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .journal import Entry, table_number
from .table import TableState

SCHEMA_VERSION = 1

#: The WAL is copied back into the database file (checkpointed) by the commit that makes it this
#: many pages long. The copy and its two fsyncs stall the server's one thread: 250 pages (1 MB)
#: instead of SQLite's 1,000 made each stall short enough to halve the 99th-percentile latency
#: of 1,000 busy tables (bench/server_load.py (b), 7.4/4.8 ms against 4.0/3.3 ms). A thread of
#: its own cannot do it: under steady commits its checkpoints never let the WAL restart.
WAL_CHECKPOINT_PAGES = 250

#: Compact JSON for entries and records; one encoder (``json.dumps`` with separators builds a
#: new one per call, and an entry is written for every action).
_JSON = json.JSONEncoder(separators=(",", ":"))

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created REAL NOT NULL,
    closed REAL
);
CREATE TABLE IF NOT EXISTS entries (
    table_id TEXT NOT NULL REFERENCES tables(id),
    n INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (table_id, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hands (
    table_id TEXT NOT NULL REFERENCES tables(id),
    hand INTEGER NOT NULL,
    names TEXT NOT NULL,
    record TEXT NOT NULL,
    finished REAL NOT NULL,
    PRIMARY KEY (table_id, hand)
) WITHOUT ROWID;
"""


class StoreError(Exception):
    """The database cannot be used (wrong schema version, not a tongits database)."""


class SQLiteJournal:
    """A ``Journal`` in one SQLite file (or ``:memory:``). Its calls wait on the disk
    (``blocking``): while a server runs, they are made from its journal writer thread
    (``commit.GroupCommit``), one thread at a time."""

    blocking = True

    def __init__(self, path: str, *, sync: str = "normal", readonly: bool = False) -> None:
        """Open (or create) the database; ``readonly`` opens an existing one for reading
        only (``tongits export``, safe while a server writes to it)."""
        self.path = path
        self._next: dict[str, int] = {}
        try:
            if readonly:
                uri = f"file:{urllib.parse.quote(path)}?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, isolation_level=None)
                self.db.execute("SELECT COUNT(*) FROM hands").fetchone()
                return
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: {exc}") from exc
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={'FULL' if sync == 'full' else 'NORMAL'}")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise StoreError(f"{path}: schema version {version}, this server knows "
                                 f"{SCHEMA_VERSION}")
            self.db.executescript(_SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise StoreError(f"{path}: {exc}") from exc

    def close(self) -> None:
        """Commit what is pending and close (SQLite checkpoints the WAL). If that commit fails
        (a full disk), what was pending is rolled back, the file closed, and ``StoreError``
        raised: nobody was told of uncommitted entries."""
        try:
            if self.db.in_transaction:
                self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self.db.close()
            raise StoreError(f"{self.path}: {exc}") from exc
        self.db.close()

    # ----- Journal ------------------------------------------------------------------------

    def append(self, table: str, entry: Entry, finished: dict[str, Any] | None = None) -> None:
        db = self.db
        n = self._next.get(table)
        if n is None:
            row = db.execute("SELECT MAX(n) FROM entries WHERE table_id = ?", (table,)).fetchone()
            n = 0 if row[0] is None else row[0] + 1
        line = _JSON.encode(entry)
        if not db.in_transaction:
            db.execute("BEGIN IMMEDIATE")
        if finished is None and entry.get("kind") != "create":
            # the common case, a move: one statement, which succeeds or changes nothing
            db.execute("INSERT INTO entries (table_id, n, entry) VALUES (?, ?, ?)",
                       (table, n, line))
            self._next[table] = n + 1
            return
        db.execute("SAVEPOINT entry")
        try:
            if entry.get("kind") == "create":
                db.execute("INSERT INTO tables (id, name, created) VALUES (?, ?, ?)",
                           (table, entry.get("name", ""), time.time()))
            db.execute("INSERT INTO entries (table_id, n, entry) VALUES (?, ?, ?)",
                       (table, n, line))
            if finished is not None:
                db.execute(
                    "INSERT INTO hands (table_id, hand, names, record, finished) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (table, finished["hand"], json.dumps(finished["names"]),
                     _JSON.encode(finished["record"]), time.time()),
                )
        except BaseException:
            # A full disk may have rolled the whole transaction back already: then there is
            # no savepoint left, and the error to report is the first one.
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK TO entry")
                    db.execute("RELEASE entry")
            raise
        db.execute("RELEASE entry")
        self._next[table] = n + 1

    def close_table(self, table: str) -> None:
        self.db.execute("UPDATE tables SET closed = ? WHERE id = ?", (time.time(), table))
        self._next.pop(table, None)

    def commit(self) -> None:
        """Commit the transaction that ``append`` and ``close_table`` opened, if any."""
        if self.db.in_transaction:
            self.db.execute("COMMIT")

    def open_tables(self) -> list[list[Entry]]:
        ids = [r[0] for r in self.db.execute(
            "SELECT id FROM tables WHERE closed IS NULL ORDER BY created, id")]
        return [self.entries(t) for t in ids]

    def last_table_number(self) -> int:
        return max((table_number(r[0]) for r in self.db.execute("SELECT id FROM tables")),
                   default=0)

    # ----- reading ------------------------------------------------------------------------

    def entries(self, table: str) -> list[Entry]:
        return [json.loads(r[0]) for r in self.db.execute(
            "SELECT entry FROM entries WHERE table_id = ? ORDER BY n", (table,))]

    def tables(self) -> list[dict[str, Any]]:
        """Every table ever created: id, name, created, closed (Unix times; closed None)."""
        return [{"table": r[0], "name": r[1], "created": r[2], "closed": r[3]}
                for r in self.db.execute(
                    "SELECT id, name, created, closed FROM tables ORDER BY created, id")]

    def hand_records(self, table: str | None = None) -> Iterator[dict[str, Any]]:
        """``{"table", "hand", "names", "record"}`` for every finished hand (of ``table``)."""
        query = "SELECT table_id, hand, names, record FROM hands"
        args: tuple[str, ...] = ()
        if table is not None:
            query += " WHERE table_id = ?"
            args = (table,)
        for row in self.db.execute(query + " ORDER BY finished, table_id, hand", args):
            yield {"table": row[0], "hand": row[1], "names": json.loads(row[2]),
                   "record": json.loads(row[3])}

    def player_standings(self) -> dict[str, dict[str, int]]:
        """Per player name over every stored hand: hands played, hands won, chips won."""
        out: dict[str, dict[str, int]] = {}
        for hand in self.hand_records():
            result = hand["record"].get("result") or {}
            chips = result.get("chips") or [0, 0, 0]
            for seat, name in enumerate(hand["names"]):
                row = out.setdefault(name, {"hands": 0, "wins": 0, "chips": 0})
                row["hands"] += 1
                row["chips"] += chips[seat]
                if result.get("winner") == seat:
                    row["wins"] += 1
        return out


def export(db_path: str, out_dir: str, table: str | None = None) -> list[Path]:
    """Write every finished hand (of ``table``) as ``OUT/TABLE-hand-N.json`` (a tongits-hand/1
    record, docs/RECORD.md) and ``OUT/standings.json`` (chips and wins per table, from the
    replayed logs, and per player name); returns the files written."""
    store = SQLiteJournal(db_path, readonly=True)
    try:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for hand in store.hand_records(table):
            path = out / f"{hand['table']}-hand-{hand['hand']}.json"
            path.write_text(json.dumps(hand["record"], indent=1) + "\n", encoding="utf-8")
            written.append(path)
        tables = {}
        for info in store.tables():
            if table is not None and info["table"] != table:
                continue
            entries = store.entries(info["table"])
            if entries:
                tables[info["table"]] = {**info,
                                         "standings": TableState.replay(entries).standings()}
        standings = {"tables": tables, "players": store.player_standings()}
        path = out / "standings.json"
        path.write_text(json.dumps(standings, indent=1) + "\n", encoding="utf-8")
        written.append(path)
        return written
    finally:
        store.close()
