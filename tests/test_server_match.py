"""Whole matches through the real server: three TCP clients, and one client with two bots."""

from __future__ import annotations

import trio
from server_support import TIME_CAP, memory_server, play_hands, tcp_connect, tcp_server
from tongits.engine import hand_record
from tongits.protocol import HandResult, ServerMessage, State
from tongits.server import MemoryJournal, TableLogState


def _check_views(seat: int | None, seen: list[ServerMessage]) -> None:
    """Each state shows only this seat's cards and the seq grows by one per table change."""
    seqs = [m.seq for m in seen if isinstance(m, State | HandResult)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    for msg in seen:
        if isinstance(msg, State):
            view = msg.view
            assert view["seat"] == seat
            if view["phase"] != "over":
                assert "revealed" not in view
                expected = view["hand_sizes"][seat] if seat is not None else 0
                assert len(view["hand"]) == expected
            if msg.legal:
                assert view["to_act"] == seat


async def test_three_clients_play_a_match_over_tcp() -> None:
    with trio.fail_after(TIME_CAP):
        async with (
            tcp_server() as (server, port), tcp_connect(port, "Ana") as ana,
            tcp_connect(port, "Ben") as ben,
            tcp_connect(port, "Cai") as cai,
        ):
            joined = await ana.create_table("Friday")
            assert joined.seat == 0 and joined.token and len(joined.token) >= 22
            assert (await ben.join(joined.table)).seat == 1
            assert (await cai.join(joined.table, seat=2)).seat == 2
            results: dict[int, list[HandResult]] = {}
            seen: dict[int, list[ServerMessage]] = {0: [], 1: [], 2: []}

            async def play(seat: int, conn: object) -> None:
                results[seat] = await play_hands(conn, 3, seen=seen[seat])  # type: ignore[arg-type]

            async with trio.open_nursery() as nursery:
                for seat, conn in enumerate((ana, ben, cai)):
                    nursery.start_soon(play, seat, conn)
            table = server.lobby.get(joined.table)
            journal = table.journal.journal
            assert isinstance(journal, MemoryJournal)
            replayed = TableLogState.replay(journal.entries[joined.table])
            assert replayed.hand is not None and table.state.hand is not None
            assert hand_record(replayed.hand) == hand_record(table.state.hand)
            assert replayed.standings() == table.state.standings()
    for seat in range(3):
        _check_views(seat, seen[seat])
    standings = [r.standings for r in results[0]]
    assert [s["hands"] for s in standings] == [1, 2, 3]
    assert sum(standings[-1]["chips"]) == 0
    assert results[0] == results[1] == results[2]
    dealers = [s["dealer"] for s in standings]
    winners = [r.result["winner"] for r in results[0]]
    for dealer, winner in zip(dealers, winners, strict=True):
        if winner is not None:
            assert dealer == winner


async def test_one_client_and_two_server_bots() -> None:
    with trio.fail_after(TIME_CAP):
        async with tcp_server() as (_server, port), tcp_connect(port, "Ana") as ana:
            joined = await ana.create_table("Solo", bots=2)
            tables = await ana.list_tables()
            (entry,) = [t for t in tables if t["table"] == joined.table]
            assert [s["player"] for s in entry["seats"]] == ["human", "bot", "bot"]
            assert entry["started"]
            seen: list[ServerMessage] = []
            results = await play_hands(ana, 4, seen=seen)
    _check_views(0, seen)
    assert len(results) == 4
    for result in results:
        assert len(result.result["hands"]) == 3
        assert set(result.result) >= {"end", "winner", "counts", "burned", "chips"}


async def test_replay_of_the_log_rebuilds_the_table(autojump_clock: object) -> None:
    async with memory_server() as (server, connect), connect("Ana") as ana:
        joined = await ana.create_table("Log", bots=2, options={"ante": 1})
        await play_hands(ana, 3, policy="random")
        table = server.lobby.get(joined.table)
        journal = table.journal.journal
        assert isinstance(journal, MemoryJournal)
        entries = journal.entries[joined.table]
        assert [e.to_dict()["kind"] for e in entries[:5]] == ["create", "sit", "sit", "sit",
                                                               "start"]
        replayed = TableLogState.replay(entries)
        assert replayed.hand is not None and table.state.hand is not None
        assert hand_record(replayed.hand) == hand_record(table.state.hand)
        assert replayed.standings() == table.state.standings()
        assert all("token" not in e.to_dict() for e in entries)


async def test_a_hand_result_says_when_the_timer_deals_the_next_hand(
    autojump_clock: object,
) -> None:
    """With a turn timer the table deals the next hand by itself when it runs out: the
    ``hand_result`` says in how many seconds (``next_deal``), so a screen can count it down;
    without a timer, and after the last hand of a match, nothing deals: no ``next_deal``."""
    async with memory_server() as (_server, connect):
        async with connect("Ana") as ana:
            await ana.create_table("timed", timer=30, bots=2, hands=2)
            first, last = await play_hands(ana, 2)
        async with connect("Ben") as ben:
            await ben.create_table("untimed", timer=0, bots=2)
            [untimed] = await play_hands(ben, 1)
    assert first.next_deal is not None and 29 <= first.next_deal <= 30
    assert last.next_deal is None and untimed.next_deal is None
