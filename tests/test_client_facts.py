"""Every public fact of RULES.md §11 on the 80×24 screen: options, who laid off what, who threw
the top discard, the card just drawn, the log beside the result and scrolled back, the running
standings, the table's name and id, long runs whole."""

from __future__ import annotations

import pytest
from client_positions import position
from screen_support import finished
from tongits.client.tui.hint import choose_move
from tongits.client.tui.render import options_lines, result_head, screen_text, to_text, wrap
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import (
    SeatsChanged,
    StateUpdate,
    TableNamed,
    TableState,
    pile_throwers,
)
from tongits.engine import Action, Card, End, Move, Options, Phase, Step
from tongits.protocol.maps import SeatMap, StandingsMap

SEATS: list[SeatMap] = [
    {"seat": 0, "name": "Ana", "player": "human"},
    {"seat": 1, "name": "Bob", "player": "human"},
    {"seat": 2, "name": "Cara", "player": "bot"},
]


def lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    assert len(lines) <= 23 and all(len(line) <= 80 for line in lines), text
    return lines


def test_who_threw_the_top_discard_and_who_laid_off_each_card() -> None:
    history = [
        {"seat": 0, "action": "discard", "card": "7c"},
        {"seat": 1, "action": "pick", "cards": ["7h", "7s"]},
        {"seat": 1, "action": "discard", "card": "Kd"},
        {"seat": 2, "action": "draw"},
        {"seat": 2, "action": "sapaw", "card": "7d", "meld": 0},
        {"seat": 2, "action": "discard", "card": "2c"},
        {"seat": 0, "action": "pick", "meld": 0},
    ]
    steps = [Step.from_dict(step) for step in history]
    assert pile_throwers(steps) == [1]
    view = position("Kd 2c", top="9s", melds=[(1, "7h 7s 7c 7d")], to_act=1,
                    laid_off={0: [("7d", 2)]})
    object.__setattr__(view, "history", tuple(Step.from_dict(step) for step in (
        {"seat": 2, "action": "draw"},
        {"seat": 2, "action": "sapaw", "card": "7d", "meld": 0},
        {"seat": 2, "action": "discard", "card": "9s"},
    )))
    state = TableState()
    state.apply(StateUpdate(view, SEATS, None, table="t1"))
    text = screen_text(state, now=0.0)
    assert "Discard  9♠  from Cara" in text
    assert "#0 7♣ 7♦ 7♥ 7♠ (7♦ Cara)" in text
    names: list[SeatMap] = [{**seat, "name": name} for seat, name in zip(
        SEATS, ["You", "greedy-bot-1", "greedy-bot-2"], strict=True)]
    state.apply(StateUpdate(view, names, None, table="t1"))
    assert "(7♦ greedy-bot-2)" in screen_text(state, now=0.0)


def test_who_laid_off_what_is_read_from_the_view_in_the_order_laid() -> None:
    """The tags beside a meld come from the view's ``laid_off`` (as the page reads them), not
    from replaying the history: a view whose history says nothing of them (here: none at all)
    still names each card's player, runs of one player's cards together."""
    view = position("Kd 2c", top="9s", melds=[(1, "8d 9d Td Jd Qd Kd")], to_act=1,
                    laid_off={0: [("Qd", 2), ("8d", 2), ("Kd", 0)]})
    assert view.history == ()
    state = TableState()
    state.apply(StateUpdate(view, SEATS, None, table="t1"))
    assert "(Q♦ 8♦ Cara, K♦ Ana)" in screen_text(state, now=0.0)


@pytest.mark.parametrize("cols", [80, 60])
def test_a_lay_off_names_its_player_whole_at_80_and_60_columns(cols: int) -> None:
    """The tag beside a laid-off card was cut to 6 characters (``Bartho``), so two players
    whose names begin alike could not be told apart; it is the whole name now, wrapped (and
    broken inside when wider than the panel) rather than cut."""
    long = "Bartholomew-the-magnificent-xx"
    view = position("Kd 2c", top="8s", melds=[(1, "7h 7s 7c 7d"), (0, "9s Ts Js Qs")],
                    to_act=1, laid_off={0: [("7d", 2)], 1: [("9s", 2)]})
    object.__setattr__(view, "history", tuple(Step.from_dict(step) for step in (
        {"seat": 2, "action": "draw"},
        {"seat": 2, "action": "sapaw", "card": "7d", "meld": 0},
        {"seat": 2, "action": "sapaw", "card": "9s", "meld": 1},
        {"seat": 2, "action": "discard", "card": "8s"},
    )))
    seats: list[SeatMap] = [{**SEATS[0], "name": "greedy-bot-0"}, SEATS[1],
                            {**SEATS[2], "name": long}]
    state = TableState()
    state.apply(StateUpdate(view, seats, None, table="t1"))
    text = screen_text(state, now=0.0, cols=cols)
    assert all(len(line) <= cols for line in text.split("\n")), text
    ours = next(line for line in text.split("\n") if "table: #0" in line)
    assert ours.rstrip().endswith(f"(7♦ {long})"), text
    # The opponent's panel (half the screen) wraps the tag onto lines of its own, whole.
    panel = "".join(line.partition("│")[2].strip() for line in text.split("\n")[:6])
    assert f"(9♠{long})" in panel.replace(" ", ""), text


def drawn_at_our_turn(seed: int) -> tuple[TableState, FakeSession, Card]:
    """A local game played up to Ana's first turn, where she draws: the card she drew."""
    session = FakeSession(seed=seed, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    assert state.view is not None
    while state.view.phase is not Phase.START or state.view.to_act != 0:
        session.send_move(choose_move(state.view))
    before = set(state.view.hand)
    session.send_move(next(m for m in state.view.legal if m.action is Action.DRAW))
    return state, session, (set(state.view.hand) - before).pop()


def test_the_card_just_drawn_is_named_and_highlighted_until_the_turn_ends() -> None:
    state, session, drawn = drawn_at_our_turn(4)
    assert state.view is not None
    assert state.drawn == drawn
    text = screen_text(state, now=0.0)
    assert f"· drew {drawn.pretty()}" in text
    from tongits.client.tui.render import hand_line

    marked = [text for style, text in hand_line(state) if "class:top" in style]
    assert marked == [drawn.pretty()]
    while state.view.to_act == 0 and state.view.legal:
        session.send_move(choose_move(state.view))
    assert state.drawn is None


def test_the_card_just_drawn_stays_named_through_a_meld_after_the_draw() -> None:
    """The header's ``drew K♥`` went with the first meld or lay-off after the draw, though it
    is meant to name the drawn card until the turn ends."""
    state, session, drawn = drawn_at_our_turn(1)
    assert state.view is not None
    meld = Move.parse("meld 5d 6d 7d")
    assert str(drawn) == "Kh" and meld in state.view.legal
    session.send_move(meld)
    assert state.drawn == drawn and f"· drew {drawn.pretty()}" in screen_text(state, now=0.0)
    session.send_move(Move.parse("discard Kh"))
    assert state.drawn is None


def test_the_result_stands_beside_the_end_of_the_log() -> None:
    state, _ = finished(5)
    lines = lines_of(screen_text(state, now=0.0))
    result = next(i for i, line in enumerate(lines) if line.startswith(" Hand over:"))
    assert "│ " in lines[result]
    log_side = [line.split("│ ", 1)[1] for line in lines[result:] if "│ " in line]
    assert log_side[-3:] == [line.text for line in state.log()[-3:]]
    state.note(["The game is saved: `tongits play` again takes you back to this seat."])
    assert "takes you back to this seat." in screen_text(state, now=0.0)  # not cut


@pytest.mark.parametrize(
    ("seed", "head"),
    [
        (12, "Hand over: you win by call (nobody challenged)"),
        (2, "Hand over: you win by call (challenged)"),
        (11, "Hand over: Cara wins by call (challenged)"),
        (29, "Hand over: Cara wins, challenging your call"),
        (91, "Hand over: you win, challenging Bob's call"),
    ],
)
def test_the_result_says_who_called_and_who_won(seed: int, head: str) -> None:
    """A call won by a challenger reads as such, not as a win "by call" (which reads as if
    the winner had called)."""
    state, _ = finished(seed)
    assert state.result is not None and state.result.end is End.CALL
    assert " ".join(result_head(state, state.result)) == head
    panel = [line.split("│")[0].strip() for line in screen_text(state, now=0.0).split("\n")]
    top = next(i for i, line in enumerate(panel) if line.startswith("Hand over:"))
    assert " ".join(panel[top : top + 2]).startswith(head)  # wrapped, if need be, not cut


def test_a_hint_goes_once_the_game_moves_on_from_its_position() -> None:
    """A hint advises one position: the same view delivered again (a resume) keeps it, any
    move (here the bots', after ours) takes it away; help is about no position and stays."""
    session = FakeSession(seed=4, names=("Ana", "Bob", "Cara"))
    state = TableState()
    session.start(state.apply)
    view = state.view
    assert view is not None and view.legal
    state.note(["best: hold"], about=view)
    state.apply(StateUpdate(view, session.seats(), None, table="local"))
    assert "best: hold" in screen_text(state, now=0.0)
    session.send_move(choose_move(view))
    assert state.view is not view and "best: hold" not in screen_text(state, now=0.0)
    state.note(["help stays"])
    later = state.view
    assert later is not None
    session.send_move(choose_move(later))
    assert state.view is not later and "help stays" in screen_text(state, now=0.0)


def test_the_log_scrolls_back_to_the_start_of_the_hand() -> None:
    state, _ = finished(5)
    state.result = None  # the log alone, as during the hand
    text = screen_text(state, now=0.0)
    first = state.log()[0].text
    assert first not in text
    state.log_scroll = len(state.log())
    text = screen_text(state, now=0.0)
    assert first in text and " ↓ " in text and "earlier" not in text  # nothing above it
    state.log_scroll = 3
    assert "↑ " in screen_text(state, now=0.0) and " earlier (PgUp) · ↓ 3 later" in screen_text(
        state, now=0.0)


def test_running_standings_stay_through_the_next_hand() -> None:
    state, session = finished(5)
    chips = session.match.ledger
    shown = f"─ after 1 hand: Ana {chips[0]:+d} · Bob {chips[1]:+d} · Cara {chips[2]:+d} ─"
    assert shown in screen_text(state, now=0.0)
    session.next_hand()
    assert state.hands_seen == 2 and state.result is None
    assert shown in screen_text(state, now=0.0)


def test_a_resumed_screen_shows_the_standings_the_server_caught_it_up_with() -> None:
    """A client started again mid-match gets the standings on its first ``state``: the rule
    under the opponents shows them at once, before any hand ends."""
    state = TableState()
    state.apply(StateUpdate(position("Kd 2c"), SEATS, None, table="t4"))
    assert "chips:" not in screen_text(state, now=0.0)
    standings: StandingsMap = {"hands": 2, "chips": [3, -5, 2], "wins": [1, 0, 1], "pot": 0,
                               "names": ["Ana", "Bob", "Cara"]}
    state.apply(StateUpdate(position("Kd 2c"), SEATS, None, "t4", 4, standings))
    assert "─ after 2 hands: Ana +3 · Bob -5 · Cara +2 ─" in screen_text(state, now=0.0)


def test_the_table_options_show_and_are_listed() -> None:
    session = FakeSession(seed=5, options=Options.from_dict({"pick_to_sapaw": True}))
    state = TableState()
    session.start(state.apply)
    assert "─ house rules: pick_to_sapaw=true ─" in screen_text(state, now=0.0)
    listed = options_lines(state)
    assert listed[1].startswith("* pick_to_sapaw = true ") and "  ante = 0" in "\n".join(listed)
    assert len(listed) <= 7 and all(len(line) <= 80 for line in listed)  # the log's 7 rows
    plain = FakeSession(seed=5)
    state = TableState()
    plain.start(state.apply)
    assert "─ standard rules ─" in screen_text(state, now=0.0)


def test_the_title_names_the_table_and_its_id() -> None:
    state = TableState()
    state.apply(StateUpdate(position("Kd 2c"), SEATS, None, table="t4"))
    assert screen_text(state, now=0.0).startswith(" Tongits · t4 · hand 1")
    state.apply(TableNamed("Friday"))
    assert screen_text(state, now=0.0).startswith(" Tongits · Friday (t4) · hand 1")


def test_before_the_deal_our_own_seat_is_at_the_bottom() -> None:
    """Ben joins seat 1 of a table waiting for its third player: the screen's bottom is his
    seat (it showed seat 0, Ana, until the first deal)."""
    state = TableState()
    seats: list[SeatMap] = [{"seat": 0, "name": "Ana", "player": "human"},
                            {"seat": 1, "name": "Ben", "player": "human"}]
    state.apply(SeatsChanged(seats))
    state.apply(TableNamed("Friday", 0, "t1", seat=1))
    lines = screen_text(state, now=0.0).split("\n")
    bottom = lines[lines.index(next(line for line in lines if "standard rules" in line)) + 1]
    assert bottom.strip().startswith("Ben") and "Ben" not in lines[1]
    assert "Ana" in lines[1]


def test_a_long_run_wraps_and_its_far_end_stays_on_screen() -> None:
    run = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"
    view = position("Kd 2c", melds=[(2, run), (1, "4d 5d 6d")])
    state = TableState()
    state.apply(StateUpdate(view, SEATS, None, table="t1"))
    text = screen_text(state, now=0.0)
    lines_of(text)
    assert "K♠" in text and "…" not in text
    assert all(len(to_text(line)) <= 20 for line in wrap([("", "#0 " + run)], 20))


def test_the_ante_pot_is_shown_and_who_takes_it() -> None:
    """With an ante, a hand's chips are its settlement alone (RULES.md §13): the end of a hand
    says what the pot holds, and who took it, else the standings jump by chips no line
    explains."""
    state, session = finished(5, options=Options.from_dict({"ante": 5}))
    said: list[str] = []
    for _ in range(12):
        standings = state.standings
        assert standings is not None
        panel = [line.split("│")[0].strip() for line in lines_of(screen_text(state, now=0.0))]
        if standings["pot"]:
            # on the last line, before "Enter: next hand"
            assert f"pot {standings['pot']} · Enter: next hand" in panel
            said.append("pot")
        else:
            winner = state.result.winner if state.result is not None else None
            assert winner is not None
            who = "you take" if winner == 0 else f"{SEATS[winner]['name']} takes"
            assert f"{who} the pot: +{standings['pot_taken']} · Enter: next hand" in panel
            said.append("taken")
        session.next_hand()
        while state.view is not None and state.view.legal:
            session.send_move(choose_move(state.view))
    assert {"pot", "taken"} <= set(said)
