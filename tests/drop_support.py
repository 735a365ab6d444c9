"""Seats dropped at chosen moments, on many tables at once: the harness of the freeze tests.

Each table is three clients at a private table with no turn timer (nothing but the clients and
the disconnect notice moves such a table on). One seat closes its socket at the moment named;
the two others go on playing and note the ``seat_update`` changes of that seat: ``away`` (the
server noticed), ``stand_in`` (the grace period ended and a bot plays it), then the victim
resumes with its token and they must see ``back``.

How soon the server tells of a drop is timed by a spectator of each table in a process of its
own (``Observer``), which does nothing but read: the players' own process, busy playing dozens
of tables on a shared machine, reads the same ``away`` a few hundred milliseconds late now and
then (that was the cause of the slow notices of ``move_then_close``, where the next seat is
choosing its move when the notice arrives). Both figures are kept: ``notice`` (the observer's)
and ``seen`` (the players'). Times are ``time.monotonic()``, one clock for both processes.

Used by ``tests/test_server_liveness.py`` and by ``bench/drops.py`` (thousands of drops).
No test lives here.
"""

from __future__ import annotations

import math
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial

import trio
from tongits.client.connection import (
    Connection,
    ConnectionClosed,
    ServerError,
    open_connection,
)
from tongits.engine import Move, SeatView
from tongits.engine.policies import get_policy
from tongits.protocol import HandResult, SeatUpdate, State

#: The moments at which a seat drops.
MOMENTS = (
    "mid_turn",  # the victim is to act and closes instead
    "mid_call",  # the victim must answer a call and closes instead
    "after_hand_result",  # the victim closes as the hand ends; the others ask for the next
    "move_then_close",  # the victim sends its move and closes at once (corked, group commit)
    "with_a_move",  # the victim closes while another seat's move is being played
)

#: Seat that drops, unless the moment picks it (``mid_call``: whoever must answer).
VICTIM = 1


@dataclass
class DropOutcome:
    """What the two other seats saw of one dropped seat (``time.monotonic()`` instants), and
    when the table's observer saw ``away`` (``watched_away``; infinite without an observer)."""

    moment: str
    dropped_at: float = math.inf
    away: float = math.inf
    stand_in: float = math.inf
    back: float = math.inf
    watched_away: float = math.inf
    errors: list[str] = field(default_factory=list)

    @property
    def notice(self) -> float:
        """Seconds from the drop to ``away`` as the observer read it (the server's delay),
        else as the players read it."""
        first = self.watched_away if self.watched_away < math.inf else self.away
        return first - self.dropped_at

    @property
    def seen(self) -> float:
        """Seconds from the drop to ``away`` as the other players read it."""
        return self.away - self.dropped_at

    @property
    def frozen(self) -> bool:
        """The table did not get through ``away``, ``stand_in`` and ``back``."""
        return bool(self.errors) or not self.away <= self.stand_in <= self.back < math.inf

    def ok(self, notice_bound: float) -> bool:
        return not self.frozen and self.notice <= notice_bound


class _Table:
    """One table's drivers: three seats playing a greedy policy (calling whenever allowed in
    ``mid_call``), one of them dropping at the moment."""

    def __init__(self, port: int, moment: str, observer: Observer | None = None) -> None:
        self.port = port
        self.moment = moment
        self.observer = observer
        self.outcome = DropOutcome(moment)
        self.conns: list[Connection | None] = [None, None, None]
        self.victim: int | None = None if moment == "mid_call" else VICTIM
        self.dropped = trio.Event()
        self.standing_in = trio.Event()
        self.backs: set[int] = set()
        self.done = trio.Event()

    def _policy_move(self, state: State) -> Move | Mapping[str, object]:
        assert state.legal is not None
        if self.moment == "mid_call":
            for move in state.legal:
                if move["action"] == "call":
                    return move
        view = SeatView.from_dict(state.view, state.legal)
        return get_policy("greedy", seed=view.seat)(view)

    async def _drop(self, seat: int) -> None:
        conn = self.conns[seat]
        assert conn is not None
        self.victim = seat
        self.outcome.dropped_at = time.monotonic()
        self.dropped.set()
        await conn.aclose()

    def _note(self, seat: int, msg: SeatUpdate) -> None:
        if msg.change is None or msg.change.get("seat") != self.victim or seat == self.victim:
            return
        now, change = time.monotonic(), msg.change.get("change")
        if change == "away":
            self.outcome.away = min(self.outcome.away, now)
        elif change == "stand_in":
            self.outcome.stand_in = min(self.outcome.stand_in, now)
            self.standing_in.set()
        elif change == "back":
            self.outcome.back = min(self.outcome.back, now)
            self.backs.add(seat)
            if len(self.backs) == 2:
                self.done.set()

    def _drops_now(self, seat: int, msg: object) -> bool:
        if self.dropped.is_set():
            return False
        if self.moment == "mid_call":
            return (isinstance(msg, State) and bool(msg.legal)
                    and msg.view["phase"] == "answer")
        if seat != self.victim:
            return False
        if self.moment == "mid_turn":
            return isinstance(msg, State) and bool(msg.legal) and msg.view["turn"] >= 2
        if self.moment == "after_hand_result":
            return isinstance(msg, HandResult)
        return False

    async def _drive(self, seat: int, nursery: trio.Nursery) -> None:
        conn = self.conns[seat]
        assert conn is not None
        acted = -1
        try:
            while True:
                msg = await conn.receive()
                if isinstance(msg, SeatUpdate):
                    self._note(seat, msg)
                if self._drops_now(seat, msg):
                    await self._drop(seat)
                    return
                if isinstance(msg, HandResult):
                    nursery.start_soon(self._ask_next_hand, conn)
                elif (isinstance(msg, State) and msg.legal and msg is conn.last_state
                      and msg.seq > acted):
                    acted = msg.seq
                    move = self._policy_move(msg)
                    if (not self.dropped.is_set() and seat == self.victim
                            and self.moment == "move_then_close" and msg.view["turn"] >= 2):
                        await conn.send({"type": "move", "move": _wire(move)})
                        await self._drop(seat)
                        return
                    if (not self.dropped.is_set() and seat == (VICTIM + 1) % 3
                            and self.moment == "with_a_move" and msg.view["turn"] >= 2):
                        nursery.start_soon(self._drop, VICTIM)
                    nursery.start_soon(self._move, conn, move)
        except ConnectionClosed:
            if seat != self.victim:
                self.outcome.errors.append(f"seat {seat} was disconnected")

    async def _move(self, conn: Connection, move: Move | Mapping[str, object]) -> None:
        with suppress(*_STALE_OR_GONE):
            await conn.move(move)

    async def _ask_next_hand(self, conn: Connection) -> None:
        with suppress(*_STALE_OR_GONE):
            await conn.next_hand()

    async def _resume(self) -> None:
        """Once a bot stands in, the victim comes back with its token."""
        await self.standing_in.wait()
        assert self.victim is not None
        old = self.conns[self.victim]
        assert old is not None and old.token is not None
        async with open_connection("127.0.0.1", self.port, name=f"back{self.victim}",
                                   token=old.token, seq=old.seq):
            await self.done.wait()

    async def run(self) -> DropOutcome:
        async with trio.open_nursery() as nursery:
            async with open_connection("127.0.0.1", self.port, name="s0") as c0:
                joined = await c0.create_table(f"drop {self.moment}", timer=0, private=True)
                self.conns[0] = c0
                if self.observer is not None:
                    await self.observer.watch(joined.table, joined.code, self.outcome)
                async with open_connection("127.0.0.1", self.port, name="s1") as c1, \
                        open_connection("127.0.0.1", self.port, name="s2") as c2:
                    await c1.join(joined.table, code=joined.code)
                    self.conns[1] = c1
                    await c2.join(joined.table, code=joined.code)
                    self.conns[2] = c2
                    async with trio.open_nursery() as drivers:
                        for seat in range(3):
                            drivers.start_soon(self._drive, seat, drivers)
                        drivers.start_soon(self._resume)
                        await self.done.wait()
                        drivers.cancel_scope.cancel()
            nursery.cancel_scope.cancel()
        return self.outcome


@contextmanager
def server_process(grace: float) -> Iterator[int]:
    """A real ``tongits-server`` in a child process on a free loopback port (its port). In a
    process of its own the server sees the clients' moves, closes and next-hand requests land
    together, in one batch of events, as in the field: the freeze of issue #10.1 showed there
    (about one table in twenty) and not with the clients in the server's own process."""
    with tempfile.TemporaryDirectory() as tmp, subprocess.Popen(
        [sys.executable, "-m", "tongits.server.cli", "--port", "0", "--grace", str(grace),
         "--bot-delay", "0", "--discovery", "false", "--db", f"{tmp}/drops.db",
         "--data-dir", f"{tmp}/data",
         "--log-level", "WARNING"],
        stdout=subprocess.PIPE, text=True,
    ) as server:
        try:
            assert server.stdout is not None
            yield int(server.stdout.readline().rsplit(":", 1)[1])
        finally:
            server.terminate()


#: What a seat's request may meet on these tables: a stale state (the stand-in moved first) or
#: its own dropped connection; neither is the server's fault.
_STALE_OR_GONE = (ServerError, ConnectionClosed, trio.BrokenResourceError,
                  trio.ClosedResourceError)


def _wire(move: Move | Mapping[str, object]) -> Mapping[str, object]:
    return move.to_dict() if isinstance(move, Move) else move


async def drop_round(
    port: int, moments: tuple[str, ...], seconds_per_table: float = 60.0,
    observer: Observer | None = None,
) -> list[DropOutcome]:
    """One table per entry of ``moments``, all at once on the server at ``port`` (watched by
    ``observer`` if given); a table that does not get through ``away``, ``stand_in`` and
    ``back`` within ``seconds_per_table`` is reported with what it saw (the round goes on: it
    is not the caller's time cap)."""
    outcomes: list[DropOutcome] = []

    async def one(moment: str) -> None:
        table = _Table(port, moment, observer)
        with trio.move_on_after(seconds_per_table) as waited:
            outcomes.append(await table.run())
        if waited.cancelled_caught:
            table.outcome.errors.append("timed out")
            outcomes.append(table.outcome)

    async with trio.open_nursery() as nursery:
        for moment in moments:
            nursery.start_soon(one, moment)
    return outcomes


class Observer:
    """A spectator of every table, in a process of its own (``observe``) that only reads: it
    prints each ``away`` with the instant it read it, which this side files in the table's
    ``DropOutcome``."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self._watching: dict[str, trio.Event] = {}
        self._outcomes: dict[str, DropOutcome] = {}
        self._writing = trio.Lock()

    async def watch(self, table: str, code: str | None, outcome: DropOutcome) -> None:
        """Have the observer spectate ``table``; returns once it does."""
        assert self.process.stdin is not None
        self._watching[table] = trio.Event()
        self._outcomes[table] = outcome
        async with self._writing:
            await self.process.stdin.send_all(f"{table} {code or '-'}\n".encode())
        await self._watching[table].wait()

    async def read(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        async for chunk in self.process.stdout:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                kind, table, *rest = line.decode().split()
                if kind == "watching":
                    self._watching[table].set()
                elif kind == "away":
                    outcome = self._outcomes[table]
                    outcome.watched_away = min(outcome.watched_away, float(rest[0]))


@asynccontextmanager
async def observer_process(port: int) -> AsyncIterator[Observer]:
    """An ``Observer`` of the server at ``port``, for the duration of the block."""
    command = [sys.executable, __file__, "observe", str(port)]
    async with trio.open_nursery() as nursery:
        process = await nursery.start(partial(
            trio.run_process, command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            check=False))
        observer = Observer(process)
        nursery.start_soon(observer.read)
        try:
            yield observer
        finally:
            process.kill()


async def observe(port: int) -> None:
    """The observer's process: for each ``TABLE CODE`` line read, spectate that table and
    print ``watching TABLE``, then ``away TABLE INSTANT`` when a seat goes away; stop watching
    once it is back (so that the table can close)."""

    async def spectate(table: str, code: str | None) -> None:
        async with open_connection("127.0.0.1", port, name="observer") as conn:
            await conn.spectate(table, code)
            print("watching", table, flush=True)
            async for msg in conn:
                change = None
                if isinstance(msg, SeatUpdate) and msg.change is not None:
                    change = msg.change["change"]
                if change == "away":
                    print("away", table, time.monotonic(), flush=True)
                elif change == "back":
                    return

    stdin = trio.lowlevel.FdStream(0)
    async with trio.open_nursery() as nursery:
        buffer = b""
        async for chunk in stdin:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                table, code = line.decode().split()
                nursery.start_soon(spectate, table, None if code == "-" else code)
        nursery.cancel_scope.cancel()


if __name__ == "__main__" and sys.argv[1:2] == ["observe"]:
    trio.run(observe, int(sys.argv[2]))
