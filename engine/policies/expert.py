"""The ``expert`` bot: determinized Monte-Carlo search from the seat's view alone.

For each decision with more than one legal move:

1. **Worlds.** Deal the cards the seat cannot see, many times over, each deal consistent with
   the public history and weighted by what the other seats' picks, passes and throws say about
   their hands (``worlds.py``).
2. **Rollouts.** In a world, apply a candidate move and play the hand to its end with the fast
   rollout policy (``rollout.py``) for all three seats; the value is the seat's chips.
3. **Choice.** Sequential halving over the candidates: every candidate is tried on the same
   worlds (common random numbers, so a comparison is not drowned by the luck of the deal), the
   worse half is dropped and the survivors get more worlds, until the rollout budget is spent.
   The move with the best mean chips is played.
4. **Reason.** ``decide`` says why in the search's own terms: the move's mean chips over the
   worlds it was played in, the runner-up's, and in how many of the worlds both were played the
   move did better or worse than the runner-up (``Choice``, cards in the reader's notation).

The budget counts rollouts, not seconds, so the same seed and budget always give the same move
whatever the machine's load. ``Search`` is also the engine of ``tongits review``
(``engine/review.py``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..cards import mask_of
from ..hand import Hand
from ..moves import Action, Move
from ..view import SeatView
from .common import Choice
from .rollout import plan, play_out, rollout_move
from .worlds import InferenceParams, WorldMaker

DEFAULT_BUDGET = 96


@dataclass(frozen=True, slots=True)
class ExpertParams:
    """The expert's knobs: ``budget`` is the number of rollouts per decision."""

    budget: int = DEFAULT_BUDGET
    min_worlds: int = 6  # worlds per candidate in the first round of halving
    inference: InferenceParams = field(default_factory=InferenceParams)


@dataclass(frozen=True, slots=True)
class MoveValue:
    """A move's estimated value: mean chips for the seat over ``worlds`` rollouts; ``chips``
    holds each rollout's chips, world by world from the first (empty when not kept)."""

    move: Move
    mean: float
    worlds: int
    chips: tuple[int, ...] = ()


def _rollout(world: Hand, seat: int, move: Move) -> int:
    hand = world.copy()
    hand.apply_legal(seat, move)
    play_out(hand)
    assert hand.result is not None
    return hand.result.chips[seat]


class Search:
    """The worlds and rollouts of one decision (shared by the policy and the review)."""

    def __init__(self, view: SeatView, rng: random.Random, params: InferenceParams):
        assert view.seat is not None
        self.seat = view.seat
        self.maker = WorldMaker(view, params)
        self.rng = rng
        self.worlds: list[Hand] = []

    def world(self, i: int) -> Hand:
        while len(self.worlds) <= i:
            self.worlds.append(self.maker.sample(self.rng))
        return self.worlds[i]

    def values(self, moves: Sequence[Move], worlds: int) -> list[MoveValue]:
        """Each move's mean chips over the first ``worlds`` worlds."""
        out = []
        for move in moves:
            total = sum(_rollout(self.world(i), self.seat, move) for i in range(worlds))
            out.append(MoveValue(move, total / worlds, worlds))
        return out

    def share_fed(self, discard: Move) -> float:
        """The share of the sampled worlds in which the next seat picks ``discard`` at once."""
        if not self.worlds:
            self.world(0)
        fed = 0
        for world in self.worlds:
            hand = world.copy()
            hand.apply(self.seat, discard)
            if not hand.over and hand.to_act != self.seat:
                fed += rollout_move(hand).action is Action.PICK
        return fed / len(self.worlds)

    def halving(self, moves: Sequence[Move], budget: int, min_worlds: int) -> list[MoveValue]:
        """Sequential halving: every move's value, best first among those that survived longest.

        The budget is split evenly between ``ceil(log2(n))`` rounds; in each, the surviving
        moves are played on the next worlds (the same worlds for all of them) and the worse
        half is dropped."""
        alive = list(moves)
        chips: dict[Move, list[int]] = {m: [] for m in alive}
        rounds = max(1, math.ceil(math.log2(len(alive))))
        done = 0
        result: dict[Move, MoveValue] = {}
        for _ in range(rounds):
            step = max(1, budget // (rounds * len(alive)))
            if not done:
                step = max(step, min(min_worlds, budget // len(alive)))
            for m in alive:
                worlds = range(done, done + step)
                chips[m] += [_rollout(self.world(i), self.seat, m) for i in worlds]
            done += step
            for m in alive:
                result[m] = MoveValue(m, sum(chips[m]) / done, done, tuple(chips[m]))
            alive.sort(key=lambda m: -result[m].mean)
            alive = alive[: max(1, (len(alive) + 1) // 2)]
        return sorted(result.values(), key=lambda v: (-v.worlds, -v.mean))


def candidates(view: SeatView) -> list[Move]:
    """The moves worth searching: every legal move except discards of cards that belong to a
    meld of the hand's best arrangement (breaking a meld to throw one of its cards is almost
    never right, and there are many such discards). With no loose card, every discard stays."""
    legal = view.legal
    discards = [m for m in legal if m.action is Action.DISCARD]
    if len(discards) < 2:
        return list(legal)
    _, dead = plan(mask_of(view.hand))
    loose = [m for m in discards if m.card is not None and dead >> m.card & 1]
    if not loose:
        return list(legal)
    return [m for m in legal if m.action is not Action.DISCARD] + loose


class ExpertPolicy:
    """See the module docstring."""

    name = "expert"

    def __init__(self, seed: int | str | None = None, params: ExpertParams | None = None):
        self.seed = seed
        self.params = params or ExpertParams()

    def _rng(self, view: SeatView) -> random.Random:
        return random.Random(f"expert/{self.seed}/{view.seat}/{view.dealer}/{len(view.history)}")

    def __call__(self, view: SeatView) -> Move:
        return self.decide(view).move

    def decide(self, view: SeatView) -> Choice:
        """The move for ``view`` with the reason the search found for it (the ``hint``)."""
        legal = view.legal
        if len(legal) == 1:
            return Choice(legal[0], "the only legal move")
        search = Search(view, self._rng(view), self.params.inference)
        values = search.halving(candidates(view), self.params.budget, self.params.min_worlds)
        return explain(values)


def explain(values: Sequence[MoveValue]) -> Choice:
    """The best of ``values`` (the halving's order) with why: its mean chips over its worlds,
    and against the runner-up, their means and in what share of the worlds both were played
    the best did better and worse."""
    best = values[0]
    if len(values) == 1:
        return Choice(
            best.move,
            "over {} dealt worlds it averages {} chips; every other move breaks a meld",
            (best.worlds, _signed(best.mean)),
        )
    second = values[1]
    shared = min(best.worlds, second.worlds)
    pairs = list(zip(best.chips[:shared], second.chips[:shared], strict=True))
    better = sum(a > b for a, b in pairs)
    worse = sum(a < b for a, b in pairs)
    if not better and not worse:
        return Choice(
            best.move,
            "over {} dealt worlds it averages {} chips; next best {} ends the same in every one",
            (best.worlds, _signed(best.mean), second.move),
        )
    return Choice(
        best.move,
        "over {} dealt worlds it averages {} chips; next best {} averages {}: this is better in "
        "{} % of those worlds, worse in {} %",
        (
            best.worlds,
            _signed(best.mean),
            second.move,
            _signed(second.mean),
            round(100 * better / max(1, shared)),
            round(100 * worse / max(1, shared)),
        ),
    )


def _signed(chips: float) -> str:
    return f"{chips:+.1f}"
