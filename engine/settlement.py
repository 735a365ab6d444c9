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

#: The seats other than the winner, by winner.
_LOSERS = ((1, 2), (0, 2), (0, 1))

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

#: Chips per unit of each term (RULES.md §9): a won Tongits or challenged call (else 1), an
#: ace, a four-of-a-kind concealed in hand (payments), a secret meld, a concealed meld of four
#: or more (tally), a burned loser (payments), a caller who lost a challenge (tally).
_BIG_WIN, _PER_ACE, _PER_FOUR, _PER_SECRET, _PER_CONCEALED, _PER_BURNED, _PER_LOST = (
    3, 1, 3, 3, 3, 1, 1)

#: What a hand's end counted for its chips: the winner and its base term, the scoring, each
#: seat's aces, fours, secret melds and concealed melds as that scoring counts them (with
#: payments the winner's alone), the burned losers (payments) and the caller who lost a
#: challenge (tally). The chips and the items (``items_of``) are both made from it; every
#: search's rollout settles a hand and reads only the chips, so the items are made only for
#: whoever asks.
Counted = tuple[int, Why, Scoring, tuple[tuple[int, int, int, int], ...], tuple[int, ...],
                int | None]
_NONE4 = (0, 0, 0, 0)


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
) -> tuple[tuple[int, int, int], Counted | None]:
    """Each seat's chip change for this hand alone (the ante pot is the match's business),
    and what was counted for it (None: no winner, nothing).

    ``big_win`` is the winner's base term: ``Why.WIN`` (1 chip), or ``Why.TONGITS`` or
    ``Why.CHALLENGED_CALL`` (3).
    """
    if winner is None:
        return (0, 0, 0), None
    base = 1 if big_win is _WIN else _BIG_WIN
    if options.scoring is _PAYMENTS:
        hand = hands[winner]
        aces, fours, secrets = _aces(winner, hand, melds), concealed_fours(hand), \
            _secrets(winner, melds)
        each = base + aces * _PER_ACE + fours * _PER_FOUR + secrets * _PER_SECRET
        chips = [0, 0, 0]
        paying = tuple(seat for seat in _LOSERS[winner] if seat in burned)
        for seat in _LOSERS[winner]:
            chips[seat] = -each - _PER_BURNED if seat in paying else -each
        chips[winner] = -chips[0] - chips[1] - chips[2]
        found = [_NONE4, _NONE4, _NONE4]
        found[winner] = (aces, fours, secrets, 0)
        return ((chips[0], chips[1], chips[2]),
                (winner, big_win, _PAYMENTS, tuple(found), paying, None))
    counted = []
    for seat in range(3):
        concealed = 0 if options.concealed_melds_count else best_arrangement(hands[seat]).big_melds
        counted.append((_aces(seat, hands[seat], melds), 0, _secrets(seat, melds), concealed))
    tally = [aces * _PER_ACE + secrets * _PER_SECRET + concealed * _PER_CONCEALED
             for aces, _, secrets, concealed in counted]
    tally[winner] += base
    lost = caller if challenged and caller is not None and caller != winner else None
    if lost is not None:
        tally[lost] -= _PER_LOST
    return ((tally[0], tally[1], tally[2]),
            (winner, big_win, options.scoring, tuple(counted), (), lost))


def items_of(counted: Counted | None) -> Settlement:
    """The chip items of what ``settle`` counted: each seat's, whose chips add up to its
    chip change."""
    if counted is None:
        return ((), (), ())
    winner, big_win, scoring, found, paying, lost = counted
    base = 1 if big_win is _WIN else _BIG_WIN
    items: list[list[ChipItem]] = [[], [], []]
    if scoring is _PAYMENTS:
        aces, fours, secrets, _ = found[winner]
        for why, each, n in ((big_win, base, 1), (_ACES, _PER_ACE, aces),
                             (_FOURS, _PER_FOUR, fours), (_SECRETS, _PER_SECRET, secrets)):
            if n:
                for seat in _LOSERS[winner]:
                    items[seat].append(ChipItem(why, -each * n, n, winner))
                items[winner].append(ChipItem(why, 2 * each * n, n))
        for seat in paying:
            items[seat].append(ChipItem(_BURNED, -_PER_BURNED, 1, winner))
        if paying:
            items[winner].append(ChipItem(_BURNED, _PER_BURNED * len(paying), len(paying)))
    else:
        items[winner].append(ChipItem(big_win, base))
        for seat, (aces, _, secrets, concealed) in enumerate(found):
            items[seat] += [ChipItem(why, each * n, n) for why, each, n in (
                (_ACES, _PER_ACE, aces), (_SECRETS, _PER_SECRET, secrets),
                (_CONCEALED, _PER_CONCEALED, concealed)) if n]
        if lost is not None:
            items[lost].append(ChipItem(_LOST_CHALLENGE, -_PER_LOST))
    return (tuple(items[0]), tuple(items[1]), tuple(items[2]))


#: Module names (an enum member read from its class costs a Python call in Python 3.11, and
#: every search's rollout settles a hand).
_WIN, _ACES, _FOURS, _SECRETS, _BURNED = Why.WIN, Why.ACES, Why.FOURS, Why.SECRET_MELDS, Why.BURNED
_LOST_CHALLENGE, _CONCEALED = Why.LOST_CHALLENGE, Why.CONCEALED_MELDS
_PAYMENTS = Scoring.PAYMENTS
