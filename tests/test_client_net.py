"""The table screen against the real server: Trio in guest mode inside prompt_toolkit's
asyncio loop, an embedded server with two server bots, a whole hand typed through the pipe."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tongits.client.connection import Connection, open_connection
from tongits.client.tui import net
from tongits.client.tui.app import TableScreen, screen_for
from tongits.client.tui.hint import choose_move
from tongits.client.tui.net import NetSession
from tongits.client.tui.state import event_lines
from tongits.engine import Phase, SeatView, Step
from tongits.protocol import State
from tongits.server.app import Server
from tongits.server.config import ServerConfig


class EmbeddedServer:
    """A server in the session's own Trio run, on a free port; ``server`` is kept for tests."""

    def __init__(self) -> None:
        self.server: Server | None = None
        self.nursery: trio.Nursery | None = None
        self.port = 0
        self.watching = False

    async def __call__(self, nursery: trio.Nursery) -> tuple[str, int]:
        config = ServerConfig(port=0, timer=0.0, bot_delay=0.0, log_level="WARNING")
        self.server = Server(config)
        self.nursery = nursery
        listeners = await nursery.start(self.server.serve)
        self.port = listeners[0].socket.getsockname()[1]
        return "127.0.0.1", self.port

    async def watch(self, table: str) -> None:
        """A spectator at ``table`` until the nursery ends."""
        async with open_connection("127.0.0.1", self.port, name="watcher") as conn:
            await conn.spectate(table)
            self.watching = True
            async for _ in conn:
                pass


async def sit_down(conn: Connection) -> None:
    await conn.create_table("test", timer=0, bots=2)


async def settle(done: Callable[[], bool], timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.005)):
        if done():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the screen did not get there in time")


def mine(screen: TableScreen) -> list[Step]:
    view = screen.state.view
    assert view is not None
    return [step for step in view.history if step.seat == view.seat]


def test_a_whole_hand_against_server_bots() -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession(
                "127.0.0.1", 0, name="Ana", join=sit_down, prelude=EmbeddedServer()
            )
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: screen.state.view is not None)
                typed: list[str] = []
                while screen.state.view is not None and screen.state.view.phase is not Phase.OVER:
                    view = screen.state.view
                    if not view.legal:
                        await asyncio.sleep(0.01)
                        continue
                    line = str(choose_move(view))
                    before = len(view.history)
                    pipe.send_text(line + "\r")
                    typed.append(line)
                    await settle(
                        lambda b=before: (
                            screen.state.view is not None  # type: ignore[misc]
                            and len(screen.state.view.history) > b
                        )
                    )
                await settle(lambda: screen.state.standings is not None)
                seen["typed"] = typed
                seen["accepted"] = [str(step.move) for step in mine(screen) if not step.auto]
                seen["screen"] = screen_for(screen.state)
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert seen["typed"] == seen["accepted"] and seen["typed"]
    text = seen["screen"]
    assert "Hand over:" in text and "─ after 1 hand: Ana " in text
    assert text.startswith(" Tongits · test (t1) · hand 1")
    assert "[bot]" in text and "greedy-bot" in text
    assert all(len(line) <= 80 for line in text.split("\n"))


def test_reconnects_with_the_seat_token() -> None:
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer()

    async def main() -> None:
        with create_pipe_input() as pipe:

            async def sit_and_watch(conn: Connection) -> None:
                joined = await conn.create_table("test", timer=0, bots=2)
                assert embedded.nursery is not None
                embedded.nursery.start_soon(embedded.watch, joined.table)

            session = NetSession(
                "127.0.0.1",
                0,
                name="Ana",
                join=sit_and_watch,
                prelude=embedded,
                retry_delays=(0.05,),
            )
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            banners: list[str | None] = []
            original = screen.on_update

            def watch(update: Any) -> None:
                original(update)
                banners.append(screen.state.banner)

            screen.on_update = watch  # type: ignore[method-assign]
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: screen.state.view is not None)
                await settle(lambda: embedded.watching)
                # Our turn (no timer): nothing moves until we do, so the screen is stable.
                await settle(lambda: bool(screen.state.view and screen.state.view.legal))
                before = screen_for(screen.state)
                token = session.token
                assert token is not None and embedded.server is not None
                assert embedded.nursery is not None
                for peer in list(embedded.server.peers):  # drop our connection, server-side
                    if peer.name == "Ana":
                        session._trio.run_sync_soon(  # type: ignore[union-attr]
                            embedded.nursery.start_soon, peer.stream.aclose
                        )
                await settle(lambda: any(b and "reconnecting" in b for b in banners))
                await settle(lambda: screen.state.banner is None and banners[-1] is None)
                try:
                    await settle(lambda: screen_for(screen.state) == before)
                finally:  # compared below, so that a difference is shown
                    seen["before"], seen["after"] = before, screen_for(screen.state)
                seen["token"] = (token, session.token)
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    try:
        asyncio.run(main())
    finally:
        assert seen.get("after") == seen.get("before")
    assert seen["token"][0] == seen["token"][1]


def test_resumes_from_its_last_seq_and_shows_who_came_and_went(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ana (the screen), a server bot and Ben (a plain connection). Ana's connection drops
    while Ben is to act; her reconnection is held until Ben and the bot have played up to her
    turn. She resumes with her last ``seq``, and her log shows what she missed after a marker.
    Then Ben drops and comes back: her screen says so, with an away mark meanwhile."""
    embedded = EmbeddedServer()
    hellos: list[tuple[str | None, int | None]] = []
    seen: dict[str, Any] = {}
    opened = open_connection

    async def main() -> None:
        ana_may_return, ben_may_play = trio.Event(), trio.Event()
        ben: dict[str, Any] = {}

        @asynccontextmanager
        async def spy(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("token") is not None:
                await ana_may_return.wait()
            hellos.append((kwargs.get("token"), kwargs.get("seq")))
            async with opened(*args, **kwargs) as conn:
                yield conn

        monkeypatch.setattr(net, "open_connection", spy)

        async def ben_plays(table: str, token: str | None = None, seq: int | None = None) -> None:
            with trio.CancelScope() as scope:
                ben["scope"] = scope
                async with open_connection("127.0.0.1", embedded.port, name="Ben",
                                           token=token, seq=seq) as conn:
                    if token is None:
                        await conn.join(table)
                    ben["token"] = conn.token
                    async for msg in conn:
                        ben["seq"] = conn.seq
                        if isinstance(msg, State) and msg is conn.last_state and msg.legal:
                            await ben_may_play.wait()
                            await conn.move(choose_move(SeatView.from_dict(msg.view)))

        async def sit_with_ben(conn: Connection) -> None:
            joined = await conn.create_table("test", timer=0, bots=1)
            seen["table"] = joined.table
            assert embedded.nursery is not None
            embedded.nursery.start_soon(ben_plays, joined.table)

        def in_trio(fn: Callable[..., Any], *args: Any) -> None:
            session._trio.run_sync_soon(fn, *args)  # type: ignore[union-attr]

        def server_hand() -> Any:
            assert embedded.server is not None
            return embedded.server.lobby.tables[seen["table"]].state.hand

        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, name="Ana", join=sit_with_ben,
                                 prelude=embedded, retry_delays=(0.01,))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: screen.state.view is not None)
                while (view := screen.state.view) is not None and view.to_act != 2:
                    if view.legal and view.to_act == 0:
                        before = len(view.history)
                        pipe.send_text(str(choose_move(view)) + "\r")
                        await settle(lambda b=before: len(screen.state.view.history) > b)  # type: ignore[misc, union-attr]
                    else:
                        await asyncio.sleep(0.005)
                assert view is not None
                seq, known = session.seq, len(view.history)
                assert embedded.server is not None and embedded.nursery is not None
                for peer in list(embedded.server.peers):  # drop Ana's connection, server-side
                    if peer.name == "Ana":
                        in_trio(embedded.nursery.start_soon, peer.stream.aclose)
                await settle(lambda: "reconnecting" in (screen.state.banner or ""))
                in_trio(ben_may_play.set)
                await settle(lambda: server_hand().over or server_hand().to_act == 0)
                in_trio(ana_may_return.set)
                await settle(lambda: screen.state.banner is None and screen.state.view is not None
                             and len(screen.state.view.history) > known)
                await settle(lambda: "while you were away" in screen_for(screen.state)
                             or screen.state.hand_over)
                seen["seq"], seen["known"] = seq, known
                seen["seat_lines"] = [line.text for line in screen.state.log()
                                      if line.kind == "seat"]
                seen["log"] = [line.text for line in screen.state.log() if line.kind != "seat"]
                seen["events"] = [line.text for line in event_lines(
                    screen.state.view.history, screen.state.names)]  # type: ignore[union-attr]
                seen["resumed"] = screen_for(screen.state)

                in_trio(ben["scope"].cancel)
                await settle(lambda: "Ben lost connection" in screen_for(screen.state)
                             or screen.state.hand_over)
                seen["away"] = screen_for(screen.state)
                seen["marks"] = screen.state.seats[2]
                in_trio(embedded.nursery.start_soon, ben_plays, seen["table"], ben["token"],
                        ben["seq"])
                await settle(lambda: any(line.text == "Ben is back"
                                         for line in screen.state.log()))
                seen["back"] = screen.state.seats[2]
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    (first_token, first_seq), (token, seq) = hellos
    assert first_token is None and first_seq is None
    assert token is not None and seq == seen["seq"] and seq is not None
    known, events, log = seen["known"], seen["events"], seen["log"]
    missed = len(events) - known
    assert missed > 0
    marker = f"⋯ while you were away ({missed} move{'s' if missed > 1 else ''}):"
    assert log == [*events[:known], marker, *events[known:]]
    if "YOUR TURN" not in seen["resumed"]:
        assert "Hand over" in seen["resumed"]
    assert seen["seat_lines"] == ["Ben sat down"]  # not Ana's own comings and goings
    assert seen["marks"].away and seen["marks"].grace_until is not None
    assert not seen["back"].away


def test_a_spectator_whose_connection_drops_watches_the_same_table_again() -> None:
    embedded = EmbeddedServer()
    joins: list[str] = []
    seen: dict[str, Any] = {}

    async def host(table: trio.Event, tables: list[str]) -> None:
        async with open_connection("127.0.0.1", embedded.port, name="Host") as conn:
            joined = await conn.create_table("watched", timer=0, bots=2)
            tables.append(joined.table)
            table.set()
            async for _ in conn:
                pass

    async def watch(conn: Connection) -> None:
        joins.append("join")
        ready, tables = trio.Event(), list[str]()
        assert embedded.nursery is not None
        embedded.nursery.start_soon(host, ready, tables)
        await ready.wait()
        await conn.spectate(tables[0])

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, name="Watcher", join=watch, prelude=embedded,
                                 retry_delays=(0.05,))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: screen.state.view is not None)
                assert embedded.server is not None and embedded.nursery is not None
                for peer in list(embedded.server.peers):
                    if peer.name == "Watcher":
                        session._trio.run_sync_soon(  # type: ignore[union-attr]
                            embedded.nursery.start_soon, peer.stream.aclose
                        )
                await settle(lambda: screen.state.banner is not None)
                await settle(lambda: screen.state.banner is None)
                seen["screen"] = screen_for(screen.state)
                seen["watching"] = session.watching
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert joins == ["join"] and seen["watching"] == "t1"
    assert "connection lost" not in seen["screen"] and "(watching)" in seen["screen"]
