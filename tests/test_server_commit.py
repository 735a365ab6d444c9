"""Group commit and the outgoing path: nothing a table says about a change leaves before the
change is committed; a lone step commits at once, steps of one round share a commit; frames go
straight to the socket, and a client that stops reading over TCP is dropped."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
import trio
import trio.testing
from test_server_support import TIME_CAP, next_of, play_hands, quick_config, tcp_connect
from tongits.protocol import SeatUpdate, State
from tongits.server import Server
from tongits.server.commit import GroupCommit
from tongits.server.peer import Peer
from tongits.server.store import SQLiteJournal


class Recorder:
    """A journal that writes down what it is asked, in one list with the peers' uncorks."""

    def __init__(self, events: list[str], fail: bool = False) -> None:
        self.events = events
        self.fail = fail

    def append(self, table: str, entry: dict[str, Any], finished: Any = None) -> None:
        self.events.append(f"append {table}")

    def close_table(self, table: str) -> None:
        self.events.append(f"close {table}")

    def commit(self) -> None:
        if self.fail:
            raise OSError("disk full")
        self.events.append("commit")

    def open_tables(self) -> list[list[dict[str, Any]]]:
        return []

    def last_table_number(self) -> int:
        return 0


class FakePeer:
    def __init__(self, name: str, events: list[str]) -> None:
        self.name, self.events = name, events

    def uncork(self) -> None:
        self.events.append(f"uncork {self.name}")


def peers(*fakes: FakePeer) -> list[Peer]:
    return cast(list[Peer], list(fakes))


@asynccontextmanager
async def running(journal: Recorder) -> AsyncIterator[GroupCommit]:
    """A ``GroupCommit`` over ``journal`` with its commit task parked, cancelled at the end."""
    commits = GroupCommit(journal)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(commits.run)
        await trio.testing.wait_all_tasks_blocked()
        yield commits
        nursery.cancel_scope.cancel()


async def test_a_lone_step_commits_at_once() -> None:
    events: list[str] = []
    async with running(Recorder(events)) as commits:
        commits.append("t1", {"kind": "move"})
        commits.hold(peers(FakePeer("ana", events)))
        # no table had a request waiting: no round is spent waiting for company
        assert events == ["append t1", "commit", "uncork ana"]
        commits.hold(peers(FakePeer("ben", events)))  # nothing journaled: out at once
        assert events[-1] == "uncork ben" and events.count("commit") == 1


async def test_steps_of_one_round_share_one_commit() -> None:
    events: list[str] = []
    async with running(Recorder(events)) as commits:
        commits.waiting = 1  # a table has a request waiting: its entry will join this commit
        commits.append("t1", {"kind": "move"})
        commits.hold(peers(FakePeer("ana", events)))
        commits.append("t2", {"kind": "move"})
        commits.hold(peers(FakePeer("ben", events), FakePeer("cai", events)))
        assert events == ["append t1", "append t2"]  # held: nobody heard yet
        await trio.testing.wait_all_tasks_blocked()
        assert events == ["append t1", "append t2", "commit", "uncork ana", "uncork ben",
                          "uncork cai"]


async def test_settled_waits_for_the_commit_of_what_was_journaled() -> None:
    events: list[str] = []
    async with running(Recorder(events)) as commits:
        commits.append("t1", {"kind": "create"})  # the lobby's entry, no step held yet
        await commits.settled()
        events.append("settled")
        assert events == ["append t1", "commit", "settled"]


async def test_a_failed_commit_stops_everything_and_lets_nothing_out() -> None:
    events: list[str] = []
    with pytest.raises(ExceptionGroup) as raised:
        async with running(Recorder(events, fail=True)) as commits:
            commits.waiting = 1
            commits.append("t1", {"kind": "move"})
            commits.hold(peers(FakePeer("ana", events)))
    (error,) = raised.value.exceptions
    assert isinstance(error, OSError) and str(error) == "disk full"
    assert events == ["append t1"]


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
                await trio.testing.wait_all_tasks_blocked()
                assert server.lobby.journal.waiting == 0  # every request handed over was taken
                nursery.cancel_scope.cancel()
    finally:
        reader.close()
        journal.close()
    assert checked == 40


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
