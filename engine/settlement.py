"""Chips at the end of a hand (RULES.md §9): ``payments`` (zero-sum) or ``tally``."""

from __future__ import annotations

from collections.abc import Collection, Sequence

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


def settle(
    options: Options,
    *,
    big_win: bool,
    winner: int | None,
    caller: int | None,
    challenged: bool,
    burned: Collection[int],
    hands: Sequence[Collection[Card]],
    melds: Sequence[TableMeld],
) -> tuple[int, int, int]:
    """Each seat's chip change for this hand alone (the ante pot is the match's business).

    ``big_win`` is a Tongits or a won challenged call (3 chips instead of 1).
    """
    if winner is None:
        return (0, 0, 0)
    base = 3 if big_win else 1
    if options.scoring is Scoring.PAYMENTS:
        hand = hands[winner]
        fours = concealed_fours(hand)
        each = base + _aces(winner, hand, melds) + 3 * (fours + _secrets(winner, melds))
        chips = [0, 0, 0]
        for seat in range(3):
            if seat != winner:
                chips[seat] = -(each + (1 if seat in burned else 0))
        chips[winner] = -sum(chips)
        return (chips[0], chips[1], chips[2])
    tally = [0, 0, 0]
    for seat in range(3):
        tally[seat] = _aces(seat, hands[seat], melds) + 3 * _secrets(seat, melds)
        if not options.concealed_melds_count:
            tally[seat] += 3 * best_arrangement(hands[seat]).big_melds
    tally[winner] += base
    if challenged and caller is not None and caller != winner:
        tally[caller] -= 1
    return (tally[0], tally[1], tally[2])
