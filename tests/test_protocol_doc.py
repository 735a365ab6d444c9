"""What docs/PROTOCOL.md tells a bot author about messages a client meets without asking: a
``seat_update`` with no ``change``, a second ``hello``, and a ``state`` whose ``history`` grew
by more than its ``event``. Each is pinned against the server and looked up in the page."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from server_support import capped, memory_server, next_of, play_hands
from tongits.client.connection import ServerError
from tongits.protocol import Pong, SeatUpdate, State
from tongits.server.bots import policy_names

DOC = (Path(__file__).parents[1] / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return DOC.split(title, 1)[1].split("\n### ", 1)[0]


@capped
async def test_a_spectator_arriving_pushes_a_seat_update_without_change(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(bot_delay=1.0) as (_server, connect), connect("Ana") as ana:
        joined = await ana.create_table("Watched", bots=2, timer=0)
        before = await next_of(ana, SeatUpdate)  # the seats create_table filled
        await next_of(ana, State)  # the match has begun
        async with connect("Sam") as sam:
            await sam.spectate(joined.table)
            update = await next_of(ana, SeatUpdate)
            assert update.change is None and update.seats == before.seats
    assert "whenever a spectator\narrives or leaves" in _section("### `seat_update`")


@capped
async def test_a_second_hello_is_refused_with_bad_field_as_documented(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        with pytest.raises(ServerError) as refused:
            await ana.request({"type": "hello", "version": 1, "name": "Ana", "kind": "human"})
        assert refused.value.code == "bad_field"
        assert isinstance(await ana.request({"type": "ping"}), Pong)  # still open
    assert "`bad_field` for a second `hello`" in _section("### `hello`")


def test_the_view_section_says_an_automatic_fold_has_no_state_of_its_own() -> None:
    view = _section("### `view` (in `state`)")
    assert "the automatic fold has no `state` of its own" in view


@capped
async def test_a_catching_up_state_after_a_hand_result_is_one_seq_below_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A client that drops every state whose ``seq`` it has passed (as a careful one might,
    reading "seq increases by one per state") would drop this one: the page says to take it."""
    async with memory_server(bot_delay=1.0) as (_server, connect), connect("Ana") as ana:
        await ana.create_table("Caught", bots=2, timer=0)
        (result,) = await play_hands(ana, 1)
        await ana.request({"type": "sync"})
        synced = await next_of(ana, State)
        assert synced.seq == result.seq - 1 and synced.view["phase"] == "over"
    state = _section("### `state`")
    assert "do not drop it as old or as a duplicate" in state
    assert "below your `seq` if you last had a `hand_result`" in _section("### Resuming a seat")


def test_the_seat_entry_names_every_policy_a_server_bot_may_have() -> None:
    """The seat entries' ``policy`` row named three policies; a table may seat ``expert`` too
    (``add_bot`` takes it, ``welcome`` lists ``bot:expert``)."""
    row = next(line for line in _section("### Seat entries").splitlines()
               if line.startswith("| `policy?`"))
    assert all(f"`{name}`" in row for name in policy_names()), row


@capped
async def test_a_remote_bot_alone_with_server_bots_keeps_its_table_open(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The page said a table closes when "no human" holds a seat, while a remote bot's seat
    reads ``player: "bot"``: a bot author could not tell whether such a table lasts."""
    async with memory_server(bot_delay=1.0) as (_server, connect), \
            connect("Robo", kind="bot") as robo:
        await robo.create_table("Bots only", bots=2, timer=0)
        (result,) = await play_hands(robo, 1)
        assert result.standings["hands"] == 1
        (entry,) = await robo.list_tables()
        assert entry["humans"] == 0 and entry["seats"][0]["remote"] is True
    assert 'client that said `kind: "bot"` counts as a human' in DOC
