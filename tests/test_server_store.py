"""Persistence: the SQLite journal, restart from it, export, and a server killed with SIGKILL
mid-hand then restarted on the same database."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
import trio
from server_support import TIME_CAP, memory_server, my_turn, next_of, play_hands
from tongits.client.cli import main as tongits_main
from tongits.client.connection import Connection, ConnectionClosed, open_connection
from tongits.engine import Card, Hand, HandRecord, Move, SeatView, hand_record
from tongits.engine.policies import get_policy
from tongits.protocol import HandResult, State
from tongits.server.storage.journal import FinishedHand
from tongits.server.storage.lock import DatabaseInUse
from tongits.server.storage.store import SQLiteJournal, StoreError, export
from tongits.server.table.entries import CreateEntry, DealEntry, MoveEntry, StartEntry


def test_journal_round_trip_and_closing(tmp_path: Path) -> None:
    path = str(tmp_path / "t.db")
    store = SQLiteJournal(path)
    store.append("t1", CreateEntry("t1", "A", 1))
    store.append("t1", StartEntry())
    store.append("t2", CreateEntry("t2", "B", 2))
    store.close_table("t2")
    store.close()
    again = SQLiteJournal(path)
    assert again.open_tables() == [[CreateEntry("t1", "A", 1), StartEntry()]]
    assert again.last_table_number() == 2
    again.append("t1", DealEntry())
    assert again.entries("t1")[-1] == DealEntry()
    assert again.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again.close()


def test_a_failed_hand_record_rolls_the_entry_back(tmp_path: Path) -> None:
    store = SQLiteJournal(str(tmp_path / "t.db"))
    store.append("t1", CreateEntry("t1", "A", 1))
    with pytest.raises(KeyError):
        broken = cast(FinishedHand, {"names": []})  # no "hand": the record cannot be written
        store.append("t1", MoveEntry(0, Move.draw()), broken)
    assert store.entries("t1") == [CreateEntry("t1", "A", 1)]
    store.append("t1", DealEntry())
    assert len(store.entries("t1")) == 2


@pytest.mark.parametrize("names", [["Ana", "Ben", "Cy"], ["Zoë", "Ben", "Cy"],
                                   ["A\x7fna", 'B"en', "C\\y"]])
def test_a_hand_record_is_stored_as_the_standard_library_writes_it(
    tmp_path: Path, names: list[str]
) -> None:
    """The record of a finished hand is the same text in the file whichever encoder wrote it
    (non-ASCII names and DEL escaped as ``json`` escapes them)."""
    hand = Hand([Card(i) for i in range(52)], 0)
    while not hand.over:
        hand.apply(hand.to_act, hand.legal_moves()[0])
    record = hand_record(hand, names)
    store = SQLiteJournal(str(tmp_path / "t.db"))
    store.append("t1", CreateEntry("t1", "A", 1))
    store.append("t1", MoveEntry(0, Move.draw()), {"hand": 0, "names": names, "record": record})
    store.commit()
    stored = store.db.execute("SELECT record FROM hands").fetchone()[0]
    assert stored == json.dumps(record, separators=(",", ":"))


def test_not_a_database(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is no sqlite file" * 100)
    with pytest.raises(StoreError):
        SQLiteJournal(str(bad))
    with pytest.raises(StoreError):
        SQLiteJournal(str(tmp_path / "missing.db"), readonly=True)


async def _play_restart_play(path: str) -> tuple[str, list[HandResult]]:
    """A hand and a move on a server over ``path``, then a restart, a resume and a hand more;
    returns the table and both hands' results."""
    store = SQLiteJournal(path)
    async with memory_server(store) as (_server, connect), connect("Ana") as ana:
        joined = await ana.create_table("Persist", bots=2, timer=0)
        results = await play_hands(ana, 1)
        await ana.next_hand()
        state = await my_turn(ana)
        assert state.legal
        await ana.move(state.legal[0])
        token, seen = ana.token, ana.last_state.seq if ana.last_state else None
    store.close()
    store = SQLiteJournal(path)
    async with memory_server(store) as (server, connect):
        assert list(server.lobby.tables) == [joined.table]
        async with connect("Ana", token=token, seq=seen) as ana:
            snapshot = await next_of(ana, State)
            assert snapshot.view["seat"] == 0
            results += await play_hands(ana, 1)
            assert results[1].standings["hands"] == 2
            await ana.leave()
            created = await ana.create_table("Second", bots=2)
            assert created.table != joined.table  # table ids are never reused
    store.close()
    return joined.table, results


async def test_restart_on_sqlite_then_export_and_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the real clock: the journal's writer thread works in real time."""
    path = str(tmp_path / "tongits.db")
    with trio.fail_after(TIME_CAP):
        table, results = await _play_restart_play(path)
    out = tmp_path / "out"
    assert tongits_main(["export", "--db", path, "--out", str(out), "--table", table]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == ["standings.json", f"{table}-hand-1.json",
                     f"{table}-hand-2.json"]
    for result, name in zip(results, files[1:], strict=True):
        record = json.loads((out / name).read_text())
        expected = {k: v for k, v in result.result.items()
                    if k not in ("hands", "pot_taken", "why")}
        assert record["result"] == expected
        assert tongits_main(["replay", str(out / name), "--json"]) == 0
    standings = json.loads((out / "standings.json").read_text())
    assert standings["tables"][table]["standings"]["hands"] == 2
    assert standings["tables"][table]["standings"]["chips"] == results[1].standings["chips"]
    assert standings["players"]["Ana"]["hands"] == 2
    capsys.readouterr()


# ----- kill -9 ----------------------------------------------------------------------------------


class ServerProcess:
    """``tongits-server`` in a child process on port 0; ``port`` read from its stdout."""

    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from tongits.server.cli import main; main()",
             "--db", str(db), "--port", "0", "--timer", "0", "--bot-delay", "0",
             "--grace", "600", "--log-level", "WARNING"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("listening on "), line
        self.port = int(line.rsplit(":", 1)[1])

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


async def _catch_up(conn: Connection, seq: int) -> State:
    while conn.last_state is None or conn.last_state.seq < seq:
        await conn.receive()
    return conn.last_state


async def _drive(conns: list[Connection], acked: list[dict[str, Any]], moves: int | None,
                 seq: int) -> HandResult | None:
    """Play greedy moves one at a time, in turn order, until ``moves`` were acknowledged or
    the hand is over; returns the result when it is."""
    policies = [get_policy("greedy", seed=i) for i in range(3)]
    played = 0
    while moves is None or played < moves:
        states = [await _catch_up(c, seq) for c in conns]
        view = states[0].view
        if view["phase"] == "over":
            return await next_of(conns[0], HandResult) if moves is None else None
        seat = view["to_act"]
        assert seat is not None
        state = states[seat]
        assert state.legal, (seat, state.view["phase"])
        move = policies[seat](SeatView.from_dict(state.view, state.legal))
        await conns[seat].move(move)
        acked.append({"seat": seat, **move.to_dict()})
        played += 1
        seq = state.seq + 1
    return None


async def test_server_killed_mid_hand_restarts_and_finishes_the_hand(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    acked: list[dict[str, Any]] = []
    with trio.fail_after(TIME_CAP):
        server = ServerProcess(db)
        try:
            async with open_connection("127.0.0.1", server.port, name="Ana") as ana, \
                    open_connection("127.0.0.1", server.port, name="Ben") as ben, \
                    open_connection("127.0.0.1", server.port, name="Cy") as cy:
                joined = await ana.create_table("Crash", timer=0)
                await ben.join(joined.table, seat=1)
                await cy.join(joined.table, seat=2)
                conns = [ana, ben, cy]
                await _drive(conns, acked, 11, 1)
                tokens = [c.token for c in conns]
                seqs = [c.last_state.seq if c.last_state else 0 for c in conns]
                known = [len(c.last_state.view["history"]) if c.last_state else 0
                         for c in conns]
                server.kill()  # no move in flight: the last one was acknowledged
        finally:
            if server.proc.poll() is None:
                server.kill()
        server = ServerProcess(db)
        try:
            async with open_connection("127.0.0.1", server.port, name="Ana", token=tokens[0],
                                       seq=seqs[0]) as ana, \
                    open_connection("127.0.0.1", server.port, name="Ben", token=tokens[1],
                                    seq=seqs[1]) as ben, \
                    open_connection("127.0.0.1", server.port, name="Cy", token=tokens[2],
                                    seq=seqs[2]) as cy:
                conns = [ana, ben, cy]
                for conn, seq, steps in zip(conns, seqs, known, strict=True):
                    snapshot = await next_of(conn, State)
                    assert snapshot.seq >= seq
                    assert snapshot.missed == snapshot.view["history"][steps:]
                result = await _drive(conns, acked, None, max(seqs))
        finally:
            server.kill()
    assert result is not None
    store = SQLiteJournal(str(db), readonly=True)
    (stored,) = store.hand_records(joined.table)
    store.close()
    record = HandRecord.from_dict(stored["record"])
    assert list(record.actions) == acked  # none lost, none applied twice
    hand = Hand(record.deck, record.dealer, record.options)
    for action in acked:
        hand.apply(action["seat"], Move.from_dict(action))
    assert hand.result is not None
    expected = {k: v for k, v in result.result.items() if k not in ("hands", "pot_taken", "why")}
    assert hand.result.to_dict() == expected == stored["record"]["result"]


async def test_a_second_server_on_the_same_database_is_refused(tmp_path: Path) -> None:
    """Two servers on one file each restored the same tables and journaled their own moves
    into them; the first to reuse a table id stopped saving. The second now refuses to start,
    names the first, and leaves it serving; once the first is gone (even killed), the file
    opens again."""
    db = tmp_path / "shared.db"
    first = ServerProcess(db)
    try:
        with trio.fail_after(TIME_CAP):
            second = await trio.run_process(
                [sys.executable, "-c", "from tongits.server.cli import main; "
                 "raise SystemExit(main())", "--db", str(db), "--port", "0",
                 "--log-level", "WARNING"], capture_stdout=True, capture_stderr=True,
                check=False)
            said = second.stderr.decode()
            assert second.returncode == 1 and "Traceback" not in said
            assert f"in use by another process (pid {first.proc.pid})" in said
            async with open_connection("127.0.0.1", first.port, name="Ana") as ana:
                joined = await ana.create_table("Still here", bots=2)
                await next_of(ana, State)
    finally:
        first.kill()
    again = ServerProcess(db)
    try:
        async with open_connection("127.0.0.1", again.port, name="Ana") as ana:
            assert joined.table in [t["table"] for t in await ana.list_tables()]
    finally:
        again.kill()


def test_a_journal_open_for_writing_keeps_out_another_writer_not_a_reader(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "t.db")
    store = SQLiteJournal(path)
    with pytest.raises(DatabaseInUse) as refused:
        SQLiteJournal(path)
    assert refused.value.pid == os.getpid()
    SQLiteJournal(path, readonly=True).close()  # tongits export, while a server writes
    store.close()
    SQLiteJournal(path).close()


def test_the_wal_is_checkpointed_and_stays_small(tmp_path: Path) -> None:
    """Thousands of group commits over many tables: the WAL is copied back into the database
    and reused, instead of growing with every action (a long-running server's disk)."""
    path = tmp_path / "t.db"
    store = SQLiteJournal(str(path))
    tables = [f"t{i}" for i in range(300)]
    for table in tables:
        store.append(table, CreateEntry(table, table, 1))
    store.commit()
    move = MoveEntry(1, Move.discard(Card.parse("Kh")))
    for i in range(6000):
        store.append(tables[(i * 7) % len(tables)], move)
        if i % 3 == 2:
            store.commit()
    store.commit()
    wal = path.with_name("t.db-wal")
    assert wal.stat().st_size < 8 << 20
    assert len(store.entries("t0")) == 1 + 6000 // len(tables)
    store.close()


# ----- a full disk --------------------------------------------------------------------------------


def _small_files(limit: int) -> None:
    """In the child: no file may grow past ``limit`` bytes (the kernel refuses the write; Python
    ignores SIGXFSZ), as on a disk with ``limit`` bytes left."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


async def _play_until_the_server_stops(port: int, acked: list[dict[str, Any]]) -> str:
    """Ana plays with two bots, noting each move she was answered ``ok`` for, until the
    server closes her connection; the table's id. The connection must end in ``shutting_down``."""
    with trio.fail_after(TIME_CAP):
        async with open_connection("127.0.0.1", port, name="Ana") as ana:
            joined = await ana.create_table("Full", bots=2)
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    state = await next_of(
                        ana, State, lambda s: bool(s.legal) or s.view["phase"] == "over")
                    if state.view["phase"] == "over":
                        await ana.next_hand()
                        continue
                    assert state.legal
                    move = state.legal[-1]
                    await ana.move(move)
                    acked.append(dict(move))
    assert closed.value.error is not None and closed.value.error.code == "shutting_down"
    return joined.table


def test_a_full_disk_is_one_log_line_and_exit_status_1(tmp_path: Path) -> None:
    """``tongits-server`` whose files cannot grow past 200 KB plays until a commit fails: the
    player hears ``shutting_down``, the server exits with status 1 and one error line (no
    traceback), and every move the player was answered ``ok`` for is in the file."""
    db = tmp_path / "full.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from tongits.server.cli import main; raise SystemExit(main())",
         "--db", str(db), "--port", "0", "--timer", "0", "--bot-delay", "0",
         "--log-level", "WARNING"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: _small_files(200_000),
    )
    acked: list[dict[str, Any]] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on "), line
        port = int(line.rsplit(":", 1)[1])
        table = trio.run(_play_until_the_server_stops, port, acked)
        _, err = proc.communicate(timeout=TIME_CAP)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "cannot commit" in errors[0], err
    store = SQLiteJournal(str(db))
    try:
        stored = [e.move.to_dict() for e in store.entries(table)
                  if isinstance(e, MoveEntry) and e.seat == 0]
    finally:
        store.close()
    assert len(acked) > 0
    assert stored[: len(acked)] == acked


def test_export_of_a_table_the_file_never_held_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``tongits export --table`` with a mistyped id says so and exits 1, instead of writing
    nothing and reporting "0 hand records" as if all were well."""
    path = tmp_path / "t.db"
    store = SQLiteJournal(str(path))
    store.append("t1", CreateEntry("t1", "one", 1))
    store.commit()
    store.close()
    with pytest.raises(StoreError, match="no table t9"):
        export(str(path), str(tmp_path / "out"), "t9")
    assert tongits_main(["export", "--db", str(path), "--out", str(tmp_path / "out"),
                         "--table", "t9"]) == 1
    assert "no table t9" in capsys.readouterr().err
    assert len(export(str(path), str(tmp_path / "out"), "t1")) == 1  # standings.json alone
