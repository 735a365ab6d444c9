"""The table screen: a prompt_toolkit full-screen application over one ``TableState``.

The layout is built by small factories, each a window whose text is a render function of the
state (ptpython's ``layout.py``); the only input is one command line whose completer reads the
latest view. The screen talks to the game only through a ``Session``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, Protocol, cast

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, ConditionalCompleter
from prompt_toolkit.filters import Condition, FilterOrBool
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import (
    DynamicContainer,
    Float,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output import ColorDepth, Output
from tongits.engine import Action, Move, SeatView
from tongits.engine.review import review_decisions
from tongits.protocol.phrases import counted

from ..review import render as render_review
from . import render
from .commands import CommandError, Local, help_lines, read_command
from .completion import MoveCompleter
from .hint import hint_lines
from .session import Session
from .state import LinkStatus, TableState, Update

#: Below this many rows (a phone's terminal held sideways, a split pane) the table is drawn
#: short: the opponents in three lines, no options rule, no keys line (``help`` has them), so
#: that the log keeps lines; at 17 rows and fewer the full layout did not fit at all.
SHORT_BELOW = 20
#: Below this many rows the short layout leaves the log fewer than three lines (at 12 and
#: fewer it did not fit at all: prompt_toolkit said only "Window too small..."), so the table
#: is drawn tiny: the opponents in two lines, our melds in one, no rules between the parts
#: (``score`` has the standings). It fits down to ``TINY_ROWS``, the log's line the last.
TINY_BELOW = 16
THINKING = "thinking… (the hint searches; keep typing)"
#: F4 again while the search runs: one search at a time (a thread cannot be stopped).
STILL_THINKING = "still thinking about the hint… (keep typing)"
#: Quitting a table whose match has not begun: the server keeps such a seat only its short
#: pregame grace (10 s by default), and closes a table nobody is left at.
WAITING_QUIT = ("No card is dealt yet: the table closes within seconds if nobody is left at it, "
                "its invite link with it; connect again at once to keep it.")


class Fit(Enum):
    """How much of the table the terminal's height holds, and so the rows of each part."""

    FULL = "full"
    SHORT = "short"
    TINY = "tiny"

    @property
    def opponents(self) -> int:
        return {Fit.FULL: 5, Fit.SHORT: 3, Fit.TINY: 2}[self]

    @property
    def meld_rows(self) -> int:
        """Our melds' lines (a long run wraps onto the second)."""
        return 1 if self is Fit.TINY else render.ME_MELD_ROWS

    @property
    def rules(self) -> int:
        """The rule carrying the standings and the one over the log: one line each."""
        return 0 if self is Fit.TINY else 1

    @property
    def extras(self) -> int:
        """The options rule and the keys line: one line each."""
        return 1 if self is Fit.FULL else 0

    def fixed_rows(self) -> int:
        """Every row but the log's, with a title of one line and the hand on one."""
        title = centre = message = prompt = seat_header = hand = 1
        return (title + self.opponents + 2 * self.rules + centre + 2 * self.extras
                + seat_header + self.meld_rows + hand + message + prompt)


#: The fewest rows the tiny layout fits in with one line of the log.
TINY_ROWS = Fit.TINY.fixed_rows() + 1


def fit_for(rows: int) -> Fit:
    """The layout a terminal of ``rows`` rows is drawn in."""
    if rows < TINY_BELOW:
        return Fit.TINY
    return Fit.SHORT if rows < SHORT_BELOW else Fit.FULL


def log_rows(state: TableState) -> int:
    """The log's lines: what the other regions leave (a banner may take more than one), one at
    least. The log is drawn for the lines it is given: told three where the screen left one, it
    showed the oldest of the three and hid the newest."""
    cols, fit = _cols(), _fit()
    hand = len(render.hand_rows(state, cols))
    return max(1, _rows() - fit.fixed_rows() - (render.title_rows(state, cols) - 1) - (hand - 1))


def _fit() -> Fit:
    return fit_for(_rows())


def _cols() -> int:
    return get_app().output.get_size().columns


def _rows() -> int:
    return get_app().output.get_size().rows


def _text(make: Callable[[], list[tuple[str, str]]]) -> FormattedTextControl:
    return FormattedTextControl(lambda: cast(StyleAndTextTuples, make()))


def opponents_row(state: TableState) -> VSplit:
    def panel(offset: int) -> Callable[[], list[tuple[str, str]]]:
        def make() -> list[tuple[str, str]]:
            half = (_cols() - 1) // 2
            cols = half if offset == 1 else _cols() - 1 - half
            seat = (render.my_seat(state) + offset) % 3
            return render.opponent_panel(state, seat, cols, _fit().opponents,
                                         now=time.monotonic())

        return make

    return VSplit(
        [
            Window(_text(panel(1)), width=lambda: (_cols() - 1) // 2),
            Window(width=1, char="│", style="class:dim"),
            Window(_text(panel(2))),
        ],
        height=lambda: _fit().opponents,
    )


def table_body(state: TableState, command_line: Window) -> HSplit:
    def now() -> float:
        return time.monotonic()

    return HSplit(
        [
            Window(_text(lambda: render.title_line(state, now(), _cols())),
                   height=lambda: render.title_rows(state, _cols())),
            opponents_row(state),
            Window(_text(lambda: render.standings_rule(state, _cols())),
                   height=lambda: _fit().rules),
            Window(_text(lambda: render.centre_line(state, _cols())), height=1),
            Window(_text(lambda: render.options_rule(state, _cols())),
                   height=lambda: _fit().extras),
            Window(_text(lambda: render.me_panel(state, _cols(), now(), _fit().meld_rows)),
                   height=lambda: render.me_rows(state, _cols(), _fit().meld_rows)),
            Window(height=lambda: _fit().rules, char="─", style="class:dim"),
            Window(_text(lambda: render.log_panel(state, log_rows(state), _cols()))),
            Window(_text(lambda: render.message_line(state, _cols(), _fit() is Fit.FULL)),
                   height=1),
            Window(_text(lambda: render.keys_line(state, _cols())),
                   height=lambda: _fit().extras),
            command_line,
        ]
    )


def lobby_body(state: TableState, command_line: Window) -> HSplit:
    return HSplit(
        [
            Window(_text(lambda: render.lobby_title(state, _cols())),
                   height=lambda: render.title_rows(state, _cols())),
            Window(_text(lambda: render.lobby_panel(
                state, _rows() - 3 - render.title_rows(state, _cols()), _cols()))),
            Window(_text(lambda: render.message_line(state, _cols())), height=1),
            Window(_text(lambda: [("class:dim", " Enter a command · help · quit")]), height=1),
            command_line,
        ]
    )


class LobbyCommands(Protocol):
    """What the lobby screen asks of the lobby (``lobby.LobbyJoin``): the
    server's ``Lobby`` is another thing."""

    #: The lobby's commands, shown for ``help``.
    help: str

    def choose(self, line: str) -> str | None: ...


def command_line(buffer: Buffer) -> Window:
    return Window(
        BufferControl(buffer),
        height=1,
        get_line_prefix=lambda line, wrap: [("class:turn", "> ")],
    )


class TableScreen:
    """The table screen bound to a session; ``run`` shows it until ``quit`` or Ctrl-C."""

    def __init__(
        self,
        session: Session,
        *,
        state: TableState | None = None,
        input: Input | None = None,
        output: Output | None = None,
        colour: bool | None = None,
        lobby: LobbyCommands | None = None,
        hint: Callable[[SeatView, Sequence[str]], list[str]] = hint_lines,
    ) -> None:
        self.session = session
        self.hint = hint
        #: The last hint being computed (``None`` before the first): tests await it.
        self.hint_task: asyncio.Task[None] | None = None
        #: F4 was pressed again, for a newer position, while a hint was being computed.
        self._hint_again = False
        #: The lines of a paste still to come up, one at each Enter (``_paste``).
        self.pasted: list[str] = []
        self.lobby = lobby
        self.state = state or TableState()
        self.state.has_lobby = lobby is not None
        self.completer = MoveCompleter(lambda: self.state.view)
        self.buffer = Buffer(
            completer=ConditionalCompleter(
                self.completer, Condition(lambda: self.state.lobby is None)
            ),
            complete_while_typing=True,
            multiline=False,
            history=InMemoryHistory(),
            accept_handler=self._accept,
        )
        colour = render.colour_wanted() if colour is None else colour
        prompt = command_line(self.buffer)
        table, lobby_screen = table_body(self.state, prompt), lobby_body(self.state, prompt)
        root = FloatContainer(
            DynamicContainer(lambda: lobby_screen if self.state.lobby is not None else table),
            # Above the message and keys lines, never over them (nor over the prompt).
            floats=[Float(xcursor=True, bottom=3, content=CompletionsMenu(max_height=8))],
        )
        self.app: Application[Any] = Application(
            layout=Layout(root, focused_element=self.buffer),
            key_bindings=self._bindings(),
            style=render.make_style(colour),
            full_screen=True,
            refresh_interval=0.5,
            input=input,
            output=output,
            color_depth=None if colour else ColorDepth.DEPTH_1_BIT,
        )

    # ----- updates from the session -----------------------------------------------------------

    def on_update(self, update: Update) -> None:
        self.state.apply(update)
        self.app.invalidate()

    async def run(self) -> None:
        """Show the screen; the terminal is restored however it ends."""
        self.session.start(self.on_update)
        try:
            await self.app.run_async()
        finally:
            self.session.close()
            await self.session.wait_closed()

    # ----- input --------------------------------------------------------------------------------

    def _accept(self, buffer: Buffer) -> bool:
        self.submit(buffer.text)
        if self.pasted:
            line = self.pasted.pop(0)
            asyncio.get_running_loop().call_soon(self._put_on_line, line)
        return False

    def _paste(self, event: KeyPressEvent) -> None:
        """A paste of several lines (moves copied from a hint or a chat) comes up one line at a
        time: the first on the line, the next at each Enter, each seen and sent on its own.
        Left to the one-line input, the whole paste went in unseen (it showed the paste's last,
        empty, line) and the next Enter sent every line as one, refused as a bad command."""
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        if not lines:
            return
        self.buffer.insert_text(lines[0])
        self.pasted = lines[1:]
        if self.pasted:
            self.state.say(f"pasted {counted(len(lines), 'line')}: Enter sends this one, "
                           "then the next comes up")

    def _put_on_line(self, line: str) -> None:
        self.buffer.text = line
        self.buffer.cursor_position = len(line)
        self.app.invalidate()

    def ask_quit(self) -> None:
        """Quit at once from the lobby, as a spectator or once disconnected; from a seat in a
        match, or at a table still waiting for its players (whose invite link may be out with
        friends), first say what happens to the seat and ask."""
        state = self.state
        if state.waiting_seated:
            state.confirming_quit = True
            state.note([WAITING_QUIT])
            state.say("Quit the game? y = quit · n = stay")
            return
        if not state.seated:
            self.app.exit()
            return
        state.confirming_quit = True
        leave = "`leave` gives your seat to a bot for good " + (
            "and goes to the lobby." if self.lobby is not None else "instead.")
        state.note([self.session.on_quit, leave])
        state.say("Quit the game? y = quit · leave = give up the seat · n = stay")

    def _answer_quit(self, text: str) -> None:
        state = self.state
        state.confirming_quit = False
        state.notes = []
        answer = text.strip().lower()
        if answer in ("y", "yes", "quit"):
            self.app.exit()
        elif answer == "leave" and self.lobby is not None:
            self._go_to_lobby()
        elif answer == "leave":
            self.session.leave()
            self.app.exit()
        else:
            state.say("still playing")

    def _answer_leave(self, text: str) -> None:
        state = self.state
        state.confirming_leave = False
        state.notes = []
        if text.strip().lower() in ("y", "yes", "leave"):
            self._go_to_lobby()
        else:
            state.say("still playing")

    def _go_to_lobby(self) -> None:
        self.state.say("back to the lobby…")  # before: a session ended for good answers at once
        self.session.to_lobby()

    def _enter_after_the_hand(self) -> None:
        """Enter once the hand is over: ask for the next deal (a spectator does not: the
        seated players do), or say that the match is over."""
        state = self.state
        if state.match_over:
            state.say("")  # the message line tells the match's end again
        elif state.view is not None and state.view.seat is None:
            state.say(render.NEXT_DEAL_WATCHING)
        else:
            self.session.next_hand()
            state.say("waiting for the next deal…")

    def submit(self, text: str) -> None:
        """Act on one typed line (also used by the key bindings)."""
        state = self.state
        if state.confirming_quit:
            self._answer_quit(text)
            return
        if state.confirming_leave:
            self._answer_leave(text)
            return
        if state.lobby is not None and self.lobby is not None:
            if text.strip().lower() == "quit":
                self.app.exit()
                return
            if text.strip().lower() in ("help", "?"):
                state.say(self.lobby.help)
                return
            error = self.lobby.choose(text)
            state.say(error or "asking the server…", error=error is not None)
            return
        if not text.strip() and (state.match_over or state.hand_over):
            self._enter_after_the_hand()
            return
        try:
            command = read_command(text, state.view, state.names)
        except CommandError as error:
            state.say(str(error), error=True)
            return
        if not self._link_up(command):
            return
        if isinstance(command, Move):
            state.notes = []
            state.say(f"sent: {command}")
            self.session.send_move(command)
            return
        self._local(command)

    def _link_up(self, command: Move | Local) -> bool:
        """Whether ``command`` may go: the screen's own commands always; a move or chat only
        while connected. A move typed while the link is down is not kept for later: by the
        time it is back the timer may have played that turn, and the move would land on
        another."""
        link = self.state.link
        if link is LinkStatus.CONNECTED or (isinstance(command, Local) and command.name != "say"):
            return True
        if link is LinkStatus.LOST:
            self.state.say("not sent: reconnecting… type it again once the link is back",
                           error=True)
        else:
            self.state.say("not sent: disconnected", error=True)
        return False

    def _local(self, command: Local) -> None:
        """A command the screen answers itself (nothing is sent but chat)."""
        _LOCAL_COMMANDS[command.name](self, command)

    def _help(self, _command: Local) -> None:
        self.state.note(help_lines(_cols()))
        self.state.say("")

    def _sort(self, _command: Local) -> None:
        state = self.state
        state.sort_by_rank = not state.sort_by_rank
        state.say("hand sorted by " + ("rank" if state.sort_by_rank else "suit"))

    def _log(self, _command: Local) -> None:
        self.scroll_log(self.page_lines())

    def _options(self, _command: Local) -> None:
        self.state.note(render.options_lines(self.state, _cols()))
        self.state.say("")

    def _score(self, _command: Local) -> None:
        """The chips as a note, which stays until our next move: on the message line, which
        says the present, a bot's move took them away within a second of being asked for."""
        scores = render.standings(self.state)
        pot = render.pot_words(self.state)
        self.state.note([
            "chips: " + " · ".join(
                [*(f"{name} {chips:+d}" for name, chips in scores), *([pot] if pot else [])])
            if scores else "no hand has been settled yet"
        ])
        self.state.say("")

    def _say(self, command: Local) -> None:
        self.session.send_chat(command.text)
        self.state.say("")

    def _start(self, _command: Local) -> None:
        if self.state.view is not None:
            self.state.say("the match has begun", error=True)
            return
        self.session.start_match()
        self.state.say("")

    def _again(self, _command: Local) -> None:
        """Once the match is over, another with the same settings (at a server, a new table,
        the old one closed with its match, shared by every player of it who types ``again``)."""
        state = self.state
        if not state.match_over:
            state.say("again: once the match is over", error=True)
        elif state.view is not None and state.view.seat is None:
            state.say("you were watching: `lobby` for the tables", error=True)
        else:
            # said first: a session that ended for good answers at once that nothing can be
            # sent any more, and that answer is the one to keep on the message line
            state.say("a new match with the same settings…")
            self.session.again()

    def _lobby(self, _command: Local) -> None:
        """Back to the lobby from a table where we hold no seat in a match under way."""
        state = self.state
        if self.lobby is None:
            state.say("no lobby here: `quit` ends this game", error=True)
        elif state.seated:
            state.say("you hold a seat: `leave` gives it to a bot for good and goes to the "
                      "lobby", error=True)
        else:
            self._go_to_lobby()

    def _leave(self, _command: Local) -> None:
        """Leave the table for the lobby; a seat in a match under way is asked about first
        (a bot plays it for good)."""
        state = self.state
        if self.lobby is None:
            state.say("no lobby here: `quit` ends this game (it is saved)", error=True)
        elif state.seated:
            state.confirming_leave = True
            state.note(["Leaving gives your seat to a bot for the rest of the match."])
            state.say("Leave the table for the lobby? y = leave · n = stay")
        else:
            self._go_to_lobby()

    def _hint(self, _command: Local) -> None:
        """Ask for the hint in a worker thread: the search takes a moment and the screen must
        keep taking keys and updates meanwhile (the engine itself stays single-threaded)."""
        state = self.state
        if state.view is None:
            state.say("no hand yet", error=True)
            return
        if state.view.seat is None:
            # A spectator has no hand to advise: said on the message line, which stays, not as
            # a hint's note, which goes with the next move (at once, at a table of bots).
            state.say("you are watching: hints are for the players", error=True)
            return
        if state.hand_over:
            # The hint of a finished hand ("best: no meld … the hand is over") took the log's
            # place, and the result beside it, until the next deal.
            state.say("the hand is over: no hint (review grades your decisions)", error=True)
            return
        if self.hint_task is not None and not self.hint_task.done():
            # One search at a time: a second one would only halve the speed of both. Asked
            # for a position the running search is not about, it follows that one.
            self._hint_again = True
            state.say(STILL_THINKING)
            return
        self._start_hint(state.view)

    def _start_hint(self, view: SeatView) -> None:
        self._hint_again = False
        self.state.say(THINKING)
        self.hint_task = self.app.create_background_task(self._show_hint(view))

    async def _show_hint(self, view: SeatView) -> None:
        """Show the hint for ``view`` once computed, unless the game moved on meanwhile (a
        stale hint would advise a position that is gone: it is dropped, and says so, or the
        search starts again for the new position when F4 was pressed again meanwhile)."""
        lines = await asyncio.to_thread(self.hint, view, self.state.names)
        state = self.state
        waiting = state.message in (THINKING, STILL_THINKING)
        if state.view is view:
            state.note(lines, about=view)
            if waiting:
                state.say("")
        elif self._hint_again and state.view is not None:
            self._start_hint(state.view)
        elif waiting:
            state.say("the game moved on: hint dropped (F4 for a new one)")
        self.app.invalidate()

    def _review(self) -> None:
        """Grade this hand's decisions with the expert's search (``tongits review``), in a
        thread so the screen stays live; the table of decisions replaces the result panel."""
        state, view = self.state, self.state.view
        if not state.hand_over or view is None or view.seat is None:
            state.say("review: once the hand is over", error=True)
            return
        seat, points, hand = view.seat, state.decisions_to_review(), state.hands_seen
        chips = state.result.chips[seat] if state.result is not None else None
        if not points:
            state.say("you had no decision to review this hand")
            return

        def progress(done: int, total: int) -> None:
            state.say(f"reviewing your decisions… {done}/{total}")
            self.app.invalidate()

        def work() -> None:
            review = review_decisions(seat, points, progress=progress)
            if state.hands_seen == hand:  # still the same hand
                heading = f"your {counted(len(review.decisions), 'decision')} this hand, " \
                          "against the expert's search:"
                state.note(render_review(review, heading, chips).splitlines())
                state.say("review done" if state.match_over else
                          "review done: Enter for the next hand")
            self.app.invalidate()

        progress(0, len(points))
        threading.Thread(target=work, name="review", daemon=True).start()

    def page_lines(self) -> int:
        """The lines PgUp and PgDn scroll: the log's but one, which stays in view."""
        return max(1, log_rows(self.state) - 1)

    def scroll_log(self, lines: int) -> None:
        """Scroll the log back (``lines`` > 0) or forward; 0 lines back is its end. Notes
        longer than the log's panel (a review) stand in its place: they scroll instead."""
        state, rows = self.state, log_rows(self.state)
        if len(state.notes) > rows:
            state.notes_scroll = max(0, render.notes_first(state, rows) - lines)
        else:
            total = len(render.log_lines(state, _cols()))  # a long chat line is wrapped
            state.log_scroll = max(0, min(total - 1, state.log_scroll + lines))
        self.app.invalidate()

    def _bindings(self) -> KeyBindings:
        """Log scrolling, ^C (clears the line), ^Q and ^D (ask to quit), F2-F5, and Tab."""
        empty = Condition(lambda: not self.buffer.text)
        keys: list[tuple[str, Callable[[KeyPressEvent], None], FilterOrBool]] = [
            ("pageup", lambda _: self.scroll_log(self.page_lines()), True),
            ("pagedown", lambda _: self.scroll_log(-self.page_lines()), True),
            ("end", lambda _: self.scroll_log(-self.state.log_scroll), empty),
            ("c-c", lambda _: self._clear_line(), True),
            ("c-q", lambda _: self.ask_quit(), True),
            ("c-d", lambda _: self.ask_quit(), empty),
            ("f2", lambda _: self.submit("draw"), True),
            ("f3", lambda _: self._offer_picks(), True),
            ("f4", lambda _: self.submit("hint"), True),
            ("f5", lambda _: self.submit("sort"), True),
            ("tab", _complete_now, True),
            (Keys.BracketedPaste, self._paste, True),
        ]
        kb = KeyBindings()
        for key, handler, when in keys:
            kb.add(key, filter=when)(handler)
        return kb

    def _clear_line(self) -> None:
        """^C clears the line (as pgcli and ptpython do), and the rest of a paste; it never
        quits."""
        if self.state.confirming_quit:
            self._answer_quit("n")
        elif self.state.confirming_leave:
            self._answer_leave("n")
        elif self.buffer.text:
            self.buffer.reset()
            self.pasted = []
        else:
            self.state.say("^C clears the line; to leave, type quit (or ^Q)")

    def _offer_picks(self) -> None:
        """F3 is always the same: ``pick `` on an empty line and the menu of legal picks (a
        line being typed is kept, and the key says why it did nothing)."""
        view = self.state.view
        picks = [m for m in view.legal if m.action is Action.PICK] if view else []
        if not picks:
            self.state.say("F3: no pick is legal now", error=True)
        elif self.buffer.text.strip() and not self.buffer.text.startswith("pick"):
            self.state.say("F3: clear the line first (^C)", error=True)
        else:
            self.buffer.text = "pick "
            self.buffer.cursor_position = len(self.buffer.text)
            self.buffer.start_completion(select_first=False)


def _complete_now(event: KeyPressEvent) -> None:
    """Tab: the next completion of the menu, or the only one at once, or the menu."""
    buffer = event.current_buffer
    if buffer.complete_state and buffer.complete_state.completions:
        buffer.complete_next()
        return
    # Typing may still be computing its own completions; answer this key at once.
    found = list(
        buffer.completer.get_completions(
            buffer.document, CompleteEvent(completion_requested=True)
        )
    )
    if len(found) == 1:
        buffer.apply_completion(found[0])
    else:
        buffer.start_completion(insert_common_part=True)


#: ``TableScreen._local``: the handler of each command the screen answers itself.
_LOCAL_COMMANDS: dict[str, Callable[[TableScreen, Local], None]] = {
    "quit": lambda screen, _: screen.ask_quit(),
    "help": TableScreen._help,
    "sort": TableScreen._sort,
    "log": TableScreen._log,
    "options": TableScreen._options,
    "score": TableScreen._score,
    "say": TableScreen._say,
    "start": TableScreen._start,
    "again": TableScreen._again,
    "lobby": TableScreen._lobby,
    "leave": TableScreen._leave,
    "review": lambda screen, _: screen._review(),
    "hint": TableScreen._hint,
}


def screen_for(state: TableState) -> str:
    """The screen as plain text at 80 columns (for tests and for logging a session)."""
    return render.screen_text(state, time.monotonic())
