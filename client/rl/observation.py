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

from functools import lru_cache

import numpy as np
import numpy.typing as npt
from tongits.engine import (
    Action,
    CallTie,
    Card,
    LiveView,
    Options,
    Phase,
    SapawBlock,
    Scoring,
    SeatView,
    Step,
    StockoutNoneOpen,
    TableMeld,
)
from tongits.engine.cards import BITS, mask_of
from tongits.engine.count import deadwood_points, points_of
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


@lru_cache(maxsize=64)
def _option_bits(options: Options) -> int:
    """The options' features (kept per ``Options``, a frozen value: an environment asks at
    every hand)."""
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
    the same from one state to the next is not read again. The history is read a step at a
    time, and says what else to read again: the melds (and who has opened) after a move of
    ``MELD_CHANGES``, the pile after a pick (a discard puts its card on top); a seat's
    deadwood is worked out again only when its cards change. ``encode`` is the same answer
    for any one view; a ``LiveView`` (a training environment's) is read without building the
    fields it does not need.

    Every 0/1 feature is first set as a bit of one integer, and the integer turned into the
    array at once: a training environment makes one observation per step, and this is
    several times faster than setting array entries one by one. The features that only the
    history's discards, melds, picks and challenges change, and those of the blocks, the
    call and the dealer's first turn (which change still less often), are kept per observing
    seat as one integer (``_table``) until the next such change (a draw, the most common
    step, leaves them as they are), and a seat's melded and discarded cards as one number,
    so that putting the seats in the observing seat's order is a shift each. The view's
    fields that change at every step are read in one call (``glance``)."""

    __slots__ = ("_fixed", "_first", "_steps", "_discarded", "_challenged", "_melds_stale",
                 "_pile_stale", "_tables", "_taken", "_seats", "_secrets", "_opened", "_pile",
                 "_blocked", "_caller", "_cards", "_flags", "_bytes")

    def __init__(self) -> None:
        #: per observing seat, the features of the options and the dealer (``_fixed_bits``)
        self._fixed: tuple[int, int, int] | None = None
        #: whether the dealer's first turn may still be on (turns only go on from it)
        self._first = True
        #: history steps read so far, and what they say: the cards each seat discarded
        #: (bitmasks) and who challenged the call (a bit per seat)
        self._steps = 0
        self._discarded = [0, 0, 0]
        self._challenged = 0
        #: whether a step read since the melds, or the pile, were last read changed them
        self._melds_stale = self._pile_stale = True
        #: per observing seat, ``_table``'s features (None: to be made again)
        self._tables: list[int | None] = [None, None, None]
        #: what was read of the melds: the cards they would take (as features), per seat its
        #: melded and discarded cards as one number (melded | discarded << ``_SEAT_DISCARDS``),
        #: its secret melds, and who has opened (a bit per seat)
        self._taken = 0
        self._seats = [0, 0, 0]
        self._secrets = (0, 0, 0)
        self._opened = 0
        #: the pile's cards and its top card, as features
        self._pile = 0
        #: the seats blocked from calling and the caller that ``_tables`` hold (the hand's
        #: tuple of blocked seats is a new one when one changes: ``is`` tells)
        self._blocked: tuple[bool, bool, bool] | None = None
        self._caller: int | None = None
        #: per seat, its cards last encoded, them and their deadwood as features, the count
        self._cards: list[tuple[int, int, float]] = [(-1, 0, 0.0)] * 3
        #: the bytes of the 0/1 features being encoded (``_bytes`` writes them)
        self._flags = np.zeros(_BYTES, _UINT8)
        self._bytes = self._flags.data

    def encode(self, view: View) -> Observation:
        """The observation of ``view``'s seat; ``view`` is of the same hand as the views
        before it, in a later state (or the same)."""
        me = view.seat
        assert me is not None, "a spectator has no observation"
        cards, steps, sizes, stock, phase, blocked, caller = view.glance(self._steps)
        own = self._cards[me]
        if own[0] != cards:
            # (with concealed_melds_count every card counts: all of them are "deadwood")
            dead, points = ((cards, points_of(cards)) if view.options.concealed_melds_count
                            else deadwood_points(cards))
            own = self._cards[me] = (cards, cards << HAND | dead << DEADWOOD, _COUNT[points])
        if steps:
            self._read_history(steps)
        if blocked is not self._blocked or caller != self._caller or (
                self._first and view.turn):
            self._blocked, self._caller = blocked, caller
            self._first = self._first and not view.turn
            self._tables = [None, None, None]
        table = self._tables[me]
        if table is None:
            table = self._table(view, me)
        bits = table | own[1] | _PHASE_BITS[phase]
        self._bytes[:] = bits.to_bytes(_BYTES, "little")  # (into ``_flags``: no new array)
        # (positional arguments: numpy parses keywords slowly, and this runs once a step)
        out: Observation = _BYTE_FLOATS.take(self._flags, 0).ravel()  # (reshape's view, faster)
        nxt, after, secrets = _NEXT[me], _AFTER[me], self._secrets
        out[SIZES] = _SIZE[sizes[me]]
        out[SIZES + 1] = _SIZE[sizes[nxt]]
        out[SIZES + 2] = _SIZE[sizes[after]]
        out[STOCK] = _STOCK[stock]
        if secrets != (0, 0, 0):
            out[SECRETS] = _SECRET[secrets[me]]
            out[SECRETS + 1] = _SECRET[secrets[nxt]]
            out[SECRETS + 2] = _SECRET[secrets[after]]
        out[COUNT] = own[2]
        return out

    def _read_history(self, steps: tuple[Step, ...]) -> None:
        """Who discarded which card (onto the pile) and who challenged the call, from the
        steps not yet read (only what every seat sees of them); whether the melds or the
        pile must be read again, and the seats' ``_table`` made again."""
        discarded, seats = self._discarded, self._seats
        pile = self._pile
        changed = False
        for step in steps:
            move = step.move
            action = move.action
            if action is _DISCARD:
                card = move.card
                assert card is not None
                bit = BITS[card]
                discarded[step.seat] |= bit
                seats[step.seat] |= bit << _SEAT_DISCARDS
                pile = pile & ~_TOP_BITS | bit << PILE | 1 << (TOP + card)
                changed = True
            elif action is _CHALLENGE:
                self._challenged |= 1 << step.seat
                changed = True
            elif action in MELD_CHANGES:
                self._melds_stale = changed = True
                self._pile_stale |= action is _PICK
        self._pile = pile
        self._steps += len(steps)
        if changed:
            self._tables = [None, None, None]

    def _table(self, view: View, me: int) -> int:
        """The features that only the history's discards, melds, picks and challenges, the
        blocks, the call and the end of the first turn change (and the options and the
        dealer), seen from ``me``: kept until the next."""
        if self._melds_stale:
            self._read_melds(view)
        if self._pile_stale:
            self._read_pile(view)
        fixed = self._fixed
        if fixed is None:
            fixed = self._fixed = _fixed_bits(view)
        seats, relative, blocked, caller = self._seats, _RELATIVE[me], self._blocked, self._caller
        assert blocked is not None
        table = self._tables[me] = (
            fixed[me] | self._taken | self._pile | self._first << FIRST_TURN
            | seats[me] << MELDED | seats[_NEXT[me]] << MELDED + 52
            | seats[_AFTER[me]] << MELDED + 104
            | relative[self._opened] << OPENED | relative[self._challenged] << CHALLENGED
            | relative[blocked[0] | blocked[1] << 1 | blocked[2] << 2] << BLOCKED
            | (0 if caller is None else 1 << (CALLER + (caller - me) % 3)))
        return table

    def _read_melds(self, view: View) -> None:
        """The melds' face-up cards per owner, the cards they would take, the secret melds,
        who has opened (one owns a meld, face up or secret: only these moves make one)."""
        melded = [0, 0, 0]
        secrets = [0, 0, 0]
        taken = 0
        for meld in view.melds:
            if meld.secret:
                secrets[meld.owner] += 1
            elif meld.cards:
                cards, accepts = _face_up(meld.cards)
                melded[meld.owner] |= cards
                taken |= accepts
        discarded = self._discarded
        self._seats = [melded[seat] | discarded[seat] << _SEAT_DISCARDS for seat in range(3)]
        self._secrets = (secrets[0], secrets[1], secrets[2])
        self._taken = taken << TAKEN
        opened = view.opened
        self._opened = opened[0] | opened[1] << 1 | opened[2] << 2
        self._melds_stale = False

    def _read_pile(self, view: View) -> None:
        """The pile's cards and its top card."""
        discards = view.discards
        # (distinct cards: their bits add up to the pile's mask)
        self._pile = (sum(map(_BITS_OF, discards)) << PILE | 1 << (TOP + discards[-1])
                      if discards else 0)
        self._pile_stale = False


_NEXT, _AFTER = (1, 2, 0), (2, 0, 1)
_BITS_OF = BITS.__getitem__
_DISCARD, _CHALLENGE, _PICK = Action.DISCARD, Action.CHALLENGE, Action.PICK
#: A seat's discarded cards, from its melded ones: both are kept in one number per seat.
_SEAT_DISCARDS = DISCARDED - MELDED
#: The features of the pile's top card.
_TOP_BITS = ((1 << 52) - 1) << TOP
#: A hand size, a number of secret melds, the cards in the stock and the points of a count as
#: features (/ 13, / 4, / 15 and / 100, at most 1 but the stock's; the deck counts 340).
_SIZE = tuple(min(n / 13, 1.0) for n in range(53))
_SECRET = tuple(min(n / 4, 1.0) for n in range(14))
_STOCK = tuple(n / 15 for n in range(53))
_COUNT = tuple(min(n / 100, 1.0) for n in range(341))
#: Per observing seat, a bit per seat in table order (0-7) turned to "me, next, after" order.
_RELATIVE = tuple(tuple(sum(1 << (seat - me) % 3 for seat in range(3) if bits >> seat & 1)
                        for bits in range(8)) for me in range(3))
#: The phase's features (none once the hand is over).
_PHASE_BITS = {Phase.START: 1 << PHASE, Phase.PLAY: 1 << (PHASE + 1),
               Phase.ANSWER: 1 << (PHASE + 2), Phase.OVER: 0}


@lru_cache(maxsize=1 << 14)
def _face_up(cards: tuple[Card, ...]) -> tuple[int, int]:
    """A face-up meld's cards as a bitmask, and the cards it would take now: the engine's
    own answer (``TableMeld.accept_mask``), kept per meld since melds stay the same for many
    steps."""
    return mask_of(cards), TableMeld(0, 0, list(cards)).accept_mask
