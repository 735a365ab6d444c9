"""The rated ladder through the real server: accounts, the queue, rated matches, forfeits and
a restart in the middle of a match."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from server_support import capped, next_of, play_hands, quick_config, until
from tongits.client.connection import Connection, ServerError, connect_stream
from tongits.protocol import Join, Joined, MatchOver, ProtocolError
from tongits.server import Journal, MemoryJournal, Server
from tongits.server.admin import answer, format_status
from tongits.server.ladder.ladder import Ladder, ranks_of
from tongits.server.table.actor import Table
from tongits.server.table.requests import HostClose, SeatBot

Connect = Any


@asynccontextmanager
async def ladder_server(
    ladder: Ladder, journal: Journal | None = None, **changes: Any
) -> AsyncIterator[tuple[Server, Connect]]:
    """A server on in-memory streams with ``ladder``, two-hand matches, anchors random and
    greedy that fill a table after 5 s."""
    settings = {"ladder_hands": 2, "ladder_anchors": "random,greedy", "ladder_anchor_wait": 5.0,
                **changes}
    server = Server(quick_config(**settings), journal or MemoryJournal(), ladder=ladder)
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))

        def connect(name: str, **kw: Any) -> AbstractAsyncContextManager[Connection]:
            client, server_side = trio.testing.memory_stream_pair()
            nursery.start_soon(server.handle_stream, server_side, "memory")
            return connect_stream(client, name=name, **kw)

        yield server, connect
        nursery.cancel_scope.cancel()


async def _register(connect: Connect, *names: str) -> list[str]:
    async with connect("someone") as conn:
        return [(await conn.register(name)).key for name in names]


def _outcomes(ladder: Ladder) -> list[tuple[str, list[str], list[int]]]:
    return [(outcome, json.loads(seats), json.loads(forfeits)) for outcome, seats, forfeits in
            ladder.db.execute("SELECT outcome, seats, forfeits FROM matches ORDER BY id")]


@capped
async def test_accounts_register_once_and_log_in_by_key(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ladder = Ladder()
    async with ladder_server(ladder) as (_server, connect):
        (key,) = await _register(connect, "Ana")
        async with connect("someone") as conn:
            for taken in ("ana", "anchor-strong"):
                with pytest.raises(ServerError) as refused:
                    await conn.register(taken)
                assert refused.value.code == "name_taken"
            with pytest.raises(ServerError) as refused:
                await conn.queue()
            assert refused.value.code == "needs_account"
        async with connect("whatever", account=key) as conn:
            page = await conn.standings()
        assert {p["name"] for p in page.players} == {"Ana", "anchor-random", "anchor-greedy"}
        with pytest.raises(ServerError) as refused:
            async with connect("Ana", account=key + "x"):
                pass
        assert refused.value.code == "bad_account"


@capped
async def test_three_queued_players_play_a_rated_match_ranked_by_chips(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ladder = Ladder()
    async with ladder_server(ladder) as (_server, connect):
        keys = await _register(connect, "Ana", "Ben", "Cai")
        finals: dict[str, Any] = {}

        async def play(name: str, key: str) -> None:
            async with connect(name, account=key) as conn:
                await conn.queue()
                joined = await next_of(conn, Joined)
                assert joined.token
                await play_hands(conn, 2)
                over = await next_of(conn, MatchOver)
                assert over.forfeits is None  # nobody forfeited: the field is absent
                finals[name] = over.standings

        async with trio.open_nursery() as nursery:
            for name, key in zip(("Ana", "Ben", "Cai"), keys, strict=True):
                nursery.start_soon(play, name, key)
    standings = finals["Ana"]
    assert sorted(standings["names"]) == ["Ana", "Ben", "Cai"]
    ranks = ranks_of(standings["chips"], ())
    mus = [ladder.account(name).mu for name in standings["names"]]
    for a in range(3):
        for b in range(3):
            if ranks[a] < ranks[b]:
                assert mus[a] > mus[b]
    assert all(ladder.account(n).matches == 1 for n in ("Ana", "Ben", "Cai"))
    assert ladder.account("anchor-greedy").matches == 0
    assert _outcomes(ladder) == [("rated", standings["names"], [])]


@capped
async def test_a_lone_player_gets_anchors_after_waiting(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ladder = Ladder()
    async with ladder_server(ladder) as (_server, connect):
        (key,) = await _register(connect, "Ana")
        async with connect("Ana", account=key) as conn:
            await conn.queue()
            queued_at = trio.current_time()
            await next_of(conn, Joined)
            assert trio.current_time() - queued_at >= 5.0
            await play_hands(conn, 2)
            await next_of(conn, MatchOver)
            page = await conn.standings()
    assert {p["name"]: p["matches"] for p in page.players} == {
        "Ana": 1, "anchor-random": 1, "anchor-greedy": 1}
    assert [p["rank"] for p in page.players] == [1, 2, 3]
    ratings = [p["rating"] for p in page.players]
    assert ratings == sorted(ratings, reverse=True)


@capped
async def test_a_player_dropped_past_the_grace_forfeits_and_is_rated_last(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ladder = Ladder()
    async with ladder_server(ladder, grace=5.0) as (_server, connect):
        keys = await _register(connect, "Ana", "Ben", "Cai")
        done = trio.Event()

        async def play(name: str, key: str) -> None:
            async with connect(name, account=key) as conn:
                await conn.queue()
                await next_of(conn, Joined)
                if name == "Cai":
                    return  # gone before the first move, never back
                await play_hands(conn, 2)
                over = await next_of(conn, MatchOver)
                assert over.forfeits is not None
                assert [over.standings["names"][s] for s in over.forfeits] == ["Cai"]
                done.set()

        async with trio.open_nursery() as nursery:
            for name, key in zip(("Ana", "Ben", "Cai"), keys, strict=True):
                nursery.start_soon(play, name, key)
    assert done.is_set()
    ((outcome, seats, forfeits),) = _outcomes(ladder)
    assert outcome == "rated" and [seats[s] for s in forfeits] == ["Cai"]
    cai = ladder.account("Cai").mu
    assert cai < 25.0
    assert cai < min(ladder.account("Ana").mu, ladder.account("Ben").mu)


@capped
async def test_a_player_who_leaves_mid_match_forfeits_and_the_match_is_rated_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Ana leaves her match with two anchors after its first hand: nobody is left to keep the
    table open, so it closes early, and the match is rated with Ana last and the anchors by
    the chips they had."""
    ladder = Ladder()
    async with ladder_server(ladder, ladder_hands=5) as (server, connect):
        (key,) = await _register(connect, "Ana")
        async with connect("Ana", account=key) as conn:
            await conn.queue()
            joined = await next_of(conn, Joined)
            (first,) = await play_hands(conn, 1)
            await conn.leave()
            await until(lambda: joined.table not in server.lobby.tables)
    ((outcome, seats, forfeits),) = _outcomes(ladder)
    assert outcome == "rated" and [seats[s] for s in forfeits] == ["Ana"]
    after = {name: ladder.account(name) for name in seats}
    assert after["Ana"].mu < min(a.mu for n, a in after.items() if n != "Ana")
    assert all(a.matches == 1 for a in after.values())
    anchors = [s for s in range(3) if seats[s] != "Ana"]
    chips = first.standings["chips"]
    if chips[anchors[0]] != chips[anchors[1]]:
        better, worse = sorted(anchors, key=lambda s: -chips[s])
        assert after[seats[better]].mu > after[seats[worse]].mu


@capped
async def test_a_match_that_ends_early_with_no_forfeit_is_void(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ladder = Ladder()
    async with ladder_server(ladder) as (server, connect):
        (key,) = await _register(connect, "Ana")
        async with connect("Ana", account=key) as conn:
            await conn.queue()
            joined = await next_of(conn, Joined)
            await server.lobby.get(joined.table).call(None, HostClose())
    assert [o for o, _, _ in _outcomes(ladder)] == ["void"]
    assert ladder.account("Ana").matches == 0 and ladder.account("Ana").mu == 25.0


@capped
async def test_a_restart_mid_match_loses_no_rating(
    autojump_clock: trio.testing.MockClock, tmp_path: Path,
) -> None:
    path = str(tmp_path / "ladder.db")
    journal = MemoryJournal()
    first = Ladder(path, worker=False)  # the virtual clock would run on while a thread works
    tokens: dict[str, tuple[str, int | None]] = {}
    async with ladder_server(first, journal, grace=600.0) as (_server, connect):
        (key,) = await _register(connect, "Ana")
        async with connect("Ana", account=key) as conn:  # a first match, rated
            await conn.queue()
            await next_of(conn, Joined)
            await play_hands(conn, 2)
            await next_of(conn, MatchOver)
        rated = first.account("Ana")
        async with connect("Ana", account=key) as conn:  # a second one, one hand played
            await conn.queue()
            await next_of(conn, Joined)
            await play_hands(conn, 1)
            assert conn.token is not None
            tokens["Ana"] = (conn.token, conn.seq)
    first.close()
    second = Ladder(path, worker=False)
    assert second.account("Ana") == rated
    assert len(second.pending) == 1
    async with ladder_server(second, journal, grace=600.0) as (_server, connect):
        token, seq = tokens["Ana"]
        async with connect("Ana", token=token, seq=seq, account=key) as conn:
            await conn.next_hand()  # the first hand's result was seen before the restart
            await play_hands(conn, 1)
            over = await next_of(conn, MatchOver)
    assert over.standings["hands"] == 2
    assert second.account("Ana").matches == rated.matches + 1 == 2
    assert [o for o, _, _ in _outcomes(second)] == ["rated", "rated"]


@pytest.mark.parametrize(
    ("chips", "forfeits", "ranks"),
    [
        ([5, -2, -3], [], [1, 2, 3]),
        ([0, 4, -4], [], [2, 1, 3]),
        ([2, 2, -4], [], [1, 1, 3]),
        ([9, -4, -5], [0], [3, 1, 2]),
        ([9, -4, -5], [0, 2], [2, 1, 2]),
    ],
)
def test_ranks_put_forfeits_last_and_share_ties(
    chips: list[int], forfeits: list[int], ranks: list[int]
) -> None:
    assert ranks_of(chips, forfeits) == ranks


def _seat_slowly(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """The matchmaker seats in queue order (no shuffle), a second between two seats, so a
    client that was told ``joined`` can leave before the next seat is filled."""
    monkeypatch.setattr(server.matchmaker._rng, "shuffle", lambda members: None)
    call = Table.call

    async def slow_call(self: Table, peer: Any, msg: Any) -> None:
        if isinstance(msg, (Join, SeatBot)):
            await trio.sleep(1.0)
        await call(self, peer, msg)

    monkeypatch.setattr(Table, "call", slow_call)


async def _queue_three(connect: Connect, keys: list[str], leaver: str,
                       finals: dict[str, Any]) -> None:
    """Ana, Ben and Cai queue in that order; ``leaver`` leaves as soon as it is seated, the
    others play their match to its end."""

    async def play(name: str, key: str) -> None:
        async with connect(name, account=key) as conn:
            await conn.queue()
            await next_of(conn, Joined)
            if name == leaver:
                await conn.leave()
                return
            await play_hands(conn, 2)
            finals[name] = (await next_of(conn, MatchOver)).standings

    async with trio.open_nursery() as nursery:
        for name, key in zip(("Ana", "Ben", "Cai"), keys, strict=True):
            nursery.start_soon(play, name, key)
            await trio.sleep(0.1)


@capped
async def test_a_matched_player_who_leaves_before_the_deal_forfeits_and_a_bot_sits_in(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ben leaves between his seat and Cai's: the table, whose seats nobody else can take,
    does not wait for him; a bot sits in his seat and Ana and Cai play the match."""
    ladder = Ladder()
    async with ladder_server(ladder) as (server, connect):
        _seat_slowly(server, monkeypatch)
        keys = await _register(connect, "Ana", "Ben", "Cai")
        finals: dict[str, Any] = {}
        await _queue_three(connect, keys, "Ben", finals)
    assert set(finals) == {"Ana", "Cai"}
    assert finals["Ana"]["names"] == ["Ana", "Ben", "Cai"]
    ((outcome, seats, forfeits),) = _outcomes(ladder)
    assert outcome == "rated" and [seats[s] for s in forfeits] == ["Ben"]
    assert ladder.account("Ben").mu < min(ladder.account(n).mu for n in ("Ana", "Cai"))


@capped
async def test_when_the_first_seated_player_leaves_before_the_deal_the_others_queue_again(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ana leaves before anyone else is seated: her table closes (nobody is left at it), its
    match is void, and Ben and Cai, never seated there, are matched again."""
    ladder = Ladder()
    async with ladder_server(ladder) as (server, connect):
        _seat_slowly(server, monkeypatch)
        keys = await _register(connect, "Ana", "Ben", "Cai")
        finals: dict[str, Any] = {}
        await _queue_three(connect, keys, "Ana", finals)
    assert set(finals) == {"Ben", "Cai"}
    (void, _, _), (outcome, seats, forfeits) = _outcomes(ladder)
    assert void == "void"
    assert outcome == "rated" and "Ana" not in seats and forfeits == []
    assert ladder.account("Ana").matches == 0


@capped
async def test_a_lone_player_who_leaves_before_its_anchors_sit_may_queue_again(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ana leaves her table before the anchors are seated: it closes, its match is void, and
    she is not held as playing it."""
    ladder = Ladder()
    async with ladder_server(ladder) as (server, connect):
        _seat_slowly(server, monkeypatch)
        (key,) = await _register(connect, "Ana")
        async with connect("Ana", account=key) as conn:
            await conn.queue()
            left = await next_of(conn, Joined)
            await conn.leave()
            await until(lambda: left.table not in server.lobby.tables)
            await conn.queue()
            assert (await next_of(conn, Joined)).table != left.table
    assert [outcome for outcome, _, _ in _outcomes(ladder)] == ["void", None]
    assert ladder.account("Ana").matches == 0


@capped
async def test_a_player_told_match_over_may_queue_at_once(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table lets its players go and rates its match in the step that ends it, before
    ``match_over`` leaves: a ``queue`` sent the moment it arrives is accepted even when the
    table's own task is slow to wind up (here three seconds late, as a busy server may be),
    and the match it queues for is formed after the last one was rated."""
    run = Table.run

    async def late(self: Table) -> None:
        close, ended = self._close, []
        self._close = lambda *, for_good: ended.append(for_good)  # type: ignore[method-assign]
        await run(self)
        if ended == [True]:
            await trio.sleep(3.0)
        close(for_good=ended[0])

    monkeypatch.setattr(Table, "run", late)
    ladder = Ladder()
    async with ladder_server(ladder, ladder_hands=1, ladder_anchor_wait=0.0) as (_s, connect):
        (key,) = await _register(connect, "Ana")
        async with connect("Ana", account=key) as conn:
            await conn.queue()
            for played in range(1, 4):
                await next_of(conn, Joined)
                await play_hands(conn, 1)
                await next_of(conn, MatchOver)
                if played < 3:
                    await conn.queue()
                assert ladder.account("Ana").matches == played
    assert [o for o, _, _ in _outcomes(ladder)] == ["rated"] * 3


@capped
@pytest.mark.parametrize(("caps", "tables"), [
    ({"max_tables_per_address": 2}, 2),
    ({"max_tables": 1}, 1),
])
async def test_ladder_tables_count_against_the_server_and_address_caps(
    autojump_clock: trio.testing.MockClock, caps: dict[str, Any], tables: int,
) -> None:
    """Nine accounts queued from one address could fill three tables; the matchmaker opens
    only what the caps allow, and the others wait in the queue."""
    ladder = Ladder()
    async with ladder_server(ladder, ladder_anchor_wait=3600.0, **caps) as (server, connect):
        names = [f"p{i}" for i in range(9)]
        keys = await _register(connect, *names)
        async with contextlib.AsyncExitStack() as stack:
            for name, key in zip(names, keys, strict=True):
                conn = await stack.enter_async_context(connect(name, account=key))
                await conn.queue()
            await trio.sleep(10.0)
            assert len(server.lobby.tables) == tables
            assert len(server.matchmaker.queue) == 9 - 3 * tables


@pytest.mark.parametrize(("first", "second"), [
    ("Émile", "émile"), ("Straße", "STRASSE"), ("ＡＮＡ", "ana"), ("Ana", "ANA"),
])
def test_names_are_one_whatever_their_case_in_any_script(first: str, second: str) -> None:
    ladder = Ladder()
    ladder.register(first)
    with pytest.raises(ProtocolError) as taken:
        ladder.register(second)
    assert taken.value.code == "name_taken"


@pytest.mark.parametrize("name", [
    "anchor-expert", "ANCHOR-x", "\u0430nchor-expert", "ａｎｃｈｏｒ-expert",
    "anchor\u2010expert", "anch0r-strong", "anchor_greedy", "\u0391NCHOR-random",
])
def test_names_that_pass_for_an_anchor_are_refused(name: str) -> None:
    with pytest.raises(ProtocolError) as taken:
        Ladder().register(name)
    assert taken.value.code == "name_taken"


def test_names_near_an_anchor_but_not_passing_for_one_are_accepted() -> None:
    ladder = Ladder()
    for name in ("anchorman", "an-chor-x", "Anchovy-fan"):
        ladder.register(name)


def test_standings_pages_follow_the_ratings_as_they_change() -> None:
    """Pages, at any offset, list the accounts best rating first (then most matches, then
    name) as the ratings are now, after matches have moved them."""
    ladder = Ladder()
    names = [f"p{i:02d}" for i in range(30)]
    for name in names:
        ladder.register(name)
    rng = random.Random(3)
    for n in range(40):
        seats = rng.sample(names, 3)
        ladder.match_formed(f"t{n}", seats)
        ladder.table_ended(f"t{n}", [rng.randrange(-9, 10) for _ in range(3)], complete=True)
    pages = [a for offset in range(0, 30, 7) for a in ladder.standings(offset, 7)[0]]
    expected = sorted((ladder.account(n) for n in names),
                      key=lambda a: (-a.rating, -a.matches, a.name.casefold()))
    assert pages == expected
    assert ladder.standings(0, 100)[1] == 30


@capped
async def test_an_address_makes_a_few_accounts_an_hour_and_the_server_a_bounded_number(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Every connection of one address shares its allowance (a new connection gets no new
    one); it refills over the hour. The server-wide cap refuses everyone, with its reason."""
    ladder = Ladder()
    async with ladder_server(ladder, ladder_accounts_per_address=3, ladder_anchors="random",
                             ladder_max_accounts=6) as (_server, connect):
        for n in range(3):
            async with connect("someone") as conn:
                await conn.register(f"p{n}")
        async with connect("someone") as conn:
            with pytest.raises(ServerError) as refused:
                await conn.register("p3")
        assert refused.value.code == "too_many_accounts" and "this hour" in refused.value.message
        await trio.sleep(3600.0)
        async with connect("someone") as conn:
            await conn.register("p3")
            await conn.register("p4")  # an hour later, the bucket has refilled
            with pytest.raises(ServerError) as full:
                await conn.register("p5")
        assert full.value.code == "too_many_accounts" and "holds its 6" in full.value.message
    assert ladder.accounts == 6


@capped
async def test_ladder_tables_are_not_in_the_lobby(autojump_clock: trio.testing.MockClock) -> None:
    """A ladder table is its three accounts' own: ``list_tables`` neither lists it nor finds it
    by its id, while a lobby table is listed beside it."""
    ladder = Ladder()
    async with ladder_server(ladder, ladder_anchor_wait=0.0, grace=600.0) as (_server, connect):
        (key,) = await _register(connect, "Ana")
        async with connect("Ana", account=key) as conn:
            await conn.queue()
            joined = await next_of(conn, Joined)
            async with connect("Bo") as bo:
                assert await bo.list_tables() == []
                assert await bo.list_tables(table=joined.table) == []
                await bo.create_table("Bo's", bots=1)
                async with connect("Cy") as cy:
                    assert [t["name"] for t in await cy.list_tables()] == ["Bo's"]


@capped
async def test_the_hosts_status_tells_the_ladder(
    autojump_clock: trio.testing.MockClock, tmp_path: Path,
) -> None:
    """``tongits-server status`` said nothing of the ladder: a host whose bots played there an
    hour could not see whether anyone was queued or how many matches were rated without
    opening the ladder's database."""
    path = str(tmp_path / "tongits.ladder.db")
    ladder = Ladder(path, worker=False)  # the virtual clock would run on while a thread works
    async with ladder_server(ladder) as (server, connect):
        keys = await _register(connect, "Ana", "Ben", "Cai")
        status = await answer(server, {"command": "status"})
        assert status["ladder"] == {"accounts": 5, "anchors": 2, "queued": 0, "rated": 0,
                                    "playing": 0}
        during: list[dict[str, int]] = []

        async def play(name: str, key: str) -> None:
            async with connect(name, account=key) as conn:
                await conn.queue()
                await next_of(conn, Joined)
                during.append((await answer(server, {"command": "status"}))["ladder"])
                await play_hands(conn, 2)
                await next_of(conn, MatchOver)

        async with connect("Ana", account=keys[0]) as conn:
            await conn.queue()
            assert (await answer(server, {"command": "status"}))["ladder"]["queued"] == 1
        await until(lambda: not server.matchmaker.queue)
        async with trio.open_nursery() as nursery:
            for name, key in zip(("Ana", "Ben", "Cai"), keys, strict=True):
                nursery.start_soon(play, name, key)
        assert {d["playing"] for d in during} == {1}
        status = await answer(server, {"command": "status"})
        assert status["ladder"] == {"accounts": 5, "anchors": 2, "queued": 0, "rated": 1,
                                    "playing": 0}
        assert "\nladder     5 accounts (2 anchors) · 0 queued · 1 match rated · 0 in progress\n" \
            in format_status(status)
    ladder.close()
    assert Ladder(path, worker=False).rated == 1  # counted again after a restart, from the accounts
