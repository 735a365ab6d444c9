"""What an external bot costs the arena: hands/s in-process against ``cmd:`` over the protocol.

    python bench/arena.py --hands 600

Runs ``random,random,random`` in-process, then the same with the third bot as a program: the
SDK's ``tongits bot random`` (Python) and ``examples/bot.js`` (Node.js, if installed), each on
the arena's loopback server. For the programs it prints the arena's own measure of a decision
(from the ``state`` offering moves to the ``move`` answering it: p50 and mean) beside the floor:
the round trip of one JSON line between this process and a child Python process that only echoes
it, over loopback, measured in the same run; and the CPU time the program used per decision and
the arena (server and in-process bots) per hand, which a busy machine does not inflate as much
as it does waiting times. On a shared machine quote the ratios.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import trio
from tongits.client.arena import ArenaConfig, run_arena

ROOT = Path(__file__).resolve().parent.parent

ECHO_CHILD = """
import socket, sys
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
stream = sock.makefile("rwb")
for line in stream:
    stream.write(line)
    stream.flush()
"""


async def echo_floor(round_trips: int) -> list[float]:
    """Seconds per round trip of a 200-byte line to a child process that echoes it."""
    times: list[float] = []
    line = b"x" * 199 + b"\n"
    async with trio.open_nursery() as nursery:
        accepted: trio.MemorySendChannel[trio.SocketStream]
        accepted, incoming = trio.open_memory_channel[trio.SocketStream](1)

        async def handler(stream: trio.SocketStream) -> None:
            await accepted.send(stream)
            await trio.sleep_forever()

        listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        process = await trio.lowlevel.open_process([sys.executable, "-c", ECHO_CHILD, str(port)])
        stream = await incoming.receive()
        for _ in range(round_trips):
            start = time.perf_counter()
            await stream.send_all(line)
            got = b""
            while not got.endswith(b"\n"):
                got += await stream.receive_some(4096)
            times.append(time.perf_counter() - start)
        await stream.aclose()
        await process.wait()
        nursery.cancel_scope.cancel()
    return times


def cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def arena(bots: tuple[str, ...], hands: int) -> tuple[float, dict[str, float]]:
    """Hands per second of one arena run; the third bot's decision times in ms, and the CPU
    time per decision of the program (the children's rusage) and per hand of the arena."""
    start, own, children = time.perf_counter(), cpu(resource.RUSAGE_SELF), cpu(
        resource.RUSAGE_CHILDREN
    )
    standings = run_arena(ArenaConfig(bots, "bench", timer=10.0), hands)
    rate = standings.hands / (time.perf_counter() - start)
    third = standings.bots[2].to_dict()
    return rate, {
        "mean": third["ms_per_decision"],
        **third["ms"],
        "program_cpu": 1000 * (cpu(resource.RUSAGE_CHILDREN) - children) / third["decisions"],
        "arena_cpu": 1000 * (cpu(resource.RUSAGE_SELF) - own) / standings.hands,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=600)
    parser.add_argument("--echoes", type=int, default=2000)
    args = parser.parse_args()
    floor = trio.run(echo_floor, args.echoes)
    floor_ms = 1000 * statistics.median(floor)
    print(f"echo floor (loopback line round trip to a child process): p50 {floor_ms:.3f} ms, "
          f"mean {1000 * statistics.fmean(floor):.3f} ms")
    runs = [("in-process random", ("random", "random", "random"))]
    runs.append(("cmd: tongits bot random (Python SDK)",
                 ("random", "random", f"cmd:{sys.executable} -m tongits.client.cli bot random")))
    node = shutil.which("node")
    if node is not None:
        runs.append(("cmd: node examples/bot.js",
                     ("random", "random", f"cmd:{node} {ROOT / 'examples' / 'bot.js'}")))
    base = 0.0
    for label, bots in runs:
        rate, ms = arena(bots, args.hands)
        base = base or rate
        print(f"{label}: {rate:.0f} hands/s ({rate / base:.2f} x in-process), arena CPU "
              f"{ms['arena_cpu']:.2f} ms per hand", flush=True)
        if bots[2].startswith("cmd:"):
            print(f"    a decision as the arena sees it: p50 {ms['p50']:.2f} ms "
                  f"({ms['p50'] / floor_ms:.0f} x floor), mean {ms['mean']:.2f} ms "
                  f"({ms['mean'] / floor_ms:.0f} x floor); the program's CPU "
                  f"{ms['program_cpu']:.2f} ms per decision (start-up included)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
