"""The anchor: boardgame.io's server CPU per action over ours, in one run.

boardgame.io 0.50.2 (Node, socket.io over WebSocket) serves a tongits-sized game
(``anchor_bgio/game.js``: three players, a 52-card deck, a hand each that only its player
sees, a turn of two moves) to three socket.io clients per match (``anchor_bgio/load.js``);
our server serves tongits to three clients per table, over TCP (binary mode) and as the
browser seat does (JSON over a WebSocket), with ``bench/server_load.py``'s clients. The same
traffic on both: paced (each table acts once a second on a fixed schedule spread over the
second, after an untimed warm-up) and flat out (every table's player to move acts the moment
it hears its turn; ours has one client and two server bots a table). Each server runs in a
child process on the servers' core, the clients on the other (as in server_load.py); its
CPU time (user + system, from /proc) over the window, divided by the actions played there,
and how many times its event loop slept per action (``server_load.wakes``, the voluntary
context switches of its main thread: Node's loop and ours alike). Paced, a server at a few
hundred actions a second sleeps between most of them and each action pays for waking to cold
caches, so its CPU per action is higher at 300 tables than at 1,000, where the loop is more
often still awake: the figure to read beside the CPU, for both servers, when the two scenarios
disagree.

Every scenario's runs are alternated (boardgame.io, ours over TCP, ours over a WebSocket,
then the reverse order in the next rep), and each ratio is the median of the reps' ratios:

    boardgame.io's CPU per action / ours      in memory: TCP and WebSocket rows
    boardgame.io FlatFile / our SQLite file   durable (TCP)

    python bench/anchor.py                         # paced 300, paced 1000, flat 300; 4 reps
    python bench/anchor.py --reps 2 --seconds 10 --paced 300 --flat 300 --no-durable

boardgame.io is installed by ``npm install`` in ``bench/anchor_bgio`` (its ``node_modules`` is
not part of the project); without Node or that folder the anchor is skipped, and says so. The
last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import server_load as load

ANCHOR = Path(__file__).resolve().parent / "anchor_bgio"


@dataclass(frozen=True)
class Scenario:
    mode: str  # "paced" or "flat"
    tables: int
    durable: bool

    @property
    def label(self) -> str:
        store = "file" if self.durable else "memory"
        return f"{self.mode} {self.tables} ({store})"


def missing() -> str | None:
    """Why the anchor cannot run here, or None."""
    if shutil.which("node") is None:
        return "no `node` on PATH"
    if not (ANCHOR / "node_modules" / "boardgame.io").is_dir():
        return (f"boardgame.io is not installed: run `npm install` in {ANCHOR} (it needs the npm "
                "registry)")
    return None


def _pinned(pid: int, cpus: set[int]) -> None:
    if cpus:
        os.sched_setaffinity(pid, cpus)


def bgio(scenario: Scenario, seconds: float) -> dict[str, float]:
    """One boardgame.io run: its server's CPU µs per action, the actions, p99 (paced)."""
    with tempfile.TemporaryDirectory(prefix="tongits-anchor-") as tmp:
        store = ["file", tmp] if scenario.durable else ["memory"]
        server = subprocess.Popen(["node", "server.js", *store], cwd=ANCHOR,
                                  stdout=subprocess.PIPE, text=True)
        clients: subprocess.Popen[str] | None = None
        try:
            assert server.stdout is not None
            port = ""
            while not port:
                line = server.stdout.readline()
                if not line:
                    raise RuntimeError("boardgame.io's server did not start")
                if line.startswith("port "):
                    port = line.split()[1]
            _pinned(server.pid, load.SERVER_CPUS)
            clients = subprocess.Popen(
                ["node", "load.js", port, scenario.mode, str(scenario.tables), str(seconds)],
                cwd=ANCHOR, stdout=subprocess.PIPE, text=True)
            _pinned(clients.pid, load.CLIENT_CPUS)
            assert clients.stdout is not None
            if clients.stdout.readline().strip() != "ready":
                raise RuntimeError("boardgame.io's clients could not seat their tables")
            cpu0, wakes0 = _cpu(server.pid), load.wakes(server.pid)
            line = clients.stdout.readline()
            if not line.startswith("{"):
                raise RuntimeError("boardgame.io's clients stopped before the end of the window")
            result = json.loads(line)
            cpu, slept = _cpu(server.pid) - cpu0, load.wakes(server.pid) - wakes0
        finally:
            for process in (clients, server):
                if process is not None:
                    process.terminate()
                    process.wait(10)
    actions = max(1, result["actions"])
    return {"cpu_us": load.us(cpu / actions), "actions": result["actions"],
            "p99_us": load.pct(result["samples"], 0.99), "wakes": round(slept / actions, 2)}


#: Times a boardgame.io run is tried before the anchor gives up. Under load its FlatFile store
#: (node-persist) can read a file that a write of its own has half written ("does not look like
#: a valid storage file"); its server then stops, and the run stops with it: it is made again
#: (the failure is printed), not the whole anchor lost.
BGIO_TRIES = 3


def bgio_tried(scenario: Scenario, seconds: float) -> dict[str, float]:
    """``bgio``, made again (``BGIO_TRIES`` times at most) if the run fails."""
    for attempt in range(1, BGIO_TRIES):
        try:
            return bgio(scenario, seconds)
        except RuntimeError as error:
            print(f"{scenario.label}: boardgame.io's run {attempt} failed ({error}); "
                  f"once more", flush=True)
    return bgio(scenario, seconds)


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ours(scenario: Scenario, transport: str, seconds: float) -> dict[str, float]:
    """One run of our server (``server_load.py``'s (b) or (c)): CPU µs per action, actions,
    p99 (paced)."""
    db = "file" if scenario.durable else ":memory:"
    load.TRANSPORT = transport
    try:
        if scenario.mode == "paced":
            paced, _ = load.measure("tongits", lambda child: load.paced_tables(
                child, scenario.tables, seconds, False), db)
            samples = paced["samples"]
            return {"cpu_us": load.us(paced["cpu"] * seconds / max(1, len(samples))),
                    "actions": len(samples), "p99_us": load.pct(samples, 0.99),
                    "wakes": round(paced["wakes"], 2)}
        flat, _ = load.measure("tongits", lambda child: load.flat_out(
            child, scenario.tables, seconds), db)
        rate = flat["actions"] / flat["elapsed"]
        return {"cpu_us": load.us(flat["cpu"] / max(rate, 1e-9)), "actions": flat["actions"],
                "p99_us": float("nan"), "wakes": round(flat["wakes"], 2)}
    finally:
        load.TRANSPORT = "tcp"


def run(args: argparse.Namespace) -> dict[str, Any]:
    scenarios = [Scenario("paced", n, False) for n in args.paced]
    scenarios += [Scenario("flat", n, False) for n in args.flat]
    if args.durable:
        scenarios += [Scenario("paced", n, True) for n in args.paced[:1]]
        scenarios += [Scenario("flat", n, True) for n in args.flat[:1]]
    sides = {s: ["bgio", "tcp"] + ([] if s.durable else ["ws"]) for s in scenarios}
    runs: dict[tuple[Scenario, str], list[dict[str, float]]] = {
        (s, side): [] for s in scenarios for side in sides[s]}
    for rep in range(args.reps):
        for scenario in scenarios:
            order = sides[scenario] if rep % 2 == 0 else sides[scenario][::-1]
            for side in order:
                figures = (bgio_tried(scenario, args.seconds) if side == "bgio"
                           else ours(scenario, side, args.seconds))
                runs[scenario, side].append(figures)
                print(f"{scenario.label} rep {rep + 1}/{args.reps} {side:>4}: "
                      f"{figures['cpu_us']} µs of server CPU per action, "
                      f"{figures['actions']} actions, {figures['wakes']} wake-ups of its "
                      f"loop per action, p99 {figures['p99_us']} µs", flush=True)
    report: dict[str, Any] = {"reps": args.reps, "seconds": args.seconds}
    for scenario in scenarios:
        key = f"{scenario.mode}{scenario.tables}{'_file' if scenario.durable else ''}"
        for side in sides[scenario]:
            for figure in ("cpu_us", "wakes"):
                report[f"{key}_{side}_{figure}"] = statistics.median(
                    r[figure] for r in runs[scenario, side])
        for side in sides[scenario][1:]:
            ratios = [b["cpu_us"] / o["cpu_us"] for b, o in zip(
                runs[scenario, "bgio"], runs[scenario, side], strict=True)]
            ratio = report[f"{key}_bgio_over_{side}"] = round(statistics.median(ratios), 2)
            print(f"{scenario.label}: boardgame.io's CPU per action / ours over {side}: "
                  f"{ratio}x (reps {', '.join(f'{r:.2f}' for r in ratios)}; "
                  f"{report[f'{key}_bgio_cpu_us']} µs / {report[f'{key}_{side}_cpu_us']} µs)",
                  flush=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paced", type=int, nargs="*", default=[300, 1000],
                        help="tables of the paced scenarios")
    parser.add_argument("--flat", type=int, nargs="*", default=[300],
                        help="tables of the flat-out scenarios")
    parser.add_argument("--seconds", type=float, default=20.0, help="each run's window")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--no-durable", dest="durable", action="store_false",
                        help="leave out boardgame.io FlatFile against our SQLite file")
    args = parser.parse_args()
    reason = missing()
    if reason is not None:
        print(f"the boardgame.io anchor is skipped: {reason}", flush=True)
        sys.exit(0)
    if load.CLIENT_CPUS:
        os.sched_setaffinity(0, load.CLIENT_CPUS)
    gc.disable()  # as server_load.py: the clients' collector pauses are not the server's
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
