"""The baseline bots: ``random`` and ``greedy``, and the server's turn-timeout move."""

from __future__ import annotations

import random

from ..hand import Phase
from ..moves import Action, Move
from ..view import SeatView
from .common import best_pick, deadwood_discards, find, plan_melds, useful_lay_off, view_count

CALL_CEILING = 10  # greedy never calls above this count while an opened seat could challenge
CHALLENGE_CEILING = 8  # greedy challenges a call at or below this count


class RandomPolicy:
    """Uniform over the legal moves, from its own ``random.Random(seed)``."""

    name = "random"

    def __init__(self, seed: int | str | None = None):
        self.rng = random.Random(seed)

    def __call__(self, view: SeatView) -> Move:
        return self.rng.choice(view.legal)


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
    highest loose card. Answer: challenge at or below ``CHALLENGE_CEILING``.
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
            if challenge is not None and view_count(view) <= CHALLENGE_CEILING:
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
