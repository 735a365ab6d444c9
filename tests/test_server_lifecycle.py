"""A match's lifecycle (protocol 1.1, all additions): a declared length and ``match_over``,
the hand number in every ``state``, ``sync``, remote bots shown as bots and dealt to without
``next_hand``."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from server_support import capped, memory_server, next_of, play_hands, quick_config
from tongits.client.connection import Connection, ServerError
from tongits.protocol import (
    PROTOCOL_MINOR,
    HandResult,
    Joined,
    MatchOver,
    Ok,
    SeatUpdate,
    State,
    Welcome,
)
from tongits.server import MemoryJournal, Server
from tongits.server.table import bots

PROTOCOL_DOC = (Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md").read_text(
    encoding="utf-8")


@asynccontextmanager
async def raw_connection(server: Server, hello: dict[str, Any]) -> AsyncIterator[Connection]:
    """A client that says exactly ``hello`` (with fields the SDK does not send)."""
    client, server_side = trio.testing.memory_stream_pair()
    conn = Connection(client)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, server_side, "memory")
        nursery.start_soon(conn.run_reader)
        welcome = await conn.request({"type": "hello", "version": 1, **hello})
        assert isinstance(welcome, Welcome)
        conn.welcome = welcome
        yield conn
        nursery.cancel_scope.cancel()


@capped
async def test_a_match_of_n_hands_ends_with_match_over_and_the_table_closes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server() as (server, connect), connect("Ana") as ana:
        assert ana.welcome is not None and ana.welcome.minor == PROTOCOL_MINOR
        assert {"match_length", "sync", "auto_next"} <= set(ana.welcome.capabilities)
        joined = await ana.request({"type": "create_table", "name": "Two", "bots": 2,
                                    "hands": 2})
        assert isinstance(joined, Joined)
        listed = {t["table"]: t for t in await ana.list_tables()}
        assert listed[joined.table]["match_length"] == {"hands": 2}
        seen: list[Any] = []
        results = await play_hands(ana, 2, seen=seen)
        numbers = {s.hand for s in seen if isinstance(s, State)}
        assert numbers == {1, 2}
        over = await next_of(ana, MatchOver)
        assert over.reason == "hands"
        assert over.standings["hands"] == 2
        assert over.standings["chips"] == results[-1].standings["chips"]
        with pytest.raises(ServerError) as refused:
            await ana.next_hand()
        assert refused.value.code == "not_seated"
        assert joined.table not in {t["table"] for t in await ana.list_tables()}
        await ana.create_table("Again", bots=2)  # back in the lobby: free to sit again
        assert server.lobby.journal.journal.closed >= {joined.table}  # type: ignore[attr-defined]


@capped
async def test_a_chip_target_ends_the_match_when_a_seat_reaches_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        await ana.request({"type": "create_table", "name": "Quick", "bots": 2, "target": 1})
        while True:
            msg = await ana.receive()
            if isinstance(msg, State) and msg.legal and msg is ana.last_state:
                await ana.move(msg.legal[-1])
            elif isinstance(msg, HandResult) and any(msg.standings["chips"]):
                break
            elif isinstance(msg, HandResult):
                await ana.next_hand()
        over = await next_of(ana, MatchOver)
        assert over.reason == "target"
        assert max(abs(c) for c in over.standings["chips"]) >= 1


@pytest.mark.parametrize("length", [{"hands": 0}, {"hands": 10_001}, {"target": 0},
                                    {"target": -5}, {"hands": "3"}])
async def test_a_bad_match_length_is_refused(length: dict[str, Any]) -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        with pytest.raises(ServerError) as refused:
            await ana.request({"type": "create_table", "name": "Bad", **length})
        assert refused.value.code in ("bad_options", "bad_field")


@capped
async def test_sync_answers_the_table_as_it_is_for_seats_and_spectators(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(bot_delay=5.0) as (_server, connect), \
            connect("Ana") as ana, connect("Eve") as eve:
        joined = await ana.create_table("Sync", bots=2)
        await eve.spectate(joined.table)
        first = await next_of(ana, State)
        assert isinstance(await ana.request({"type": "sync"}), Ok)
        again = await next_of(ana, State)
        assert again.seq == first.seq and again.view == first.view and again.hand == 1
        assert isinstance(await eve.request({"type": "sync"}), Ok)
        public = await next_of(eve, State, lambda s: s.seq == first.seq)
        assert public.view["seat"] is None and public.view["hand"] == []


@capped
async def test_a_remote_bot_is_shown_as_a_bot_and_dealt_to_without_next_hand(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server() as (server, _connect), raw_connection(
            server, {"name": "js", "kind": "bot", "auto_next": True}) as bot:
        joined = await bot.request({"type": "create_table", "name": "Bots", "bots": 2})
        assert isinstance(joined, Joined)
        update = await next_of(bot, SeatUpdate)
        assert update.seats[0]["player"] == "bot" and update.seats[0]["remote"] is True
        assert "policy" not in update.seats[0]
        listed = {t["table"]: t for t in (await bot.list_tables())}
        assert listed[joined.table]["bots"] == 3 and listed[joined.table]["humans"] == 0
        hands = 0
        while hands < 3:  # never sends next_hand
            msg = await bot.receive()
            if isinstance(msg, State) and msg.legal and msg is bot.last_state:
                await bot.move(msg.legal[-1])
            elif isinstance(msg, HandResult):
                hands += 1


@capped
async def test_leaving_mid_match_resigns_and_the_seat_keeps_its_chips(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """``leave`` during the match: a bot stands in for the rest of it, and the ledger keeps
    the seat's chips (the stand-in plays on with them) to ``match_over``."""
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        joined = await ana.request({"type": "create_table", "name": "Resign", "bots": 1,
                                    "hands": 2, "timer": 0})
        assert isinstance(joined, Joined)
        async with connect("Ben") as ben:
            await ben.join(joined.table)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(play_hands, ben, 1)
                first = (await play_hands(ana, 1))[0]
            seat = ben.seat
            assert seat is not None
            before = first.standings["chips"][seat]
            await ben.leave()
        update = await next_of(ana, SeatUpdate,
                               lambda u: u.change is not None and u.change["change"] == "stand_in")
        assert update.seats[seat]["stand_in"] is True
        await ana.next_hand()
        second = (await play_hands(ana, 1))[0]
        assert second.standings["chips"][seat] == before + second.result["chips"][seat]
        over = await next_of(ana, MatchOver)
        assert over.standings["chips"] == second.standings["chips"]
        assert over.standings["names"][seat] == "Ben"


@capped
async def test_capabilities_are_what_the_server_does_and_all_documented(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Every name ``welcome.capabilities`` can hold is a row of the table in docs/PROTOCOL.md
    and every row is one the server lists (``tls`` when it has a certificate: that one is shown
    by test_transport_tls); one ``bot:NAME`` per policy ``add_bot`` accepts."""
    documented = set(re.findall(r"^\| `([a-z_:A-Z]+)` \| 1\.[0-2] \|", PROTOCOL_DOC, re.MULTILINE))
    server = Server(quick_config(), MemoryJournal(), password="secret")
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))
        async with raw_connection(server, {"name": "Ana", "kind": "human",
                                           "password": "secret"}) as ana:
            assert ana.welcome is not None
            listed = ana.welcome.capabilities
            policies = {name for name in listed if name.startswith("bot:")}
            assert policies == {f"bot:{name}" for name in bots.policy_names()}
            joined = await ana.request({"type": "create_table", "name": "Mine", "bots": 1,
                                        "private": True})
            assert isinstance(joined, Joined) and joined.invite  # invite_links is real
        nursery.cancel_scope.cancel()
    assert documented == (set(listed) - policies) | {"bot:NAME", "tls"}
    assert len(listed) == len(set(listed))
