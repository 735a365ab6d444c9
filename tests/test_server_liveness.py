"""A table never freezes: a closed connection is noticed whatever the table was doing.

Issue #10.1: a connection closed while the table had its peers corked (a step waiting for its
group commit) was never noticed, and a table with no timer froze for good. Here seats drop at
every kind of moment, on many tables at once over real sockets, and the others must see
``away`` at once, then ``stand_in`` after the grace period, then ``back`` when the token
returns. The drop script ``bench/drops.py`` runs the same scenarios thousands of times.
"""

from __future__ import annotations

import math

import trio
import trio.lowlevel
import trio.socket
import trio.testing
from drop_support import MOMENTS, DropOutcome, drop_round, observer_process, server_process
from server_support import TIME_CAP, memory_server, next_of, until
from tongits.protocol import Codec, Mode, SeatUpdate
from tongits.server.net.peer import Peer

#: How long after the drop the observer may read ``away`` (the issue asks for one second; a
#: test machine shared by many jobs may lag now and then, so two late tables are tolerated).
NOTICE_BOUND = 1.0


async def test_a_socket_closed_between_reads_is_the_end_of_the_connection() -> None:
    """A connection's socket closed by another task while its reader was busy (handling the
    last message) reads as the end of the connection, b"", not as an error: the reader waits
    on the socket's descriptor, which a closed socket no longer has."""
    left, right = trio.socket.socketpair()
    peer = Peer(trio.SocketStream(right), Codec(Mode.BINARY), 16, "pair")
    with left:
        await left.send(b"x")
        assert await peer.receive() == b"x"
        await peer.stream.aclose()
        assert await peer.receive() == b""


async def test_a_peer_closed_while_corked_ends_its_writer() -> None:
    """The cause of the freeze: the reader ended (``finish``) while the table held the peer
    corked for a commit, and the step had nothing to say to it; the writer waited for the
    cork to go, and ``uncork`` did not wake it."""
    _client, server_side = trio.testing.memory_stream_pair()
    peer = Peer(server_side, Codec(Mode.BINARY), 16, "memory")
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer.run_writer)
            await trio.testing.wait_all_tasks_blocked()
            peer.cork()
            peer.finish()
            await trio.testing.wait_all_tasks_blocked()
            peer.uncork()


async def test_seats_dropped_at_every_moment_on_many_tables_are_noticed() -> None:
    """Five kinds of moment, four tables each, all at once on a real ``tongits-server``:
    mid-turn, while answering a call, right after ``hand_result`` (the others ask for the next
    hand), right after sending a move (the step corks the peer and waits for its group commit),
    and while another seat's move is being played. Every dropped seat goes away, gets a
    stand-in, and comes back; a spectator in a process of its own reads each ``away`` within
    the bound. (Before the fix about one table in twenty froze here: ``bench/drops.py``
    counted 17 frozen of 360.)"""
    with trio.fail_after(TIME_CAP * 3), server_process(grace=0.5) as port:
        async with observer_process(port) as observer:
            outcomes: list[DropOutcome] = await drop_round(
                port, MOMENTS * 4, seconds_per_table=TIME_CAP, observer=observer)
    frozen = [o for o in outcomes if o.frozen]
    assert not frozen, frozen
    assert all(o.watched_away < math.inf for o in outcomes)
    late = [o for o in outcomes if not o.ok(NOTICE_BOUND)]
    assert len(late) <= 2, late  # a loaded test machine may lag a second: never more often
    assert {o.moment for o in outcomes} == set(MOMENTS)


async def test_spectators_flooding_a_table_cannot_fill_its_inbox_or_drop_a_disconnect() -> None:
    """Issue #16.6: the disconnect notice was handed to a full inbox with a one-second timeout
    and dropped (300 chatting spectators); the seat stayed bound to a dead connection. Chat now
    never enters the inbox, a connection waits for each request it hands over (so it has at
    most one there), and the disconnect is never dropped. (The watchers share one address:
    its chat pace is off here, so that their lines still flood the table as they did.)"""
    watchers, burst = 40, 30
    with trio.fail_after(TIME_CAP):
        async with (
            memory_server(grace=3600.0, chat_rate=0) as (server, connect),
            connect("Ana") as ana, connect("Ben") as ben,
        ):
            joined = await ana.create_table("Crowded", bots=1, timer=0)
            await ben.join(joined.table)
            table = server.lobby.get(joined.table)
            flood = b"".join(
                Codec(Mode.BINARY).encode({"type": kind, "id": n, "text": "hi", "move": {}})
                for n in range(burst) for kind in ("chat", "move", "next_hand"))
            streams = []
            for _ in range(watchers):
                client, server_side = trio.testing.memory_stream_pair()
                streams.append(client)
                server.lobby._nursery.start_soon(  # type: ignore[union-attr]
                    server.handle_stream, server_side, "memory")
                hello = {"type": "hello", "version": 1, "name": "eve", "kind": "human"}
                spectate = {"type": "spectate", "table": joined.table}
                await client.send_all(Codec(Mode.BINARY).encode(hello)
                                      + Codec(Mode.BINARY).encode(spectate))
            await until(lambda: len(table.audience.spectators) >= watchers)
            sizes: list[int] = []

            async def watch_the_inbox() -> None:
                while True:
                    sizes.append(table._inbox.statistics().current_buffer_used)
                    await trio.lowlevel.checkpoint()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch_the_inbox)
                for client in streams:
                    nursery.start_soon(client.send_all, flood)
                    nursery.start_soon(_drain, client)
                await trio.sleep(0.05)
                await ben.aclose()
                away = await next_of(ana, SeatUpdate, lambda u: (
                    u.change is not None and u.change["change"] == "away"))
                nursery.cancel_scope.cancel()
            assert away.change == {"seat": 2, "change": "away"}  # seat 1 is the bot
            assert 0 < max(sizes) <= watchers + 3
            for client in streams:
                await client.aclose()


async def _drain(stream: trio.abc.ReceiveStream) -> None:
    while await stream.receive_some(65536):
        pass
