"""Completion, stage one (text → what comes next) and stage two (legal candidates)."""

from __future__ import annotations

import pytest
from client_positions import position
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from tongits.client.tui.completion import (
    MoveCompleter,
    Suggestion,
    Want,
    candidates,
    card_prefix,
    suggest,
)
from tongits.engine import Card, Options, Phase


def c(text: str) -> Card:
    return Card.parse(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", Suggestion(Want.COMMAND, "")),
        ("dr", Suggestion(Want.COMMAND, "dr")),
        ("draw", Suggestion(Want.COMMAND, "draw")),
        ("draw ", Suggestion(Want.NOTHING, "")),
        ("pick ", Suggestion(Want.PICK, "")),
        ("pick 7", Suggestion(Want.PICK, "7")),
        ("pick 7h ", Suggestion(Want.PICK, "", (c("7h"),))),
        ("pick 10h 7", Suggestion(Want.PICK, "7", (c("Th"),))),
        ("pick 3 ", Suggestion(Want.NOTHING, "")),
        ("pick zz ", Suggestion(Want.NOTHING, "")),
        ("meld ", Suggestion(Want.MELD_CARDS, "")),
        ("meld 4c 5c ", Suggestion(Want.MELD_CARDS, "", (c("4c"), c("5c")))),
        ("meld 4c,5c,", Suggestion(Want.MELD_CARDS, "", (c("4c"), c("5c")))),
        ("secret Q♣ ", Suggestion(Want.SECRET_CARDS, "", (c("Qc"),))),
        ("sapaw ", Suggestion(Want.SAPAW_CARD, "")),
        ("sapaw 8", Suggestion(Want.SAPAW_CARD, "8")),
        ("sapaw 8d ", Suggestion(Want.SAPAW_MELD, "", card=c("8d"))),
        ("sapaw 8d 1", Suggestion(Want.SAPAW_MELD, "1", card=c("8d"))),
        ("sapaw 8d 3 ", Suggestion(Want.NOTHING, "")),
        ("sapaw xx ", Suggestion(Want.NOTHING, "")),
        ("discard ", Suggestion(Want.DISCARD_CARD, "")),
        ("discard K", Suggestion(Want.DISCARD_CARD, "K")),
        ("disc K", Suggestion(Want.DISCARD_CARD, "K")),
        ("discard Kd ", Suggestion(Want.NOTHING, "")),
        ("say hello th", Suggestion(Want.TEXT, "th")),
        ("call ", Suggestion(Want.NOTHING, "")),
        ("frobnicate ", Suggestion(Want.NOTHING, "")),
    ],
)
def test_stage_one(text: str, expected: Suggestion) -> None:
    assert suggest(text) == expected


@pytest.mark.parametrize(
    ("word", "prefix"),
    # "discard 1" then Tab completed nothing in tmux: a 1 is only ever the start of a 10
    [("10", "t"), ("10h", "th"), ("K♠", "ks"), ("Td", "td"), ("7", "7"), ("1", "t")]
)
def test_card_prefix(word: str, prefix: str) -> None:
    assert card_prefix(word) == prefix


# RULES.md §12: seat 1 holds 7h 7s 5h 6h Kd, the discard top is 7c.
START = position("7h 7s 5h 6h Kd 7d", top="7c", melds=[(2, "4d 5d 6d")], opened=(True, True, True))
PLAY = position("7h 7s 5h 6h Kd 3d", top="7c", melds=[(2, "4d 5d 6d")], phase=Phase.PLAY)


def texts(text: str, view=START) -> list[str]:  # type: ignore[no-untyped-def]
    return [cand.text for cand in candidates(suggest(text), view)]


def test_commands_only_legal_ones() -> None:
    assert texts("") == [
        "draw", "pick ", "call", "hint", "sort", "log", "score", "options", "say ", "leave",
        "help", "quit",
    ]
    assert "discard " in texts("", PLAY) and "draw" not in texts("", PLAY)
    assert texts("d", PLAY) == ["discard "]
    assert texts("s", PLAY) == ["sapaw ", "sort", "score", "say "]


def test_pick_offers_only_combinations_melding_with_the_top() -> None:
    # 7c melds with 7h 7s, 7h 7d, 7s 7d and 7h 7s 7d; 5h 6h with 7c is no run.
    assert sorted(texts("pick ")) == sorted(["7d 7h", "7d 7s", "7h 7s", "7d 7h 7s"])
    assert sorted(texts("pick 7h ")) == sorted(["7d", "7s", "7d 7s"])
    assert texts("pick 7h 7s 7d ") == []
    assert sorted(texts("pick 7h 7S")) == ["7s", "7s 7d"]
    assert texts("pick 5h ") == []


def test_pick_meld_id_with_pick_to_sapaw() -> None:
    view = position(
        "7h Kd 2c", top="7d", melds=[(2, "4d 5d 6d")], options=Options(pick_to_sapaw=True)
    )
    assert texts("pick ", view) == ["0"]


def test_sapaw_cards_then_meld_ids() -> None:
    assert texts("sapaw ", PLAY) == ["3d"]
    assert texts("sapaw 3d ", PLAY) == ["0"]
    assert texts("sapaw Kd ", PLAY) == []
    assert texts("sapaw 8d 1", PLAY) == []


def test_discard_only_cards_in_hand() -> None:
    assert sorted(texts("discard ", PLAY)) == sorted(["3d", "5h", "6h", "7h", "7s", "Kd"])
    assert texts("discard k", PLAY) == ["Kd"]
    assert texts("discard 10", PLAY) == []
    assert texts("discard ", START) == []


def test_meld_candidates() -> None:
    view = position("4c 5c 6c 7c Kd", phase=Phase.PLAY, melds=[(0, "2h 3h 4h")])
    assert sorted(texts("meld ", view)) == sorted(["4c 5c 6c", "5c 6c 7c", "4c 5c 6c 7c"])
    assert sorted(texts("meld 7c ", view)) == sorted(["5c 6c", "4c 5c 6c"])


def test_nothing_completes_when_not_my_turn() -> None:
    view = position("7h 7s 5h", top="7c", to_act=2)
    assert texts("", view) == ["hint", "sort", "log", "score", "options", "say ", "leave", "help",
                               "quit"]
    assert texts("pick ", view) == []


def test_prompt_toolkit_completer_replaces_the_word() -> None:
    completer = MoveCompleter(lambda: PLAY)
    got = list(completer.get_completions(Document("discard k"), CompleteEvent()))
    assert [(x.text, x.start_position) for x in got] == [("Kd", -1)]
    assert "count" in got[0].display_meta_text
