"""Group commit and the outgoing path: nothing a table says about a change leaves before the
change is committed; a lone step commits at once, steps of one round share a commit; frames go
straight to the socket, and a client that stops reading over TCP is dropped."""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
import trio
import trio.testing
from server_support import TIME_CAP, next_of, play_hands, quick_config, tcp_connect
from tongits.client.connection import ConnectionClosed
from tongits.engine import Move
from tongits.protocol import Codec, Mode, SeatUpdate, State
from tongits.server import Server
from tongits.server.net.peer import Peer
from tongits.server.storage.commit import ROUND_SLICE, GroupCommit
from tongits.server.storage.journal import Journal
from tongits.server.storage.store import (
    WAL_CHECKPOINT_PAGES,
    WAL_RESTART_PAGES,
    SQLiteJournal,
    StoreError,
)
from tongits.server.table.entries import CreateEntry, Entry, MoveEntry
from tongits.server.table.table import TableLogState


class Recorder:
    """A journal that writes down what it is asked, in one list with what the peers hear.
    ``gate``: a journal whose commits wait for it (``waits``: they are written by the writer
    thread)."""

    def __init__(self, events: list[str], fail: bool = False,
                 gate: threading.Event | None = None) -> None:
        self.events = events
        self.fail = fail
        self.gate = gate

    def append(self, table: str, entry: Entry, finished: Any = None) -> None:
        self.events.append(f"append {table}")

    def close_table(self, table: str) -> None:
        self.events.append(f"close {table}")

    def commit(self) -> None:
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail:
            raise sqlite3.OperationalError("database or disk is full")
        self.events.append("commit")

    def waits(self) -> bool:
        return self.gate is not None

    def open_tables(self) -> list[list[Entry]]:
        return []

    def last_table_number(self) -> int:
        return 0


class FakePeer:
    """A corked peer: what a step says is held until ``GroupCommit`` lets it out."""

    def __init__(self, name: str, events: list[str]) -> None:
        self.name, self.events = name, events
        self.frames: list[str] = []

    def say(self, what: str) -> None:
        self.frames.append(what)

    def held(self) -> int:
        return len(self.frames)

    def uncork(self) -> None:
        self.release(len(self.frames))

    def release(self, count: int) -> None:
        self.events.extend(f"{self.name} hears {f}" for f in self.frames[:count])
        del self.frames[:count]


def peers(*fakes: FakePeer) -> list[Peer]:
    return cast(list[Peer], list(fakes))


@asynccontextmanager
async def running(journal: Journal) -> AsyncIterator[GroupCommit]:
    """A ``GroupCommit`` over ``journal`` with its commit task parked, cancelled at the end."""
    commits = GroupCommit(journal)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(commits.run)
        await trio.testing.wait_all_tasks_blocked()
        yield commits
        nursery.cancel_scope.cancel()


def step(commits: GroupCommit, table: str, peer: FakePeer, what: str) -> None:
    """One table step: begin it, journal an entry, tell ``peer`` about it, hold the peer."""
    commits.step_begins()
    commits.append(table, MoveEntry(0, Move.draw()))
    peer.say(what)
    commits.hold(peers(peer))


async def test_a_peer_lets_out_exactly_the_frames_it_is_told_to() -> None:
    """``Peer.release``: the first frames held go out, in order, in one write; the rest stays
    held until ``uncork``."""
    client, server_side = trio.testing.memory_stream_pair()
    peer = Peer(server_side, Codec(Mode.TEXT), 16, "memory")
    peer.cork()
    for n in range(3):
        peer.send({"type": "pong", "id": n})
    assert peer.held() == 3
    async with trio.open_nursery() as nursery:
        nursery.start_soon(peer.run_writer)
        peer.release(2)
        assert peer.held() == 1
        first = await client.receive_some()
        assert [json.loads(line)["id"] for line in first.splitlines()] == [0, 1]
        peer.uncork()
        assert peer.held() == 0
        assert json.loads(await client.receive_some())["id"] == 2
        peer.finish()


async def test_a_lone_step_commits_at_the_end_of_its_round() -> None:
    """The batch is handed over when the loop has run every ready task: a lone step's
    messages leave in the same round, with no task woken and no waiting for company."""
    events: list[str] = []
    async with running(Recorder(events)) as commits:
        ana = FakePeer("ana", events)
        step(commits, "t1", ana, "m1")
        assert events == []  # the round is not over: nothing written, nobody heard
        await trio.lowlevel.checkpoint()  # the round ends; this task runs in the next one
        assert events == ["append t1", "commit", "ana hears m1"]
        ben = FakePeer("ben", events)
        ben.say("chat")
        commits.hold(peers(ben))  # nothing journaled: out at once
        assert events[-1] == "ben hears chat" and events.count("commit") == 1


async def test_steps_of_one_round_share_one_commit() -> None:
    """Steps of two tables in one round (here one task; in a server, the tasks of the
    requests that arrived together) are committed together, once, at the end of the round."""
    events: list[str] = []

    async def other_table() -> None:
        commits.append("t2", MoveEntry(0, Move.draw()))
        ben, cai = FakePeer("ben", events), FakePeer("cai", events)
        ben.say("m2")
        cai.say("m2")
        commits.hold(peers(ben, cai))

    async with running(Recorder(events)) as commits, trio.open_nursery() as nursery:
        nursery.start_soon(other_table)  # runs in the next round, with this task
        await trio.lowlevel.checkpoint()
        step(commits, "t1", FakePeer("ana", events), "m1")
        assert "commit" not in events  # gathered, not written: nobody heard yet
        await trio.lowlevel.checkpoint()
        assert sorted(events) == sorted(["append t1", "append t2", "commit", "ana hears m1",
                                         "ben hears m2", "cai hears m2"])
        assert events.index("commit") == 2  # one commit, before anyone heard


async def test_a_long_round_tells_its_first_steps_before_its_last() -> None:
    """A round whose steps have taken ``ROUND_SLICE`` of CPU hands its batch over after the
    step under way: two tables whose steps each take longer than that, woken in the same
    round, commit apart, and the second one's step sees the first one's peer told already
    (whichever of the two the loop runs first). Before, the first waited for the last."""
    events: list[str] = []
    ready = trio.Event()
    told_before_me: dict[str, bool] = {}

    async def table(name: str, other: str) -> None:
        await ready.wait()
        peer = FakePeer(name, events)
        step(commits, name, peer, "m")
        busy_until = time.thread_time() + 2 * ROUND_SLICE
        while time.thread_time() < busy_until:  # a long step: the deal of a new hand
            pass
        told_before_me[name] = f"{other} hears m" in events

    async with running(Recorder(events)) as commits, trio.open_nursery() as nursery:
        nursery.start_soon(table, "t1", "t2")
        nursery.start_soon(table, "t2", "t1")
        await trio.testing.wait_all_tasks_blocked()
        ready.set()  # both tables run in the next round
    assert sorted(told_before_me.values()) == [False, True]
    first, second = sorted(told_before_me, key=told_before_me.__getitem__)
    assert events == [f"append {first}", "commit", f"{first} hears m",
                      f"append {second}", "commit", f"{second} hears m"]


async def test_settled_waits_for_the_commit_of_what_was_journaled() -> None:
    events: list[str] = []
    async with running(Recorder(events)) as commits:
        commits.append("t1", CreateEntry("t1", "test", 1))  # the lobby's entry, no step held yet
        await commits.settled()
        events.append("settled")
        assert events == ["append t1", "commit", "settled"]


async def test_the_loop_serves_while_the_writer_thread_commits() -> None:
    """A commit that waits on the disk is written by a thread: meanwhile the loop
    runs on and the next steps gather into the next batch; each peer hears the messages of a
    batch once that batch is committed, in order, and nothing earlier."""
    events: list[str] = []
    disk = threading.Event()
    async with running(Recorder(events, gate=disk)) as commits:
        ana, ben = FakePeer("ana", events), FakePeer("ben", events)
        step(commits, "t1", ana, "m1")  # handed to the thread at once; its commit waits
        await trio.sleep(0.05)  # the loop is free meanwhile
        step(commits, "t1", ana, "m2")  # the next batch gathers behind it
        ben.say("chat")
        commits.hold(peers(ben))  # journaled nothing, but a batch is being written
        ana.say("chat")
        commits.hold(peers(ana))  # ana's chat line must not overtake m2
        assert events == ["append t1"]
        disk.set()
        with trio.fail_after(5):
            await commits.settled()
        assert events == ["append t1", "commit", "ana hears m1", "append t1", "commit",
                          "ana hears m2", "ana hears chat", "ben hears chat"]


async def test_a_failed_commit_lets_nothing_out_and_says_so() -> None:
    events: list[str] = []
    for gate in (None, threading.Event()):
        events.clear()
        if gate is not None:
            gate.set()
        async with running(Recorder(events, fail=True, gate=gate)) as commits:
            ana, ben = FakePeer("ana", events), FakePeer("ben", events)
            step(commits, "t1", ana, "m1")
            with trio.fail_after(5):
                await commits.failed.wait()
            step(commits, "t2", ben, "m2")  # nothing more is committed, nor let out
            ben.say("chat")
            commits.hold(peers(ben))
            await trio.sleep(0.05)
        assert isinstance(commits.error, sqlite3.OperationalError)
        assert events == ["append t1"]
        assert ana.frames == ["m1"] and ben.frames == ["m2", "chat"]


async def test_every_state_a_client_sees_is_already_committed(tmp_path: Path) -> None:
    """A real SQLite file: whenever the player holds a state, a second connection to the file
    (another process would see the same) finds every move of that state's history (but the
    engine's own automatic folds, which are not entries)."""
    path = str(tmp_path / "server.db")
    journal = SQLiteJournal(path)
    reader = sqlite3.connect(path)
    server = Server(quick_config(), journal)
    checked = 0
    try:
        with trio.fail_after(TIME_CAP):
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(server.serve)
                port = listeners[0].socket.getsockname()[1]
                async with tcp_connect(port, "Ana") as ana:
                    joined = await ana.create_table("Durable", bots=2)

                    def stored_moves() -> int:
                        (count,) = reader.execute(
                            "SELECT COUNT(*) FROM entries WHERE table_id = ? AND entry LIKE "
                            "'{\"kind\":\"move\"%'", (joined.table,)).fetchone()
                        return int(count)

                    moves_before_hand = 0
                    while checked < 40:
                        msg = await ana.receive()
                        if isinstance(msg, State):
                            played = [h for h in msg.view["history"] if not h.get("auto")]
                            assert stored_moves() >= moves_before_hand + len(played)
                            checked += 1
                            if msg.view["phase"] == "over":
                                moves_before_hand = stored_moves()
                                await ana.next_hand()
                            elif msg is ana.last_state and msg.legal:
                                await ana.move(msg.legal[-1])
                # the bots (whose steps wait for the commits) have played up to Ana's turn
                await trio.testing.wait_all_tasks_blocked()
                nursery.cancel_scope.cancel()
    finally:
        reader.close()
        journal.close()
    assert checked == 40


async def test_a_full_disk_stops_the_server_and_tells_every_client(tmp_path: Path) -> None:
    """SQLite itself says ``database or disk is full`` (the file may grow a few pages, no
    more): the player hears ``shutting_down``, the server stops on its own and says why, every
    state the player saw is in the file, and the file replays."""
    path = str(tmp_path / "server.db")
    journal = SQLiteJournal(path)
    (pages,) = journal.db.execute("PRAGMA page_count").fetchone()
    journal.db.execute(f"PRAGMA max_page_count = {pages + 8}")
    reader = sqlite3.connect(path)
    server = Server(quick_config(), journal)
    states = 0
    try:
        with trio.fail_after(TIME_CAP):
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(server.serve)
                port = listeners[0].socket.getsockname()[1]
                async with tcp_connect(port, "Ana") as ana:
                    joined = await ana.create_table("Full", bots=2)

                    def stored_moves() -> int:
                        (count,) = reader.execute(
                            "SELECT COUNT(*) FROM entries WHERE table_id = ? AND entry LIKE "
                            "'{\"kind\":\"move\"%'", (joined.table,)).fetchone()
                        return int(count)

                    moves_before_hand = 0
                    with pytest.raises(ConnectionClosed) as closed:
                        while True:
                            msg = await ana.receive()
                            if not isinstance(msg, State):
                                continue
                            played = [h for h in msg.view["history"] if not h.get("auto")]
                            assert stored_moves() >= moves_before_hand + len(played)
                            states += 1
                            if msg.view["phase"] == "over":
                                moves_before_hand = stored_moves()
                                await ana.next_hand()
                            elif msg is ana.last_state and msg.legal:
                                await ana.move(msg.legal[-1])
                assert closed.value.error is not None
                assert closed.value.error.code == "shutting_down"
                # the server stops by itself: nothing cancels this nursery
    finally:
        reader.close()
        with contextlib.suppress(StoreError):
            journal.close()
    assert states > 0
    assert isinstance(server.failure, sqlite3.OperationalError)
    assert "full" in str(server.failure)
    again = SQLiteJournal(path)
    try:
        (entries,) = again.open_tables()
        TableLogState.replay(entries)
    finally:
        again.close()


async def test_a_client_that_stops_reading_over_tcp_is_dropped() -> None:
    """A spectator whose socket stops reading: once the kernel's buffers are full, its frames
    wait in its queue; when that is full it is dropped, and the match goes on."""
    server = Server(quick_config(queue_size=8))
    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve)
            port = listeners[0].socket.getsockname()[1]
            async with tcp_connect(port, "Ana") as ana:
                joined = await ana.create_table("Watched", bots=2, auto_start=False)
                sock = trio.socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                await sock.connect(("127.0.0.1", port))
                await sock.send(
                    b'{"type":"hello","version":1,"name":"deaf","kind":"human"}\n'
                    + b'{"type":"spectate","table":"' + joined.table.encode() + b'"}\n')
                await next_of(ana, SeatUpdate, lambda u: len(server.peers) == 2)
                await ana.start()
                hands = 0
                while any(p.name == "deaf" for p in server.peers):
                    await play_hands(ana, 1)
                    await ana.next_hand()
                    hands += 1
                    assert hands < 50, "the deaf spectator was never dropped"
                await play_hands(ana, 1)  # the table plays on
                sock.close()
            nursery.cancel_scope.cancel()


async def test_steady_commits_keep_the_wal_short(tmp_path: Path) -> None:
    """Commits are made in the loop and SQLite's own checkpoints are off; the checkpointer
    copies the WAL back beside them, and the commit a long WAL is due for (``waits``) goes to
    the writer thread, which copies what is left, and the next commit starts the WAL over:
    under commits that never pause (a server busy for weeks) the write-ahead log stays a
    bounded length instead of growing for ever."""
    path = tmp_path / "server.db"
    journal = SQLiteJournal(str(path))
    events: list[str] = []
    ana = FakePeer("ana", events)
    waited = 0
    steps = 3 * WAL_RESTART_PAGES  # two pages each, estimated: about six starts over
    try:
        async with running(journal) as commits:
            commits.append("t1", CreateEntry("t1", "test", 1))
            for n in range(steps):
                waited += journal.waits()
                step(commits, "t1", ana, f"m{n}")
                with trio.fail_after(5):
                    await commits.settled()
        assert len(events) == steps  # every step heard, once committed
        assert 4 <= waited <= 8  # a wait every WAL_RESTART_PAGES pages or so, no more
        wal_pages = (path.with_name("server.db-wal").stat().st_size - 32) // (4096 + 24)
        assert wal_pages <= 2 * WAL_RESTART_PAGES
        stored = journal.db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        assert stored == 1 + steps
    finally:
        journal.close()


async def test_the_checkpointer_copies_the_wal_back_while_no_commit_waits(
        tmp_path: Path) -> None:
    """Between two starts over, the WAL is copied back into the database file by the
    journal's checkpointer, and no commit waits for it: the database file grows with what the
    commits wrote while ``waits`` stays false (a commit that checkpointed itself, as before,
    held up every change made while it waited on the disk)."""
    path = tmp_path / "server.db"
    journal = SQLiteJournal(str(path))
    ana = FakePeer("ana", [])
    try:
        async with running(journal) as commits:
            commits.append("t1", CreateEntry("t1", "test", 1))
            await commits.settled()
            before = path.stat().st_size
            for n in range(2, 2 + WAL_RESTART_PAGES // 4):  # about two copies asked
                assert not journal.waits()
                table = f"t{n}"  # a table of its own, and a page for its name of 3 KB
                commits.append(table, CreateEntry(table, "x" * 3000, n))
                ana.say(table)
                commits.hold(peers(ana))
                await commits.settled()
            with trio.fail_after(TIME_CAP):
                while path.stat().st_size <= before + 50 * 4096:  # noqa: ASYNC110 - a file's size
                    # has no event to await
                    await trio.sleep(0.01)
        assert WAL_CHECKPOINT_PAGES < WAL_RESTART_PAGES // 2
    finally:
        journal.close()
