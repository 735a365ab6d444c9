"""``LiveView``: a seat's view kept for a whole hand (a training environment keeps one per
seat) says at every state what a view made afresh says, although it keeps the melds' views
from one read to the next; its fields for step-by-step readers (and ``glance``, which reads
several at once) agree with the view's."""

from __future__ import annotations

import random

from engine_support import SEEDS, choose, deal_with, random_hand
from hypothesis import given, settings
from tongits.engine import Action, Hand, LiveView, seat_view
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
            assert live.glance(start) == fresh.glance(start) == (
                fresh.cards_mask, fresh.history[start:], fresh.hand_sizes, fresh.stock,
                fresh.phase, fresh.blocked, fresh.caller)
        if hand.over:
            break
        hand.apply(hand.to_act, choose(rng, hand.legal_moves()))


def test_glance_hides_another_seats_secret_meld_until_the_hand_is_over() -> None:
    """A seat reading the history step by step (``glance``) sees another seat's secret meld
    without its cards, in the hand and in a copy of it; its owner sees the cards."""
    hand = Hand(deal_with("7c 7d 7h 7s 2c 4d 9h Js Kc 3d 5h Ts Qd"), 0)
    secret = next(m for m in hand.legal_moves() if m.action is Action.SECRET)
    hand.apply(0, secret)
    for state in (hand, hand.copy()):
        others = LiveView(state, 1).glance(0)[1]
        assert others == seat_view(state, 1).history
        assert others[0].move.action is Action.SECRET and not others[0].move.cards
        assert LiveView(state, 0).glance(0)[1][0].move is secret
