"""The table screen against the real server: Trio in guest mode inside prompt_toolkit's
asyncio loop, an embedded server with two server bots, a whole hand typed through the pipe."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tongits.client.connection import Connection as Conn
from tongits.client.connection import open_connection
from tongits.client.tui.app import TableScreen, screen_for
from tongits.client.tui.hint import choose_move
from tongits.client.tui.net import NetSession
from tongits.engine import Phase
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
        """A spectator: the server keeps a table only while someone is there."""
        async with open_connection("127.0.0.1", self.port, name="watcher") as conn:
            await conn.spectate(table)
            self.watching = True
            async for _ in conn:
                pass


async def sit_down(conn: Conn) -> None:
    await conn.create_table("test", timer=0, bots=2)


async def settle(done: Callable[[], bool], timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.005)):
        if done():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the screen did not get there in time")


def mine(screen: TableScreen) -> list[dict[str, Any]]:
    view = screen.state.view
    assert view is not None
    return [step for step in view.history if step.get("seat") == view.seat]


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
                seen["accepted"] = [_command(step) for step in mine(screen) if not step.get("auto")]
                seen["screen"] = screen_for(screen.state)
            finally:
                pipe.send_text("\x03")
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert seen["typed"] == seen["accepted"] and seen["typed"]
    text = seen["screen"]
    assert "Hand over:" in text and "Standings:" in text
    assert "[bot]" in text and "greedy-bot" in text
    assert all(len(line) <= 80 for line in text.split("\n"))


def _command(step: dict[str, Any]) -> str:
    from tongits.engine import Move

    return str(Move.from_dict(step))


def test_reconnects_with_the_seat_token() -> None:
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer()

    async def main() -> None:
        with create_pipe_input() as pipe:

            async def sit_and_watch(conn: Conn) -> None:
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
                await settle(lambda: screen_for(screen.state) == before)
                seen["token"] = (token, session.token)
            finally:
                pipe.send_text("\x03")
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert seen["token"][0] == seen["token"][1]
