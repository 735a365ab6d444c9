"""The baseline bots: ``random`` and ``greedy``, and the server's turn-timeout move."""

from __future__ import annotations

import random

from ..hand import Phase
from ..moves import Action, Move
from ..view import SeatView
from .common import best_pick, deadwood_discards, find, plan_melds, useful_lay_off, view_count

CALL_CEILING = 10  # greedy never calls above this count while an opened seat could challenge
CHALLENGE_CEILING = 8  # greedy challenges any call at or below this count...
CALLER_POINTS_PER_CARD = 5  # ... and one at or below this many points per card the caller holds


class RandomPolicy:
    """Uniform over the legal moves, from its own ``random.Random(seed)``."""

    name = "random"

    def __init__(self, seed: int | str | None = None):
        self.rng = random.Random(seed)

    def __call__(self, view: SeatView) -> Move:
        return self.rng.choice(view.legal)


def challenge_threshold(view: SeatView, per_card: float = CALLER_POINTS_PER_CARD) -> float:
    """Greedy's highest count to challenge a call on: ``per_card`` points per
    card in the caller's hand, at least ``CHALLENGE_CEILING``. A seat calling with many cards
    left may well count high (a seat that called at every chance, whatever its count, won 3.0
    chips a hand from two greedy bots that challenged only at 8 or less)."""
    caller = view.caller
    cards = view.hand_sizes[caller] if caller is not None else 0
    return max(CHALLENGE_CEILING, per_card * cards)


def call_threshold(view: SeatView) -> float:
    """Greedy's highest count to call on: 2 points per card of the opened opponent holding the
    fewest, capped at ``CALL_CEILING``; unbounded if no opponent has opened (nobody can
    challenge, RULES.md §6.2)."""
    me = view.seat
    sizes = [view.hand_sizes[s] for s in range(3) if s != me and view.opened[s]]
    if not sizes:
        return float("inf")
    return min(CALL_CEILING, 2 * min(sizes))


class GreedyPolicy:
    """Takes every meld it can see, throws its highest loose card, calls when its count is low.

    Start: call if its count is at most ``call_threshold``; else pick the discard if that makes
    a meld (the pick leaving the lowest count); else draw. Play: meld everything its best
    arrangement holds, lay off every card that does not raise its count, then discard its
    highest loose card. Answer: challenge at or below ``challenge_threshold``.
    """

    name = "greedy"

    def __init__(self, seed: int | str | None = None):
        self.seed = seed

    def __call__(self, view: SeatView) -> Move:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        if view.phase is Phase.ANSWER:
            challenge = find(legal, Action.CHALLENGE)
            if challenge is not None and view_count(view) <= challenge_threshold(view):
                return challenge
            return find(legal, Action.FOLD) or legal[0]
        if view.phase is Phase.START:
            call = find(legal, Action.CALL)
            if call is not None and view_count(view) <= call_threshold(view):
                return call
            return best_pick(view) or find(legal, Action.DRAW) or legal[0]
        return (
            plan_melds(view)
            or useful_lay_off(view)
            or next(iter(deadwood_discards(view)), None)
            or legal[0]
        )


def autoplay_move(view: SeatView) -> Move:
    """The move the server plays for a seat whose turn timed out: fold a call; otherwise draw,
    then discard the highest loose card (nothing is melded or laid off for an absent player,
    unless it is the only legal move)."""
    legal = view.legal
    if not legal:
        raise ValueError(f"seat {view.seat} has no move to play")
    if view.phase is Phase.ANSWER:
        return find(legal, Action.FOLD) or legal[0]
    if view.phase is Phase.START:
        return find(legal, Action.DRAW) or legal[0]
    discards = deadwood_discards(view)
    return discards[0] if discards else legal[0]
