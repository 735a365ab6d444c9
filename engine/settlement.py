"""Chips at the end of a hand (RULES.md §9): ``payments`` (zero-sum) or ``tally``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NotRequired, TypedDict

from .cards import Card, mask_of
from .count import best_arrangement
from .melds import TableMeld
from .options import Options, Scoring

#: 1 for each ace's index, else 0.
_ACE: tuple[int, ...] = tuple(int(c % 13 == 0) for c in range(52))


def _aces(seat: int, hand: Collection[Card], melds: Sequence[TableMeld]) -> int:
    """Aces in the seat's hand and in the melds it owns (cards others laid off included)."""
    ace = _ACE.__getitem__
    in_melds = sum(sum(map(ace, m.cards)) for m in melds if m.owner == seat)
    return sum(map(ace, hand)) + in_melds


def concealed_fours(hand: Collection[Card]) -> int:
    """Ranks of which all four cards are in ``hand`` (RULES.md §13)."""
    mask = mask_of(hand)
    return (mask & mask >> 13 & mask >> 26 & mask >> 39 & 0x1FFF).bit_count()


def _secrets(seat: int, melds: Sequence[TableMeld]) -> int:
    return sum(1 for m in melds if m.owner == seat and m.secret)


class Why(Enum):
    """Why chips move at a hand's end: one term of RULES.md §9, as a ``ChipItem`` names it
    (a table says it to its players, who would otherwise see only the sum)."""

    WIN = "win"  # the winner's 1 chip (a loser pays it)
    TONGITS = "tongits"  # 3 instead, for a Tongits
    CHALLENGED_CALL = "challenged_call"  # 3 instead, for winning a call that was challenged
    ACES = "aces"
    FOURS = "fours"  # payments: four-of-a-kind concealed in the winner's hand
    SECRET_MELDS = "secret_melds"
    CONCEALED_MELDS = "concealed_melds"  # tally: concealed melds of four or more cards
    BURNED = "burned"  # payments: the burned loser's one chip more
    LOST_CHALLENGE = "lost_challenge"  # tally: a caller who lost after being challenged


@dataclass(frozen=True, slots=True)
class ChipItem:
    """``chips`` a seat won (or paid, below 0) for ``why``, ``n`` times its unit: aces, melds,
    burned losers; with ``payments`` a loser's items are the winner's terms it pays (``to`` the
    winner) and the winner's the same terms taken from each loser."""

    why: Why
    chips: int
    n: int = 1
    #: the seat these chips were paid to (``payments``: a loser's items), else None
    to: int | None = None

    def to_dict(self) -> ChipItemMap:
        out: ChipItemMap = {"why": self.why.value, "chips": self.chips, "n": self.n}
        if self.to is not None:
            out["to"] = self.to
        return out


class ChipItemMap(TypedDict):
    """A ``ChipItem`` on the wire (protocol 1.4: ``hand_result.result.why``)."""

    why: str
    chips: int
    n: int
    to: NotRequired[int]


#: Each seat's items, in seat order.
Settlement = tuple[tuple[ChipItem, ...], tuple[ChipItem, ...], tuple[ChipItem, ...]]


def settle(
    options: Options,
    *,
    big_win: Why,
    winner: int | None,
    caller: int | None,
    challenged: bool,
    burned: Collection[int],
    hands: Sequence[Collection[Card]],
    melds: Sequence[TableMeld],
) -> Settlement:
    """Each seat's chip items for this hand alone (the ante pot is the match's business); a
    seat's chip change is the sum of its items' ``chips`` (``chips_of``).

    ``big_win`` is the winner's base term: ``Why.WIN`` (1 chip), or ``Why.TONGITS`` or
    ``Why.CHALLENGED_CALL`` (3).
    """
    if winner is None:
        return ((), (), ())
    base = 1 if big_win is Why.WIN else 3
    if options.scoring is Scoring.PAYMENTS:
        items = _payments(winner, (big_win, base), burned, hands[winner], melds)
    else:
        items = _tally(options, winner, (big_win, base), hands, melds)
        if challenged and caller is not None and caller != winner:
            items[caller].append(ChipItem(Why.LOST_CHALLENGE, -1))
    return (tuple(items[0]), tuple(items[1]), tuple(items[2]))


def _payments(winner: int, win: tuple[Why, int], burned: Collection[int],
              hand: Collection[Card], melds: Sequence[TableMeld]) -> list[list[ChipItem]]:
    """Each loser pays the winner's terms, and a burned loser one chip more (§9)."""
    items: list[list[ChipItem]] = [[], [], []]
    terms = [(*win, 1), (Why.ACES, 1, _aces(winner, hand, melds)),
             (Why.FOURS, 3, concealed_fours(hand)), (Why.SECRET_MELDS, 3, _secrets(winner, melds))]
    losers = [seat for seat in range(3) if seat != winner]
    for why, each, n in terms:
        if n:
            for seat in losers:
                items[seat].append(ChipItem(why, -each * n, n, winner))
            items[winner].append(ChipItem(why, each * n * len(losers), n))
    paying = [seat for seat in losers if seat in burned]
    for seat in paying:
        items[seat].append(ChipItem(Why.BURNED, -1, 1, winner))
    if paying:
        items[winner].append(ChipItem(Why.BURNED, len(paying), len(paying)))
    return items


def _tally(options: Options, winner: int, win: tuple[Why, int],
           hands: Sequence[Collection[Card]], melds: Sequence[TableMeld]) -> list[list[ChipItem]]:
    """Each seat's own aces and melds, and the winner's win (§9, §13)."""
    items: list[list[ChipItem]] = [[], [], []]
    items[winner].append(ChipItem(*win))
    for seat in range(3):
        found = [(Why.ACES, 1, _aces(seat, hands[seat], melds)),
                 (Why.SECRET_MELDS, 3, _secrets(seat, melds))]
        if not options.concealed_melds_count:
            found.append((Why.CONCEALED_MELDS, 3, best_arrangement(hands[seat]).big_melds))
        items[seat] += [ChipItem(why, each * n, n) for why, each, n in found if n]
    return items


def chips_of(settlement: Settlement) -> tuple[int, int, int]:
    """Each seat's chip change: the sum of its items."""
    first, second, third = (sum(item.chips for item in seat) for seat in settlement)
    return (first, second, third)
