"""Requests within the limits must not starve everyone else (issue #16, items 3, 4, 5, 7): tables
per address and abandoned tables, the lobby list, the outgoing queue in bytes, join codes."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import pytest
import trio
import trio.testing
from server_support import HELLO, capped, frame, memory_server, next_of, until
from tongits.client.connection import Connection, ServerError
from tongits.protocol import ChatLine, Codec, ListTables, Mode, Tables, encode_value, to_dict
from tongits.server import actor
from tongits.server.app import address_key
from tongits.server.lobby import JOIN_CODE_ALPHABET


@capped
async def test_one_address_cannot_fill_the_server_with_abandoned_tables(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Item 3: create, disconnect, repeat from one address filled ``max_tables`` for everyone
    for the whole grace period. Now an address holds ``max_tables_per_address`` open tables,
    and a table abandoned before its match closes after ``pregame_grace``."""
    async with memory_server(max_tables=10, max_tables_per_address=2, grace=600.0,
                             pregame_grace=5.0) as (server, connect):
        for port in (1, 2):
            async with connect(f"A{port}", address=f"10.0.0.1:{port}") as attacker:
                await attacker.create_table(f"Spam {port}", auto_start=False)
        async with connect("A3", address="10.0.0.1:3") as attacker:
            with pytest.raises(ServerError) as refused:
                await attacker.create_table("Spam 3", auto_start=False)
            assert refused.value.code == "too_many_tables"
            async with connect("Honest", address="10.0.0.2:1") as honest:
                mine = await honest.create_table("Mine", bots=2)
            await trio.sleep(5.5)  # the abandoned tables are gone, not after 600 s
            assert list(server.lobby.tables) == [mine.table]  # its match goes on
            await attacker.create_table("Spam 3", auto_start=False)


@capped
async def test_a_table_with_a_match_keeps_the_long_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(grace=60.0, pregame_grace=5.0) as (server, connect):
        async with connect("Ana") as ana:
            joined = await ana.create_table("Playing", bots=2, timer=0)
        await trio.sleep(30)
        assert joined.table in server.lobby.tables


def test_ipv6_addresses_count_by_their_64() -> None:
    assert address_key("2001:db8:0:1::5") == address_key("2001:db8:0:1:ffff::9")
    assert address_key("2001:db8:0:1::5") != address_key("2001:db8:0:2::5")
    assert address_key("10.0.0.1") == "10.0.0.1" != address_key("10.0.0.2")
    assert address_key("::ffff:10.0.0.1") == "10.0.0.1"


@capped
async def test_the_outgoing_queue_is_capped_in_bytes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Item 5: a never-reading connection was dropped only after 256 queued messages, whatever
    their size (~220 MB of lobby lists). It is dropped once ``queue_bytes`` are queued."""
    async with (
        memory_server(queue_size=256, queue_bytes=16 * 1024) as (server, connect),
        connect("Ana") as ana,
    ):
        joined = await ana.create_table("Chatty", bots=2, timer=0)
        client, server_side = trio.testing.lockstep_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.handle_stream, server_side, "memory")
            await client.send_all(frame(HELLO) + frame(
                {"type": "spectate", "id": 1, "table": joined.table}))
            await until(lambda: any(p.name == "fuzz" and p.table for p in server.peers))
            deaf = next(p for p in server.peers if p.name == "fuzz")
            for n in range(120):  # 120 lines of ~300 bytes: far below 256 messages
                await ana.chat(f"{n:03} " + "x" * 190)
                await next_of(ana, ChatLine)
            assert deaf.closed and deaf not in server.peers
            nursery.cancel_scope.cancel()


@capped
async def test_join_codes_cannot_be_enumerated(autojump_clock: trio.testing.MockClock) -> None:
    """Item 7: codes were 6 hex digits (24 bits, 3,600 s at 4,671 guesses/s). Now 10 letters
    of 31 (49 bits); a wrong code is refused, the right one admits."""
    async with memory_server() as (_server, connect), connect("Ana") as ana, connect("Ben") as ben:
        codes = set()
        for n in range(3):
            joined = await ana.create_table(f"Secret {n}", private=True, auto_start=False)
            assert joined.code is not None
            assert len(joined.code) == 10 and set(joined.code) <= set(JOIN_CODE_ALPHABET)
            codes.add(joined.code)
            if n < 2:
                await ana.leave()
        assert len(codes) == 3
        assert len(JOIN_CODE_ALPHABET) ** 10 >= 2**49
        with pytest.raises(ServerError) as refused:
            await ben.join(joined.table, code="2" * 10)
        assert refused.value.code == "bad_join_code"
        await ben.join(joined.table, code=joined.code)


async def _page(conn: Connection, **fields: Any) -> Tables:
    reply = await conn.request(ListTables(**fields))
    assert isinstance(reply, Tables)
    return reply


@capped
async def test_the_lobby_is_paged_and_no_reply_exceeds_the_frame_limit(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Item 4: one ``tables`` reply held every table (850 KB with 2,000), past the 65,536 bytes
    the server itself accepts. Now a page holds at most 50 entries and never more bytes than
    ``max_frame_size``; ``next`` walks every table once, joinable ones first; an entry is
    encoded once per change of its table, not once per request."""
    encoded: list[Any] = []
    original = encode_value

    def counting(value: Any, mode: Mode) -> bytes:
        encoded.append(value["table"])
        return original(value, mode)

    monkeypatch.setattr(actor, "encode_value", counting)  # what the lobby entries use
    limit = 4096
    async with (
        memory_server(max_frame_size=limit, max_tables_per_address=60) as (_server, connect),
        AsyncExitStack() as stack,
    ):
        owners = []
        for n in range(60):
            conn = await stack.enter_async_context(connect(f"Owner {n}"))
            started = n % 3 == 0
            await conn.create_table(f"Table number {n:02}", bots=2 if started else 0,
                                    timer=0, auto_start=started)
            owners.append(conn)
        lister = await stack.enter_async_context(connect("Lister", text=True))
        seen: list[str] = []
        sizes: list[int] = []
        offset: int | None = 0
        while offset is not None:
            page = await _page(lister, offset=offset)
            assert page.total == 60 and page.offset == offset
            sizes.append(len(Codec(Mode.TEXT).encode(to_dict(page))) - 1)
            seen += [t["table"] for t in page.tables]
            offset = page.next
        assert sorted(seen, key=lambda t: int(t[1:])) == [f"t{n}" for n in range(1, 61)]
        assert len(seen) == 60 and max(sizes) <= limit and len(sizes) > 3
        joinable = [t for t in seen if (int(t[1:]) - 1) % 3 != 0]
        assert seen[:40] == joinable  # joinable tables first, oldest first
        open_only = await _page(lister, open=True, limit=5)
        assert [t["table"] for t in open_only.tables] == joinable[:5]
        assert open_only.total == 40 and open_only.next == 5
        assert all(not t["started"] and t["players"] < 3 for t in open_only.tables)
        for bad in ({"offset": -1}, {"limit": 0}):
            with pytest.raises(ServerError) as refused:
                await _page(lister, **bad)
            assert refused.value.code == "bad_field"

        encoded.clear()
        await _page(lister, open=True, limit=5)
        await _page(lister, open=True, limit=5)
        assert encoded == []  # nothing changed: nothing encoded again
        await owners[1].request({"type": "sync"})  # a step of t2: encoded anew
        await _page(lister, open=True, limit=5)
        assert encoded == ["t2"]
