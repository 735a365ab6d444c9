"""Every lobby path: handshake, list, create, join, spectate, leave, bots, start, resume, chat."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from server_support import capped, memory_server, next_of, play_hands
from tongits.client.connection import ConnectionClosed, ServerError
from tongits.protocol import ChatLine, HandResult, SeatUpdate, State

pytestmark = pytest.mark.usefixtures("autojump_clock")


@capped
async def test_second_hello_is_refused() -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        with pytest.raises(ServerError) as again:
            await ana.hello("Ana")
        assert again.value.code == "bad_field"
        await ana.ping()


@capped
async def test_hello_required_bad_name_bad_version_bad_token() -> None:
    from tongits.client.connection import Connection

    async with memory_server() as (server, _connect):
        async def raw(first: dict[str, object]) -> str:
            client, server_side = trio.testing.memory_stream_pair()
            conn = Connection(client)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(server.handle_stream, server_side)
                nursery.start_soon(conn.run_reader)
                try:
                    await conn.request(first)
                except ServerError as exc:
                    return exc.code
                finally:
                    await conn.aclose()
            return "no error"

        assert await raw({"type": "list_tables"}) == "hello_required"
        hello = {"type": "hello", "version": 1, "kind": "human"}
        assert await raw({**hello, "name": "  "}) == "bad_name"
        assert await raw({**hello, "name": "x" * 100}) == "bad_name"
        # print as nothing: a Hangul filler, one after a name (another 'Ana' to the eye), the
        # blank Braille pattern, an accent over nothing
        for blank in ("\u3164", "Ana\u3164", "\u2800\u2800", "\u0301"):
            assert await raw({**hello, "name": blank}) == "bad_name", repr(blank)
        assert await raw({**hello, "name": "Zoë ＡＮＡ 😀"}) == "no error"
        assert await raw({**hello, "name": "Ana", "version": 99}) == "version_unsupported"
        assert await raw({**hello, "name": "Ana", "token": "forged"}) == "bad_token"


@capped
async def test_create_join_list_and_seat_errors() -> None:
    async with (
        memory_server() as (_server, connect),
        connect("Ana") as ana, connect("Ben") as ben, connect("Cai") as cai,
    ):
        assert await ana.list_tables() == []
        joined = await ana.create_table("Friday", options={"ante": 2}, timer=15)
        (entry,) = await ben.list_tables()
        assert entry["name"] == "Friday" and entry["players"] == 1 and not entry["private"]
        assert entry["options"]["ante"] == 2 and entry["timer"] == 15
        assert entry["seats"][0]["owner"] is True
        with pytest.raises(ServerError) as taken:
            await ben.join(joined.table, seat=0)
        assert taken.value.code == "seat_taken"
        with pytest.raises(ServerError) as bad_seat:
            await ben.join(joined.table, seat=5)
        assert bad_seat.value.code == "bad_field"
        with pytest.raises(ServerError) as nowhere:
            await ben.join("t999")
        assert nowhere.value.code == "no_such_table"
        assert (await ben.join(joined.table, seat=2)).seat == 2
        with pytest.raises(ServerError) as twice:
            await ben.join(joined.table)
        assert twice.value.code == "already_seated"
        with pytest.raises(ServerError) as create_twice:
            await ben.create_table("Other")
        assert create_twice.value.code == "already_seated"
        update = await next_of(ana, SeatUpdate, lambda u: u.seats[2]["player"] == "human")
        assert update.seats[2]["name"] == "Ben"
        assert (await cai.join(joined.table)).seat == 1
        await next_of(ana, State)
        (entry,) = await ana.list_tables()
        assert entry["started"] and entry["players"] == 3
        async with connect("Dee") as dee:
            with pytest.raises(ServerError) as full:
                await dee.join(joined.table)
            assert full.value.code == "table_started"


@capped
async def test_bad_create_requests() -> None:
    async with (
        memory_server(max_tables=1) as (_server, connect),
        connect("Ana") as ana, connect("Ben") as ben,
    ):
        cases: list[tuple[dict[str, Any], str]] = [
            ({"options": {"scoring": "golf"}}, "bad_options"),
            ({"options": {"nope": True}}, "bad_options"),
            ({"bots": 3}, "bad_options"),
            ({"timer": -1}, "bad_options"),
        ]
        for kwargs, code in cases:
            with pytest.raises(ServerError) as exc:
                await ana.create_table("T", **kwargs)
            assert exc.value.code == code
        with pytest.raises(ServerError) as name:
            await ana.create_table("\x07bell")
        assert name.value.code == "bad_name"
        await ana.create_table("T")
        with pytest.raises(ServerError) as many:
            await ben.create_table("U")
        assert many.value.code == "too_many_tables"


@capped
async def test_private_table_needs_its_code() -> None:
    async with (
        memory_server() as (_server, connect),
        connect("Ana") as ana, connect("Ben") as ben, connect("Eve") as eve,
    ):
        joined = await ana.create_table("Secret", private=True)
        assert joined.code
        (entry,) = await eve.list_tables()
        assert entry["private"] is True and "code" not in entry
        for attempt in (None, "000000"):
            with pytest.raises(ServerError) as exc:
                await eve.join(joined.table, code=attempt)
            assert exc.value.code == "bad_join_code"
            with pytest.raises(ServerError) as watch:
                await eve.spectate(joined.table, code=attempt)
            assert watch.value.code == "bad_join_code"
        assert (await ben.join(joined.table, code=joined.code)).seat == 1


@capped
async def test_bots_owner_and_manual_start() -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana, connect("Ben") as ben:
        joined = await ana.create_table("Manual", auto_start=False)
        await ben.join(joined.table)
        for call, code in [
            (ben.add_bot(2), "not_table_owner"),
            (ana.add_bot(1), "seat_taken"),
            (ana.add_bot(2, policy="nonsense"), "bad_options"),
            (ana.remove_bot(2), "bad_field"),
            (ana.start(), "not_ready"),
            (ben.start(), "not_table_owner"),
            (ana.next_hand(), "not_ready"),
            (ana.move({"action": "draw"}), "not_ready"),
        ]:
            with pytest.raises(ServerError) as exc:
                await call
            assert exc.value.code == code
        await ana.add_bot(2, policy="random")
        update = await next_of(ana, SeatUpdate, lambda u: u.seats[2]["player"] == "bot")
        assert update.seats[2]["policy"] == "random"
        await ana.remove_bot(2)
        await next_of(ana, SeatUpdate, lambda u: u.seats[2]["player"] is None)
        await ana.add_bot(2)
        await ana.start()
        with pytest.raises(ServerError) as again:
            await ana.start()
        assert again.value.code == "table_started"
        with pytest.raises(ServerError) as late:
            await ana.remove_bot(2)
        assert late.value.code == "table_started"
        state = await next_of(ben, State)
        assert state.seats[2]["player"] == "bot"


@capped
async def test_while_the_creator_is_away_the_lowest_connected_human_owns_the_table() -> None:
    """docs/PROTOCOL.md (``owner``): the creator owns the table; while the creator is
    disconnected, the connected human in the lowest seat does, so a table whose creator
    dropped is not stuck without a ``start``. The creator back owns it again."""
    async with memory_server() as (_server, connect), connect("Ben") as ben:
        async with connect("Ana") as ana:
            joined = await ana.create_table("Owners", auto_start=False)
            await ben.join(joined.table, seat=2)
            with pytest.raises(ServerError) as exc:
                await ben.add_bot(1)
            assert exc.value.code == "not_table_owner"
            token = ana.token
        update = await next_of(ben, SeatUpdate, lambda u: u.seats[0].get("away", False))
        assert update.seats[2].get("owner") is True and "owner" not in update.seats[0]
        await ben.add_bot(1)
        async with connect("Ana", token=token) as ana:
            update = await next_of(ben, SeatUpdate, lambda u: not u.seats[0].get("away"))
            assert update.seats[0].get("owner") is True and "owner" not in update.seats[2]
            with pytest.raises(ServerError) as exc:
                await ben.start()
            assert exc.value.code == "not_table_owner"
            await ana.start()


@capped
async def test_leave_before_and_during_the_match() -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana, connect("Ben") as ben:
        joined = await ana.create_table("Leavers", bots=1, auto_start=False)
        await ben.join(joined.table)
        await ben.leave()
        (entry,) = await ana.list_tables()
        assert entry["seats"][2]["player"] is None and not entry["started"]
        with pytest.raises(ServerError) as exc:
            await ben.leave()
        assert exc.value.code == "not_seated"
        await ben.join(joined.table)
        await ana.start()
        await next_of(ben, State)
        await ben.leave()
        update = await next_of(ana, SeatUpdate, lambda u: u.seats[2].get("stand_in", False))
        assert update.seats[2]["player"] == "bot"
        results = await play_hands(ana, 1)
        assert results[0].standings["hands"] == 1
        await ana.leave()
        assert await ben.list_tables() == []


@capped
async def test_spectator_sees_public_view_and_chat() -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana, connect("Sam") as sam:
        joined = await ana.create_table("Show", bots=2, auto_start=False)
        watched = await sam.spectate(joined.table)
        assert watched.spectator and watched.seat is None and watched.token is None
        await ana.chat("  hello there ")
        line = await next_of(sam, ChatLine)
        assert (line.name, line.seat, line.text) == ("Ana", 0, "hello there")
        await sam.chat("nice")
        line = await next_of(ana, ChatLine, lambda c: c.seat is None)
        assert line.name == "Sam"
        for text, code in [("x" * 500, "chat_too_long"), ("a\x1b[2Jb", "bad_field"),
                           ("   ", "bad_field")]:
            with pytest.raises(ServerError) as exc:
                await ana.chat(text)
            assert exc.value.code == code
        await ana.start()
        first = await next_of(sam, State)
        assert first.view["seat"] is None and first.view["hand"] == [] and not first.legal
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_hands, ana, 1)
            while True:
                msg = await sam.receive()
                if isinstance(msg, HandResult):
                    break
                if isinstance(msg, State) and msg.view["phase"] != "over":
                    assert msg.view["hand"] == [] and not msg.legal
                    for meld in msg.view["melds"]:
                        if meld["secret"]:
                            assert meld["cards"] is None
                if isinstance(msg, State) and msg.event and msg.event["action"] == "secret":
                    assert "cards" in msg.event or msg.view["phase"] != "over"
        await sam.leave()


@capped
async def test_who_arrives_later_reads_what_was_said_before() -> None:
    """A spectator who arrives late, a friend back with its token and a player who sits down
    read the table's recent talk, marked ``earlier``, after their state; each line is numbered
    at its table, and only the last ``KEPT`` are kept (no chat pace: Ana says them at once)."""
    from tongits.server.table.chat import KEPT

    async with memory_server(chat_rate=0) as (_server, connect), connect("Ana") as ana, \
            connect("Ben") as ben:
        joined = await ana.create_table("Talk", bots=1, auto_start=False)
        for n in range(KEPT + 2):
            await ana.chat(f"line {n}")
        said = [await next_of(ana, ChatLine) for _ in range(KEPT + 2)]
        assert [line.n for line in said] == list(range(1, KEPT + 3))
        assert all(line.earlier is None for line in said)
        await ben.join(joined.table)
        told = [await next_of(ben, ChatLine) for _ in range(KEPT)]
        assert [(line.n, line.text, line.earlier) for line in told] == [
            (n + 1, f"line {n}", True) for n in range(2, KEPT + 2)]
        await ben.chat("hi all")
        assert (await next_of(ana, ChatLine)).n == KEPT + 3
        await ana.start()
        await next_of(ben, State)
        token = ben.token
        assert token is not None
        async with connect("Sam") as sam:
            await sam.spectate(joined.table)
            assert isinstance(await sam.receive(), State)
            first = await sam.receive()
            assert isinstance(first, ChatLine) and first.earlier and first.text == "line 3"
        async with connect("Ben", token=token) as back:
            await next_of(back, State)
            told = [await next_of(back, ChatLine) for _ in range(KEPT)]
            assert told[-1].text == "hi all" and all(line.earlier for line in told)


@capped
async def test_resume_with_token_replaces_the_old_connection() -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana, connect("Ben") as ben:
        joined = await ana.create_table("Resume", bots=1)
        await ben.join(joined.table)
        token = ben.token
        assert token is not None
        async with connect("Ben", token=token) as ben2:
            again = await next_of(ben2, State)
            assert again.view["seat"] == 2
            assert ben2.seat == 2 and ben2.table == joined.table
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await ben.receive()
            assert closed.value.error is not None
            assert closed.value.error.code == "replaced"
            update = await next_of(
                ana, SeatUpdate, lambda u: u.seats[2].get("connected", False)
            )
            assert update.seats[2]["name"] == "Ben"


@capped
async def test_requests_outside_a_table() -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        await ana.ping()
        for call in (ana.chat("hi"), ana.move({"action": "draw"}), ana.next_hand(),
                     ana.start(), ana.add_bot(1), ana.leave()):
            with pytest.raises(ServerError) as exc:
                await call
            assert exc.value.code == "not_seated"


@capped
async def test_list_tables_for_one_table_finds_it_past_the_first_page() -> None:
    """A client reads its own table's entry with ``table``, one request however many tables
    the lobby holds (its first page holds 50)."""
    from tongits.protocol import CreateTable

    async with memory_server() as (server, connect), connect("Ana") as ana:
        for n in range(55):
            server.lobby.create(CreateTable(name=f"other {n}", auto_start=False))
        joined = await ana.create_table("Mine", hands=3)
        assert joined.table not in {t["table"] for t in await ana.list_tables()}
        (entry,) = await ana.list_tables(table=joined.table)
        assert entry["name"] == "Mine" and entry["match_length"]["hands"] == 3
        assert await ana.list_tables(table="t999") == []
        assert await ana.list_tables(table=joined.table, open=True) == [entry]


@capped
async def test_two_players_of_one_name_are_not_seated_at_one_table() -> None:
    """Two Anas at one table could not be told apart in its seats, log and results: the
    second is refused with ``name_taken`` whatever its case or width, and joins under
    another name; a bot's name is taken too. Other tables are free to have an Ana."""
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        friday = await ana.create_table("Friday", bots=1, auto_start=False)
        bot = f"{_server.config.bot_policy}-bot-1"
        for name in ("ana", "ＡＮＡ", " Ana ", bot.upper()):
            async with connect(name) as twin:
                with pytest.raises(ServerError) as refused:
                    await twin.join(friday.table)
                assert refused.value.code == "name_taken"
                assert refused.value.message.endswith("already sits here: pick another name")
                await twin.create_table("Saturday", bots=2)  # an Ana of her own table
        async with connect("Ana B") as other:
            assert (await other.join(friday.table)).seat == 2


@capped
async def test_one_address_cannot_flood_a_tables_chat() -> None:
    """Connections from one address share the table's chat bucket (``chat_burst`` lines, then
    ``chat_rate`` a second): sixty watchers of one stranger drowned a table's chat and slowed
    its moves. Another address chats on meanwhile, and the refused connection stays open."""
    stranger = "203.0.113.7"
    async with memory_server(chat_rate=1.0, chat_burst=3) as (_server, connect), \
            connect("Ana", address="198.51.100.2") as ana, \
            connect("Eve", address=stranger) as eve, connect("Mal", address=stranger) as mal:
        joined = await ana.create_table("Chatty", bots=2, auto_start=False)
        await eve.spectate(joined.table)
        await mal.spectate(joined.table)
        for speaker in (eve, mal, eve):
            await speaker.chat("spam")
        for speaker in (mal, eve):
            with pytest.raises(ServerError) as exc:
                await speaker.chat("spam")
            assert exc.value.code == "chat_too_fast"
        await ana.chat("still here")
        await trio.sleep(1.0)
        await mal.chat("one more")
        with pytest.raises(ServerError) as exc:
            await eve.chat("and another")
        assert exc.value.code == "chat_too_fast"
        said = [line.text for line in await lines_said(ana, 5)]
        assert said == ["spam", "spam", "spam", "still here", "one more"]


async def lines_said(client: Any, count: int) -> list[ChatLine]:
    """The next ``count`` chat lines ``client`` hears."""
    return [await next_of(client, ChatLine) for _ in range(count)]
