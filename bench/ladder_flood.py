"""What does a flood of ``register`` and ``standings`` cost the ladder and an honest player?

    python bench/ladder_flood.py --accounts 100000 --seconds 30 --flooders 8

1. A ladder file of ``--accounts`` accounts (ratings spread as after many matches): the cost of
   one ``standings`` page (100 accounts) read by ``Ladder.standings``, at random offsets.
2. A real ``tongits-server`` on that file with ``--limit-loopback true``, and ``--flooders``
   processes' worth of connections, each from its own loopback address (127.0.1.N), asking for
   accounts and standings pages as fast as the server answers, and reconnecting at once when
   cut (each new connection starts with a fresh burst of the rate limit). An honest client, in
   a process of its own on 127.0.0.1, pings every 100 ms (within the rate limit): its round
   trips before and during the flood, and how many accounts the flood made.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio
from tongits.server.ladder.ladder import Ladder
from tongits.server.names import folded

#: Seconds the server may take to say ``listening on``.
START_TIMEOUT = 30.0
HELLO = {"type": "hello", "id": 0, "version": 1, "name": "x", "kind": "human"}


def fill(path: Path, accounts: int) -> None:
    """``accounts`` accounts with ratings as a ladder that has played a while has them."""
    Ladder(str(path)).close()  # the schema
    rng = random.Random(1)
    rows = []
    for i in range(accounts):
        mu, sigma = rng.gauss(25.0, 4.0), rng.uniform(1.0, 8.3)
        name = f"acct{i:06d}"
        rows.append((name, folded(name), secrets.token_hex(16), mu, sigma, rng.randrange(200),
                     time.time()))
    with sqlite3.connect(path) as db:
        db.executemany("INSERT INTO accounts (name, fold, key_hash, mu, sigma, matches, created) "
                       "VALUES (?,?,?,?,?,?,?)", rows)


def page_costs(path: Path, pages: int) -> list[float]:
    started = time.perf_counter()
    ladder = Ladder(str(path))
    print(f"  the ladder opened (its standings order built) in "
          f"{time.perf_counter() - started:.2f} s")
    rng = random.Random(2)
    costs = []
    for _ in range(pages):
        offset = rng.randrange(ladder.accounts)
        started = time.perf_counter()
        page, _total = ladder.standings(offset, 100)
        costs.append((time.perf_counter() - started) * 1000)
        assert len(page) == min(100, ladder.accounts - offset)
    ladder.close()
    return costs


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (f"p50 {statistics.median(ordered):.2f} ms, p99 {p99:.2f} ms, "
            f"max {ordered[-1]:.2f} ms ({len(ordered)})")


# ----- the flood (a process of its own: ``--flood PORT N SECONDS``) -----------------------------

async def flooder(port: int, index: int, until: float, counts: dict[str, int]) -> None:
    rng = random.Random(index)
    while trio.current_time() < until:
        sock = trio.socket.socket()
        try:
            await sock.bind((f"127.0.1.{index + 1}", 0))
            await sock.connect(("127.0.0.1", port))
        except OSError:
            sock.close()
            await trio.sleep(0.05)
            continue
        stream = trio.SocketStream(sock)
        buffer = b""
        try:
            await stream.send_all(json.dumps(HELLO).encode() + b"\n")
            n = 0
            while trio.current_time() < until:
                n += 1
                if n % 2:
                    ask = {"type": "register", "id": n, "name": f"f{index}-{rng.getrandbits(40)}"}
                else:
                    ask = {"type": "standings", "id": n, "offset": rng.randrange(100_000)}
                await stream.send_all(json.dumps(ask).encode() + b"\n")
                while b"\n" not in buffer:
                    data = await stream.receive_some(65536)
                    if not data:
                        raise trio.BrokenResourceError
                    buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    reply = json.loads(line)
                    kind = reply.get("code") or reply["type"]
                    counts[kind] = counts.get(kind, 0) + 1
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            counts["cut"] = counts.get("cut", 0) + 1
        finally:
            await stream.aclose()


async def flood(port: int, flooders: int, seconds: float) -> None:
    counts: dict[str, int] = {}
    until = trio.current_time() + seconds
    async with trio.open_nursery() as nursery:
        for index in range(flooders):
            nursery.start_soon(flooder, port, index, until, counts)
    print(json.dumps(counts), flush=True)


# ----- the honest player --------------------------------------------------------------------

async def pings(port: int, seconds: float) -> list[float]:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    buffer = b""

    async def line() -> bytes:
        nonlocal buffer
        while b"\n" not in buffer:
            data = await stream.receive_some(65536)
            if not data:
                raise SystemExit("the server closed the honest connection")
            buffer += data
        first, buffer = buffer.split(b"\n", 1)
        return first

    await stream.send_all(json.dumps({**HELLO, "name": "honest"}).encode() + b"\n")
    await line()
    rtts = []
    until = trio.current_time() + seconds
    n = 0
    while trio.current_time() < until:
        n += 1
        started = time.perf_counter()
        await stream.send_all(json.dumps({"type": "ping", "id": n}).encode() + b"\n")
        await line()
        rtts.append((time.perf_counter() - started) * 1000)
        await trio.sleep(0.1)
    await stream.aclose()
    return rtts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--flooders", type=int, default=8)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--flood", nargs=3, metavar=("PORT", "N", "SECONDS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        port, flooders, seconds = args.flood
        trio.run(flood, int(port), int(flooders), float(seconds))
        return 0
    work = Path(tempfile.mkdtemp(prefix="ladder-flood-"))
    try:
        return run(args, work)
    finally:
        shutil.rmtree(work)


def run(args: argparse.Namespace, work: Path) -> int:
    ladder_file = work / "flood.ladder.db"
    started = time.perf_counter()
    fill(ladder_file, args.accounts)
    print(f"{args.accounts:,} accounts written in {time.perf_counter() - started:.1f} s")
    print(f"one standings page (100 accounts, random offset): "
          f"{percentiles(page_costs(ladder_file, args.pages))}")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tongits.server.cli", "--port", str(port), "--db",
         str(work / "flood.db"), "--data-dir", str(work), "--limit-loopback", "true",
         "--discovery", "false", "--web", "false", "--log-level", "WARNING"],
        stdout=subprocess.PIPE, stderr=(work / "server.log").open("wb"))
    try:
        assert server.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if server.stdout.readline().decode().startswith("listening on"):
                break
        quiet = trio.run(pings, port, 5.0)
        print(f"honest ping, no flood:   {percentiles(quiet)}")
        flooding = subprocess.Popen(
            [sys.executable, __file__, "--flood", str(port), str(args.flooders),
             str(args.seconds)], stdout=subprocess.PIPE)
        time.sleep(1.0)
        loud = trio.run(pings, port, args.seconds - 2.0)
        out, _ = flooding.communicate(timeout=args.seconds + 60)
        print(f"honest ping, the flood:  {percentiles(loud)}")
        counts = json.loads(out.decode().strip().splitlines()[-1])
        print(f"the flood ({args.flooders} addresses, {args.seconds:g} s): {counts}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    with sqlite3.connect(ladder_file) as db:
        made = db.execute("SELECT COUNT(*) FROM accounts WHERE anchor IS NULL").fetchone()[0] \
            - args.accounts
    print(f"accounts the flood made: {made}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
