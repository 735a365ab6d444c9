"""Every ``state`` a table fans out is the whole message, for its recipient, that a ``sync`` builds.

``Audience.broadcast`` builds each step's frames from parts shared by every recipient and
encodes them once per step (and the history once per hand); ``Audience.state_message`` builds
one recipient's message whole, as a plain map, for a resume, a ``sync`` or a new spectator.
Decoded, every frame of the fan-out must equal the plain message: the same head, seats, event,
legal moves and view, for each seat, the spectators, in both codecs, through secret melds (each
seat's own history), turns the server played for a seat that let its timer run out (marked
``timeout``), the end of a hand (everything revealed) and the deal after it.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

import msgpack
import pytest
import trio
import trio.testing
from server_support import capped, memory_server, next_of
from tongits.client.connection import Connection
from tongits.engine import Action
from tongits.protocol import MatchOver, Mode, State
from tongits.server.net.peer import Peer
from tongits.server.table.audience import Audience
from tongits.server.table.entries import CreateEntry

#: A deal order whose hands give the players secret melds to lay (checked below).
SEED = 11
HANDS = 8


async def _play(conn: Connection, rng: random.Random) -> None:
    """Move at once whenever ``conn`` may, a secret meld first, until the match is over."""
    acted = -1
    while True:
        msg = await conn.receive()
        if isinstance(msg, MatchOver):
            return
        if isinstance(msg, State) and msg.legal and msg is conn.last_state and msg.seq > acted:
            acted = msg.seq
            secrets = [m for m in msg.legal if m["action"] == Action.SECRET.value]
            await conn.move(secrets[0] if secrets else rng.choice(msg.legal))


async def _watch(conn: Connection) -> None:
    """Read everything (a seat that never moves: the server plays its turns when they time
    out), until the match is over."""
    await next_of(conn, MatchOver)


def _plain(message: Mapping[str, Any], mode: Mode | None) -> Any:
    """``message`` as its recipient decodes it."""
    if mode is Mode.TEXT:
        return json.loads(json.dumps(message))
    return msgpack.unpackb(msgpack.packb(message))


def _decoded(data: bytes, mode: Mode | None) -> Any:
    return json.loads(data) if mode is Mode.TEXT else msgpack.unpackb(data[4:])


@capped
async def test_every_broadcast_state_is_the_whole_state_message(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[Peer, bytes]] | None = None
    seen: Counter[str] = Counter()
    mismatches: list[tuple[Any, ...]] = []
    send_frame, broadcast = Peer.send_frame, Audience.broadcast

    def record(peer: Peer, data: bytes) -> None:
        if sent is not None:
            sent.append((peer, data))
        send_frame(peer, data)

    def checked(audience: Audience, index: int | None, *, timeout: bool = False) -> None:
        nonlocal sent
        frames = sent = []
        try:
            broadcast(audience, index, timeout=timeout)
        finally:
            sent = None
        seats = audience.seats_info()
        assert len(frames) == len(audience.everyone())
        for peer, data in frames:
            seat = peer.seat if peer in audience.seat_peers else None
            want = _plain(audience.state_message(seat, index, seats, timeout=timeout),
                          peer.codec.mode)
            got = _decoded(data, peer.codec.mode)
            if got != want:
                mismatches.append((seat, peer.codec.mode, index, got, want))
            seen[f"{peer.codec.mode.value if peer.codec.mode else '?'} frames"] += 1
            view = got["view"]
            seen["secret"] += any(m["secret"] for m in view["melds"])
            seen["timeout"] += any(step.get("timeout") for step in view["history"])
            seen["over"] += view["phase"] == "over"
            seen["legal"] += "legal" in got
            seen["deadline"] += "deadline" in got

    monkeypatch.setattr(Peer, "send_frame", record)
    monkeypatch.setattr(Audience, "broadcast", checked)
    async with (
        memory_server() as (server, connect),
        connect("Ana") as ana, connect("Ben", text=True) as ben, connect("Cy") as cy,
        connect("Sam", text=True) as sam,
    ):
        table = server.lobby.open(CreateEntry(table="", name="Fan-out", seed=SEED, timer=5.0,
                                              hands=HANDS))
        await sam.spectate(table.id)
        for seat, conn in enumerate((ana, ben, cy)):
            await conn.join(table.id, seat)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_play, ana, random.Random(1))
            nursery.start_soon(_play, ben, random.Random(2))
            nursery.start_soon(_watch, cy)
            await _watch(sam)
    assert not mismatches, mismatches[0]
    assert seen["binary frames"] > 300 and seen["text frames"] > 300, seen
    assert min(seen[k] for k in ("secret", "timeout", "over", "legal", "deadline")) > 0, seen
