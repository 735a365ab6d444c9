"""The ladder from a client: ``tongits ladder``'s pieces and a bot of the SDK with
``ladder=True``, against a real server on loopback."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
import trio
from server_support import TIME_CAP, quick_config, tcp_server, until
from tongits.client.accounts import AccountKeys
from tongits.client.connection import Connection, open_connection
from tongits.client.ladder import fetch_standings, format_standings, register_account
from tongits.client.sdk import Bot, BotError, BotRun
from tongits.client.tui.lobby import LobbyJoin
from tongits.client.tui.net import NetSession, SessionOptions
from tongits.client.tui.state import Notice, ServerRefused
from tongits.engine.policies import get_policy
from tongits.protocol import Joined, State
from tongits.protocol.transport import Endpoint
from tongits.server import MemoryJournal, Server
from tongits.server.ladder.ladder import Ladder


async def test_a_ladder_bot_registers_keeps_its_key_and_plays_rated_matches(
    tmp_path: Path,
) -> None:
    keys = AccountKeys(tmp_path / "keys.json")
    with trio.fail_after(TIME_CAP):
        async with tcp_server(ladder_hands=1, ladder_anchors="random,greedy",
                              ladder_anchor_wait=0.0) as (server, port):
            bot = Bot(get_policy("greedy", seed=1), "127.0.0.1", port, name="Gus", ladder=True,
                      matches=2, keys=keys, heartbeat=None)
            run = await bot.run()
            assert len(run.matches) == 2
            assert keys.get(f"127.0.0.1:{port}", "Gus") is not None
            again = Bot(get_policy("greedy", seed=2), "127.0.0.1", port, name="Gus",
                        ladder=True, matches=1, keys=keys, heartbeat=None)
            assert len((await again.run()).matches) == 1  # the same account, by its kept key
            endpoint = Endpoint("127.0.0.1", port)
            await register_account(endpoint, "Ida", None, keys)
            page = await fetch_standings(endpoint, 0, None, None)
    assert server.ladder.account("Gus").matches == 3
    assert {p["name"] for p in page.players} == {"Gus", "Ida", "anchor-random", "anchor-greedy"}
    text = format_standings(page)
    assert "Gus" in text and "(server bot: random)" in text
    assert text.splitlines()[-1] == "1-4 of 4 accounts"


async def test_a_ladder_bot_keeps_its_hands_for_tongits_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A bot author put the SDK bot on a ladder for 400 matches and wanted the worst hand it
    lost reviewed: the records came with every result but were kept nowhere. With ``record``
    (``tongits bot --record DIR``) each hand is written, named by the server and table as
    ``tongits connect`` names its own, and ``tongits review DIR --bot Gus`` finds its seat by
    the names in the records."""
    from tongits.client.cli import main

    with trio.fail_after(TIME_CAP):
        async with tcp_server(ladder_hands=2, ladder_anchors="random,greedy",
                              ladder_anchor_wait=0.0) as (_server, port):
            bot = Bot(get_policy("greedy", seed=1), "127.0.0.1", port, name="Gus", ladder=True,
                      matches=2, keys=AccountKeys(tmp_path / "keys.json"), heartbeat=None,
                      record=tmp_path / "hands")
            run = await bot.run()
    kept = sorted((tmp_path / "hands").glob("*.json"))
    assert len(kept) == len(run.hands) == 4
    assert all(path.name.startswith(f"127.0.0.1_{port}-t") for path in kept)
    lost = sum(1 for hand in run.hands
               if hand.result.chips[hand.standings["names"].index("Gus")] < 0)
    assert main(["review", str(tmp_path / "hands"), "--bot", "Gus", "--worst", "0"]) == 0
    assert capsys.readouterr().out.startswith(f"Gus lost chips in {lost} of 4 hands")
    # the anchors sat at both matches too: whose hands these are is not guessed
    assert main(["review", str(tmp_path / "hands")]) == 2
    assert "played as many of them: say --bot NAME" in capsys.readouterr().err


async def test_a_ladder_bot_whose_name_is_taken_says_so(tmp_path: Path) -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port):
            await register_account(Endpoint("127.0.0.1", port), "Gus", None,
                                   AccountKeys(tmp_path / "theirs.json"))
            bot = Bot(get_policy("greedy", seed=1), "127.0.0.1", port, name="Gus", ladder=True,
                      keys=AccountKeys(tmp_path / "mine.json"), heartbeat=None)
            with pytest.raises(BotError, match="name_taken"):
                await bot.run()


def test_the_ladder_command_says_when_the_server_cannot_be_reached(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tongits.client.cli import main

    assert main(["ladder", "127.0.0.1:1"]) == 1
    assert "cannot reach 127.0.0.1:1" in capsys.readouterr().err
    assert main(["ladder", "no such host:port"]) == 2


async def _lobby_queue(port: int, key: str | None, updates: list[Any],
                       unqueue: bool = False) -> Connection:
    """A lobby on a connection as ``Ana`` (with ``key``): ``queue``, and ``unqueue`` at once if
    asked; the connection once the lobby has returned (seated) or been given up."""
    lobby = LobbyJoin()
    session = NetSession("127.0.0.1", port, SessionOptions(name="Ana", join=lobby, account=key))
    session.sink = updates.append
    lobby.session = session
    async with open_connection("127.0.0.1", port, name="Ana", account=key) as conn:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lobby, conn)
            await until(lambda: lobby._token is not None)
            assert lobby.choose("queue") is None
            if unqueue:
                await until(lambda: any(isinstance(u, Notice) for u in updates))
                assert lobby.choose("unqueue") is None
                await until(lambda: any(getattr(u, "text", "") == "no longer queued"
                                        for u in updates))
                nursery.cancel_scope.cancel()
        return conn


async def test_the_lobby_queues_a_player_with_an_account_for_a_ladder_match(
    tmp_path: Path,
) -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server(ladder_hands=1, ladder_anchors="random,greedy",
                              ladder_anchor_wait=0.0) as (server, port):
            key = await register_account(Endpoint("127.0.0.1", port), "Ana", None,
                                         AccountKeys(tmp_path / "keys.json"))
            updates: list[Any] = []
            conn = await _lobby_queue(port, key, updates)
            assert conn.table is not None and conn.token is not None
            assert server.ladder.is_ladder_table(conn.table)
            assert any(isinstance(u, Notice) and "queued" in u.text for u in updates)
            no_key: list[Any] = []
            lobby = LobbyJoin()
            lobby.session = NetSession("127.0.0.1", port, SessionOptions(name="Bo", join=lobby))
            lobby.session.sink = no_key.append
            async with open_connection("127.0.0.1", port, name="Bo") as bo:
                assert await lobby._queue(bo) is False
            (said,) = [u for u in no_key if isinstance(u, ServerRefused)]
            assert said.code == "needs_account"
            assert f"tongits ladder 127.0.0.1:{port} --register Bo" in said.message


async def test_unqueue_in_the_lobby_leaves_the_queue(tmp_path: Path) -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server(ladder_anchor_wait=3600.0) as (server, port):
            key = await register_account(Endpoint("127.0.0.1", port), "Ana", None,
                                         AccountKeys(tmp_path / "keys.json"))
            updates: list[Any] = []
            conn = await _lobby_queue(port, key, updates, unqueue=True)
            assert conn.table is None
            assert not server.matchmaker.queue


async def test_queue_sees_its_table_while_the_session_reads_the_pushed_messages(
    tmp_path: Path,
) -> None:
    """Back in the lobby from a table, the session's listener reads what the server pushes;
    the lobby's queue still learns that it was seated, and the listener still gets the
    ``joined`` and the new table's messages."""
    with trio.fail_after(TIME_CAP):
        async with tcp_server(ladder_anchors="random,greedy",
                              ladder_anchor_wait=0.0) as (_server, port):
            key = await register_account(Endpoint("127.0.0.1", port), "Ana", None,
                                         AccountKeys(tmp_path / "keys.json"))
            lobby = LobbyJoin()
            lobby.session = NetSession("127.0.0.1", port, SessionOptions(
                name="Ana", join=lobby, account=key))
            seen: list[Any] = []
            async with (
                open_connection("127.0.0.1", port, name="Ana", account=key) as conn,
                trio.open_nursery() as nursery,
            ):

                async def listen() -> None:
                    async for msg in conn:
                        seen.append(msg)

                nursery.start_soon(listen)
                assert await lobby._queue(conn) is True
                await until(lambda: any(isinstance(m, State) for m in seen))
                nursery.cancel_scope.cancel()
            assert any(isinstance(m, Joined) and m.table == conn.table for m in seen)


@pytest.mark.parametrize("graceful", [False, True], ids=["crash", "shutdown"])
async def test_a_queued_ladder_bot_waits_out_a_server_restart_and_plays_on(
    tmp_path: Path, graceful: bool,
) -> None:
    """A ladder bot queued (no seat, no token) when its server stops, killed or shut down,
    reconnects with back-off once the server is back on the same port and database, queues
    again and plays its match: it neither exits nor gives up."""
    keys = AccountKeys(tmp_path / "keys.json")
    db = str(tmp_path / "ladder.db")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    journal = MemoryJournal()

    async def serve(anchor_wait: float, *, task_status: trio.TaskStatus[Server]) -> None:
        ladder = Ladder(db)
        server = Server(quick_config(port=port, ladder_hands=1, ladder_anchors="random,greedy",
                                     ladder_anchor_wait=anchor_wait), journal, ladder=ladder)
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(server.serve)
                task_status.started(server)
        finally:
            ladder.close()

    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as outer:
            runs: list[BotRun] = []
            async with trio.open_nursery() as first:
                server = await first.start(serve, 3600.0)  # nobody to play with: queued
                bot = Bot(get_policy("greedy", seed=1), "127.0.0.1", port, name="Gus",
                          ladder=True, matches=1, keys=keys, heartbeat=None,
                          retry_delays=(0.05, 0.1, 0.2))

                async def play() -> None:
                    runs.append(await bot.run())

                outer.start_soon(play)
                await until(lambda: bool(server.matchmaker.queue))
                if graceful:
                    await server.shutdown()
                first.cancel_scope.cancel()
            await trio.sleep(0.5)  # the bot tries, and fails, to reach the server meanwhile
            async with trio.open_nursery() as second:
                await second.start(serve, 0.0)
                await until(lambda: bool(runs))
                second.cancel_scope.cancel()
    (run,) = runs
    assert len(run.matches) == 1
    # one connection lost (however many tries it took to come back), no seat to resume: after
    # three restarts a ladder bot printed only '1 reconnects', its one seat resumed
    assert (run.lost, run.reconnects) == (1, 0)
