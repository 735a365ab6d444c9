"""The optimal count of a hand (RULES.md §7): the minimum, over every arrangement of the hand into
non-overlapping melds, of the points left uncovered.

A depth-first search over bitmasks: the lowest card still undecided is either deadwood or belongs
to a meld in which it is the lowest card (every lower card is already decided), which keeps the
branching small and the search exact. Ties on the count are broken towards the arrangement with
the most melds of four or more cards, the one `tally` scoring needs (§13).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .cards import BITS, POINTS, SET_MASKS, Card, cards_of, mask_of, rank_suit_key

_BIG = 1  # weight of one 4+ card meld in the packed score: score = count * 8 - big_melds


def _melds_from(index: int) -> tuple[int, ...]:
    """Masks of the melds whose lowest-index card is ``index``: runs starting there, and sets
    with cards of higher suits only. Runs come shortest first so a search can stop early."""
    suit, rank0 = divmod(index, 13)
    out: list[int] = []
    run = 1 << index
    for r in range(rank0 + 1, 13):
        run |= 1 << (suit * 13 + r)
        if r - rank0 >= 2:
            out.append(run)
    higher = [s * 13 + rank0 for s in range(suit + 1, 4)]
    for i in range(len(higher)):
        for j in range(i + 1, len(higher)):
            out.append((1 << index) | (1 << higher[i]) | (1 << higher[j]))
    if len(higher) == 3:
        out.append((1 << index) | mask_of(higher))
    return tuple(out)


_MELDS_FROM: tuple[tuple[int, ...], ...] = tuple(_melds_from(i) for i in range(52))
_PTS8: tuple[int, ...] = tuple(p * 8 for p in POINTS)


#: ``_score`` of every mask met so far (a pure function of the mask): counts and arrangements of
#: hands that share cards share their sub-searches. Cleared when it holds ``_SCORES_MAX``
#: (about 6 MB).
_SCORES: dict[int, int] = {}
_SCORES_MAX = 1 << 16


def _scores() -> dict[int, int]:
    """``_SCORES``, cleared first if full (called before a search, never inside one)."""
    if len(_SCORES) >= _SCORES_MAX:
        _SCORES.clear()
    return _SCORES


def _score(mask: int, memo: dict[int, int]) -> int:
    """The best packed score (``count * 8 - big_melds``) of the cards of ``mask``."""
    if not mask:
        return 0
    found = memo.get(mask)
    if found is not None:
        return found
    low = mask & -mask
    index = low.bit_length() - 1
    best = _PTS8[index] + _score(mask ^ low, memo)
    for meld in _MELDS_FROM[index]:
        if mask & meld == meld:
            value = _score(mask ^ meld, memo) - (_BIG if meld.bit_count() >= 4 else 0)
            if value < best:
                best = value
    memo[mask] = best
    return best


def meldable(mask: int) -> int:
    """The cards of ``mask`` that belong to at least one meld within it; the others are
    deadwood in every arrangement, so the search never needs to look at them.

    ``melds_in``'s melds joined, without listing them: a card is in a run when it lies in three
    cards of its suit in a row, and in a set when three or four cards of its rank are there."""
    runs, sets = _runs_and_sets(mask)
    return runs | sets


def _runs_and_sets(mask: int) -> tuple[int, int]:
    """The cards of ``mask`` that lie in some run within it, and those that lie in some set."""
    c, d, h, s = mask & _SUIT, (mask >> 13) & _SUIT, (mask >> 26) & _SUIT, mask >> 39
    threes = (c & d & (h | s)) | ((c | d) & h & s)  # ranks of which 3 or 4 cards are here
    # (suit by suit: 13-bit numbers are small ints, much cheaper than the 52-bit mask)
    runs = _IN_RUNS[c] | _IN_RUNS[d] << 13 | _IN_RUNS[h] << 26 | _IN_RUNS[s] << 39
    return runs, threes * _EVERY_SUIT & mask if threes else 0


#: The points of each set of one suit's cards (a 13-bit mask, ace lowest): a hand's points are
#: four look-ups, not a loop over its cards.
def _suit_points() -> tuple[int, ...]:
    table = [0] * (1 << 13)
    for suit_mask in range(1, 1 << 13):
        rest = suit_mask & (suit_mask - 1)  # less its lowest card
        table[suit_mask] = table[rest] + POINTS[(suit_mask ^ rest).bit_length() - 1]
    return tuple(table)


_SUIT_POINTS = _suit_points()


def points_of(mask: int) -> int:
    """The points of the cards in ``mask``, every card counted (no melds)."""
    return (_SUIT_POINTS[mask & 0x1FFF] + _SUIT_POINTS[mask >> 13 & 0x1FFF]
            + _SUIT_POINTS[mask >> 26 & 0x1FFF] + _SUIT_POINTS[mask >> 39])


@lru_cache(maxsize=1 << 16)
def count_mask(mask: int) -> int:
    """The optimal count of the hand given as a bitmask of card indices (memoised: searches
    and every hand's end count the same hands again and again). As for ``deadwood_mask``,
    no search when no card lies both in a run and in a set: every other card is then melded
    in the one best arrangement."""
    runs, sets = _runs_and_sets(mask)
    melded = runs | sets
    if not runs & sets:
        return points_of(mask & ~melded)
    return points_of(mask & ~melded) + (_score(melded, _scores()) + 7) // 8


def deadwood_mask(mask: int) -> int:
    """The deadwood of a minimum-count arrangement of ``mask``: ``arrangement_masks(mask)[1]``,
    bit for bit. Cards in no meld are deadwood in every arrangement. When no card lies both in
    a run and in a set, the runs and sets share no card, so one arrangement melds every other
    card, and it is the only one of the least count (every card counts at least a point): no
    search. Otherwise the rest is arranged on its own, the search kept per set of meldable
    cards, which a step changes far less often than the hand (a drawn or thrown card that fits
    no meld leaves it as it is)."""
    runs, sets = _runs_and_sets(mask)
    melded = runs | sets
    return mask & ~melded | _melded_deadwood(melded) if runs & sets else mask & ~melded


def deadwood_points(mask: int) -> tuple[int, int]:
    """``deadwood_mask(mask)`` and its points (the hand's count, §7) at once, for a reader
    that asks both at every step (a training environment's observation). When no card lies
    both in a run and in a set, as in ``deadwood_mask``, the deadwood is each suit's cards
    outside its runs and the sets' ranks, found suit by suit with no call (with no set at
    all, a look-up a suit)."""
    c, d, h, s = mask & _SUIT, mask >> 13 & _SUIT, mask >> 26 & _SUIT, mask >> 39
    threes = (c & d & (h | s)) | ((c | d) & h & s)  # ranks of which 3 or 4 cards are here
    if not threes:
        out, out_points = _OUT_OF_RUNS, _OUT_OF_RUNS_POINTS
        return (out[c] | out[d] << 13 | out[h] << 26 | out[s] << 39,
                out_points[c] + out_points[d] + out_points[h] + out_points[s])
    runs_c, runs_d, runs_h, runs_s = _IN_RUNS[c], _IN_RUNS[d], _IN_RUNS[h], _IN_RUNS[s]
    if threes & (runs_c | runs_d | runs_h | runs_s):  # a card in a run and in a set
        dead = deadwood_mask(mask)
        return dead, points_of(dead)
    c &= ~(runs_c | threes)
    d &= ~(runs_d | threes)
    h &= ~(runs_h | threes)
    s &= ~(runs_s | threes)
    points = _SUIT_POINTS[c] + _SUIT_POINTS[d] + _SUIT_POINTS[h] + _SUIT_POINTS[s]
    return c | d << 13 | h << 26 | s << 39, points


@lru_cache(maxsize=1 << 14)
def _melded_deadwood(melded: int) -> int:
    return arrangement_masks(melded)[1]


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A best arrangement of a hand: its melds, its leftover cards and their count."""

    melds: tuple[tuple[Card, ...], ...]
    deadwood: tuple[Card, ...]
    count: int

    @property
    def big_melds(self) -> int:
        """Melds of four or more cards (the `tally` bonus of §9)."""
        return sum(1 for m in self.melds if len(m) >= 4)


def arrangement_masks(mask: int) -> tuple[tuple[int, ...], int]:
    """A minimum-count arrangement of the cards in ``mask`` as bitmasks: its melds (with the
    most 4+ card melds among those of that count) and its deadwood."""
    memo = _scores()
    melds: list[int] = []
    rest = meldable(mask)
    dead = mask & ~rest
    while rest:
        target = _score(rest, memo)
        low = rest & -rest
        index = low.bit_length() - 1
        for meld in _MELDS_FROM[index]:
            if rest & meld == meld:
                bonus = _BIG if meld.bit_count() >= 4 else 0
                if _score(rest ^ meld, memo) - bonus == target:
                    melds.append(meld)
                    rest ^= meld
                    break
        else:
            dead |= low
            rest ^= low
    return tuple(melds), dead


def best_arrangement(cards: Iterable[int]) -> Arrangement:
    """A minimum-count arrangement, with the most 4+ card melds among those of that count."""
    melds, dead = arrangement_masks(mask_of(cards))
    deadwood = tuple(cards_of(dead))
    return Arrangement(
        tuple(tuple(sorted(cards_of(m), key=rank_suit_key)) for m in melds),
        deadwood,
        sum(POINTS[c] for c in deadwood),
    )


def hand_count(cards: Iterable[int], *, concealed_melds_count: bool = False) -> int:
    """A hand's count at the end (§7); with option ``concealed_melds_count`` every card counts."""
    if concealed_melds_count:
        return sum(POINTS[c] for c in cards)
    if isinstance(cards, set | frozenset):  # distinct cards: their bits add up to the mask
        return count_mask(sum(map(BITS.__getitem__, cards)))
    return count_mask(mask_of(cards))


def melds_within(mask: int) -> list[int]:
    """Every valid meld (as a bitmask) made only of cards in ``mask``, each exactly once."""
    out = []
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        for meld in _MELDS_FROM[low.bit_length() - 1]:
            if mask & meld == meld:
                out.append(meld)
    return out



_SUIT = 0x1FFF


def _in_runs(bits: int) -> int:
    """The cards of one suit's 13-bit mask that lie in three of the suit in a row."""
    starts = bits & bits >> 1 & bits >> 2
    return starts | starts << 1 | starts << 2


#: ``_in_runs`` of every 13-bit mask.
_IN_RUNS = tuple(map(_in_runs, range(1 << 13)))
#: Per 13-bit mask, its cards in no run within it, and their points.
_OUT_OF_RUNS = tuple(bits & ~runs for bits, runs in enumerate(_IN_RUNS))
_OUT_OF_RUNS_POINTS = tuple(map(_SUIT_POINTS.__getitem__, _OUT_OF_RUNS))


def melds_in(mask: int) -> list[int]:
    """Every valid meld within ``mask`` (as bitmasks): runs by suit, lowest first and shortest
    first, then sets by rank (the three-card sets of a four of a kind, then the four)."""
    c, d, h, s = mask & _SUIT, (mask >> 13) & _SUIT, (mask >> 26) & _SUIT, mask >> 39
    clubs, diamonds, hearts, spades = SUIT_RUNS
    out = [*clubs[c], *diamonds[d], *hearts[h], *spades[s]]
    threes = (c & d & (h | s)) | ((c | d) & h & s)
    while threes:
        low = threes & -threes
        threes ^= low
        rank = low.bit_length() - 1
        out += _SETS[rank][c >> rank & 1 | (d >> rank & 1) << 1 | (h >> rank & 1) << 2
                           | (s >> rank & 1) << 3]
    return out


class _SuitRuns(dict[int, tuple[int, ...]]):
    """The runs (bitmasks) within one suit's cards by their 13-bit mask (ace lowest), lowest
    first and shortest first, each tuple made on first use (at most 8,192 a suit): a hand's
    runs are four look-ups, not a walk over its bits."""

    def __init__(self, suit: int) -> None:
        super().__init__()
        self.shift = 13 * suit

    def __missing__(self, bits: int) -> tuple[int, ...]:
        # the runs from the lowest card, then those of the cards above it (which this table
        # most often knows already: a hand's masks are met one card apart)
        if not bits & bits >> 1 & bits >> 2:  # no three cards in a row
            found: tuple[int, ...] = ()
        else:
            low = (bits & -bits).bit_length() - 1
            gap = ~bits >> low
            in_a_row = (gap & -gap).bit_length() - 1  # the cards in a row from the lowest
            found = (*(((1 << length) - 1) << (low + self.shift)
                       for length in range(3, in_a_row + 1)), *self[bits & (bits - 1)])
        self[bits] = found
        return found


#: Per suit (clubs, diamonds, hearts, spades), ``_SuitRuns``.
SUIT_RUNS: tuple[_SuitRuns, ...] = tuple(_SuitRuns(suit) for suit in range(4))
#: A rank's bit in each suit: ``threes * _EVERY_SUIT`` spreads a 13-bit mask of ranks over the
#: four suits.
_EVERY_SUIT = 1 | 1 << 13 | 1 << 26 | 1 << 39


def sets_of_rank(rank: int, suits: int) -> tuple[int, ...]:
    """The sets (bitmasks) of the cards of ``rank`` (0 = ace) whose suits are the bits of
    ``suits``: none under three cards; three cards, one set; four, its four sets of three,
    then the four."""
    have = [1 << (13 * suit + rank) for suit in range(4) if suits >> suit & 1]
    if len(have) < 3:
        return ()
    if len(have) == 3:
        return (have[0] | have[1] | have[2],)
    a, b, e, f = have
    return (a | b | e, a | b | f, a | e | f, b | e | f, a | b | e | f)


#: Per rank (0 = ace), the sets of its cards by which suits are there (a 4-bit mask).
_SETS = tuple(tuple(sets_of_rank(rank, suits) for suits in range(16)) for rank in range(13))


def pick_partners(hand: int, top: int) -> tuple[int, ...]:
    """The sets of hand cards (bitmasks) that make a meld with the card ``top`` (RULES.md §4
    ``pick``): runs through it, then sets of its rank."""
    sets = _SET_PARTNERS[hand & SET_MASKS[top]]
    if not hand & _SUITED_NEIGHBOURS[top]:
        return sets
    rank = top % 13
    # the unbroken stretches of the hand's cards of the suit just below and just above ``top``
    # (bit tricks: the highest card missing below it, the lowest missing above it)
    below = min(rank, top - (((1 << top) - 1) & ~hand).bit_length())
    gap = ~hand >> (top + 1)
    above = min(12 - rank, (gap & -gap).bit_length() - 1)
    return (*_RUN_PARTNERS[top << 8 | below << 4 | above], *sets)


#: For each card index, the cards of its suit one rank below and above it (aces low: no
#: card beside an ace below it, none above a king).
_SUITED_NEIGHBOURS: tuple[int, ...] = tuple(
    (1 << (i - 1) if i % 13 > 0 else 0) | (1 << (i + 1) if i % 13 < 12 else 0) for i in range(52)
)


class _RunPartners(dict[int, tuple[int, ...]]):
    """``pick_partners``' runs by ``top << 8 | below << 4 | above``, where ``below`` and
    ``above`` are how many of the hand's cards of ``top``'s suit run on unbroken below and
    above it: every stretch of them that makes a run of three or more with ``top``, the
    longest reach below first. Each tuple is made on first use (a few thousand at most)."""

    def __missing__(self, key: int) -> tuple[int, ...]:
        top, below, above = key >> 8, key >> 4 & 15, key & 15
        runs = self[key] = tuple(
            (((1 << (lo + hi + 1)) - 1) << (top - lo)) ^ (1 << top)
            for lo in range(below, -1, -1)
            for hi in range(max(0, 2 - lo), above + 1)
        )
        return runs


_RUN_PARTNERS = _RunPartners()


def _set_partners(rank: int, suits: int) -> tuple[int, ...]:
    """``pick_partners``' sets: two of the hand's cards of the top's rank, or all three, where
    ``suits`` has a bit for each suit of that rank in the hand (the top's own never set in a
    hand, which holds no discard)."""
    bits = [1 << (s * 13 + rank) for s in range(4) if suits >> s & 1]
    out = [bits[i] | bits[j] for i in range(len(bits)) for j in range(i + 1, len(bits))]
    if len(bits) == 3:
        out.append(bits[0] | bits[1] | bits[2])
    return tuple(out) if len(bits) >= 2 else ()


#: ``_set_partners`` by the hand's cards of one rank (``hand & SET_MASKS[top]``: one look-up).
_SET_PARTNERS = {sum(1 << (s * 13 + rank) for s in range(4) if suits >> s & 1):
                 _set_partners(rank, suits) for rank in range(13) for suits in range(16)}
