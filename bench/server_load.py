"""Load benchmark of the Tongits server against a plain Trio + msgpack echo server (the floor).

The server runs in a child process (a fresh one per phase, with the garbage collector on
``tongits-server``'s schedule and an SQLite journal: in memory by default, which measures the
server's own work, every commit included; ``--db file`` adds this machine's disk), the clients
in this process, on another core than the servers when there are two or more:

(a) one action's round trip at one table (a ``move`` until the state showing it), alternating
    with one echo;
(b) N tables x 3 connections, one action per table per second on a fixed schedule: p50/p99
    and the server's CPU, with the echo floor at the same number of connections and rate;
    memory per table;
(c) flat-out actions/s with M tables of one instant client and two instant server bots;
(d) the lobby under listing: L open tables nobody plays at, H honest tables paced as in (b), and
    clients listing the lobby page by page as fast as the rate limit allows (the server applies
    its limits to loopback here): the listers' cost in CPU (the same run without them, minus)
    and the honest tables' p99 against the echo floor's p99 at H tables.

    python bench/server_load.py                       # the full run: 1,000 tables, 300 tables
    python bench/server_load.py --tables 200 --flat-tables 60 --seconds 10
    python bench/server_load.py --db both                 # each phase with :memory: and a file
    python bench/server_load.py --only b --minutes 10 --lock-step   # the long run
    python bench/server_load.py --only b --lock-step --seconds 75 --series  # second by second
    python bench/server_load.py --only d              # the lobby scenario alone
    python bench/server_load.py --only a --only b --tls --tables 300 --seconds 10
    python bench/server_load.py --only b --tls --tls-rounds 3 --tables 300 --seconds 10
    python bench/server_load.py --only b --transport both --contend   # TCP and WebSocket p99
    python bench/server_load.py --only b --transport both --contend --trace  # where it accrues
    python bench/server_load.py --only b --transport mixed --contend  # both in one server
    python bench/server_load.py --only b --only c --db both --reps 3 --against /tmp/before
    python bench/server_load.py --only b --transport both --reps 3 --fanout-floor

The echo floor answers each message with one small frame on its own connection; an action of
ours writes a state to each of the table's three connections (about 1.1 KB each in binary
mode, and the ``ok`` with the mover's). ``--fanout-floor`` runs a second floor in (b), right
after the echo in each rep, that does that transport work too (the echo, and a state-sized
frame to the sender and to the table's two other connections, made once): what an action costs
beyond moving its bytes is the server's CPU per action over that floor's per message.

(b) runs over TCP in binary mode by default; ``--transport ws`` seats the browser's way
instead (JSON, one message per WebSocket text frame), and ``--transport both`` runs the two
alternated, printing p99 and CPU per action of each beside the same echo floor;
``--transport mixed`` seats every other table the browser's way in one run of one server,
and prints each transport's p50 and p99: the two served at the same moments of the machine
(alternated runs see different moments: on a shared machine the CPU a run's server gets
moves its p99 more than anything the transport does). ``--contend``
runs a busy process (a Python loop, nice 0) on the servers' core for the whole run: latency
under contention. The clients and servers are pinned to their own cores (below); the clients'
CPU is printed with every (b) run (a run whose clients use most of what they got measures
the clients), and so is the share of the window the server was ready to run but waiting for
a CPU (the kernel's ``schedstat``): other programs on its core, the contention that makes
its moves wait in its sockets. A (b) run whose steps began a second or more behind their schedule
says so (``NOT KEPT``, with the share of such steps): its p99 and CPU per action then say how
far the machine let the server or the clients fall behind, not what an action costs (the CPU
is divided by the actions timed, and those still queued at the end are not). ``--trace``
splits each (b) action's time where it accrues: the move waiting in the server's socket, the
server's work until the answer is written, and the answer waiting in the client's socket
(bench/latency_trace.py). ``--against DIR`` runs (b)
and (c) with the server of another checkout too (``git archive main | tar -x -C DIR``),
alternated with this one's (``--reps`` times, each rep in the reverse order of the one
before), and prints this checkout's figures over its: before and after a change, measured in
the same minutes of a shared machine.

With ``--tls`` (a) and (b) are run a second time with every client connection to the Tongits
server in TLS (a self-signed ECDSA certificate, as ``--tls-self-signed`` makes; the handshakes
happen while the tables are seated, outside the measured windows), and what TLS costs is
printed as ratios to the plain run of the same invocation: round trip p50, and for the N tables
p50, server CPU (per second and per action) and memory, with the extra CPU and memory per
1,000 tables (the CPU from the extra per action, at the 1,000 actions a second of 1,000 tables:
a client process that cannot keep the pace plays fewer actions, and its server's CPU share
drops with them).

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import latency_trace
import msgpack
import trio
from tongits.server import ServerConfig

_HEADER = struct.Struct(">I")


# ----- the server side (child processes) ----------------


#: ``--fanout-floor``: the bytes of the state frame each of a table's three seats gets per
#: action (the mean of a binary state over TCP, 1,110 bytes, in ``bench/action_cost.py
#: --record`` at seed 17), and the frame itself, made once: a floor measures the transport's
#: work, not encoding
FANOUT_STATE_BYTES = 1110
_FILL = msgpack.packb({"type": "fill", "fill": "x" * (FANOUT_STATE_BYTES - 20)})
_FILL_FRAME = _HEADER.pack(len(_FILL)) + _FILL


def _floor_server(fanout: bool) -> Callable[[trio.SocketStream], Awaitable[None]]:
    """A floor's connection handler: every message is echoed (decoded and encoded again) in
    one write of all that one read brought. With ``fanout``, each connection's first message
    (``{"type": "hello", "group": t}``) names its table, and every further one is answered as
    our server answers a move: the echo (the ``ok``) and a state-sized frame in that write to
    the sender, and a state-sized frame to each of the table's two other connections, written
    at once to their sockets as ``Peer`` writes while nothing is queued. What the echo alone
    does not do of an action's transport: the two other writes, and bigger ones."""
    groups: dict[int, list[int]] = {}

    async def serve(stream: trio.SocketStream) -> None:
        fd = stream.socket.fileno()
        group: list[int] = []
        buffer = b""
        try:
            while data := await stream.receive_some(65536):
                buffer += data
                out = []
                while len(buffer) >= 4:
                    (length,) = _HEADER.unpack_from(buffer)
                    if len(buffer) < 4 + length:
                        break
                    msg = msgpack.unpackb(buffer[4 : 4 + length], raw=False)
                    buffer = buffer[4 + length :]
                    payload = msgpack.packb(msg)
                    out.append(_HEADER.pack(len(payload)) + payload)
                    if fanout:
                        group = _fan_out(groups, group, fd, msg, out)
                if out:
                    await stream.send_all(b"".join(out))
        except (trio.BrokenResourceError, OSError):
            pass

    return serve


def _fan_out(groups: dict[int, list[int]], group: list[int], fd: int, msg: dict[str, Any],
             out: list[bytes]) -> list[int]:
    """The fan-out floor's part of answering ``msg`` from the connection ``fd`` of ``group``
    (its table's connections): a ``hello`` joins the table it names (the group returned); any
    other message gets a state-sized frame in the sender's write (``out``) and one written to
    each other connection of the table."""
    if msg.get("type") == "hello":
        group = groups.setdefault(msg["group"], [])
        group.append(fd)
        return group
    out.append(_FILL_FRAME)
    for other in group:
        if other != fd:
            os.write(other, _FILL_FRAME)
    return group


async def _orphan_watch(parent: int) -> None:
    """A child outlives no parent (a killed bench must not leave servers behind)."""
    while os.getppid() == parent:  # noqa: ASYNC110 - a parent's death has no event to await
        await trio.sleep(0.5)
    os._exit(1)


async def _serve_child(
    kind: str, parent: int, db: str, gc_full: float, limited: bool, tls_dir: str, trace: str
) -> None:
    if kind in ("echo", "fanout"):
        handler = _floor_server(fanout=kind == "fanout")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_orphan_watch, parent)
            listeners = await nursery.start(trio.serve_tcp, handler, 0)
            print(listeners[0].socket.getsockname()[1], flush=True)
        return
    from tongits.server import Server
    from tongits.server.collector import Collector
    from tongits.server.net.tls import ServerTLS
    from tongits.server.storage.store import SQLiteJournal

    config = ServerConfig(port=0, timer=0.0, bot_delay=0.0, max_connections=20000,
                          max_tables=20000, queue_size=1024, log_level="WARNING", db=db,
                          gc_full=gc_full)
    if limited:  # (d): the rate limit applies to loopback; tables left alone stay open
        config = replace(config, limit_loopback=True, max_per_address=20000,
                         connection_rate=0.0, table_rate=0.0, max_tables_per_address=20000,
                         pregame_grace=3600.0, grace=3600.0)
    collector = Collector(config.gc_young, config.gc_full)  # as ``tongits-server`` does
    collector.install()
    tls = ServerTLS.self_signed(tls_dir) if tls_dir else None
    server = Server(config, SQLiteJournal(db), tls=tls)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_orphan_watch, parent)
        if trace:
            nursery.start_soon(latency_trace.trace_server(trace))
        nursery.start_soon(collector.run)
        listeners = await nursery.start(server.serve)
        print(listeners[0].socket.getsockname()[1], flush=True)


def _split_cpus() -> tuple[set[int], set[int]]:
    """With two CPUs or more, the clients (this process) get the first and the servers the
    others: echo and tongits then both answer from another core than the one asking, instead
    of whichever the kernel picks (which moved the echo floor by 20 % between runs)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return set(), set()
    return {cpus[0]}, set(cpus[1:])


CLIENT_CPUS, SERVER_CPUS = _split_cpus()


class Child:
    """A server process; reads its CPU time and RSS from /proc. With ``db = "file"`` each one
    gets a new SQLite file (a table left by an earlier phase must not be restored)."""

    gc_full = ServerConfig().gc_full
    #: ``--trace``: tongits servers stamp their reads and writes (``latency_trace``)
    trace = False

    def __init__(
        self, kind: str, db: str = ":memory:", limited: bool = False, tls: bool = False,
        code: str | None = None,
    ) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="tongits-bench-")
        db = os.path.join(self.tmp.name, "server.db") if db == "file" else db
        self.stamps = os.path.join(self.tmp.name, "stamps.json")
        env = None
        if code is not None:  # ``--against``: the package ``tongits`` is that checkout
            shim = os.path.join(self.tmp.name, "tongits")
            os.mkdir(shim)
            open(os.path.join(shim, "__init__.py"), "w").close()
            for part in ("engine", "protocol", "server", "client"):
                os.symlink(os.path.join(os.path.abspath(code), part), os.path.join(shim, part))
            env = {**os.environ, "PYTHONPATH": self.tmp.name}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child", kind, "--parent", str(os.getpid()),
             "--child-db", db, "--gc-full", str(self.gc_full),
             *(["--child-limited"] if limited else []),
             *(["--child-tls", self.tmp.name] if tls else []),
             *(["--child-trace", self.stamps] if self.trace and kind == "tongits" else [])],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        if SERVER_CPUS:
            os.sched_setaffinity(self.proc.pid, SERVER_CPUS)

    def cpu(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def waited(self) -> float:
        """Seconds the server has been ready to run but waiting for a CPU (the kernel's
        ``schedstat``): under contention, what it did not get of its core."""
        with open(f"/proc/{self.proc.pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9

    def wakes(self) -> int:
        """How many times the server's event loop has gone to sleep (``wakes``)."""
        return wakes(self.proc.pid)

    def rss_kb(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.tmp.cleanup()


def wakes(pid: int) -> int:
    """How many times process ``pid``'s main thread (the event loop of the servers measured
    here, ours and boardgame.io's) has slept waiting and been woken: its voluntary context
    switches. An action that finds the loop asleep pays for the wake-up and for caches other
    work has since taken over, so the CPU per action of paced runs, at a few hundred actions a
    second, depends on how many of them did (1,000 paced tables, whose actions find the
    loop still busy with the one before, cost less per action than 300)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    return 0


# ----- clients ----------------


#: set for the ``--tls`` run: connections to the Tongits server speak TLS
CLIENT_TLS: ssl.SSLContext | None = None


async def dial(port: int) -> trio.abc.Stream:
    """A connection to the Tongits server on ``port``: TCP, or TLS in the ``--tls`` run (the
    handshake done here, before any timing)."""
    tcp = await trio.open_tcp_stream("127.0.0.1", port)
    if CLIENT_TLS is None:
        return tcp
    stream = trio.SSLStream(tcp, CLIENT_TLS, server_hostname="127.0.0.1")
    await stream.do_handshake()
    return stream


def _bench_tls_context() -> ssl.SSLContext:
    """The bench's client side: encryption as a player gets it; the certificate is the
    child's own, checked by nobody (trust is not what is measured)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Client:
    """A raw binary-mode client: one reader task routes replies and keeps the latest state.

    Over plain TCP it reads and writes its socket directly, as the server does (``Peer``):
    trio's ``SocketStream`` first tries a read that fails, and wraps every call in a
    checkpoint; the bench's one process plays thousands of connections, and its own queueing
    would count as the server's latency (the floor's client reads the same way)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self._fd = stream.socket.fileno() if isinstance(stream, trio.SocketStream) else None
        #: ``--trace``: the socket read with the kernel's receive stamps, the stamp of the
        #: chunk being read and of the one that brought the latest state
        self._stamped = (latency_trace.stamped_socket(self._fd)
                         if TRACE is not None and self._fd is not None else None)
        self._chunk_at = self.state_at = 0
        self._sending = False  # a send is waiting for the socket: the next ones queue behind it
        self.buffer = b""
        self.state: dict[str, Any] | None = None
        self.states = trio.Event()
        self.replies: dict[int, trio.Event] = {}
        self.results = 0
        self.events = 0
        self.seat: int | None = None
        self.on_state: Callable[[Client, dict[str, Any]], None] | None = None
        self._ids = 0

    async def send(self, msg: dict[str, Any]) -> None:
        payload = msgpack.packb(msg)
        await self._send_bytes(_HEADER.pack(len(payload)) + payload)

    async def _send_bytes(self, data: bytes) -> None:
        if self._fd is not None and not self._sending:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                written = 0
            data = data[written:]
            if not data:
                return
        self._sending = True
        try:
            await self.stream.send_all(data)
        finally:
            self._sending = False

    async def _receive(self) -> bytes:
        if self._fd is None:
            return bytes(await self.stream.receive_some(1 << 16))
        while True:
            await trio.lowlevel.wait_readable(self._fd)
            try:
                if self._stamped is None:
                    return os.read(self._fd, 1 << 16)
                data, self._chunk_at = latency_trace.receive_stamped(self._stamped, 1 << 16)
                return data
            except BlockingIOError:
                continue
            except OSError:
                return b""

    async def request(self, msg: dict[str, Any]) -> None:
        self._ids += 1
        msg["id"] = self._ids
        done = self.replies[self._ids] = trio.Event()
        await self.send(msg)
        await done.wait()

    async def read(self) -> None:
        try:
            while data := await self._receive():
                buffer = self.buffer + data if self.buffer else data
                at = 0
                while len(buffer) - at >= 4:
                    (length,) = _HEADER.unpack_from(buffer, at)
                    if len(buffer) - at < 4 + length:
                        break
                    msg = msgpack.unpackb(buffer[at + 4 : at + 4 + length], raw=False)
                    at += 4 + length
                    self._route(msg)
                self.buffer = buffer[at:]
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    def _route(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        ref = msg.get("ref") if kind == "error" else msg.get("id")
        if kind == "error":
            raise RuntimeError(f"server error: {msg}")
        if kind == "joined":
            self.seat = msg.get("seat")
        if kind == "state":
            self.state = msg
            self.state_at = self._chunk_at
            if msg.get("event"):
                self.events += 1
            self.states.set()
            self.states = trio.Event()
            if self.on_state is not None:
                self.on_state(self, msg)
        elif kind == "hand_result":
            self.results += 1
        if ref is not None and ref in self.replies:
            self.replies.pop(ref).set()


class WebSocketClient(Client):
    """The browser seat's transport: the protocol's text mode (JSON), one message per
    WebSocket text frame, with the same routing as ``Client``.

    Its framing is written here rather than with wsproto, for the reason ``Client`` reads its
    socket directly: the bench's one process plays thousands of connections, and wsproto's
    per-frame work in it (hundreds of µs per state under a busy machine, for three states an
    action) was the queue that made the browser seat's p99 look like seconds. The server's
    frames are unmasked text frames; the client's are masked with the key 0 (a valid key: a
    client must mask, and XOR with zeros leaves the payload as it is)."""

    async def send(self, msg: dict[str, Any]) -> None:
        payload = json.dumps(msg, separators=(",", ":")).encode()
        size = len(payload)
        if size < 126:
            head = bytes((0x81, 0x80 | size))
        elif size < 0x10000:
            head = struct.pack(">BBH", 0x81, 0xFE, size)
        else:
            head = struct.pack(">BBQ", 0x81, 0xFF, size)
        await self._send_bytes(head + b"\0\0\0\0" + payload)

    async def read(self) -> None:
        try:
            while data := await self._receive():
                buffer = self.buffer + data if self.buffer else data
                at = 0
                while (frame := _next_frame(buffer, at)) is not None:
                    opcode, start, at = frame
                    if opcode == 0x8:  # the server closes
                        return
                    if opcode == 0x1:
                        self._route(json.loads(buffer[start:at]))
                self.buffer = buffer[at:]
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    @classmethod
    async def open(cls, port: int) -> WebSocketClient:
        """Dial ``port`` and upgrade to a WebSocket on ``/ws`` (the handshake read whole
        before any timing)."""
        stream = await dial(port)
        host = f"127.0.0.1:{port}"
        key = base64.b64encode(os.urandom(16)).decode()
        await stream.send_all(
            f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: "
            f"Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: http://{host}\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = await stream.receive_some(65536)
            if not chunk:
                raise RuntimeError("the server closed during the WebSocket handshake")
            answer += chunk
        head, _, rest = answer.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError(f"WebSocket refused: {head[:40]!r}")
        client = cls(stream)
        client.buffer = rest
        return client


def _next_frame(buffer: bytes, at: int) -> tuple[int, int, int] | None:
    """The unmasked WebSocket frame at ``at`` in ``buffer``: (opcode, where its payload starts,
    where it ends), or None if it is not all there yet."""
    if len(buffer) - at < 2:
        return None
    opcode, size, start = buffer[at] & 0x0F, buffer[at + 1] & 0x7F, at + 2
    if size == 126:
        if len(buffer) - at < 4:
            return None
        (size,) = struct.unpack_from(">H", buffer, at + 2)
        start = at + 4
    elif size == 127:
        if len(buffer) - at < 10:
            return None
        (size,) = struct.unpack_from(">Q", buffer, at + 2)
        start = at + 10
    if len(buffer) < start + size:
        return None
    return opcode, start, start + size


def choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A quick legal move: draw, fold, else the last listed (a discard in the play phase)."""
    for move in legal:
        if move["action"] in ("draw", "fold"):
            return move
    return legal[-1]


#: ``--trace``: (sent, the answer's kernel stamp, handled) in ns of each timed action of (b)
TRACE: list[tuple[int, int, int]] | None = None

#: the transport of the Tongits server's clients in (b): "tcp" (binary mode), "ws" (the
#: browser seat's JSON over a WebSocket) or "mixed" (half the tables each,
#: ``table_transport``); the echo floor's clients are TCP either way
TRANSPORT = "tcp"


def table_transport(t: int) -> str:
    """The transport of table ``t``'s clients in (b): ``TRANSPORT``, but under "mixed" every
    other table's are WebSocket seats and the rest TCP, served by one server at the same
    moments of the machine."""
    if TRANSPORT == "mixed":
        return "ws" if t % 2 else "tcp"
    return TRANSPORT


async def connect(port: int, nursery: trio.Nursery, name: str,
                  transport: str | None = None) -> Client:
    """A client of the Tongits server, said ``hello``: over ``transport`` ("tcp" or "ws";
    None: ``TRANSPORT``)."""
    if (transport or TRANSPORT) == "ws":
        client: Client = await WebSocketClient.open(port)
    else:
        client = Client(await dial(port))
    nursery.start_soon(client.read)
    await client.request({"type": "hello", "version": 1, "name": name, "kind": "bot"})
    return client


def pct(samples: list[float], q: float) -> float:
    """The q-quantile of ``samples``, in microseconds."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6, 1)


async def act_and_wait(client: Client) -> float:
    """Play one move for ``client`` (it must be to act) and time it until its next state."""
    state = client.state
    assert state is not None and state.get("legal")
    seq = state["seq"]
    sent = time.time_ns()
    start = time.perf_counter()
    await client.send({"type": "move", "move": choose(state["legal"])})
    await wait_newer(client, seq)
    took = time.perf_counter() - start
    if TRACE is not None:
        TRACE.append((sent, client.state_at, time.time_ns()))
    return took


async def wait_newer(client: Client, seq: int) -> None:
    """Wait until ``client`` has a state newer than ``seq``."""
    while client.state is None or client.state["seq"] <= seq:
        await client.states.wait()


async def newest_state(group: list[Client]) -> dict[str, Any]:
    """The newest state any of a table's three clients holds. Each gets every state, but not
    at the same moment: one client's latest can be a step behind the table (the move just
    played, the deal after ``next_hand``), and acting on it waits for a turn that has passed
    (over TLS, where a state reaches the three a little further apart, that stalled (b))."""
    while True:
        states = [client.state for client in group if client.state is not None]
        if states:
            return max(states, key=lambda state: int(state["seq"]))
        await group[0].states.wait()


# ----- (a) one round trip ----------------


async def round_trips(
    echo_port: int, child: Child, count: int
) -> tuple[list[float], list[float], float]:
    """``count`` round trips each, alternating: one echo, then one of our moves at a table of
    ours and two instant bots (until the state showing it), so that both see the same moments
    of a shared machine. Also the server's CPU seconds per action (ours and the bots')."""
    async with trio.open_nursery() as nursery:
        echo = Client(await trio.open_tcp_stream("127.0.0.1", echo_port))
        nursery.start_soon(echo.read)
        me = await connect(child.port, nursery, "me")
        await me.request({"type": "create_table", "name": "rtt", "bots": 2, "timer": 0})
        cpu0, events0 = child.cpu(), me.events
        floor: list[float] = []
        server: list[float] = []
        while len(server) < count:
            state = me.state
            if state is not None and state["view"]["phase"] == "over":
                await me.request({"type": "next_hand"})
                await wait_newer(me, state["seq"])
                continue
            if state is None or not state.get("legal"):
                await me.states.wait()
                continue
            start = time.perf_counter()
            await echo.request({"type": "ping", "n": len(floor)})
            floor.append(time.perf_counter() - start)
            server.append(await act_and_wait(me))
        per_action = (child.cpu() - cpu0) / max(1, me.events - events0)
        nursery.cancel_scope.cancel()
    return floor, server, per_action


# ----- (b) many tables at one action per second ----------------


Extra = Callable[[int, trio.Nursery], Awaitable[Callable[[], dict[str, Any]]]]


async def paced_tables(
    child: Child, tables: int, seconds: float, echo: bool, extra: Extra | None = None,
    lock_step: bool = False,
) -> dict[str, Any]:
    """``tables`` x 3 connections; each table acts once per second for ``seconds``. The server's
    CPU is measured over the paced window only, its memory once every table is seated; its
    loop's sleeps per timed action (``wakes``) too.
    ``extra(port, nursery)``, once the tables are seated, starts more clients for the window
    and returns what reports their figures. With ``lock_step`` every table starts its first
    hand in the same second (no untimed warm-up), so their hands keep ending, and new ones
    being dealt, within the same second or two. The figures also come second by second
    (``series``, from when each timed action was played and the CPU of the server and of the
    clients every quarter of a second)."""
    port = child.port
    samples: list[float] = []
    #: when (seconds into the window) each sample's action was played
    played: list[float] = []
    #: the samples again, by the transport of the table that played them ("tcp", "ws")
    by_transport: dict[str, list[float]] = {}
    cpu_marks: list[tuple[float, float, float]] = []
    #: how late each step of the schedule began, in seconds
    late: list[float] = []
    async with trio.open_nursery() as nursery:
        groups = [await _seat_table(port, nursery, t, echo) for t in range(tables)]
        await trio.sleep(0.5)
        rss_ready = child.rss_kb()
        extra_report = await extra(port, nursery) if extra is not None else dict

        if not echo and not lock_step:
            # Tables that all start a hand together would all end it together too: a burst of
            # hand results and deals no real room makes. Each table first plays 0-59 moves
            # (untimed) so that hands end, and new ones are dealt, all through the window.
            async with trio.open_nursery() as warm:
                for index, group in enumerate(groups):
                    warm.start_soon(_warm_up, group, index % 60)

        cpu0, wall0, own0, wakes0 = child.cpu(), time.perf_counter(), _own_cpu(), child.wakes()
        waited0 = child.waited()
        begin = trio.current_time()
        window = _trace_start(child)

        async def mark_cpu() -> None:
            while True:
                cpu_marks.append((trio.current_time() - begin, child.cpu(), _own_cpu()))
                await trio.sleep(0.25)

        nursery.start_soon(mark_cpu)

        async def drive(index: int, group: list[Client]) -> None:
            # A fixed schedule, spread evenly over each second: a late action does not move
            # the table's next one (pacing from each action's end would bunch up, after any
            # stall, the tables it delayed: bursts no real room of players would make).
            tick = begin + index / tables
            kind = "ws" if isinstance(group[0], WebSocketClient) else "tcp"
            while tick < begin + seconds:
                await trio.sleep_until(tick)
                late.append(trio.current_time() - tick)
                if echo:
                    start = time.perf_counter()
                    await group[index % 3].request({"type": "move", "move": {"action": "draw"}})
                    samples.append(time.perf_counter() - start)
                    played.append(tick - begin)
                else:
                    took = await _table_step(group)
                    if took is not None:
                        samples.append(took)
                        played.append(tick - begin)
                        by_transport.setdefault(kind, []).append(took)
                tick += 1.0

        async with trio.open_nursery() as drivers:
            for index, group in enumerate(groups):
                drivers.start_soon(drive, index, group)
        wall = time.perf_counter() - wall0
        cpu, clients_cpu = (child.cpu() - cpu0) / wall, (_own_cpu() - own0) / wall
        waited = (child.waited() - waited0) / wall
        slept = child.wakes() - wakes0
        traced = _trace_end(child, groups, window) if not echo else {}
        nursery.cancel_scope.cancel()
    return {"samples": samples, "by_transport": by_transport, "cpu": cpu,
            "clients_cpu": clients_cpu, "rss_ready_kb": rss_ready,
            "wakes": slept / max(1, len(samples)),
            "behind": sum(lag >= 1.0 for lag in late) / max(1, len(late)), "waited": waited,
            "series": _series(samples, played, cpu_marks), **traced, **extra_report()}


def _trace_start(child: Child) -> tuple[int, dict[str, Any]]:
    """``--trace``: forget the untimed actions' stamps; the window's start (ns) and the
    server's stamps then (its loop's counts so far); nothing of the server without it."""
    if TRACE is None:
        return time.time_ns(), {}
    TRACE.clear()
    return time.time_ns(), latency_trace.server_stamps(child.proc.pid, child.stamps)


def _trace_end(child: Child, groups: list[list[Client]],
               window: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    """``--trace``: where the time of the window's actions went (``latency_trace.summary``),
    or nothing without ``--trace``."""
    if TRACE is None:
        return {}
    stamps = latency_trace.server_stamps(child.proc.pid, child.stamps)
    stream = groups[0][0].stream
    assert isinstance(stream, trio.SocketStream)
    start, before = window
    return {"trace": latency_trace.summary(TRACE, stamps, (start, time.time_ns()),
                                           latency_trace.nodelay(stream.socket), before)}


def _print_series(label: str, rows: list[dict[str, Any]], wanted: bool) -> None:
    """``--series``: one line per second of a (b) window."""
    for row in rows if wanted else []:
        print(f"(b) {label} second {row['second']:4d}: {row['actions']:5d} actions, p50 "
              f"{row['p50_us']} µs, p99 {row['p99_us']} µs, max {row['max_us']} µs; server "
              f"CPU {row['server_cpu_pct']} %, the clients' {row['clients_cpu_pct']} %",
              flush=True)


def _series(samples: list[float], played: list[float],
            cpu_marks: list[tuple[float, float, float]]) -> list[dict[str, Any]]:
    """Second by second of a (b) window: the actions played in it, their p50, p99 and max, and
    the CPU the server and the clients used in it (a burst of hand ends shows in its seconds)."""
    by_second: dict[int, list[float]] = {}
    for when, took in zip(played, samples, strict=True):
        by_second.setdefault(int(when), []).append(took)
    cpu: dict[int, tuple[float, float, float]] = {}
    for (t0, s0, c0), (t1, s1, c1) in zip(cpu_marks, cpu_marks[1:], strict=False):
        span, server, clients = cpu.get(int(t0), (0.0, 0.0, 0.0))
        cpu[int(t0)] = (span + t1 - t0, server + s1 - s0, clients + c1 - c0)
    rows = []
    for second in sorted(by_second.keys() | cpu.keys()):
        times = by_second.get(second, [])
        span, server, clients = cpu.get(second, (0.0, 0.0, 0.0))
        rows.append({"second": second, "actions": len(times), "p50_us": pct(times, 0.5),
                     "p99_us": pct(times, 0.99), "max_us": us(max(times)) if times else None,
                     "server_cpu_pct": round(100 * server / span, 1) if span else None,
                     "clients_cpu_pct": round(100 * clients / span, 1) if span else None})
    return rows


def _own_cpu() -> float:
    """This process's CPU seconds: the clients' (a client process near a whole core would make
    its own queueing look like the server's latency)."""
    times = os.times()
    return times.user + times.system


async def _seat_table(port: int, nursery: trio.Nursery, t: int, echo: bool) -> list[Client]:
    """Table ``t``'s three connections: raw clients of a floor (echo or fan-out), which each
    say their table first, or an owner who creates table ``t{t + 1}`` and two players who
    join it."""
    if echo:
        group = []
        for _ in range(3):
            client = Client(await trio.open_tcp_stream("127.0.0.1", port))
            nursery.start_soon(client.read)
            await client.request({"type": "hello", "group": t})
            group.append(client)
        return group
    transport = table_transport(t)
    owner = await connect(port, nursery, f"o{t}", transport)
    await owner.request({"type": "create_table", "name": f"b{t}", "timer": 0})
    group = [owner]
    for s in (1, 2):
        other = await connect(port, nursery, f"p{t}{s}", transport)
        await other.request({"type": "join", "table": f"t{t + 1}"})
        group.append(other)
    return group


async def _table_step(group: list[Client]) -> float | None:
    """One step of a table: the next hand if it is over (None), else the seat to act plays
    (the action's time)."""
    state = await newest_state(group)
    if state["view"]["phase"] == "over":
        for client in group:
            await client.request({"type": "next_hand"})
        await wait_newer(group[0], state["seq"])  # the deal, before the next step
        return None
    actor = group[state["view"]["to_act"]]
    while (actor.state is None or actor.state["seq"] < state["seq"]
           or not actor.state.get("legal")):
        await actor.states.wait()
    return await act_and_wait(actor)


async def _warm_up(group: list[Client], moves: int) -> None:
    for _ in range(moves):
        await _table_step(group)


# ----- (c) flat out ----------------


async def flat_out(child: Child, tables: int, seconds: float) -> dict[str, Any]:
    port = child.port
    clients: list[Client] = []
    async with trio.open_nursery() as nursery:
        pending: trio.MemorySendChannel[Client]
        pending, todo = trio.open_memory_channel[Client](tables * 8)

        def react(client: Client, state: dict[str, Any]) -> None:
            if state.get("legal") or state["view"]["phase"] == "over":
                pending.send_nowait(client)

        for t in range(tables):
            client = await connect(port, nursery, f"f{t}")
            client.on_state = react
            clients.append(client)

        for _ in range(64):
            nursery.start_soon(_flat_out_player, todo)
        for t, client in enumerate(clients):
            await client.send({"type": "create_table", "name": f"c{t}", "bots": 2, "timer": 0})
        await trio.sleep(1.0)
        before = sum(c.events for c in clients)
        start, cpu0, wakes0 = time.perf_counter(), child.cpu(), child.wakes()
        await trio.sleep(seconds)
        actions = sum(c.events for c in clients) - before
        elapsed = time.perf_counter() - start
        cpu = (child.cpu() - cpu0) / elapsed
        slept = child.wakes() - wakes0
        rss = child.rss_kb()
        hands = sum(c.results for c in clients)
        nursery.cancel_scope.cancel()
    return {"actions": actions, "elapsed": elapsed, "hands": hands, "cpu": cpu, "rss_kb": rss,
            "wakes": slept / max(1, actions)}


async def _flat_out_player(todo: trio.MemoryReceiveChannel[Client]) -> None:
    """Answer each client whose state asks for something: its next hand, or a legal move."""
    async for client in todo:
        state = client.state
        if state is None:
            continue
        if state["view"]["phase"] == "over":
            await client.send({"type": "next_hand"})
        elif state.get("legal"):
            await client.send({"type": "move", "move": choose(state["legal"])})


# ----- (d) the lobby under listing ----------------


async def _walk_the_lobby(
    client: Client, pace: float, pages: list[int], times: list[float]
) -> None:
    """List the lobby page after page, ``pace`` lists a second, for ever: each page's size in
    bytes goes to ``pages`` and the time it came to ``times``."""
    sizes: dict[int, int] = {}
    original = client._route
    offset = [0]

    def route(msg: dict[str, Any]) -> None:
        if msg["type"] == "tables":
            sizes[msg["id"]] = len(msgpack.packb(msg))
            offset[0] = msg.get("next") or 0
        original(msg)

    client._route = route  # type: ignore[method-assign]
    tick = trio.current_time()
    while True:
        await client.request({"type": "list_tables", "offset": offset[0]})
        pages.append(sizes.popitem()[1])
        times.append(trio.current_time())
        tick += 1.0 / pace
        await trio.sleep_until(tick)


def lobby_load(open_tables: int, listers: int) -> Extra:
    """An ``extra`` for ``paced_tables``: ``open_tables`` tables created and left (their
    creator gone, the seat kept), then ``listers`` clients that each walk the lobby page by
    page, as fast as the rate limit allows (``rate / LIST_TABLES_COST`` lists a second, after
    the burst)."""
    from tongits.server.routes import LIST_TABLES_COST

    config = ServerConfig()
    pace = config.rate / LIST_TABLES_COST

    async def start(port: int, nursery: trio.Nursery) -> Callable[[], dict[str, Any]]:
        made = 0
        pages: list[int] = []
        times: list[float] = []

        async def make(first: int) -> None:
            nonlocal made
            for n in range(first, open_tables, 25):
                async with trio.open_nursery() as own:
                    client = await connect(port, own, f"open{n}")
                    await client.request({"type": "create_table", "name": f"open {n}",
                                          "auto_start": False, "timer": 0})
                    made += 1
                    own.cancel_scope.cancel()
                await client.stream.aclose()

        async with trio.open_nursery() as makers:
            for first in range(25):
                makers.start_soon(make, first)

        for index in range(listers):
            client = await connect(port, nursery, f"lister{index}")
            nursery.start_soon(_walk_the_lobby, client, pace, pages, times)

        def report() -> dict[str, Any]:
            span = times[-1] - times[0] if len(times) > 1 else 0.0
            return {"open_tables": made, "pages": len(pages),
                    "lists_per_s": round((len(times) - 1) / span, 1) if span else 0.0,
                    "largest_page": max(pages, default=0)}

        return report

    return start


# ----- the run ----------------


def measure(
    kind: str, run: Callable[[Child], Awaitable[Any]], db: str = ":memory:", limited: bool = False,
    tls: bool = False, code: str | None = None,
) -> tuple[Any, int]:
    """Run ``run(child)`` against a fresh server process (``code``: another checkout's);
    returns its result and the server's RSS before any client connected."""
    child = Child(kind, db, limited, tls, code)
    try:
        rss0 = child.rss_kb()
        out = trio.run(run, child)
    finally:
        child.stop()
    return out, rss0


def tls_costs(
    args: argparse.Namespace, report: dict[str, Any], db: str, paced_s: float, only: set[str]
) -> None:
    """(a) and (b) again with every connection to the Tongits server in TLS; the figures go in
    ``report`` under ``tls_``, with their ratios to the plain figures above (same ``db``)."""
    global CLIENT_TLS
    tag = "" if args.db != "both" else ("_memory" if db == ":memory:" else "_file")
    CLIENT_TLS = _bench_tls_context()
    try:
        if "a" in only:
            echo, tongits = Child("echo"), Child("tongits", db, tls=True)
            try:
                floor, server, per_action = trio.run(round_trips, echo.port, tongits, args.rtt)
            finally:
                echo.stop()
                tongits.stop()
            plain = report[f"a{tag}_server_p50_us"]
            report["tls_a_server_p50_us"] = pct(server, 0.5)
            report["tls_a_server_p99_us"] = pct(server, 0.99)
            report["tls_a_p50_ratio_to_floor"] = round(
                statistics.median(server) / statistics.median(floor), 2)
            report["tls_a_p50_ratio_to_plain"] = round(report["tls_a_server_p50_us"] / plain, 2)
            report["tls_a_cpu_per_action_us"] = us(per_action)
            report["tls_a_cpu_per_action_ratio_to_plain"] = round(
                report["tls_a_cpu_per_action_us"] / report[f"a{tag}_cpu_per_action_us"], 2)
            print(f"(a/TLS) one action round trip over TLS: p50 {report['tls_a_server_p50_us']} "
                  f"µs = {report['tls_a_p50_ratio_to_plain']}x the plain p50 of this run "
                  f"({report['tls_a_p50_ratio_to_floor']}x the echo floor beside it, plain "
                  f"{report[f'a{tag}_p50_ratio']}x); server CPU {report['tls_a_cpu_per_action_us']}"
                  f" µs per action = {report['tls_a_cpu_per_action_ratio_to_plain']}x plain",
                  flush=True)
        if "b" in only:
            # CPU per action, not per second: when the clients' one core cannot keep the pace
            # (the TLS clients decrypt too), fewer actions are played and the server's CPU
            # share drops with them. 1,000 tables at one action a second are 1,000 actions/s.
            # With --tls-rounds N, TLS and plain runs alternate (TLS, plain, TLS, …: N of
            # TLS, N of plain with the one above) and the medians are compared, so that the
            # other loads of a shared machine weigh on both alike.
            plain_runs = [(report[f"b{tag}_cpu_per_action_us"],
                           report[f"b{tag}_memory_per_table_kb"])]
            tls_runs: list[tuple[float, float]] = []
            for round_ in range(args.tls_rounds):
                if round_:
                    CLIENT_TLS = None
                    plain_runs.append(paced_costs(args, db, paced_s, tls=False)[0])
                    CLIENT_TLS = _bench_tls_context()
                costs, paced = paced_costs(args, db, paced_s, tls=True)
                tls_runs.append(costs)
                print(f"(b/TLS) round {round_ + 1}: TLS {costs[0]} µs per action, "
                      f"{costs[1]} KB per table; plain {plain_runs[-1][0]} µs, "
                      f"{plain_runs[-1][1]} KB", flush=True)
            per_action = round(statistics.median(c for c, _ in tls_runs), 1)
            memory = round(statistics.median(m for _, m in tls_runs), 1)
            plain_per_action = round(statistics.median(c for c, _ in plain_runs), 1)
            plain_memory = round(statistics.median(m for _, m in plain_runs), 1)
            samples = paced["samples"]
            cpu = round(100 * paced["cpu"], 1)
            plain_cpu = report[f"b{tag}_server_cpu_pct"]
            report["tls_b_rounds"] = args.tls_rounds
            report["tls_b_server_p50_us"] = pct(samples, 0.5)
            report["tls_b_server_p99_us"] = pct(samples, 0.99)
            report["tls_b_server_cpu_pct"] = cpu
            report["tls_b_memory_per_table_kb"] = memory
            report["tls_b_p50_ratio_to_plain"] = round(
                report["tls_b_server_p50_us"] / report[f"b{tag}_server_p50_us"], 2)
            report["tls_b_cpu_ratio_to_plain"] = round(cpu / max(plain_cpu, 0.1), 2)
            report["tls_b_memory_ratio_to_plain"] = round(memory / max(plain_memory, 0.1), 2)
            report["tls_b_actions"] = len(samples)
            report["tls_b_cpu_per_action_us"] = per_action
            report["tls_b_plain_cpu_per_action_us"] = plain_per_action
            report["tls_b_cpu_per_action_ratio_to_plain"] = round(
                per_action / max(plain_per_action, 0.1), 2)
            report["tls_b_extra_cpu_pct_per_1000_tables"] = round(
                (per_action - plain_per_action) * 1000 / 1e4, 1)
            report["tls_b_extra_memory_mb_per_1000_tables"] = round(
                (memory - plain_memory) * 1000 / 1024, 1)
            print(f"(b/TLS) {args.tables} tables over TLS: p50 {report['tls_b_server_p50_us']} µs "
                  f"({report['tls_b_p50_ratio_to_plain']}x plain), server CPU {cpu} % "
                  f"({report['tls_b_cpu_ratio_to_plain']}x plain); median of {args.tls_rounds} "
                  f"round(s): {per_action} µs per action ("
                  f"{report['tls_b_cpu_per_action_ratio_to_plain']}x plain's {plain_per_action}"
                  f"), memory {memory} KB per table ({report['tls_b_memory_ratio_to_plain']}x "
                  f"plain); per 1,000 tables TLS adds "
                  f"{report['tls_b_extra_cpu_pct_per_1000_tables']} % of a core and "
                  f"{report['tls_b_extra_memory_mb_per_1000_tables']} MB", flush=True)
    finally:
        CLIENT_TLS = None


def paced_costs(
    args: argparse.Namespace, db: str, paced_s: float, tls: bool
) -> tuple[tuple[float, float], dict[str, Any]]:
    """One (b) run: ((server CPU µs per action, KB per table), its figures)."""
    paced, rss0 = measure("tongits", lambda child: paced_tables(
        child, args.tables, paced_s, False, lock_step=args.lock_step), db, tls=tls)
    per_action = us(paced["cpu"] * paced_s / max(1, len(paced["samples"])))
    return (per_action, round((paced["rss_ready_kb"] - rss0) / args.tables, 1)), paced


def us(seconds: float) -> float:
    return round(seconds * 1e6, 1)


def lobby(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """(d): the honest tables with the open tables and no lister, then with the listers; the
    echo floor at the same number of paced tables."""
    honest, seconds = args.honest_tables, args.seconds
    floor, _ = measure("echo", lambda child: paced_tables(child, honest, seconds, True))
    quiet, _ = measure("tongits", lambda child: paced_tables(
        child, honest, seconds, False, lobby_load(args.open_tables, 0)), limited=True)
    busy, _ = measure("tongits", lambda child: paced_tables(
        child, honest, seconds, False, lobby_load(args.open_tables, args.listers)),
        limited=True)
    floor_p99 = pct(floor["samples"], 0.99)
    report.update({
        "d_open_tables": busy["open_tables"], "d_honest_tables": honest,
        "d_listers": args.listers, "d_lists": busy["pages"],
        "d_lists_per_s": busy["lists_per_s"],
        "d_largest_page_bytes": busy["largest_page"],
        "d_cpu_pct_without": round(100 * quiet["cpu"], 1),
        "d_cpu_pct_with": round(100 * busy["cpu"], 1),
        "d_listers_cpu_pct": round(100 * (busy["cpu"] - quiet["cpu"]), 1),
        "d_p99_without_us": pct(quiet["samples"], 0.99),
        "d_p99_with_us": pct(busy["samples"], 0.99),
        "d_floor_p99_us": floor_p99,
        "d_p99_ratio": round(pct(busy["samples"], 0.99) / floor_p99, 2),
    })
    print(f"(d) {report['d_open_tables']} open tables, {honest} paced tables, "
          f"{args.listers} lister(s) at {report['d_lists_per_s']} lists/s (largest page "
          f"{report['d_largest_page_bytes']} bytes): listers cost "
          f"{report['d_listers_cpu_pct']} % of a core ({report['d_cpu_pct_with']} % against "
          f"{report['d_cpu_pct_without']} % without); honest p99 {report['d_p99_with_us']} µs "
          f"({report['d_p99_without_us']} µs without), echo floor p99 {floor_p99} µs: "
          f"{report['d_p99_ratio']}x", flush=True)


@dataclass(frozen=True)
class Variant:
    """One kind of (b) run: the journal, the clients' transport, and whose server (this
    checkout's, or ``--against``'s); ``tag`` names its figures in the report."""

    db: str
    transport: str
    code: str | None
    tag: str

    @property
    def label(self) -> str:
        side = "" if self.code is None else ", against"
        return f"[{self.db}, {self.transport}{side}]"


def _variants(args: argparse.Namespace, dbs: list[str]) -> list[Variant]:
    transports = ["tcp", "ws"] if args.transport == "both" else [args.transport]
    codes: list[str | None] = [None, args.against] if args.against else [None]
    variants = []
    for db in dbs:
        for transport in transports:
            for code in codes:
                tag = "" if len(dbs) == 1 else ("_memory" if db == ":memory:" else "_file")
                tag += "" if len(transports) == 1 else f"_{transport}"
                tag += "_against" if code is not None else ""
                variants.append(Variant(db, transport, code, tag))
    return variants


def _paced_run(args: argparse.Namespace, variant: Variant, paced_s: float) -> tuple[
        dict[str, Any], int]:
    global TRANSPORT, TRACE
    TRANSPORT = variant.transport
    TRACE = [] if args.trace else None
    try:
        return measure("tongits", lambda child: paced_tables(
            child, args.tables, paced_s, False, lock_step=args.lock_step), variant.db,
            code=variant.code)
    finally:
        TRANSPORT, TRACE = "tcp", None


def paced_scenario(args: argparse.Namespace, dbs: list[str], paced_s: float,
                   report: dict[str, Any]) -> None:
    """(b): the echo floor, then each variant (journal x transport x server), ``--reps``
    times alternated (each rep in the reverse order of the one before, the floor first), so
    that every variant and the floor see the same moments of a shared machine. A figure of
    several reps is the median of its reps; a ratio to the floor is the median of each rep's
    ratio to its own floor."""
    variants = _variants(args, dbs)
    floor_s = min(paced_s, 60.0)  # a long run's floor: its p99 is as well known after a minute
    floors: list[dict[str, float]] = []
    runs: dict[Variant, list[dict[str, float]]] = {variant: [] for variant in variants}
    for rep in range(args.reps):
        floor = _paced_floors(args, floor_s, rep)
        floors.append(floor)
        for variant in variants if rep % 2 == 0 else variants[::-1]:
            runs[variant].append(_paced_variant(args, variant, paced_s, rep, floor, report))
    middle = {key: _median(floors, key) for key in floors[0]}
    report.update({"b_floor_p50_us": middle["p50"], "b_floor_p99_us": middle["p99"],
                   "b_floor_p999_us": middle["p999"], "b_floor_cpu_pct": middle["cpu_pct"],
                   "b_floor_cpu_per_message_us": middle["cpu_us"],
                   "b_floor_wakes_per_message": middle["wakes"],
                   **{f"b_fanout_floor_{name}": middle[key]
                      for key, name in (("fanout_cpu_us", "cpu_per_message_us"),
                                        ("fanout_over_echo", "over_echo")) if key in middle}})
    names = {"p50": "server_p50_us", "p99": "server_p99_us", "p999": "server_p999_us",
             "max": "server_max_us", "actions": "actions", "cpu_pct": "server_cpu_pct",
             "clients_cpu_pct": "clients_cpu_pct", "behind_pct": "steps_behind_pct",
             "waited_pct": "server_waited_for_cpu_pct",
             "cpu_us": "cpu_per_action_us",
             "memory_kb": "memory_per_table_kb", "p99_over_floor": "p99_over_floor_p99",
             "p999_over_floor": "p999_over_floor_p99",
             "cpu_over_floor": "cpu_per_action_over_floor",
             "cpu_over_fanout": "cpu_per_action_over_fanout_floor", "wakes": "wakes_per_action",
             "tcp_p99": "tcp_seats_p99_us", "ws_p99": "ws_seats_p99_us",
             "ws_over_tcp_p99": "ws_over_tcp_p99"}
    for variant, reps in runs.items():
        for key, name in names.items():
            if key in reps[0]:
                report[f"b{variant.tag}_{name}"] = _median(reps, key)
    if args.reps > 1 or len(variants) > 1:
        for variant in variants:
            tag = variant.tag
            print(f"(b) {variant.label} median of {args.reps}: p99 "
                  f"{report[f'b{tag}_server_p99_us']} µs = "
                  f"{report[f'b{tag}_p99_over_floor_p99']}x the floor's p99 (floor "
                  f"{middle['p99']} µs); {report[f'b{tag}_cpu_per_action_us']} µs per action ="
                  f" {report[f'b{tag}_cpu_per_action_over_floor']}x an echoed message"
                  f"{_over_fanout(report, tag)}; the "
                  f"clients' process {report[f'b{tag}_clients_cpu_pct']} %; the server ready "
                  f"but waiting for a CPU {report[f'b{tag}_server_waited_for_cpu_pct']} % of "
                  "the time", flush=True)
    for variant in variants:
        if variant.code is None:
            continue
        mine = variant.tag.removesuffix("_against")
        _over_against(report, f"b{mine}", ("server_p99_us", "cpu_per_action_us"))
        print(f"(b) [{variant.db}, {variant.transport}] this checkout / --against: p99 "
              f"{report[f'b{mine}_server_p99_us_over_against']}, CPU per action "
              f"{report[f'b{mine}_cpu_per_action_us_over_against']}", flush=True)


def _paced_floors(args: argparse.Namespace, seconds: float, rep: int) -> dict[str, float]:
    """One rep's floors: the echo's figures, and with ``--fanout-floor`` the fan-out floor's
    CPU per message (``fanout_cpu_us``) and its ratio to the echo's."""
    floor = _paced_floor(args, "echo", seconds, rep)
    if args.fanout_floor:
        fanout = _paced_floor(args, "fanout", seconds, rep)
        floor["fanout_cpu_us"] = fanout["cpu_us"]
        floor["fanout_over_echo"] = round(fanout["cpu_us"] / max(floor["cpu_us"], 0.1), 2)
        print(f"(b) fan-out floor{_rep(args, rep)}: {fanout['cpu_us']} µs per message = "
              f"{floor['fanout_over_echo']}x the echo's", flush=True)
    return floor


def _paced_floor(args: argparse.Namespace, kind: str, seconds: float,
                 rep: int) -> dict[str, float]:
    """One (b) run of a floor (``echo``, or ``fanout`` for ``--fanout-floor``): its figures,
    printed."""
    run, _ = measure(kind, lambda child: paced_tables(child, args.tables, seconds, True))
    samples = run["samples"]
    floor = {"p50": pct(samples, 0.5), "p99": pct(samples, 0.99),
             "p999": pct(samples, 0.999), "cpu_pct": round(100 * run["cpu"], 1),
             # what one echoed message costs this machine now: the yardstick of the
             # server's CPU per action on a machine whose speed varies from hour to hour
             "cpu_us": us(run["cpu"] * seconds / max(1, len(samples))),
             "wakes": round(run["wakes"], 2)}
    print(f"(b) {kind} floor{_rep(args, rep)}, {3 * args.tables} connections: p50 "
          f"{floor['p50']} µs, p99 {floor['p99']} µs, p99.9 {floor['p999']} µs; CPU "
          f"{floor['cpu_pct']} %, {floor['cpu_us']} µs per message, {floor['wakes']} "
          "wake-ups per message", flush=True)
    return floor


def _paced_variant(args: argparse.Namespace, variant: Variant, paced_s: float, rep: int,
                   floor: dict[str, float], report: dict[str, Any]) -> dict[str, float]:
    """One (b) run of ``variant``, printed beside its rep's echo ``floor``: its figures."""
    paced, rss0 = _paced_run(args, variant, paced_s)
    samples = paced["samples"]
    _print_series(variant.label, paced["series"], args.series)
    if "trace" in paced:
        print(f"(b) {variant.label}{_rep(args, rep)} where the time goes: "
              f"{latency_trace.describe(paced['trace'])}", flush=True)
        report.setdefault(f"b{variant.tag}_trace", []).append(paced["trace"])
    run = {"p50": pct(samples, 0.5), "p99": pct(samples, 0.99),
           "p999": pct(samples, 0.999),
           "max": us(max(samples)) if samples else float("nan"),
           "actions": len(samples), "cpu_pct": round(100 * paced["cpu"], 1),
           "clients_cpu_pct": round(100 * paced["clients_cpu"], 1),
           "behind_pct": round(100 * paced["behind"], 1),
           "waited_pct": round(100 * paced["waited"], 1),
           "cpu_us": us(paced["cpu"] * paced_s / max(1, len(samples))),
           "memory_kb": round((paced["rss_ready_kb"] - rss0) / args.tables, 1),
           "wakes": round(paced["wakes"], 2)}
    run["p99_over_floor"] = round(run["p99"] / floor["p99"], 2)
    run["p999_over_floor"] = round(run["p999"] / floor["p99"], 2)
    run["cpu_over_floor"] = round(run["cpu_us"] / max(floor["cpu_us"], 0.1), 2)
    if "fanout_cpu_us" in floor:
        run["cpu_over_fanout"] = round(run["cpu_us"] / max(floor["fanout_cpu_us"], 0.1), 2)
    print(f"(b) {variant.label}{_rep(args, rep)} {args.tables} tables, "
          f"{3 * args.tables} connections, 1 action/table/s for {paced_s:g} s"
          f"{' in lock-step' if args.lock_step else ''}: p50 {run['p50']} µs, p99 "
          f"{run['p99']} µs ({run['p99_over_floor']}x the floor's p99), p99.9 "
          f"{run['p999']} µs ({run['p999_over_floor']}x), max {run['max']} µs; server "
          f"CPU {run['cpu_pct']} % of a core (ready but waiting for one {run['waited_pct']} %"
          f" of the time), {run['cpu_us']} µs per action "
          f"({run['cpu_over_floor']}x an echoed message{_over_fanout(run)}), {run['wakes']}"
          " wake-ups "
          f"per action (the echo's {floor['wakes']}), the clients' process "
          f"{run['clients_cpu_pct']} %; memory {run['memory_kb']} KB per table with 3 "
          f"connections{_behind(run['behind_pct'])}", flush=True)
    if variant.transport == "mixed":
        _print_mixed(variant.label + _rep(args, rep), paced["by_transport"], run)
    return run


def _over_fanout(figures: dict[str, Any], tag: str | None = None) -> str:
    """``--fanout-floor``: ", Nx the fan-out floor's" for a run's (or a variant's medians,
    ``tag``) CPU per action; nothing without it."""
    key = "cpu_over_fanout" if tag is None else f"b{tag}_cpu_per_action_over_fanout_floor"
    return f", {figures[key]}x the fan-out floor's" if key in figures else ""


def _print_mixed(label: str, by_transport: dict[str, list[float]],
                 run: dict[str, float]) -> None:
    """``--transport mixed``: each transport's p50 and p99 (into ``run`` too), its tables
    served by the same server at the same moments."""
    for kind in ("tcp", "ws"):
        run[f"{kind}_p99"] = pct(by_transport.get(kind, []), 0.99)
    run["ws_over_tcp_p99"] = round(run["ws_p99"] / run["tcp_p99"], 2)
    said = [f"{name} seats p50 {pct(by_transport.get(kind, []), 0.5)} µs, p99 "
            f"{run[f'{kind}_p99']} µs" for kind, name in (("tcp", "TCP"), ("ws", "WebSocket"))]
    print(f"(b) {label} in the same server at the same moments: {'; '.join(said)}; "
          f"WebSocket p99 / TCP p99 {run['ws_over_tcp_p99']}", flush=True)


def _behind(percent: float) -> str:
    """What a (b) run says when the schedule was not kept: the steps that began a second or
    more late were queued behind the others, in the server or in the clients, and the run's
    p99 and CPU per action (per action timed: those still queued at its end are not) say how
    far behind the machine let them fall, not what an action costs."""
    if not percent:
        return ""
    return (f"; NOT KEPT: {percent} % of the steps began a second or more behind schedule "
            "(see --trace for where they queued)")


def _rep(args: argparse.Namespace, rep: int) -> str:
    return f" rep {rep + 1}/{args.reps}" if args.reps > 1 else ""


def _median(rows: list[dict[str, float]], key: str) -> float:
    return round(statistics.median(row[key] for row in rows), 2)


def _flat_out_scenario(args: argparse.Namespace, dbs: list[str], report: dict[str, Any]) -> None:
    """(c), with each journal of ``dbs`` and each server (this checkout's, ``--against``'s),
    ``--reps`` times alternated: figures (medians of the reps) into ``report``, and printed."""
    codes: list[str | None] = [None, args.against] if args.against else [None]
    variants = [(db, code) for db in dbs for code in codes]
    runs: dict[tuple[str, str | None], list[dict[str, float]]] = {v: [] for v in variants}
    for rep in range(args.reps):
        for db, code in variants if rep % 2 == 0 else variants[::-1]:
            flat, rss0 = measure("tongits", lambda child: flat_out(
                child, args.flat_tables, args.seconds), db, code=code)
            rate = flat["actions"] / flat["elapsed"]
            run = {"actions_per_s": round(rate), "hands": flat["hands"],
                   "memory_per_table_kb": round((flat["rss_kb"] - rss0) / args.flat_tables, 1),
                   "server_cpu_pct": round(100 * flat["cpu"], 1),
                   "cpu_per_action_us": us(flat["cpu"] / rate) if rate else float("nan")}
            runs[db, code].append(run)
            side = "" if code is None else ", against"
            print(f"(c) [{db}{side}]{_rep(args, rep)} {args.flat_tables} tables of instant bots:"
                  f" {run['actions_per_s']} actions/s ({run['hands']} hands); server CPU "
                  f"{run['server_cpu_pct']} % of a core, {run['cpu_per_action_us']} µs per "
                  f"action; memory {run['memory_per_table_kb']} KB per table", flush=True)
    for (db, code), reps in runs.items():
        tag = "" if len(dbs) == 1 else ("_memory" if db == ":memory:" else "_file")
        tag += "" if code is None else "_against"
        for key in reps[0]:
            report[f"c{tag}_{key}"] = _median(reps, key)
        if args.reps > 1:
            print(f"(c) [{db}{'' if code is None else ', against'}] median of {args.reps}: "
                  f"{report[f'c{tag}_actions_per_s']} actions/s, "
                  f"{report[f'c{tag}_cpu_per_action_us']} µs per action", flush=True)
    if len(dbs) == 2:
        for side in ("", "_against") if args.against else ("",):
            # each rep's file run over its own :memory: run, then the median of those
            ratios = [file["actions_per_s"] / memory["actions_per_s"] for memory, file in zip(
                runs[":memory:", args.against if side else None],
                runs["file", args.against if side else None], strict=True)]
            report[f"c_file_over_memory{side}"] = round(statistics.median(ratios), 3)
            print(f"(c){' [against]' if side else ''} file / :memory: = "
                  f"{report[f'c_file_over_memory{side}']} (median of "
                  f"{', '.join(f'{r:.3f}' for r in ratios)})", flush=True)
    if args.against:
        _flat_out_against(dbs, report)


def _flat_out_against(dbs: list[str], report: dict[str, Any]) -> None:
    """(c)'s figures of this checkout over ``--against``'s."""
    for db in dbs:
        tag = "" if len(dbs) == 1 else ("_memory" if db == ":memory:" else "_file")
        _over_against(report, f"c{tag}", ("actions_per_s", "cpu_per_action_us"))
        print(f"(c) [{db}] this checkout / --against: actions/s "
              f"{report[f'c{tag}_actions_per_s_over_against']}, CPU per action "
              f"{report[f'c{tag}_cpu_per_action_us_over_against']}", flush=True)


def _over_against(report: dict[str, Any], prefix: str, names: tuple[str, ...]) -> None:
    """Each figure ``prefix_NAME`` of this checkout over ``prefix_against_NAME``, the same
    figure of ``--against``'s server, as ``prefix_NAME_over_against``."""
    for name in names:
        report[f"{prefix}_{name}_over_against"] = round(
            report[f"{prefix}_{name}"] / report[f"{prefix}_against_{name}"], 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", choices=["echo", "fanout", "tongits"], help=argparse.SUPPRESS)
    parser.add_argument("--parent", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", default=":memory:", choices=[":memory:", "file", "both"],
                        help="the server's SQLite journal: :memory: (default), a new file per "
                        "server process in a temporary directory (as tongits-server runs), or "
                        "both: every tongits phase once with each, in the same run; either way "
                        "each move is committed before its state goes out")
    parser.add_argument("--gc-full", type=float, default=ServerConfig().gc_full,
                        help="the servers' seconds between full garbage collections (the "
                        "default is tongits-server's; lower it to see their pauses in (b))")
    parser.add_argument("--child-db", help=argparse.SUPPRESS)
    parser.add_argument("--child-limited", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-tls", default="", help=argparse.SUPPRESS)
    parser.add_argument("--child-trace", default="", help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true",
                        help="(b): where each action's time goes, from stamps taken in the "
                        "server and the kernel's receive stamps (bench/latency_trace.py): "
                        "the server's wait to read it, its work, the way to the client's "
                        "socket, and the client's own queue")
    parser.add_argument("--tls", action="store_true",
                        help="run (a) and (b) again over TLS and print the ratios to plain")
    parser.add_argument("--tls-rounds", type=int, default=1,
                        help="with --tls: alternate this many TLS runs of (b) with plain ones "
                        "and compare their medians (steadier on a shared machine)")
    parser.add_argument("--only", choices=["a", "b", "c", "d"], action="append",
                        help="run only these scenarios (repeatable; default: all)")
    parser.add_argument("--open-tables", type=int, default=2000, help="open tables in (d)")
    parser.add_argument("--honest-tables", type=int, default=100,
                        help="paced tables in (d)")
    parser.add_argument("--listers", type=int, default=1, help="lobby listers in (d)")
    parser.add_argument("--rtt", type=int, default=2000, help="round trips measured in (a)")
    parser.add_argument("--tables", type=int, default=1000, help="tables in (b)")
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of (b) and (c)")
    parser.add_argument("--minutes", type=float,
                        help="duration of (b) in minutes instead (a long run; its echo floor "
                        "runs one minute of it)")
    parser.add_argument("--lock-step", action="store_true",
                        help="(b) without its untimed warm-up: every table starts its first "
                        "hand together, and their hands keep ending together")
    parser.add_argument("--series", action="store_true",
                        help="(b) second by second too: the actions, p50, p99, max and the CPU "
                        "of the server and of the clients in each second of the window")
    parser.add_argument("--flat-tables", type=int, default=300, help="tables in (c)")
    parser.add_argument("--transport", choices=["tcp", "ws", "both", "mixed"], default="tcp",
                        help="(b)'s clients: binary mode over TCP, the browser seat's JSON over "
                        "a WebSocket, both (alternated runs), or mixed (half the tables each, in "
                        "one run of one server: the two at the same moments of the machine)")
    parser.add_argument("--reps", type=int, default=1,
                        help="(b) and (c): run every variant this many times, alternated, and "
                        "report the medians")
    parser.add_argument("--against", metavar="DIR",
                        help="another checkout of this project (e.g. `git archive main | tar -x "
                        "-C DIR`): (b) and (c) run its server too, alternated with this one's, "
                        "and print this one's figures over its")
    parser.add_argument("--fanout-floor", action="store_true",
                        help="(b): a second floor beside the echo, run after it in each rep: "
                        "the echo plus what an action's transport does that an echoed message "
                        "does not (a state-sized frame to the sender and to the table's two "
                        "other connections); prints the server's CPU per action over it too")
    parser.add_argument("--contend", action="store_true",
                        help="a busy process (a Python loop, nice 0, on the servers' core) "
                        "competes for the CPU during the whole run")
    args = parser.parse_args()
    if args.child:
        trio.run(_serve_child, args.child, args.parent, args.child_db, args.gc_full,
                 args.child_limited, args.child_tls, args.child_trace)
        return
    only = set(args.only or "abcd")
    Child.gc_full = args.gc_full
    Child.trace = args.trace
    dbs = [":memory:", "file"] if args.db == "both" else [args.db]
    paced_s = 60 * args.minutes if args.minutes else args.seconds
    if CLIENT_CPUS:
        os.sched_setaffinity(0, CLIENT_CPUS)
    # The clients of thousands of connections share this one process and its heap: its
    # collector's pauses (hundreds of ms with 3,000 connections' states) would be counted as
    # server latency. The run is short; nothing here relies on collecting cycles.
    gc.disable()
    contender = _contend() if args.contend else None
    try:
        _run(args, only, dbs, paced_s)
    finally:
        if contender is not None:
            contender.terminate()
            contender.wait()


def _contend() -> subprocess.Popen[bytes]:
    """``--contend``: a process that uses all the CPU it gets, as another program would."""
    # it spins until its parent has gone (a killed bench leaves no busy loop behind)
    busy = subprocess.Popen([sys.executable, "-c", "import os\nparent = os.getppid()\n"
                             "while os.getppid() == parent: pass"])
    # on the servers' core: it would inherit the clients' (this process's) otherwise
    if SERVER_CPUS:
        os.sched_setaffinity(busy.pid, SERVER_CPUS)
    print(f"contention: a busy loop in process {busy.pid} (nice 0, on the servers' core)",
          flush=True)
    return busy


def _run(args: argparse.Namespace, only: set[str], dbs: list[str], paced_s: float) -> None:
    report: dict[str, Any] = {
        "db": args.db, "gc_full_s": args.gc_full, "tables_b": args.tables,
        "connections_b": 3 * args.tables, "tables_c": args.flat_tables, "seconds": args.seconds,
        "seconds_b": paced_s, "lock_step": args.lock_step,
    }
    if "a" in only:
        for db in dbs:
            tag = "" if len(dbs) == 1 else ("_memory" if db == ":memory:" else "_file")
            echo, tongits = Child("echo"), Child("tongits", db)
            try:
                floor, server, per_action = trio.run(round_trips, echo.port, tongits, args.rtt)
            finally:
                echo.stop()
                tongits.stop()
            report[f"a{tag}_floor_p50_us"] = pct(floor, 0.5)
            report[f"a{tag}_floor_p99_us"] = pct(floor, 0.99)
            report[f"a{tag}_server_p50_us"] = pct(server, 0.5)
            report[f"a{tag}_server_p99_us"] = pct(server, 0.99)
            report[f"a{tag}_p50_ratio"] = round(statistics.median(server)
                                                / statistics.median(floor), 2)
            report[f"a{tag}_cpu_per_action_us"] = us(per_action)
            print(f"(a) [{db}] one action round trip: server p50 {report[f'a{tag}_server_p50_us']}"
                  f" µs, p99 {report[f'a{tag}_server_p99_us']} µs; echo floor p50 "
                  f"{report[f'a{tag}_floor_p50_us']} µs, p99 {report[f'a{tag}_floor_p99_us']} µs; "
                  f"ratio p50 {report[f'a{tag}_p50_ratio']}x; server CPU "
                  f"{report[f'a{tag}_cpu_per_action_us']} µs per action", flush=True)

    if "b" in only:
        paced_scenario(args, dbs, paced_s, report)

    if "c" in only:
        _flat_out_scenario(args, dbs, report)
    if "d" in only:
        lobby(args, report)
    if args.tls:
        tls_costs(args, report, dbs[0], paced_s, only)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
