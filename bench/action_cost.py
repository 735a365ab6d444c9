"""Where a paced action's server work goes: one table played move by move over loopback.

A server in a child process (a SQLite ``:memory:`` journal, as bench/server_load.py runs it,
timer 0) opens one table with a fixed seed; three clients of this process sit at it over TCP
(binary mode) or the browser's WebSocket (JSON) and play it one action at a time, each action
sent once every seat has the state before it (paced: the server is idle when it comes). The
move is the first draw or fold offered, else the last move listed (``server_load.choose``), so
every run plays the same game. After ``--warm-up`` actions, the next ``--moves`` are the
window:

- ``--callgrind``: the child runs under valgrind's callgrind, collecting only in the window
  (``callgrind_control``); prints the server's instructions per action, a figure that does
  not depend on the machine's load (set ``PYTHONHASHSEED`` for runs to compare; with
  ``--no-gc`` the server collects no garbage, and two runs of the same code agree to a few
  dozen instructions: its young collections run on wall time, which valgrind stretches, and
  move the count by about 0.5 %);
- ``--profile FILE``: cProfile of the child in the window, saved to FILE and its top entries
  printed (own time), with the Python calls per action;
- otherwise the child's CPU per action in the window (process time).

``--against DIR`` plays the same game on a second server, run from the checkout DIR (the package
``tongits`` is that tree, through a ``PYTHONPATH`` shim, as bench/server_load.py's ``--against``),
the window cut into ``--slices`` played in turn on each server, so that both meet the same
machine (its load, the other work on its caches): both servers' CPU per action, and this
checkout's over DIR's. A build against the same source with other modules compiled (or none)
compares so, in one run. ``--against-python EXE`` runs that second server (this checkout's,
without ``--against``) on another interpreter of the same Python version, with this one's
site-packages on its path (the same packages): a distribution's build against pyenv's, say.

``--record DIR`` writes every byte each seat received, from its first ``hello`` on, to
DIR/seat0..2: two runs of the same seed compare byte for byte (``cmp``), e.g. before and
after a change meant to leave the frames as they were.

    python bench/action_cost.py --transport tcp --moves 600
    PYTHONHASHSEED=0 python bench/action_cost.py --transport ws --callgrind
    python bench/action_cost.py --profile /tmp/ws.prof --transport ws
    python bench/action_cost.py --moves 6000 --slices 12 --against /tmp/before
    python bench/action_cost.py --moves 6000 --slices 30 --against-python /usr/bin/python3.11
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import pstats
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import server_load  # the bench's own clients (bench/ is on the path of a script run in it)
import trio

#: the checkout this bench is in (``--against-python`` alone runs its server)
_CHECKOUT = Path(__file__).resolve().parent.parent

#: ``--meter``: the parts of a server action, each a method or function whose CPU time (the
#: thread's, less that of the other parts it calls) is counted under its part's name
_PARTS: dict[str, list[tuple[str, str | None, str]]] = {
    "parse": [("tongits.protocol.framing", "Codec", "next_message"),
              ("tongits.server.routes", None, "parse_client")],
    "table's task": [("tongits.server.table.actor", "Table", "_step")],
    "engine's step": [("tongits.server.table.table", "TableLogState", "apply")],
    "journal": [("tongits.server.storage.commit", "GroupCommit", "append"),
                ("tongits.server.storage.commit", None, "write")],
    "ok reply": [("tongits.server.net.peer", "Peer", "send")],
    "states (3 seats)": [("tongits.server.table.audience", "Audience", "broadcast")],
    "writes": [("tongits.server.net.peer", "Peer", "uncork"),
               ("tongits.server.net.peer", "Peer", "release")],
}


class _Meters:
    """CPU nanoseconds of each of ``_PARTS``, each part's own (what it calls of another part
    counts there)."""

    def __init__(self) -> None:
        self.ns: dict[str, int] = dict.fromkeys(_PARTS, 0)
        #: the thread's CPU nanoseconds in the window, all parts and the rest
        self.all = 0
        self._stack: list[str] = []
        self._mark = 0
        self.on = False

    def install(self) -> None:
        import importlib

        for part, places in _PARTS.items():
            for module_name, owner_name, name in places:
                module = importlib.import_module(module_name)
                owner = module if owner_name is None else getattr(module, owner_name)
                setattr(owner, name, self._wrap(part, getattr(owner, name)))

    def _wrap(self, part: str, function: Any) -> Any:
        clock, stack = time.thread_time_ns, self._stack

        def run(*args: Any, **kwargs: Any) -> Any:
            if not self.on:
                return function(*args, **kwargs)
            now = clock()
            if stack:
                self.ns[stack[-1]] += now - self._mark
            stack.append(part)
            self._mark = now
            try:
                return function(*args, **kwargs)
            finally:
                now = clock()
                self.ns[stack.pop()] += now - self._mark
                self._mark = now

        return run


async def _serve(seed: int, profile: str, meters: _Meters | None, collect: bool) -> None:
    """The child: a server on a free port with one open table, which prints the port and the
    table's id, then starts and stops its profile and meters (if any) at each line read on
    stdin. ``collect`` False: no garbage collection at all (``--no-gc``)."""
    import cProfile

    from tongits.server import Server, ServerConfig
    from tongits.server.collector import Collector
    from tongits.server.storage.store import SQLiteJournal
    from tongits.server.table.entries import CreateEntry

    config = ServerConfig(port=0, timer=0.0, bot_delay=0.0, log_level="WARNING")
    # as ``tongits-server`` does, or never (``--no-gc``)
    collector = (Collector(config.gc_young, config.gc_full) if collect
                 else Collector(math.inf, math.inf))
    collector.install()
    if not collect:
        gc.disable()
    server = Server(config, SQLiteJournal(":memory:"))
    profiler = cProfile.Profile() if profile else None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collector.run)
        listeners = await nursery.start(server.serve)
        table = server.lobby.open(CreateEntry(table="", name="bench", seed=seed))
        print(listeners[0].socket.getsockname()[1], table.id, flush=True)
        stdin = trio.lowlevel.FdStream(os.dup(0))
        for step in ("start", "stop"):
            if not await stdin.receive_some(64):
                break
            if profiler is not None and step == "start":
                profiler.enable()
            elif profiler is not None:
                profiler.disable()
                profiler.dump_stats(profile)
            if meters is not None:
                meters.on = step == "start"
                meters.all = time.thread_time_ns() - meters.all
            os.write(1, b"ok\n")
        nursery.cancel_scope.cancel()


class _Child:
    """The child server process, and its lines on stdout."""

    def __init__(self, args: argparse.Namespace, code: str = "", python: str = "") -> None:
        command = [python or sys.executable, os.path.abspath(__file__), "--child", "--seed",
                   str(args.seed)]
        env = None
        self.shim = tempfile.TemporaryDirectory(prefix="action-cost-")
        if code or python:  # ``--against``: the package ``tongits`` is that checkout
            package = os.path.join(self.shim.name, "tongits")
            os.mkdir(package)
            Path(package, "__init__.py").touch()
            for part in ("engine", "protocol", "server", "client"):
                os.symlink(os.path.join(os.path.abspath(code or _CHECKOUT), part),
                           os.path.join(package, part))
            path = [self.shim.name, *(site.getsitepackages() if python else [])]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        if args.profile:
            command += ["--profile", args.profile]
        if args.no_gc:
            command += ["--no-gc"]
        self.meter = ""
        if args.meter:
            self.meter = tempfile.mktemp(prefix="meter.", dir="/tmp")
            command += ["--meter", self.meter]
        self.callgrind = None
        if args.callgrind:
            self.callgrind = args.callgrind_out or tempfile.mktemp(prefix="callgrind.",
                                                                   dir="/tmp")
            self.keep = bool(args.callgrind_out)
            command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                       f"--callgrind-out-file={self.callgrind}", *command]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL if args.callgrind else None,
                                        env=env)
        assert self.process.stdout is not None and self.process.stdin is not None
        port, self.table = self.process.stdout.readline().decode().split()
        self.port = int(port)

    def cpu(self) -> tuple[float, float]:
        """The child's CPU seconds so far: all of it, to the nanosecond (the scheduler's count,
        summed over its threads), and the kernel's part, in the clock's ticks (10 ms here)."""
        ran = 0
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):  # a thread that has just ended
                ran += int((task / "schedstat").read_text().split()[0])
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return ran / 1e9, int(fields[12]) / os.sysconf("SC_CLK_TCK")

    def mark(self) -> None:
        """Start, then stop, the window in the child (its profile; callgrind's collection)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if self.callgrind is not None:
            on = "off" if getattr(self, "_on", False) else "on"
            subprocess.run(["callgrind_control", "-i", on, str(self.process.pid)],
                           check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            self._on = on == "on"
        self.process.stdin.write(b"go\n")
        self.process.stdin.flush()
        self.process.stdout.readline()

    def instructions(self) -> int:
        """The instructions callgrind counted, once the child has ended."""
        assert self.callgrind is not None
        total = 0
        out = Path(self.callgrind)
        for path in out.parent.glob(out.name + "*"):
            for line in path.read_text().splitlines():
                if line.startswith("totals:") or line.startswith("summary:"):
                    total = max(total, int(line.split()[1]))
            if not self.keep:
                path.unlink()
        return total


async def _play(args: argparse.Namespace, children: list[_Child], received: list[list[bytes]],
                tokens: set[bytes]) -> list[dict[str, float]]:
    """Seat three clients at each child's table and play the warm-up, then the window, in
    ``args.slices`` turns on each child (which goes first alternates): each child's CPU
    seconds in the window (``all``, of it ``system``). With ``--record``, what each seat
    received goes into ``received``, and ``tokens`` gets the seat tokens."""
    async with trio.open_nursery() as nursery:
        groups = [await _seat(args, child, nursery, received, tokens) for child in children]
        for group in groups:
            for _ in range(args.warm_up):
                await _act(group)
        windows = [dict.fromkeys(("all", "system"), 0.0) for _ in children]
        for child in children:
            child.mark()
        for turn in range(args.slices):
            moves = (turn + 1) * args.moves // args.slices - turn * args.moves // args.slices
            turns = list(zip(children, groups, windows, strict=True))
            for child, group, window in turns[::-1] if turn % 2 else turns:
                ran, system = child.cpu()
                for _ in range(moves):
                    await _act(group)
                ran_after, system_after = child.cpu()
                window["all"] += ran_after - ran
                window["system"] += system_after - system
        for child in children:
            child.mark()
        nursery.cancel_scope.cancel()
    return windows


async def _seat(args: argparse.Namespace, child: _Child, nursery: trio.Nursery,
                received: list[list[bytes]], tokens: set[bytes]) -> list[server_load.Client]:
    """Three clients seated at the child's table, each read by a task of ``nursery``."""
    group: list[server_load.Client] = []
    for seat in range(3):
        if args.transport == "ws":
            client: server_load.Client = await server_load.WebSocketClient.open(child.port)
        else:
            client = server_load.Client(await server_load.dial(child.port))
        if args.record:
            client._receive = _recording(client._receive, received[seat])  # type: ignore
        nursery.start_soon(client.read)
        await client.request({"type": "hello", "version": 1, "name": f"p{seat}",
                              "kind": "bot", "auto_next": True})
        joined = await _joined(client, child.table, seat)
        tokens.add(joined.encode())
        group.append(client)
    return group


async def _joined(client: server_load.Client, table: str, seat: int) -> str:
    """Sit ``client`` at ``seat`` of ``table``: its seat token."""
    route = client._route
    token: list[str] = []

    def keep(msg: dict[str, Any]) -> None:
        if msg["type"] == "joined":
            token.append(msg["token"])
        route(msg)

    client._route = keep  # type: ignore[method-assign]
    await client.request({"type": "join", "table": table, "seat": seat})
    client._route = route  # type: ignore[method-assign]
    return token[0]


def _recording(receive: Any, into: list[bytes]) -> Any:
    async def run() -> bytes:
        data = await receive()
        into.append(bytes(data))
        return data  # type: ignore[no-any-return]

    return run


async def _act(group: list[server_load.Client]) -> None:
    """The seat to act plays; back once every seat has the state that follows (an action
    that ends a hand is followed by the next deal: its state too)."""
    while True:
        seq = max(c.state["seq"] for c in group if c.state is not None)
        for client in group:
            await server_load.wait_newer(client, seq - 1)
        state = group[0].state
        assert state is not None
        if state["view"]["phase"] != "over":
            break
        await server_load.wait_newer(group[0], seq)  # the next deal (auto_next)
    actor = group[state["view"]["to_act"]]
    assert actor.state is not None and actor.state.get("legal"), actor.state
    await actor.send({"type": "move", "move": server_load.choose(actor.state["legal"])})
    for client in group:
        await server_load.wait_newer(client, seq)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["tcp", "ws"], default="tcp")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--warm-up", type=int, default=100, help="actions before the window")
    parser.add_argument("--moves", type=int, default=600, help="actions in the window")
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--callgrind-out", default="",
                        help="--callgrind: keep its output in this file (callgrind_annotate)")
    parser.add_argument("--profile", default="", help="cProfile the window into this file")
    parser.add_argument("--top", type=int, default=40, help="--profile: entries printed")
    parser.add_argument("--meter", nargs="?", const="yes", default="",
                        help="the server's CPU per action by part (a clock read around each "
                             "part's calls)")
    parser.add_argument("--record", default="", help="write each seat's bytes to this folder")
    parser.add_argument("--no-gc", action="store_true",
                        help="the server collects no garbage (--callgrind: repeatable counts)")
    parser.add_argument("--against", default="",
                        help="another checkout: the same game on its server, in turns")
    parser.add_argument("--against-python", default="",
                        help="the interpreter of the --against server (the same version)")
    parser.add_argument("--slices", type=int, default=0,
                        help="--against: the turns of the window on each server (default 10)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    against = bool(args.against or args.against_python)
    args.slices = args.slices or (10 if against else 1)
    if args.child:
        meters = _Meters() if args.meter else None
        if meters is not None:
            meters.install()
        trio.run(_serve, args.seed, args.profile, meters, not args.no_gc)
        if meters is not None:
            Path(args.meter).write_text(json.dumps({**meters.ns, "all": meters.all}))
        return
    if against and (args.callgrind or args.profile or args.meter or args.record):
        parser.error("--against measures CPU time only")
    # with --against, this checkout's server too imports ``tongits`` through a shim: both the
    # same way, whatever installed this one (main's editable install against a copy of main
    # through a shim gave 1.013-1.053 over TCP in 6 runs; both through shims, 0.93-1.02)
    children = [_Child(args, str(_CHECKOUT)) if against else _Child(args),
                *([_Child(args, args.against, args.against_python)] if against else [])]
    received: list[list[bytes]] = [[], [], []]
    tokens: set[bytes] = set()
    windows = trio.run(_play, args, children, received, tokens)
    for child in children:
        child.process.stdin.close()  # type: ignore[union-attr]
        child.process.wait()
    _report(args, children, windows, received, tokens)


def _report(args: argparse.Namespace, children: list[_Child], windows: list[dict[str, float]],
            received: list[list[bytes]], tokens: set[bytes]) -> None:
    """Print the window's figures (and write the record) once the children have ended."""
    moves = args.moves
    child = children[0]
    for name, spent in zip(["", " --against"], windows, strict=False):
        line = (f"{args.transport}{name}: {moves} actions after {args.warm_up} (seed "
                f"{args.seed}); server CPU {spent['all'] / moves * 1e6:.1f} µs/action "
                f"({spent['system'] / moves * 1e6:.0f} in the kernel)")
        if args.callgrind:
            line += f" (under valgrind); {child.instructions() / moves:,.0f} instructions/action"
        print(line)
    if len(windows) > 1:
        print(f"this checkout / --against: {windows[0]['all'] / windows[1]['all']:.3f} "
              f"(in {args.slices} turns each)")
    if args.record:  # the seat tokens (random) made all alike
        os.makedirs(args.record, exist_ok=True)
        for seat, chunks in enumerate(received):
            data = b"".join(chunks)
            for token in tokens:
                data = data.replace(token, b"T" * len(token))
            Path(args.record, f"seat{seat}").write_bytes(data)
    if args.meter:
        ns = json.loads(Path(child.meter).read_text())
        os.unlink(child.meter)
        rest = ns.pop("all") - sum(ns.values())
        print("the server's thread, µs per action:", ", ".join(
            f"{part} {spent / moves / 1000:.1f}"
            for part, spent in [*ns.items(), ("the rest (reads, Trio's rounds, routing)", rest)]))
    if args.profile:
        stats = pstats.Stats(args.profile)
        calls = sum(row[1] for row in stats.stats.values())  # type: ignore[attr-defined]
        print(f"{calls / moves:.0f} Python calls per action")
        stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
