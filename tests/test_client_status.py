"""The words on screen describe the present and read as English: full names in the result,
no stale status lines, the server's play for a timed-out seat said, plurals right."""

from __future__ import annotations

from dataclasses import replace
from typing import cast, get_args

import pytest
from client_positions import position
from screen_support import finished
from tongits.client.tui.hint import choose_move
from tongits.client.tui.render import screen_text
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import (
    _APPLY,
    ConnectionChanged,
    LinkStatus,
    Notice,
    SeatsChanged,
    ServerRefused,
    StateUpdate,
    TableState,
    Update,
    event_lines,
)
from tongits.engine import End, Step
from tongits.protocol.maps import SeatMap

SEATS: list[SeatMap] = [
    {"seat": 0, "name": "Ana", "player": "human"},
    {"seat": 1, "name": "Bob", "player": "human"},
    {"seat": 2, "name": "Cara", "player": "bot"},
]


def test_the_result_shows_every_name_whole() -> None:
    names = ("You", "greedy-bot-1", "greedy-bot-2 of the long name")
    state, _ = finished(3, names)
    text = screen_text(state, now=0.0)
    rows = [line for line in text.split("\n") if " count " in line and line[1] != " "]
    assert len(rows) == 3
    for name, row in zip(names, rows, strict=True):
        assert row.startswith(f" {name} ")
    assert len({row.index(" count ") for row in rows}) == 1  # one column, names aligned


def test_the_winner_reads_you_win_for_our_seat() -> None:
    state, _ = finished(0, ("You", "Bob", "Cara"))
    assert state.result is not None
    state.result = replace(state.result, winner=0, end=End.STOCK)  # our seat won
    text = screen_text(state, now=0.0)
    assert "Hand over: you win at stock-out" in text and "You wins" not in text


def test_one_card_is_singular() -> None:
    view = position("Kd", melds=[(1, "4d 5d 6d")], seat=1)
    object.__setattr__(view, "hand_sizes", (1, 1, 2))
    state = TableState()
    state.apply(StateUpdate(view, SEATS, None, table="t1"))
    text = screen_text(state, now=0.0)
    assert "1 card " in text + " " and "1 cards" not in text and "2 cards" in text


def test_the_status_line_forgets_the_moment_that_passed() -> None:
    state, session = finished(4, ("Ana", "Bob", "Cara"))
    state.say("waiting for the next deal…")
    session.next_hand()
    assert state.message == ""  # the new hand is dealt: nothing is awaited any more
    state.apply(ServerRefused("shutting_down", "the server is shutting down"))
    state.apply(ConnectionChanged(LinkStatus.LOST, "(retry in 1s)"))
    state.apply(ConnectionChanged(LinkStatus.CONNECTED))
    text = screen_text(state, now=0.0)
    assert "shutting down" not in text and "connection lost" not in text


def test_a_connection_lost_and_back_is_said_in_the_log_once_it_is_back() -> None:
    """The server killed and started again mid-hand: the banner said "connection lost,
    reconnecting" while it lasted, then went, and nothing on the screen told of it; the log
    said only "Ben is back" of the friend who reconnected later. Now it says how long ours was
    gone, once, where it happened in the hand."""
    session = FakeSession(seed=4, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    state.apply(ConnectionChanged(LinkStatus.CONNECTED), now=10.0)  # the first: nothing said
    state.apply(ConnectionChanged(LinkStatus.LOST, "(refused; retry in 1s)"), now=100.0)
    state.apply(ConnectionChanged(LinkStatus.LOST, "(refused; retry in 3s)"), now=101.0)
    assert "connection lost" in screen_text(state, now=101.0)
    state.apply(ConnectionChanged(LinkStatus.CONNECTED), now=112.4)
    state.apply(ConnectionChanged(LinkStatus.CONNECTED), now=120.0)
    lines = [line.text for line in state.log()]
    assert lines.count("connection back after 12 s") == 1 and lines[-1].startswith("connection")
    assert "connection lost" not in screen_text(state, now=112.4)


def test_a_link_gone_without_a_word_is_counted_from_when_the_server_was_last_heard() -> None:
    """Gus's Wi-Fi was out for 71 s; the client noticed 24 s in (no answer to its ping), and
    the log said "connection back after 47 s". The loss is counted from when the server was
    last heard (``ConnectionChanged.silent``), so the log says how long the link was gone."""
    session = FakeSession(seed=4, names=("Fay", "Gus", "Hal"))
    state = TableState()
    session.start(state.apply)
    state.apply(ConnectionChanged(LinkStatus.CONNECTED), now=10.0)
    state.apply(ConnectionChanged(LinkStatus.LOST, "(no answer; retry in 1s)", silent=24.0),
                now=124.0)
    state.apply(ConnectionChanged(LinkStatus.LOST, "(refused; retry in 3s)"), now=130.0)
    state.apply(ConnectionChanged(LinkStatus.CONNECTED), now=171.0)
    assert [line.text for line in state.log()].count("connection back after 71 s") == 1


def test_a_sent_move_is_not_announced_once_it_is_played() -> None:
    session = FakeSession(seed=4, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    assert state.view is not None
    move = choose_move(state.view)
    state.say(f"sent: {move}")
    session.send_move(move)
    assert "sent:" not in screen_text(state, now=0.0)


def test_moves_the_server_played_for_a_timed_out_seat_are_said() -> None:
    history = [
        {"seat": 2, "action": "draw", "timeout": True},
        {"seat": 2, "action": "discard", "card": "Jc", "timeout": True},
    ]
    steps = [Step.from_dict(step) for step in history]
    lines = [line.text for line in event_lines(steps, ["Ana", "Bob", "Cara"])]
    assert lines == [
        "Cara drew (time ran out: played by the server)",
        "Cara discarded J♣ (time ran out: played by the server)",
    ]
    session = FakeSession(seed=4, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    view = state.view
    assert view is not None and view.seat == 0
    first = choose_move(view)
    session.hand.apply(0, first)
    from tongits.engine import seat_view

    later = seat_view(session.hand, 0)
    step = replace(later.history[-1], timeout=True)
    object.__setattr__(later, "history", (*later.history[:-1], step))
    state.apply(StateUpdate(later, SEATS, None, table="t1"))
    assert state.message.startswith("your time ran out: the server played for you (")
    assert "time ran out: played by the server" in screen_text(state, now=0.0)


def test_a_spectator_is_shown_only_keys_it_can_use() -> None:
    from tongits.engine import seat_view

    session = FakeSession(seed=4, names=("Ana", "Bob", "Cara"))
    state = TableState()
    state.apply(StateUpdate(seat_view(session.hand, None), SEATS, None, table="t1"))
    text = screen_text(state, now=0.0)
    assert "watching · say TEXT to chat" in text
    assert "F2 draw" not in text and "F3 pick" not in text


def test_a_turn_the_server_played_over_two_states_is_said_whole() -> None:
    view = position("Kd 2c 9s", seat=0, to_act=1)
    start = (Step.from_dict({"seat": 2, "action": "discard", "card": "7c"}),)
    drew = (Step.from_dict({"seat": 0, "action": "draw", "timeout": True}),)
    threw = (Step.from_dict({"seat": 0, "action": "discard", "card": "Jc", "timeout": True}),)
    state = TableState()
    for history in (start, start + drew, start + drew + threw):
        state.apply(StateUpdate(replace(view, history=history), SEATS, None, table="t1"))
    assert state.message == "your time ran out: the server played for you (drew, discarded J♣)"


def test_every_update_a_session_delivers_has_a_handler() -> None:
    """``TableState.apply`` dispatches on the update's type: a new kind needs its entry."""
    assert set(get_args(Update)) == set(_APPLY)


def test_a_state_whose_history_cannot_be_read_is_said_not_a_crash() -> None:
    from tongits.client.tui.net import NetSession, SessionOptions
    from tongits.engine import seat_view
    from tongits.engine.wire import ViewMap
    from tongits.protocol import State

    async def nothing(conn: object) -> None:
        return None

    good = seat_view(FakeSession(seed=4).hand, 0).to_dict()
    heard: list[object] = []
    session = NetSession("127.0.0.1", 0, SessionOptions(name="Ana", join=nothing))
    session.sink = heard.append  # what start() sets, without starting a connection
    for bad_step in ({"seat": 7, "action": "draw"}, {"seat": 0, "action": "fly"}, "draw",
                     {"seat": 1, "action": "discard", "card": "Zz"}):
        # a malformed view, as a server with a bug (or a hostile one) might send
        view = cast(ViewMap, {**good, "history": [bad_step]})
        session._deliver(State(table="t1", seq=3, view=view, seats=[]))
    session._deliver(State(table="t1", seq=4, view=good, seats=[]))
    refused = [u for u in heard if isinstance(u, ServerRefused)]
    assert [u.code for u in refused] == ["bad_view"] * 4
    assert isinstance(heard[-1], StateUpdate) and heard[-1].view.seat == 0


async def test_a_server_message_not_of_its_type_is_left_out_where_it_arrives() -> None:
    """A server with a bug (or a hostile one) sends maps not as the protocol gives them: a seat
    with no number, a table entry whose ``hands`` is a string. The connection leaves such a
    message out (a request it answers is refused, not left waiting) and reads on, so nothing
    past it meets a map not of its type."""
    import trio
    import trio.testing
    from tongits.client.connection import Connection, ServerError
    from tongits.protocol import ChatLine, Codec, ErrorCode, Mode

    ours, theirs = trio.testing.memory_stream_pair()
    conn = Connection(ours)
    codec = Codec(Mode.BINARY)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(conn.run_reader)
            await theirs.send_all(codec.encode(
                {"type": "seat_update", "table": "t1", "seats": [{"player": "human"}]}))
            await theirs.send_all(codec.encode(
                {"type": "chat", "table": "t1", "name": "Ben", "text": "still here"}))
            assert await conn.receive() == ChatLine(table="t1", name="Ben", text="still here")

            async def answer_badly() -> None:
                codec.receive_data(await theirs.receive_some())
                request = codec.next_message()
                assert request is not None and request["type"] == "list_tables"
                await theirs.send_all(codec.encode(
                    {"type": "tables", "id": request["id"], "tables": [{"hands": "4"}]}))

            nursery.start_soon(answer_badly)
            with pytest.raises(ServerError) as refused:
                await conn.list_tables()
            assert refused.value.code == ErrorCode.BAD_FIELD
            assert "cannot be read" in refused.value.message
            nursery.cancel_scope.cancel()


def test_a_not_your_turn_refusal_goes_when_the_turn_comes() -> None:
    """"draw" typed while a bot played was refused ("not your turn: Bob is to play"), and the
    line still said so once the turn was ours, under a title saying YOUR TURN. A refusal stays
    while others play, and goes when our turn begins."""
    session = FakeSession(seed=5, names=("Ana", "Bob", "Cara"))
    updates: list[Update] = []
    session.start(updates.append)
    while True:  # play our turns until the bots have had theirs in between
        views = [u.view for u in updates if isinstance(u, StateUpdate)]
        if any(v.to_act != 0 for v in views) and views[-1].to_act == 0 and views[-1].legal:
            break
        session.send_move(choose_move(views[-1]))
    others = [i for i, u in enumerate(updates) if isinstance(u, StateUpdate) and u.view.to_act != 0]
    start = others[0]
    theirs = next(i for i in range(start, len(updates)) if i not in others)
    assert theirs - start >= 2  # a bot's turn takes more than one state
    state = TableState()
    for update in updates[: start + 1]:
        state.apply(update, now=0.0)
    state.say("not your turn: Bob is to play", error=True)
    state.apply(updates[start + 1], now=0.0)
    assert state.message_is_error  # still the others' turn: it stays to be read
    for update in updates[start + 2 : theirs + 1]:
        state.apply(update, now=0.0)
    assert state.view is not None and state.view.to_act == 0
    assert state.message == "" and not state.message_is_error


def test_a_notice_is_read_once_on_screen() -> None:
    """A notice goes to the log and to the message line under it: back from a saved seat, the
    screen read "back in your seat at t1" twice in a row. Said once, with the legal moves under
    it; a notice the log cannot show whole right above (a result beside it) keeps its line."""
    session = FakeSession(seed=3, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    assert state.view is not None and state.view.legal  # Ana's turn, mid-hand
    state.apply(Notice("back in your seat at t1", this_hand=True))
    text = screen_text(state, now=0.0)
    assert text.count("back in your seat at t1") == 1
    assert "\n legal: " in text
    state.log_scroll = 1  # the log scrolled up: the notice is not in view there
    assert " back in your seat at t1" in screen_text(state, now=0.0).split("\n")[-2]


def test_a_seat_back_on_its_turn_shows_its_new_countdown() -> None:
    """A player back from a stand-in on its own turn has a whole turn again; the server says
    so in its ``seat_update`` (no ``state`` comes): the countdown starts again from it."""
    session = FakeSession(seed=4, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    state.deadline_at = None  # a stand-in was to act: no timer shown
    state.apply(SeatsChanged(SEATS, {"seat": 1, "change": "back"}, deadline=30.0), now=100.0)
    assert state.deadline_at == 130.0
    state.apply(SeatsChanged(SEATS, {"seat": 2, "change": "away"}), now=110.0)
    assert state.deadline_at == 130.0  # no deadline said: the one shown runs on
