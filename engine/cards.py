"""Cards and the canonical notation of RULES.md §1.

A card is an ``int`` subclass holding its index ``suit * 13 + rank - 1`` (0..51). That keeps
cards hashable, orderable (by suit, then rank) and cheap to put in bitmasks, which the counting
and move generation rely on, while ``str(card)`` gives the canonical two characters and
``Card.parse`` accepts every lenient form of §1.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

from .errors import InvalidMove, RuleCode, shown

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "cdhs"
#: Every card's notation by index, made once: records and views spell out whole decks.
_NAMES = tuple(RANK_CHARS[i % 13] + SUIT_CHARS[i // 13] for i in range(52))
#: Each card's notation (its ``str``) by index: ``map(CARD_NAMES.__getitem__, cards)`` lists
#: many in C, where ``str`` calls ``Card.__str__`` in Python for each.
CARD_NAMES: tuple[str, ...] = _NAMES
_SUIT_SYMBOLS = {"♣": "c", "♦": "d", "♥": "h", "♠": "s"}


class Suit(IntEnum):
    """Suits in the order of the notation: clubs, diamonds, hearts, spades."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def char(self) -> str:
        return SUIT_CHARS[self]

    @property
    def symbol(self) -> str:
        return "♣♦♥♠"[self]


class Card(int):
    """One of the 52 cards; ``Card(i)`` for an index, ``Card.parse(text)`` for notation."""

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        if not 0 <= index < 52:
            raise ValueError(f"card index out of range: {index}")
        return _CARDS[index] if _CARDS else int.__new__(cls, index)

    @classmethod
    def of(cls, rank: int, suit: Suit | int) -> Card:
        """The card of ``rank`` (1 = ace .. 13 = king) and ``suit``."""
        if not 1 <= rank <= 13:
            raise ValueError(f"rank out of range: {rank}")
        return _CARDS[int(suit) * 13 + rank - 1]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``Th``, ``10h``, ``th``, ``T♥``; raise ``InvalidMove(bad_card)`` otherwise."""
        if not isinstance(text, str):
            raise InvalidMove(RuleCode.BAD_CARD, f"not a card: {shown(text)}")
        named = _BY_NAME.get(text)  # as the server writes it (``str``): nearly every card read
        if named is not None:
            return named
        t = text.strip()
        if len(t) >= 2:
            rank_part, suit_part = t[:-1], t[-1]
            suit_part = _SUIT_SYMBOLS.get(suit_part, suit_part.lower())
            rank_part = "T" if rank_part == "10" else rank_part.upper()
            if len(rank_part) == 1 and rank_part in RANK_CHARS and suit_part in SUIT_CHARS:
                return _CARDS[SUIT_CHARS.index(suit_part) * 13 + RANK_CHARS.index(rank_part)]
        raise InvalidMove(RuleCode.BAD_CARD, f"not a card: {shown(text)}")

    @property
    def rank(self) -> int:
        """1 (ace) to 13 (king)."""
        return int(self) % 13 + 1

    @property
    def suit(self) -> Suit:
        return Suit(int(self) // 13)

    @property
    def points(self) -> int:
        """A = 1, 2-10 face value, J Q K = 10 (RULES.md §1)."""
        return POINTS[self]

    @property
    def bit(self) -> int:
        return 1 << int(self)

    def pretty(self) -> str:
        """Rank and suit symbol, for people: ``T♥``."""
        return RANK_CHARS[self.rank - 1] + self.suit.symbol

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


_CARDS: list[Card] = []
_CARDS.extend(int.__new__(Card, i) for i in range(52))
POINTS: tuple[int, ...] = tuple(min(i % 13 + 1, 10) for i in range(52))
DECK: tuple[Card, ...] = tuple(_CARDS)
#: Each card by its ``str``, the form every message and record uses.
_BY_NAME: dict[str, Card] = {_NAMES[i]: card for i, card in enumerate(_CARDS)}
BITS: tuple[int, ...] = tuple(1 << i for i in range(52))
SET_MASKS: tuple[int, ...] = tuple(sum(1 << (s * 13 + i % 13) for s in range(4)) for i in range(52))
"""For each card index, the mask of the four cards of its rank."""


def rank_suit_key(card: int) -> tuple[int, int]:
    """The sort key of a meld's cards: rank, then suit (plain ints: cheaper than the
    ``rank``/``suit`` properties on a hot path)."""
    return (card % 13, card // 13)


def parse_cards(items: Iterable[str] | str) -> tuple[Card, ...]:
    """Parse a list of card strings, or one string of cards separated by spaces or commas."""
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    return tuple(Card.parse(x) for x in items)


def cards_str(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def indices_of(mask: int) -> list[int]:
    """The card indices of a bitmask, in index order (the policies' searches work on these)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cards_of(mask: int) -> list[Card]:
    """The cards of a bitmask, in index order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(_CARDS[low.bit_length() - 1])
        mask ^= low
    return out
