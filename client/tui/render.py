"""The table drawn as styled text: one pure function per screen region, each reading only the
``TableState`` (and the clock for the countdown), so every region can be tested without a
terminal. Widths are those of an 80×24 screen; a larger screen gives the log more lines.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prompt_toolkit.styles import Style
from tongits.engine import Card, End, Phase, Result, SeatView, best_arrangement
from tongits.protocol.phrases import PHRASES, chip_words, counted, paid_to, say

from .state import LogKind, LogLine, TableState, pile_throwers

Line = list[tuple[str, str]]
HIDDEN = "▒▒"
#: Lines for our own melds (a long run wraps onto the second).
ME_MELD_ROWS = 2
#: The fewest columns an opponent's melds are packed in, after the marks that lead them.
MELD_ROOM = 12
#: Lines a banner may take at the top of the screen (the log gives them up).
BANNER_ROWS = 3
SUIT_STYLE = ("class:club", "class:diamond", "class:heart", "class:spade")
PHASE_WORDS = {
    Phase.START: "draw or pick",
    Phase.PLAY: "meld, sapaw, discard",
    Phase.ANSWER: "answer the call",
    Phase.OVER: "hand over",
}
END_WORDS = {end: PHRASES[f"end.{end.value}"] for end in End}


def colour_wanted() -> bool:
    """False when the NO_COLOR convention (no-color.org) asks for no colour."""
    return not os.environ.get("NO_COLOR")


def make_style(colour: bool | None = None) -> Style:
    """The screen's style; without colour only bold, reverse and underline remain."""
    if colour is None:
        colour = colour_wanted()
    rules = {
        "title": "reverse",
        "banner": "reverse bold",
        "turn": "bold",
        "me": "bold",
        "top": "reverse bold",
        "dim": "",
        "error": "bold",
        "count": "bold",
        "chat": "italic",
        "warn": "bold",
        "bracket": "",
    }
    if colour:
        rules.update(
            {
                "title": "bg:#005f87 #ffffff",
                "banner": "bg:#af0000 #ffffff bold",
                "turn": "#ffd700 bold",
                "diamond": "#ff5f5f",
                "heart": "#ff5f5f",
                "club": "#d0d0d0",
                "spade": "#d0d0d0",
                "top": "reverse bold",
                "dim": "#808080",
                "error": "#ff5f5f bold",
                "count": "#87d7ff bold",
                "chat": "#87d787",
                "warn": "#ff8700 bold",
                "bracket": "#808080",
            }
        )
    return Style.from_dict(rules)


def card_fragment(card: Card) -> tuple[str, str]:
    return (SUIT_STYLE[card.suit], card.pretty())


def cards_line(cards: Iterable[Card], sep: str = " ") -> Line:
    out: Line = []
    for i, card in enumerate(cards):
        if i:
            out.append(("", sep))
        out.append(card_fragment(card))
    return out


def width(line: Line) -> int:
    return sum(len(text) for _, text in line)


def fit(line: Line, cols: int) -> Line:
    """``line`` cut to ``cols`` columns (the last one an ellipsis) or padded to exactly ``cols``."""
    used = width(line)
    if used <= cols:
        return [*line, ("", " " * (cols - used))] if used < cols else list(line)
    out: Line = []
    room = cols - 1
    for style, text in line:
        if room <= 0:
            break
        out.append((style, text[:room]))
        room -= len(text[:room])
    out.append(("class:dim", "…"))
    return out


def join_lines(lines: Sequence[Line]) -> Line:
    out: Line = []
    for i, line in enumerate(lines):
        if i:
            out.append(("", "\n"))
        out.extend(line)
    return out


def to_text(fragments: Iterable[tuple[str, str]]) -> str:
    return "".join(text for _, text in fragments)


def _name(state: TableState, seat: int) -> str:
    names = state.names
    return names[seat] if seat < len(names) else f"seat {seat}"


def my_seat(state: TableState) -> int:
    """The seat shown at the bottom: ours (before the deal, the one we joined), or seat 0 for
    a spectator."""
    seat = state.view.seat if state.view is not None else state.seat
    return seat if seat is not None else 0


def clock(seconds: float) -> str:
    """Seconds left as ``M:SS``, rounded up."""
    left = max(0, int(seconds + 0.999))
    return f"{left // 60}:{left % 60:02d}"


def countdown(state: TableState, now: float) -> str:
    return "" if state.deadline_at is None else clock(state.deadline_at - now)


def turn_words(view: SeatView, seat: int) -> str:
    """What ``seat`` may do now, in words, from what everyone sees (not its legal moves)."""
    if view.phase is Phase.START and view.may_call(seat):
        return "draw, pick or call"
    return PHASE_WORDS[view.phase]


def table_title(state: TableState) -> str:
    """``Friday (t3)``, or just the id until the name is known."""
    table = state.table or "table"
    if state.table_name and state.table_name != state.table:
        return f"{state.table_name} ({table})"
    return table


def banner_lines(banner: str, cols: int = 80) -> list[str]:
    """The banner (connection lost, disconnected…) broken at spaces into lines of ``cols``
    columns: the reason it carries is as long as the system's error, and what it says about
    the seat must not be cut at 80 columns. At most ``BANNER_ROWS`` lines, the last one cut."""
    rows = [to_text(line) for line in wrap([("", " ⚠ " + banner)], cols)]
    if len(rows) > BANNER_ROWS:
        rest = " ".join(row.strip() for row in rows[BANNER_ROWS - 1:])
        rows = [*rows[: BANNER_ROWS - 1], to_text(fit([("", "   " + rest)], cols))]
    return [to_text(fit([("", row)], cols)) for row in rows]


def title_rows(state: TableState, cols: int = 80) -> int:
    """The lines the title takes: one, or those of the banner that replaces it."""
    return len(banner_lines(state.banner, cols)) if state.banner else 1


def title_line(state: TableState, now: float, cols: int = 80) -> Line:
    """The table's title and whose turn it is, or the banner in its place (``title_rows``
    lines)."""
    if state.banner:
        return join_lines([[("class:banner", row)] for row in banner_lines(state.banner, cols)])
    view = state.view
    left = f" Tongits · {table_title(state)} · hand {max(state.hands_seen, 1)}"
    if state.match_hands is not None:
        left += f" of {state.match_hands}"
    if view is None:
        return fit([("class:title", left + " · waiting for the deal")], cols)
    if state.match_over:
        right = "match over "
    elif view.phase is Phase.OVER or view.to_act is None:
        right = "hand over "
        if state.next_deal_at is not None:  # the hand is over: the deal is the news
            right = f"next deal in {clock(state.next_deal_at - now)} "
    elif view.seat is not None and view.to_act == view.seat and view.legal:
        actions = ", ".join(dict.fromkeys(m.action.value for m in view.legal))
        right = f"YOUR TURN: {actions} "
    else:
        right = f"{_name(state, view.to_act)}: {turn_words(view, view.to_act)} "
    left_on_turn = countdown(state, now)
    if left_on_turn:
        right += f"⏱ {left_on_turn} "
    left = _title_left(left, cols - len(right) - 1)
    gap = max(1, cols - len(left) - len(right))
    return fit([("class:title", left + " " * gap + right)], cols)


def _title_left(left: str, room: int) -> str:
    """The title's left part in ``room`` columns: a narrow screen (a phone's terminal, 40
    columns) gives way on the left. Cut at the end, the turn and the clock were what it lost
    ("hand 2 YOUR TURN…", never the seconds left)."""
    if len(left) > room:
        left = left.removeprefix(" Tongits ·")
    if len(left) > room:
        left = left[:room - 1] + "…" if room > 1 else ""
    return left


def meld_fragments(state: TableState, meld_id: int) -> Line:
    view = state.view
    assert view is not None
    meld = next(m for m in view.melds if m.id == meld_id)
    out: Line = [("class:dim", f"#{meld.id} ")]
    if meld.secret and not meld.cards:
        out.append(("class:dim", " ".join([HIDDEN] * 4)))
    else:
        out.extend(cards_line(meld.cards))
    if meld.secret:
        out.append(("class:dim", " secret"))
    if meld.laid_off:  # who laid off which card, in order: "(9♦ T♦ Bob, J♦ Ana)"
        runs: list[tuple[list[str], int]] = []
        for card, seat in meld.laid_off:
            if runs and runs[-1][1] == seat:
                runs[-1][0].append(card.pretty())
            else:
                runs.append(([card.pretty()], seat))
        who = ", ".join(f"{' '.join(cards)} {seat_tag(state, seat)}" for cards, seat in runs)
        out.append(("class:dim", f" ({who})"))
    return out


def wrap(item: Line, cols: int, indent: int = 3) -> list[Line]:
    """``item`` broken at spaces into lines of at most ``cols`` columns, the later ones
    indented by ``indent`` (a long run stays whole: its far end is what a lay-off needs); a
    word wider than a line (a long name) is broken inside, so that none of it is cut off."""
    lines: list[Line] = [[]]
    for style, text in item:
        for i, word in enumerate(text.split(" ")):
            piece = (" " if i else "") + word
            if width(lines[-1]) + len(piece) > cols and width(lines[-1]) > indent:
                lines.append([("", " " * indent)])
                piece = word
            while width(lines[-1]) + len(piece) > cols and cols > indent + 1:
                room = cols - width(lines[-1])
                lines[-1].append((style, piece[:room]))
                lines.append([("", " " * indent)])
                piece = piece[room:]
            if piece:
                lines[-1].append((style, piece))
    return lines


def seat_tag(state: TableState, seat: int) -> str:
    """The name of ``seat`` beside a card it laid off: ``you``, else its name whole (two
    names that begin alike, ``greedy-bot-1`` and ``greedy-bot-2``, are told apart only by
    their ends, so no part of a name is left out)."""
    view = state.view
    if view is not None and view.seat == seat:
        return "you"
    return _name(state, seat)


def _pack(items: Sequence[Line], cols: int, rows: int) -> list[Line]:
    """Lay ``items`` left to right in at most ``rows`` lines of ``cols`` columns; an item
    wider than a line is wrapped onto lines of its own. No rows left (a short panel whose
    lines the header, the marks and a revealed hand took) is no lines, not a crash."""
    if rows <= 0:
        return []
    items = [piece for item in items for piece in wrap(item, cols)]
    lines: list[Line] = []
    current: Line = []
    for i, item in enumerate(items):
        need = width(item) + (2 if current else 0)
        if current and width(current) + need > cols:
            lines.append(current)
            current = []
        if len(lines) == rows:
            left = len(items) - i
            lines[-1] = fit(lines[-1], cols - 9) + [("class:dim", f" +{left} more")]
            return lines
        if current:
            current.append(("", "  "))
        current.extend(item)
    if current:
        if len(lines) == rows:
            lines[-1] = fit(lines[-1], cols - 9) + [("class:dim", " +more")]
        else:
            lines.append(current)
    return lines


def seat_header(state: TableState, seat: int, *, me: bool = False) -> Line:
    """Name, human/bot label and card count; the opponent's marks go on ``seat_marks``."""
    view = state.view
    info = state.seats[seat]
    to_act = view is not None and view.to_act == seat and view.phase is not Phase.OVER
    out: Line = [("class:turn", "▶ " if to_act else "  ")]
    out.append(("class:me" if me else "class:turn" if to_act else "", info.name))
    if not info.empty:
        out.append(("class:dim", " [bot]" if info.bot else " [human]"))
    if view is not None and not me:
        out.append(("", f" · {counted(view.hand_sizes[seat], 'card')}"))
    return out


def seat_marks(state: TableState, seat: int, now: float | None = None) -> Line:
    """Dealer, not opened, blocked from calling, away (with the time left before a bot stands
    in, given ``now``), a bot standing in, back."""
    view = state.view
    info = state.seats[seat]
    marks: list[tuple[str, str]] = []
    if view is not None:
        if view.dealer == seat:
            marks.append(("class:dim", "dealer"))
        if not view.opened[seat] and view.phase is not Phase.OVER:
            marks.append(("class:dim", "not open"))
        if view.blocked[seat]:
            marks.append(("class:warn", "no call"))
    if info.away or not info.connected:
        away = "away"
        if info.grace_until is not None and now is not None and not info.standing_in:
            away += " · bot in " + clock(info.grace_until - now)
        marks.append(("class:warn", away))
    if info.standing_in:
        marks.append(("class:warn", "bot stands in"))
    elif state.is_back(seat):
        marks.append(("class:count", "back"))
    out: Line = []
    for i, mark in enumerate(marks):
        out.append(("class:dim", " · " if i else "  "))
        out.append(mark)
    return out


def opponent_panel(
    state: TableState, seat: int, cols: int = 39, rows: int = 5, now: float | None = None
) -> Line:
    """An opponent in ``rows`` lines: the header, the marks, the melds (or the hand shown at
    the end). In two lines (a terminal of few rows) the marks lead the melds' line."""
    view = state.view
    lines: list[Line] = [seat_header(state, seat)]
    marks = seat_marks(state, seat, now)
    lead: Line = [("", "  ")]
    if rows <= 2:
        lead = [*marks, *lead] if marks else lead
    elif marks:
        lines.append(marks)
    if view is not None:
        if view.revealed is not None:
            hand = view.revealed[seat]
            lines.append([("class:dim", "  hand ")] + cards_line(hand))
        items = [meld_fragments(state, m.id) for m in view.melds if m.owner == seat]
        if items and cols - width(lead) < MELD_ROOM:  # the marks leave the melds no room
            lines.append(lead)
        elif items:
            packed = _pack(items, cols - width(lead), rows - len(lines))
            indent: Line = [("", " " * width(lead))]
            lines.extend([*(lead if i == 0 else indent), *line] for i, line in enumerate(packed))
        elif view.revealed is None:
            lines.append([*lead[:-1], ("class:dim", "  no melds")])
    elif rows <= 2 and marks:
        lines.append(marks)
    return join_lines([fit(line, cols) for line in lines[:rows]])


def waiting_for(state: TableState) -> str:
    """What a table with no hand dealt yet waits for: the players still to come, and what they
    type to sit down (the table's name, or its id when the name is not one word; a private
    table's invite link, which its creator was given, since the name alone is refused)."""
    empty = sum(info.empty for info in state.seats)
    owners = [seat for seat, info in enumerate(state.seats) if info.owner]
    if state.table and empty == 0 and owners:
        # A full table with no deal was made with auto_start false: its owner sends ``start``.
        if owners[0] == state.seat:
            return "every seat is taken: type `start` to deal the first hand"
        return (f"every seat is taken: waiting for {state.seats[owners[0]].name}, "
                "the table's owner, to start")
    if not state.table or not 0 < empty < len(state.seats):
        return "waiting for the server…"
    if state.table_private:
        return (f"waiting for {counted(empty, 'player')}: private table: "
                "friends `join` its invite link")
    name = state.table_name if state.table_name and len(state.table_name.split()) == 1 \
        else state.table
    return (f"waiting for {counted(empty, 'player')}: friends type `join {name}`; "
            "bots: `create NAME bots 2`")


def centre_line(state: TableState, cols: int = 80) -> Line:
    view = state.view
    if view is None:
        return fit([("class:dim", " " + waiting_for(state))], cols)
    out: Line = [("", f" Stock {view.stock:>2}   Discard ")]
    if view.top is None:
        out.append(("class:dim", "(empty)"))
    else:
        top = view.top
        out.extend(
            [
                ("class:top", " "),
                (SUIT_STYLE[top.suit] + " class:top", top.pretty()),
                ("class:top", " "),
            ]
        )
        throwers = pile_throwers(view.history)
        if throwers and throwers[-1] is not None:
            out.append(("class:dim", f" from {_name(state, throwers[-1])}"))
        older = list(reversed(view.discards[:-1]))
        if older:
            out.append(("class:dim", "  ← "))
            out.extend(cards_line(older))
    return fit(out, cols)


def sorted_hand(cards: Iterable[Card], by_rank: bool) -> list[Card]:
    return sorted(
        cards, key=(lambda c: (c.rank, c.suit)) if by_rank else (lambda c: (c.suit, c.rank))
    )


def hand_line(state: TableState) -> Line:
    """Our hand: concealed melds of the best arrangement bracketed first, then loose cards."""
    return hand_rows(state, sys.maxsize)[0]


def hand_rows(state: TableState, cols: int) -> list[Line]:
    """Our hand in as many rows of ``cols`` as it needs, broken between cards: on one line, a
    narrow terminal (a phone's, a split pane: 40 columns) cut the last cards of the hand off."""
    rows: list[Line] = [[("", "  ")]]
    for card in _hand_cards(state):
        if width(rows[-1]) + len(to_text(card).rstrip()) > cols and width(rows[-1]) > 2:
            rows.append([("", "  ")])
        rows[-1].extend(card)
    for row in rows:  # no space after a row's last card: it would not fit
        style, text = row[-1]
        row[-1] = (style, text.rstrip())
    return rows


def _hand_cards(state: TableState) -> list[Line]:
    """Our hand's fragments, card by card, each with its brackets and the space after it
    (``hand_rows`` drops a row's last); a spectator's bottom seat's, once the hand is over."""
    view = state.view
    if view is None:
        return []
    hand = view.hand
    if view.seat is None:
        if view.revealed is None:
            return [[("class:dim", "(watching)")]]
        # once the hand is over a spectator sees the bottom seat's hand, as every other seat's
        hand = view.revealed[my_seat(state)]
    arrangement = best_arrangement(hand)
    by_rank = state.sort_by_rank
    melds = sorted(
        (sorted_hand(m, by_rank) for m in arrangement.melds),
        key=lambda m: (m[0].rank, m[0].suit) if by_rank else (m[0].suit, m[0].rank),
    )
    drawn = state.drawn

    def fragment(card: Card) -> tuple[str, str]:
        style, text = card_fragment(card)
        # the card just drawn, wherever the arrangement put it
        return (f"{style} class:top", text) if card == drawn else (style, text)

    out: list[Line] = []
    for meld in melds:
        for i, card in enumerate(meld):
            out.append([*([("class:bracket", "[")] if i == 0 else []), fragment(card),
                        ("class:bracket", "] ") if i == len(meld) - 1 else ("", " ")])
    return out + [[fragment(card), ("", " ")] for card in sorted_hand(arrangement.deadwood,
                                                                       by_rank)]


def me_rows(state: TableState, cols: int = 80, meld_rows: int = ME_MELD_ROWS) -> int:
    """The lines of ``me_panel``: the seat, its melds, and the hand's rows."""
    return 1 + meld_rows + len(hand_rows(state, cols))


def me_panel(state: TableState, cols: int = 80, now: float | None = None,
             meld_rows: int = ME_MELD_ROWS) -> Line:
    """Our seat: its header, ``meld_rows`` lines for its melds (a terminal of few rows gives
    them one), and the hand."""
    view = state.view
    seat = my_seat(state)
    header = seat_header(state, seat, me=True)
    marks = seat_marks(state, seat, now)
    if view is not None and view.seat is None:
        header.append(("", f" · {counted(view.hand_sizes[seat], 'card')}"))
    if view is not None and view.seat is not None:
        count = view.count()
        # the count first: a narrow screen (a phone's terminal) cuts the line's end
        header += [("", " · count "), ("class:count", str(count)),
                   ("", f" · {counted(len(view.hand), 'card')}")]
        header.append(("class:dim", "  by rank" if state.sort_by_rank else "  by suit"))
        if state.drawn is not None:
            header += [("", " · drew "), (f"{SUIT_STYLE[state.drawn.suit]} class:top",
                                           state.drawn.pretty())]
    header.extend(marks)
    mine = [meld_fragments(state, m.id) for m in view.melds if m.owner == seat] if view else []
    lines = [fit(header, cols)]
    if mine:
        packed = _pack(mine, cols - 9, meld_rows)
        for i, row in enumerate(packed):
            lines.append(fit([("class:dim", "  table: " if i == 0 else " " * 9), *row], cols))
    else:
        lines.append(fit([("class:dim", "  table: no melds yet")], cols))
    lines += [fit([], cols)] * (1 + meld_rows - len(lines))
    return join_lines([*lines, *(fit(row, cols) for row in hand_rows(state, cols))])


def log_lines(state: TableState, cols: int | None = None) -> list[Line]:
    """The whole log of this hand as styled lines, oldest first; a chat line longer than
    ``cols`` is wrapped, and so is a notice (what a person said, a file name, is read in
    full; a move's line is one line)."""
    out: list[Line] = []
    for entry in state.log():
        if entry.kind is LogKind.CHAT:
            said: Line = [("class:chat", " » " + entry.text)]
            out.extend(wrap(said, cols) if cols is not None else [said])
        elif entry.kind is LogKind.INFO:  # read in full too: a file name, a link
            told: Line = [("class:dim", " " + entry.text)]
            out.extend(wrap(told, cols) if cols is not None else [told])
        elif entry.kind is LogKind.SEAT:
            out.append([("class:warn", " " + entry.text)])
        else:
            out.append([("", " " + entry.text)])
    return out


def log_window(state: TableState, rows: int, cols: int | None = None) -> list[Line]:
    """The ``rows`` lines of the log in view (``cols`` wide): the newest, or earlier ones after
    PgUp; a first line says how many are above or below."""
    lines = log_lines(state, cols)
    scroll = min(state.log_scroll, max(0, len(lines) - rows + 1))
    if scroll == 0:
        return lines[-rows:] if rows else []
    shown = lines[max(0, len(lines) - rows - scroll + 1) : len(lines) - scroll]
    above = len(lines) - scroll - len(shown)
    marks = [f"↑ {above} earlier (PgUp)"] if above else []
    marks.append(f"↓ {scroll} later (PgDn, End)")
    return [[("class:count", " " + " · ".join(marks))], *shown]


def log_panel(state: TableState, rows: int = 8, cols: int = 80) -> Line:
    """The event log and chat, newest last; local notes (hint, help) take the bottom lines.
    When the hand is over, the result stands beside the log, which still scrolls (notes, such
    as the question before quitting, take the whole width until the next line typed)."""
    if state.hand_over and not state.notes:
        left = result_lines(state, rows)
        side = max(width(line) for line in left) + 1
        right = log_window(state, rows, cols - side - 1)
        rows_out = []
        for i in range(min(rows, max(len(left), len(right)))):
            a = fit(left[i], side) if i < len(left) else fit([], side)
            b = right[i] if i < len(right) else []
            rows_out.append(fit([*a, ("class:dim", "│"), *b], cols))
        return join_lines(rows_out)
    if len(state.notes) > rows:
        return join_lines([fit(line, cols) for line in notes_page(state, rows)])
    out = log_window(state, rows - len(state.notes), cols)
    out.extend(_note_line(note) for note in state.notes)
    return join_lines([fit(line, cols) for line in out])


def _note_line(note: LogLine) -> Line:
    return [("class:error" if note.kind is LogKind.ERROR else "class:count", " " + note.text)]


def notes_first(state: TableState, rows: int) -> int:
    """The first note shown on a log panel of ``rows`` lines (notes longer than the panel, a
    review at 80×24, are read a page at a time: PgDn, PgUp)."""
    return max(0, min(state.notes_scroll, len(state.notes) - (rows - 1)))


def notes_page(state: TableState, rows: int) -> list[Line]:
    """A page of notes longer than the panel, from their beginning (where a review's table
    of decisions is), and a last line saying how many more there are either side."""
    first = notes_first(state, rows)
    shown = state.notes[first : first + rows - 1]
    after = len(state.notes) - first - len(shown)
    marks = ([f"↑ {counted(first, 'line')} above (PgUp)"] if first else []) + (
        [f"↓ {counted(after, 'more line')} (PgDn)"] if after else [])
    mark = " " + " · ".join(marks)
    return [*(_note_line(note) for note in shown), [("class:dim", mark)]]


def standings(state: TableState) -> list[tuple[str, int]]:
    """Each seat's chips in the match so far (empty until a hand has been settled)."""
    if state.standings is None or len(chips := state.standings["chips"]) != 3:
        return []
    return [(_name(state, seat), chips[seat]) for seat in range(3)]


def pot_words(state: TableState) -> str:
    """The match's ante pot (RULES.md §9) as the standings tell it: who took it with the hand
    just settled, or what it holds; ``""`` without a pot. A hand's chips are its settlement
    alone (§13): without these words a pot taken shows only as a jump in the standings."""
    standings = state.standings
    if standings is None:
        return ""
    taken, pot = standings.get("pot_taken", 0), standings["pot"]
    result = state.result
    if taken > 0 and result is not None and result.winner is not None:
        view = state.view
        who = ("you take" if view is not None and view.seat == result.winner
               else f"{_name(state, result.winner)} takes")
        return f"{who} the pot: +{taken}"
    if pot > 0:
        return f"pot {pot}"
    return ""


def standings_rule(state: TableState, cols: int = 80) -> Line:
    """The rule under the opponents, carrying the running standings of the match."""
    scores = standings(state)
    if state.standings is None or not scores:
        return [("class:dim", "─" * cols)]
    text = " · ".join(f"{name} {chips:+d}" for name, chips in scores)
    label = f"─ after {counted(state.standings['hands'], 'hand')}: "
    line: Line = [("class:dim", label), ("class:count", text), ("class:dim", " ")]
    return fit([*line, ("class:dim", "─" * max(0, cols - width(line)))], cols)


def options_rule(state: TableState, cols: int = 80) -> Line:
    """The rule over our seat, naming the table's house rules (``options`` lists them all)."""
    view = state.view
    changed = view.options.to_dict() if view is not None else {}
    if not changed:
        text = "─ standard rules "
    else:
        text = "─ house rules: " + ", ".join(f"{k}={_word(v)}" for k, v in changed.items()) + " "
    return fit([("class:dim", text + "─" * max(0, cols - len(text)))], cols)


def _word(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def options_lines(state: TableState, cols: int = 80) -> list[str]:
    """Every option of the table (RULES.md §10), two to a line so that they fit the log of an
    80×24 screen (one to a line on a narrower one, ``cols``), the house rules first and
    marked."""
    view = state.view
    if view is None:
        return ["no table yet"]
    changed = view.options.to_dict()
    every = view.options.to_dict(omit_defaults=False)
    keys = [*changed, *(key for key in every if key not in changed)]  # house rules first
    cells = [f"{'*' if key in changed else ' '} {key} = {_word(every[key])}" for key in keys]
    per_row = 2 if cols >= 80 else 1
    rows = ["".join(f"{cell:<40}" for cell in cells[i : i + per_row]).rstrip()
            for i in range(0, len(cells), per_row)]
    return ["Table options (RULES.md §10), * = house rule:", *rows]


def result_head(state: TableState, result: Result) -> tuple[str, str]:
    """Who won the hand, and how (``""`` for a void hand), in the phrasebook's words put
    together as the page puts them (``handStory``): a call lost to a challenger says so ("by
    call" would read as if the winner had called)."""
    view = state.view
    me, caller = (view.seat, view.caller) if view is not None else (None, None)
    if result.winner is None:
        return say("hand.void"), ""
    won = (say("hand.you_won") if result.winner == me
           else say("hand.won", who=_name(state, result.winner)))
    if result.end is not End.CALL:
        return won, END_WORDS[result.end]
    if caller is not None and caller != result.winner:
        whose = say("whose.yours") if caller == me else say("whose.theirs",
                                                            who=_name(state, caller))
        return won + ",", say("hand.call_lost", whose=whose)
    answer = say("hand.challenged") if result.challengers else say("hand.unchallenged")
    return won, f"{END_WORDS[End.CALL]} {answer}"


#: The end of a hand for a spectator: the seated players ask for the next deal, not we.
NEXT_DEAL_WATCHING = "the players deal the next hand"


@dataclass(frozen=True, slots=True)
class Placing:
    """One seat at the end of a match: its chips and the hands it won."""

    seat: int
    name: str
    chips: int
    wins: int


def final_standings(state: TableState) -> list[Placing]:
    """Each seat's place in the match, most chips first."""
    wins = state.standings["wins"] if state.standings is not None else []
    won = wins if len(wins) == 3 else [0, 0, 0]
    rows = [Placing(seat, name, chips, won[seat])
            for seat, (name, chips) in enumerate(standings(state))]
    return sorted(rows, key=lambda row: -row.chips)


def match_winner(state: TableState) -> str:
    """Who won the match, in words (those who share the most chips tie)."""
    rows = final_standings(state)
    if not rows:
        return "Match over"
    best = [row for row in rows if row.chips == rows[0].chips]
    if len(best) > 1:
        return f"Match over: {' and '.join(row.name for row in best)} tie at {best[0].chips:+d}"
    mine = state.view is not None and state.view.seat == best[0].seat
    return f"Match over: {'you win' if mine else best[0].name + ' wins'} the match"


def match_lines(state: TableState, room: int = 8) -> list[Line]:
    """The end of a match: the winner, the final standings (chips and hands won) and the last
    hand, with why the reader's chips in it were what they were as far as ``room`` lines
    allow; what may follow (``again``, a new match with the same settings; ``lobby``) is
    said by the keys line below (by the message line in a terminal too short for keys)."""
    hands = state.standings["hands"] if state.standings is not None else None
    rows = final_standings(state)
    column = max((len(row.name) for row in rows), default=0)
    me = state.view.seat if state.view is not None else None
    out: list[Line] = [[("class:turn", " " + match_winner(state))]]
    if hands is not None:
        out.append([("class:dim", f" final standings after {counted(hands, 'hand')}:")])
    for row in rows:
        # seats with the same chips share their place ("2. Ana -22", "2. Bob -22"): told
        # apart by seat, the tied reader read itself third
        place = 1 + sum(other.chips > row.chips for other in rows)
        out.append([("class:me" if row.seat == me else "", f" {place}. {row.name:<{column}}"),
                    ("class:count", f" {row.chips:+4d}"),
                    ("class:dim", f"  {counted(row.wins, 'win')}")])
    out += last_hand_lines(state)  # what may follow: the keys line
    why = _why_lines(state, max(width(line) for line in out))
    return out + why if len(out) + len(why) <= room else out


def last_hand_lines(state: TableState) -> list[Line]:
    """The match's last hand under the standings (the hand's own result panel gives way to the
    match's): who won it, then how and the reader's chips in it, in lines as narrow as the
    standings' so that the log beside keeps its width."""
    result, view = state.result, state.view
    if result is None:
        return []
    won, how = result_head(state, result)
    said = [how] if how else []
    if view is not None and view.seat is not None:
        said.append(f"you {result.chips[view.seat]:+d}")
    return [[("class:dim", " last hand: "), ("", won.removeprefix("Hand over: "))],  # as the page
            *([[("", "   " + " · ".join(said))]] if said else [])]


def result_lines(state: TableState, rows: int = 8) -> list[Line]:
    """Who won and how, then one row per seat: its name in full, count, burned, chips, and
    why the reader's chips (a spectator's: the winner's) are what they are, as far as ``rows``
    lines leave room; at the end of the match, the match's end instead (``match_lines``)."""
    result = state.result
    view = state.view
    assert result is not None
    if state.match_over:
        return match_lines(state, rows)
    names = [_name(state, seat) for seat in range(3)]
    column = max(len(n) for n in names)
    table: list[Line] = [
        [
            ("class:me" if view and view.seat == seat else "", f" {names[seat]:<{column}}"),
            ("", f" count {result.counts[seat]:>3}"),
            ("class:warn", " burned" if seat in result.burned else "       "),
            ("class:count", f" {result.chips[seat]:+4d}"),
        ]
        for seat in range(3)
    ]
    won, how = result_head(state, result)
    # How on a line of its own when the head would be wider than the rows and 48 columns:
    # the log beside it keeps room.
    if len(won) + len(how) + 2 <= max(48, width(table[0])):
        head = [[("class:turn", f" {won} {how}".rstrip())]]
    else:
        head = [[("class:turn", " " + won)], [("class:turn", "   " + how)]]
    pot = pot_words(state)
    if view is not None and view.seat is None:
        last = " " + NEXT_DEAL_WATCHING
    else:
        last = " Enter: next hand"
    out = [*head, *table]
    why = _why_lines(state, max(width(table[0]), 46))
    if len(out) + len(why) + 1 > rows:
        # on one line of up to 56 columns, the log beside it keeping 23: at 80x24 a burned
        # reader's "you to greedy-bot-1: win -1 · ace ×2 -2 · burned -1" took two lines under
        # a head of two, was left out, and its -4 chips were said nowhere
        why = _why_lines(state, 56)
    if len(out) + len(why) + 1 <= rows:
        out += why
    # the pot on the last line: at 80x24 a line of its own left no room for the why. That
    # line is kept whatever ``rows`` leave: a short screen has no keys line, and "Enter: next
    # hand" cut off below the seats left a player at a table without a timer not knowing how
    # the next hand is dealt.
    return [*out[:max(0, rows - 1)],
            [*([("class:count", f" {pot} ·")] if pot else []), ("class:turn", last)]]


def _why_lines(state: TableState, cols: int) -> list[Line]:
    """The terms of the reader's chips (a spectator's: the winner's), ``chip_words`` broken
    between terms to ``cols``: "you: win -1 · ace ×2 -2 · burned -1"."""
    view, result = state.view, state.result
    seat = view.seat if view is not None and view.seat is not None else (
        result.winner if result is not None else None)
    if seat is None or len(state.why) != 3 or not state.why[seat]:
        return []
    who = "you" if view is not None and view.seat == seat else _name(state, seat)
    if (to := paid_to(state.why[seat])) is not None:
        who += f" to {_name(state, to)}"
    lines = [f"   {who}:"]
    for item in state.why[seat]:
        term = chip_words([item])
        joined = f"{lines[-1]}{' ' if lines[-1].endswith(':') else ' · '}{term}"
        if len(joined) > cols and not lines[-1].endswith(":"):
            lines.append("     " + term)
        else:
            lines[-1] = joined
    return [[("class:dim", line)] for line in lines]


def message_line(state: TableState, cols: int = 80, keys_shown: bool = True) -> Line:
    """The message of the moment, else the legal moves; at the end of a match, who won it and
    the reader's chips. ``keys_shown``: whether the keys line is drawn below; when it is not (a
    terminal of fewer than 20 rows), the match's end says here what may be typed."""
    over = state.match_over and not keys_shown and not state.message_is_error
    if state.message and not _said_just_above(state):
        style = "class:error" if state.message_is_error else "class:count"
        mark = "✗ " if state.message_is_error else ""
        said = " " + mark + state.message
        return fit([(style, _then_commands(state, said, cols) if over else said)], cols)
    if state.match_over:
        news = " " + match_news(state)
        return fit([("class:count", _then_commands(state, news, cols) if over else news)], cols)
    view = state.view
    if view is not None and view.seat is not None and view.legal:
        return fit([("class:dim", " legal: " + _legal_summary(state))], cols)
    return fit([], cols)


def _said_just_above(state: TableState) -> bool:
    """Whether the message is the newest line of the full-width log, right above it (a notice
    goes to both: "back in your seat at t1" read twice); the message line then shows the
    legal moves. Not when the log is scrolled, covered by notes, or narrowed by a result."""
    if state.message_is_error or not state.asides or state.notes or state.log_scroll:
        return False
    if state.hand_over or state.match_over:
        return False
    at, line = state.asides[-1]
    history = state.view.history if state.view is not None else ()
    return at >= len(history) and line.text == state.message


def _legal_summary(state: TableState) -> str:
    view = state.view
    assert view is not None
    kinds: dict[str, int] = {}
    for m in view.legal:
        kinds[m.action.value] = kinds.get(m.action.value, 0) + 1
    return ", ".join(
        name if n == 1 or name in ("discard",) else f"{name} ×{n}" for name, n in kinds.items()
    )


def match_news(state: TableState) -> str:
    """The match's end on the message line: who won it and, for a player, the reader's chips
    in it (the commands are the keys line's: it said "the match is over: again · ^Q quit"
    above " again · review · ^Q quit")."""
    won = match_winner(state).removeprefix("Match over: ")
    me = state.view.seat if state.view is not None else None
    mine = [row.chips for row in final_standings(state) if row.seat == me]
    return f"{won} · your chips {mine[0]:+d}" if mine else won


def match_commands(state: TableState) -> str:
    """What may be typed once the match is over (``again`` and ``lobby``, ``review`` for a
    player who can, ^Q quit)."""
    watching = state.view is not None and state.view.seat is None
    words = state.after_the_match()
    return words if watching else f"{words.removesuffix(' · ^Q quit')} · review · ^Q quit"


def _then_commands(state: TableState, said: str, cols: int) -> str:
    """``said`` followed by what may be typed once the match is over, ``said`` cut short so
    that the commands fit in ``cols``."""
    tail = " · " + match_commands(state)
    room = cols - 1 - len(tail)
    return (said if len(said) <= room else said[:max(room - 1, 0)] + "…") + tail


def keys_line(state: TableState, cols: int = 80) -> Line:
    """The keys that do something for this player now (a spectator has no moves to make)."""
    watching = state.view is not None and state.view.seat is None
    if watching:
        text = " watching · say TEXT to chat · help · ^Q quit"
    elif state.match_over:
        text = " " + match_commands(state)
    elif state.hand_over:
        text = " Enter next hand · review · F5 sort · ^Q quit"
    else:
        text = " F2 draw · F3 pick · F4 hint · F5 sort · Tab complete · ^Q quit"
    return fit([("class:dim", text)], cols)


def lobby_panel(state: TableState, rows: int = 20, cols: int = 80) -> Line:
    """The lobby: one line per table, then how to create, join or watch."""
    from .listing import LOBBY_HELP, describe

    tables = state.lobby or []
    lines: list[Line] = [[("class:turn", " Tables")], [("class:dim", " " + "─" * (cols - 2))]]
    if not tables:
        lines.append([("class:dim", " no tables yet: create one")])
    for table in tables[: max(1, rows - 4)]:
        lines.append([("", " " + describe(table))])
    lines.append([])
    lines.extend([("class:dim", " " + part)] for part in _wrapped(LOBBY_HELP, " · ", cols - 2))
    return join_lines([fit(line, cols) for line in lines])


def _wrapped(text: str, separator: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken only at ``separator``s."""
    lines: list[str] = []
    for part in text.split(separator):
        if lines and len(lines[-1]) + len(separator) + len(part) <= width:
            lines[-1] += separator + part
        else:
            lines.append(part)
    return lines


def lobby_title(state: TableState, cols: int = 80) -> Line:
    if state.banner:
        return join_lines([[("class:banner", row)] for row in banner_lines(state.banner, cols)])
    return fit([("class:title", " Tongits · lobby (bots are marked *)")], cols)


def screen_text(state: TableState, now: float, cols: int = 80, rows: int = 24) -> str:
    """The whole screen but the command line as plain text (for tests and logs), in the
    layout's order."""
    half = (cols - 1) // 2
    me = my_seat(state)
    left = to_text(opponent_panel(state, (me + 1) % 3, half, now=now)).split("\n")
    right = to_text(opponent_panel(state, (me + 2) % 3, cols - 1 - half, now=now)).split("\n")
    while len(left) < len(right):
        left.append(" " * half)
    while len(right) < len(left):
        right.append("")
    parts = [
        to_text(title_line(state, now, cols)),
        *(a + "│" + b for a, b in zip(left, right, strict=True)),
        to_text(standings_rule(state, cols)),
        to_text(centre_line(state, cols)),
        to_text(options_rule(state, cols)),
        to_text(me_panel(state, cols, now)),
        "─" * cols,
        to_text(log_panel(state, rows - 12 - me_rows(state, cols) - title_rows(state, cols),
                          cols)),
        to_text(message_line(state, cols)),
        to_text(keys_line(state, cols)),
    ]
    return "\n".join(line.rstrip() for part in parts for line in part.split("\n"))
