"""Reconnection: grace period, resume snapshot with missed events, stand-in bots, hand-back,
restart from the journal. All on the virtual clock."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
import trio
from server_support import capped, memory_server, my_turn, next_of, play_hands
from tongits.client.connection import Connection, ConnectionClosed, ServerError
from tongits.engine import Action, HandRecord, SeatView
from tongits.engine.policies import get_policy
from tongits.protocol import HandResult, SeatUpdate, State
from tongits.server import MemoryJournal
from tongits.server.table.entries import DealEntry, MoveEntry, StartEntry


def _change(seat: int, change: str) -> Callable[[Any], bool]:
    return lambda u: u.change == {"seat": seat, "change": change}


@capped
async def test_last_human_away_keeps_the_table_and_resumes_with_missed_events(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(bot_delay=1.0, grace=60.0) as (_server, connect):
        async with connect("Ana") as ana:
            joined = await ana.create_table("Drop", bots=2, timer=0)
            token = ana.token
            assert token is not None
            state = await my_turn(ana)
            for _ in range(3):  # act until the turn passes to the bots
                assert state.legal is not None
                move = next((m for m in state.legal if m["action"] == "draw"), None)
                move = move or next(m for m in state.legal if m["action"] == "discard")
                await ana.move(move)
                state = await next_of(ana, State)
                if not state.legal:
                    break
            seen = state.seq
            seen_steps = len(state.view["history"])
        await trio.sleep(5)  # the bots play on while Ana is away
        async with connect("Sam") as sam:
            (entry,) = await sam.list_tables()
            assert entry["table"] == joined.table
            assert entry["seats"][0]["away"] and not entry["seats"][0]["connected"]
        async with connect("Ana", token=token, seq=seen) as back:
            snapshot = await next_of(back, State)
            assert back.seat == 0 and back.table == joined.table
            assert snapshot.missed is not None
            assert snapshot.missed == snapshot.view["history"][seen_steps:]
            assert snapshot.missed and snapshot.seq > seen
            assert {e["seat"] for e in snapshot.missed} - {0}


@capped
async def test_table_closes_when_the_grace_period_ends_with_nobody_back(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(grace=30.0, pregame_grace=30.0) as (_server, connect):
        async with connect("Ana") as ana:
            await ana.create_table("Gone", bots=2, timer=0, auto_start=False)
            token = ana.token
        async with connect("Sam") as sam:
            await trio.sleep(29)
            assert len(await sam.list_tables()) == 1
            await trio.sleep(2)
            assert await sam.list_tables() == []
            codes = []
            try:
                async with connect("Ana", token=token):
                    pass
            except* ServerError as group:
                codes = [e.code for e in group.exceptions if isinstance(e, ServerError)]
            assert codes == ["bad_token"]


@capped
async def test_a_table_waits_for_its_last_human_away_past_the_grace_period(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A phone friend alone with two bots locks the screen for an hour: once the grace period
    is over a bot stands in, and the table waits (no move, no deal, no timer) instead of
    closing, as it did, with her match; she comes back with her token and plays on from
    where the table stopped."""
    async with memory_server(bot_delay=1.0, grace=60.0) as (server, connect):
        async with connect("Ana") as ana:
            joined = await ana.create_table("Phone", bots=2, timer=30)
            token = ana.token
            assert token is not None
            await my_turn(ana)
        table = server.lobby.tables[joined.table]
        await trio.sleep(90)  # the grace period is over: a stand-in has the seat
        state = table.state
        assert state.hand is not None and state.seats[0] is not None
        assert state.seats[0].stand_in
        steps, hand = len(state.hand.steps), state.hand
        await trio.sleep(3600)
        assert table.clock.turn_at == math.inf  # no timer runs while the table waits
        assert state.hand is hand and len(hand.steps) == steps  # and nothing moved
        async with connect("Sam") as sam:
            (entry,) = await sam.list_tables()  # still listed, an hour on
            assert entry["table"] == joined.table and entry["seats"][0]["stand_in"]
        async with connect("Ana", token=token) as back:
            resumed = await next_of(back, State)
            assert back.seat == 0 and len(resumed.view["history"]) == steps
            if not resumed.legal:  # a bot to act: the table plays on
                await next_of(back, State, lambda s: len(s.view["history"]) > steps)


@capped
async def test_a_stand_ins_moves_are_marked_as_the_servers(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Back after a stand-in played for her, Ana's log said "You discarded 5♣": a move she never
    made. A stand-in for a human who may come back plays marked ``timeout`` (the server
    played it), as a timed-out turn is; a server bot's own moves are not marked."""
    async with memory_server(bot_delay=1.0, grace=5.0) as (_server, connect):
        async with connect("Ana") as ana:
            joined = await ana.create_table("Away", bots=2, timer=0)
            token = ana.token
        async with connect("Sam") as sam:
            await sam.spectate(joined.table)  # someone at the table: it plays on
            played = await next_of(sam, State, lambda s: bool(s.event and s.event["seat"] == 0))
            assert played.event is not None and played.event.get("timeout") is True
            bots = [step for step in played.view["history"] if step["seat"] != 0]
            assert not any(step.get("timeout") for step in bots)
            async with connect("Ana", token=token) as back:
                state = await next_of(back, State)
                assert [step.get("timeout") for step in state.view["history"]
                        if step["seat"] == 0] == [True] * sum(
                            step["seat"] == 0 for step in state.view["history"])


@capped
async def test_turn_timer_runs_while_away(autojump_clock: trio.testing.MockClock) -> None:
    async with memory_server(bot_delay=1.0, grace=600.0) as (_server, connect):
        async with connect("Ana") as ana:
            joined = await ana.create_table("Timer", bots=2, timer=5)
        async with connect("Sam") as sam:
            await sam.spectate(joined.table)
            timed_out = await next_of(
                sam, State, lambda s: bool(s.event and s.event.get("timeout"))
            )
            assert timed_out.event is not None and timed_out.event["seat"] == 0
            assert timed_out.seats[0]["away"]


@capped
async def test_a_player_dropping_leaves_the_turn_timer_of_the_seat_to_act_alone(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A player who loses the connection while another is to act, and comes back, changes
    nothing for that turn: the server plays for the seat to act when the deadline everyone
    was shown runs out, not a whole timer after the drop (the others' screens counted down to
    a deadline that no longer held, and a player dropping again and again held the table
    up). Nobody here moves: every turn is played for on its timer."""
    async with (
        memory_server(bot_delay=1.0, grace=600.0) as (_server, connect),
        connect("Sam") as sam, connect("Ana") as ana,
    ):
        joined = await ana.create_table("Drop", bots=1, timer=30)
        await sam.spectate(joined.table)
        token, seat = None, None
        for back in (False, True):
            async with connect("Ben", token=token) as ben:
                if token is None:
                    await ben.join(joined.table)
                    token, seat = ben.token, ben.seat
                asked = await next_of(sam, State, lambda s: s.deadline is not None
                                      and s.view["to_act"] == ana.seat)
                start = trio.current_time()
                assert asked.deadline == 30.0
                await trio.sleep(10)
            assert seat is not None
            await next_of(sam, SeatUpdate, _change(seat, "away"))
            async with connect("Ben", token=token) if back else nullcontext():
                played = await next_of(sam, State,
                                       lambda s: bool(s.event and s.event.get("timeout")))
            assert played.event is not None and played.event["seat"] == ana.seat
            assert trio.current_time() - start == pytest.approx(30.0, abs=0.5)


async def _ben_sat_down_and_dropped(connect: Any, ana: Connection, sam: Connection, *,
                                    timer: float) -> tuple[str, int]:
    """Ana's table of one bot, Sam watching; Ben sits down, is dealt, and his connection
    drops: his token and seat."""
    joined = await ana.create_table("Back", bots=1, timer=timer)
    await sam.spectate(joined.table)
    async with connect("Ben") as ben:
        await ben.join(joined.table)
        token, seat = ben.token, ben.seat
        assert token is not None and seat is not None
        await next_of(ben, State)
    return token, seat


@capped
async def test_stand_in_after_grace_then_handed_back(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with (
        memory_server(bot_delay=1.0, grace=10.0) as (_server, connect),
        connect("Ana") as ana, connect("Sam") as sam,
    ):
        token, seat = await _ben_sat_down_and_dropped(connect, ana, sam, timer=0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_hands, ana, 1)
            away = await next_of(sam, SeatUpdate, _change(seat, "away"))
            assert away.seats[seat]["away"] and away.seats[seat]["grace"] == 10.0
            stood = await next_of(sam, SeatUpdate, _change(seat, "stand_in"))
            assert stood.seats[seat]["stand_in"] and stood.seats[seat]["player"] == "bot"
            await next_of(sam, State, lambda s: bool(s.event and s.event["seat"] == seat))
            async with connect("Ben", token=token) as ben2:
                snapshot = await next_of(ben2, State)
                assert snapshot.view["seat"] == seat
                update = await next_of(sam, SeatUpdate, _change(seat, "back"))
                assert update.seats[seat]["player"] == "human"
                assert "stand_in" not in update.seats[seat]
                mine = snapshot if snapshot.legal else await my_turn(ben2)
                assert mine.legal
                await ben2.move(mine.legal[0])
            nursery.cancel_scope.cancel()


@capped
async def test_a_player_back_from_a_stand_in_on_its_turn_shows_everyone_its_new_timer(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A player who takes the seat back while its stand-in is to act has a whole turn on the
    timer; nothing is played, so no ``state`` tells the others: their ``seat_update`` carries
    the new deadline (the other screens showed no countdown until that player moved)."""
    async with (
        memory_server(bot_delay=5.0, grace=10.0) as (_server, connect),
        connect("Ana") as ana, connect("Sam") as sam,
    ):
        token, seat = await _ben_sat_down_and_dropped(connect, ana, sam, timer=30)
        await next_of(sam, SeatUpdate, _change(seat, "stand_in"))
        standing = await next_of(sam, State, lambda s: s.view["to_act"] == seat)
        assert standing.deadline is None  # a bot is to act: no timer shown
        async with connect("Ben", token=token) as ben2:
            back = await next_of(sam, SeatUpdate, _change(seat, "back"))
            assert back.deadline == 30.0
            mine = await next_of(ben2, State)
            assert mine.legal and mine.deadline == 30.0


@capped
async def test_second_connection_with_the_token_replaces_the_first(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        await ana.create_table("Twice", bots=2, timer=0)
        await next_of(ana, State)
        async with connect("Ana", token=ana.token) as again:
            await next_of(again, State)
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await ana.receive()
            assert closed.value.error is not None
            assert closed.value.error.code == "replaced"


@capped
async def test_restart_from_the_journal_restores_the_hand(
    autojump_clock: trio.testing.MockClock,
) -> None:
    journal = MemoryJournal()
    async with memory_server(journal) as (_server, connect), connect("Ana") as ana:
        joined = await ana.create_table("Crash", bots=2, timer=0)
        token = ana.token
        before = await _moves_into_a_hand(ana, 3)
    # the first server is gone (cancelled); a new one reads the same journal
    async with memory_server(journal) as (_server, connect):
        async with connect("Ana", token=token, seq=before.seq) as ana:
            snapshot = await next_of(ana, State)
            assert ana.table == joined.table
            assert snapshot.seq >= before.seq
            assert snapshot.view["history"][: len(before.view["history"])] == (
                before.view["history"]
            )
            results = await play_hands(ana, 1)
        finished = journal.hands[joined.table][-1]
        record = HandRecord.from_dict(finished["record"])
        hand = record.replay()
        replayed = hand.result
        assert replayed is not None
        assert replayed.to_dict() == {
            k: v for k, v in results[0].result.items() if k not in ("hands", "pot_taken", "why")
        }
        assert results[0].result["why"] == [[i.to_dict() for i in seat]
                                            for seat in hand.settlement]
        assert finished["names"][0] == "Ana"
        entries = journal.entries[joined.table]
        dealt = max(i for i, e in enumerate(entries) if isinstance(e, StartEntry | DealEntry))
        moves = [e for e in entries[dealt:] if isinstance(e, MoveEntry)]
        assert [{"seat": e.seat, **e.move.to_dict()} for e in moves] == list(record.actions)


async def _moves_into_a_hand(conn: Connection, moves: int) -> State:
    """Play the first legal move ``moves`` times in one hand and return the state that asks
    for the next one: the hand is under way and waits for this seat. About one deal in 150
    ends before (a bot goes out, or calls): the next hand is asked for and counted afresh."""
    made = 0
    while True:
        msg = await conn.receive()
        if isinstance(msg, HandResult):
            made = 0
            await conn.next_hand()
        elif isinstance(msg, State) and msg.legal and msg is conn.last_state:
            if made == moves:
                return msg
            await conn.move(msg.legal[0])
            made += 1


@capped
async def test_dropped_while_answering_a_call_then_resumed_answers_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Ana's connection dies while a bot's call waits for her answer; she resumes with her
    token, is asked again, challenges, and the call is settled with her as a challenger."""
    bot = get_policy("greedy", seed=0)
    async with memory_server(bot_delay=1.0, grace=30.0) as (_server, connect):
        async with connect("Ana") as ana:
            await ana.create_table("Mid-call", bots=2, timer=0)
            token, hands = ana.token, 0
            while True:
                msg = await ana.receive()
                if isinstance(msg, HandResult):
                    hands += 1
                    assert hands < 40, "no bot called while Ana could answer"
                    await ana.next_hand()
                elif isinstance(msg, State) and msg.legal and msg is ana.last_state:
                    if msg.view["phase"] == "answer":
                        seq = msg.seq
                        break
                    view = SeatView.from_dict(msg.view, msg.legal)
                    move = bot(view)
                    if move.action is Action.CALL:  # Ana never calls: she waits for the bots
                        move = next(m for m in view.legal if m.action is not Action.CALL)
                    await ana.move(move)
        async with connect("Ana", token=token, seq=seq) as again:
            asked = await my_turn(again)
            assert asked.view["phase"] == "answer"
            assert {m["action"] for m in asked.legal or []} == {"challenge", "fold"}
            await again.move({"action": "challenge"})
            result = (await next_of(again, HandResult)).result
            assert result["end"] == "call" and again.seat in result["challengers"]


@capped
async def test_a_resume_sync_and_late_spectator_get_the_matchs_standings(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A client started again (a token, no ``seq``) learns the chips of the match at once, not
    at the next ``hand_result``; so does a ``sync`` and a spectator arriving mid-match. Before
    any hand has been settled there are no standings to send."""
    async with memory_server(bot_delay=1.0, grace=60.0) as (_server, connect):
        async with connect("Ana") as ana:
            joined = await ana.create_table("Ledger", bots=2, timer=0)
            token = ana.token
            first = await next_of(ana, State)
            assert first.standings is None
        async with connect("Ana", token=token) as back:
            assert (await next_of(back, State)).standings is None  # nothing settled yet
            (result,) = await play_hands(back, 1)
            assert result.standings["hands"] == 1
        async with connect("Ana", token=token) as again:
            snapshot = await next_of(again, State)
            assert snapshot.standings == result.standings
            await again.request({"type": "sync"})
            synced = await next_of(again, State)
            assert synced.standings == result.standings and synced.missed is None
            async with connect("Sam") as sam:
                await sam.spectate(joined.table)
                watched = await next_of(sam, State)
                assert watched.standings == result.standings


@capped
async def test_resumed_between_hands_the_table_waits_for_next_hand_as_documented(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A bot that dropped after a ``hand_result`` and before its ``next_hand`` resumes into
    the over state with no ``hand_result`` again (its ``seq`` covers it): the table, with no
    turn timer, deals only on a ``next_hand`` sent then. PROTOCOL.md says so, since a bot
    written from it would otherwise wait for ever."""
    async with memory_server(bot_delay=1.0, grace=60.0) as (_server, connect):
        async with connect("Ana") as ana:
            await ana.create_table("Between", bots=2, timer=0)
            token = ana.token
            (result,) = await play_hands(ana, 1)
        async with connect("Ana", token=token, seq=result.seq) as back:
            snapshot = await next_of(back, State)
            assert snapshot.view["phase"] == "over" and snapshot.seq <= result.seq
            with trio.move_on_after(30):  # nothing else comes: no hand_result, no deal
                extra = await back.receive()
                assert not isinstance(extra, HandResult | State), extra
            await back.next_hand()
            dealt = await next_of(back, State)
            assert dealt.hand == 2 and dealt.view["phase"] != "over"
            with pytest.raises(ServerError) as refused:
                await back.next_hand()
            assert refused.value.code == "not_ready"
    doc = (Path(__file__).parents[1] / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    section = doc.split("### Resuming a seat", 1)[1].split("\n## ", 1)[0]
    assert "Between hands, ask for the next one again" in section
    assert "may or may not have been served" in section


@capped
async def test_a_player_whose_phone_died_takes_the_seat_back_from_the_invite_link(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Ben's phone died mid-match, its seat token with it; he opens the invite link on another
    device under the same name: a private table's code and his name give him his seat back
    (the old token no longer works). Not while his seat is connected, not at a public table,
    not under another name."""
    async with (
        memory_server(bot_delay=1.0, grace=10.0) as (_server, connect),
        connect("Ana") as ana, connect("Sam") as sam,
    ):
        joined = await ana.create_table("Friday", bots=1, timer=0, private=True)
        assert joined.code is not None
        await sam.spectate(joined.table, code=joined.code)
        async with connect("Ben") as ben:
            await ben.join(joined.table, code=joined.code)
            old_token, seat = ben.token, ben.seat
            assert old_token is not None and seat is not None
            await next_of(ben, State)
            async with connect("ben") as other:  # his seat is connected: not his to take
                with pytest.raises(ServerError) as refused:
                    await other.join(joined.table, code=joined.code)
                assert refused.value.code == "table_started"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_hands, ana, 1)
            await next_of(sam, SeatUpdate, _change(seat, "stand_in"))
            async with connect("Cleo") as cleo:  # another name: the table stays full
                with pytest.raises(ServerError) as refused:
                    await cleo.join(joined.table, code=joined.code)
                assert refused.value.code == "table_started"
            async with connect("BEN") as ben2:
                with pytest.raises(ServerError) as refused:
                    await ben2.join(joined.table, code="wrong")
                assert refused.value.code == "bad_join_code"
                back = await ben2.join(joined.table, code=joined.code)
                assert back.seat == seat and back.token not in (None, old_token)
                snapshot = await next_of(ben2, State)
                assert snapshot.view["seat"] == seat and snapshot.missed is not None
                assert snapshot.missed == snapshot.view["history"]  # the hand so far
                update = await next_of(sam, SeatUpdate, _change(seat, "back"))
                assert update.seats[seat]["name"] == "Ben"  # the seat keeps its name
                assert update.seats[seat]["player"] == "human"
                mine = snapshot if snapshot.legal else await my_turn(ben2)
                assert mine.legal
                await ben2.move(mine.legal[0])
            nursery.cancel_scope.cancel()
        codes = []
        try:
            async with connect("Ben", token=old_token):
                pass
        except* ServerError as group:  # the old token no longer works
            codes = [e.code for e in group.exceptions if isinstance(e, ServerError)]
        assert codes == ["bad_token"]

    # a public table has no code to prove a seat is one's own: nobody takes one back by name
    async with (
        memory_server(bot_delay=1.0, grace=10.0) as (_server, connect),
        connect("Ana") as ana,
    ):
        joined = await ana.create_table("Open", bots=1, timer=0)
        async with connect("Ben") as ben:
            await ben.join(joined.table)
            await next_of(ben, State)
        await trio.sleep(30)
        async with connect("Ben") as ben2:
            with pytest.raises(ServerError) as refused:
                await ben2.join(joined.table)
            assert refused.value.code == "table_started"
