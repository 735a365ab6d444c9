"""``seat_view_dict``, the server's cached wire form of a view, against ``seat_view().to_dict()``.

Random hands that lay secret melds whenever they can, so that the views of the owner, the other
seats and spectators differ; every seat of every state must get exactly the same map from both,
and a map built earlier must not change as the hand goes on (it may sit in a queue meanwhile).
Its two parts (``seat_view_parts``): what all seats see alike, one map for all, and each seat's
own, with no key in both. The legal moves are not in the view (a ``state`` carries them once,
as ``legal``): ``seat_legal`` is the wire form of the view's ``legal``.
"""

from __future__ import annotations

import gc
import json
import random

from engine_support import SEEDS, choose, random_hand
from hypothesis import given, settings
from tongits.engine import Action, Hand, seat_view
from tongits.engine.count import hand_count
from tongits.engine.view import seat_legal, seat_view_dict, seat_view_parts
from tongits.engine.wire import ViewMap

PERSPECTIVES = (0, 1, 2, None)


def play(seed: int) -> tuple[Hand, list[tuple[ViewMap, str]], bool]:
    """Play one hand, checking every state; returns the hand, every map built with its JSON at
    the time, and whether a secret meld was laid."""
    rng = random.Random(seed)
    hand = random_hand(rng)
    built: list[tuple[ViewMap, str]] = []
    secret = False
    while True:
        shared_by_all = seat_view_parts(hand, None)[0]
        for seat in PERSPECTIVES:
            wire = seat_view_dict(hand, seat)
            view = seat_view(hand, seat)
            assert wire == view.to_dict() and "legal" not in wire
            assert seat_legal(hand, seat) == [m.to_dict() for m in view.legal]
            built.append((wire, json.dumps(wire)))
            shared, own = seat_view_parts(hand, seat)
            assert shared is shared_by_all and not shared.keys() & own.keys()
        if hand.over:
            return hand, built, secret
        moves = hand.legal_moves()
        secrets = [m for m in moves if m.action is Action.SECRET]
        move = secrets[0] if secrets else choose(rng, moves)
        secret = secret or bool(secrets)
        hand.apply(hand.to_act, move)


@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_wire_view_is_the_view(seed: int) -> None:
    _, built, _ = play(seed)
    for wire, text in built:
        assert json.dumps(wire) == text


def test_secret_melds_stay_hidden_on_the_wire() -> None:
    """A seed with a secret meld: others see no cards of it until the hand ends."""
    seed = next(s for s in range(500) if play(s)[2])
    rng = random.Random(seed)
    hand = random_hand(rng)
    while not hand.over:
        for seat in PERSPECTIVES:
            wire = seat_view_dict(hand, seat)
            for meld in hand.melds:
                shown = wire["melds"][meld.id]["cards"]
                assert (shown is None) == (meld.secret and meld.owner != seat)
            for step, entry in zip(hand.steps, wire["history"], strict=True):
                if step.move.action is Action.SECRET:
                    assert ("cards" in entry) == (step.seat == seat)
        moves = hand.legal_moves()
        secrets = [m for m in moves if m.action is Action.SECRET]
        hand.apply(hand.to_act, secrets[0] if secrets else choose(rng, moves))


def test_the_views_of_a_hand_leave_no_cycle_behind() -> None:
    """A server collects only young objects often, and old ones rarely (``server.collector``):
    the parts of views that live as long as a hand must be freed by reference counting when
    it ends, not left in cycles for a full collection (one per hand piled up megabytes a
    minute on a busy server)."""
    gc.collect()
    gc.disable()
    try:
        for seed in range(8):
            play(seed)
        assert gc.collect() == 0
    finally:
        gc.enable()


@settings(max_examples=30, deadline=None)
@given(SEEDS)
def test_a_seats_view_carries_the_count_of_its_own_cards(seed: int) -> None:
    """``count`` is what the seat would count now (RULES.md §7, under the table's options), in
    every state for every seat, whatever it holds; a spectator holds nothing and has none."""
    rng = random.Random(seed)
    hand = random_hand(rng)
    while True:
        for seat in (0, 1, 2):
            assert seat_view_dict(hand, seat)["count"] == hand_count(
                hand.hands[seat], concealed_melds_count=hand.options.concealed_melds_count)
        assert seat_view_dict(hand, None)["count"] is None
        if hand.over:
            return
        hand.apply(hand.to_act, choose(rng, hand.legal_moves()))
