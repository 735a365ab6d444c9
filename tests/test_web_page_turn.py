"""What the page says on a seat's own turn, from real views of the engine run through the
page's JavaScript in Node: the card just drawn from the stock (the history says only that a card
was drawn), and why a seat that has opened has no Call (a lay-off onto its meld, RULES.md §5).
A friend on a phone saw neither: the drawn card sat unmarked among twelve, and the Call button
was simply missing."""

from __future__ import annotations

import copy
from pathlib import Path

from engine_support import states
from tongits.engine import Action, Card, Move
from tongits.engine.view import seat_legal, seat_view_dict
from tongits.protocol.phrases import PHRASES
from web_support import FAKE_DOCUMENT, run_page

NAMES = ["Ana", "Bob", "Cara"]

#: ``justDrawn`` over a seat's views in order, as the page receives them.
FOLLOW = r"""
S.seat = input.seat; S.spectator = false; S.drawn = null;
let before = null;
return input.views.map((view) => {
  S.drawn = justDrawn(before, view);
  before = view;
  return S.drawn;
});
"""

#: ``blockedWords`` for the seat's view.
BLOCKED = r"""
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = input.seat; S.spectator = false;
return blockedWords(input.view);
"""


def test_the_card_drawn_is_named_until_the_turn_ends(tmp_path: Path) -> None:
    cases = []
    for seed in range(40):
        hands = states(seed)
        for hand in hands:
            seat = hand.to_act
            if hand.over or Move(Action.DRAW) not in hand.legal_moves():
                continue
            views = [seat_view_dict(hand, seat)]
            held = set(hand.hands[seat])
            hand.apply(seat, Move(Action.DRAW))
            drawn = str((set(hand.hands[seat]) - held).pop())
            expected: list[str | None] = [None]
            while not hand.over and hand.to_act == seat:  # melds, lay-offs, then the discard
                views.append(seat_view_dict(hand, seat))
                expected.append(drawn if any(str(c) == drawn for c in hand.hands[seat]) else None)
                move = next((m for m in hand.legal_moves() if m.action is not Action.DISCARD),
                            None) or hand.legal_moves()[0]
                hand.apply(seat, move)
            views.append(seat_view_dict(hand, seat))
            expected.append(None)  # the turn is over
            cases.append((seat, views, expected))
            break
    assert len(cases) >= 30
    for seat, views, expected in cases:
        assert run_page(FOLLOW, {"seat": seat, "views": views}, tmp_path) == expected


def test_a_seat_blocked_by_a_lay_off_is_told_who_laid_off(tmp_path: Path) -> None:
    told = 0
    for seed in range(300):
        for hand in states(seed):
            owners = {m.id: m.owner for m in hand.melds}
            # (seat laying off, owner of the meld) of each lay-off onto another seat's meld
            sapaws = [(s.seat, owners[s.move.meld]) for s in hand.steps
                      if s.move.action is Action.SAPAW and s.move.meld is not None
                      and owners[s.move.meld] != s.seat]
            if not hand.over and sapaws and hand.blocked_seats[sapaws[-1][1]]:
                laid_off, seat = sapaws[-1]
                words = run_page(BLOCKED, {"names": NAMES, "seat": seat,
                                           "view": seat_view_dict(hand, seat)}, tmp_path)
                assert words == f"{NAMES[laid_off]} laid off onto your meld: you cannot call now."
                told += 1
                break
        if told == 5:
            return
    raise AssertionError(f"only {told} blocked seats in 300 random hands")


#: ``moveLabel`` of every move offered the seat, in its view.
LABELS = r"""
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = input.seat; S.spectator = false; S.view = input.view;
return input.moves.map(moveLabel);
"""


def test_the_buttons_write_a_ten_as_its_face_shows_it(tmp_path: Path) -> None:
    """The cards' faces say 10; the buttons and the log said T (RULES.md §1's notation), which
    a friend on a phone does not read as a ten."""
    seen = 0
    for seed in range(200):
        for hand in states(seed):
            seat = hand.to_act
            moves = [m for m in seat_legal(hand, seat) if m["action"] in ("meld", "pick", "sapaw")]
            tens = [m for m in moves if any(c[0] == "T" for c in m.get("cards", []))
                    or m.get("card", " ")[0] == "T"]
            if hand.over or not tens:
                continue
            labels = run_page(LABELS, {"names": NAMES, "seat": seat, "moves": tens,
                                       "view": seat_view_dict(hand, seat)}, tmp_path)
            assert all("10" in label and "T" not in label.replace("Pick", "") for label in labels)
            seen += 1
            break
        if seen == 10:
            break
    assert seen == 10


#: What the page asks a seat that taps Call, for each of ``input.views``.
CONFIRM = r"""
S.phrases = input.phrases;
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = input.seat; S.spectator = false;
const asked = [];
ask = (text) => { asked.push(text); };
for (const view of input.views) { S.view = view; choose({ action: "call" }); }
return asked;
"""


def test_a_call_is_confirmed_with_the_table_s_tie_rule(tmp_path: Path) -> None:
    """The question before a call said "a challenger with a lower or equal count beats you" at
    every table, and at one with ``call_tie = caller`` (RULES.md §10) a tie is the caller's:
    the page told a rule the table does not play."""
    hand = next(h for seed in range(50) for h in states(seed)
                if not h.over and Move(Action.CALL) in h.legal_moves())
    seat = hand.to_act
    views = []
    for tie in ("challenger", "caller"):
        view = copy.deepcopy(seat_view_dict(hand, seat))  # the engine shares its wire maps
        view["options"] = {**view["options"], "call_tie": tie}
        views.append(view)
    count = views[0]["count"]
    asked = run_page(CONFIRM, {"phrases": dict(PHRASES), "names": NAMES, "seat": seat,
                               "views": views}, tmp_path)
    assert asked == [
        f"Call now? Your count is {count}: the lowest count wins, and a challenger with a lower"
        " or equal count beats you.",
        f"Call now? Your count is {count}: the lowest count wins, and a challenger needs a lower"
        " count to beat you (a tie is yours).",
    ]


def test_a_seats_chips_are_signed_and_counted_in_english(tmp_path: Path) -> None:
    """A seat's box said "1 chips" and "6 chips" beside "-7 chips" while the result and the
    standings below it said +1 and +6."""
    held = run_page("return input.map(chipsHeld);", [1, -1, 0, 6, -7], tmp_path)
    assert held == ["+1 chip", "-1 chip", "0 chips", "+6 chips", "-7 chips"]


#: The lines under a hand's headline (``handStory``) for ``input.result``, read by each of
#: ``input.seats``.
STORY = r"""
S.phrases = input.phrases;
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.spectator = false; S.view = null;
return input.seats.map((seat) => { S.seat = seat; return handStory(input.result).lines; });
"""


def test_a_tongits_says_what_it_is(tmp_path: Path) -> None:
    """"Hand over: Ben wins by Tongits" named the game itself to a friend who never read the
    rules, and nothing under it said what had happened, where a call and a stock-out each
    have their line."""
    result = next(hand.result for seed in range(300) for hand in [[*states(seed)][-1]]
                  if hand.result is not None and hand.result.end.value == "tongits")
    winner = result.winner
    assert winner is not None
    other = (winner + 1) % 3
    told = run_page(STORY, {"phrases": dict(PHRASES), "names": NAMES, "seats": [winner, other],
                            "result": result.to_dict()}, tmp_path)
    assert told[0][0] == "Your hand is empty: that is a Tongits."
    assert told[1][0] == f"{NAMES[winner]}'s hand is empty: that is a Tongits."


def test_a_stock_out_won_above_a_burned_seats_count_says_why(tmp_path: Path) -> None:
    """At a stock-out the story said "the lowest count wins" under a table where a burned
    seat counted less than the winner (132 of 1,969 random stock-outs): a seat that had not
    opened does not compete (RULES.md §6.3)."""
    above = below = None
    for seed in range(400):
        *_, hand = states(seed)
        result = hand.result
        if result is None or result.end.value != "stock" or result.winner is None:
            continue
        lower = [s for s in result.burned if result.counts[s] < result.counts[result.winner]]
        if lower and above is None:
            above = (result.to_dict(), lower)
        if not lower and below is None:
            below = result.to_dict()
    assert above is not None and below is not None
    (won, lower), plain = above, below
    reader = won["winner"]
    told = run_page(STORY, {"phrases": dict(PHRASES), "names": NAMES, "seats": [reader],
                            "result": won}, tmp_path)[0]
    others = ", ".join(NAMES[s] for s in lower)
    assert ("The stock ran out: the lowest count among the seats that had opened wins "
            f"(not {others}: no meld on the table).") in told
    told = run_page(STORY, {"phrases": dict(PHRASES), "names": NAMES, "seats": [plain["winner"]],
                            "result": plain}, tmp_path)[0]
    assert "The stock ran out: the lowest count wins." in told


#: ``renderBoard`` into a fake document; each meld drawn: its owner line and how many cards
#: face down and face up it shows.
BOARD = FAKE_DOCUMENT + r"""
S.phrases = input.phrases;
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = input.seat; S.spectator = false; S.view = input.view;
renderBoard();
return nodes.melds.children.map((meld) => {
  const [owner, cards] = meld.children;
  return { owner: owner.textContent,
           backs: cards.children.filter((c) => c.className.includes("back")).length,
           faces: cards.children.filter((c) => !c.className.includes("back")).length };
});
"""


#: ``renderAnnounce`` into the fake document: the lines of the call's box.
ANNOUNCE = BOARD.split("S.phrases = input.phrases;")[0] + r"""
S.phrases = input.phrases;
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = input.seat; S.spectator = false; S.view = input.view; S.legal = input.legal;
renderAnnounce();
return nodes.announce.children.map((line) => line.textContent);
"""


def test_another_seats_secret_meld_is_four_cards_face_down(tmp_path: Path) -> None:
    """A secret meld is four cards of one rank laid face down (RULES.md §4); the page drew
    three backs for another seat's, and "(secret)" said nothing of what it holds."""
    for seed in range(400):
        hand = next((h for h in states(seed) if not h.over
                     and any(m.secret for m in h.melds)), None)
        if hand is not None:
            break
    else:
        raise AssertionError("no secret meld in 400 random hands")
    meld = next(m for m in hand.melds if m.secret)
    other = (meld.owner + 1) % 3
    drawn = run_page(BOARD, {"phrases": dict(PHRASES), "names": NAMES, "seat": other,
                             "view": seat_view_dict(hand, other)}, tmp_path)
    theirs = next(d for d in drawn if d["owner"].startswith(f"#{meld.id} "))
    assert theirs == {"owner": f"#{meld.id} {NAMES[meld.owner]} (secret: four of a kind)",
                      "backs": 4, "faces": 0}
    mine = run_page(BOARD, {"phrases": dict(PHRASES), "names": NAMES, "seat": meld.owner,
                            "view": seat_view_dict(hand, meld.owner)}, tmp_path)
    assert next(d for d in mine if d["owner"].startswith(f"#{meld.id} ")) == {
        "owner": f"#{meld.id} You (secret)", "backs": 0, "faces": 4}


def test_a_seat_asked_to_answer_a_call_is_told_what_each_answer_does(tmp_path: Path) -> None:
    """Asked "Ben called: challenge or fold?", a friend had two buttons and nothing saying
    what either did, nor who wins a tie (the table's ``call_tie``)."""
    hand = next(h for seed in range(200) for h in states(seed)
                if not h.over and Move(Action.CHALLENGE) in h.legal_moves())
    seat = hand.to_act
    caller = hand.caller
    assert caller is not None
    lines = []
    for tie in ("challenger", "caller"):
        view = copy.deepcopy(seat_view_dict(hand, seat))  # the engine shares its wire maps
        view["options"] = {**view["options"], "call_tie": tie}
        drawn = run_page(ANNOUNCE, {"phrases": dict(PHRASES), "names": NAMES, "seat": seat,
                                    "view": view, "legal": seat_legal(hand, seat)}, tmp_path)
        lines.append(drawn)
    who = NAMES[caller]
    assert (f"Challenge: your count against {who}'s, the lowest wins (a tie beats {who}). "
            "Fold: you do not compare.") in lines[0]
    assert (f"Challenge: your count against {who}'s, the lowest wins ({who} wins a tie). "
            "Fold: you do not compare.") in lines[1]


#: ``timedOut`` for ``input.view``'s history, all of it new.
TIMED_OUT = r"""
S.phrases = input.phrases;
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = input.seat; S.spectator = false; S.view = input.view;
const history = input.view.history;
return timedOut(history, narrate(history), 0);
"""


def test_a_turn_the_server_played_is_said_under_the_hand(tmp_path: Path) -> None:
    """A phone whose turn ran out (20 s) had its draw and discard played by the server, and
    only the log, below the fold of a 360-px screen, said so; the terminal says it on its
    message line. The page now says it under the hand, in the same words."""
    hand = next(h for seed in range(50) for h in states(seed)
                if not h.over and len(h.steps) > 6 and h.to_act == (h.steps[-1].seat + 1) % 3
                and [s.move.action for s in h.steps[-2:]] == [Action.DRAW, Action.DISCARD]
                and h.steps[-2].seat == h.steps[-1].seat)
    seat = hand.steps[-1].seat
    view = copy.deepcopy(seat_view_dict(hand, seat))  # the engine shares its wire maps
    for step in view["history"][-2:]:
        step["timeout"] = True  # as the server marks a turn it played
    card = Card.parse(view["history"][-1]["card"]).pretty().replace("T", "10")
    said = run_page(TIMED_OUT, {"phrases": dict(PHRASES), "names": NAMES, "seat": seat,
                                "view": view}, tmp_path)
    assert said == f"Your time ran out: the server played for you (drew, discarded {card})."
    nxt = (seat + 1) % 3
    other = run_page(TIMED_OUT, {"phrases": dict(PHRASES), "names": NAMES, "seat": nxt,
                                 "view": seat_view_dict(hand, nxt)}, tmp_path)
    assert other is None


#: ``renderResult`` of a match's end into a fake document that keeps attributes: the final
#: standings' items, each with its place (``value``) and text.
STANDINGS = FAKE_DOCUMENT + r"""
S.phrases = input.phrases;
S.seats = input.names.map((name, seat) => ({ seat, name }));
S.seat = 2; S.spectator = false; S.result = null; S.rematch = null;
S.matchOver = { standings: input.standings };
renderResult();
const list = nodes.result.children.find((node) => node.tag === "ol");
return list.children.map((item) => [item.attributes.value, item.textContent]);
"""


def test_seats_tied_in_chips_share_their_place_in_the_final_standings(tmp_path: Path) -> None:
    """A match ended Ben +44, greedy-bot-1 -22, Mia -22: the page listed "2. greedy-bot-1" and
    "3. You", seat order deciding a place the chips do not."""
    standings = {"hands": 8, "chips": [44, -22, -22], "wins": [5, 1, 2], "pot": 0,
                 "names": ["Ben", "greedy-bot-1", "Mia"]}
    places = run_page(STANDINGS, {"phrases": dict(PHRASES), "standings": standings,
                                  "names": ["Ben", "greedy-bot-1", "Mia"]}, tmp_path)
    assert places == [[1, "Ben: +44 chips, 5 hands won"],
                      [2, "greedy-bot-1: -22 chips, 1 hand won"],
                      [2, "You: -22 chips, 2 hands won"]]
