"""The table screen as text: everything RULES.md §11 lets a seat see, within 80×24."""

from __future__ import annotations

from client_positions import position
from tongits.client.tui.render import (
    centre_line,
    hand_line,
    make_style,
    screen_text,
    to_text,
)
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import (
    ChatReceived,
    Connection,
    SeatsChanged,
    StateUpdate,
    TableState,
    event_lines,
)
from tongits.engine import Phase

SEATS = [
    {"seat": 0, "name": "Ana", "kind": "human", "connected": False},
    {"seat": 1, "name": "Bob", "kind": "human"},
    {"seat": 2, "name": "Cara", "kind": "bot"},
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
    assert "YOUR TURN: draw, pick or call" in text and "⏱ 0:28" in text
    assert "table: #3 2♠ 3♠ 4♠" in text
    assert "count 22" in text  # K♦ 2♣ 9♠ A♥ loose, 5♥ 6♥ 7♥ melded
    assert to_text(hand_line(state)).split() == ["[5♥", "6♥", "7♥]", "2♣", "K♦", "A♥", "9♠"]
    state.sort_by_rank = True
    assert to_text(hand_line(state)).split() == ["[5♥", "6♥", "7♥]", "A♥", "2♣", "9♠", "K♦"]


def test_turn_of_another_seat_and_blocked_mark() -> None:
    view = position("Kd 2c", melds=[(2, "4d 5d 6d")], to_act=2)
    object.__setattr__(view, "blocked", (False, False, True))
    text = screen_text(state_for(view, deadline=None), now=100.0)
    assert "Cara: draw, pick or call" in text and "⏱" not in text
    assert "no call" in text and "▶ Cara" in text


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
    lines = [x.text for x in event_lines(history, ["Ana", "Bob", "Cara"])]
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


def test_banner_and_seat_changes() -> None:
    state = state_for(VIEW)
    state.apply(Connection("lost"))
    assert "connection lost, reconnecting" in screen_text(state, now=100.0)
    state.apply(Connection("connected"))
    state.apply(SeatsChanged([{"name": "Zed", "kind": "human", "standing_in": True}]))
    text = screen_text(state, now=100.0)
    assert "connection lost" not in text and "bot stands in" in text


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
    assert "burned" in text and "Standings: Ana -4 · Bob -5 · Cara +9" in text
    assert "Press Enter for the next hand" in text
    assert "hand 3♣ 4♣ 2♦ 2♠" in text  # an opponent's hand is revealed
    assert all(len(line) <= 80 for line in text.split("\n"))


def test_no_colour_style() -> None:
    plain = make_style(colour=False)
    coloured = make_style(colour=True)
    assert "#ff5f5f" in str(coloured.style_rules) and "#ff5f5f" not in str(plain.style_rules)
