"""Soak test: N tables of bots for T minutes against a ``tongits-server`` process.

Each table has one remote bot (a ``Connection`` playing the greedy policy from its seat's view)
and two server bots. Now and then a remote bot drops its connection and resumes its seat with
its token, as a player on flaky Wi-Fi would. The server runs in a child process with a SQLite
database in a temporary directory.

    python bench/soak.py --tables 200 --minutes 3

Prints hands played, errors, reconnects, and the server's memory (RSS) at the start (all tables
seated) and at the end; the last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from tongits.client.connection import Connection, ConnectionClosed, ServerError, open_connection
from tongits.engine import SeatView
from tongits.engine.policies import get_policy
from tongits.protocol import Error, HandResult, State


@dataclass
class Figures:
    hands: int = 0
    moves: int = 0
    errors: int = 0
    reconnects: int = 0
    error_codes: dict[str, int] = field(default_factory=dict)

    def error(self, code: str) -> None:
        self.errors += 1
        self.error_codes[code] = self.error_codes.get(code, 0) + 1


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class _SoakBot:
    """One remote bot's seat across its connections: the token and the last ``seq`` it
    resumes with, and how it plays (``greedy``, thinking up to ``think`` seconds)."""

    def __init__(self, index: int, figures: Figures, stop: trio.Event, drop_chance: float,
                 think: float) -> None:
        self.index, self.figures, self.stop = index, figures, stop
        self.drop_chance, self.think = drop_chance, think
        self.rng = random.Random(index)
        self.policy = get_policy("greedy", seed=index)
        self.token: str | None = None
        self.seq: int | None = None

    async def sit(self, conn: Connection) -> None:
        """Create the table with two server bots, or note that the seat was resumed."""
        if self.token is None:
            await conn.create_table(f"soak {self.index}", bots=2, timer=30)
            self.token = conn.token
        else:
            self.figures.reconnects += 1

    async def play(self, conn: Connection) -> None:
        """Play until ``stop``, or until the bot drops the connection on purpose."""
        while not self.stop.is_set():
            msg = None
            with trio.move_on_after(1):
                msg = await conn.receive()
            if msg is None or self.stop.is_set():
                continue
            if isinstance(msg, State):
                self.seq = msg.seq
                await self._move(conn, msg)
            elif isinstance(msg, HandResult):
                self.seq = msg.seq
                self.figures.hands += 1
                if self.rng.random() < self.drop_chance:
                    return  # drop the connection; resume with the token
                await conn.next_hand()
            elif isinstance(msg, Error):
                self.figures.error(msg.code)

    async def _move(self, conn: Connection, msg: State) -> None:
        if not msg.legal or msg is not conn.last_state:
            return
        if self.think:
            await trio.sleep(self.think * self.rng.random())
        if conn.last_state is not msg:
            return
        await conn.move(self.policy(SeatView.from_dict(msg.view, msg.legal)))
        self.figures.moves += 1


async def table_bot(port: int, index: int, figures: Figures, stop: trio.Event,
                    seated: trio.Semaphore, drop_chance: float, think: float) -> None:
    """One remote bot: create a table with two server bots, play until ``stop``, sometimes
    drop the connection and resume with the token."""
    bot = _SoakBot(index, figures, stop, drop_chance, think)
    first = True
    while not stop.is_set():
        try:
            async with open_connection("127.0.0.1", port, name=f"soak{index}", kind="bot",
                                       token=bot.token, seq=bot.seq, connect_timeout=30) as conn:
                await bot.sit(conn)
                if first:
                    seated.release()
                    first = False
                await bot.play(conn)
        except* ServerError as group:
            for exc in group.exceptions:
                assert isinstance(exc, ServerError)
                figures.error(exc.code)
            await trio.sleep(1)
        except* (ConnectionClosed, OSError, trio.BrokenResourceError, trio.TooSlowError) as group:
            figures.error(type(group.exceptions[0]).__name__)
            await trio.sleep(1)


async def soak(port: int, pid: int, tables: int, seconds: float, drop_chance: float,
               think: float) -> dict[str, Any]:
    figures = Figures()
    stop = trio.Event()
    seated = trio.Semaphore(0)
    async with trio.open_nursery() as nursery:
        for i in range(tables):
            nursery.start_soon(table_bot, port, i, figures, stop, seated, drop_chance, think)
            if i % 50 == 49:
                await trio.sleep(0.05)
        for _ in range(tables):
            await seated.acquire()
        rss_start = rss_kb(pid)
        started = time.monotonic()
        hands_at_start = figures.hands
        next_report = 30.0
        while time.monotonic() - started < seconds:
            await trio.sleep(1)
            if time.monotonic() - started >= next_report:
                next_report += 30
                print(f"  {time.monotonic() - started:5.0f} s: hands {figures.hands}, moves "
                      f"{figures.moves}, errors {figures.errors}, reconnects "
                      f"{figures.reconnects}, server RSS {rss_kb(pid) / 1024:.1f} MiB",
                      flush=True)
        stop.set()
        rss_end = rss_kb(pid)
        nursery.cancel_scope.cancel()
    elapsed = time.monotonic() - started
    return {
        "tables": tables,
        "seconds": round(elapsed, 1),
        "hands": figures.hands,
        "hands_in_window": figures.hands - hands_at_start,
        "moves": figures.moves,
        "errors": figures.errors,
        "error_codes": figures.error_codes,
        "reconnects": figures.reconnects,
        "rss_start_kb": rss_start,
        "rss_end_kb": rss_end,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--bot-delay", type=float, default=0.5, help="server bots' delay, s")
    parser.add_argument("--think", type=float, default=1.0,
                        help="the remote bot waits up to this many seconds before a move")
    parser.add_argument("--drop", type=float, default=0.2,
                        help="chance that a remote bot drops and resumes after a hand")
    parser.add_argument("--gc-full", type=float, default=600.0,
                        help="the server's seconds between full garbage collections")
    parser.add_argument("--log-level", default="WARNING", help="the server's log level")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "soak.db"
        proc = subprocess.Popen(
            [sys.executable, "-c", "from tongits.server.cli import main; main()",
             "--db", str(db), "--port", "0", "--bot-delay", str(args.bot_delay),
             "--max-connections", "20000", "--max-tables", "20000", "--log-level", args.log_level,
             "--gc-full", str(args.gc_full)],
            stdout=subprocess.PIPE, text=True,
        )
        try:
            assert proc.stdout is not None
            port = int(proc.stdout.readline().rsplit(":", 1)[1])
            figures = trio.run(soak, port, proc.pid, args.tables, args.minutes * 60,
                               args.drop, args.think)
            figures["db_mb"] = round(db.stat().st_size / 1e6, 1)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print(f"tables {figures['tables']} for {figures['seconds']} s: {figures['hands']} hands, "
          f"{figures['moves']} remote moves, {figures['errors']} errors, "
          f"{figures['reconnects']} reconnects; server RSS "
          f"{figures['rss_start_kb'] / 1024:.1f} MiB at start, "
          f"{figures['rss_end_kb'] / 1024:.1f} MiB at end")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
