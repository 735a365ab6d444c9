"""The table screen driven through a pipe (prompt_toolkit's create_pipe_input + DummyOutput):
keys in, moves out through the session, text on the screen."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Awaitable, Callable, Sequence

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output import DummyOutput, Output
from prompt_toolkit.output.vt100 import Vt100_Output
from screen_support import SETTLE_CAP, finished, settle
from tongits.client.tui.app import (
    _LOCAL_COMMANDS,
    STILL_THINKING,
    THINKING,
    TINY_BELOW,
    TINY_ROWS,
    Fit,
    TableScreen,
    fit_for,
    screen_for,
)
from tongits.client.tui.commands import COMMANDS, help_lines
from tongits.client.tui.hint import choose_move, hint_lines
from tongits.client.tui.net import ENDED
from tongits.client.tui.render import log_panel, screen_text, to_text
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import ConnectionChanged, LinkStatus, Notice
from tongits.engine import Action, Options, Phase, SeatView
from tongits.protocol.maps import standings_map

Scenario = Callable[[TableScreen, PipeInput, FakeSession], Awaitable[None]]


def run_screen(
    scenario: Scenario,
    hint: Callable[[SeatView, Sequence[str]], list[str]] = hint_lines,
    output: Output | None = None,
    **session_args: object,
) -> TableScreen:
    async def main() -> TableScreen:
        with create_pipe_input() as pipe:
            session = FakeSession(names=("Ana", "Bob", "Cara"), **session_args)  # type: ignore[arg-type]
            screen = TableScreen(
                session, input=pipe, output=output or DummyOutput(), colour=False, hint=hint
            )
            task = asyncio.create_task(screen.run())
            await settle(lambda: screen.state.view is not None)
            try:
                await scenario(screen, pipe, session)
            finally:
                screen.app.exit()
                await asyncio.wait_for(task, 5)
            return screen

    return asyncio.run(main())


async def play_hand(screen: TableScreen, pipe: PipeInput, session: FakeSession,
                    moves: int | None = None) -> list[str]:
    """Type the hint-player's choice until the hand is over (or ``moves`` were typed); return
    what was typed."""
    typed: list[str] = []
    while (screen.state.view is not None and screen.state.view.legal
           and (moves is None or len(typed) < moves)):
        line = str(choose_move(screen.state.view))
        accepted = len(session.accepted)
        pipe.send_text(line + "\r")
        typed.append(line)
        await settle(lambda n=accepted: len(session.accepted) > n)  # type: ignore[misc]
    return typed


def test_a_whole_hand_through_the_keyboard() -> None:
    seen: dict[str, object] = {}

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        seen["typed"] = await play_hand(screen, pipe, session)
        seen["accepted"] = [str(m) for m in session.accepted]
        await settle(lambda: screen.state.standings is not None)
        seen["screen"] = screen_for(screen.state)
        pipe.send_text("\r")  # Enter: the next hand
        await settle(lambda: screen.state.hands_seen == 2)
        seen["second"] = screen_for(screen.state)

    screen = run_screen(scenario, seed=5)
    assert seen["typed"] == seen["accepted"] and len(seen["accepted"]) > 3  # type: ignore[arg-type]
    text = str(seen["screen"])
    # the offline game's standings are a server's (``standings_map``): they count the hands
    assert "Hand over:" in text and "─ after 1 hand: Ana " in text and "Enter: next hand" in text
    assert all(len(line) <= 80 for line in text.split("\n")) and len(text.split("\n")) <= 23
    assert "hand 2" in str(seen["second"]) and screen.state.view is not None
    assert screen.state.view.phase is not Phase.OVER


def test_score_says_the_chips_and_the_ante_pot() -> None:
    seen: dict[str, str] = {}

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        await play_hand(screen, pipe, session)
        await settle(lambda: screen.state.standings is not None)
        pipe.send_text("score\r")
        await settle(lambda: bool(screen.state.notes))
        seen["said"] = screen.state.notes[-1].text

    screen = run_screen(scenario, seed=5, options=Options.from_dict({"ante": 5}))
    standings = screen.state.standings
    assert standings is not None and standings["pot"] == 15
    ledger = standings["chips"]
    assert seen["said"] == (
        f"chips: Ana {ledger[0]:+d} · Bob {ledger[1]:+d} · Cara {ledger[2]:+d} · pot 15")


def test_score_asked_while_the_bots_play_stays_until_our_next_move() -> None:
    """``score`` typed while the bots played was on the message line, which says the present:
    the next bot's move (0.8 s later at ``tongits play``) took it away unread."""
    from tongits.client.tui.state import StateUpdate, TableState

    session = FakeSession(seed=5, names=("Ana", "Bob", "Cara"))
    views: list[SeatView] = []
    state = TableState()

    def sink(update: object) -> None:
        state.apply(update)  # type: ignore[arg-type]
        if isinstance(update, StateUpdate):
            views.append(update.view)

    session.start(sink)
    while state.view is not None and state.view.legal:
        session.send_move(choose_move(state.view))
    # a view in which another seat is to play, and the next, after that seat's move
    at = next(i for i, view in enumerate(views[:-1])
              if view.to_act != view.seat and views[i + 1].history != view.history)
    watching = TableState()
    watching.apply(StateUpdate(views[at], session.seats(), None, table="t1"))
    with create_pipe_input() as pipe:
        screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False,
                             state=watching)
        screen.submit("score")
        watching.apply(StateUpdate(views[at + 1], session.seats(), None, table="t1"))
    assert "no hand has been settled yet" in screen_text(watching, now=0.0)


def test_refused_input_is_not_sent_and_says_why() -> None:
    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None and view.legal
        bad = "discard Kd" if view.phase is Phase.START else "draw"
        pipe.send_text(bad + "\r")
        await settle(lambda: screen.state.message_is_error)
        assert session.accepted == []
        reason = "draw or pick first" if view.phase is Phase.START else "already drew"
        if view.turn == 0:
            reason = "first turn has no draw"
        assert reason in screen_for(screen.state)
        pipe.send_text("meld 7h 7x\r")
        await settle(lambda: "not a card" in screen.state.message)

    run_screen(scenario, seed=2)


def test_keys_draw_hint_sort_and_tab_completion() -> None:
    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None
        if view.phase is Phase.PLAY:  # we deal: finish the first turn by discarding
            pipe.send_text(str(choose_move(view)) + "\r")
            await settle(lambda: bool(session.accepted))
            while screen.state.view is not None and screen.state.view.phase is Phase.PLAY:
                pipe.send_text(str(choose_move(screen.state.view)) + "\r")
                await asyncio.sleep(0.02)
        count = len(session.accepted)
        pipe.send_text("\x1bOQ")  # F2: draw
        await settle(lambda: len(session.accepted) > count)
        assert session.accepted[-1].action is Action.DRAW
        pipe.send_text("\x1bOS")  # F4: hint
        await settle(lambda: bool(screen.state.notes))
        assert "count" in screen_for(screen.state) and "best:" in screen_for(screen.state)
        pipe.send_text("\x1b[15~")  # F5: sort by rank
        await settle(lambda: screen.state.sort_by_rank)
        pipe.send_text("disc\t")
        await settle(lambda: screen.buffer.text == "discard ")
        pipe.send_text("\x15")  # Ctrl-U: clear the line
        pipe.send_text("say hello table\r")
        await settle(lambda: "» Ana: hello table" in screen_for(screen.state))

    run_screen(scenario, seed=4)


def test_a_paste_of_several_lines_comes_up_a_line_at_each_enter() -> None:
    """In tmux, a paste of "draw" and "discard 9s" (bracketed, as terminals paste) went into
    the one-line input unseen (it showed the paste's last, empty, line) and the next Enter sent
    both lines as one, refused. Now each line comes up on its own, for its own Enter."""
    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        pipe.send_text("\x1b[200~say hello table\r\n\nsay gg\n\x1b[201~")
        await settle(lambda: screen.buffer.text == "say hello table")
        assert "pasted 2 lines: Enter sends this one" in screen_for(screen.state)
        pipe.send_text("\r")
        await settle(lambda: screen.buffer.text == "say gg")
        assert "» Ana: hello table" in screen_for(screen.state)
        pipe.send_text("\r")
        await settle(lambda: "» Ana: gg" in screen_for(screen.state))
        assert screen.buffer.text == ""
        pipe.send_text("\x1b[200~say one\nsay two\x1b[201~")
        await settle(lambda: screen.buffer.text == "say one")
        pipe.send_text("\x03")  # ^C: the line and the rest of the paste are dropped
        await settle(lambda: screen.buffer.text == "")
        pipe.send_text("\r")
        await asyncio.sleep(0.05)
        assert screen.buffer.text == "" and "say two" not in screen_for(screen.state)

    run_screen(scenario, seed=4)


class HeldHint:
    """The real hint, held back until the test lets it go: what the screen does while the
    search is still running is then observable without any timing."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked: list[SeatView] = []

    def __call__(self, view: SeatView, names: Sequence[str] = ()) -> list[str]:
        self.asked.append(view)
        lines = hint_lines(view, names)
        if not self.release.wait(SETTLE_CAP):
            raise AssertionError("the test never released the hint")
        return lines


def test_the_screen_takes_commands_while_the_hint_searches() -> None:
    """F4 answers "thinking…" at once; another command typed before the hint arrives is
    answered first; the hint then shows the expert's advice for the view it was asked about."""
    held = HeldHint()

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None
        pipe.send_text("\x1bOS")  # F4: hint
        await settle(lambda: screen.state.message == THINKING and bool(held.asked))
        pipe.send_text("sort\r")
        await settle(lambda: screen.state.sort_by_rank)
        assert "sorted by rank" in screen.state.message and not screen.state.notes
        held.release.set()
        assert screen.hint_task is not None
        await screen.hint_task
        assert held.asked == [view] and screen.state.view is view
        shown = [line.text for line in screen.state.notes]
        assert shown == hint_lines(view, screen.state.names) and shown[0].startswith("best:")
        assert screen.state.message == "hand sorted by rank"  # the answer typed meanwhile stays

    run_screen(scenario, hint=held, seed=4)


def test_a_hint_for_a_position_that_is_gone_is_dropped() -> None:
    held = HeldHint()

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None and view.legal
        pipe.send_text("\x1bOS")  # F4: hint
        await settle(lambda: bool(held.asked))
        pipe.send_text(str(choose_move(view)) + "\r")
        await settle(lambda: screen.state.view is not view)
        held.release.set()
        assert screen.hint_task is not None
        await screen.hint_task
        assert not any(line.text.startswith("best:") for line in screen.state.notes)

    run_screen(scenario, hint=held, seed=4)


def test_f4_again_while_the_hint_searches_starts_no_second_search() -> None:
    """A second F4 before the hint arrives says it is still thinking and starts nothing (the
    search runs in a thread that cannot be stopped: two would share the cores); the one
    running shows its hint."""
    held = HeldHint()

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None
        pipe.send_text("\x1bOS")  # F4: hint
        await settle(lambda: screen.state.message == THINKING and bool(held.asked))
        first = screen.hint_task
        pipe.send_text("\x1bOS")  # F4 again
        await settle(lambda: screen.state.message != THINKING or len(held.asked) > 1)
        assert screen.state.message == STILL_THINKING and screen.hint_task is first
        held.release.set()
        assert first is not None
        await first
        assert held.asked == [view] and screen.hint_task is first
        assert [line.text for line in screen.state.notes] == hint_lines(view)
        assert screen.state.message == ""

    run_screen(scenario, hint=held, seed=4)


def test_f4_again_after_the_game_moved_on_hints_the_new_position() -> None:
    """F4, a move, F4 again while the first search still runs: the first hint (for a position
    that is gone) is dropped and the search starts again for the position on the screen."""
    held = HeldHint()

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None and view.legal
        pipe.send_text("\x1bOS")  # F4: hint
        await settle(lambda: bool(held.asked))
        pipe.send_text(str(choose_move(view)) + "\r")
        await settle(lambda: screen.state.view is not view)
        pipe.send_text("\x1bOS")  # F4 again, for the new position
        await settle(lambda: screen.state.message == STILL_THINKING)
        first = screen.hint_task
        held.release.set()
        assert first is not None
        await first
        await settle(lambda: screen.hint_task is not first and len(held.asked) == 2)
        assert screen.hint_task is not None
        await screen.hint_task
        now = screen.state.view
        assert now is not None and held.asked == [view, now]
        assert [line.text for line in screen.state.notes] == hint_lines(now)

    run_screen(scenario, hint=held, seed=4)


def test_notes_longer_than_the_log_are_read_a_page_at_a_time() -> None:
    """On an 80×20 terminal the log has 3 lines and ``help`` 6: the panel shows help from its
    beginning and says how much more there is; PgDn and PgUp turn its pages."""
    terminal = Vt100_Output(io.StringIO(), lambda: Size(rows=20, columns=80), enable_cpr=False)
    pages: list[list[str]] = []

    def panel(screen: TableScreen) -> list[str]:
        return to_text(log_panel(screen.state, 3)).split("\n")

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        pipe.send_text("help\r")
        await settle(lambda: bool(screen.state.notes))
        pages.append(panel(screen))
        pipe.send_text("\x1b[6~")  # PgDn
        await settle(lambda: screen.state.notes_scroll > 0)
        pages.append(panel(screen))
        pipe.send_text("\x1b[5~")  # PgUp
        await settle(lambda: screen.state.notes_scroll == 0)
        pages.append(panel(screen))

    run_screen(scenario, output=terminal, seed=4)
    lines = [" " + line for line in help_lines()]
    assert len(lines) > 3
    first, second, back = ([line.rstrip() for line in page] for page in pages)
    assert first == [*lines[:2], f" ↓ {len(lines) - 2} more lines (PgDn)"]
    assert second[:2] == lines[2:4] and second[2].startswith(" ↑ 2 lines above (PgUp) · ↓ ")
    assert back == first


def test_help_and_options_on_a_60_column_screen_are_not_cut_off() -> None:
    """At 60×20 the two-column help ("pick 7h 7s        …") and options ("sapaw_block =
    ne…") lost their second column at the screen's edge: they come one to a line there."""
    terminal = Vt100_Output(io.StringIO(), lambda: Size(rows=20, columns=60), enable_cpr=False)
    noted: list[list[str]] = []

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        for command in ("help", "options"):
            pipe.send_text(command + "\r")
            await settle(lambda: bool(screen.state.notes)
                         and len(noted) < 2 and screen.state.notes[0].text not in
                         [page[0] for page in noted])
            noted.append([line.text for line in screen.state.notes])

    run_screen(scenario, output=terminal, seed=4)
    helped, options = noted
    assert all(len(" " + line) <= 60 for line in [*helped, *options])
    assert any(line.startswith("secret Qc Qd Qh Qs") and "hidden" in line for line in helped)
    assert any("quit" in line for line in helped)
    assert any("sapaw_block = next_turn" in line for line in options)
    assert help_lines(80) == help_lines()  # the 80-column screen keeps its two columns


def test_a_move_typed_while_the_connection_is_lost_is_not_sent() -> None:
    """While reconnecting, a move (or chat) is refused with the reason, not kept to be sent
    once the link is back, when the turn it was meant for may be gone; then it goes."""
    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None and view.legal
        move = str(choose_move(view))
        screen.on_update(ConnectionChanged(LinkStatus.LOST, "(the server closed; retry in 1s)"))
        pipe.send_text(move + "\r")
        await settle(lambda: screen.state.message_is_error)
        assert "not sent: reconnecting… type it again once the link is back" in screen_for(
            screen.state)
        pipe.send_text("say anyone there?\r")
        await settle(lambda: screen.buffer.text == "")
        pipe.send_text("sort\r")  # the screen's own commands still work
        await settle(lambda: screen.state.sort_by_rank)
        assert session.accepted == [] and "anyone" not in screen_for(screen.state)
        screen.on_update(ConnectionChanged(LinkStatus.CONNECTED))
        pipe.send_text(move + "\r")
        await settle(lambda: bool(session.accepted))
        assert str(session.accepted[0]) == move

    run_screen(scenario, seed=4)


def test_ctrl_c_clears_the_line_and_never_quits() -> None:
    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        pipe.send_text("disc")
        await settle(lambda: screen.buffer.text == "disc")
        pipe.send_text("\x03")
        await settle(lambda: screen.buffer.text == "")
        pipe.send_text("\x03")  # on an empty line: says how to leave
        await settle(lambda: "type quit" in screen.state.message)
        assert not screen.app.is_done

    run_screen(scenario, seed=4)


def test_quitting_a_game_asks_first_and_says_what_happens_to_the_seat() -> None:
    seen: dict[str, object] = {}

    async def main() -> None:
        with create_pipe_input() as pipe:
            session = FakeSession(names=("Ana", "Bob", "Cara"))
            screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False)
            task = asyncio.create_task(screen.run())
            await settle(lambda: screen.state.view is not None)
            pipe.send_text("quit\r")
            await settle(lambda: screen.state.confirming_quit)
            seen["asked"] = screen_for(screen.state)
            pipe.send_text("n\r")
            await settle(lambda: not screen.state.confirming_quit)
            await asyncio.sleep(0.05)
            seen["stayed"] = not task.done()
            pipe.send_text("\x11")  # Ctrl-Q asks too
            await settle(lambda: screen.state.confirming_quit)
            pipe.send_text("y\r")
            await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert "Quit the game? y = quit" in str(seen["asked"])
    assert "`leave` gives your seat to a bot" in str(seen["asked"])
    assert "quitting ends it" in str(seen["asked"])
    assert seen["stayed"] is True


def test_f3_always_opens_the_picks_and_never_plays_by_itself() -> None:
    seen: dict[str, object] = {}

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        view = screen.state.view
        assert view is not None and view.phase is Phase.START
        picks = [m for m in view.legal if m.action is Action.PICK]
        assert len(picks) == 1  # the case that used to play the pick at once
        pipe.send_text("\x1bOR")  # F3
        await settle(lambda: screen.buffer.text == "pick ")
        await asyncio.sleep(0.05)
        seen["sent"] = list(session.accepted)
        pipe.send_text("\t\r")  # the one pick in the menu, then Enter
        await settle(lambda: bool(session.accepted))
        seen["picked"] = session.accepted[0]
        seen["pick"] = picks[0]
        pipe.send_text("disc")
        pipe.send_text("\x1bOR")  # F3 with no pick legal (we picked) keeps the line
        await settle(lambda: "F3" in screen.state.message)
        seen["kept"] = screen.buffer.text

    run_screen(scenario, seed=5)
    assert seen["sent"] == [] and seen["picked"] == seen["pick"]
    assert seen["kept"] == "disc"


def test_every_command_the_screen_answers_itself_has_a_handler() -> None:
    """``TableScreen._local`` dispatches on the command's name: a new one needs its entry."""
    assert {name for name, spec in COMMANDS.items() if spec.action is None} == set(_LOCAL_COMMANDS)


def test_a_spectator_at_the_end_of_a_hand_is_not_offered_the_next_deal() -> None:
    """A spectator's screen said "Enter: next hand" when a hand ended, and Enter asked the
    server, which refused it (``not_seated``: only a seated player may ask)."""
    from tongits.client.tui.render import screen_text
    from tongits.client.tui.state import HandOver, StateUpdate, TableState
    from tongits.engine import seat_view

    session = FakeSession(seed=5, names=("Ana", "Bob", "Cara"))
    played = TableState()
    session.start(played.apply)
    while played.view is not None and played.view.legal:
        session.send_move(choose_move(played.view))
    hand = session.hand
    assert hand.over and hand.result is not None
    watching = TableState()
    watching.apply(StateUpdate(seat_view(hand, None), session.seats(), None, table="t1"))
    watching.apply(HandOver(hand.result.to_dict(), standings_map(session.match, session.names)))
    text = screen_text(watching, now=0.0)
    assert "Enter: next hand" not in text and " the players deal the next hand" in text
    with create_pipe_input() as pipe:
        screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False,
                             state=watching)
        screen.submit("")
    assert session.hand is hand  # nothing asked: FakeSession.next_hand would have dealt
    assert watching.message == "the players deal the next hand" and not watching.message_is_error


def test_a_spectator_asking_for_a_hint_is_told_on_the_message_line() -> None:
    """F4 while watching put "you are watching: no advice" in the log's place as a hint's note,
    which goes with the next move: at a table of bots a spectator typing ``hint`` saw nothing."""
    from tongits.client.tui.state import StateUpdate, TableState
    from tongits.engine import seat_view

    session = FakeSession(seed=5, names=("Ana", "Bob", "Cara"))
    watching = TableState()
    watching.apply(StateUpdate(seat_view(session.hand, None), session.seats(), None, table="t1"))
    with create_pipe_input() as pipe:
        screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False,
                             state=watching)
        screen.submit("hint")
    assert watching.message == "you are watching: hints are for the players"
    assert watching.message_is_error and screen.hint_task is None and not watching.notes


def _shown(screen: TableScreen) -> list[str]:
    """The rows prompt_toolkit last drew, as text (its renderer keeps the screen it drew)."""
    drawn = screen.app.renderer._last_screen
    assert drawn is not None
    size = screen.app.output.get_size()
    return ["".join(drawn.data_buffer[row][col].char for col in range(size.columns)).rstrip()
            for row in range(size.rows)]


@pytest.mark.parametrize("rows", [10, 12, 14, 17])
def test_a_terminal_of_few_rows_shows_the_table_and_the_newest_line_of_the_log(
        rows: int) -> None:
    """Below 13 rows prompt_toolkit said only "Window too small..."; at 14 the log was drawn
    for three lines where the screen left it one, which showed the oldest of them: the last
    move stayed out of sight. Below ``TINY_BELOW`` rows the table is drawn tiny (opponents in
    two lines, our melds in one, no rules), down to ``TINY_ROWS``."""
    written = io.StringIO()
    terminal = Vt100_Output(written, lambda: Size(rows=rows, columns=80), enable_cpr=False)
    shown: list[str] = []

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        await play_hand(screen, pipe, session, moves=4)
        newest = to_text(log_panel(screen.state, 1, 80)).strip()

        def drawn_newest() -> bool:
            shown[:] = _shown(screen)
            return any(line.strip() == newest for line in shown)

        await settle(drawn_newest)

    run_screen(scenario, output=terminal, seed=4)
    assert "Window too small" not in written.getvalue()
    text = "\n".join(shown)
    assert "Bob" in text and "Cara" in text and "Stock" in text and "count" in text
    assert fit_for(rows) is (Fit.TINY if rows < TINY_BELOW else Fit.SHORT)
    assert rows >= TINY_ROWS


def test_a_hint_asked_once_the_hand_is_over_leaves_the_result_in_view() -> None:
    """F4 at a hand's end searched the finished hand and put "best: no meld … the hand is
    over" in the log's place, where the result stands, until the next deal."""
    state, session = finished(4, ("Ana", "Bob", "Cara"))
    shown = screen_text(state, now=0.0)
    assert "Hand over" in shown
    with create_pipe_input() as pipe:
        screen = TableScreen(session, input=pipe, output=DummyOutput(), colour=False,
                             state=state)
        screen.submit("hint")
    assert screen.hint_task is None and not state.notes
    assert state.message == "the hand is over: no hint (review grades your decisions)"
    assert "Hand over" in screen_text(state, now=0.0)


def test_a_terminal_of_fifteen_rows_still_shows_the_table() -> None:
    """A phone's terminal held sideways, a split tmux pane: below 18 rows prompt_toolkit said
    only "Window too small..." (the full layout's fixed rows did not fit). Below 20 rows the
    table is drawn short: the opponents in three lines, no options rule, no keys line."""
    written = io.StringIO()
    terminal = Vt100_Output(written, lambda: Size(rows=15, columns=80), enable_cpr=False)

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        await settle(lambda: "legal:" in written.getvalue())

    run_screen(scenario, output=terminal, seed=4)
    drawn = written.getvalue()
    assert "Window too small" not in drawn
    assert "Bob" in drawn and "Cara" in drawn and "Stock" in drawn and "legal:" in drawn
    assert "F4 hint" not in drawn and "standard rules" not in drawn  # what gave way


@pytest.mark.parametrize("typed", ["again", "lobby"])
def test_again_or_lobby_after_the_session_ended_leaves_its_answer_on_the_message_line(
        typed: str) -> None:
    """The match over, the server restarted (the session ended for good, nothing to resume):
    Ben typed ``again``; the log said "not connected any more (the connection ended)…", but the
    message line below it said "a new match with the same settings…", as if one were coming."""
    seen: dict[str, str] = {}

    async def scenario(screen: TableScreen, pipe: PipeInput, session: FakeSession) -> None:
        def ended() -> None:  # as NetSession answers a request once it has ended for good
            session.sink(Notice(ENDED))

        session.again = ended  # type: ignore[method-assign]
        session.to_lobby = ended  # type: ignore[method-assign]
        screen.lobby = lambda: None  # type: ignore[assignment]
        await play_hand(screen, pipe, session)
        screen.state.match_over = True
        pipe.send_text(typed + "\r")
        await settle(lambda: any(words in screen.state.message for words in (
            "not connected any more", "a new match", "back to the lobby")))
        seen["said"] = screen.state.message

    run_screen(scenario, seed=5)
    assert seen["said"] == ENDED
