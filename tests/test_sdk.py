"""The bot SDK against a real server over TCP (port 0): whole matches, the fallbacks, resuming
with the seat token, ``tongits bot``, and the examples of docs/BOTS.md (the Python bot verbatim,
the arena snippet, the Node.js bot when ``node`` is installed)."""

from __future__ import annotations

import re
import resource
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.lowlevel
from server_support import TIME_CAP, tcp_server, until
from tongits.client import sdk
from tongits.client.connection import Connection, open_connection
from tongits.client.sdk import Bot, BotError, parse_address, play_bot
from tongits.engine import Move, SeatView
from tongits.engine.policies import get_policy
from tongits.engine.wire import StepMap
from tongits.protocol import HandResult, State
from tongits.server import MemoryJournal, Server
from tongits.server.table.entries import Entry

ROOT = Path(__file__).resolve().parent.parent
BOTS_MD = ROOT / "docs" / "BOTS.md"


def journal(server: Server, table: str | None) -> list[Entry]:
    assert isinstance(server.lobby.journal.journal, MemoryJournal) and table is not None
    return server.lobby.journal.journal.entries[table]


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", BOTS_MD.read_text(encoding="utf-8"), re.S)


async def test_plays_a_match_against_server_bots() -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (server, port):
            run = await play_bot(get_policy("greedy", seed=1), port=port, name="sdk",
                                 create=True, bots=2, hands=4, timer=0)
    assert (run.table, run.seat) == ("t1", 0)
    assert len(run.hands) == 4
    assert [h.standings["hands"] for h in run.hands if h.standings] == [1, 2, 3, 4]
    assert run.fallbacks == 0 and run.reconnects == 0 and run.decisions > 4 * 3
    assert run.chips == run.hands[-1].standings["chips"][0]


async def test_two_remote_bots_and_a_named_server_bot_share_a_table() -> None:
    """One bot opens "duel" with a ``strong`` server bot, the other joins it by name with an
    async policy; the table starts when full, both follow the match across hands."""
    decided = count()

    async def thoughtful(view: SeatView) -> Move:
        next(decided)
        await trio.lowlevel.checkpoint()
        return view.legal[-1]

    runs: dict[str, Any] = {}
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (server, port):

            async def host() -> None:
                runs["host"] = await play_bot(get_policy("random", seed=2), port=port,
                                              name="host", create=True, table="duel",
                                              bots=["strong"], hands=3, timer=0)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(host)
                await until(lambda: bool(server.lobby.tables), interval=0)
                runs["guest"] = await play_bot(thoughtful, port=port, name="guest",
                                               table="duel", hands=3, text=True)
    host_run, guest_run = runs["host"], runs["guest"]
    assert (host_run.seat, guest_run.seat) == (0, 2)
    assert guest_run.table == host_run.table
    assert [h.result for h in host_run.hands] == [h.result for h in guest_run.hands]
    assert len(guest_run.hands) == 3 and guest_run.decisions == next(decided)
    assert host_run.hands[0].standings["names"][1] == "strong-bot-1"


async def test_illegal_moves_and_failures_fall_back_to_a_legal_move(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each third decision raises, each third answers a move that is not legal; the hand still
    ends and the SDK counts what it replaced."""
    calls = count()

    def clumsy(view: SeatView) -> Move | str:
        n = next(calls)
        if n % 3 == 0:
            raise RuntimeError("oops")
        if n % 3 == 1:
            return "sapaw As 99"
        return str(view.legal[0])

    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            run = await play_bot(clumsy, port=port, name="clumsy", create=True, bots=2,
                                 hands=1, timer=0)
    assert len(run.hands) == 1
    assert run.fallbacks == (run.decisions + 2) // 3 + (run.decisions + 1) // 3
    assert "not legal now" in caplog.text and "oops" in caplog.text


class Resumes:
    """Records each ``hello`` the SDK sends and the ``missed`` list of each resumed ``state``;
    ``hold`` (if set) delays every reconnection until it is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.hellos: list[tuple[str | None, int | None]] = []
        self.missed: list[list[StepMap]] = []
        self.hold: trio.Event | None = None
        opened = open_connection
        note = Connection._note

        @asynccontextmanager
        async def spy(*args: Any, **kwargs: Any) -> AsyncIterator[Connection]:
            if kwargs.get("token") is not None and self.hold is not None:
                await self.hold.wait()
            self.hellos.append((kwargs.get("token"), kwargs.get("seq")))
            async with opened(*args, **kwargs) as conn:
                yield conn

        def noting(conn: Connection, msg: Any) -> None:
            if isinstance(msg, State) and msg.missed is not None:
                self.missed.append(msg.missed)
            note(conn, msg)

        monkeypatch.setattr(sdk, "open_connection", spy)
        monkeypatch.setattr(Connection, "_note", noting)


async def drop(server: Server, name: str) -> None:
    for peer in list(server.peers):
        if peer.name == name:
            await peer.stream.aclose()


async def test_a_lone_bot_resumes_after_its_socket_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nobody else is connected: the server keeps the seat for its grace period, the bot comes
    back with its token and last ``seq``, hears only what it missed, gets its own seat back (no
    stand-in) and plays the match to the end."""
    resumes = Resumes(monkeypatch)
    greedy = get_policy("greedy", seed=3)
    decisions = count(1)
    dropped_at: list[int] = []  # how many moves the hand had when the socket was closed

    async def policy(view: SeatView) -> Move:
        # From the fifth decision on, the first one with a move already in the hand: the deal
        # is random, and at a hand's first move there is nothing a resume could send too much.
        if not dropped_at and next(decisions) >= 5 and view.history:
            dropped_at.append(len(view.history))
            await drop(server, "resumer")
        return greedy(view)

    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (server, port):
            bot = Bot(policy, port=port, name="resumer", create=True, bots=2, hands=2, timer=0,
                      retry_delays=(0.01,))
            run = await bot.run()
    assert run.reconnects == 1 and run.lost == 1 and len(run.hands) == 2
    assert all(h.standings["hands"] == i for i, h in enumerate(run.hands, start=1))
    (_, first_seq), (token, seq) = resumes.hellos
    assert first_seq is None and token is not None and seq is not None and seq > 0
    (missed,) = resumes.missed
    assert len(missed) < dropped_at[0]  # not the whole hand: only what came after ``seq``
    kinds = [entry.to_dict()["kind"] for entry in journal(server, run.table)]
    assert kinds.count("stand_in") == 1  # when the bot left, after its second hand
    assert kinds.index("stand_in") > kinds.index("deal")


async def test_a_stand_in_finishes_the_hand_and_gives_the_seat_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No grace period: a bot stands in at once and plays the hand out while the bot is away
    (a spectator keeps the table open). Back with its token, the bot gets the seat back,
    hears the whole rest of the hand in ``missed``, counts the hand from the ``hand_result``
    sent again (with standings) and plays on."""
    resumes = Resumes(monkeypatch)
    resumes.hold = trio.Event()
    greedy = get_policy("greedy", seed=4)
    decisions = count(1)
    watching = trio.Event()

    with trio.fail_after(TIME_CAP):
        async with tcp_server(grace=0.0) as (server, port), trio.open_nursery() as nursery:

            async def watch(table: str) -> None:
                async with open_connection("127.0.0.1", port, name="watcher") as conn:
                    await conn.spectate(table)
                    watching.set()
                    async for msg in conn:
                        if isinstance(msg, HandResult):
                            assert resumes.hold is not None
                            resumes.hold.set()

            async def policy(view: SeatView) -> Move:
                n = next(decisions)
                if n == 1:
                    assert bot.report.table is not None
                    nursery.start_soon(watch, bot.report.table)
                    await watching.wait()
                if n == 3:
                    await drop(server, "returner")
                return greedy(view)

            bot = Bot(policy, port=port, name="returner", create=True, bots=2, hands=2,
                      timer=0, retry_delays=(0.01,))
            run = await bot.run()
            nursery.cancel_scope.cancel()
    assert run.reconnects == 1 and len(run.hands) == 2
    assert [h.standings["hands"] for h in run.hands] == [1, 2]
    (missed,) = resumes.missed
    assert missed and any(step.get("seat") == 0 for step in missed)  # the stand-in's moves
    kinds = [entry.to_dict()["kind"] for entry in journal(server, run.table)]
    assert kinds.count("back") == 1 and kinds.index("stand_in") < kinds.index("back")


async def test_a_lone_bot_cannot_resume_a_table_closed_while_it_was_away() -> None:
    """The host closes the table while the bot is away (a lone bot's table waits for it
    otherwise): its token is refused, and the SDK says so instead of retrying for ever."""
    from tongits.server.admin import answer

    with trio.fail_after(TIME_CAP):
        async with tcp_server(grace=0.0) as (server, port):

            async def policy(view: SeatView) -> Move:
                (table,) = server.lobby.tables
                await drop(server, "alone")
                await answer(server, {"command": "close", "table": table})
                return view.legal[0]

            with pytest.raises(BotError, match="table closed while the bot was away"):
                await play_bot(policy, port=port, name="alone", create=True, bots=2, timer=0,
                               retry_delays=(0.3, 0.3))


async def test_seating_errors_are_bot_errors() -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            with pytest.raises(BotError, match="no public table has a free seat"):
                await play_bot(get_policy("random"), port=port)
            with pytest.raises(BotError, match="no table 'nowhere'"):
                await play_bot(get_policy("random"), port=port, table="nowhere")
            with pytest.raises(BotError, match="bad_options"):
                await play_bot(get_policy("random"), port=port, create=True, bots=["nobody"])
            listener = trio.socket.socket()
            await listener.bind(("127.0.0.1", 0))
            closed_port = listener.getsockname()[1]
            listener.close()
            with pytest.raises(BotError, match="cannot reach"):
                await play_bot(get_policy("random"), port=closed_port)


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1:7000", ("127.0.0.1", 7000)),
        ("example.org", ("example.org", 7777)),
        (":7001", ("127.0.0.1", 7001)),
        ("[::1]:7002", ("::1", 7002)),
    ],
)
def test_parse_address(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["host:port", "host:0", "host:70000"])
def test_parse_address_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_address(text)


async def test_tongits_bot_command_plays_hands() -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            done = await trio.run_process(
                [sys.executable, "-m", "tongits.client.cli", "bot", "greedy", "--connect",
                 f"127.0.0.1:{port}", "--create", "--bots", "random,strong", "--hands", "2",
                 "--timer", "0", "--seed", "7"],
                capture_stdout=True, capture_stderr=True, check=False,
            )
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert out.startswith("2 hands at table t1, seat 0:") and "0 fallbacks" in out
    assert "hand 2 over" in done.stderr.decode()


async def test_python_example_of_bots_md_runs_verbatim(tmp_path: Path) -> None:
    script = tmp_path / "mybot.py"
    script.write_text(python_blocks()[0], encoding="utf-8")
    assert len(python_blocks()[0].strip().splitlines()) <= 25
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (server, port):
            done = await trio.run_process([sys.executable, str(script), str(port)],
                                          capture_stdout=True, capture_stderr=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().startswith("3 hands, chips ")


def test_the_20_line_bot_plays_in_the_arena_with_the_factory_the_arena_section_adds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """BOTS.md's arena section says to add ``def make(seed): return policy`` to mybot.py and
    name ``py:mybot:make``; a reader who names the policy itself is told that, not shown a
    traceback from inside a game."""
    from tongits.client.cli import main

    (tmp_path / "mybot.py").write_text(python_blocks()[0], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", list(sys.path))
    assert main(["arena", "--bots", "py:mybot.py:policy,greedy,greedy", "--hands", "3"]) == 2
    said = capsys.readouterr()
    assert "names a factory" in said.err and "def make(seed): return policy" in said.err
    assert "Traceback" not in said.err + said.out
    with (tmp_path / "mybot.py").open("a", encoding="utf-8") as file:
        file.write("\n\ndef make(seed): return policy\n")
    assert main(["arena", "--bots", "py:mybot:make,greedy,greedy", "--hands", "3"]) == 0
    assert re.search(r"^\d\. py:mybot:make +3 ", capsys.readouterr().out, re.M)


def _cpu_capped() -> None:
    """In a child process: at most ``TIME_CAP`` seconds of CPU, then SIGXCPU."""
    resource.setrlimit(resource.RLIMIT_CPU, (TIME_CAP, TIME_CAP))


async def test_arena_snippet_of_bots_md_runs(tmp_path: Path) -> None:
    """The snippet plays 600 hands in one process, about 3 s of CPU. Its cap is on CPU time,
    which a loaded machine does not use up (the run gets a smaller share of the cores, and takes
    longer, for the same work); the wall clock only guards against a run that hangs."""
    blocks = python_blocks()
    (tmp_path / "mybot.py").write_text(blocks[0], encoding="utf-8")
    snippet = next(b for b in blocks if "run_arena" in b)
    (tmp_path / "arena_mybot.py").write_text(snippet, encoding="utf-8")
    with trio.fail_after(TIME_CAP * 10):
        done = await trio.run_process([sys.executable, "arena_mybot.py"], cwd=tmp_path,
                                      capture_stdout=True, capture_stderr=True, check=False,
                                      preexec_fn=_cpu_capped)
    assert done.returncode == 0, (done.returncode, done.stderr.decode())
    assert re.search(r"^1\. mybot +600 ", done.stdout.decode(), re.M)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_node_example_plays_hands_to_the_end() -> None:
    """examples/bot.js opens a table with two server bots (none is free) for a match of two
    hands and plays it to ``match_over``; then a second run joins an open-ended table opened
    by an SDK bot, plays one hand and leaves."""
    node = shutil.which("node")
    assert node is not None
    script = str(ROOT / "examples" / "bot.js")
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (server, port):
            done = await trio.run_process([node, script, f"127.0.0.1:{port}", "--hands", "2"],
                                          capture_stdout=True, capture_stderr=True, check=False)
            out = done.stdout.decode()
            assert done.returncode == 0, out + done.stderr.decode()
            assert "seated at table t1, seat 0" in out
            assert "hand 1 over: " in out and "hand 2 over: " in out
            assert "match over (hands) after 2 hands: chips " in out

            runs: list[Any] = []

            async def host() -> None:
                runs.append(await play_bot(get_policy("greedy"), port=port, name="host",
                                           create=True, table="mixed", bots=1, hands=1, timer=0))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(host)
                await until(lambda: "mixed" in [t.state.name for t in server.lobby.tables.values()],
                            interval=0)
                done = await trio.run_process(
                    [node, script, f"127.0.0.1:{port}", "--table", "mixed", "--name", "js"],
                    capture_stdout=True, capture_stderr=True, check=False,
                )
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    assert "seat 2" in out and "hand 1 over: " in out
    assert runs[0].hands[0].standings["names"][2] == "js"
