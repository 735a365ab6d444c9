"""The lobby's commands and table lines."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import cast

import pytest
import trio
import trio.testing
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from server_support import memory_server, next_of
from tongits.client.connection import Connection, ServerError
from tongits.client.tui.app import TableScreen
from tongits.client.tui.listing import LOBBY_COMMANDS, LOBBY_HELP, describe
from tongits.client.tui.lobby import (
    CREATE_USAGE,
    REFRESH,
    LobbyChoice,
    LobbyError,
    LobbyJoin,
    parse_lobby,
    table_id,
)
from tongits.client.tui.net import NetSession, SessionOptions
from tongits.client.tui.render import lobby_panel, screen_text, to_text
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import (
    SeatsChanged,
    ServerRefused,
    TableNamed,
    TablesListed,
    TableState,
)
from tongits.protocol import SeatUpdate, State
from tongits.protocol.maps import SeatMap, TableInfoMap
from tongits.protocol.transport import Invite


@pytest.mark.parametrize(
    ("line", "choice"),
    [
        ("create Friday", LobbyChoice("create", "Friday", bots=0)),
        ("create Friday bots 1 timer 20", LobbyChoice("create", "Friday", bots=1, timer=20.0)),
        ("create Friday hands 2 bots 0", LobbyChoice("create", "Friday", bots=0, hands=2)),
        # the words after the name in any case, as the table's commands (DRAW, Discard kd)
        ("create Friday BOTS 2 Hands 3 PRIVATE",
         LobbyChoice("create", "Friday", bots=2, hands=3, private=True)),
        ("join t1", LobbyChoice("join", "t1")),
        ("join t1 2", LobbyChoice("join", "t1", seat=2)),
        ("watch t3", LobbyChoice("watch", "t3")),
        ("spectate t3", LobbyChoice("watch", "t3")),
        ("watch t3 hnes5rbjkm", LobbyChoice("watch", "t3", code="hnes5rbjkm")),
        ("queue", LobbyChoice("queue")),
        ("unqueue", LobbyChoice("unqueue")),
        ("join t3 hnes5rbjkm", LobbyChoice("join", "t3", code="hnes5rbjkm")),
        ("join t3 2 4nes5rbjk2", LobbyChoice("join", "t3", seat=2, code="4nes5rbjk2")),
    ],
)
def test_parse_lobby(line: str, choice: LobbyChoice) -> None:
    assert parse_lobby(line) == choice


@pytest.mark.parametrize(
    "line", ["", "create", "create x bots", "create x hands two", "join", "join t1 x-y", "dance",
             "queue now"]
)
def test_parse_lobby_errors(line: str) -> None:
    """Each refusal fits the message line of an 80-column screen (" ✗ " before it)."""
    with pytest.raises(LobbyError) as refused:
        parse_lobby(line)
    assert len(str(refused.value)) <= 77, str(refused.value)


def test_an_unknown_lobby_command_names_the_commands() -> None:
    with pytest.raises(LobbyError, match="unknown command 'dance': create NAME · join TABLE"):
        parse_lobby("dance")
    with pytest.raises(LobbyError, match=r"^usage: watch TABLE \[CODE\]$"):
        parse_lobby("watch")


def test_create_private() -> None:
    assert parse_lobby("create Friday private bots 1") == LobbyChoice(
        "create", "Friday", bots=1, private=True
    )


def entry(table: str, name: str, players: int = 0, *, started: bool = False,
          timer: float = 0.0, seats: Sequence[SeatMap] = ()) -> TableInfoMap:
    """A table of the lobby's list, as a server sends it (no match yet, no timer unless
    said)."""
    return {"table": table, "name": name, "seats": list(seats), "players": players,
            "humans": players, "bots": 0, "spectators": 0, "options": {}, "timer": timer,
            "private": False, "started": started, "hands": 0, "match_length": {}}


def test_lobby_lists_tables() -> None:
    table = entry("t1", "Friday", 3, started=True, timer=30.0, seats=[
        {"seat": 0, "name": "Ana", "player": "human"},
        {"seat": 1, "name": "greedy-bot-1", "player": "bot"},
    ])
    assert describe(table).startswith("t1    Friday         3/3  playing, hand 1 · 30s")
    state = TableState()
    state.apply(TablesListed([table]))
    text = to_text(lobby_panel(state))
    assert "greedy-bot-1*" in text and "watch TABLE" in text
    state.apply(TablesListed(None))
    assert state.lobby is None


TABLES = [entry("t1", "Friday", 1), entry("t2", "Saturday", 2), entry("t3", "saturday")]


def test_join_and_watch_take_a_table_name_or_id() -> None:
    assert table_id(TABLES, "t2") == "t2"
    assert table_id(TABLES, "friday") == "t1"
    with pytest.raises(LobbyError, match="2 tables are named 'Saturday': use the id"):
        table_id(TABLES, "Saturday")
    lobby = LobbyJoin()
    lobby.tables = TABLES
    assert lobby.choose("join Friday") == "not connected yet"  # resolved, then not sent
    assert lobby.choose("watch Saturday") is not None and "use the id" in str(
        lobby.choose("watch Saturday")
    )


def test_help_in_the_lobby_is_help_not_an_error() -> None:
    async def main() -> TableState:
        with create_pipe_input() as pipe:
            screen = TableScreen(FakeSession(), input=pipe, output=DummyOutput(),
                                 lobby=LobbyJoin())
            task = asyncio.create_task(screen.run())
            await asyncio.sleep(0.05)
            screen.on_update(TablesListed(TABLES))
            pipe.send_text("help\r")
            for _ in range(200):
                if screen.state.message:
                    break
                await asyncio.sleep(0.01)
            screen.app.exit()
            await asyncio.wait_for(task, 5)
            return screen.state

    state = asyncio.run(main())
    assert state.message == LobbyJoin.help and not state.message_is_error
    assert state.message.startswith(LOBBY_COMMANDS) and len(state.message) <= 79


async def test_create_with_hands_declares_the_match_length() -> None:
    """``create Friday hands 2`` reaches the server: the table's match is two hands long."""
    async with memory_server() as (_server, connect), connect("Ana") as conn:
        await LobbyJoin._take(conn, parse_lobby("create Friday hands 2 bots 2"))
        [table] = await conn.list_tables()
    assert table["name"] == "Friday"
    assert table["match_length"]["hands"] == 2


def test_the_lobby_footer_lists_every_form_of_create() -> None:
    assert CREATE_USAGE.removeprefix("usage: ") in LOBBY_HELP
    assert "[hands N]" in LOBBY_HELP


async def test_a_table_created_in_the_lobby_waits_for_friends_and_says_how_they_sit() -> None:
    """``create friday`` seats no bots (the friends' case); the waiting screen names the
    players still to come and what they type, and shows empty seats as empty."""
    async with memory_server() as (_server, connect), connect("Ana") as conn:
        await LobbyJoin._take(conn, parse_lobby("create friday"))
        update = await next_of(conn, SeatUpdate)
        [table] = await conn.list_tables()
    assert table["players"] == 1 and not table["started"]
    state = TableState()
    state.apply(TableNamed("friday", 0, table["table"], 0), now=0.0)
    state.apply(SeatsChanged(update.seats), now=0.0)
    text = screen_text(state, now=0.0, cols=80)
    assert "waiting for 2 players: friends type `join friday`; bots: `create NAME bots 2`" in text
    assert "(empty) [human]" not in text and "seat 1 (empty)" in text


async def test_a_full_table_that_waits_for_its_owners_start_says_so() -> None:
    """Cara takes the last seat of a table its owner made with ``auto_start`` false (a script or
    bot can): nothing is dealt until Ben sends ``start``, and the screen said only "waiting for
    the server…"; it names the owner it waits for. The owner's own screen does not."""
    async with memory_server() as (_server, connect), connect("Ben") as ben, \
            connect("Cara") as cara:
        created = await ben.create_table("Bens", bots=1, timer=0, auto_start=False)
        await LobbyJoin._take(cara, parse_lobby(f"join {created.table} 2"))
        update = await next_of(cara, SeatUpdate, lambda u: u.change is not None)
    for seat, owner_named in ((2, True), (0, False)):
        state = TableState()
        state.apply(TableNamed("Bens", 0, created.table, seat), now=0.0)
        state.apply(SeatsChanged(update.seats), now=0.0)
        text = screen_text(state, now=0.0, cols=80)
        waits = "every seat is taken: waiting for Ben, the table's owner, to start"
        assert (waits in text) is owner_named, text


def test_join_takes_an_invite_link() -> None:
    assert parse_lobby("join tongits://127.0.0.1:7790/t/t9?code=hnes5rbjkm") == LobbyChoice(
        "join", "t9", code="hnes5rbjkm", server="127.0.0.1:7790")
    with pytest.raises(LobbyError, match="ends in /t/TABLE"):
        parse_lobby("join tongits://127.0.0.1:7790/t9")
    assert "join INVITE-LINK" in LOBBY_HELP


def test_an_invite_link_for_another_server_is_not_joined_here() -> None:
    """The link's table id means a table of the link's server: joining it on this server would
    seat the player at another table, or be refused."""
    lobby = LobbyJoin()
    lobby.session = NetSession("127.0.0.1", 7790, SessionOptions(name="Ben", join=lobby))
    assert lobby.choose("join tongits://10.0.0.1:7777/t/t1?code=x") == (
        "that invite is for 10.0.0.1:7777, not this server: tongits connect LINK")
    assert lobby.choose("join tongits://127.0.0.1:7790/t/t1?code=x") == "not connected yet"


async def test_a_private_table_is_joined_from_the_lobby_with_its_invite_link() -> None:
    """The creator of a private table is told that friends join with its invite link (the
    name alone is refused: ``bad_join_code``), and the lobby's ``join LINK`` seats them."""
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        await LobbyJoin._take(ana, parse_lobby("create friday private"))
        update = await next_of(ana, SeatUpdate)
        assert ana.invite is not None and "code=" in ana.invite
        async with connect("Ben") as ben:
            with pytest.raises(ServerError, match="join code"):
                await LobbyJoin._take(ben, parse_lobby("join " + str(ana.table)))
            await LobbyJoin._take(ben, parse_lobby("join " + ana.invite))
            assert ben.table == ana.table and ben.seat == 1
    state = TableState()
    state.apply(TableNamed("friday", 0, str(ana.table), 0, private=True), now=0.0)
    state.apply(SeatsChanged(update.seats), now=0.0)
    text = screen_text(state, now=0.0, cols=80)
    assert "waiting for 2 players: private table: friends `join` its invite link" in text
    assert "join friday" not in text


def test_watch_takes_an_invite_link() -> None:
    assert parse_lobby("watch tongits://127.0.0.1:7790/t/t9?code=hnes5rbjkm") == LobbyChoice(
        "watch", "t9", code="hnes5rbjkm", server="127.0.0.1:7790")
    assert "watch INVITE-LINK" in LOBBY_HELP


async def test_a_private_match_is_watched_from_the_lobby_with_its_invite_link() -> None:
    """A friend who was given the invite link of a private table that has begun may watch
    it: ``watch LINK``, or ``watch TABLE CODE`` with the code told (the table's name alone is
    refused for want of the code)."""
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        await LobbyJoin._take(ana, parse_lobby("create friday private bots 2"))
        await next_of(ana, State)
        assert ana.invite is not None
        async with connect("Eve") as eve:
            with pytest.raises(ServerError, match="join code"):
                await LobbyJoin._take(eve, parse_lobby("watch " + str(ana.table)))
            await LobbyJoin._take(eve, parse_lobby("watch " + ana.invite))
            state = await next_of(eve, State)
            async with connect("Fay") as fay:
                code = Invite.parse(ana.invite).code
                await LobbyJoin._take(fay, parse_lobby(f"watch {ana.table} {code}"))
                assert fay.table == ana.table and fay.seat is None
    assert eve.table == ana.table and eve.seat is None and eve.token is None
    assert state.view["seat"] is None and state.view["hand"] == []


async def test_again_makes_a_table_with_the_last_ones_settings() -> None:
    """``again`` after a match: the server has closed the table, so a new one is made with
    the settings the lobby listed for the old one (name, rules, timer, server bots, length,
    private or not)."""
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        await ana.create_table("friday", options={"ante": 1}, timer=25, bots=2, hands=3,
                               target=40, private=True)
        [old] = await ana.list_tables()
        await ana.leave()
        session = NetSession("127.0.0.1", 7790, SessionOptions(name="Ana", join=LobbyJoin()))
        session.table_entry = old
        await session._same_again(ana)
        [new] = [t for t in await ana.list_tables() if t["table"] != old["table"]]
    same = ("name", "options", "timer", "private", "bots", "match_length")
    assert {k: dict(new)[k] for k in same} == {k: dict(old)[k] for k in same}
    assert new["match_length"] == {"hands": 3, "target": 40} and new["bots"] == 2


async def test_a_match_of_declared_length_says_it_in_the_lobby_and_the_title() -> None:
    """Friends choosing a table see how long its match is ("3 hands"), and at the table the
    title counts the hands against it ("hand 1 of 3"): neither was shown anywhere, so nobody
    knew when the evening's match would end until its end screen."""
    async with memory_server() as (_server, connect), connect("Ana") as conn:
        await LobbyJoin._take(conn, parse_lobby("create friday hands 3"))
        [table] = await conn.list_tables()
    async with memory_server() as (_server, connect), connect("Ben") as conn:
        await conn.create_table("race", target=50, hands=8)
        [both] = await conn.list_tables()
    assert "waiting · 3 hands" in describe(table)
    assert "8 hands or ±50" in describe(both)
    assert "hand" not in describe({**table, "match_length": {}}).split("waiting")[1]
    state = TableState()
    state.apply(TableNamed("friday", 0, table["table"], 0, match_hands=3), now=0.0)
    assert " Tongits · friday (t1) · hand 1 of 3 · waiting for the deal" in screen_text(
        state, now=0.0, cols=80)


async def test_a_private_table_asked_for_by_id_alone_says_how_to_get_in() -> None:
    """``join t1`` at a private table is refused (``bad_join_code``): the line says what gets
    the player in, the invite link or the table's code after its id, and both do."""
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        await LobbyJoin._take(ana, parse_lobby("create friday private"))
        assert ana.invite is not None
        code = Invite.parse(ana.invite).code
        assert code is not None
        async with connect("Ben") as ben, connect("Cai") as cai:
            with pytest.raises(ServerError) as refused:
                await LobbyJoin._take(ben, parse_lobby(f"join {ana.table}"))
            state = TableState()
            state.apply(ServerRefused(refused.value.code, refused.value.message), now=0.0)
            assert state.message_is_error and len(" ✗ " + state.message) <= 80
            assert "join INVITE-LINK or join TABLE CODE" in state.message
            await LobbyJoin._take(ben, parse_lobby(f"join {ana.table} {code}"))
            assert ben.table == ana.table and ben.seat == 1
            await LobbyJoin._take(cai, parse_lobby(f"join {ana.table} 2 {code}"))
            assert cai.seat == 2
    with pytest.raises(LobbyError, match=r"usage: join TABLE \[SEAT\] \[CODE\]"):
        parse_lobby("join t1 2 code extra")


class _SlowJoin:
    """A connection whose server answers a join only after the table list is due again."""

    def __init__(self) -> None:
        self.joined: list[str] = []

    async def list_tables(self) -> list[TableInfoMap]:
        return []

    async def join(self, table: str, seat: int | None = None, *, code: str | None = None) -> None:
        await trio.sleep(REFRESH * 3)
        self.joined.append(table)


async def test_a_join_answered_after_the_lists_refresh_still_seats(
        autojump_clock: trio.testing.MockClock) -> None:
    """The list's refresh does not cut off a request in flight: a join typed just before the
    refresh was due was cancelled there and lost (the player saw "asking the server…" and had
    to type it again)."""
    conn = _SlowJoin()
    lobby = LobbyJoin()
    lobby.session = NetSession("127.0.0.1", 1, SessionOptions(name="Ana", join=lobby))
    with trio.fail_after(REFRESH * 20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lobby, cast(Connection, conn))
            await trio.sleep(REFRESH - 0.1)
            assert lobby.choose("join t1") is None
    assert conn.joined == ["t1"]
