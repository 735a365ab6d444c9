"""Do ladder bots play on for hours? Four ``tongits bot --ladder`` processes against a real
``tongits-server`` (a file database), with a ``kill -9`` of the server in the middle.

    python bench/ladder_soak.py --minutes 15 --bots random,greedy,strong,expert

Each bot is its own process, as a user starts it, speaking to the server over loopback. At
``--kill-at`` (a fraction of the run) the driver pauses the bots (SIGSTOP: no match can end
meanwhile but by the server's own bots), reads the standings (``tongits ladder``), kills the
server with SIGKILL, reads the ladder's file as the kill left it, starts the server again on
the same port and database, reads the standings once more, and lets the bots go on (SIGCONT).
At the end it prints: whether every bot was still running, the three standings compared, the
matches by outcome, and whether every match was rated once (each account's ``matches`` against
the rated rows, and every ``match_over`` a bot logged against a rated row of its table). Exit
status 1 if a check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: Seconds the server may take to say ``listening on``.
START_TIMEOUT = 30.0
#: Standings as compared: name -> (mu, sigma, matches), rounded as the wire rounds them.
Standings = dict[str, tuple[float, float, int]]


@dataclass(slots=True)
class BotProcess:
    policy: str
    name: str
    process: subprocess.Popen[bytes]
    log: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tongits(command: str) -> list[str]:
    """The installed console script ``command`` beside this Python, else ``python -m``."""
    beside = Path(sys.executable).with_name(command)
    if beside.exists():
        return [str(beside)]
    module = "tongits.server.cli" if command == "tongits-server" else "tongits.client.cli"
    return [sys.executable, "-m", module]


def start_server(port: int, work: Path, args: argparse.Namespace, log: IO[bytes]) -> (
        subprocess.Popen[bytes]):
    process = subprocess.Popen(
        [*tongits("tongits-server"), "--port", str(port), "--db", str(work / "soak.db"),
         "--data-dir", str(work / "server"), "--discovery", "false", "--web", "false",
         "--ladder-hands", str(args.hands), "--timer", str(args.timer), "--bot-delay", "0",
         "--grace", str(args.grace), "--ladder-anchor-wait", str(args.anchor_wait)],
        stdout=subprocess.PIPE, stderr=log,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        line = process.stdout.readline().decode()
        if line.startswith("listening on"):
            return process
        if not line and process.poll() is not None:
            break
    raise SystemExit(f"the server did not start (see {log.name})")


def standings_wire(port: int, env: dict[str, str]) -> Standings:
    out = subprocess.run([*tongits("tongits"), "ladder", f"127.0.0.1:{port}", "--json"],
                         capture_output=True, env=env, check=True, timeout=30).stdout
    return {p["name"]: (p["mu"], p["sigma"], p["matches"]) for p in json.loads(out)["players"]}


def standings_file(path: Path) -> Standings:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT name, mu, sigma, matches FROM accounts").fetchall()
    return {name: (round(mu, 3), round(sigma, 3), matches) for name, mu, sigma, matches in rows}


def rated_rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM matches WHERE outcome = 'rated'")
                   .fetchone()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--kill-at", type=float, default=0.5, help="fraction of the run")
    parser.add_argument("--bots", default="random,greedy,strong,expert")
    parser.add_argument("--hands", type=int, default=2, help="hands of a ladder match")
    parser.add_argument("--timer", type=float, default=10.0, help="the server's turn timer")
    parser.add_argument("--grace", type=float, default=60.0, help="the server's grace period")
    parser.add_argument("--anchor-wait", type=float, default=5.0)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ladder-soak-"))
    env = {**os.environ, "XDG_DATA_HOME": str(work / "data"), "HOME": str(work)}
    port = free_port()
    server_log = (work / "server.log").open("ab")
    server = start_server(port, work, args, server_log)
    started = time.monotonic()
    bots = []
    for policy in args.bots.split(","):
        log = work / f"bot-{policy}.log"
        name = f"soak-{policy}"
        process = subprocess.Popen(
            [*tongits("tongits"), "bot", policy, "--connect", f"127.0.0.1:{port}", "--ladder",
             "--name", name, "--seed", policy],
            env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
        )
        bots.append(BotProcess(policy, name, process, log))
    ladder_db = work / "soak.ladder.db"
    kill_at = started + args.minutes * 60 * args.kill_at
    end_at = started + args.minutes * 60
    time.sleep(max(0.0, kill_at - time.monotonic()))
    for b in bots:
        b.process.send_signal(signal.SIGSTOP)
    rated_before = rated_rows(ladder_db)
    before = standings_wire(port, env)
    server.send_signal(signal.SIGKILL)
    server.wait()
    at_kill = standings_file(ladder_db)
    rated_at_kill = rated_rows(ladder_db)
    down = time.monotonic()
    server = start_server(port, work, args, server_log)
    restarted = time.monotonic()
    after = standings_wire(port, env)
    for b in bots:
        b.process.send_signal(signal.SIGCONT)
    time.sleep(max(0.0, end_at - time.monotonic()))
    exited = {b.policy: b.process.poll() for b in bots if b.process.poll() is not None}
    for b in bots:
        if b.process.poll() is None:
            b.process.send_signal(signal.SIGINT)
    for b in bots:
        try:
            b.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            b.process.kill()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    ok = report(args, work, bots, exited, (before, at_kill, after),
                (rated_before, rated_at_kill), restarted - down)
    if args.keep or not ok:
        print(f"logs and databases kept in {work}")
    else:
        shutil.rmtree(work)
    return 0 if ok else 1


def report(args: argparse.Namespace, work: Path, bots: list[BotProcess],
           exited: dict[str, int | None], snapshots: tuple[Standings, Standings, Standings],
           rated: tuple[int, int], downtime: float) -> bool:
    """Print the figures and checks; whether every check passed. ``rated``: the rated
    matches when the standings were read before the kill, and at the kill (a match rated in
    between leaves those standings behind the file's)."""
    before, at_kill, after = snapshots
    ladder_db = work / "soak.ladder.db"
    with sqlite3.connect(ladder_db) as db:
        outcomes = Counter(o for (o,) in db.execute("SELECT outcome FROM matches"))
        rated_tables = Counter(t for (t,) in db.execute(
            "SELECT table_id FROM matches WHERE outcome = 'rated'"))
        played = sum(m for (m,) in db.execute("SELECT matches FROM accounts"))
    print(f"{args.minutes:g} minutes, bots {args.bots}, {args.hands}-hand matches, timer "
          f"{args.timer:g} s; server killed (SIGKILL) at {args.kill_at:.0%}, back after "
          f"{downtime:.1f} s")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    checks: list[tuple[str, bool]] = [("no bot exited", not exited)]
    for b in bots:
        text = b.log.read_text(errors="replace")
        overs = re.findall(r"ladder match \d+ over at table (t\d+)", text)
        unrated = [t for t in overs if rated_tables[t] == 0]
        print(f"  {b.policy:<8} {len(overs):4d} matches over, {text.count('connection lost'):3d} "
              f"connections lost, {text.count('server error'):3d} server errors, "
              f"{len(unrated)} match_over without a rated row; "
              f"{'exited ' + str(exited[b.policy]) if b.policy in exited else 'running'}")
        checks.append((f"{b.policy}: every match_over is rated", not unrated))
    doubled = [t for t, n in rated_tables.items() if n > 1]
    print(f"matches: {dict(outcomes)}; rated at the kill: {rated[1]}")
    checks.append(("standings after the restart == the file at the kill", after == at_kill))
    if rated[0] == rated[1]:
        checks.append(("standings before the kill == the file at the kill", before == at_kill))
    else:
        print("  (a match was rated between the last standings and the kill: not compared)")
    checks += [
        ("no table rated twice", not doubled),
        ("accounts' matches == 3 x rated matches", played == 3 * outcomes["rated"]),
    ]
    for what, passed in checks:
        print(f"  {'ok  ' if passed else 'FAIL'} {what}")
    return all(passed for _, passed in checks)


if __name__ == "__main__":
    raise SystemExit(main())
