"""Cards and the notation of RULES.md §1: canonical output, lenient input, typed errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tongits.engine import DECK, Action, Card, InvalidMove, Move, Suit, cards_str, parse_cards


def test_deck_is_52_distinct_cards_in_index_order() -> None:
    assert len(DECK) == 52 == len(set(DECK))
    assert [int(c) for c in DECK] == list(range(52))
    assert str(DECK[0]) == "Ac" and str(DECK[51]) == "Ks"


@given(st.sampled_from(DECK))
def test_notation_round_trips(card: Card) -> None:
    text = str(card)
    assert len(text) == 2
    assert Card.parse(text) is card
    assert eval(repr(card)) == card  # repr rebuilds the value
    assert Card.parse(text.lower()) is card
    assert Card.parse(card.pretty()) is card
    assert Card.of(card.rank, card.suit) is card


@pytest.mark.parametrize("text", ["Th", "th", "TH", "tH", "10h", "10H", "T♥", "10♥", " Th ", "t♥"])
def test_lenient_parsing_of_the_ten_of_hearts(text: str) -> None:
    assert str(Card.parse(text)) == "Th"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("As", "As"),
        ("a♠", "As"),
        ("2c", "2c"),
        ("2♣", "2c"),
        ("Kd", "Kd"),
        ("k♦", "Kd"),
        ("qh", "Qh"),
        ("J♠", "Js"),
        ("9D", "9d"),
    ],
)
def test_parsing_prints_canonically(text: str, canonical: str) -> None:
    assert str(Card.parse(text)) == canonical


@pytest.mark.parametrize(
    "text", ["", "T", "h", "1h", "11h", "Tx", "Zh", "10", "Thh", "T h", "0h", "1 0h", "AA"]
)
def test_bad_cards_raise_invalid_move(text: str) -> None:
    with pytest.raises(InvalidMove) as info:
        Card.parse(text)
    assert info.value.code == "bad_card"
    assert json.dumps(text) in info.value.message  # quoted as the client wrote it


@pytest.mark.parametrize("value", [None, 5, ["Th"], b"Th"])
def test_non_strings_raise_invalid_move(value: object) -> None:
    with pytest.raises(InvalidMove):
        Card.parse(value)  # type: ignore[arg-type]


def test_points_and_ranks() -> None:
    assert [Card.parse(f"{r}c").points for r in "A23456789TJQK"] == [
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        10,
        10,
        10,
    ]
    assert Card.parse("Qs").rank == 12 and Card.parse("Qs").suit is Suit.SPADES
    assert Card.parse("Ad").bit == 1 << 13


def test_card_index_bounds() -> None:
    with pytest.raises(ValueError):
        Card(52)
    with pytest.raises(ValueError):
        Card.of(14, Suit.CLUBS)


def test_parse_cards_accepts_lists_and_strings() -> None:
    assert parse_cards("7c, 7h 7s") == parse_cards(["7c", "7h", "7s"])
    assert cards_str(parse_cards("10h j♠ as")) == "Th Js As"


@pytest.mark.parametrize(
    "text",
    [
        "draw",
        "call",
        "challenge",
        "fold",
        "pick 7h 7s",
        "pick 3",
        "meld 5h 6h 7h",
        "secret Qc Qd Qh Qs",
        "sapaw 8d 3",
        "discard Kd",
    ],
)
def test_move_command_form_round_trips(text: str) -> None:
    move = Move.parse(text)
    assert str(move) == text
    assert Move.from_dict(move.to_dict()) == move


def test_move_parse_is_lenient_and_sorts_cards() -> None:
    assert Move.parse("MELD 7h 5h 6H") == Move(Action.MELD, parse_cards("5h 6h 7h"))
    assert str(Move.parse("sapaw 10d 0")) == "sapaw Td 0"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "jump",
        "meld",
        "sapaw 8d",
        "sapaw 8d x",
        "discard",
        "discard Xx",
        "pick",
        "draw 7h",
        "discard 7h 8h",
    ],
)
def test_move_parse_errors(text: str) -> None:
    with pytest.raises(InvalidMove):
        Move.parse(text)
