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
#: A ``ChipItem`` as ``settle`` makes it, a plain tuple ``(why, chips, n, to)``: every
#: search's rollout settles a hand and reads only the sums, so the items are made only for
#: whoever asks (``items_of``).
Term = tuple[Why, int, int, int | None]
Terms = tuple[tuple[Term, ...], tuple[Term, ...], tuple[Term, ...]]


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
) -> tuple[tuple[int, int, int], Terms]:
    """Each seat's chip change for this hand alone (the ante pot is the match's business),
    and the terms each is the sum of.

    ``big_win`` is the winner's base term: ``Why.WIN`` (1 chip), or ``Why.TONGITS`` or
    ``Why.CHALLENGED_CALL`` (3).
    """
    if winner is None:
        return (0, 0, 0), ((), (), ())
    base = 1 if big_win is Why.WIN else 3
    if options.scoring is Scoring.PAYMENTS:
        return _payments(winner, big_win, base, burned, hands[winner], melds)
    terms = _tally(options, winner, big_win, base, hands, melds)
    if challenged and caller is not None and caller != winner:
        terms[caller].append((Why.LOST_CHALLENGE, -1, 1, None))
    first, second, third = (tuple(seat) for seat in terms)
    return (sum([t[1] for t in first]), sum([t[1] for t in second]),
            sum([t[1] for t in third])), (first, second, third)


_ACES, _FOURS, _SECRETS, _BURNED = Why.ACES, Why.FOURS, Why.SECRET_MELDS, Why.BURNED


def _payments(winner: int, win: Why, base: int, burned: Collection[int],
              hand: Collection[Card], melds: Sequence[TableMeld],
              ) -> tuple[tuple[int, int, int], Terms]:
    """Each loser pays the winner's terms, and a burned loser one chip more (§9)."""
    paid = [(win, base, 1)]
    if aces := _aces(winner, hand, melds):
        paid.append((_ACES, aces, aces))
    if fours := concealed_fours(hand):
        paid.append((_FOURS, 3 * fours, fours))
    if secrets := _secrets(winner, melds):
        paid.append((_SECRETS, 3 * secrets, secrets))
    each_pays = sum([chips for _, chips, _ in paid])
    paying = [seat for seat in _LOSERS[winner] if seat in burned]
    lost = tuple([(why, -chips, n, winner) for why, chips, n in paid])
    won = tuple([(why, 2 * chips, n, None) for why, chips, n in paid])
    if paying:
        won += ((_BURNED, len(paying), len(paying), None),)
    chips = [0, 0, 0]
    terms: list[tuple[Term, ...]] = [(), (), ()]
    for seat in _LOSERS[winner]:
        if seat in paying:
            chips[seat], terms[seat] = -each_pays - 1, (*lost, (_BURNED, -1, 1, winner))
        else:
            chips[seat], terms[seat] = -each_pays, lost
    chips[winner], terms[winner] = 2 * each_pays + len(paying), won
    return (chips[0], chips[1], chips[2]), (terms[0], terms[1], terms[2])


def _tally(options: Options, winner: int, win: Why, base: int,
           hands: Sequence[Collection[Card]], melds: Sequence[TableMeld]) -> list[list[Term]]:
    """Each seat's own aces and melds, and the winner's win (§9, §13)."""
    terms: list[list[Term]] = [[], [], []]
    terms[winner].append((win, base, 1, None))
    for seat in range(3):
        found = [(_ACES, 1, _aces(seat, hands[seat], melds)),
                 (_SECRETS, 3, _secrets(seat, melds))]
        if not options.concealed_melds_count:
            found.append((Why.CONCEALED_MELDS, 3, best_arrangement(hands[seat]).big_melds))
        terms[seat] += [(why, each * n, n, None) for why, each, n in found if n]
    return terms


def items_of(terms: Terms) -> Settlement:
    """``settle``'s terms as chip items (``ChipItem``)."""
    first, second, third = (tuple(ChipItem(*term) for term in seat) for seat in terms)
    return (first, second, third)
