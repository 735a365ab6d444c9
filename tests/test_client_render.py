"""The table screen as text: everything RULES.md §11 lets a seat see, within 80×24."""

from __future__ import annotations

import pytest
from client_positions import position
from screen_support import finished
from tongits.client.tui.hint import choose_move
from tongits.client.tui.render import (
    centre_line,
    hand_line,
    hand_rows,
    make_style,
    match_lines,
    opponent_panel,
    result_head,
    result_lines,
    screen_text,
    seat_marks,
    title_line,
    to_text,
)
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import (
    ChatReceived,
    ConnectionChanged,
    LinkStatus,
    LogKind,
    Notice,
    SeatsChanged,
    StateUpdate,
    TableState,
    event_lines,
)
from tongits.engine import Phase, Step
from tongits.protocol.maps import SeatMap
from tongits.protocol.phrases import chip_words

SEATS: list[SeatMap] = [
    {"seat": 0, "name": "Ana", "player": "human", "connected": False},
    {"seat": 1, "name": "Bob", "player": "human"},
    {"seat": 2, "name": "Cara", "player": "bot"},
]


def state_for(view, deadline: float | None = 27.2) -> TableState:  # type: ignore[no-untyped-def]
    state = TableState()
    state.apply(StateUpdate(view, SEATS, deadline, table="t1"), now=100.0)
    return state


VIEW = position(
    "Kd 2c 9s 5h 6h 7h Ah",
    top="7c",
    melds=[(2, "4d 5d 6d"), (0, "Qc Qd Qh Qs"), (2, "9c 9d 9h"), (1, "2s 3s 4s")],
    secret=[1],
)


def test_screen_fits_80_by_24() -> None:
    text = screen_text(state_for(VIEW), now=100.0)
    lines = text.split("\n")
    assert len(lines) <= 23  # the command line is the 24th
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)


def test_opponents_centre_and_hand() -> None:
    state = state_for(VIEW)
    text = screen_text(state, now=100.0)
    assert "Cara [bot]" in text and "Ana [human]" in text
    assert "10 cards" in text
    assert "#0 4♦ 5♦ 6♦" in text and "#2 9♣ 9♦ 9♥" in text
    assert "#1 ▒▒ ▒▒ ▒▒ ▒▒ secret" in text and "Q♣" not in text  # another seat's secret
    assert "away" in text  # Ana is not connected
    assert "Stock 10" in text and " 7♣ " in to_text(centre_line(state))
    assert "YOUR TURN: call, draw" in text  # what is legal now and "⏱ 0:28" in text
    assert "table: #3 2♠ 3♠ 4♠" in text
    assert "count 22" in text  # K♦ 2♣ 9♠ A♥ loose, 5♥ 6♥ 7♥ melded
    assert to_text(hand_line(state)).split() == ["[5♥", "6♥", "7♥]", "2♣", "K♦", "A♥", "9♠"]
    state.sort_by_rank = True
    assert to_text(hand_line(state)).split() == ["[5♥", "6♥", "7♥]", "A♥", "2♣", "9♠", "K♦"]


def test_a_narrow_terminal_shows_the_whole_hand_on_more_rows() -> None:
    """A phone's terminal or a split pane of 30 to 40 columns cut the hand's last cards off
    (one line, ending in an ellipsis); the hand now takes the rows it needs, broken between
    cards, a meld's brackets with its cards."""
    for seed in range(40):
        state = TableState()
        FakeSession(seed=seed, names=("Ana", "Bob", "Cara")).start(state.apply)  # a new deal
        assert state.view is not None and len(state.view.hand) >= 12
        whole = to_text(hand_line(state)).split()
        for cols in (24, 30, 36, 40, 80):
            rows = [to_text(row) for row in hand_rows(state, cols)]
            assert all(len(row.rstrip()) <= cols for row in rows), (cols, rows)
            assert " ".join(rows).split() == whole
            assert (len(rows) > 1) == (len(to_text(hand_line(state)).rstrip()) > cols)
            text = screen_text(state, now=100.0, cols=cols, rows=30)
            assert all(row.strip() in text for row in rows)


def test_turn_of_another_seat_and_blocked_mark() -> None:
    view = position("Kd 2c", melds=[(2, "4d 5d 6d")], to_act=2)
    object.__setattr__(view, "blocked", (False, False, True))
    text = screen_text(state_for(view, deadline=None), now=100.0)
    assert "Cara: draw or pick" in text and "or call" not in text and "⏱" not in text
    assert "no call" in text and "▶ Cara" in text
    object.__setattr__(view, "blocked", (False, False, False))
    assert "Cara: draw, pick or call" in screen_text(state_for(view, deadline=None), now=100.0)
    closed = position("Kd 2c", melds=[(1, "4d 5d 6d")], to_act=2)  # Cara has not opened
    assert "Cara: draw or pick" in screen_text(state_for(closed, deadline=None), now=100.0)


def test_log_names_public_actions_and_chat() -> None:
    history = [
        {"seat": 0, "action": "discard", "card": "7c"},
        {"seat": 1, "action": "pick", "cards": ["7h", "7s"]},
        {"seat": 1, "action": "sapaw", "card": "8d", "meld": 0},
        {"seat": 1, "action": "discard", "card": "Kd"},
        {"seat": 2, "action": "draw"},
        {"seat": 2, "action": "secret"},
        {"seat": 2, "action": "call"},
        {"seat": 0, "action": "fold", "auto": True},
        {"seat": 1, "action": "challenge"},
    ]
    steps = [Step.from_dict(step) for step in history]
    lines = [x.text for x in event_lines(steps, ["Ana", "Bob", "Cara"])]
    assert lines == [
        "Ana discarded 7♣",
        "Bob picked 7♣ with 7♥ 7♠ → #0",
        "Bob laid off 8♦ onto #0",
        "Bob discarded K♦",
        "Cara drew",
        "Cara laid a secret meld #1",
        "Cara called",
        "Ana folded (not opened)",
        "Bob challenged",
    ]
    state = state_for(VIEW)
    state.apply(ChatReceived(0, "Ana", "hello"))
    assert "» Ana: hello" in screen_text(state, now=100.0)


def test_a_spectators_chat_line_says_the_speaker_is_watching() -> None:
    """Ben, watching, said "hi from the rail": the players read "» Ben: hi from the rail" and
    looked for a Ben among the seats (the page said "Ben: …" too)."""
    state = state_for(VIEW)
    state.apply(ChatReceived(None, "Ben", "hi from the rail"))
    state.apply(ChatReceived(1, "Bob", "welcome"))
    text = screen_text(state, now=100.0)
    assert "» Ben (watching): hi from the rail" in text and "» Bob: welcome" in text


def test_banner_and_seat_changes() -> None:
    state = state_for(VIEW)
    state.apply(ConnectionChanged(LinkStatus.LOST))
    assert "connection lost, reconnecting" in screen_text(state, now=100.0)
    state.apply(ConnectionChanged(LinkStatus.CONNECTED))
    state.apply(SeatsChanged([{"seat": 0, "name": "Zed", "player": "bot", "stand_in": True}]))
    text = screen_text(state, now=100.0)
    assert "connection lost" not in text and "bot stands in" in text


REFUSED = "([Errno 111] Connect call failed ('127.0.0.1', 37123); retry in 5s)"


@pytest.mark.parametrize("cols", [80, 100])
@pytest.mark.parametrize(
    "change",
    [
        ConnectionChanged(LinkStatus.LOST, REFUSED),
        ConnectionChanged(LinkStatus.CLOSED, "the server's certificate is not the trusted one: "
                                             "^Q to read what to do"),
    ],
)
def test_a_long_banner_wraps_within_the_width(cols: int, change: ConnectionChanged) -> None:
    """The banner says all it has to say, the seat kept and the reason, in lines that fit the
    screen, which keeps its height: the log gives up the lines the banner takes."""
    state = state_for(_views(seed=5)[-3])  # a log longer than the screen
    state.apply(ChatReceived(1, "Bob", "brb"))
    before = screen_text(state, now=100.0, cols=cols).split("\n")
    state.apply(change)
    lines = screen_text(state, now=100.0, cols=cols).split("\n")
    assert all(len(line) <= cols for line in lines), max(lines, key=len)
    assert len(lines) == len(before) <= 23  # the 24th is the command line
    assert state.banner is not None
    top = next(i for i, line in enumerate(lines) if "│" in line)  # the opponents' panels
    assert " ".join(line.strip() for line in lines[:top]) == "⚠ " + state.banner
    assert "» Bob: brb" in lines[-3]  # the newest line of the log is still in view


def test_away_stand_in_and_back_marks_with_a_log_line_each() -> None:
    """We are Bob (seat 1). Ana drops: a mark with the grace time left, then a bot stands in,
    then she is back; each change is a line of the log. Our own seat's changes are not."""
    ana: SeatMap = {"seat": 0, "name": "Ana", "player": "human", "connected": True}
    rest = SEATS[1:]
    state = state_for(VIEW)
    away: SeatMap = {**ana, "connected": False, "away": True, "grace": 42.0}
    state.apply(SeatsChanged([away, *rest], {"seat": 0, "change": "away"}), now=100.0)
    assert "Ana lost connection" in screen_text(state, now=100.0)
    assert "away · bot in 0:42" in screen_text(state, now=100.0)
    assert "away · bot in 0:32" in screen_text(state, now=110.0)
    stand_in: SeatMap = {**ana, "player": "bot", "policy": "greedy", "away": True,
                         "stand_in": True}
    state.apply(SeatsChanged([stand_in, *rest], {"seat": 0, "change": "stand_in"}), now=142.0)
    text = screen_text(state, now=142.0)
    assert "a bot is standing in for Ana" in text and "away · bot stands in" in text
    assert "Ana [bot]" in text and "bot in" not in text
    state.apply(SeatsChanged([ana, *rest], {"seat": 0, "change": "back"}), now=150.0)
    text = screen_text(state, now=150.0)
    assert "Ana is back" in text and "away" not in text
    assert to_text(seat_marks(state, 0)).endswith("back")
    state.apply(SeatsChanged([ana, *rest], {"seat": 1, "change": "back"}), now=151.0)
    assert "Bob is back" not in screen_text(state, now=151.0)
    assert [line.text for line in state.log()] == [
        "Ana lost connection", "a bot is standing in for Ana", "Ana is back"
    ]


def _views(seed: int) -> list:  # type: ignore[type-arg]
    """Every view seat 0 is sent in one hand of a local match (bots play at once)."""
    from tongits.client.tui.hint import choose_move

    session = FakeSession(seed=seed, names=("Ana", "Bob", "Cara"))
    views = []
    state = TableState()

    def sink(update) -> None:  # type: ignore[no-untyped-def]
        state.apply(update)
        if isinstance(update, StateUpdate):
            views.append(update.view)

    session.start(sink)
    while state.view is not None and state.view.legal:
        session.send_move(choose_move(state.view))
    return views


def test_resumed_state_marks_where_the_missed_events_begin() -> None:
    views = _views(seed=5)
    before, after = views[2], views[-3]
    known, total = len(before.history), len(after.history)
    assert 0 < known < total
    state = TableState()
    state.apply(StateUpdate(before, SEATS, None, table="t1"))
    state.apply(ChatReceived(1, "Bob", "brb"))
    state.apply(ConnectionChanged(LinkStatus.LOST, "(the server closed; retry in 1s)"))
    assert "reconnecting" in screen_text(state, now=0.0)
    state.apply(ConnectionChanged(LinkStatus.CONNECTED))
    state.apply(StateUpdate(after, SEATS, None, table="t1", missed=total - known))
    events = [line.text for line in event_lines(after.history, state.told_names)]
    moves = "move" if total - known == 1 else "moves"
    assert [line.text for line in state.log()] == [
        *events[:known], "Bob: brb", f"⋯ while you were away ({total - known} {moves}):",
        *events[known:],
    ]
    assert state.hands_seen == 1 and state.banner is None


def test_the_mark_of_the_missed_moves_goes_with_its_hand() -> None:
    """Back in the seat after the hand ended: the log marks where the moves we missed begin;
    once the next hand is dealt that mark is gone (the moves it announced are not in the log
    any more), while the chat heard before stays."""
    session = FakeSession(seed=5, names=("Ana", "Bob", "Cara"))
    views: list = []  # type: ignore[type-arg]
    session.start(lambda u: views.append(u.view) if isinstance(u, StateUpdate) else None)
    while views[-1].legal:
        session.send_move(choose_move(views[-1]))
    before, over = views[2], views[-1]
    assert over.result is not None
    missed = len(over.history) - len(before.history)
    state = TableState()
    state.apply(StateUpdate(before, SEATS, None, table="t1"))
    state.apply(ChatReceived(1, "Bob", "brb"))
    state.apply(ConnectionChanged(LinkStatus.LOST))
    state.apply(ConnectionChanged(LinkStatus.CONNECTED))
    state.apply(StateUpdate(over, SEATS, None, table="t1", missed=missed))
    marker = f"⋯ while you were away ({missed} moves):"
    state.apply(Notice("hand record saved", this_hand=True))
    state.apply(Notice("friends join: tongits connect 10.0.0.2:7777"))
    assert {marker, "hand record saved"} <= {line.text for line in state.log()}
    session.next_hand()
    state.apply(StateUpdate(views[-1], SEATS, None, table="t1"))
    assert state.hands_seen == 2 and not state.hand_over
    log = [line.text for line in state.log()]
    assert "Bob: brb" in log and not any("while you were away" in text for text in log)
    assert "friends join: tongits connect 10.0.0.2:7777" in log and "hand record saved" not in log
    assert "while you were away" not in screen_text(state, now=0.0)


def test_coming_back_shows_the_talk_missed_and_not_twice_what_was_heard() -> None:
    """Back from a dropped connection the server tells the table's recent chat again
    (``earlier``): the lines said while we were away appear, those on the screen already do
    not appear twice, and a line said anew with the same words does."""
    view = _views(seed=6)[3]
    state = TableState()
    state.apply(StateUpdate(view, SEATS, None, table="t1"), now=0.0)
    state.apply(ChatReceived(1, "Bob", "brb", n=1))
    state.apply(ConnectionChanged(LinkStatus.LOST))
    state.apply(ConnectionChanged(LinkStatus.CONNECTED))
    state.apply(StateUpdate(view, SEATS, None, table="t1"), now=1.0)
    state.apply(ChatReceived(1, "Bob", "brb", n=1, earlier=True))
    state.apply(ChatReceived(2, "Cara", "where is Ana?", n=2, earlier=True))
    state.apply(ChatReceived(1, "Bob", "brb", n=3))
    chat = [line.text for line in state.log() if line.kind is LogKind.CHAT]
    assert chat == ["Bob: brb", "Cara: where is Ana?", "Bob: brb"]


def test_a_resume_that_missed_nothing_leaves_the_screen_as_it_was() -> None:
    view = _views(seed=6)[3]
    state = TableState()
    state.apply(StateUpdate(view, SEATS, None, table="t1"), now=0.0)
    shown = screen_text(state, now=0.0)
    state.apply(ConnectionChanged(LinkStatus.LOST))
    state.apply(ConnectionChanged(LinkStatus.CONNECTED))
    state.apply(StateUpdate(view, SEATS, None, table="t1", missed=0), now=0.0)
    state.apply(SeatsChanged(SEATS, {"seat": 0, "change": "back"}), now=0.0)
    assert screen_text(state, now=0.0) == shown


def test_the_back_mark_lasts_until_the_seat_acts() -> None:
    views = _views(seed=7)
    state = TableState()
    state.apply(StateUpdate(views[0], SEATS, None, table="t1"))
    state.apply(SeatsChanged(SEATS, {"seat": 1, "change": "back"}))
    assert state.is_back(1)
    later = next(v for v in views if any(step.seat == 1 for step in v.history))
    state.apply(StateUpdate(later, SEATS, None, table="t1"))
    assert not state.is_back(1)


def test_hand_over_shows_everything() -> None:
    session = FakeSession(seed=3, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    from tongits.client.tui.hint import choose_move

    while state.view is not None and state.view.legal:
        session.send_move(choose_move(state.view))
    assert state.view is not None and state.view.phase is Phase.OVER
    text = screen_text(state, now=0.0)
    assert "Hand over: Cara wins by Tongits" in text
    assert "burned" in text and "─ after 1 hand: Ana -5 · Bob -6 · Cara +11 ─" in text
    assert "Enter: next hand" in text
    # why Ana's chips are -5: Cara's Tongits and her two aces, paid to her
    assert "you to Cara: Tongits -3" in text and "ace ×2 -2" in text
    assert "hand 3♣ 4♣ 6♣" in text  # an opponent's hand is revealed
    assert all(len(line) <= 80 for line in text.split("\n"))


def test_no_colour_style() -> None:
    plain = make_style(colour=False)
    coloured = make_style(colour=True)
    assert "#ff5f5f" in str(coloured.style_rules) and "#ff5f5f" not in str(plain.style_rules)


@pytest.mark.parametrize("cols", [80, 100])
def test_a_long_chat_line_is_read_in_full(cols: int) -> None:
    """Chat may be 200 characters; the log cut it at the screen's edge (``…``), and what was
    said past it could not be read anywhere. It wraps now, during the hand and beside the
    result at its end."""
    said = " ".join(f"word{i:02d}" for i in range(30))  # 209 characters
    state = state_for(VIEW)
    state.apply(ChatReceived(1, "Bob", said))
    lines = screen_text(state, now=100.0, cols=cols).split("\n")
    assert all(len(line) <= cols for line in lines) and len(lines) <= 23
    start = next(i for i, line in enumerate(lines) if line.startswith(" » Bob: word00"))
    shown = " ".join(line.strip() for line in lines[start:start + 4])
    assert f"» Bob: {said}" in shown and "…" not in shown
    finished = state_for(_views(seed=5)[-1])
    assert finished.hand_over
    finished.apply(ChatReceived(1, "Bob", said))
    lines = screen_text(finished, now=100.0, cols=cols).split("\n")
    right = [line.split("│ ", 1)[1] for line in lines if "│ " in line]
    start = next(i for i, line in enumerate(right) if line.startswith("» Bob: word00"))
    assert f"» Bob: {said}" in " ".join(line.strip() for line in right[start:])


def test_a_short_opponent_panel_at_the_end_of_a_hand_shows_the_hand() -> None:
    """At the end of a hand a short screen's opponent panel (three lines: a terminal of 16 to
    19 rows) held the header, the dealer's mark and the hand shown, and packing the melds into
    no line left raised IndexError: the terminal client crashed as the hand ended."""
    for seed in range(40):
        state, _ = finished(seed)
        view = state.view
        assert view is not None and view.revealed is not None
        dealer = view.dealer
        if dealer != view.seat and any(m.owner == dealer for m in view.melds):
            break
    else:
        raise AssertionError("no hand of seeds 0-39 ends with a dealer opponent's meld")
    for rows in (2, 3, 5):
        panel = to_text(opponent_panel(state, dealer, 39, rows)).split("\n")
        assert len(panel) <= rows and panel[0].strip().startswith(state.seats[dealer].name)
    assert "hand" in to_text(opponent_panel(state, dealer, 39, 3))


@pytest.mark.parametrize("rows", [1, 3, 4, 8])
def test_the_result_beside_the_log_always_says_how_the_next_hand_comes(rows: int) -> None:
    """A short screen (16 to 19 rows, or the tiny layout below) has no keys line, and the
    result's last line, "Enter: next hand", was cut below the seats' rows: at a table without
    a timer nothing on the screen said how to go on."""
    state, _ = finished(4)
    lines = [to_text(line) for line in result_lines(state, rows)]
    assert len(lines) <= rows and lines[-1].strip() == "Enter: next hand"
    if rows > 1:
        assert lines[0].strip().startswith("Hand over")


def test_a_narrow_title_keeps_the_turn_and_the_clock() -> None:
    """At 40 columns (a phone's terminal) the title was cut at its end: "Tongits · play (t1) ·
    hand 2 YOUR TURN…", the moves and the seconds left out of sight."""
    view = position("Kc Kd Kh 4s 5s 6s 9c", phase=Phase.PLAY)
    state = state_for(view, deadline=27.2)
    text = to_text(title_line(state, now=100.0, cols=40))
    assert len(text) <= 40 and text.rstrip().endswith("⏱ 0:28")  # 27.2 s, counted up
    assert "YOUR TURN: meld, discard" in text and text.startswith(" t1")
    wide = to_text(title_line(state, now=100.0, cols=80))
    assert wide.startswith(" Tongits · t1 · hand 1") and wide.rstrip().endswith("⏱ 0:28")


def test_a_spectator_sees_the_bottom_seats_hand_once_the_hand_is_over_and_not_before() -> None:
    """A spectator's terminal showed the two top seats' final hands at a hand's end but only
    "(watching)" for the seat at the bottom: RULES.md §11 reveals all three hands then."""
    from tongits.engine import seat_view

    session = FakeSession(seed=5, names=("Ana", "Bob", "Cara"))
    played = TableState()
    session.start(played.apply)
    assert "(watching)" in hand_line_text(state_for(seat_view(session.hand, None)))
    while played.view is not None and played.view.legal:
        session.send_move(choose_move(played.view))
    assert session.hand.over
    over = state_for(seat_view(session.hand, None))
    assert over.view is not None and over.view.revealed is not None
    shown = hand_line_text(over)
    assert "(watching)" not in shown
    assert sorted(shown.replace("[", " ").replace("]", " ").split()) == sorted(
        card.pretty() for card in over.view.revealed[0])


def hand_line_text(state: TableState) -> str:
    return to_text(hand_line(state))


def test_the_why_of_a_readers_chips_keeps_its_rows_beside_the_log() -> None:
    """At 80x24 (the log's 7 rows) a burned reader read "Hand over: greedy-bot-1 wins / by call
    (nobody challenged)", its row "-4" and nothing of why: the why took two lines at 46
    columns, and the head's second line left it no room. It now takes one line of up to 56."""
    for seed in range(300):
        state, _ = finished(seed, ("Ana", "greedy-bot-1", "greedy-bot-2"))
        result, view = state.result, state.view
        assert result is not None and view is not None and view.seat is not None
        won, how = result_head(state, result)
        why = f"   you to greedy-bot-1: {chip_words(state.why[view.seat])}"
        if len(won) + len(how) + 2 > 48 and 46 < len(why) <= 56:
            break
    else:
        raise AssertionError("no hand of seeds 0-299 has a long head and a long why")
    lines = [to_text(line) for line in result_lines(state, 7)]
    assert len(lines) == 7 and lines[0].strip() == won and lines[1].strip() == how
    assert lines[5].rstrip() == why
    assert lines[-1].strip() == "Enter: next hand"
    screen = screen_text(state, now=0.0, cols=80, rows=24).split("\n")
    assert any(line.startswith(why + " ") and "│" in line for line in screen)


def test_seats_tied_in_chips_share_their_place_at_the_match_end() -> None:
    """A match ended Ben +44, greedy-bot-1 -22, Mia -22: the standings said "2. greedy-bot-1",
    "3. Mia", seat order deciding a place the chips do not."""
    state, _ = finished(4)
    assert state.standings is not None
    state.standings = {**state.standings, "chips": [-22, 44, -22], "wins": [3, 4, 1]}
    state.match_over = True
    rows = [to_text(line).strip() for line in match_lines(state)]
    assert [row.split(" ")[:2] for row in rows if row[:1].isdigit()] == [
        ["1.", "Bob"], ["2.", "Ana"], ["2.", "Cara"]]
