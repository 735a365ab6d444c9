"""Attacks from many addresses, as a stranger on the internet would make them, and what an
honest player sees meanwhile.

A real ``tongits-server`` runs in a child process with ``--limit-loopback true``, so that every
127.0.0.x address counts as a remote host (per-address limits and the rate limit apply). The
attack comes from 127.0.0.2 and up; the honest player from 127.0.1.1, another address (and
another /24). During each attack the honest player, in a process of its own (``honest
--port PORT``), pings the server over one connection every ``--every`` seconds (text mode)
and its round trips are printed as p50/p99; a ping not answered within 5 s counts as lost.

Scenarios (one per run, ``--seconds`` long, the figures on the last line as JSON):

refused   Connections refused because the address is full (``--max-per-address``, the server
          ``--max-connections``), each opening ``GET / HTTP/1.1`` and trickling a header line
          every 5 s. Figures: how long the server kept a refused connection (p50, max), and
          how many of the honest player's new connections (one every second) got in.
ws-ping   One WebSocket connection per address floods ping frames after ``hello``, and
          opens a new one whenever it is cut. Figures: pongs a second per address, and how
          each connection ended (``rate_limited``, or "no" if it was never cut).
tables    ``--addresses`` addresses create every table they may (``--max-tables-per-address``
          each, two server bots, no timer) and move at each about every ``--evict-idle``/3 s,
          so that no table is ever idle. Figures: tables the attack holds, and how many
          honest creators (one every 2 s, each from a network of its own) got a table.
chat      ``--addresses`` addresses, each with ``--watchers`` connections (60 by default) that
          watch the honest player's table (two server bots, not started) and chat at it, each
          just under its connection's message rate. The honest player pings from its seat
          there. Figures: the chat lines the honest player heard a second, the attack's
          lines refused (``chat_too_fast``). ``--chat-rate 0`` runs the server without the
          chat pace, as before it.
quiet     No attack: the honest player's figures on this machine as it is loaded now.
rebind    Not a flood: the answers of a server started with ``--tls-self-signed
          --tls-required`` to plain requests: a DNS-rebinding page (Host and Origin
          ``evil.example``), its own page (GET and HEAD), a crafted target (``@evil.example``)
          and a ``ws://`` WebSocket (status and Location).

    python bench/hostile.py refused --seconds 20
    python bench/hostile.py ws-ping --seconds 10 --addresses 4
    python bench/hostile.py tables --seconds 40 --addresses 30 --max-tables 200 --evict-idle 30
    python bench/hostile.py chat --seconds 20
    python bench/hostile.py rebind
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from line_client import LineClient
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Ping, Pong, Request, TextMessage

SERVER_HOST = "127.0.0.1"
HONEST = "127.0.1.1"
#: a ping unanswered this long is lost
PING_TIMEOUT = 5.0
#: chat: the lines a second each attacking connection says, under the default message rate
CHATTER_RATE = 19.0


def attacker(index: int) -> str:
    """The ``index``-th attacking address: 127.0.0.2 and up, then 127.0.2.x (never the
    honest player's 127.0.1.x)."""
    block, host = divmod(index, 250)
    return f"127.0.{0 if block == 0 else block + 1}.{host + 2}"


def start_server(data_dir: str, extra: list[str]) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tongits.server.cli", "--port", "0", "--db", ":memory:",
         "--data-dir", data_dir, "--discovery", "false", "--log-level", "WARNING",
         "--limit-loopback", "true", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None
    match = re.match(r"listening on [\d.]+:(\d+)", process.stdout.readline())
    assert match, "the server did not start"
    return process, int(match.group(1))


async def dial(port: int, source: str) -> trio.SocketStream:
    return await trio.open_tcp_stream(SERVER_HOST, port, local_address=source)


async def hello(port: int, source: str, name: str) -> LineClient | str:
    """A text-mode connection after ``welcome``, or the error code that refused it."""
    try:
        stream = await dial(port, source)
    except OSError as error:
        return f"connect: {error.strerror}"
    lines = LineClient(stream)
    try:
        await lines.send({"type": "hello", "id": 1, "version": 1, "name": name,
                          "kind": "human"})
        reply = await lines.receive_type("welcome")
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        reply = None
    if reply is None or reply["type"] == "error":
        await stream.aclose()
        return "closed" if reply is None else str(reply["code"])
    return lines


@dataclass
class Honest:
    """What the honest player saw: round trips of its pings, pings lost, chat lines heard,
    and the table it sits at (``--seated``)."""

    rtts: list[float] = field(default_factory=list)
    lost: int = 0
    refused: str = ""
    heard: int = 0
    table: str = ""

    def figures(self) -> dict[str, Any]:
        ordered = sorted(self.rtts)
        def at(q: float) -> float | None:
            return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1) \
                if ordered else None
        return {"pings": len(ordered), "lost": self.lost, "refused": self.refused,
                "chat_lines_heard": self.heard,
                "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)}


async def honest_process(port: int, seconds: float, every: float, honest: Honest,
                         task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED, *,
                         seated: bool = False) -> None:
    """``honest_pings`` in a process of its own (the attack's work in this one must not
    delay its pings), started once its connection is welcome (and seated)."""
    process = await trio.lowlevel.open_process(
        [sys.executable, __file__, "honest", "--port", str(port), "--seconds", str(seconds),
         "--every", str(every), *(["--seated"] if seated else [])], stdout=subprocess.PIPE)
    assert process.stdout is not None
    output = b""
    started = False
    while chunk := await process.stdout.receive_some(65536):
        output += chunk
        if not started and b"\n" in output:
            honest.table = output.split()[1].decode() if seated else ""
            task_status.started()
            started = True
    await process.wait()
    if not started:
        task_status.started()
    result = json.loads(output.splitlines()[-1])
    honest.rtts, honest.lost, honest.refused = result["rtts"], result["lost"], result["refused"]
    honest.heard = result["heard"]


async def honest_pings(port: int, seconds: float, every: float, honest: Honest,
                       seated: bool = False) -> None:
    """One honest connection pinging every ``every`` seconds for ``seconds``; a first line
    says when it is welcome (or refused), and ``seated``, the table it created first."""
    lines = await hello(port, HONEST, "honest")
    if isinstance(lines, str):
        print("ready", flush=True)
        honest.refused = lines
        return
    table = ""
    if seated:
        await lines.send({"type": "create_table", "id": 1, "name": "honest", "bots": 2,
                          "auto_start": False})
        joined = await lines.receive_type("joined")
        table = str(joined["table"]) if joined and joined["type"] == "joined" else "-"
    print("ready", table, flush=True)
    with trio.move_on_after(seconds):
        for n in range(2, 10**9):
            started = trio.current_time()
            await lines.send({"type": "ping", "id": n})
            answered = False
            with trio.move_on_after(PING_TIMEOUT):
                while (reply := await lines.receive()) is not None and reply.get("type") not in (
                        "pong", "error"):
                    honest.heard += reply.get("type") == "chat"
                if reply is None or reply["type"] == "error":
                    honest.refused = "closed" if reply is None else str(reply["code"])
                    return
                honest.rtts.append(trio.current_time() - started)
                answered = True
            honest.lost += not answered
            await trio.sleep(max(0.0, every - (trio.current_time() - started)))
    await lines.stream.aclose()


# ----- refused: connections refused for a full address, trickling HTTP --------------------


async def trickle(port: int, source: str, held: list[float], stop: trio.Event) -> None:
    """Open ``GET /`` and send a header line every 5 s until the server closes the
    connection; ``held`` gets how long it stayed open."""
    try:
        stream = await dial(port, source)
    except OSError:
        return
    started = trio.current_time()
    async with stream:
        try:
            await stream.send_all(b"GET / HTTP/1.1\r\n")
            while not stop.is_set():
                with trio.move_on_after(5):
                    if not await stream.receive_some(65536):
                        break
                    # an answer came: the server is closing it (503 or 408)
                    while await stream.receive_some(65536):
                        pass
                    break
                await stream.send_all(b"X-Slow: 1\r\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
    if not stop.is_set():
        held.append(trio.current_time() - started)


async def honest_arrivals(port: int, seconds: float, got_in: list[bool]) -> None:
    """A new honest connection every second: whether each got ``welcome``."""
    with trio.move_on_after(seconds):
        while True:
            lines = await hello(port, HONEST, "arrival")
            got_in.append(not isinstance(lines, str))
            if not isinstance(lines, str):
                await lines.stream.aclose()
            await trio.sleep(1)


async def refused(args: argparse.Namespace, port: int, honest: Honest) -> dict[str, Any]:
    held: list[float] = []
    got_in: list[bool] = []
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        async with trio.open_nursery() as measured:
            await measured.start(honest_process, port, args.seconds, args.every, honest)
            measured.start_soon(honest_arrivals, port, args.seconds, got_in)
            with trio.move_on_after(args.seconds):
                n = 0
                while True:
                    nursery.start_soon(trickle, port, attacker(n % args.addresses), held, stop)
                    n += 1
                    await trio.sleep(1 / args.rate)
        stop.set()
        nursery.cancel_scope.cancel()
    held.sort()
    return {"attack_connections": n, "closed_by_server": len(held),
            "held_p50_s": round(statistics.median(held), 2) if held else None,
            "held_max_s": round(held[-1], 2) if held else None,
            "honest_arrivals": len(got_in), "honest_got_in": sum(got_in)}


# ----- ws-ping: WebSocket ping frames flooded after hello ---------------------------------


async def flood_once(port: int, source: str, deadline: float, result: dict[str, Any]) -> None:
    """One WebSocket connection: ``hello``, then ping frames as fast as the socket takes them
    until ``deadline`` or the server cuts it (its error code counted in ``result["cut"]``)."""
    stream = await dial(port, source)
    ws = WSConnection(ConnectionType.CLIENT)
    await stream.send_all(ws.send(Request(host=f"{SERVER_HOST}:{port}", target="/ws")))
    while not any(isinstance(e, AcceptConnection) for e in ws.events()):
        ws.receive_data(await stream.receive_some(65536))
    hello_frame = json.dumps({"type": "hello", "id": 1, "version": 1, "name": "flood",
                              "kind": "human"})
    await stream.send_all(ws.send(TextMessage(data=hello_frame)))
    burst = ws.send(Ping(payload=b"x")) * 8
    cut = "no"

    async def read() -> None:
        nonlocal cut
        try:
            while data := await stream.receive_some(65536):
                ws.receive_data(data)
                for event in ws.events():
                    if isinstance(event, Pong):
                        result["pongs"] += 1
                    elif isinstance(event, TextMessage) and '"error"' in event.data:
                        cut = json.loads(event.data)["code"]
        except trio.BrokenResourceError:
            cut = cut if cut != "no" else "reset"
        nursery.cancel_scope.cancel()

    async with stream, trio.open_nursery() as nursery:
        nursery.start_soon(read)
        with trio.move_on_at(deadline):
            try:
                while True:
                    await stream.send_all(burst)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                await trio.sleep_forever()  # until read() has the server's last words
        nursery.cancel_scope.cancel()
    result["connections"] += 1
    result["cut"][cut] = result["cut"].get(cut, 0) + 1


async def ping_flood(port: int, source: str, seconds: float, result: dict[str, Any]) -> None:
    """Flood ping frames from ``source``, a new connection whenever one is cut."""
    deadline = trio.current_time() + seconds
    result.update(pongs=0, connections=0, cut={})
    while trio.current_time() < deadline:
        try:
            await flood_once(port, source, deadline, result)
        except OSError:
            await trio.sleep(0.1)


async def ws_ping(args: argparse.Namespace, port: int, honest: Honest) -> dict[str, Any]:
    results: list[dict[str, Any]] = [{} for _ in range(args.addresses)]
    async with trio.open_nursery() as nursery:
        await nursery.start(honest_process, port, args.seconds, args.every, honest)
        for n, result in enumerate(results):
            nursery.start_soon(ping_flood, port, attacker(n), args.seconds, result)
    cuts: dict[str, int] = {}
    for result in results:
        for code, count in result["cut"].items():
            cuts[code] = cuts.get(code, 0) + count
    return {"attackers": args.addresses,
            "pongs_per_s_per_address": round(statistics.median(
                r["pongs"] / args.seconds for r in results)),
            "connections": sum(r["connections"] for r in results), "cut": cuts}


# ----- tables: active holders of the whole pool ------------------------------------------


async def hold_table(port: int, source: str, name: str, every: float, held: list[int],
                     task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Create a table with two bots and move whenever it is our turn, at most once every
    ``every`` seconds; ``held`` counts the tables held meanwhile."""
    lines = await hello(port, source, name)
    if isinstance(lines, str):
        task_status.started()
        return
    await lines.send({"type": "create_table", "id": 2, "name": name, "bots": 2, "timer": 0})
    reply = await lines.receive_type("joined")
    task_status.started()
    if reply is None or reply["type"] == "error":
        await lines.stream.aclose()
        return
    held[0] += 1
    last_move = -1e9
    legal: list[Any] = []
    while (msg := await lines.receive()) is not None:
        if msg.get("type") == "state":
            legal = msg.get("legal") or []
        elif msg.get("type") in ("table_closed", "match_over"):
            break
        if legal:
            await trio.sleep(max(0.0, last_move + every - trio.current_time()))
            await lines.send({"type": "move", "id": 3, "move": legal[0]})
            last_move, legal = trio.current_time(), []
    held[0] -= 1
    await lines.stream.aclose()


async def honest_creators(port: int, seconds: float, created: list[bool]) -> None:
    """Every 2 s a new honest player, from a network of its own (127.1.N.1), asks for a
    table (and leaves it at once)."""
    with trio.move_on_after(seconds):
        for n in range(256):
            lines = await hello(port, f"127.1.{n}.1", "creator")
            if not isinstance(lines, str):
                await lines.send({"type": "create_table", "id": 2, "name": "mine", "bots": 2})
                reply = await lines.receive_type("joined")
                created.append(reply is not None and reply["type"] == "joined")
                await lines.stream.aclose()
            await trio.sleep(2)


async def tables(args: argparse.Namespace, port: int, honest: Honest) -> dict[str, Any]:
    held = [0]
    created: list[bool] = []
    every = args.evict_idle / 3
    async with trio.open_nursery() as nursery:
        for n in range(args.addresses * args.max_tables_per_address):
            source = attacker(n % args.addresses)
            await nursery.start(hold_table, port, source, f"hold{n}", every, held)
        filled = held[0]
        async with trio.open_nursery() as measured:
            await measured.start(honest_process, port, args.seconds, args.every, honest)
            await honest_creators(port, args.seconds, created)
        nursery.cancel_scope.cancel()
    return {"attack_addresses": args.addresses, "tables_held_after_fill": filled,
            "tables_held_at_end": held[0], "honest_creates": len(created),
            "honest_got_a_table": sum(created)}


# ----- rebind: what a rebinding page and a crafted redirect get ---------------------------


async def http_answer(port: int, request: bytes) -> tuple[str, str]:
    """The status line and Location of the server's answer to ``request``."""
    stream = await dial(port, HONEST)
    async with stream:
        await stream.send_all(request)
        data = b""
        with trio.move_on_after(5):
            while b"\r\n\r\n" not in data and (chunk := await stream.receive_some(65536)):
                data += chunk
    head = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    location = next((h.split(":", 1)[1].strip() for h in head[1:]
                     if h.lower().startswith("location:")), "")
    return head[0], location


async def rebind(args: argparse.Namespace, port: int, honest: Honest) -> dict[str, Any]:
    upgrade = (b"GET /ws HTTP/1.1\r\nHost: evil.example:%d\r\nOrigin: http://evil.example:%d"
               b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
               b"dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" % (port, port))
    own = b"Host: 127.0.0.1:%d\r\n\r\n" % port
    answers = {
        "rebinding_upgrade": await http_answer(port, upgrade),
        "rebinding_page": await http_answer(
            port, b"GET / HTTP/1.1\r\nHost: evil.example:%d\r\n\r\n" % port),
        "own_page": await http_answer(port, b"GET /t/t1?code=x HTTP/1.1\r\n" + own),
        "own_page_head": await http_answer(port, b"HEAD / HTTP/1.1\r\n" + own),
        "crafted_target": await http_answer(port, b"GET @evil.example HTTP/1.1\r\n" + own),
        "plain_websocket": await http_answer(port, upgrade.replace(
            b"evil.example", b"127.0.0.1")),
    }
    return {name: {"status": status, "location": location}
            for name, (status, location) in answers.items()}


# ----- chat: a crowd of one address's watchers chatting at the honest player's table -----


async def chatter(port: int, source: str, table: str, rate: float, deadline: float,
                  refused: dict[str, int]) -> None:
    """Watch ``table`` from ``source`` and say a line ``rate`` times a second until
    ``deadline``; ``refused`` counts the error codes the lines got."""
    lines = await hello(port, source, "chatter")
    if isinstance(lines, str):
        refused[lines] = refused.get(lines, 0) + 1
        return

    async def read() -> None:
        while (msg := await lines.receive()) is not None:
            if msg.get("type") == "error":
                refused[str(msg["code"])] = refused.get(str(msg["code"]), 0) + 1

    async with lines.stream, trio.open_nursery() as nursery:
        nursery.start_soon(read)
        await lines.send({"type": "spectate", "id": 2, "table": table})
        with trio.move_on_at(deadline), contextlib.suppress(trio.BrokenResourceError):
            for n in itertools.count(3):
                await lines.send({"type": "chat", "id": n, "text": f"{n} " + "y" * 150})
                await trio.sleep(1 / rate)
        nursery.cancel_scope.cancel()


async def chat(args: argparse.Namespace, port: int, honest: Honest) -> dict[str, Any]:
    refused: dict[str, int] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(functools.partial(honest_process, seated=True), port,
                            args.seconds, args.every, honest)
        deadline = trio.current_time() + args.seconds
        for n in range(args.addresses * args.watchers):
            nursery.start_soon(chatter, port, attacker(n % args.addresses), honest.table,
                               CHATTER_RATE, deadline, refused)
    return {"attack_addresses": args.addresses, "watchers": args.watchers,
            "honest_heard_per_s": round(honest.heard / args.seconds, 1),
            "attack_errors": refused}


async def quiet(args: argparse.Namespace, port: int, honest: Honest) -> dict[str, Any]:
    async with trio.open_nursery() as nursery:
        await nursery.start(honest_process, port, args.seconds, args.every, honest)
    return {}


SCENARIOS = {"quiet": quiet, "refused": refused, "ws-ping": ws_ping, "tables": tables,
             "rebind": rebind, "chat": chat}


def server_flags(args: argparse.Namespace) -> list[str]:
    flags = ["--max-connections", str(args.max_connections),
             "--max-per-address", str(args.max_per_address)]
    if args.scenario == "rebind":
        flags += ["--tls-self-signed", "--tls-required"]
    if args.scenario == "tables":
        flags += ["--max-tables", str(args.max_tables), "--evict-idle", str(args.evict_idle),
                  "--max-tables-per-address", str(args.max_tables_per_address),
                  "--bot-delay", "0.2"]
    if args.scenario == "chat" and args.chat_rate is not None:
        flags += ["--chat-rate", str(args.chat_rate)]
    return flags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=[*SCENARIOS, "honest"])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=0.05, help="honest ping period, s")
    parser.add_argument("--addresses", type=int, default=1, help="attacking addresses")
    parser.add_argument("--rate", type=float, default=70.0,
                        help="refused: new attacking connections a second")
    parser.add_argument("--max-connections", type=int, default=1024)
    parser.add_argument("--max-per-address", type=int, default=64)
    parser.add_argument("--max-tables", type=int, default=200)
    parser.add_argument("--max-tables-per-address", type=int, default=8)
    parser.add_argument("--evict-idle", type=float, default=30.0)
    parser.add_argument("--watchers", type=int, default=60,
                        help="chat: connections of each attacking address")
    parser.add_argument("--chat-rate", type=float,
                        help="chat: the server's --chat-rate (default: the server's default)")
    parser.add_argument("--port", type=int, help="honest: the server's port")
    parser.add_argument("--seated", action="store_true",
                        help="honest: create a table first and ping from its seat")
    args = parser.parse_args()
    if args.scenario == "honest":
        honest = Honest()
        trio.run(honest_pings, args.port, args.seconds, args.every, honest, args.seated)
        print(json.dumps({"rtts": honest.rtts, "lost": honest.lost, "refused": honest.refused,
                          "heard": honest.heard}))
        return
    with tempfile.TemporaryDirectory() as data_dir:
        process, port = start_server(data_dir, server_flags(args))
        try:
            honest = Honest()
            figures = trio.run(SCENARIOS[args.scenario], args, port, honest)
        finally:
            process.terminate()
            process.wait(10)
    result = {"scenario": args.scenario, **figures, "honest": honest.figures(),
              "load": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(result))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
