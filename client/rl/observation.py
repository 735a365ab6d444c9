"""The observation of one seat: a flat vector built from its ``SeatView`` alone.

``seat_view`` is the one place that decides what a seat may know (RULES.md §11: the server
sends exactly that), so an observation made from it cannot hold another seat's hidden card;
``tests/test_rl_env.py`` checks it over random deals all the same. Seats are written relative
to the observing seat: "me", then the next seat to play, then the one after.

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

from collections.abc import Iterable
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from tongits.engine import (
    Action,
    CallTie,
    Card,
    Options,
    Phase,
    SapawBlock,
    Scoring,
    SeatView,
    StockoutNoneOpen,
    TableMeld,
    best_arrangement,
    hand_count,
)

HAND, PILE, TOP, MELDED, DISCARDED, TAKEN, DEADWOOD = 0, 52, 104, 156, 312, 468, 520
SIZES, STOCK, OPENED, BLOCKED, SECRETS, PHASE = 572, 575, 576, 579, 582, 585
DEALER, FIRST_TURN, CALLER, CHALLENGED, COUNT, OPTIONS = 588, 591, 592, 595, 598, 599
#: The length of an observation.
OBSERVATION_SIZE = 608

_BYTES = (OBSERVATION_SIZE + 7) // 8
_PHASES = {Phase.START: 0, Phase.PLAY: 1, Phase.ANSWER: 2}
_DISCARD, _CHALLENGE = Action.DISCARD, Action.CHALLENGE
Observation = npt.NDArray[np.float32]


@lru_cache(maxsize=1 << 16)
def _arrangement(hand: tuple[Card, ...]) -> tuple[int, int]:
    """The deadwood of a best arrangement of ``hand`` (bitmask) and its count (§7)."""
    arrangement = best_arrangement(hand)
    return sum(1 << c for c in arrangement.deadwood), arrangement.count


@lru_cache(maxsize=64)
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


def encode(view: SeatView) -> Observation:
    """The observation of ``view``'s seat (a player's view: ``view.seat`` is not None).

    Every 0/1 feature is first set as a bit of one integer, turned into the array at once:
    the environment makes one observation per step, and this is several times faster than
    setting array entries one by one."""
    me = view.seat
    assert me is not None, "a spectator has no observation"
    hand = _mask(view.hand)
    cards, secrets = _table_bits(view, me)
    deadwood, count = _arrangement(view.hand)
    if view.options.concealed_melds_count:
        deadwood, count = hand, hand_count(view.hand, concealed_melds_count=True)
    bits = (hand << HAND | cards | deadwood << DEADWOOD | _history_bits(view, me)
            | _state_bits(view, me) | _option_bits(view.options))
    flags = np.frombuffer(bits.to_bytes(_BYTES, "little"), dtype=np.uint8)
    out = np.unpackbits(flags, count=OBSERVATION_SIZE, bitorder="little").astype(np.float32)
    sizes = view.hand_sizes
    for rel in range(3):
        out[SIZES + rel] = min(sizes[(me + rel) % 3] / 13, 1.0)
        out[SECRETS + rel] = min(secrets[rel] / 4, 1.0)
    out[STOCK] = view.stock / 15
    out[COUNT] = min(count / 100, 1.0)
    return out


def _mask(cards: Iterable[Card]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def _table_bits(view: SeatView, me: int) -> tuple[int, list[int]]:
    """The pile, its top, the melds' face-up cards by owner and the cards they would take;
    and the number of secret melds of each seat (relative to ``me``)."""
    bits = _mask(view.discards) << PILE
    if view.discards:
        bits |= 1 << (TOP + view.discards[-1])
    taken = 0
    secrets = [0, 0, 0]
    for meld in view.melds:
        rel = (meld.owner - me) % 3
        if meld.secret:
            secrets[rel] += 1
        elif meld.cards:
            bits |= _mask(meld.cards) << (MELDED + 52 * rel)
            taken |= _accepted(meld.cards)
    return bits | taken << TAKEN, secrets


def _history_bits(view: SeatView, me: int) -> int:
    """Who discarded which card, and who challenged the call, from the public history."""
    bits = 0
    for step in view.history:
        action = step.move.action
        if action is _DISCARD:
            card = step.move.card
            assert card is not None
            bits |= 1 << (DISCARDED + 52 * ((step.seat - me) % 3) + card)
        elif action is _CHALLENGE:
            bits |= 1 << (CHALLENGED + (step.seat - me) % 3)
    return bits


def _state_bits(view: SeatView, me: int) -> int:
    """Opened and blocked seats, the phase, the dealer, the first turn, the caller."""
    bits = 0
    for rel in range(3):
        seat = (me + rel) % 3
        if view.opened[seat]:
            bits |= 1 << (OPENED + rel)
        if view.blocked[seat]:
            bits |= 1 << (BLOCKED + rel)
    phase = _PHASES.get(view.phase)
    if phase is not None:
        bits |= 1 << (PHASE + phase)
    bits |= 1 << (DEALER + (view.dealer - me) % 3)
    if view.turn == 0:
        bits |= 1 << FIRST_TURN
    if view.caller is not None:
        bits |= 1 << (CALLER + (view.caller - me) % 3)
    return bits


@lru_cache(maxsize=1 << 14)
def _accepted(cards: tuple[Card, ...]) -> int:
    """The cards a face-up meld would take now, as a bitmask: the engine's own answer
    (``TableMeld.accept_mask``), kept per meld since melds stay the same for many steps."""
    return TableMeld(0, 0, list(cards)).accept_mask
