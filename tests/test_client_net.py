"""The table screen against the real server: Trio in guest mode inside prompt_toolkit's
asyncio loop, an embedded server with two server bots, a whole hand typed through the pipe."""

from __future__ import annotations

import asyncio
import functools
import re
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output import DummyOutput
from screen_support import settle
from tongits.client.connection import Connection, ServerError, open_connection
from tongits.client.tui import net
from tongits.client.tui.app import TableScreen, screen_for
from tongits.client.tui.hint import choose_move
from tongits.client.tui.net import NetSession, SessionOptions
from tongits.client.tui.render import lobby_panel, to_text
from tongits.client.tui.state import Notice, event_lines
from tongits.engine import HandRecord, Phase, SeatView, Step
from tongits.protocol import Error, ErrorCode, State
from tongits.server.app import Server
from tongits.server.config import ServerConfig


class EmbeddedServer:
    """A server in the session's own Trio run, on a free port; ``server`` is kept for tests."""

    def __init__(self, **config: Any) -> None:
        self.config = config  # ServerConfig fields other than the ones below
        self.server: Server | None = None
        self.nursery: trio.Nursery | None = None
        self.port = 0
        self.watching = False

    async def __call__(self, nursery: trio.Nursery) -> tuple[str, int]:
        config = ServerConfig(port=0, timer=0.0, bot_delay=0.0, log_level="WARNING",
                              **self.config)
        self.server = Server(config)
        self.nursery = nursery
        listeners = await nursery.start(self.server.serve)
        self.port = listeners[0].socket.getsockname()[1]
        return "127.0.0.1", self.port

    def in_trio(self, session: NetSession, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` in the session's Trio run, from the screen's asyncio side."""
        session._trio.run_sync_soon(fn, *args)  # type: ignore[union-attr]

    def drop(self, session: NetSession, name: str) -> None:
        """Close ``name``'s connection server-side, from the screen's asyncio side."""
        assert self.server is not None and self.nursery is not None
        for peer in list(self.server.peers):
            if peer.name == name:
                self.in_trio(session, self.nursery.start_soon, peer.stream.aclose)

    async def watch(self, table: str) -> None:
        """A spectator at ``table`` until the nursery ends."""
        async with open_connection("127.0.0.1", self.port, name="watcher") as conn:
            await conn.spectate(table)
            self.watching = True
            async for _ in conn:
                pass


async def sit_down(conn: Connection) -> None:
    await conn.create_table("test", timer=0, bots=2)


def mine(screen: TableScreen) -> list[Step]:
    view = screen.state.view
    assert view is not None
    return [step for step in view.history if step.seat == view.seat]


async def type_a_hand(screen: TableScreen, pipe: PipeInput) -> list[str]:
    """Type the hint's move at each of our turns until the hand is over; the lines typed."""
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
    return typed


def test_a_whole_hand_against_server_bots() -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=sit_down, prelude=EmbeddedServer()))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                typed = await type_a_hand(screen, pipe)
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


def test_a_declared_match_ends_on_screen() -> None:
    """A one-hand match: after its hand the screen says the match is over (not "Enter: next
    hand"), and Enter asks the server for nothing (the table has closed); a connection lost
    afterwards (the server restarting) is not retried: there is nothing to come back to."""
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer()

    async def one_hand(conn: Connection) -> None:
        await conn.create_table("short", timer=0, bots=2, hands=1)

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=one_hand, prelude=embedded, retry_delays=(0.05,)))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await type_a_hand(screen, pipe)
                await settle(lambda: screen.state.match_over)
                pipe.send_text("\r")
                await asyncio.sleep(0.3)  # a refusal from the server would arrive meanwhile
                seen["screen"] = screen_for(screen.state)
                seen["message"] = screen.state.message
                seen["seated"] = screen.state.seated
                server, trio_token = embedded.server, session._trio
                assert server is not None and trio_token is not None

                def restart() -> None:
                    for peer in list(server.peers):
                        peer.kick(ErrorCode.SHUTTING_DOWN, "restarting")

                trio_token.run_sync_soon(restart)
                await settle(lambda: screen.state.closed)
                await asyncio.sleep(0.3)  # a retry would have connected meanwhile
                seen["banner"] = screen.state.banner
                seen["connections"] = len(server.peers)
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    text = seen["screen"]
    assert " Match over: " in text and "Enter: next hand" not in text
    assert "final standings after 1 hand:" in text and " again · review · ^Q quit" in text
    assert seen["message"] == ""  # the message line tells the match's end itself
    assert seen["seated"] is False  # quitting now asks nothing
    assert seen["banner"] == "disconnected: the match is over" and seen["connections"] == 0


def test_reconnects_with_the_seat_token() -> None:
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer()

    async def main() -> None:
        with create_pipe_input() as pipe:

            async def sit_and_watch(conn: Connection) -> None:
                joined = await conn.create_table("test", timer=0, bots=2)
                assert embedded.nursery is not None
                embedded.nursery.start_soon(embedded.watch, joined.table)

            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=sit_and_watch, prelude=embedded, retry_delays=(0.05,)))
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
                embedded.drop(session, "Ana")
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


class Ben:
    """A second player on a plain connection, in the embedded server's Trio run: he plays his
    turns once ``may_play`` is set, and keeps his token and last ``seq`` to come back with."""

    def __init__(self, embedded: EmbeddedServer) -> None:
        self.embedded = embedded
        self.may_play = trio.Event()
        self.scope = trio.CancelScope()
        self.token: str | None = None
        self.seq: int | None = None

    async def play(self, table: str) -> None:
        """Sit at ``table`` (or, with a token kept, take the seat back) until ``leave``."""
        self.scope = trio.CancelScope()
        with self.scope:
            async with open_connection("127.0.0.1", self.embedded.port, name="Ben",
                                       token=self.token, seq=self.seq) as conn:
                if self.token is None:
                    await conn.join(table)
                self.token, self.seq = conn.token, conn.seq
                async for msg in conn:
                    self.seq = conn.seq
                    if isinstance(msg, State) and msg is conn.last_state and msg.legal:
                        await self.may_play.wait()
                        await conn.move(choose_move(SeatView.from_dict(msg.view, msg.legal)))


@asynccontextmanager
async def ana_with_ben(
    embedded: EmbeddedServer, ben: Ben, table: dict[str, str]
) -> AsyncIterator[tuple[TableScreen, PipeInput, NetSession]]:
    """Ana's screen at a new table with a server bot and Ben (``table["id"]`` is its id)."""

    async def sit_with_ben(conn: Connection) -> None:
        joined = await conn.create_table("test", timer=0, bots=1)
        table["id"] = joined.table
        assert embedded.nursery is not None
        embedded.nursery.start_soon(ben.play, joined.table)

    with create_pipe_input() as pipe:
        session = NetSession("127.0.0.1", 0, SessionOptions(
            name="Ana", join=sit_with_ben, prelude=embedded, retry_delays=(0.01,)))
        screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
        task = asyncio.create_task(screen.run())
        try:
            await settle(lambda: screen.state.view is not None)
            yield screen, pipe, session
        finally:
            screen.app.exit()
            await asyncio.wait_for(task, 5)


async def play_until_ben_is_to_act(screen: TableScreen, pipe: PipeInput) -> SeatView:
    """Type Ana's moves (the hint's) until Ben (seat 2) is to act; his view then."""
    while (view := screen.state.view) is not None and view.to_act != 2:
        if view.legal and view.to_act == 0:
            before = len(view.history)
            pipe.send_text(str(choose_move(view)) + "\r")
            await settle(lambda b=before: len(screen.state.view.history) > b)  # type: ignore[misc, union-attr]
        else:
            await asyncio.sleep(0.005)
    assert view is not None
    return view


@pytest.fixture(scope="module")
def ana_resumed() -> dict[str, Any]:
    """Ana (the screen), a server bot and Ben. Ana's connection drops while Ben is to act; her
    reconnection is held until Ben and the bot have played up to her turn. What her hellos
    carried, and her screen when she is back."""
    embedded = EmbeddedServer()
    ben = Ben(embedded)
    hellos: list[tuple[str | None, int | None]] = []
    seen: dict[str, Any] = {"hellos": hellos}
    table: dict[str, str] = {}
    opened = open_connection

    async def main() -> None:
        ana_may_return = trio.Event()

        @asynccontextmanager
        async def held_back(*args: Any, **kwargs: Any) -> AsyncIterator[Connection]:
            if kwargs.get("token") is not None:
                await ana_may_return.wait()
            hellos.append((kwargs.get("token"), kwargs.get("seq")))
            async with opened(*args, **kwargs) as conn:
                yield conn

        def server_hand() -> Any:
            assert embedded.server is not None
            return embedded.server.lobby.tables[table["id"]].state.hand

        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setattr(net, "open_connection", held_back)
            async with ana_with_ben(embedded, ben, table) as (screen, pipe, session):
                view = await play_until_ben_is_to_act(screen, pipe)
                seen["seq"], seen["known"] = session.seq, len(view.history)
                embedded.drop(session, "Ana")
                await settle(lambda: "reconnecting" in (screen.state.banner or ""))
                embedded.in_trio(session, ben.may_play.set)
                await settle(lambda: server_hand().over or server_hand().to_act == 0)
                embedded.in_trio(session, ana_may_return.set)
                await settle(lambda: screen.state.banner is None and screen.state.view is not None
                             and len(screen.state.view.history) > seen["known"])
                await settle(lambda: "while you were away" in screen_for(screen.state)
                             or screen.state.hand_over)
                assert screen.state.view is not None
                seen["seat_lines"] = [line.text for line in screen.state.log()
                                      if line.kind == "seat"]
                seen["log"] = [line.text for line in screen.state.log() if line.kind != "seat"]
                seen["events"] = [line.text for line in event_lines(
                    screen.state.view.history, screen.state.told_names)]
                seen["screen"] = screen_for(screen.state)

    asyncio.run(main())
    return seen


def test_a_screen_comes_back_with_its_seat_token_and_last_seq(ana_resumed: dict[str, Any]) -> None:
    (first_token, first_seq), (token, seq) = ana_resumed["hellos"]
    assert first_token is None and first_seq is None
    assert token is not None and seq is not None and seq == ana_resumed["seq"]


def test_the_moves_missed_while_away_follow_a_marker(ana_resumed: dict[str, Any]) -> None:
    known, events = ana_resumed["known"], ana_resumed["events"]
    missed = len(events) - known
    assert missed > 0
    marker = f"⋯ while you were away ({missed} move{'s' if missed > 1 else ''}):"
    assert ana_resumed["log"] == [*events[:known], marker, *events[known:]]


def test_back_in_her_seat_it_is_her_turn_or_the_hand_is_over(ana_resumed: dict[str, Any]) -> None:
    screen = ana_resumed["screen"]
    assert "YOUR TURN" in screen or "Hand over" in screen


def test_her_log_shows_others_sitting_down_but_not_her_own_comings_and_goings(
    ana_resumed: dict[str, Any],
) -> None:
    assert ana_resumed["seat_lines"] == ["Ben sat down"]


@pytest.fixture(scope="module")
def ben_came_and_went() -> dict[str, Any]:
    """Ana's screen while Ben's connection ends and Ben then takes his seat back with his
    token: Ben's seat marks at each point, and whether her log said so."""
    embedded = EmbeddedServer()
    ben = Ben(embedded)
    seen: dict[str, Any] = {}
    table: dict[str, str] = {}

    async def main() -> None:
        async with ana_with_ben(embedded, ben, table) as (screen, _, session):
            await settle(lambda: any(line.text == "Ben sat down" for line in screen.state.log()))
            await settle(lambda: ben.token is not None)
            embedded.in_trio(session, ben.scope.cancel)
            await settle(lambda: "Ben lost connection" in screen_for(screen.state))
            seen["away"] = screen.state.seats[2]
            assert embedded.nursery is not None
            embedded.in_trio(session, embedded.nursery.start_soon, ben.play, table["id"])
            await settle(lambda: any(line.text == "Ben is back" for line in screen.state.log()))
            seen["back"] = screen.state.seats[2]

    asyncio.run(main())
    return seen


def test_a_player_who_loses_connection_is_marked_away_until_his_grace_ends(
    ben_came_and_went: dict[str, Any],
) -> None:
    marks = ben_came_and_went["away"]
    assert marks.away and marks.grace_until is not None


def test_a_player_who_takes_his_seat_back_is_no_longer_away(
    ben_came_and_went: dict[str, Any],
) -> None:
    assert not ben_came_and_went["back"].away


@pytest.mark.parametrize("private", [False, True])
def test_a_spectator_whose_connection_drops_watches_the_same_table_again(private: bool) -> None:
    """Also a private table, watched with its invite link's code: the code is given again when
    the connection comes back (without it the server refuses: ``bad_join_code``)."""
    embedded = EmbeddedServer()
    joins: list[str] = []
    seen: dict[str, Any] = {}
    codes: list[str | None] = []

    async def host(table: trio.Event, tables: list[str]) -> None:
        async with open_connection("127.0.0.1", embedded.port, name="Host") as conn:
            joined = await conn.create_table("watched", timer=0, bots=2, private=private)
            tables.append(joined.table)
            codes.append(joined.code)
            table.set()
            async for _ in conn:
                pass

    async def watch(conn: Connection) -> None:
        joins.append("join")
        ready, tables = trio.Event(), list[str]()
        assert embedded.nursery is not None
        embedded.nursery.start_soon(host, ready, tables)
        await ready.wait()
        await conn.spectate(tables[0], codes[0])

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Watcher", join=watch, prelude=embedded, retry_delays=(0.05,)))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: screen.state.view is not None)
                embedded.drop(session, "Watcher")
                await settle(lambda: screen.state.banner is not None)
                await settle(lambda: screen.state.banner is None)
                seen["screen"] = screen_for(screen.state)
                seen["watching"] = session.watching
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert joins == ["join"] and seen["watching"] == "t1"
    assert (codes[0] is not None) is private
    assert "connection lost" not in seen["screen"] and "(watching)" in seen["screen"]


def test_the_next_deal_asked_for_is_asked_again_after_a_server_restart() -> None:
    """Ana pressed Enter for the next hand, which waits for Ben; then the server restarted,
    which forgets who asked (the tables come back from the journal). She has asked, so back in
    her seat the session asks again (as the SDK's bots do); before, the table waited for her
    to press Enter a second time (with no timer, for ever)."""
    embedded = EmbeddedServer()
    ben = Ben(embedded)
    table: dict[str, str] = {}
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with ana_with_ben(embedded, ben, table) as (screen, pipe, session):
            assert embedded.server is not None
            actor = embedded.server.lobby.tables

            def moved_on(before: int) -> bool:
                view = screen.state.view
                return screen.state.hand_over or (view is not None and len(view.history) > before)

            embedded.in_trio(session, ben.may_play.set)
            while not screen.state.hand_over:
                view = screen.state.view
                if view is not None and view.legal:
                    played = len(view.history)
                    pipe.send_text(str(choose_move(view)) + "\r")
                    await settle(functools.partial(moved_on, played))
                else:
                    await asyncio.sleep(0.005)
            await settle(lambda: screen.state.standings is not None)
            pipe.send_text("\r")  # Enter: the next hand (Ben does not ask: it waits for him)
            await settle(lambda: 0 in actor[table["id"]].parts.ready)
            # what a restart forgets
            embedded.in_trio(session, actor[table["id"]].parts.ready.clear)
            embedded.drop(session, "Ana")
            await settle(lambda: "reconnecting" in (screen.state.banner or ""))
            await settle(lambda: screen.state.banner is None)
            await settle(lambda: 0 in actor[table["id"]].parts.ready)
            seen["over"] = actor[table["id"]].state.hand.over  # type: ignore[union-attr]
            seen["message"] = screen.state.message

    asyncio.run(main())
    assert seen["over"] and not seen["message"].startswith("server refused")


@pytest.mark.parametrize(("table", "code"), [("t99", None), ("private", "wrong-code")])
def test_an_invite_to_a_table_that_refuses_it_ends_the_session(
    table: str, code: str | None
) -> None:
    """``tongits connect LINK`` with a link to a table that is gone (or a wrong code) said
    "connection lost, reconnecting (your seat is kept)… (no_such_table; retry in 3s)" and
    asked again and again: there was no seat, and the answer could not change."""
    embedded = EmbeddedServer()
    attempts: list[str] = []
    seen: dict[str, Any] = {}

    async def invited(conn: Connection) -> None:
        attempts.append("join")
        if code is None:
            await conn.join(table)
            return
        async with open_connection("127.0.0.1", embedded.port, name="Host") as host:
            private = await host.create_table("private", private=True)
            await conn.join(private.table, code=code)

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Friend", join=invited, prelude=embedded, retry_delays=(0.01,)))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: screen.state.closed)
                await asyncio.sleep(0.1)  # a retry would have come meanwhile
                seen["banner"], seen["message"] = screen.state.banner, screen.state.message
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    refused = "no_such_table" if code is None else "bad_join_code"
    assert attempts == ["join"]
    assert seen["banner"] == f"disconnected: {refused}"
    if code is None:
        assert seen["message"].startswith("server refused: ") and seen["message"].endswith(
            f"({refused})")
    else:  # what gets the player in instead
        assert seen["message"] == "wrong or missing join code: join INVITE-LINK or join TABLE CODE"


def test_an_invite_link_to_a_closed_table_opens_the_lobby() -> None:
    """``tongits connect LINK`` with the link of a match that has ended (its table closed with
    it), as a friend pastes it again the next evening: said in words, then the server's lobby
    on the same connection, the program running, where the friend types ``create``; no
    screen of a session that ended ("disconnected: no_such_table")."""
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer()

    async def main() -> None:
        from tongits.client.tui.net import INVITE_CLOSED

        with create_pipe_input() as pipe:
            screen = connect_screen("tongits://127.0.0.1:7790/t/t7?code=abc", "Ivo", pipe,
                                    embedded, None)
            task = asyncio.create_task(screen.run())
            state = screen.state
            try:
                await settle(lambda: state.lobby is not None)
                seen["message"], seen["banner"] = state.message, state.banner
                seen["said"] = INVITE_CLOSED
                await type_line(screen, pipe, "create again bots 2",
                                lambda: state.view is not None)
                seen["table"] = state.table_name
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert seen["message"] == seen["said"] and seen["banner"] is None
    assert seen["table"] == "again"


async def test_a_wrong_password_ends_the_session_at_the_first_refusal() -> None:
    """``bad_password`` is final (``net.FINAL``): the same password gets the same answer, so
    the session says so and stops, rather than knocking again under "reconnecting"."""
    from server_support import TIME_CAP, quick_config
    from tongits.client.tui.state import ConnectionChanged, LinkStatus, Update
    from tongits.server import MemoryJournal

    updates: list[Update] = []
    joins: list[str] = []

    async def sit(conn: Connection) -> None:
        joins.append("create")

    server = Server(quick_config(), MemoryJournal(), password="sesame")
    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve)
            port = listeners[0].socket.getsockname()[1]
            session = NetSession("127.0.0.1", port, SessionOptions(
                name="Ana", join=sit, password="open", retry_delays=(0.01,), give_up_after=3))
            session.sink = updates.append
            await session._connect_loop()
            nursery.cancel_scope.cancel()
    assert updates == [ConnectionChanged(LinkStatus.CLOSED, ErrorCode.BAD_PASSWORD)]
    assert joins == []


def test_the_owner_of_a_full_table_that_waits_for_start_types_start() -> None:
    """A table made with ``auto_start`` false deals only on its owner's ``start``, which the
    screen had no command for: an owner there (its creator, or the lowest connected human when
    the creator is gone) waited for ever. The screen says to type ``start``, and it deals."""
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer()

    async def held(conn: Connection) -> None:
        await conn.create_table("held", timer=0, bots=2, auto_start=False)

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=held, prelude=embedded))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: all(not s.empty for s in screen.state.seats)
                             and any(s.owner for s in screen.state.seats))
                await asyncio.sleep(0.2)  # nothing is dealt by itself
                seen["waiting"] = screen_for(screen.state)
                seen["dealt_alone"] = screen.state.view is not None
                pipe.send_text("start\r")
                await settle(lambda: screen.state.view is not None)
                seen["dealt"] = screen.state.view is not None
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert "every seat is taken: type `start` to deal the first hand" in seen["waiting"]
    assert seen["dealt_alone"] is False and seen["dealt"] is True


def connect_screen(link: str, name: str, pipe: PipeInput, embedded: EmbeddedServer,
                   record_dir: Path | None) -> TableScreen:
    """The screen of ``tongits connect LINK --name NAME`` as the command makes it, on the
    embedded server and keeping no seat file; the hands' records go to ``record_dir``."""
    from tongits.client.tui.dial import Target
    from tongits.client.tui.lobby import connect_session

    session = connect_session(Target.parse(link), name, None)
    session.options = replace(session.options, prelude=embedded, seats=None,
                              record_dir=record_dir)
    return TableScreen(session, input=pipe, output=DummyOutput(), colour=False,
                       lobby=session.options.lobby)  # type: ignore[arg-type]


async def type_line(screen: TableScreen, pipe: PipeInput, line: str,
                    until: Callable[[], bool]) -> str:
    """Type ``line`` and Enter; the screen once ``until()`` holds."""
    pipe.send_text(line + "\r")
    await settle(until)
    return screen_for(screen.state)


def test_a_match_ends_with_standings_then_again_then_the_lobby_and_leave(
    tmp_path: Path,
) -> None:
    """The end of an evening at a server, typed as a person would: a one-hand match made in
    the lobby ends with the winner, the final standings and "again · lobby"; ``again`` makes
    a new table with the same settings and deals its first hand; once that match is over too,
    ``lobby`` goes back to the tables; a new table's seat is left with ``leave`` (asked first:
    a bot plays it for good) and the player is in the lobby again, the program still running.
    Each hand's record, sent by the server, is kept with the players' names."""
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer()

    async def main() -> None:
        from tongits.client.tui.dial import Target
        from tongits.client.tui.lobby import connect_session

        record_dir = connect_session(Target.parse("127.0.0.1:7790"), "Ana", None).options.record_dir
        assert record_dir is not None and record_dir.name == "hands"  # the command's own
        with create_pipe_input() as pipe:
            screen = connect_screen("127.0.0.1:7790", "Ana", pipe, embedded, tmp_path)
            task = asyncio.create_task(screen.run())
            state = screen.state
            try:
                await settle(lambda: state.lobby is not None)
                await type_line(screen, pipe, "create evening bots 2 hands 1 timer 0",
                                lambda: state.view is not None)
                await type_a_hand(screen, pipe)
                await settle(lambda: state.match_over)
                seen["first"] = screen_for(state)
                seen["again"] = await type_line(
                    screen, pipe, "again",
                    lambda: state.view is not None and state.table == "t2"
                    and state.table_name == "evening")
                await type_a_hand(screen, pipe)
                await settle(lambda: state.match_over)
                await type_line(screen, pipe, "lobby", lambda: state.lobby is not None)
                seen["lobby"] = to_text(lobby_panel(state))
                await type_line(screen, pipe, "create later bots 2",
                                lambda: state.view is not None and state.table == "t3")
                seen["asked"] = await type_line(screen, pipe, "leave",
                                                lambda: state.confirming_leave)
                await type_line(screen, pipe, "y", lambda: state.lobby is not None)
                seen["left"] = to_text(lobby_panel(state))
                seen["running"] = not task.done()
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    first = seen["first"]
    assert " Match over: " in first and "final standings after 1 hand:" in first
    # the three seats placed (two tied in chips share their place: "1.", "2.", "2.")
    assert " 1. " in first and len(re.findall(r"(?m)^ [123]\. ", first)) == 3
    assert first.endswith("\n again · lobby · review · ^Q quit")  # the keys line
    again = seen["again"]
    assert again.startswith(" Tongits · evening (t2) · hand 1") and "Match over" not in again
    assert "Tables" in seen["lobby"] and "later" not in seen["lobby"]
    assert "Leave the table for the lobby? y = leave · n = stay" in seen["asked"]
    # The table closed with its last human gone; the lobby lists the server's tables.
    assert "Tables" in seen["left"] and "no tables yet" in seen["left"]
    assert seen["running"]
    kept = sorted(path.name for path in tmp_path.iterdir())
    port = embedded.port
    assert kept == [f"127.0.0.1_{port}-t1-hand-1.json", f"127.0.0.1_{port}-t2-hand-1.json"]
    record = HandRecord.loads((tmp_path / kept[0]).read_text())
    assert record.names == ("Ana", "greedy-bot-1", "greedy-bot-2") and record.result
    # said in the log, beside the standings, the file's name whole within 80 columns
    assert "│ saved: tongits replay" in first
    assert any(line.split("│")[-1].split()[-1:] == [kept[0]] for line in first.split("\n"))


def test_again_when_the_server_has_no_table_left_says_so_and_opens_the_lobby() -> None:
    """The server refuses a new table (``too_many_tables``: another player took the last one
    meanwhile): ``again`` says why and shows the lobby, not an empty table."""
    seen: dict[str, Any] = {}
    embedded = EmbeddedServer(max_tables=1)

    async def hold_the_last_table(held: trio.Event) -> None:
        async with open_connection("127.0.0.1", embedded.port, name="Ben") as conn:
            await conn.create_table("bens", timer=0, bots=2)
            held.set()
            async for _ in conn:
                pass

    async def main() -> None:
        from tongits.client.tui.lobby import LobbyJoin

        with create_pipe_input() as pipe:
            lobby = LobbyJoin()
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=lobby, lobby=lobby, prelude=embedded))
            lobby.session = session
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False,
                                 lobby=lobby)
            task = asyncio.create_task(screen.run())
            state = screen.state
            try:
                await settle(lambda: state.lobby is not None)
                await type_line(screen, pipe, "create short bots 2 hands 1",
                                lambda: state.view is not None)
                await type_a_hand(screen, pipe)
                await settle(lambda: state.match_over)
                held = trio.Event()
                assert embedded.nursery is not None
                embedded.in_trio(session, embedded.nursery.start_soon,
                                 hold_the_last_table, held)
                await settle(held.is_set)
                await type_line(screen, pipe, "again",
                                lambda: state.lobby is not None and bool(state.lobby))
                seen["lobby"] = to_text(lobby_panel(state))
                seen["message"] = state.message
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert "bens" in seen["lobby"]
    assert "too_many_tables" in seen["message"]


@asynccontextmanager
async def lobby_screen(port: int, tmp_path: Path) -> AsyncIterator[tuple[TableScreen, PipeInput]]:
    """Ana's terminal in the lobby of the server on ``port``, her seats kept under
    ``tmp_path``, and the pipe she types into; closed on the way out as if killed (the seat is
    kept, not left)."""
    from tongits.client.tui.lobby import LobbyJoin
    from tongits.client.tui.seats import SeatStore

    with create_pipe_input() as pipe:
        lobby = LobbyJoin()
        session = NetSession("127.0.0.1", port, SessionOptions(
            name="Ana", join=lobby, lobby=lobby, seats=SeatStore(tmp_path / "seats")))
        lobby.session = session
        screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False,
                             lobby=lobby)
        task = asyncio.create_task(screen.run())
        try:
            yield screen, pipe
        finally:
            screen.app.exit()
            await asyncio.wait_for(task, 5)


def test_the_creator_back_at_her_waiting_private_table_sees_its_invite_again(
    tmp_path: Path,
) -> None:
    """Ana makes a private table, her program dies before her friends have joined, and she
    starts it again: it takes her seat back from the token on disk, and the invite link her
    friends still need is on the screen again (it was gone: the server says it only with the
    ``joined`` of the create, which a resume does not get), and so is "back in your seat"
    (it waited for a deal: a waiting table sends no state)."""
    from test_client_dial import running_server

    seen: dict[str, str] = {}

    async def run_screen(port: int, first: bool) -> None:
        async with lobby_screen(port, tmp_path) as (screen, pipe):
            state = screen.state
            if first:
                await settle(lambda: state.lobby is not None)
                pipe.send_text("create friday private\r")
            await settle(lambda: "invite friends: " in screen_for(state) and (
                first or "back in your seat at t1" in screen_for(state)))
            seen["first" if first else "back"] = screen_for(state)

    with running_server(None, password=None) as server:
        asyncio.run(run_screen(server.config.port, True))
        asyncio.run(run_screen(server.config.port, False))
    link = next(word for word in seen["first"].split() if "code=" in word)
    assert "/t/t1?code=" in link
    assert "waiting for 2 players" in seen["back"] and link in seen["back"]
    assert "friends in a browser" not in seen["first"]  # a link without its code is refused


def test_the_creator_of_a_public_table_is_given_its_page_for_friends_with_a_phone(
    tmp_path: Path,
) -> None:
    """Ana makes a public table at a terminal; Cara has only a phone. The terminal said
    "friends type `join friday`", which a phone cannot type, and no address of the page (the
    page's own players see an Invite line for any table)."""
    from test_client_dial import running_server

    seen: dict[str, str] = {}

    async def run_screen(port: int) -> None:
        async with lobby_screen(port, tmp_path) as (screen, pipe):
            await settle(lambda: screen.state.lobby is not None)
            pipe.send_text("create friday\r")
            await settle(lambda: "friends in a browser" in screen_for(screen.state))
            seen["screen"] = screen_for(screen.state)

    with running_server(None, password=None) as server:
        port = server.config.port
        asyncio.run(run_screen(port))
    assert f"open http://127.0.0.1:{port}/t/t1" in " ".join(seen["screen"].split())


class CrowdedServer(EmbeddedServer):
    """An embedded server whose lobby already holds more tables than its first page."""

    async def __call__(self, nursery: trio.Nursery) -> tuple[str, int]:
        from tongits.protocol import CreateTable

        address = await super().__call__(nursery)
        assert self.server is not None
        for n in range(55):
            self.server.lobby.create(CreateTable(name=f"other {n}", auto_start=False))
        return address


def test_the_table_is_named_on_a_server_with_more_tables_than_a_page() -> None:
    """Ana's table is the 56th: its name and declared length still reach the title (they
    came from the lobby's first page only, which does not hold it)."""
    seen: dict[str, str] = {}

    async def create(conn: Connection) -> None:
        await conn.create_table("mine", timer=0, bots=2, hands=5)

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = NetSession("127.0.0.1", 0, SessionOptions(
                name="Ana", join=create, prelude=CrowdedServer()))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                await settle(lambda: screen.state.view is not None
                             and "mine" in screen_for(screen.state))
                seen["screen"] = screen_for(screen.state)
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert seen["screen"].startswith(" Tongits · mine (t56) · hand 1 of 5")


def test_a_request_after_the_session_ended_is_answered_on_screen_not_with_a_traceback() -> None:
    """The match over, then the server restarted (its clients are told ``shutting_down``):
    the session ends, as nothing is left to come back to, and the screen still offers
    ``again · lobby``. Typing either printed prompt_toolkit's 'Unhandled exception in event
    loop' (trio's RunFinishedError) over the table; it now says what to do."""
    said: list[object] = []

    async def main() -> None:
        with socket.socket() as closed:  # a port nobody listens on
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        session = NetSession("127.0.0.1", port, SessionOptions(
            name="Ana", join=lambda conn: conn.create_table("x"), retry_delays=(0.01,),
            give_up_after=0))
        session.start(said.append)
        assert session._done is not None
        await asyncio.wait_for(session._done, 10)
        session.to_lobby()
        session.again()

    asyncio.run(main())
    notices = [u.text for u in said if isinstance(u, Notice)]
    assert notices and all("not connected any more" in text for text in notices)


def test_a_server_shutting_down_is_news_not_a_refusal() -> None:
    """Killed for an upgrade, a server tells every client ``shutting_down``, and so it answers
    the ``hello`` of a client that reconnects within its last moments: the screen said
    "✗ server refused: the server is shutting down (shutting_down)" in the error's colour and
    kept it after "connection back after 4 s", though nothing had been refused."""
    said: list[object] = []
    async def sit(conn: Connection) -> None:
        await conn.join("t1")

    session = NetSession("127.0.0.1", 0, SessionOptions(name="Ana", join=sit))
    session.sink = said.append
    refusal = Error(code=ErrorCode.SHUTTING_DOWN, number=5001,
                    message="the server is shutting down")
    assert session._reason(ServerError(refusal)) == ErrorCode.SHUTTING_DOWN
    assert said == [Notice("the server is shutting down")]
