"""The observation of one seat: a flat vector built from its view alone.

The engine's view of a seat is the one place that decides what it may know (RULES.md §11:
the server sends exactly that): ``seat_view`` as a value, ``LiveView`` read from the live hand
field by field (the environment's, one per seat, since building a whole ``SeatView`` every
step cost more than the rest of the observation). An observation made from either cannot
hold another seat's hidden card; ``tests/test_rl_env.py`` checks it over random deals all the
same, and that the environment's observation is ``encode`` of a fresh ``seat_view``. Seats are
written relative to the observing seat: "me", then the next seat to play, then the one after.

=========  ===========================================================================
indices    feature (each a 0/1 flag per card of ``Card(i)`` order unless said)
=========  ===========================================================================
0-51       my hand
52-103     the discard pile
104-155    the pile's top card
156-311    face-up cards of the melds owned by me, next, after (52 each)
312-467    cards discarded in this hand by me, next, after (52 each; picked ones too)
468-519    cards some meld on the table would take now (a lay-off or ``pick MELD``)
520-571    my deadwood: my cards outside a best arrangement of my hand (§7)
572-574    hand sizes of me, next, after (/ 13)
575        cards in the stock (/ 15)
576-578    opened: me, next, after
579-581    blocked from calling (§5): me, next, after
582-584    secret melds owned by me, next, after (/ 4)
585-587    phase: start, play, answer (none when the hand is over)
588-590    dealer: me, next, after
591        the dealer's first turn
592-594    the caller: me, next, after (none without a call)
595-597    challenged the call so far: me, next, after
598        my count (§7) under the table's options (/ 100, at most 1)
599-607    options: pick_to_sapaw, sapaw_block=hand, self_sapaw_blocks_call,
           tongits_needs_discard, call_tie=caller, stockout_none_open=void,
           no_sapawable_discard, concealed_melds_count, scoring=tally
=========  ===========================================================================
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from tongits.engine import (
    Action,
    CallTie,
    Card,
    LiveView,
    MeldView,
    Options,
    Phase,
    SapawBlock,
    Scoring,
    SeatView,
    StockoutNoneOpen,
    TableMeld,
)
from tongits.engine.cards import BITS, mask_of
from tongits.engine.count import deadwood_mask, points_of
from tongits.engine.view import MELD_CHANGES

HAND, PILE, TOP, MELDED, DISCARDED, TAKEN, DEADWOOD = 0, 52, 104, 156, 312, 468, 520
SIZES, STOCK, OPENED, BLOCKED, SECRETS, PHASE = 572, 575, 576, 579, 582, 585
DEALER, FIRST_TURN, CALLER, CHALLENGED, COUNT, OPTIONS = 588, 591, 592, 595, 598, 599
#: The length of an observation.
OBSERVATION_SIZE = 608

_BYTES = OBSERVATION_SIZE // 8
_DISCARD, _CHALLENGE = Action.DISCARD, Action.CHALLENGE
Observation = npt.NDArray[np.float32]
#: What an observation is made from: a seat's view, a value or live.
View = SeatView | LiveView

#: The eight 0/1 features of each byte value (bit 0 first), as float32: an observation is its
#: bits' bytes looked up here, one array operation.
_BYTE_FLOATS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1,
                             bitorder="little").astype(np.float32)
_UINT8 = np.dtype(np.uint8)

def _fixed_bits(view: View) -> tuple[int, int, int]:
    """What stays the same for a whole hand, seen from each seat: the options and the dealer."""
    options, dealer = _option_bits(view.options), view.dealer
    return (options | 1 << (DEALER + dealer % 3), options | 1 << (DEALER + (dealer - 1) % 3),
            options | 1 << (DEALER + (dealer - 2) % 3))


def _option_bits(options: Options) -> int:
    flags = (
        options.pick_to_sapaw,
        options.sapaw_block is SapawBlock.HAND,
        options.self_sapaw_blocks_call,
        options.tongits_needs_discard,
        options.call_tie is CallTie.CALLER,
        options.stockout_none_open is StockoutNoneOpen.VOID,
        options.no_sapawable_discard,
        options.concealed_melds_count,
        options.scoring is Scoring.TALLY,
    )
    return sum(1 << (OPTIONS + i) for i, on in enumerate(flags) if on)


def encode(view: View) -> Observation:
    """The observation of ``view``'s seat (a player's view: ``view.seat`` is not None)."""
    return Encoder().encode(view)


class Encoder:
    """The observations of the views of one hand, in the order of its states: what stays
    the same from one state to the next (the history read so far, the melds, a seat's
    deadwood while its cards stay the same) is not read again. ``encode`` is the same answer
    for any one view; a ``LiveView`` (a training environment's) is read without building the
    fields it does not need.

    Every 0/1 feature is first set as a bit of one integer and seat by seat in table order
    (seat 0, 1, 2), then turned to the observing seat's order and into the array at once: a
    training environment makes one observation per step, and this is several times faster
    than setting array entries one by one."""

    __slots__ = ("_fixed", "_steps", "_discarded", "_challenged", "_stale", "_melded",
                 "_taken", "_secrets", "_cards")

    def __init__(self) -> None:
        #: per observing seat, the features of the options and the dealer (``_fixed_bits``)
        self._fixed: tuple[int, int, int] | None = None
        #: history steps read so far, and what they say: the cards each seat discarded
        #: (bitmasks) and who challenged the call (a bit per seat)
        self._steps = 0
        self._discarded = [0, 0, 0]
        self._challenged = 0
        #: whether a step read since the melds were last read changed them (only the moves
        #: of ``MELD_CHANGES`` do), and what was read of them: their face-up cards per owner,
        #: the cards they would take, the secret melds per owner
        self._stale = True
        self._melded = (0, 0, 0)
        self._taken = 0
        self._secrets = (0, 0, 0)
        #: per seat, its cards last encoded, their deadwood and the count feature
        self._cards: list[tuple[int, int, float]] = [(-1, 0, 0.0)] * 3

    def encode(self, view: View) -> Observation:
        """The observation of ``view``'s seat; ``view`` is of the same hand as the views
        before it, in a later state (or the same)."""
        me = view.seat
        assert me is not None, "a spectator has no observation"
        nxt, after = _NEXT[me], _AFTER[me]
        hand = view.cards_mask
        known = self._cards[me]
        if known[0] == hand:
            dead, count = known[1], known[2]
        else:
            # (with concealed_melds_count every card counts: all of them are "deadwood")
            dead = hand if view.options.concealed_melds_count else deadwood_mask(hand)
            count = min(points_of(dead) / 100, 1.0)
            self._cards[me] = (hand, dead, count)
        self._read_history(view)
        discarded = self._discarded
        if self._stale:
            self._read_melds(view.melds)
        melded = self._melded
        discards = view.discards
        fixed = self._fixed
        if fixed is None:
            fixed = self._fixed = _fixed_bits(view)
        bits = (fixed[me] | hand << HAND | dead << DEADWOOD | self._taken << TAKEN
                | melded[me] << MELDED | melded[nxt] << MELDED + 52
                | melded[after] << MELDED + 104
                | discarded[me] << DISCARDED | discarded[nxt] << DISCARDED + 52
                | discarded[after] << DISCARDED + 104
                | _state_bits(view, me, self._challenged))
        if discards:  # (distinct cards: their bits add up to the pile's mask)
            bits |= sum(map(_BITS_OF, discards)) << PILE | 1 << (TOP + discards[-1])
        # (positional arguments: numpy parses keywords slowly, and this runs once a step)
        flags = np.frombuffer(bits.to_bytes(_BYTES, "little"), _UINT8)
        out: Observation = _BYTE_FLOATS.take(flags, 0).reshape(OBSERVATION_SIZE)
        sizes, secrets = view.hand_sizes, self._secrets
        out[SIZES] = _SIZE[sizes[me]]
        out[SIZES + 1] = _SIZE[sizes[nxt]]
        out[SIZES + 2] = _SIZE[sizes[after]]
        out[STOCK] = view.stock / 15
        if any(secrets):
            out[SECRETS] = _SECRET[secrets[me]]
            out[SECRETS + 1] = _SECRET[secrets[nxt]]
            out[SECRETS + 2] = _SECRET[secrets[after]]
        out[COUNT] = count
        return out

    def _read_history(self, view: View) -> None:
        """Who discarded which card and who challenged the call, from the steps not yet read
        (only what every seat sees of them)."""
        read = self._steps
        steps = view.steps_since(read)
        if not steps:
            return
        discarded = self._discarded
        for step in steps:
            move = step.move
            action = move.action
            if action is _DISCARD:
                card = move.card
                assert card is not None
                discarded[step.seat] |= BITS[card]
            elif action is _CHALLENGE:
                self._challenged |= 1 << step.seat
            elif action in MELD_CHANGES:
                self._stale = True
        self._steps = read + len(steps)

    def _read_melds(self, melds: tuple[MeldView, ...]) -> None:
        """The melds' face-up cards per owner, the cards they would take, the secret melds."""
        melded = [0, 0, 0]
        secrets = [0, 0, 0]
        taken = 0
        for meld in melds:
            if meld.secret:
                secrets[meld.owner] += 1
            elif meld.cards:
                melded[meld.owner] |= mask_of(meld.cards)
                taken |= _accepted(meld.cards)
        self._stale = False
        self._melded = (melded[0], melded[1], melded[2])
        self._secrets = (secrets[0], secrets[1], secrets[2])
        self._taken = taken


_NEXT, _AFTER = (1, 2, 0), (2, 0, 1)
_BITS_OF = BITS.__getitem__
#: A hand size and a number of secret melds as features (/ 13 and / 4, at most 1).
_SIZE = tuple(min(n / 13, 1.0) for n in range(53))
_SECRET = tuple(min(n / 4, 1.0) for n in range(14))
#: Per observing seat, a bit per seat in table order (0-7) turned to "me, next, after" order.
_RELATIVE = tuple(tuple(sum(1 << (seat - me) % 3 for seat in range(3) if bits >> seat & 1)
                        for bits in range(8)) for me in range(3))
#: Per observing seat, the features of the seats that have opened, and of those blocked from
#: calling, by the view's flags (``opened``, ``blocked``: seats in table order).
_FLAGS = tuple(itertools.product((False, True), repeat=3))
_OPENED = tuple({flags: _RELATIVE[me][flags[0] | flags[1] << 1 | flags[2] << 2] << OPENED
                 for flags in _FLAGS} for me in range(3))
_BLOCKED = tuple({flags: _RELATIVE[me][flags[0] | flags[1] << 1 | flags[2] << 2] << BLOCKED
                  for flags in _FLAGS} for me in range(3))
_PHASE_BITS = {Phase.START: 1 << PHASE, Phase.PLAY: 1 << (PHASE + 1),
               Phase.ANSWER: 1 << (PHASE + 2)}


def _state_bits(view: View, me: int, challenged: int) -> int:
    """Opened and blocked seats, the phase, the first turn, the caller and who challenged it,
    relative to ``me``."""
    bits = (_OPENED[me][view.opened] | _BLOCKED[me][view.blocked]
            | _RELATIVE[me][challenged] << CHALLENGED | _PHASE_BITS.get(view.phase, 0))
    if view.turn == 0:
        bits |= 1 << FIRST_TURN
    caller = view.caller
    if caller is not None:
        bits |= 1 << (CALLER + (caller - me) % 3)
    return bits


@lru_cache(maxsize=1 << 14)
def _accepted(cards: tuple[Card, ...]) -> int:
    """The cards a face-up meld would take now, as a bitmask: the engine's own answer
    (``TableMeld.accept_mask``), kept per meld since melds stay the same for many steps."""
    return TableMeld(0, 0, list(cards)).accept_mask
