"""``tongits arena``: any three bots on duplicate deals, on one machine or a Dask cluster.

**Duplicate deals.** Deal ``i`` uses the deck ``deck_for(seed, i)`` and the dealer ``i % 3`` (so
the dealer rotates too). Each deal is played three times, once per *seat rotation*: in rotation
``r`` the bot given ``j``-th to ``--bots`` sits in seat ``(j + r) % 3``. Every bot therefore
plays every deal from every seat, with the same cards, against the same opponents in the same
turn order (rotations, not all six permutations: with ``a,b,b`` the other three permutations only
swap the two identical bots). ``--hands N`` is rounded up to a multiple of 3: ``ceil(N / 3)``
deals.

With an external (``cmd:``) bot the deals are played on the arena's own loopback server
(``client/arena/host.py``), where a program keeps its seat for the whole run: there rotation
``r`` keeps bot ``j`` in seat ``j`` and deals with dealer ``(i - r) % 3`` instead. That is the
same game with the seats renamed (the deal and the turn order go round from the dealer), so
each bot still gets the same cards from the same place in the turn order.

**Where the deals run.** They are independent, so the run is cut into chunks of consecutive
deals: ``--jobs N`` plays them in N local processes, ``--cluster`` on Dask workers
(``client/arena/cluster.py``); the standings are exactly those of ``--jobs 1``, timings aside
(``client/arena/stats.py`` says why).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from tongits.engine import Options, RecordError

from .play import DEFAULT_TIMER, ArenaConfig, play_hand, play_in_process, seat_of
from .specs import BotSpecError, parse_bots
from .stats import ROTATIONS, ChunkResult, Standings, standings

#: Deals per chunk at most: a chunk is the unit of progress and of work lost with a worker.
MAX_CHUNK = 50

__all__ = [
    "DEFAULT_TIMER",
    "ROTATIONS",
    "ArenaConfig",
    "Progress",
    "Standings",
    "play_chunk",
    "play_deals",
    "play_hand",
    "run",
    "run_arena",
    "seat_of",
    "write_meta",
]


def play_chunk(
    config: ArenaConfig, start: int, stop: int, on_deal: Callable[[], None] | None = None
) -> ChunkResult:
    """Play deals ``start`` to ``stop - 1`` in every rotation; ``on_deal()`` after each. With
    a ``cmd:`` bot they are played on the arena's own loopback server."""
    if config.external:
        from .host import play_hosted_chunk

        return play_hosted_chunk(config, start, stop, on_deal)
    return play_in_process(config, start, stop, on_deal)


def _play_chunk(args: tuple[ArenaConfig, int, int, Any]) -> ChunkResult:
    """A worker process's task: a chunk, each finished deal announced on the queue."""
    config, start, stop, finished = args
    return play_chunk(config, start, stop, lambda: finished.put(1))


def chunk_bounds(deals: int, parts: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, stop)`` deal ranges: at most ``MAX_CHUNK`` deals, about eight
    per worker, so that progress is smooth and the last chunks finish together."""
    size = max(1, min(MAX_CHUNK, deals // (parts * 8)))
    return [(a, min(a + size, deals)) for a in range(0, deals, size)]


def check(config: ArenaConfig) -> None:
    """``ValueError`` (a ``BotSpecError``) for a configuration no worker could play."""
    if len(config.bots) != 3:
        raise ValueError(f"three bots are needed, not {len(config.bots)}")
    for position, spec in enumerate(config.specs):
        if spec.in_process:
            spec.check(config.policy_seed(0, 0, position))
    if config.timer <= 0:
        raise ValueError("--timer must be positive: it bounds an external bot's thinking")


def run_arena(
    config: ArenaConfig,
    hands: int,
    *,
    jobs: int = 1,
    cluster: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> Standings:
    """Play ``ceil(hands / 3)`` deals in every rotation and return the standings.

    ``progress(deals_done)`` is called as deals finish. ``cluster``: a Dask scheduler's
    address, or ``local:N`` for a LocalCluster of N workers."""
    chunks = play_deals(config, hands, jobs=jobs, cluster=cluster, progress=progress)
    names = [str(s) for s in config.specs]
    return standings(names, config.seed, chunks, -(-hands // ROTATIONS))


def play_deals(
    config: ArenaConfig,
    hands: int,
    *,
    jobs: int = 1,
    cluster: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ChunkResult]:
    """The chunks of ``run_arena``'s deals, in the order they finished (``standings`` sorts
    and checks them); a tournament reads their per-deal chips."""
    check(config)
    if config.record is not None:
        Path(config.record).mkdir(parents=True, exist_ok=True)
    n_deals = -(-hands // ROTATIONS)
    done = 0

    def advance(deals: int) -> None:
        nonlocal done
        done += deals
        if progress:
            progress(done)

    if cluster is not None:
        from .cluster import play_on_cluster

        chunks = play_on_cluster(
            play_chunk, config, lambda workers: chunk_bounds(n_deals, workers), cluster, advance
        )
    elif jobs <= 1:
        chunks = [play_chunk(config, 0, n_deals, lambda: advance(1))]
    else:
        # An external program starts once per chunk: one chunk per process then.
        bounds = (
            chunk_bounds(n_deals, jobs)
            if not config.external
            else [(n_deals * k // jobs, n_deals * (k + 1) // jobs) for k in range(jobs)]
        )
        chunks = _play_in_processes(config, bounds, jobs, advance)
    return chunks


def _play_in_processes(
    config: ArenaConfig, bounds: list[tuple[int, int]], jobs: int,
    advance: Callable[[int], None],
) -> list[ChunkResult]:
    """The chunks on a pool of ``jobs`` processes; each deal is announced as it finishes (an
    external program's job is a single chunk, so chunk-by-chunk progress would stand still)."""
    context = multiprocessing.get_context()
    with context.Manager() as manager, context.Pool(jobs) as pool:
        finished = manager.Queue()
        work = [(config, a, b, finished) for a, b in bounds if b > a]
        pending = pool.map_async(_play_chunk, work)
        while not pending.ready():
            with contextlib.suppress(queue.Empty):
                advance(finished.get(timeout=0.2))
        chunks = pending.get()
        while not finished.empty():
            advance(finished.get())
    return chunks


class Progress:
    """A one-line progress bar on a stream, redrawn at most every 0.2 s; on a stream that is
    not a terminal (a log file, a pipe) only its last state, once: redrawn there, it was a
    heap of bars joined by carriage returns (seen in a bot author's ``2> arena.log``)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty()
        self.width = width
        self.start = time.monotonic()
        self.shown = 0.0

    def update(self, done: int) -> None:
        now = time.monotonic()
        if done < self.total and (now - self.shown < 0.2 or not self.live):
            return
        self.shown = now
        frac = done / self.total if self.total else 1.0
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        rate = done * ROTATIONS / elapsed if elapsed > 0 else 0.0
        self.stream.write(
            ("\r" if self.live else "")
            + f"[{bar}] {100 * frac:5.1f}% {done * ROTATIONS}/{self.total * ROTATIONS} hands "
            f"{rate:7.0f} hands/s {elapsed:6.1f}s eta {eta:6.1f}s"
        )
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def write_meta(config: ArenaConfig) -> None:
    """``arena.json`` beside the hand records: the bots, the seed, and who sat where in each
    rotation (nothing if the run records no hands)."""
    if config.record is None:
        return
    names = list(config.bots)
    seats = (
        {f"rot{r}": names for r in range(ROTATIONS)}
        if config.external
        else {f"rot{r}": [names[(s - r) % 3] for s in range(3)] for r in range(ROTATIONS)}
    )
    meta = {"bots": names, "seed": config.seed, "seats": seats}
    (Path(config.record) / "arena.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")


def read_inputs(bots: str, options: str | None) -> tuple[tuple[str, ...], Options] | None:
    """The bots and the table options of an arena command line (``--bots`` or
    ``--tournament``, ``--options``), or None once what is wrong with them is said on stderr."""
    try:
        names = tuple(str(s) for s in parse_bots(bots))
        return names, Options.from_dict(json.loads(options)) if options else Options()
    except BotSpecError as exc:
        print(f"tongits arena: {exc}", file=sys.stderr)
    except (ValueError, RecordError) as exc:
        print(f"tongits arena: bad --options: {exc}", file=sys.stderr)
    return None


def seed_value(seed: str) -> int | str:
    """``--seed`` as given: an integer when it reads as one (the deals of ``--seed 7`` are
    those of the integer 7), else the string itself."""
    return int(seed) if seed.lstrip("-").isdigit() else seed


@dataclass(frozen=True, slots=True)
class ArenaCommand:
    """What a ``tongits arena`` command line asks, with ``--bots`` (``run``) and with
    ``--tournament`` (``tournament.run``) alike: ``bots`` is the one or the other's list."""

    bots: str
    hands: int
    seed: str
    jobs: int = 1
    cluster: str | None = None
    timer: float = DEFAULT_TIMER
    record: str | None = None
    as_json: bool = False
    options: str | None = None


class ArenaResult(Protocol):
    """What an arena command prints: ``Standings`` or a tournament's ratings."""

    def to_dict(self) -> dict[str, Any]: ...

    def table(self) -> str: ...


def print_result(command: ArenaCommand, play: Callable[[], ArenaResult]) -> int:
    """Run ``play`` and print its result as a table, or one JSON line with ``--json``; a
    run that cannot start (2) or finish (1) is said on stderr. The command's exit code."""
    try:
        result = play()
    except ValueError as exc:
        print(f"tongits arena: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # ClusterError, IncompleteRun: the run could not finish
        print(f"tongits arena: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.to_dict()) if command.as_json else result.table())
    return 0


def run(command: ArenaCommand) -> int:
    """The ``tongits arena`` command: progress on stderr, the table (or one JSON line) on stdout."""
    inputs = read_inputs(command.bots, command.options)
    if inputs is None:
        return 2
    names, table_options = inputs
    config = ArenaConfig(names, seed_value(command.seed), table_options, command.record,
                         command.timer)
    bar = Progress(-(-command.hands // ROTATIONS))

    def play() -> Standings:
        result = run_arena(config, command.hands, jobs=command.jobs, cluster=command.cluster,
                           progress=bar.update)
        write_meta(config)
        return result

    return print_result(command, play)
