"""Seat tokens on disk: a client started again takes its seat back at once, through a server
that outlived it (``tongits connect``) or one restored from its database (``tongits play``)."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from screen_support import settle
from tongits.client.connection import Connection
from tongits.client.tui.app import TableScreen, screen_for
from tongits.client.tui.net import NetSession, SessionOptions
from tongits.client.tui.seats import MAX_AGE, SavedSeat, SeatStore
from tongits.server.app import Server
from tongits.server.config import ServerConfig
from tongits.server.storage.store import SQLiteJournal


def test_a_saved_seat_is_private_and_read_back_per_server_and_name(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "seats")
    store.save(SavedSeat("example.org:7777", "Ana", "secret-token", "t3"))
    store.save(SavedSeat("example.org:7777", "Ben", "other-token", "t3"))
    seat = store.load("example.org:7777", "Ana")
    assert seat is not None and (seat.token, seat.table) == ("secret-token", "t3")
    assert store.load("example.org:7000", "Ana") is None
    assert stat.S_IMODE(os.stat(tmp_path / "seats").st_mode) == 0o700
    files = list((tmp_path / "seats").iterdir())
    assert len(files) == 2 and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert all("secret-token" not in f.name for f in files)
    store.forget("example.org:7777", "Ana")
    assert store.load("example.org:7777", "Ana") is None
    assert store.load("example.org:7777", "Ben") is not None


def test_old_seats_are_removed_and_bad_files_read_as_none(tmp_path: Path) -> None:
    store = SeatStore(tmp_path)
    store.save(SavedSeat("h:1", "Ana", "t"))
    store._path("h:2", "Ben").write_text("{not json")
    assert store.load("h:2", "Ben") is None
    SeatStore(tmp_path, now=time.time() + MAX_AGE + 10)
    assert list(tmp_path.iterdir()) == []


class ServerThread:
    """A server that outlives the clients: its own Trio run in a thread, on a free port."""

    def __init__(self) -> None:
        self.port = 0
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel = trio.CancelScope()
        self._thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True)

    async def _main(self) -> None:
        config = ServerConfig(port=0, timer=0.0, bot_delay=0.05, grace=30, log_level="WARNING")
        with self._cancel:
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(Server(config).serve)
                self.port = listeners[0].socket.getsockname()[1]
                self._token = trio.lowlevel.current_trio_token()
                self._ready.set()

    def __enter__(self) -> ServerThread:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        self._token.run_sync_soon(self._cancel.cancel)
        self._thread.join(10)


def run_client(session: NetSession, scenario: Callable[[TableScreen], Any]) -> Any:
    async def main() -> Any:
        with create_pipe_input() as pipe:
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            try:
                return await scenario(screen)
            finally:
                if not screen.app.is_done:
                    screen.app.exit()
                await asyncio.wait_for(task, 5)

    return asyncio.run(main())


def test_a_restarted_client_is_back_in_its_seat(tmp_path: Path) -> None:
    joins: list[str] = []

    async def create(conn: Connection) -> None:
        joins.append("create")
        await conn.create_table("friday", timer=0, bots=2)

    async def first(screen: TableScreen) -> str:
        await settle(lambda: screen.state.view is not None and bool(screen.state.view.legal))
        return screen_for(screen.state)

    async def second(screen: TableScreen) -> str:
        await settle(lambda: "back in your seat at t1" in screen.state.message)
        await settle(lambda: screen.state.view is not None and bool(screen.state.view.legal))
        return screen_for(screen.state)

    with ServerThread() as server:
        before = run_client(
            NetSession("127.0.0.1", server.port, SessionOptions(
                name="Ana", join=create, seats=SeatStore(tmp_path))),
            first,
        )
        started = time.monotonic()
        after = run_client(
            NetSession("127.0.0.1", server.port, SessionOptions(
                name="Ana", join=create, seats=SeatStore(tmp_path))),
            second,
        )
        elapsed = time.monotonic() - started
    assert joins == ["create"]  # the second client took the seat back without the lobby
    hand = [line for line in before.split("\n") if line.startswith("  [") or "count" in line]
    assert hand and all(line in after for line in hand)
    assert elapsed < 5


def test_a_seat_token_the_server_forgot_is_dropped_and_the_lobby_runs(tmp_path: Path) -> None:
    store = SeatStore(tmp_path)
    joins: list[str] = []

    async def create(conn: Connection) -> None:
        joins.append("create")
        await conn.create_table("friday", timer=0, bots=2)

    async def scenario(screen: TableScreen) -> str:
        await settle(lambda: screen.state.view is not None)
        return screen.state.message

    with ServerThread() as server:
        key = f"127.0.0.1:{server.port}"
        store.save(SavedSeat(key, "Ana", "a-token-from-a-table-long-gone", "t9"))
        session = NetSession("127.0.0.1", server.port, SessionOptions(
            name="Ana", join=create, seats=store))
        run_client(session, scenario)
        saved = store.load(key, "Ana")
    assert joins == ["create"]
    assert saved is not None and saved.token == session.token != "a-token-from-a-table-long-gone"


def test_tongits_play_started_again_restores_the_match_and_the_seat(tmp_path: Path) -> None:
    """The ``play`` path: the server dies with the client, its tables live in the database."""
    db = tmp_path / "play.db"
    joins: list[str] = []

    def session() -> tuple[NetSession, SQLiteJournal]:
        journal = SQLiteJournal(str(db))

        async def embedded(nursery: trio.Nursery) -> tuple[str, int]:
            config = ServerConfig(port=0, timer=0.0, bot_delay=0.05, log_level="WARNING")
            listeners = await nursery.start(Server(config, journal).serve)
            return "127.0.0.1", listeners[0].socket.getsockname()[1]

        async def create(conn: Connection) -> None:
            joins.append("create")
            await conn.create_table("play", timer=0, bots=2)

        net = NetSession("127.0.0.1", 0, SessionOptions(
            name="You", join=create, prelude=embedded, seats=SeatStore(tmp_path / "seats"),
            server_key=f"play:{db}"))
        return net, journal

    async def until_our_turn(screen: TableScreen) -> list[Any]:
        await settle(lambda: screen.state.view is not None and bool(screen.state.view.legal))
        assert screen.state.view is not None
        return sorted(screen.state.view.hand)

    first, journal = session()
    try:
        hand = run_client(first, until_our_turn)
    finally:
        journal.close()
    again, journal = session()
    try:
        assert run_client(again, until_our_turn) == hand
    finally:
        journal.close()
    assert joins == ["create"] and again.table == first.table


def test_a_client_started_again_in_hand_2_counts_on_from_there(tmp_path: Path) -> None:
    from tongits.client.tui.hint import choose_move
    from tongits.engine import Phase

    async def create(conn: Connection) -> None:
        await conn.create_table("friday", timer=0, bots=2)

    async def into_hand_2(screen: TableScreen) -> str:
        while screen.state.hands_seen < 2 or not screen.state.view.legal:  # type: ignore[union-attr]
            view = screen.state.view
            if view is not None and view.phase is Phase.OVER and screen.state.standings:
                screen.submit("")  # Enter: the next hand
                await settle(lambda: screen.state.hands_seen == 2)
            elif view is not None and view.legal:
                before = len(view.history)
                screen.submit(str(choose_move(view)))
                await settle(lambda b=before: len(screen.state.view.history) != b)  # type: ignore[misc, union-attr]
            else:
                await asyncio.sleep(0.01)
        return screen_for(screen.state)

    async def back(screen: TableScreen) -> str:
        await settle(lambda: "back in your seat" in screen_for(screen.state))
        await settle(lambda: screen.state.table_name == "friday")
        assert screen.state.result is None  # no hand has ended since the restart
        return screen_for(screen.state)

    with ServerThread() as server:
        first = run_client(NetSession("127.0.0.1", server.port, SessionOptions(
            name="Ana", join=create, seats=SeatStore(tmp_path))), into_hand_2)
        again = run_client(NetSession("127.0.0.1", server.port, SessionOptions(
            name="Ana", join=create, seats=SeatStore(tmp_path))), back)
    assert first.startswith(" Tongits · friday (t1) · hand 2")
    assert again.startswith(" Tongits · friday (t1) · hand 2")
    # the match's chips, at once: the resumed state carries them (not the next hand's end)
    (standings,) = [line for line in first.splitlines() if line.startswith("─ after 1 hand:")]
    assert standings in again.splitlines()


def test_tongits_play_writes_each_hand_record_and_says_where(tmp_path: Path) -> None:
    import json

    from tongits.client.replay import run as replay
    from tongits.client.tui.hint import choose_move
    from tongits.client.tui.launch import PlaySession
    from tongits.engine import Phase

    db = tmp_path / "play.db"
    journal = SQLiteJournal(str(db))

    async def embedded(nursery: trio.Nursery) -> tuple[str, int]:
        config = ServerConfig(port=0, timer=0.0, bot_delay=0.0, log_level="WARNING")
        listeners = await nursery.start(Server(config, journal).serve)
        return "127.0.0.1", listeners[0].socket.getsockname()[1]

    async def create(conn: Connection) -> None:
        await conn.create_table("play", timer=0, bots=2)

    async def one_hand(screen: TableScreen) -> str:
        while not (screen.state.view is not None and screen.state.view.phase is Phase.OVER):
            view = screen.state.view
            if view is not None and view.legal:
                before = len(view.history)
                screen.submit(str(choose_move(view)))
                await settle(lambda b=before: len(screen.state.view.history) != b)  # type: ignore[misc, union-attr]
            else:
                await asyncio.sleep(0.01)
        await settle(lambda: "saved: tongits replay" in screen.state.message)
        said = screen.state.message
        logged = [line.text for line in screen.state.log()]
        assert f"hand records are kept in {tmp_path / 'hands'}/" in logged and said in logged
        text = screen_for(screen.state)  # 80 columns: the name whole, on a line of its own
        assert all(len(line) <= 80 for line in text.split("\n"))
        assert any(line.split("│")[-1].split()[-1:] == ["t1-hand-1.json"]
                   for line in text.split("\n"))
        screen.submit("")  # Enter: the next hand, whose log the saved record is no part of
        await settle(lambda: screen.state.hands_seen == 2 and screen.state.result is None)
        assert not any("tongits replay" in line.text for line in screen.state.log())
        return said

    session = PlaySession("127.0.0.1", 0, SessionOptions(
        name="You", join=create, prelude=embedded, seats=SeatStore(tmp_path / "seats"),
        server_key=f"play:{db}"),
        db=db, records=tmp_path / "hands")
    try:
        said = run_client(session, one_hand)
    finally:
        journal.close()
    record = tmp_path / "hands" / "t1-hand-1.json"
    assert said == "saved: tongits replay t1-hand-1.json"
    assert json.loads(record.read_text())["format"].startswith("tongits-hand")
    assert replay(str(record), as_json=True) == 0


def test_tongits_play_says_when_it_resumed_the_saved_game_and_what_it_did_not_apply(
    tmp_path: Path,
) -> None:
    """``tongits play`` run again resumes the saved game: its first screen says so, with the
    flags it did not apply; a session that took a new seat says nothing of the kind."""
    from tongits.client.tui.launch import PlaySession

    db = tmp_path / "play.db"
    notice = ["back in your saved game: a match keeps its settings; not applied:",
              "  --bots 1 (this game: 2)"]

    def session() -> tuple[PlaySession, SQLiteJournal]:
        journal = SQLiteJournal(str(db))

        async def embedded(nursery: trio.Nursery) -> tuple[str, int]:
            config = ServerConfig(port=0, timer=0.0, bot_delay=0.05, log_level="WARNING")
            listeners = await nursery.start(Server(config, journal).serve)
            return "127.0.0.1", listeners[0].socket.getsockname()[1]

        async def create(conn: Connection) -> None:
            await conn.create_table("play", timer=0, bots=2)

        play = PlaySession("127.0.0.1", 0, SessionOptions(
            name="You", join=create, prelude=embedded, seats=SeatStore(tmp_path / "seats"),
            server_key=f"play:{db}"),
            db=db, records=tmp_path / "hands", resume_notice=notice)
        return play, journal

    async def seated(screen: TableScreen) -> list[str]:
        await settle(lambda: screen.state.view is not None)  # the notice comes with it
        return [line.text for line in screen.state.log()]

    for attempt in ("new", "resumed"):
        play, journal = session()
        try:
            log = run_client(play, seated)
        finally:
            journal.close()
        shown = [line for line in notice if line in log]
        assert shown == (notice if attempt == "resumed" else []), (attempt, log)
        assert play.created is (attempt == "new")


def test_leave_gives_the_seat_up_and_forgets_the_token(tmp_path: Path) -> None:
    store = SeatStore(tmp_path)
    joins: list[str] = []

    async def create(conn: Connection) -> None:
        joins.append("create")
        await conn.create_table("friday", timer=0, bots=2)

    async def leave(screen: TableScreen) -> None:
        await settle(lambda: screen.state.view is not None)
        screen.submit("quit")
        assert screen.state.confirming_quit
        screen.submit("leave")
        await settle(lambda: screen.app.is_done)

    with ServerThread() as server:
        key = f"127.0.0.1:{server.port}"
        session = NetSession("127.0.0.1", server.port, SessionOptions(
            name="Ana", join=create, seats=store))
        run_client(session, leave)
        assert store.load(key, "Ana") is None
        run_client(NetSession("127.0.0.1", server.port, SessionOptions(
            name="Ana", join=create, seats=store)),
                   lambda screen: settle(lambda: screen.state.view is not None))
    assert joins == ["create", "create"]


def test_replay_finds_a_saved_record_by_the_bare_name_the_screen_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The screen says ``tongits replay NAME`` (the whole path did not fit): that name, typed
    in any folder, is the record in the records' folder; a file of that name in the working
    directory, or a path, is read as given."""
    from tongits.client import user_files
    from tongits.client.tui.records import find_record

    folder = tmp_path / "data" / "hands"
    folder.mkdir(parents=True)
    (folder / "t1-hand-1.json").write_text("{}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert find_record("t1-hand-1.json", folder) == folder / "t1-hand-1.json"
    assert find_record("t1-hand-2.json", folder) == Path("t1-hand-2.json")
    assert find_record("x/t1-hand-1.json", folder) == Path("x/t1-hand-1.json")
    (elsewhere / "t1-hand-1.json").write_text("{}")
    assert find_record("t1-hand-1.json", folder) == Path("t1-hand-1.json")
    monkeypatch.setattr(user_files, "data_dir", lambda: tmp_path / "data")
    from tongits.client.replay import run as replay
    (elsewhere / "t1-hand-1.json").unlink()
    assert replay("t1-hand-1.json", as_json=True) != 0  # read from the folder: "{}" is no hand
    assert "bad_file" not in capsys.readouterr().out
    assert replay("t1-hand-9.json", as_json=True) != 0
    assert "bad_file" in capsys.readouterr().out


def test_quitting_a_table_still_waiting_for_players_asks_first(tmp_path: Path) -> None:
    """A private table just made, its invite link sent to friends, no card dealt yet: Ctrl-Q
    (or ``quit``) asks first, as at a match, and says that the table closes within seconds if
    nobody is left at it, its invite link with it (the server's ``pregame_grace``). It used
    to quit at once, and the host who restarted the client found 'your saved seat at t2 is
    gone (the table has closed)'."""
    seen: dict[str, Any] = {}

    async def create(conn: Connection) -> None:
        await conn.create_table("friday", timer=0, bots=0, private=True)

    async def quit_twice(screen: TableScreen) -> None:
        await settle(lambda: screen.state.seat is not None
                     and "waiting for 2 players" in screen_for(screen.state))
        screen.submit("quit")
        seen["asked"] = screen.state.confirming_quit
        seen["said"] = screen_for(screen.state)
        screen.submit("n")
        seen["stayed"] = not screen.app.is_done
        screen.submit("quit")
        screen.submit("y")
        await settle(lambda: screen.app.is_done)

    with ServerThread() as server:
        run_client(NetSession("127.0.0.1", server.port, SessionOptions(
            name="Ana", join=create, seats=SeatStore(tmp_path))), quit_twice)
    assert seen["asked"] is True and seen["stayed"] is True
    assert "Quit the game? y = quit" in seen["said"]
    assert "the table closes" in seen["said"] and "invite link" in seen["said"]


def test_an_invite_link_to_another_table_says_why_the_old_seat_came_back(
    tmp_path: Path,
) -> None:
    """A friend still seated in one match (its token saved) pastes the invite link of another
    table: the saved seat is taken back, as with any ``tongits connect``, and the screen says
    that the link's table was not joined and how to get to it, where it said only 'back in
    your seat at t1' and left the friend at the wrong table wondering."""
    from dataclasses import replace

    from tongits.client.tui.dial import Target
    from tongits.client.tui.lobby import connect_session

    store = SeatStore(tmp_path)

    async def create(conn: Connection) -> None:
        await conn.create_table("first", timer=0, bots=2)

    async def create_private(conn: Connection) -> None:
        await conn.create_table("second", timer=0, bots=1)

    def dealt(screen: TableScreen) -> Any:
        return settle(lambda: screen.state.view is not None)

    with ServerThread() as server:
        run_client(NetSession("127.0.0.1", server.port, SessionOptions(
            name="Ana", join=create, seats=store)), dealt)
        run_client(NetSession("127.0.0.1", server.port, SessionOptions(
            name="Bea", join=create_private, seats=SeatStore(tmp_path / "bea"))),
                   lambda screen: settle(lambda: screen.state.seat is not None))
        session = connect_session(Target.parse(f"tongits://127.0.0.1:{server.port}/t/t2"),
                                  "Ana", None)
        session.options = replace(session.options, seats=store, record_dir=None)

        async def back(screen: TableScreen) -> str:
            await settle(lambda: screen.state.view is not None
                         and "back in your seat at t1" in screen_for(screen.state))
            return screen_for(screen.state)

        said = run_client(session, back)
    assert "not t2 of the invite link" in said
    assert "`leave`" in said and "join" in said
