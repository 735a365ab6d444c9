"""CPU a table spends on each action and on each ``state`` it sends (a benchmark, not a test).

Real ``Table`` steps in this process: a server fed by in-memory streams (no listener), one
table with a fixed seed (the same deals in every run) and three seated clients that speak
``binary`` or ``text`` and read every byte they are sent without decoding it. Each action is a
move chosen by an engine policy from the seat's view and handed to the table as its
connection's reader would (``Table.call``, which takes the step inline); the next hand is dealt
at once (the clients said ``auto_next``). The policy decides in a first round (its figures are
printed too: the policy's work between the steps leaves the caches cold); the measured rounds
replay those moves, step after step, so that only the server's work varies between runs.
Measured with the thread's CPU clock, so the client side and other processes do not count:

- *step*: the whole step of a move (the engine's apply, the journal in memory, ``ok``, the
  fan-out, the commit that lets the frames out);
- *broadcast*: ``Audience.broadcast`` alone, per action and per ``state`` frame it made;
- *hand end*: the steps that end a hand (its record, its result, and the next deal, at once:
  the clients said ``auto_next``), per step and as a ratio to the other steps: what a burst of
  tables ending their hands together costs the server (bench/server_load.py ``--lock-step``);
- *floor*: ``msgpack.packb`` of one seat's whole ``state`` message as a plain map, measured in
  the same rounds (the cost of encoding a state once with nothing shared or cached): figures
  are also printed as ratios to it, since this machine's speed varies from hour to hour.

    python bench/broadcast.py                        # both codecs, 3 rounds of 3,000 actions
    python bench/broadcast.py --actions 5000 --rounds 5 --spectators 2
    python bench/broadcast.py --mode binary --profile    # cProfile of the steps, top entries

Every figure is the best of the rounds (other work on the machine only ever slows a round down).
The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack
import trio
import trio.testing
from tongits.engine import seat_view
from tongits.engine.policies import get_policy
from tongits.engine.wire import MoveMap
from tongits.protocol import Codec, Mode, MoveRequest
from tongits.server import MemoryJournal, Server, ServerConfig
from tongits.server.collector import Collector
from tongits.server.table.actor import Table
from tongits.server.table.audience import Audience
from tongits.server.table.entries import CreateEntry


@dataclass
class Meter:
    """CPU nanoseconds and calls of one wrapped method."""

    ns: int = 0
    calls: int = 0


_STEP = Meter()
_BROADCAST = Meter()
_FRAMES = Meter()  # ``calls``: state frames the broadcasts made


def _metered(meter: Meter, method: Callable[..., None]) -> Callable[..., None]:
    clock = time.thread_time_ns

    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> None:
        start = clock()
        try:
            method(*args, **kwargs)
        finally:
            meter.ns += clock() - start
            meter.calls += 1

    return run


def _count_frames(method: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(method)
    def run(audience: Audience, *args: Any, **kwargs: Any) -> None:
        _FRAMES.calls += len(audience.everyone())
        method(audience, *args, **kwargs)

    return run


Table._step = _metered(_STEP, Table._step)  # type: ignore[method-assign]
Audience.broadcast = _metered(  # type: ignore[method-assign]
    _BROADCAST, _count_frames(Audience.broadcast))


class _Client:
    """A connection over an in-memory stream: requests during the setup, then a reader that
    takes every byte and decodes none (a fast client costs the server nothing more)."""

    def __init__(self, stream: trio.abc.Stream, mode: Mode) -> None:
        self.stream = stream
        self.codec = Codec(mode)
        self.ids = 0

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        await self.stream.send_all(self.codec.encode({**msg, "id": self.ids}))
        while True:
            while (reply := self.codec.next_message()) is not None:
                if reply.get("id") == self.ids:
                    if reply.get("type") == "error":
                        raise RuntimeError(f"refused: {reply}")
                    return reply
            data = await self.stream.receive_some(65536)
            if not data:
                raise EOFError("the server closed the connection")
            self.codec.receive_data(data)

    async def drain(self) -> None:
        while await self.stream.receive_some(65536):
            pass


@dataclass
class Round:
    actions: int
    frames: int
    step_us: float  # per action
    broadcast_us: float  # per action
    frame_us: float  # broadcast per state frame
    floor_us: float  # msgpack.packb of one whole state message
    hand_ends: int  # steps that ended a hand (and dealt the next)
    hand_end_us: float  # per such step
    other_us: float  # per other step


async def _seated_table(server: Server, nursery: trio.Nursery, mode: Mode, seed: int,
                        spectators: int) -> Table:
    """A table with ``seed`` at ``server``, three clients seated (the match starts) and
    ``spectators`` more watching, each client reading all it is sent from now on."""

    async def connect(name: str) -> _Client:
        client_side, server_side = trio.testing.memory_stream_pair()
        nursery.start_soon(server.handle_stream, server_side, "memory")
        client = _Client(client_side, mode)
        await client.request({"type": "hello", "version": 1, "name": name, "kind": "human",
                              "auto_next": True})
        return client

    table = server.lobby.open(CreateEntry(table="", name="bench", seed=seed))
    clients = [await connect(f"p{i}") for i in range(3 + spectators)]
    for client in clients[3:]:
        await client.request({"type": "spectate", "table": table.id})
    for i, client in enumerate(clients[:3]):
        await client.request({"type": "join", "table": table.id, "seat": i})
    for client in clients:
        nursery.start_soon(client.drain)
    return table


async def _round(mode: Mode, actions: int, spectators: int, seed: int, policy: str,
                 moves: list[MoveMap], profile: cProfile.Profile | None) -> Round:
    """One table's ``actions`` moves: decided by ``policy`` and recorded in ``moves`` when it
    is empty, else the moves recorded (the same deals, so the same game)."""
    config = ServerConfig(port=0, timer=0.0, bot_delay=0.0, rate=0.0, log_level="WARNING")
    server = Server(config, MemoryJournal())
    collector = Collector(config.gc_young, config.gc_full)  # as ``tongits-server`` does
    collector.install()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collector.run)
        await nursery.start(functools.partial(server.serve, listen=False))

        table = await _seated_table(server, nursery, mode, seed, spectators)
        policies = [get_policy(policy, seed=seed + i) for i in range(3)]
        peers = table.audience.seat_peers
        floor_ns = 0
        end_ns = ends = 0
        for meter in (_STEP, _BROADCAST, _FRAMES):
            meter.ns = meter.calls = 0
        record = not moves
        for n in range(actions):
            hand = table.state.hand
            assert hand is not None and not hand.over and not table.closed
            seat = hand.to_act
            if record:
                moves.append(policies[seat](seat_view(hand, seat)).to_dict())
            peer = peers[seat]
            assert peer is not None
            if n % 10 == 0:  # the floor, in the same minutes as the steps
                message = table.audience.state_message(seat, None, table.audience.seats_info())
                start = time.thread_time_ns()
                msgpack.packb(message)
                floor_ns += time.thread_time_ns() - start
            if profile is not None:
                profile.enable()
            before = _STEP.ns
            await table.call(peer, MoveRequest(id=n, move=moves[n]))
            if profile is not None:
                profile.disable()
            if table.state.hand is not hand:
                ends += 1
                end_ns += _STEP.ns - before
            await trio.lowlevel.checkpoint()  # the writers and the readers take what was sent
        nursery.cancel_scope.cancel()
    floors = (actions + 9) // 10
    return Round(actions, _FRAMES.calls, _STEP.ns / 1000 / actions,
                 _BROADCAST.ns / 1000 / actions, _BROADCAST.ns / 1000 / max(1, _FRAMES.calls),
                 floor_ns / 1000 / floors, ends, end_ns / 1000 / max(1, ends),
                 (_STEP.ns - end_ns) / 1000 / max(1, actions - ends))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["binary", "text", "both"], default="both")
    parser.add_argument("--actions", type=int, default=3000, help="moves per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spectators", type=int, default=0)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--policy", default="greedy",
                        help="the engine policy that decides the moves (in a first round, "
                             "whose moves the measured rounds replay)")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the steps of the first mode's rounds; print the top 30")
    args = parser.parse_args()
    modes = [Mode.BINARY, Mode.TEXT] if args.mode == "both" else [Mode(args.mode)]
    profile = cProfile.Profile() if args.profile else None
    figures: dict[str, Any] = {}
    moves: list[MoveMap] = []
    for mode in modes:
        live = None
        if not moves:
            live = trio.run(_round, mode, args.actions, args.spectators, args.seed, args.policy,
                            moves, None)
        rounds = [trio.run(_round, mode, args.actions, args.spectators, args.seed, args.policy,
                           moves, profile if mode is modes[0] else None)
                  for _ in range(args.rounds)]
        if live is not None:
            print(f"{mode.value:6}  deciding each move between the steps: step "
                  f"{live.step_us:.1f} µs/action ({live.step_us / live.floor_us:.2f}× floor), "
                  f"broadcast {live.broadcast_us:.1f} µs/action ({live.frame_us:.1f} µs/frame)")
        best = {field: min(getattr(r, field) for r in rounds)
                for field in ("step_us", "broadcast_us", "frame_us", "floor_us", "hand_end_us",
                              "other_us")}
        floor = best["floor_us"]
        print(f"{mode.value:6}  {rounds[0].actions} actions, {rounds[0].frames} state frames; "
              f"best of {args.rounds}: step {best['step_us']:.1f} µs/action "
              f"({best['step_us'] / floor:.2f}× floor), broadcast {best['broadcast_us']:.1f} "
              f"µs/action ({best['broadcast_us'] / floor:.2f}×), {best['frame_us']:.1f} µs/frame"
              f"; floor (packb of one state) {floor:.1f} µs")
        print(f"{mode.value:6}  {rounds[0].hand_ends} steps ended a hand and dealt the next: "
              f"{best['hand_end_us']:.1f} µs each, {best['hand_end_us'] / best['other_us']:.2f}× "
              f"the other steps ({best['other_us']:.1f} µs)")
        figures[mode.value] = {**best, "actions": rounds[0].actions,
                               "hand_ends": rounds[0].hand_ends,
                               "frames": rounds[0].frames,
                               "step_per_floor": best["step_us"] / floor,
                               "broadcast_per_floor": best["broadcast_us"] / floor}
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
