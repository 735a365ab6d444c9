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
   The move with the best mean chips is played, with one guard: while the seat plays its
   cards (melds, lay-offs, discards), the ``strong`` bot's move is the default, and the search
   overrules it only when its best move gains over it by more than ``guard_z`` standard errors
   on the same worlds. Between discards the search's noise (a few chips over a hundred
   rollouts) dwarfs the differences (a fraction of a chip), and a search left to pick by noise
   delayed its opening meld (the rollouts would place it next turn, the search again did not)
   and kept high cards: it lost 0.59 chips a hand against two ``strong`` bots, and with the
   guard it beats them (``docs/BOTS.md``).
4. **Reason.** ``decide`` says why in the search's own terms: the move's mean chips over the
   worlds it was played in, the runner-up's, and in how many of the worlds both were played the
   move did better or worse than the runner-up (``Choice``, cards in the reader's notation).

The budget counts rollouts, not seconds, so the same seed and budget always give the same move
whatever the machine's load. The worlds of a decision are seeded by the position itself
(``world_rng``: the seat's cards and the public history) and the policy's seed, so the hint, the
bot and ``tongits review`` (``engine/review.py``), which all call ``search``, deal the same
worlds for the same position and find the same move.

A Tongits available this turn (``tongits_line``) is played without a search: every meld that
begins it ends the same way in every world, and the search would name the first of them.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..cards import mask_of
from ..count import best_arrangement
from ..hand import Hand, Phase
from ..moves import Action, Move
from ..view import SeatView
from .common import Choice
from .rollout import plan, play_out, rollout_move
from .strong import StrongPolicy
from .worlds import InferenceParams, WorldMaker

DEFAULT_BUDGET = 96


@dataclass(frozen=True, slots=True)
class ExpertParams:
    """The expert's knobs: ``budget`` is the number of rollouts per decision."""

    budget: int = DEFAULT_BUDGET
    min_worlds: int = 6  # worlds per candidate in the first round of halving
    guard_z: float = 2.0  # standard errors by which the search must beat the default move
    inference: InferenceParams = field(default_factory=InferenceParams)


@dataclass(frozen=True, slots=True)
class MoveValue:
    """A move's estimated value: mean chips for the seat over ``worlds`` rollouts; ``chips``
    holds each rollout's chips, world by world from the first (empty when not kept)."""

    move: Move
    mean: float
    worlds: int
    chips: tuple[int, ...] = ()


def world_rng(view: SeatView, seed: int | str | None = None) -> random.Random:
    """The random source of the worlds of ``view``'s decision: the position (the seat, the
    dealer, the seat's cards, every public move so far) and ``seed``. The same position gets
    the same worlds whoever asks: the bot, the hint, the review."""
    history = " ".join(f"{step.seat}:{step.move}" for step in view.history)
    cards = " ".join(map(str, view.hand))
    return random.Random(f"worlds/{seed}/{view.seat}/{view.dealer}/{cards}/{history}")


def tongits_line(view: SeatView) -> tuple[Move, ...] | None:
    """The moves that empty the seat's hand this turn (a Tongits, RULES.md §6.1), if it can go
    out now: the whole hand as one meld when it is one (a 13-card run), else the melds of its
    best arrangement (a four-of-a-kind face down: it keeps its bonus, §9), then the discard of
    the one loose card if there is one; else ``None``."""
    if view.phase is not Phase.PLAY or view.seat is None or view.to_act != view.seat:
        return None
    needs_discard = view.options.tongits_needs_discard
    for keep in (() if needs_discard else ((),)) + tuple((c,) for c in view.hand):
        whole = Move(Action.MELD, tuple(c for c in view.hand if c not in keep))
        if whole in view.legal:  # one meld of the whole hand (a long run), then the discard
            return (whole, *(Move(Action.DISCARD, card=c) for c in keep))
    arrangement = best_arrangement(view.hand)
    dead = arrangement.deadwood
    if len(dead) > 1 or (not dead and needs_discard) or not arrangement.melds:
        return None
    line: list[Move] = []
    for meld in arrangement.melds:
        four = len(meld) == 4 and meld[0].rank == meld[1].rank
        line.append(Move(Action.SECRET if four else Action.MELD, meld))
    line += [Move(Action.DISCARD, card=card) for card in dead]
    return tuple(line) if line[0] in view.legal else None


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

    def chips(self, move: Move, worlds: int) -> tuple[int, ...]:
        """The seat's chips after ``move`` in each of the first ``worlds`` worlds."""
        return tuple(_rollout(self.world(i), self.seat, move) for i in range(worlds))

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

    def __call__(self, view: SeatView) -> Move:
        return self.decide(view).move

    def decide(self, view: SeatView) -> Choice:
        """The move for ``view`` with the reason the search found for it (the ``hint``)."""
        legal = view.legal
        if len(legal) == 1:
            return Choice(legal[0], "the only legal move")
        line = tongits_line(view)
        if line is not None:
            return Choice(line[0], "it begins a Tongits: " + " · ".join("{}" for _ in line), line)
        found = search(view, self.seed, self.params)
        if found.default is not None and found.values[0].move == found.default.move:
            return kept(found.default, found.values)
        return explain(found.values)


@dataclass(frozen=True, slots=True)
class Searched:
    """One decision's search: its worlds (``search``), every searched move's value best first,
    and the default move the search had to beat (``None`` outside the play of cards)."""

    search: Search
    values: list[MoveValue]
    default: Choice | None


def default_choice(view: SeatView, seed: int | str | None) -> Choice | None:
    """The move the search must clearly beat: ``strong``'s, while the seat plays its cards."""
    if view.phase is not Phase.PLAY:
        return None
    return StrongPolicy(seed).decide(view)


def search(view: SeatView, seed: int | str | None, params: ExpertParams) -> Searched:
    """The expert's search of ``view``'s decision: its worlds (``world_rng(view, seed)``), the
    sequential halving of its ``candidates`` (and the default move), best first, the default
    put first unless the best beats it by ``guard_z`` standard errors. The bot, the hint and
    the review all call this, so the same position and seed always give them the same answer."""
    found = Search(view, world_rng(view, seed), params.inference)
    default = default_choice(view, seed)
    moves = candidates(view)
    if default is not None and default.move not in moves:
        moves.append(default.move)
    values = found.halving(moves, params.budget, params.min_worlds)
    if default is not None:
        values = _guarded(found, values, default.move, params.guard_z)
    return Searched(found, values, default)


def _guarded(found: Search, values: list[MoveValue], default: Move, z: float) -> list[MoveValue]:
    """``values`` with the default move first, valued on the best's worlds, unless the best
    gains over it by more than ``z`` standard errors of the paired differences."""
    best = values[0]
    if best.move == default:
        return values
    n = best.worlds
    mine = next((v for v in values if v.move == default and v.worlds == n), None)
    chips = mine.chips if mine is not None else found.chips(default, n)
    diffs = [a - b for a, b in zip(best.chips, chips, strict=True)]
    gain = statistics.fmean(diffs)
    noise = statistics.stdev(diffs) / math.sqrt(n) if n > 1 else math.inf
    if gain > 0 and gain > z * noise:
        return values
    first = MoveValue(default, statistics.fmean(chips), n, tuple(chips))
    return [first, *(v for v in values if v.move != default)]


def kept(default: Choice, values: Sequence[MoveValue]) -> Choice:
    """The default move, kept because no searched move was clearly better: its own reason and
    the search's verdict on the runner-up."""
    best = values[0]
    if len(values) == 1:
        return default
    second = values[1]
    return Choice(
        default.move,
        default.why + "; over {} dealt worlds no other move does clearly better ({} averages "
        "{} chips, this {}: within the noise)",
        (*default.args, best.worlds, second.move, _signed(second.mean), _signed(best.mean)),
    )


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
