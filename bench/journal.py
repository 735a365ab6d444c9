"""The SQLite journal's own cost per action, apart from the server: ``tables`` tables take turns
to journal one move each, ``batch`` tables' moves per commit (a busy server's round commits the
actions of the one or two tables that stepped in it), for ``seconds`` of main-thread CPU.

It prints the CPU of the thread that appends and commits (the server's event loop) per action,
the CPU of the whole process (the checkpointer's thread too) per action, and the WAL's size at
the end. Run it next to a copy of another commit (``PYTHONPATH=that/checkout python
bench/journal.py``) to compare two journals on this machine's disk without the event loop's
noise around them.

    python bench/journal.py                       # 1,000 tables, a file, one table per commit
    python bench/journal.py --tables 3000 --batch 4
    python bench/journal.py --db :memory:
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from tongits.engine import Move
from tongits.engine.cards import Card
from tongits.server.storage.store import SQLiteJournal
from tongits.server.table.entries import CreateEntry, MoveEntry


def moves() -> list[MoveEntry]:
    """The entries the tables journal in turn: a draw, then three discards."""
    cards = [Card.parse(text) for text in ("7H", "KS", "2D", "TC")]
    return [MoveEntry(0, Move.draw()), *(MoveEntry(s, Move.discard(c))
                                         for s, c in enumerate(cards[:3]))]


def run(path: str, tables: int, batch: int, seconds: float) -> dict[str, float]:
    journal = SQLiteJournal(path)
    names = [f"t{n + 1}" for n in range(tables)]
    for name in names:
        journal.append(name, CreateEntry(name, name, 1))
    journal.commit()
    entries = moves()
    actions = 0
    turn = 0
    # a warm-up: every table's last page written once, as on a server that has run a while
    for name in names:
        journal.append(name, entries[0])
    journal.commit()
    thread0, process0, wall0 = time.thread_time(), time.process_time(), time.perf_counter()
    while time.thread_time() - thread0 < seconds:
        for _ in range(batch):
            journal.append(names[turn % tables], entries[turn % len(entries)])
            turn += 1
        journal.commit()
        actions += batch
    thread, process = time.thread_time() - thread0, time.process_time() - process0
    wall = time.perf_counter() - wall0
    wal = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
    journal.close()
    return {"actions": actions, "loop_us_per_action": round(thread / actions * 1e6, 1),
            "process_us_per_action": round(process / actions * 1e6, 1),
            "actions_per_s": round(actions / wall), "wal_kb_at_end": wal // 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=1, help="moves per commit")
    parser.add_argument("--seconds", type=float, default=5.0, help="main-thread CPU seconds")
    parser.add_argument("--db", default="file", help='"file" (a new one) or ":memory:"')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tongits-journal-") as tmp:
        path = os.path.join(tmp, "j.db") if args.db == "file" else args.db
        report = run(path, args.tables, args.batch, args.seconds)
    print(f"journal [{args.db}] {args.tables} tables, {args.batch} per commit: "
          f"{report['loop_us_per_action']} µs per action in the loop's thread, "
          f"{report['process_us_per_action']} µs in the process, "
          f"{report['actions_per_s']} actions/s, WAL {report['wal_kb_at_end']} KB at the end")
    print(json.dumps({"db": args.db, "tables": args.tables, "batch": args.batch, **report}))


if __name__ == "__main__":
    main()
