"""External (``cmd:``) bots in the arena: a loopback server of the arena's own, and the programs.

For one chunk of deals (one arena job), ``play_hosted_chunk``:

1. starts a ``Server`` on 127.0.0.1, port 0, and opens an arena table (``arena_table``) on it
   (``server/table/arena.py``): a private table whose decks, in-process bots and stand-ins this
   module gives in-process (the ``ArenaDriver``), and whose code only the programs get;
2. starts each program once, with ``TONGITS_SERVER``, ``TONGITS_TABLE``, ``TONGITS_CODE`` and
   ``TONGITS_SEAT`` in its environment (docs/BOTS.md; ``tongits bot`` and the SDK's runners
   obey them), its output discarded and its standard error kept for the report. The program
   plays every hand of the chunk over the public protocol;
3. books each hand as the table reports it (``arena.DealBook``), in the arena's rotation order:
   position ``p`` keeps seat ``p`` and rotation ``r`` of deal ``i`` is dealt by seat
   ``(i - r) % 3`` (arena.py says why that is the in-process rotation with the seats renamed);
4. restarts a program that exits (or that the table found hung, ``HUNG_AFTER`` timeouts in a
   row, which is then killed) up to ``MAX_RESTARTS`` times, each exit counted as a crash with
   the last lines of its standard error in the standings' notes; a stand-in plays its seat
   meanwhile. After the last hand the server shuts down (programs see ``shutting_down``) and a
   program still running ``STOP_GRACE`` seconds later is killed.

Nothing waits without a bound: turns are bounded by ``--timer``, a table whose programs never
join starts with stand-ins after ``START_TIMEOUT`` seconds.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import trio
from tongits.engine import Card, Hand, deck_for
from tongits.engine.policies import get_policy
from tongits.server.app import Server
from tongits.server.config import ServerConfig
from tongits.server.lobby import join_code
from tongits.server.table import bots
from tongits.server.table.actor import Table
from tongits.server.table.arena import ArenaDriver, SeatReport, arena_table
from tongits.server.table.entries import CreateEntry

from .play import ArenaConfig, DealBook
from .specs import BotKind, BotSpec
from .stats import ROTATIONS, BotTally, ChunkResult

log = logging.getLogger("tongits.arena")

#: Restarts of a program that exits or hangs before the chunk is over, per chunk.
MAX_RESTARTS = 3
#: Seconds the table waits for every program to join before stand-ins take the empty seats.
START_TIMEOUT = 30.0
#: Seconds a program may take to exit after the server shut down.
STOP_GRACE = 3.0
#: The policy that stands in for an external bot.
STAND_IN = "greedy"
#: Lines of a crashed program's standard error quoted in the report.
STDERR_LINES = 5


def program_env(address: str, table: str, code: str, seat: int) -> dict[str, str]:
    """The variables that tell a program where to play (documented in docs/BOTS.md)."""
    return {
        "TONGITS_SERVER": address,
        "TONGITS_TABLE": table,
        "TONGITS_CODE": code,
        "TONGITS_SEAT": str(seat),
    }


class Program:
    """One external bot's process, restarted when it dies, and its report."""

    def __init__(self, spec: BotSpec, seat: int, workdir: Path) -> None:
        self.spec, self.seat = spec, seat
        self.stderr_path = workdir / f"seat{seat}.stderr"
        self.process: trio.Process | None = None
        self.life_started = 0.0
        self.crashes = 0
        self.notes: list[str] = []
        self.hung = False
        self.gave_up = False

    @property
    def expected(self) -> bool:
        """Whether this program should take its seat soon: it is starting (for less than
        ``START_TIMEOUT`` seconds), or it exited and will be restarted."""
        process = self.process
        if self.gave_up:
            return False
        if process is None:
            return True
        if process.poll() is not None:
            return self.crashes < MAX_RESTARTS
        return trio.current_time() - self.life_started < START_TIMEOUT

    async def supervise(self, env: dict[str, str], done: trio.Event,
                        hands_played: Callable[[], int]) -> None:
        """Run the program until ``done``, restarting it after an exit or a hang."""
        while not done.is_set():
            async with await trio.open_file(self.stderr_path, "wb") as stderr:
                try:
                    self.process = await trio.lowlevel.open_process(
                        self.spec.argv, env={**os.environ, **env}, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=stderr.wrapped,
                    )
                except OSError as exc:
                    self.crashes += 1
                    self.gave_up = True
                    self.notes.append(f"{self.spec}: cannot start: {exc}; a stand-in plays it")
                    return
                self.life_started = trio.current_time()
                status = await self.process.wait()
            if done.is_set():
                return
            self.crashes += 1
            what = "hung (stopped)" if self.hung else f"exited with status {status}"
            self.hung = False
            tail = _tail(self.stderr_path, STDERR_LINES)
            self.notes.append(
                f"{self.spec} (seat {self.seat}) {what} after {hands_played()} hands"
                + (f"; its last error lines: {tail}" if tail else "")
            )
            if self.crashes > MAX_RESTARTS:
                self.gave_up = True
                self.notes.append(f"{self.spec}: {MAX_RESTARTS} restarts used up; a stand-in "
                                  "plays its seat to the end of the run")
                return

    def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()

    async def stop(self) -> None:
        """Wait ``STOP_GRACE`` seconds for the program to leave, then kill it."""
        process = self.process
        if process is None:
            return
        with trio.move_on_after(STOP_GRACE):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


class HostedRun(ArenaDriver):
    """The arena's side of its table: the plan of hands, the bots, and the book of results."""

    def __init__(self, config: ArenaConfig, start: int, stop: int,
                 on_deal: Callable[[], None] | None) -> None:
        self.config = config
        self.specs = config.specs
        self.external = frozenset(
            p for p, spec in enumerate(self.specs) if spec.kind is BotKind.COMMAND
        )
        self.factories = {p: s.factory() for p, s in enumerate(self.specs) if s.in_process}
        self.plan = [(i, r) for i in range(start, stop) for r in range(ROTATIONS)]
        self.book = DealBook(config, start, stop)
        self.on_deal = on_deal
        self.next = 0
        self.done = trio.Event()
        self.programs: dict[int, Program] = {}

    @property
    def current(self) -> tuple[int, int]:
        return self.plan[self.next - 1]

    def bot_name(self, seat: int) -> str:
        return str(self.specs[seat])[:32]

    def next_deal(self) -> tuple[Sequence[Card], int] | None:
        if self.next >= len(self.plan):
            return None
        index, rotation = self.plan[self.next]
        self.next += 1
        return deck_for(self.config.seed, index), (index - rotation) % 3

    def more(self) -> bool:
        return self.next < len(self.plan)

    def policy(self, seat: int) -> bots.Policy:
        index, rotation = self.current
        return self.factories[seat](self.config.policy_seed(index, rotation, seat))

    def stand_in(self, seat: int) -> bots.Policy:
        index, rotation = self.current if self.next else (0, 0)
        return get_policy(STAND_IN, self.config.policy_seed(index, rotation, seat))

    def hand_over(self, hand: Hand, reports: Sequence[SeatReport]) -> None:
        index, rotation = self.current
        tallies = []
        for report in reports:
            tally = BotTally()
            for seconds in report.seconds:
                tally.decided(seconds)
            tally.timeouts, tally.illegal = report.timeouts, report.illegal
            tally.stand_in_hands = int(report.stood_in)
            tallies.append(tally)
        if self.book.hand(index, rotation, hand, (0, 1, 2), tallies) and self.on_deal:
            self.on_deal()

    def expected(self, seat: int) -> bool:
        program = self.programs.get(seat)
        return program is not None and not self.done.is_set() and program.expected

    def hung(self, seat: int) -> None:
        program = self.programs.get(seat)
        if program is not None:
            program.hung = True
            program.kill()

    def finished(self) -> None:
        self.done.set()

    def hands_played(self) -> int:
        return max(0, self.next - 1)

    def result(self) -> ChunkResult:
        chunk = self.book.result
        for seat, program in sorted(self.programs.items()):
            chunk.tallies[seat].crashes += program.crashes
            chunk.notes.extend(program.notes)
        return chunk


def play_hosted_chunk(config: ArenaConfig, start: int, stop: int,
                      on_deal: Callable[[], None] | None = None) -> ChunkResult:
    """Play deals ``start`` to ``stop - 1`` on a loopback server of the arena's own."""
    return trio.run(_play_hosted, config, start, stop, on_deal)


async def _play_hosted(config: ArenaConfig, start: int, stop: int,
                       on_deal: Callable[[], None] | None) -> ChunkResult:
    run = HostedRun(config, start, stop, on_deal)
    server = Server(ServerConfig(
        host="127.0.0.1", port=0, name="tongits-arena", timer=config.timer, bot_delay=0.0,
        bot_policy=STAND_IN, discovery=False, handshake_timeout=START_TIMEOUT,
    ))
    code = join_code()
    with tempfile.TemporaryDirectory(prefix="tongits-arena-") as workdir:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve)
            host, port = listeners[0].socket.getsockname()[:2]

            def make(*args: Any) -> Table:
                return arena_table(*args, driver=run, start_timeout=START_TIMEOUT)

            table = server.lobby.open(
                CreateEntry(table="", name="arena", seed=str(config.seed),
                            options=config.options, timer=config.timer, private=True,
                            code=code, auto_start=True),
                make,
            )
            for seat in sorted(run.external):
                program = Program(run.specs[seat], seat, Path(workdir))
                run.programs[seat] = program
                env = program_env(f"{host}:{port}", table.id, code, seat)
                nursery.start_soon(program.supervise, env, run.done, run.hands_played)
            await run.done.wait()
            await server.shutdown()
            async with trio.open_nursery() as stopping:
                for program in run.programs.values():
                    stopping.start_soon(program.stop)
            nursery.cancel_scope.cancel()
    return run.result()
