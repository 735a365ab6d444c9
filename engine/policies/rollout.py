"""The fast rollout policy of the expert's search: plays a whole (determinized) hand to its end.

A rollout reads the ``Hand`` itself, never a ``SeatView``: inside one sampled world every seat's
cards are known anyway, and skipping the view (its history, its legal-move tuple) makes a
decision several times cheaper. Each seat still decides only from its own cards and the table,
with the habits of the ``strong`` bot: it picks the discard when that melds, keeps its melds
concealed except the one that opens its hand until it can go out, lays off what it can spare,
throws its highest loose card unless that feeds the next seat a meld, and calls as ``strong``
calls: at a count of 25 or less, when in at least 45 % of the ways the opened seats' hands may
lie (dealt from their hand sizes, cards above their last throws less likely) none counts as
low. With a rough rule instead (call when each opened seat's hand size times 3.3 points
exceeds the count by 2), the rollouts' seats called about a third less often than ``strong``
at counts of 10 to 29, and the expert won 0.36 chips a hand less against two ``strong`` bots
(600 duplicate hands, seed e1): its search misjudged how soon the others call.

A seat facing a call plays the rules' showdown of the world (RULES.md §6.2): it challenges when
its count beats the caller's, else folds. Inside a world the caller's cards are dealt from what
the table has seen of it (its hand size, its melds, its discards: ``worlds.py``), so the search
values a call by how often the seats that may challenge would really win, and a challenge by how
often the caller really counts more. A fixed challenge threshold (9 or less) made a call at 43
look like a sure win to the hint.

Everything here is deterministic: the same hand state always gets the same move.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache

from ..cards import BITS, POINTS, SET_MASKS
from ..count import arrangement_masks, pick_partners
from ..hand import Hand, Phase
from ..moves import (
    CALL,
    CHALLENGE,
    DISCARD_MOVES,
    DRAW,
    FOLD,
    MELD_MOVES,
    SAPAW_MOVES,
    SECRET_MOVES,
    Action,
    Move,
)
from ..options import CallTie, Options
from .common import NEIGHBOURS, count_of
from .strong import StrongParams

_START, _PLAY, _ANSWER, _OVER = Phase.START, Phase.PLAY, Phase.ANSWER, Phase.OVER
_PICK, _SAPAW, _MELD, _SECRET = Action.PICK, Action.SAPAW, Action.MELD, Action.SECRET
_DISCARD = Action.DISCARD

_STRONG = StrongParams()
IMAGINED = 1000
"""Hands dealt per hand size to imagine another seat's count (once per process)."""


@lru_cache(maxsize=1 << 17)
def plan(mask: int) -> tuple[tuple[int, ...], int]:
    """``arrangement_masks``, memoised: rollouts meet the same hands again and again."""
    return arrangement_masks(mask)


#: The cards worth each number of points, highest first, as bitmasks.
_BY_POINTS: tuple[int, ...] = tuple(
    sum(1 << c for c in range(52) if POINTS[c] == points) for points in range(10, 0, -1)
)


def _highest_first(mask: int) -> Iterator[int]:
    """The cards of ``mask``, highest points first (then highest index)."""
    for group in _BY_POINTS:
        cards = mask & group
        while cards:
            card = cards.bit_length() - 1
            yield card
            cards ^= 1 << card


def _hand_mask(hand: Hand, seat: int) -> int:
    return sum(map(BITS.__getitem__, hand.hands[seat]))


def rollout_move(hand: Hand) -> Move:
    """The rollout policy's move for the seat to act in ``hand`` (one of its legal moves)."""
    seat = hand.to_act
    phase = hand.phase
    concealed = hand.options.concealed_melds_count
    mask = _hand_mask(hand, seat)
    if phase is _ANSWER:
        if hand.answers and any(a is Action.CHALLENGE for a in hand.answers.values()):
            return CHALLENGE  # the stake is 3 chips whatever this seat does
        return CHALLENGE if _beats_caller(hand, mask, concealed) else FOLD
    if phase is _START:
        legal = hand.legal_moves()
        mine = count_of(mask, concealed_melds_count=concealed)
        if legal[0] is CALL and _call_is_good(hand, seat, mine):
            return CALL
        best: Move | None = None
        best_left = mine
        for move in legal:
            if move.action is _PICK and move.cards:
                used = 0
                for c in move.cards:
                    used |= 1 << c
                left = count_of(mask & ~used, concealed_melds_count=concealed)
                if left <= best_left:
                    best, best_left = move, left
        return best if best is not None else DRAW
    return _play_move(hand, seat, mask)


def _beats_caller(hand: Hand, mask: int, concealed: bool) -> bool:
    """Whether the seat's count wins the showdown against the caller's in this world."""
    caller = hand.caller
    assert caller is not None
    mine = count_of(mask, concealed_melds_count=concealed)
    theirs = count_of(_hand_mask(hand, caller), concealed_melds_count=concealed)
    if hand.options.call_tie is CallTie.CALLER:
        return mine < theirs
    return mine <= theirs


def _call_is_good(hand: Hand, seat: int, mine: int) -> bool:
    """``strong``'s call (``StrongPolicy._call``) read off the ``Hand``: no opened rival, or a
    count of at most ``call_max_count`` that no opened rival matches in ``call_min_win`` of
    the ways its hand may lie (each rival guessed from its hand size and last throw alone,
    what the seat could see)."""
    rivals = [s for s in range(3) if s != seat and hand.opened(s)]
    if not rivals:
        return True
    if mine > _STRONG.call_max_count:
        return False
    options = hand.options
    tie_wins = options.call_tie is CallTie.CALLER
    chance = 1.0
    for s in rivals:
        above = _above(
            len(hand.hands[s]), _last_throw(hand, s), tie_wins, options.concealed_melds_count
        )
        chance *= above[mine] if mine < len(above) else 0.0
    return chance >= _STRONG.call_min_win


def _last_throw(hand: Hand, seat: int) -> int:
    """The points of the last card ``seat`` threw in this hand's steps (10 if none: a world
    starts without the steps before it)."""
    for step in reversed(hand.steps):
        if step.seat == seat and step.move.action is _DISCARD:
            card = step.move.card
            return 10 if card is None else POINTS[card]
    return 10


@cache
def _dealt(size: int, concealed: bool) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """``IMAGINED`` hands of ``size`` cards dealt from the whole deck: each one's count and, for
    each cap from 0 to 10 points, how many of its cards are worth more than the cap."""
    rng = random.Random(f"imagined/{size}")
    out = []
    for _ in range(IMAGINED):
        cards = rng.sample(range(52), size)
        count = count_of(sum(1 << c for c in cards), concealed_melds_count=concealed)
        points = sorted(POINTS[c] for c in cards)
        out.append((count, tuple(size - bisect_right(points, cap) for cap in range(11))))
    return tuple(out)


@cache
def _above(size: int, cap: int, tie_wins: bool, concealed: bool) -> tuple[float, ...]:
    """For each count ``m``, the chance that a seat holding ``size`` cards, whose last throw
    was worth ``cap``, counts more than ``m`` (or ``m``, when a tie goes to the caller): the
    dealt hands (``_dealt``) weighted ``high_card_weight`` for each card above ``cap``, as
    ``strong`` deals the unseen cards (players throw their highest loose card first)."""
    weight = [_STRONG.high_card_weight**n for n in range(size + 1)]
    mass = [0.0] * (size * 10 + 2)  # by count: the weight of the dealt hands counting so
    for count, over in _dealt(size, concealed):
        mass[count] += weight[over[cap]]
    total = sum(mass)
    out = []
    above = total  # the weight of the hands counting more than m, or m itself
    for m in range(len(mass) - 1):
        above -= mass[m]
        out.append((above + (mass[m] if tie_wins else 0.0)) / total)
    return tuple(out)


def imagine_counts() -> None:
    """Deal and weigh the imagined hands of every hand size a seat may hold after its turn (1 to
    12 cards) against every last throw (``_above``), under the default table options (a table
    with other options deals its own on first use): a rollout's call needs them, and dealt
    lazily they made the first decision of a process the slowest by far (about 150 ms of CPU,
    the 99th percentile of the expert's decisions)."""
    options = Options()
    tie_wins = options.call_tie is CallTie.CALLER
    for size in range(1, 13):
        for cap in range(1, 11):
            _above(size, cap, tie_wins, options.concealed_melds_count)


def _play_move(hand: Hand, seat: int, mask: int) -> Move:
    """Meld (only to open the hand, or to go out), lay off spare cards, then discard the highest
    loose card that does not let the next seat pick it into a meld. Built without listing the
    legal moves (the costliest part of a rollout step); every move made here is legal under the
    hand's options (``play_out`` skips the check; tests/test_expert.py makes it)."""
    size = mask.bit_count()
    limit = size if hand.options.tongits_needs_discard else size + 1
    melds, dead = plan(mask)
    if melds and (dead.bit_count() <= 1 or not hand.opened(seat)):
        move = _first_meld(melds, limit)
        if move is not None:
            return move
    accept = 0
    for m in hand.melds:
        accept |= m.accept_mask
    spare = dead & accept
    if spare and limit > 1:
        card = (spare & -spare).bit_length() - 1
        for m in hand.melds:
            if m.accept_mask >> card & 1:
                return SAPAW_MOVES[card, m.id]
    return _discard_move(hand, seat, mask, dead, accept)


def _first_meld(melds: Sequence[int], limit: int) -> Move | None:
    """The first planned meld of fewer than ``limit`` cards (a four-of-a-kind face down)."""
    for meld in melds:
        if meld.bit_count() < limit:
            low = (meld & -meld).bit_length() - 1
            if meld.bit_count() == 4 and meld & SET_MASKS[low] == meld:
                return SECRET_MOVES[meld]  # face down: it keeps its bonus (§9)
            return MELD_MOVES[meld]
    return None


def _discard_move(hand: Hand, seat: int, mask: int, dead: int, accept: int) -> Move:
    """The highest loose card (any card, if none is loose) the next seat cannot pick into a
    meld; the highest one if every card could be picked."""
    options = hand.options
    allowed = mask
    if options.no_sapawable_discard and mask & accept and mask & ~accept:
        allowed = mask & ~accept
    pool = dead & allowed or allowed
    nxt_mask = _hand_mask(hand, (seat + 1) % 3) if hand.stock else 0
    first = -1
    for card in _highest_first(pool):
        if not nxt_mask or not _feeds(nxt_mask, card):
            return DISCARD_MOVES[card]
        if first < 0:
            first = card
    return DISCARD_MOVES[first]


def _feeds(nxt_mask: int, card: int) -> bool:
    """Whether the next seat holds two cards that make a meld with ``card`` (so could pick it)."""
    if (nxt_mask & NEIGHBOURS[card]).bit_count() < 2:
        return False
    return bool(pick_partners(nxt_mask, card))


def play_out(hand: Hand) -> None:
    """Play ``hand`` to its end with the rollout policy for every seat."""
    while hand.phase is not _OVER:
        hand.apply_legal(hand.to_act, rollout_move(hand))


__all__ = ["imagine_counts", "play_out", "plan", "rollout_move"]
