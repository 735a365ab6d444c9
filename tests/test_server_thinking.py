"""A slow server bot (the expert) decides in a worker thread: while it thinks, every other table
is served (issue #17, item 3)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio
from server_support import TIME_CAP, memory_server, my_turn, next_of, play_hands
from tongits.engine import Move, SeatView
from tongits.engine.policies import get_policy
from tongits.protocol import State
from tongits.server.table import bots


async def test_other_tables_play_on_while_an_expert_seat_thinks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    thinking, release = threading.Event(), threading.Event()
    on_loop: list[bool] = []
    real_get_policy = get_policy

    def gated_get_policy(name: str, seed: Any = None) -> bots.Policy:
        policy = real_get_policy(name, seed=seed)
        if name != "expert":
            return policy

        def gated(view: SeatView) -> Move:
            on_loop.append(threading.current_thread() is threading.main_thread())
            thinking.set()
            release.wait(TIME_CAP / 3)  # on the event loop this would stall every table
            return policy(view)

        return gated

    monkeypatch.setattr(bots, "get_policy", gated_get_policy)
    with trio.fail_after(TIME_CAP):
        async with memory_server() as (_, connect), connect("Ana") as ana, \
                connect("Ben") as ben, trio.open_nursery() as nursery:
            slow = await ana.create_table("Slow", auto_start=False)
            await ana.add_bot(1, "expert")
            await ana.add_bot(2, "expert")
            await ana.start()
            nursery.start_soon(play_hands, ana, 1)
            await trio.to_thread.run_sync(thinking.wait, TIME_CAP)

            # An expert at the slow table is in the middle of a decision: another table's
            # round trip (a move, then the state that shows it) completes meanwhile.
            quick = await ben.create_table("Quick", bots=2)
            assert quick.table != slow.table
            state = await my_turn(ben)
            greedy = get_policy("greedy", seed=0)
            await ben.move(greedy(SeatView.from_dict(state.view, state.legal)))
            shown = await next_of(ben, State, lambda s: s.seq > state.seq)
            assert shown.event is not None and shown.event["seat"] == ben.seat
            assert not release.is_set() and on_loop == [False]

            release.set()  # the slow table plays its hand out, every decision in a thread
        assert on_loop and not any(on_loop)


async def test_slow_bots_are_built_once_before_the_server_serves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The expert deals its rollouts' tables in its first construction in a process (~0.1-0.2 s
    of CPU): made on the event loop by the first table seating one, it held every other table
    up. The server builds one of each slow policy before it serves anyone."""
    built: list[str] = []

    def counting(name: str, seed: Any = None) -> bots.Policy:
        built.append(name)
        return get_policy(name, seed=seed)

    monkeypatch.setattr(bots, "get_policy", counting)
    with trio.fail_after(TIME_CAP):
        async with memory_server() as (_server, connect), connect("Ana") as ana:
            assert sorted(built) == sorted(bots.SLOW_POLICIES)  # before the first request
            await ana.create_table("Warm", bots=2, timer=0)
            await my_turn(ana)
