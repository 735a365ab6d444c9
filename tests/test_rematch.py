"""``again`` at a match's end keeps the friends together: each player of the finished match who
asks (``create_table`` with ``rematch`` and the old seat's token) is seated at one new table
with the old one's settings, where before each got a table of their own and nobody was told
about the others'."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import trio
import trio.testing
from server_support import capped, memory_server, next_of, play_hands
from tongits.client.connection import Connection, ServerError
from tongits.client.tui.lobby import LobbyJoin
from tongits.client.tui.net import NetSession, SessionOptions
from tongits.protocol import MatchOver, State

DOC = (Path(__file__).parents[1] / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")

Connect = Callable[..., AbstractAsyncContextManager[Connection]]


@dataclass
class Finished:
    """A match played to its end by Ana and Ben: their connections, its table's id and join
    code, their seat tokens there and the ``match_over`` each got."""

    ana: Connection
    ben: Connection
    table: str
    code: str | None
    tokens: list[str]
    overs: list[MatchOver] = field(default_factory=list)


@asynccontextmanager
async def _finished_match(connect: Connect, *, private: bool = False) -> AsyncIterator[Finished]:
    """Ana and Ben play a one-hand match (with one server bot, 5 s turns, private or not) to
    its end."""
    async with connect("Ana") as ana, connect("Ben") as ben:
        made = await ana.create_table("friday", bots=1, timer=5, hands=1, private=private)
        await ben.join(made.table, code=made.code)
        assert ana.token is not None and ben.token is not None
        done = Finished(ana, ben, made.table, made.code, [ana.token, ben.token])

        async def play_to_the_end(conn: Connection) -> None:
            await play_hands(conn, 1)
            done.overs.append(await next_of(conn, MatchOver))

        async with trio.open_nursery() as nursery:
            for conn in (ana, ben):
                nursery.start_soon(play_to_the_end, conn)
        yield done


@pytest.mark.parametrize("private", [False, True])
@capped
async def test_every_player_who_asks_again_sits_at_the_same_new_table(
    autojump_clock: trio.testing.MockClock, private: bool
) -> None:
    async with (memory_server(bot_delay=1.0) as (_server, connect),
                _finished_match(connect, private=private) as done):
        ana, ben, old = done.ana, done.ben, done.table
        first = await ana.create_table("ignored", rematch=old, token=done.tokens[0])
        second = await ben.create_table("ignored", rematch=old, token=done.tokens[1])
        assert second.table == first.table != old
        assert {first.seat, second.seat} == {0, 2}  # the bot sat again in seat 1
        [entry] = await ana.list_tables()
        assert entry["name"] == "friday" and entry["timer"] == 5
        assert entry["match_length"] == {"hands": 1} and entry["bots"] == 1
        assert entry["private"] is private
        if private:  # a new code: the old table's does not open the new one
            assert first.code is not None and first.code != done.code
        # the table is full again: the new match is dealt to both of them
        assert (await next_of(ben, State)).view["seat"] == second.seat


@capped
async def test_a_rematch_needs_a_token_of_that_match(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with (memory_server(bot_delay=1.0) as (_server, connect),
                _finished_match(connect) as done, connect("Eve") as eve):
        old = done.table
        for table, token in ((old, "a-guess"), ("t999", done.tokens[0])):
            with pytest.raises(ServerError) as refused:
                await eve.create_table("x", rematch=table, token=token)
            assert refused.value.code == "bad_token"
        await done.ana.create_table("x", rematch=old, token=done.tokens[0])
        for fields in ({"rematch": old}, {"rematch": old, "token": 5}, {"rematch": 4}):
            with pytest.raises(ServerError) as bad:  # refused by name, not a crash
                await eve.request({"type": "create_table", "name": "x", **fields})
            assert bad.value.code in {"bad_token", "bad_field"}
        assert eve.table is None
    section = DOC.split("### `create_table`", 1)[1].split("\n### ", 1)[0]
    assert "| `rematch?` | str | since 1.1:" in section
    assert "| `token?` | str | since 1.1:" in section


async def test_the_clients_again_joins_the_table_a_friends_again_made() -> None:
    """The terminal client's ``again`` (after ``match_over``) asks for the rematch of the
    match that ended: two friends typing it are seated together."""
    async with (memory_server(bot_delay=1.0) as (_server, connect),
                _finished_match(connect) as done):
        tables: list[str | None] = []
        for conn, token, over in zip((done.ana, done.ben), done.tokens, done.overs,
                                     strict=True):
            session = NetSession("127.0.0.1", 7790, SessionOptions(name="x", join=LobbyJoin()))
            session.table_entry = {
                "table": "t9", "name": "friday", "seats": [], "players": 3, "humans": 2,
                "bots": 1, "spectators": 0, "options": {}, "timer": 5.0, "private": False,
                "started": True, "hands": 1, "match_length": {"hands": 1}}
            session.token = token
            session._deliver(over)  # match_over: the seat is forgotten, but for again
            assert session.token is None
            await session._same_again(conn)
            tables.append(conn.table)
        assert tables[0] == tables[1] != done.table
