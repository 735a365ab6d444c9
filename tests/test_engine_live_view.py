"""``LiveView``: a seat's view kept for a whole hand (a training environment keeps one per
seat) says at every state what a view made afresh says, although it keeps the melds' views
from one read to the next; its fields for step-by-step readers (kept by the hand, not read from
the history) agree with the view's, which reads them from the history."""

from __future__ import annotations

import random

from engine_support import SEEDS, choose, random_hand
from hypothesis import given, settings
from tongits.engine import Action, LiveView, seat_view
from tongits.engine.cards import mask_of


@settings(max_examples=80, deadline=None)
@given(SEEDS)
def test_a_live_view_kept_for_a_hand_is_the_fresh_view_in_every_state(seed: int) -> None:
    """Each seat's (and a spectator's) ``LiveView`` is read at random states only, so that
    several steps, meld steps among them, pass between two reads of the same one; every
    read equals ``seat_view`` of that state, field by field."""
    rng = random.Random(seed)
    hand = random_hand(rng)
    seats: list[int | None] = [0, 1, 2, None]
    kept = {seat: LiveView(hand, seat) for seat in seats}
    while True:
        for seat in seats:
            if not hand.over and rng.random() < 0.5:
                continue
            fresh = seat_view(hand, seat)
            live = kept[seat]
            assert live.now() == fresh
            assert live.melds == fresh.melds and live.top == fresh.top
            start = rng.randrange(len(hand.steps) + 2)
            assert live.steps_since(start) == fresh.steps_since(start) == fresh.history[start:]
            assert live.cards_mask == fresh.cards_mask == mask_of(fresh.hand)
            # what the hand keeps of the public history is what the history says
            assert live.discards_mask == fresh.discards_mask == mask_of(fresh.discards)
            assert live.discarded_masks == fresh.discarded_masks
            assert live.challengers == fresh.challengers
            assert live.meld_changes == fresh.meld_changes
        if hand.over:
            break
        hand.apply(hand.to_act, choose(rng, hand.legal_moves()))


@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_the_public_facts_a_hand_keeps_are_those_of_its_history(seed: int) -> None:
    """The pile's cards, each seat's discards, the challengers and the meld steps, as the hand
    keeps them step by step, against a count made from the steps (picked discards included:
    a pick takes the card off the pile, not out of its discarder's discards)."""
    rng = random.Random(seed)
    hand = random_hand(rng)
    while not hand.over:
        hand.apply(hand.to_act, choose(rng, hand.legal_moves()))
        live = LiveView(hand, None)
        discarded = [0, 0, 0]
        challengers = changes = 0
        for step in hand.steps:
            action = step.move.action
            if action is Action.DISCARD:
                assert step.move.card is not None
                discarded[step.seat] |= step.move.card.bit
            elif action is Action.CHALLENGE:
                challengers |= 1 << step.seat
            changes += action in (Action.MELD, Action.SECRET, Action.PICK, Action.SAPAW)
        assert live.discarded_masks == tuple(discarded)
        assert live.discards_mask == mask_of(hand.discards)
        assert live.challengers == challengers
        assert live.meld_changes == changes
