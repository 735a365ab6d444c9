"""Reading a typed line into a move, and refusing what is not legal with the reason."""

from __future__ import annotations

import re

import pytest
from client_positions import position
from tongits.client.tui.commands import (
    CommandError,
    Local,
    help_lines,
    parse_command,
    read_command,
    why_not,
)
from tongits.client.tui.hint import choose_move, hint_lines, hint_move
from tongits.engine import Action, Card, Move, Options, Phase
from tongits.engine.policies import get_policy


def c(text: str) -> Card:
    return Card.parse(text)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("draw", Move(Action.DRAW)),
        ("  DRAW ", Move(Action.DRAW)),
        ("dr", Move(Action.DRAW)),
        ("pick 7h 7s", Move(Action.PICK, (c("7h"), c("7s")))),
        ("pick 7S 7h", Move(Action.PICK, (c("7h"), c("7s")))),
        ("pick 3", Move(Action.PICK, meld=3)),
        ("meld 10h jh qh", Move(Action.MELD, (c("Th"), c("Jh"), c("Qh")))),
        ("meld 10 h j h q h", Move(Action.MELD, (c("Th"), c("Jh"), c("Qh")))),
        ("discard 10 h", Move(Action.DISCARD, card=c("Th"))),
        ("sapaw 10 d 3", Move(Action.SAPAW, card=c("Td"), meld=3)),
        ("meld Q♥,J♥,T♥", Move(Action.MELD, (c("Th"), c("Jh"), c("Qh")))),
        ("secret Qc Qd Qh Qs", Move(Action.SECRET, (c("Qc"), c("Qd"), c("Qh"), c("Qs")))),
        ("sapaw 8d 3", Move(Action.SAPAW, card=c("8d"), meld=3)),
        ("sapaw 3 8d", Move(Action.SAPAW, card=c("8d"), meld=3)),
        # the screen names melds "#3": typed as shown, the number is read the same
        ("sapaw 8d #3", Move(Action.SAPAW, card=c("8d"), meld=3)),
        ("sapaw #3 8d", Move(Action.SAPAW, card=c("8d"), meld=3)),
        ("pick #3", Move(Action.PICK, meld=3)),
        ("discard kd", Move(Action.DISCARD, card=c("Kd"))),
        ("call", Move(Action.CALL)),
        ("challenge", Move(Action.CHALLENGE)),
        ("fold", Move(Action.FOLD)),
        ("hint", Local("hint")),
        ("sort", Local("sort")),
        ("say  magandang gabi ", Local("say", "magandang gabi")),
        ("say gg · wp", Local("say", "gg · wp")),
        ("help", Local("help")),
        ("quit", Local("quit")),
    ],
)
def test_parse(line: str, expected: object) -> None:
    assert parse_command(line) == expected


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("", "type a command"),
        ("d", "unknown command 'd': did you mean discard or draw?"),
        ("drw", "unknown command 'drw': did you mean draw?"),
        ("DISCRAD", "did you mean discard?"),
        ("jump", "unknown command 'jump'; `help` lists them"),
        ("draw 7h", "takes nothing"),
        ("pick", "usage"),
        ("pick 7h 7h", "7h is named twice"),
        ("meld 7h 7x", "'7x' is not a card"),
        ("sapaw 8d", "usage"),
        ("sapaw 8d x", "not a meld number"),
        ("sapaw 8d #x", "not a meld number"),
        ("discard", "usage"),
        ("discard 7h 8h", "usage"),
        ("say", "usage"),
        ("hint now", "takes nothing"),
        ("pick 9♣ J♣ · discard 7♣", "one move at a time: pick 9♣ J♣ first, then the next"),
        # typed in tmux by a player who had read no help: each answer says what to type
        ("10 h", "name the move first: discard 10h"),
        ("10♥", "name the move first: discard 10♥"),
        ("3h 4h 5h", "name the move first: meld 3h 4h 5h"),
        ("throw 5h", "unknown command 'throw': here it is discard 5h"),
        ("D 10H", "unknown command 'D': did you mean discard 10H?"),
        ("lay off 9s 1", "unknown command 'lay': here it is sapaw 9s 1"),
        ("tongits", "Tongits is not typed: it is won when your last card leaves your hand"),
        ("take 7c", "to take the discard: pick and your cards it melds with (pick 7h 7s)"),
        ("pick up", "pick is followed by your cards that meld with the discard"),
        ("draw from discard", "draw takes nothing after it; the discard is taken by pick"),
        ("pick", "usage: pick 7h 7s (meld the top discard)"),
        ("meld 3h4h5h", "'3h4h5h': put a space between the cards: 3h 4h 5h"),
        ("meld 10h 10 h", "10h is named twice"),
        ("meld 4c 5c 6c · sapaw 8d 3", "one move at a time: meld 4c 5c 6c first"),
    ],
)
def test_parse_errors(line: str, reason: str) -> None:
    with pytest.raises(CommandError, match=re.escape(reason)):
        parse_command(line)


START = position("7h 7s 5h 6h Kd 3d", top="7c", melds=[(2, "4d 5d 6d")])
PLAY = position("7h 7s 5h 6h Kd 3d", top="7c", melds=[(2, "4d 5d 6d")], phase=Phase.PLAY)
NAMES = ["Ana", "Bob", "Cara"]


@pytest.mark.parametrize(
    ("view", "line", "reason"),
    [
        (START, "pick 5h 6h", "5h 6h with 7c is not a meld"),
        (START, "pick 7h", "two or more of your cards"),
        (START, "pick 7h 7d", "7d not in your hand"),
        (START, "pick 7h 7s 7c", "7c is the discard you take: name only your own cards"),
        (START, "pick 0", "may only be picked into a new meld"),
        (START, "discard Kd", "draw or pick first"),
        (START, "meld 7h 7s 7c", "draw or pick first"),
        (START, "call", "before you have a meld"),
        (START, "fold", "no call to answer"),
        (PLAY, "draw", "already drew"),
        (PLAY, "call", "only at the start of your turn"),
        (PLAY, "discard 2c", "2c not in your hand"),
        # as typed, not as the engine writes it ("Th not in your hand" for "discard 10h")
        (PLAY, "discard 10h", "10h not in your hand$"),
        (PLAY, "discard 10 h", "10h not in your hand$"),
        (PLAY, "discard 7c", "7c not in your hand; you have 7♥ 7♠"),
        (PLAY, "sapaw 10♦ 0", "10♦ not in your hand"),
        (PLAY, "sapaw 3d", r"which meld\? 3d fits #0 \(sapaw 3d 0\)"),
        (PLAY, "sapaw 7h", "7h fits no meld on the table now"),
        (START, "sapaw 3d", "usage: sapaw 8d 3"),
        (PLAY, "meld 5h 6h 7s", "not a meld"),
        (PLAY, "sapaw 3d 7", "no meld 7"),
        (PLAY, "sapaw Kd 0", "Kd does not fit meld 0"),
        (PLAY, "secret 7h 7s 5h 6h", "not four of a kind"),
        (position("7h 7s", top="7c", to_act=2), "draw", "not your turn: Cara is to play"),
        (position("7h", phase=Phase.PLAY, turn=0), "draw", "dealer's first turn"),
        (
            position(
                "7h 8h", melds=[(1, "2c 3c 4c")], opened=(True, True, True), phase=Phase.ANSWER
            ),
            "draw",
            "answer with challenge or fold",
        ),
    ],
)
def test_refused_with_reason(view, line: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CommandError, match=reason):
        read_command(line, view, NAMES)


def test_blocked_call_and_house_rules() -> None:
    view = position("7h 8h", melds=[(1, "2c 3c 4c")])
    object.__setattr__(view, "blocked", (False, True, False))
    object.__setattr__(view, "legal", tuple(m for m in view.legal if m.action is not Action.CALL))
    assert "laid off onto your meld" in str(why_not(Move(Action.CALL), view))
    rule = Options(no_sapawable_discard=True)
    view = position("5c Kd", melds=[(0, "2c 3c 4c")], phase=Phase.PLAY, options=rule)
    assert "could be laid off" in str(why_not(Move.discard(c("5c")), view))
    rule = Options(tongits_needs_discard=True)
    view = position("5c 6c 7c", phase=Phase.PLAY, options=rule)
    assert "last card must leave by a discard" in str(
        why_not(Move(Action.MELD, (c("5c"), c("6c"), c("7c"))), view)
    )


def test_every_legal_move_reads_back() -> None:
    for view in (START, PLAY):
        for move in view.legal:
            assert read_command(str(move), view) == move


def test_local_commands_need_no_view() -> None:
    assert read_command("hint", None) == Local("hint")
    with pytest.raises(CommandError, match="no hand"):
        read_command("draw", None)


def test_help_fits_80_columns() -> None:
    lines = help_lines()
    assert len(lines) <= 7 and all(len(line) <= 80 for line in lines)  # the log's 7 rows
    text = "\n".join(lines)
    assert "sapaw 8d 3" in text and "score" in text and "options" in text and "log" in text


def test_hint_shows_the_experts_advice_in_the_screens_notation() -> None:
    """The hint's first move is the expert's own decision, each suggested move is followed by
    its reason and the search's verdict (over so many dealt worlds), and every card is written
    as the hand shows it (``K♦``, never ``Kd``)."""
    lines = hint_lines(PLAY, width=60)
    assert lines[0] == "best: [5♥ 6♥ 7♥]  loose: 3♦ K♦ 7♠  count 20"
    first = get_policy("expert")(PLAY)
    assert hint_move(PLAY) == first
    assert lines[1].startswith("suggest: " + first.text(Card.pretty))
    text = " ".join(lines)
    assert f"{first.text(Card.pretty)}: " in text and "dealt worlds" in text
    assert all(len(line) <= 60 for line in lines)
    assert not any("Kd" in line or "5h" in line for line in lines)
    assert hint_lines(START)[1].startswith("suggest: " + hint_move(START).text(Card.pretty))
    assert hint_lines(PLAY) == hint_lines(PLAY)  # the same view, the same hint
    assert choose_move(START) == Move(Action.PICK, (c("7h"), c("7s")))
    low = position("As 2s 3s Ac", melds=[(1, "9c 9d 9h")])
    assert hint_lines(low)[1] == "suggest: call"
    waiting = position("7h 7s", top="7c", to_act=2)
    assert hint_lines(waiting)[-1] == "wait for your turn"


def test_the_hints_moves_typed_as_shown_are_its_moves() -> None:
    """The hint's line reads "suggest: meld 5♥ 6♥ 7♥ · sapaw 3♦ 0 · discard K♦ → count 7", and
    a player types it a move at a time, as it is shown: the last one, with what it leaves, was
    refused ("usage: discard Kd (one card)")."""
    suggested = hint_lines(PLAY)[1].removeprefix("suggest: ")
    assert "→ count" in suggested
    typed = [parse_command(part) for part in suggested.split(" · ")]
    assert typed[-1] == Move(Action.DISCARD, card=c("Kd"))
    assert typed[0] == hint_move(PLAY)
    assert parse_command("say 5♥ → 6♥") == Local("say", "5♥ → 6♥")


def test_discard_count_follows_the_tables_options() -> None:
    """With ``concealed_melds_count`` the melds kept in hand count, in the hint and in the
    meta of the discard completion."""
    from tongits.client.tui.completion import candidates, suggest

    rule = Options(concealed_melds_count=True)
    view = position("Ac 2c 3c 4d 4h 4s 5s", phase=Phase.PLAY, options=rule)
    assert "count 23" in hint_lines(view)[0]
    metas = {c.text: c.meta for c in candidates(suggest("discard "), view)}
    assert metas["5s"] == "count → 18"
