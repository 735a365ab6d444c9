"""The SQLite journal: every table's log and every finished hand, in one file.

Event-sourced: a table is the replay of its entries (``table.TableLogState``), so the database
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
import logging
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
from tongits.engine import Move
from tongits.engine.wire import RecordMap

from ..table.entries import CreateEntry, Entry, MoveEntry, entry_from_dict
from ..table.table import TableLogState
from .journal import FinishedHand, table_number
from .lock import DatabaseLock

log = logging.getLogger("tongits.server")

SCHEMA_VERSION = 1

#: Each time the WAL has grown about this many pages, it is copied back into the database file
#: (checkpointed) by the journal's checkpointer: a thread with a connection of its own, while the
#: server's commits go on (``_Checkpointer``). SQLite's own automatic checkpoints are off: one
#: inside an ordinary commit would stall the event loop. A checkpoint waits on the disk (two
#: fsyncs: 9 ms for 100 commits here); made by the commit that found the WAL long, as before,
#: it held up every change made meanwhile, and instant bots (bench/server_load.py (c)) played
#: 27 % fewer actions with a file than in memory.
WAL_CHECKPOINT_PAGES = 100

#: A copy made while commits go on never catches up with the last of them, and SQLite writes
#: the WAL over from its start only at a commit that finds all of it copied: so the first commit
#: after the WAL has grown about this many pages checkpoints what is left itself, from the
#: journal writer thread (``waits``) while the server serves on and no other commit is made,
#: and the next commit starts the WAL over. That copy is short (the checkpointer has copied the
#: rest), and it is made once every this many pages instead of every ``WAL_CHECKPOINT_PAGES``.
#: The file stays under about twice this many pages (a copy of the checkpointer's under way at
#: that moment can put the start over off by one round).
WAL_RESTART_PAGES = 800

#: The bytes of a WAL page (SQLite's default page size), for the estimate of ``_wal_pages``.
PAGE_BYTES = 4096

#: Compact JSON for entries and records; one encoder (``json.dumps`` with separators builds a
#: new one per call, and an entry is written for every action).
_JSON = json.JSONEncoder(separators=(",", ":"))

#: The statement of an entry (one per action).
_INSERT_ENTRY = "INSERT INTO entries (table_id, n, entry) VALUES (?, ?, ?)"

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


#: The stored JSON of each move met, by the move's id, with the move (held, so that no other
#: move takes its id; bounded: cleared when it reaches ``_MOVE_LINES_MAX``). By id, not by
#: value: a move's own hash is a dataclass's, computed in Python, and the moves played are
#: nearly all the engine's shared objects (``Move.from_dict``).
_MOVE_LINES: dict[int, tuple[Move, str]] = {}
_MOVE_LINES_MAX = 50_000


def entry_line(entry: Entry) -> str:
    """The JSON line an entry is stored as: ``entry.to_dict()`` encoded. A move, nearly every
    entry, is spliced from its move's JSON, encoded once per distinct move: converting each
    move's entry to a map and encoding it whole cost the journal writer more than its
    inserts (and the writer thread shares the interpreter with the event loop)."""
    if type(entry) is not MoveEntry:
        return _JSON.encode(entry.to_dict())
    known = _MOVE_LINES.get(id(entry.move))
    if known is None or known[0] is not entry.move:
        if len(_MOVE_LINES) >= _MOVE_LINES_MAX:
            _MOVE_LINES.clear()
        known = _MOVE_LINES[id(entry.move)] = (entry.move, _JSON.encode(entry.move.to_dict()))
    move = known[1]
    timeout = ',"timeout":true' if entry.timeout else ""
    return f'{{"kind":"move","seat":{entry.seat},"move":{move}{timeout}}}'


def _record_text(record: RecordMap) -> str:
    """The JSON a finished hand's record is stored as: ``_JSON``'s text, written by orjson
    when that is the same text, 25 times faster (a hand's record, written at every hand's
    end, cost the journal more than all the hand's moves): a record has no floats, so the
    two differ only where the standard library escapes what orjson writes as it is (any
    character beyond ASCII, and DEL), and such a record is written by the standard
    library."""
    try:
        text = orjson.dumps(record)
    except TypeError:  # what orjson refuses (an integer beyond 64 bits): as before
        return _JSON.encode(record)
    if text.isascii() and b"\x7f" not in text:
        return text.decode()
    return _JSON.encode(record)


class StoreError(Exception):
    """The database cannot be used (wrong schema version, not a tongits database, damaged)."""


#: What the server says after naming the damage in a database it will not start on.
DAMAGED_ADVICE = ("start with --skip-damaged true to serve the tables that can be read (the "
                  "others stay in the file, not served), or restore a backup; `tongits export` "
                  "copies out whatever can be read")


def empty_file_warning(path: str) -> str | None:
    """A warning if ``path`` is an existing empty file: a tongits database never is (the
    server writes its schema on creation), so it was truncated (or made by hand) and whatever
    it held is gone; the server would start on it with no table."""
    try:
        if path == ":memory:" or os.path.getsize(path) != 0:
            return None
    except OSError:
        return None
    wal = Path(path + "-wal")
    leftover = (f"; its write-ahead log {wal} ({wal.stat().st_size} bytes) is still there"
                if wal.is_file() and wal.stat().st_size else "")
    return (f"{path} is an empty file (0 bytes): if it held tables it was truncated and they "
            f"are lost{leftover}; restore a backup to get them back. Starting with no tables.")


class _Checkpointer:
    """Copies the WAL back into the database file (a PASSIVE checkpoint: what no reader still
    needs) whenever it is asked, from a thread and a connection of its own: the copy and its
    fsyncs hold up no commit, and SQLite releases the interpreter lock while it works. A failed
    copy loses nothing (the WAL holds every commit): it is logged, and the next one retries."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._asked = threading.Event()
        #: held while a copy is made, here or by ``SQLiteJournal.commit`` (``held``)
        self._copying = threading.Lock()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="journal checkpointer",
                                        daemon=True)
        self._thread.start()

    def ask(self) -> None:
        self._asked.set()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """No copy of the checkpointer's while this lasts (the one under way is waited for, the
        one asked for is dropped): a checkpoint of the journal's own then copies all the WAL,
        which a copy of the checkpointer's running beside it would leave in part to the other,
        and so the WAL would never start over."""
        with self._copying:
            self._asked.clear()
            yield

    def stop(self) -> None:
        """Finish the copy under way, if any, and close the connection."""
        self._stopping = True
        self._asked.set()
        self._thread.join()
        self._db.close()

    def _run(self) -> None:
        while True:
            self._asked.wait()
            self._asked.clear()
            if self._stopping:
                return
            try:
                with self._copying:
                    self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error as exc:
                log.warning("the journal's WAL could not be copied back (%s); retrying later",
                            exc)


class SQLiteJournal:
    """A ``Journal`` in one SQLite file (or ``:memory:``). A commit writes the WAL (no fsync with
    ``sync="normal"``), which the checkpointer copies back meanwhile; the commits that wait on
    the disk (each one with ``sync="full"``, and the one that starts a long WAL over) say so
    (``waits``) and are made from the server's journal writer thread (``commit.GroupCommit``),
    one thread at a time."""

    def __init__(self, path: str, *, sync: str = "normal", readonly: bool = False) -> None:
        """Open (or create) the database; ``readonly`` opens an existing one for reading
        only (``tongits export``, safe while a server writes to it)."""
        self.path = path
        self._sync_each = sync == "full"
        #: whether the file has a WAL to checkpoint (not ``:memory:``)
        self._wal = False
        #: the WAL's pages since it was last started over, estimated from above: each entry of
        #: a commit may change a leaf of its own, plus one page per 4 KB of what it stores
        self._wal_pages = 0
        #: ``_wal_pages`` when the checkpointer was last asked to copy the WAL back
        self._asked_at = 0
        self._checkpointer: _Checkpointer | None = None
        #: the open transaction began with the WAL due to start over: its commit makes it
        self._checkpoint_due = False
        self._next: dict[str, int] = {}
        #: a batch's first entry when it is a move (its table, number and line), written only
        #: by the batch's next write, its ``commit`` or a read of the entries: a batch of that
        #: one move (a lone action, most batches of a server that is not busy) is then one
        #: statement, which SQLite commits as a transaction of its own, without a BEGIN and a
        #: COMMIT of ours (two statements of three)
        self._lone: tuple[str, int, str] | None = None
        #: what ``load`` read, for the first ``open_tables`` and ``last_table_number``
        self._loaded: list[list[Entry]] | None = None
        self._last: int | None = None
        #: this process's hold on the file (``DatabaseInUse`` if another process writes it)
        self._lock = DatabaseLock(path) if not readonly and path != ":memory:" else None
        try:
            if readonly:
                uri = f"file:{urllib.parse.quote(path)}?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, isolation_level=None)
                self.db.execute("SELECT COUNT(*) FROM hands").fetchone()
                return
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            self._release()
            raise StoreError(f"{path}: {exc}") from exc
        try:
            mode = self.db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            self._wal = mode == "wal"
            self.db.execute(f"PRAGMA synchronous={'FULL' if sync == 'full' else 'NORMAL'}")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA wal_autocheckpoint=0")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise StoreError(f"{path}: schema version {version}, this server knows "
                                 f"{SCHEMA_VERSION}")
            self.db.executescript(_SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            self.db.close()
            self._release()
            raise StoreError(f"{path}: {exc}") from exc
        if self._wal:
            self._checkpointer = _Checkpointer(path)
        #: the cursor of every write (``append``, ``close_table``, ``commit``): one for all of
        #: them, not one made by ``Connection.execute`` for each statement of every action
        self._writes = self.db.cursor()

    def close(self) -> None:
        """Commit what is pending and close (SQLite checkpoints the WAL). If that commit fails
        (a full disk), what was pending is rolled back, the file closed, and ``StoreError``
        raised: nobody was told of uncommitted entries."""
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        try:
            self._write_lone()
            if self.db.in_transaction:
                self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):  # nothing to roll back, or the file is gone
                self.db.execute("ROLLBACK")
            self.db.close()
            self._release()
            raise StoreError(f"{self.path}: {exc}") from exc
        self.db.close()
        self._release()

    def _release(self) -> None:
        """Let another process open the file for writing (after SQLite has closed it)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ----- Journal ------------------------------------------------------------------------

    def append(self, table: str, entry: Entry, finished: FinishedHand | None = None) -> None:
        db = self._writes
        n = self._next.get(table)
        if n is None:
            row = db.execute("SELECT MAX(n) FROM entries WHERE table_id = ?", (table,)).fetchone()
            n = 0 if row[0] is None else row[0] + 1
        line = entry_line(entry)
        self._wal_pages += 1 + len(line) // PAGE_BYTES
        if finished is None and not isinstance(entry, CreateEntry):
            # the common case, a move: one statement, which succeeds or changes nothing
            if self._lone is None and not self.db.in_transaction:  # the batch's first
                self._checkpoint_due = self._wal_is_long()
                self._lone = (table, n, line)
            else:
                self._begin()
                db.execute(_INSERT_ENTRY, (table, n, line))
            self._next[table] = n + 1
            return
        self._begin()
        db.execute("SAVEPOINT entry")
        try:
            if isinstance(entry, CreateEntry):
                db.execute("INSERT INTO tables (id, name, created) VALUES (?, ?, ?)",
                           (table, entry.name, time.time()))
            db.execute(_INSERT_ENTRY, (table, n, line))
            if finished is not None:
                record = _record_text(finished["record"])
                self._wal_pages += 1 + len(record) // PAGE_BYTES
                db.execute(
                    "INSERT INTO hands (table_id, hand, names, record, finished) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (table, finished["hand"], json.dumps(finished["names"]), record,
                     time.time()),
                )
        except BaseException:
            # A full disk may have rolled the whole transaction back already: then there is
            # no savepoint left, and the error to report is the first one.
            if self.db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK TO entry")
                    db.execute("RELEASE entry")
            raise
        db.execute("RELEASE entry")
        self._next[table] = n + 1

    def close_table(self, table: str) -> None:
        self._begin()
        self._writes.execute("UPDATE tables SET closed = ? WHERE id = ?", (time.time(), table))
        self._wal_pages += 1
        self._next.pop(table, None)

    def _begin(self) -> None:
        """Open the transaction of a batch, if none is open, noting whether its commit is the
        one that checkpoints: the WAL was long when the batch began (so ``waits`` said so to
        the batch's writer; with ``sync="full"`` it says so of every batch, which does not
        make each one checkpoint)."""
        if not self.db.in_transaction:
            if self._lone is None:  # else it was noted when the batch began with it
                self._checkpoint_due = self._wal_is_long()
            self._writes.execute("BEGIN IMMEDIATE")
            self._write_lone()

    def _write_lone(self) -> None:
        """Write the move a batch began with (``_lone``), if it is held: in the transaction
        ``_begin`` has just opened, or as a transaction of its own (``commit``, ``close``).
        If the statement fails, the table's next number is read again by its next entry."""
        lone, self._lone = self._lone, None
        if lone is not None:
            try:
                self._writes.execute(_INSERT_ENTRY, lone)
            except BaseException:
                self._next.pop(lone[0], None)
                raise

    def commit(self) -> None:
        """Commit the transaction that ``append`` and ``close_table`` opened, if any (or write
        the batch's one move, ``_lone``, as a transaction of its own), and ask
        the checkpointer to copy the WAL back each ``WAL_CHECKPOINT_PAGES`` pages; if the WAL
        was ``WAL_RESTART_PAGES`` long when the transaction began (``_begin``: never in the
        middle of a batch, whose own appends do not make its commit wait), checkpoint what is
        left, so that the next commit starts the WAL over. Every checkpoint is PASSIVE: it
        copies what no reader (``tongits export``, a backup) still needs, and never waits for
        one."""
        if self._lone is not None:
            self._write_lone()
            self._wal_pages += 1
        elif self.db.in_transaction:
            self._writes.execute("COMMIT")
            self._wal_pages += 1
        if self._checkpoint_due:
            self._checkpoint_due = False
            with (self._checkpointer.held() if self._checkpointer is not None
                  else contextlib.nullcontext()):
                self.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            self._wal_pages = self._asked_at = 0
        elif (self._checkpointer is not None
              and self._wal_pages - self._asked_at >= WAL_CHECKPOINT_PAGES):
            self._asked_at = self._wal_pages
            self._checkpointer.ask()

    def waits(self) -> bool:
        """Whether the next batch's commit waits on the disk: with ``sync="full"`` each one
        (its fsync), else the one that begins with ``WAL_RESTART_PAGES`` or more in the WAL
        since it last started over (and starts it over)."""
        return self._sync_each or self._wal_is_long()

    def _wal_is_long(self) -> bool:
        return self._wal and self._wal_pages >= WAL_RESTART_PAGES

    def load(self, *, skip_damaged: bool = False) -> list[str]:
        """Read every open table's log and the table ids now, before serving, so that damage
        is found and named at start. Damage in one table's log (an unreadable page, an entry
        that is not JSON) raises ``StoreError`` naming every such table, or with
        ``skip_damaged`` leaves those tables out (in the file, not served) and returns them
        described. Damage that hides which tables exist always raises."""
        try:
            ids = [r[0] for r in self.db.execute(
                "SELECT id FROM tables WHERE closed IS NULL ORDER BY created, id")]
            last = self.last_table_number()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is damaged: its list of tables cannot be read "
                             f"({exc}); restore a backup, or copy out what can be read "
                             f"with `tongits export`") from exc
        logs: list[list[Entry]] = []
        damaged: list[str] = []
        for table in ids:
            try:
                logs.append(self.entries(table))
            except (sqlite3.DatabaseError, ValueError) as exc:
                damaged.append(f"{table} ({_damage(exc)})")
        if damaged and not skip_damaged:
            raise StoreError(f"{self.path} is damaged: the log of table "
                             f"{', '.join(damaged)} cannot be read; {DAMAGED_ADVICE}")
        self._loaded, self._last = logs, last
        return damaged

    def open_tables(self) -> list[list[Entry]]:
        loaded, self._loaded = self._loaded, None
        if loaded is not None:
            return loaded
        ids = [r[0] for r in self.db.execute(
            "SELECT id FROM tables WHERE closed IS NULL ORDER BY created, id")]
        return [self.entries(t) for t in ids]

    def last_table_number(self) -> int:
        if self._last is not None:
            return self._last
        return max((table_number(r[0]) for r in self.db.execute("SELECT id FROM tables")),
                   default=0)

    # ----- reading ------------------------------------------------------------------------

    def entries(self, table: str) -> list[Entry]:
        """The log of ``table``, read back into typed entries (``ValueError`` for one that is
        not JSON or not an entry: a damaged log). An entry appended and not yet committed is
        read too, in the transaction it opened (``_begin``)."""
        if self._lone is not None:
            self._begin()
        return [entry_from_dict(json.loads(r[0])) for r in self.db.execute(
            "SELECT entry FROM entries WHERE table_id = ? ORDER BY n", (table,))]

    def tables(self) -> list[dict[str, Any]]:
        """Every table ever created: id, name, created, closed (Unix times; closed None)."""
        return [{"table": r[0], "name": r[1], "created": r[2], "closed": r[3]}
                for r in self.db.execute(
                    "SELECT id, name, created, closed FROM tables ORDER BY created, id")]

    def hand_rows(self, table: str | None = None) -> Iterator[tuple[str, int, str, str]]:
        """``(table, hand, names JSON, record JSON)`` of every finished hand (of ``table``),
        as stored."""
        query = "SELECT table_id, hand, names, record FROM hands"
        args: tuple[str, ...] = ()
        if table is not None:
            query += " WHERE table_id = ?"
            args = (table,)
        yield from self.db.execute(query + " ORDER BY finished, table_id, hand", args)

    def hand_records(self, table: str | None = None) -> Iterator[dict[str, Any]]:
        """``{"table", "hand", "names", "record"}`` for every finished hand (of ``table``)."""
        for row in self.hand_rows(table):
            yield {"table": row[0], "hand": row[1], "names": json.loads(row[2]),
                   "record": json.loads(row[3])}

    def player_standings(self) -> dict[str, dict[str, int]]:
        """Per player name over every stored hand: hands played, hands won, chips won."""
        return _standings(self.hand_records())


def _standings(hands: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per player name over ``hands`` (``hand_records``): hands played, won, chips won."""
    out: dict[str, dict[str, int]] = {}
    for hand in hands:
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
    replayed logs, and per player name); returns the files written. From a damaged file it
    writes what can be read: each hand record or table log that cannot be is logged as a
    warning and listed in ``standings.json`` under ``skipped``; damage that stops the reading
    altogether raises ``StoreError``, and so does a ``table`` the file never held (a mistyped
    id would otherwise export nothing, and say so as if all were well)."""
    store = SQLiteJournal(db_path, readonly=True)
    store.db.text_factory = _text
    skipped: list[str] = []
    try:
        _refuse_unknown_table(store, table)
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        hands: list[dict[str, Any]] = []
        for row in store.hand_rows(table):
            try:
                hand = {"table": row[0], "hand": row[1], "names": json.loads(row[2]),
                        "record": json.loads(row[3])}
            except ValueError as exc:
                skipped.append(f"{row[0]} hand {row[1]} ({_damage(exc)})")
                continue
            hands.append(hand)
            path = out / f"{hand['table']}-hand-{hand['hand']}.json"
            path.write_text(json.dumps(hand["record"], indent=1) + "\n", encoding="utf-8")
            written.append(path)
        tables = {}
        for info in store.tables():
            if table is not None and info["table"] != table:
                continue
            try:
                entries = store.entries(info["table"])
                if entries:
                    tables[info["table"]] = {
                        **info, "standings": TableLogState.replay(entries).standings()}
            except Exception as exc:  # noqa: BLE001 - a damaged log: skipped and named
                skipped.append(f"{info['table']} log ({_damage(exc)})")
        for what in skipped:
            log.warning("%s: cannot read %s; skipped", db_path, what)
        standings: dict[str, Any] = {"tables": tables, "players": _standings(hands)}
        if skipped:
            standings["skipped"] = skipped
        path = out / "standings.json"
        path.write_text(json.dumps(standings, indent=1) + "\n", encoding="utf-8")
        written.append(path)
        return written
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{db_path} is damaged past reading ({exc}); restore a backup") from exc
    finally:
        store.close()


def _refuse_unknown_table(store: SQLiteJournal, table: str | None) -> None:
    """``StoreError`` if ``table`` is named and the file never held it."""
    if table is not None and table not in (t["table"] for t in store.tables()):
        raise StoreError(f"{store.path} holds no table {table}")


def _text(data: bytes) -> str:
    """A text column as read by ``export``: a damaged page can hold bytes that are not UTF-8,
    which become a text no JSON reader accepts (the row is then skipped and named), instead
    of an error that would end the reading of every row after it."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "<not UTF-8: damaged>"


def _damage(exc: BaseException) -> str:
    """What is wrong, in a few words, for a log line that names the damaged part."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} at character {exc.pos}"
    return str(exc) or type(exc).__name__
