"""The page and the terminal tell a hand in the same words: each event of its history and its
headline, put together from the phrasebook (protocol/phrases.py) by the terminal's Python and
by the page's JavaScript, run here in Node on the same hands. A hand told differently at the
two ends (a word, a card's notation, a meld's number, who lost a call, what the reader's own
seat is called) fails here. One difference is meant: the page writes a ten as its cards' faces
do, ``10♦``, where the terminal writes what its player types, ``T♦`` (RULES.md §1)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from screen_support import finished
from tongits.client.tui.hint import choose_move
from tongits.client.tui.render import result_head
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import HandOver, LogKind, StateUpdate, TableState, event_lines
from tongits.engine import Result
from tongits.engine.view import seat_view_dict
from tongits.protocol.maps import SeatMap, StandingsMap
from tongits.protocol.phrases import PHRASES, chip_words
from web_support import run_page

NAMES = ("Ana", "Bob", "Cara")
SEATS: list[SeatMap] = [{"seat": seat, "name": name, "player": "human"}
                        for seat, name in enumerate(NAMES)]

#: Tells each hand of ``input`` as the page does: the headline and the events for the seat that
#: played it (its own moves are "You"'s), then the events as a spectator reads them (every seat
#: by name).
TELL = r"""
S.phrases = input.phrases;
return input.hands.map((hand) => {
  S.seats = hand.names.map((name, seat) => ({ seat, name }));
  S.view = hand.view;
  S.seat = hand.seat; S.spectator = false;
  const call = hand.result.end === "call" ? answers(hand.view.history) : null;
  const headline = handHeadline(hand.result, call);
  const events = narrate(hand.view.history);
  S.seat = null; S.spectator = true;
  return { headline, events, watched: narrate(hand.view.history), why: hand.why.map(chipWords) };
});
"""


def _as_the_page_writes(told: dict[str, Any]) -> dict[str, Any]:
    """The terminal's words with each ten as the page writes it."""
    def ten(text: str) -> str:
        return re.sub(r"(?<![A-Za-z0-9])T(?=[♠♥♦♣])", "10", text)
    return {"headline": ten(told["headline"]), "events": [ten(e) for e in told["events"]],
            "watched": [ten(e) for e in told["watched"]], "why": told["why"]}


def _page(hands: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    told: list[dict[str, Any]] = run_page(TELL, {"phrases": dict(PHRASES), "hands": hands}, tmp)
    return told


def test_the_page_and_the_terminal_tell_a_hand_in_the_same_words(tmp_path: Path) -> None:
    terminal, hands, kinds = [], [], set()
    for seed in range(80):
        state, session = finished(seed, NAMES)
        result, view = state.result, state.view
        assert result is not None and view is not None and view.seat is not None
        head = " ".join(result_head(state, result)).rstrip()
        why = [[item.to_dict() for item in seat] for seat in session.hand.settlement]
        terminal.append({"headline": head,
                         "events": [line.text for line in state.log()
                                    if line.kind is LogKind.EVENT],
                         "watched": [line.text for line in event_lines(view.history, NAMES)],
                         "why": [chip_words(items) for items in why]})
        hands.append({"names": list(NAMES), "seat": view.seat, "why": why,
                      "view": seat_view_dict(session.hand, view.seat),
                      "result": result.to_dict()})
        kinds.add(result.end.value + (" lost" if "challenging" in head else ""))
    assert {"tongits", "call", "call lost", "stock"} <= kinds  # every kind of headline is told
    assert any(line.startswith("You ") for hand in terminal for line in hand["events"])
    assert any(" ×" in words for hand in terminal for words in hand["why"])  # an n above 1
    page = _page(hands, tmp_path)
    for seed, (ours, theirs) in enumerate(zip(terminal, page, strict=True)):
        assert theirs == _as_the_page_writes(ours), f"seed {seed}"


#: The line the page logs on a resuming ``state`` (``missedHands``), given the standings it had.
MISSED = r"""
S.phrases = input.phrases;
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = input.seat; S.spectator = false;
return input.cases.map((c) => missedHands(c.before, c.msg));
"""


def test_hands_settled_while_away_are_told_with_the_chips_they_moved(tmp_path: Path) -> None:
    """A phone locked for 90 s at a table with a 15 s grace: a bot stood in, hand 4 ended and
    hand 5 was dealt before it was back; the page went on from hand 5 with 13 chips become
    11 and nothing said why (that hand's result is not sent again). The terminal and the page
    now say who won the hand missed, or how many were, and the reader's chips in them."""
    session = FakeSession(seed=3, names=NAMES)
    updates: list[Any] = []
    session.start(updates.append)
    results: list[HandOver] = []
    for _ in range(3):
        while (views := [u for u in updates if isinstance(u, StateUpdate)])[-1].view.legal:
            session.send_move(choose_move(views[-1].view))
        results.append(next(u for u in reversed(updates) if isinstance(u, HandOver)))
        session.next_hand()
    now = [u for u in updates if isinstance(u, StateUpdate)][-1].view  # hand 4, just dealt
    seat = now.seat
    assert seat is not None and now.result is None
    first, second, third = (r.standings for r in results)
    winner = Result.from_dict(results[2].result).winner
    assert winner is not None

    def words(before: StandingsMap) -> str:
        chips = third["chips"][seat] - before["chips"][seat]
        return f"{chips:+d}" if chips else "0"

    who = "You" if winner == seat else NAMES[winner]
    expected = [f"2 hands played while you were away: your chips {words(first)}",
                f"{who} won hand 3 while you were away: your chips {words(second)}", None]
    terminal = []
    for before in (first, second, third):
        state = TableState()
        state.apply(StateUpdate(views[0].view, SEATS, None, table="t1"))
        state.apply(HandOver(results[0].result, before))
        state.apply(StateUpdate(now, SEATS, None, table="t1", missed=0, standings=third))
        told = [line.text for line in state.log() if "while you were away" in line.text]
        terminal.append(told[0] if told else None)
    assert terminal == expected
    resumed = {"missed": [], "view": seat_view_dict(session.hand, seat), "standings": third}
    cases = [{"before": before, "msg": resumed} for before in (first, second, third)]
    page = run_page(MISSED, {"phrases": dict(PHRASES), "names": list(NAMES), "seat": seat,
                             "cases": cases}, tmp_path)
    assert page == expected
