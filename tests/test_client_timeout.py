"""When the turn timer runs out, the server plays for the seat (protocol 1.1 marks those steps
``timeout``): the screen says so, to the player and in everyone's log."""

from __future__ import annotations

import asyncio
from typing import Any

import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from screen_support import settle
from tongits.client.connection import Connection
from tongits.client.tui.app import TableScreen, screen_for
from tongits.client.tui.net import NetSession, SessionOptions
from tongits.client.tui.state import Update
from tongits.server.app import Server
from tongits.server.config import ServerConfig


class FirstTimeout(TableScreen):
    """The screen, looked at as each update lands: the first time it says the timer played for
    us, its message and text are kept. (Looked at later, the bots, who play at once, may have
    pushed our moves out of the log's few lines, or ended the hand.)"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: dict[str, str] = {}

    def on_update(self, update: Update) -> None:
        super().on_update(update)
        if not self.seen and "your time ran out" in self.state.message:
            self.seen = {"message": self.state.message, "screen": screen_for(self.state)}


def test_the_screen_says_the_timer_played_for_us() -> None:
    seen: dict[str, str] = {}

    async def embedded(nursery: trio.Nursery) -> tuple[str, int]:
        config = ServerConfig(port=0, bot_delay=0.0, log_level="WARNING")
        listeners = await nursery.start(Server(config).serve)
        return "127.0.0.1", listeners[0].socket.getsockname()[1]

    async def sit_down(conn: Connection) -> None:
        await conn.create_table("slow", timer=0.3, bots=2)

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=sit_down, prelude=embedded))
            screen = FirstTimeout(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:  # we type nothing: the timer plays our turns
                await settle(lambda: bool(screen.seen))
                seen.update(screen.seen)
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert seen["message"].startswith("your time ran out: the server played for you (")
    played = [line for line in seen["screen"].split("\n")
              if line.startswith(" You ") and line.endswith("(time ran out: played by the server)")]
    assert played  # the log says it too (our own moves are "You"'s, as on the page)
