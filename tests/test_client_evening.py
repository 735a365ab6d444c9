"""The ends of an evening on the table screen: the next deal counted down, the log that
follows when the turn comes, the end of a match and what may follow it."""

from __future__ import annotations

from tongits.client.tui.hint import choose_move
from tongits.client.tui.render import message_line, result_head, screen_text, to_text
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import HandOver, MatchEnded, StateUpdate, TableState, Update
from tongits.protocol.maps import StandingsMap


def played_out(names: tuple[str, str, str] = ("Ana", "Bob", "Cara")) -> tuple[
        TableState, FakeSession]:
    """A local hand played to its end by the hint's moves."""
    session = FakeSession(names=names)
    state = TableState()
    session.start(state.apply)
    while state.view is not None and state.view.result is None:
        session.send_move(choose_move(state.view))
    return state, session


def test_the_next_deal_is_counted_down_in_the_title() -> None:
    """A table with a timer deals the next hand on its own (``hand_result.next_deal``): the
    title counts it down, so nobody wonders why the cards came; without one it says nothing."""
    state, _ = played_out()
    assert state.result is not None and state.standings is not None
    title = screen_text(state, now=100.0).split("\n")[0]
    assert title.rstrip().endswith("hand over") and "next deal" not in title
    state.apply(HandOver(state.result.to_dict(), state.standings, next_deal=27.2), now=100.0)
    title = screen_text(state, now=100.0).split("\n")[0]
    assert title.rstrip().endswith("   next deal in 0:28") and "hand over" not in title
    assert screen_text(state, now=120.0).split("\n")[0].rstrip().endswith(
        "next deal in 0:08")


def test_the_log_follows_when_the_turn_comes_though_it_was_scrolled_back() -> None:
    """PgUp while the others play, and the turn comes back: the log shows its end again (what
    was just played is what the player answers); a move of another seat leaves it alone."""
    updates: list[Update] = []
    session = FakeSession(names=("Ana", "Bob", "Cara"), seed=3)
    session.start(updates.append)
    view = next(u.view for u in reversed(updates) if isinstance(u, StateUpdate))
    while view.result is None and len(view.history) < 12:
        session.send_move(choose_move(view))
        view = next(u.view for u in reversed(updates) if isinstance(u, StateUpdate))
    state = TableState()
    turns = kept = 0
    for update in updates:
        ours_before = state.view is not None and state.view.to_act == 0 and bool(
            state.view.legal)
        state.apply(update)
        if not isinstance(update, StateUpdate):
            continue
        ours = update.view.to_act == 0 and bool(update.view.legal)
        if ours and not ours_before:
            assert state.log_scroll == 0
            turns += 1
        elif state.log_scroll == 3:
            kept += 1
        state.log_scroll = 3
    assert turns >= 2 and kept >= 2


def test_a_match_over_shows_the_winner_and_the_final_standings() -> None:
    state, _ = played_out()
    assert state.standings is not None
    final: StandingsMap = {**state.standings, "hands": 3, "chips": [5, -9, 4],
                           "wins": [2, 0, 1]}
    state.apply(MatchEnded("hands", final))
    for cols in (80, 60):
        lines = screen_text(state, now=0.0, cols=cols).split("\n")
        panel = [line.partition("│")[0].rstrip() for line in lines[-9:]]
        assert " Match over: you win the match" in panel
        assert " final standings after 3 hands:" in panel
        places = [line for line in panel if line[1:3] in ("1.", "2.", "3.")]
        assert places == [" 1. Ana    +5  2 wins", " 2. Cara   +4  1 win", " 3. Bob    -9  0 wins"]
        # the last hand, whose own result panel gave way to the match's
        assert state.result is not None
        won, how = result_head(state, state.result)
        at = panel.index(f" last hand: {won.removeprefix('Hand over: ')}")
        assert panel[at + 1] == f"   {how} · you {state.result.chips[0]:+d}"
    message, keys = screen_text(state, now=0.0).split("\n")[-2:]
    assert keys == " again · review · ^Q quit"  # no lobby: local
    # the message line says what happened; it said "the match is over: again · ^Q quit"
    assert message == " you win the match · your chips +5"
    state.has_lobby = True
    assert screen_text(state, now=0.0).endswith("\n again · lobby · review · ^Q quit")


def test_a_short_terminal_is_told_at_the_match_end_what_to_type() -> None:
    """Under 20 rows there is no keys line: the message line says who won the match, the
    reader's chips and then the commands, cut short rather than the commands."""
    state, _ = played_out()
    assert state.standings is not None
    state.has_lobby = True
    final: StandingsMap = {**state.standings, "hands": 3, "chips": [-9, 5, 4]}
    state.apply(MatchEnded("hands", final))
    assert to_text(message_line(state, 80)).rstrip() == " Bob wins the match · your chips -9"
    assert to_text(message_line(state, 80, keys_shown=False)).rstrip() == (
        " Bob wins the match · your chips -9 · again · lobby · review · ^Q quit")
    assert to_text(message_line(state, 60, keys_shown=False)).rstrip() == (
        " Bob wins the match · y… · again · lobby · review · ^Q quit")
    state.say("review done")
    assert to_text(message_line(state, 80, keys_shown=False)).rstrip() == (
        " review done · again · lobby · review · ^Q quit")
    state.say("not connected any more", error=True)
    assert to_text(message_line(state, 80, keys_shown=False)).rstrip() == (
        " ✗ not connected any more")


def test_a_tie_at_the_top_is_said_as_a_tie() -> None:
    state, _ = played_out()
    assert state.standings is not None
    tie: StandingsMap = {**state.standings, "chips": [4, -8, 4]}
    state.apply(MatchEnded("hands", tie))
    assert " Match over: Ana and Cara tie at +4" in screen_text(state, now=0.0)


def test_again_starts_a_new_match_with_nothing_of_the_old_one_kept() -> None:
    state, session = played_out()
    assert state.standings is not None
    state.apply(MatchEnded("hands", state.standings))
    state.sort_by_rank = True
    session.again()
    assert not state.match_over and state.result is None and state.standings is None
    assert state.view is not None and state.view.result is None and state.hands_seen == 1
    assert state.sort_by_rank  # how the player likes the hand shown stays


def test_of_two_players_with_one_name_ours_is_marked_by_seat() -> None:
    """Two "Ben" at one table: the hand's result and the standings mark which row is ours
    (by seat, not name), and the other Ben's row stays his plain name."""
    state, _ = played_out(("Ben", "Ben", "Cara"))
    assert state.view is not None and state.view.seat == 0
    text = screen_text(state, now=100.0)
    rule = next(line for line in text.split("\n") if line.startswith("─ after 1 hand: "))
    assert "Ben (you) " in rule and rule.count("Ben") == 2
    rows = [line.split("│")[0] for line in text.split("\n") if " count " in line and "│" in line]
    assert [row.split(" count ")[0].strip() for row in rows] == ["Ben (you)", "Ben", "Cara"]
    assert all(len(line) <= 80 for line in text.split("\n"))
    plain, _ = played_out(("Ana", "Bob", "Cara"))
    assert "(you)" not in screen_text(plain, now=100.0)
