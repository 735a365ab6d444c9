"""Turn timers and auto-play, on a virtual clock."""

from __future__ import annotations

import trio
from server_support import capped, memory_server, next_of
from tongits.engine.wire import StepMap
from tongits.protocol import HandResult, State


@capped
async def test_idle_seat_is_played_for_and_marked(autojump_clock: trio.testing.MockClock) -> None:
    async with memory_server(bot_delay=1.0) as (_server, connect), connect("Idle") as idle:
        await idle.create_table("Clock", bots=2, timer=5)
        mine: list[State] = []
        timed_out: list[State] = []
        results: list[HandResult] = []
        while len(results) < 2:
            msg = await idle.receive()
            if isinstance(msg, State):
                if msg.legal:
                    mine.append(msg)
                if msg.event and msg.event.get("timeout"):
                    timed_out.append(msg)
                    assert msg.event["seat"] == 0
                else:
                    assert msg.event is None or msg.event["seat"] != 0
            elif isinstance(msg, HandResult):
                results.append(msg)
        assert mine and all(s.deadline == 5.0 for s in mine)
        assert timed_out
        actions = [s.event["action"] for s in timed_out if s.event]
        assert set(actions) <= {"draw", "discard", "fold", "meld", "sapaw", "secret", "pick"}
        assert timed_out[-1].seats[0]["timeouts"] == len(timed_out)
        assert results[1].standings["hands"] == 2


@capped
async def test_bots_wait_their_delay_and_no_timer_means_no_deadline(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(bot_delay=2.0) as (_server, connect), connect("Ana") as ana:
        await ana.create_table("Slow bots", bots=2, timer=0)
        previous = None
        for _ in range(6):
            state = await next_of(ana, State)
            assert state.deadline is None or state.view["to_act"] != 0
            if state.legal:
                await ana.move(state.legal[-1])
            now = trio.current_time()
            if previous is not None and state.event and state.event["seat"] != 0:
                assert now - previous >= 2.0
            previous = now


@capped
async def test_next_hand_waits_for_every_connected_human(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with (
        memory_server(bot_delay=0.0) as (_server, connect),
        connect("Ana") as ana, connect("Ben") as ben,
    ):
        joined = await ana.create_table("Pair", bots=1, timer=3)
        await ben.join(joined.table)
        await next_of(ana, HandResult)
        ended = trio.current_time()
        await ana.next_hand()
        await next_of(ben, HandResult)
        dealt = await next_of(ana, State, lambda s: s.view["stock"] == 15)
        assert dealt.seq > 0
        assert trio.current_time() - ended >= 3.0
        assert dealt.seats[0]["timeouts"] > 0 and dealt.seats[1]["timeouts"] == 0


@capped
async def test_a_state_sent_while_the_server_plays_for_a_seat_offers_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """After a timed-out seat's forced draw the server discards for it in the same step: the
    state in between offers no move and no deadline (a bot answering it would be refused).
    Every state's ``history`` marks the steps played for a timed-out seat, as ``event`` did;
    a bot seat to act gets no deadline (the turn timer is for people)."""
    async with memory_server(bot_delay=1.0) as (_server, connect), connect("Idle") as idle:
        await idle.create_table("Clock", bots=2, timer=5)
        played_for: list[StepMap] = []
        forced_draws = 0
        while True:
            msg = await idle.receive()
            if isinstance(msg, HandResult):
                break
            if not isinstance(msg, State):
                continue
            if msg.event and msg.event.get("timeout"):
                played_for.append(msg.event)
            marked = [step for step in msg.view["history"] if step.get("timeout")]
            assert marked == played_for
            if msg.view["to_act"] == 0 and msg.event and msg.event.get("timeout"):
                forced_draws += 1
                assert msg.legal is None and "legal" not in msg.view
                assert msg.deadline is None
            elif msg.view["to_act"] == 0:
                assert msg.legal and msg.deadline == 5.0
            else:
                assert msg.legal is None and msg.deadline is None
        assert forced_draws > 0
