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
   The move with the best mean chips is played, with one guard: a default move, which the
   search overrules only when its best other move gains over it by more than ``guard_z``
   standard errors on the same worlds. While the seat plays its cards (melds, lay-offs,
   discards) and while it answers a call, the default is the ``strong`` bot's move; at the
   start of a turn, the search's best move but the call (or the call, when no opened seat may
   challenge it): a call or a challenge is a bet of several chips that the noise must not
   place. Between discards the search's noise (a few chips over a hundred
   rollouts) dwarfs the differences (a fraction of a chip), and a search left to pick by noise
   delayed its opening meld (the rollouts would place it next turn, the search again did not)
   and kept high cards: it lost 0.59 chips a hand against two ``strong`` bots, and with the
   guard it beats them (``docs/BOTS.md``).
4. **Reason.** ``decide`` says why in the search's own terms: the move's mean chips over the
   worlds it was played in, the runner-up's, and in how many of the worlds both were played the
   move did better or worse than the runner-up (``Choice``, cards in the reader's notation,
   seats by the players' names). A kept default gives its own reason and the guard's verdict:
   the search agrees, or the better move's gain is "within the noise", with the noise.

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
        if found.default is None or found.guard is None:
            return explain(found.values)
        if found.values[0].move == found.default.move:
            if found.searched_default and found.guard.gain <= 0:
                return explain(found.values)  # the search's own choice: say so in its terms
            return kept(found.default, found.guard)
        return overruled(found.values, found.guard)


@dataclass(frozen=True, slots=True)
class Guard:
    """The guard's verdict on one decision: over the same ``worlds``, the best searched move
    other than the default (``rival``) gains ``gain`` chips a hand over the default
    (``default``), with the standard error ``noise``. The rival is played only when the gain
    is ``z`` standard errors or more: ``beyond_noise``."""

    default: MoveValue
    rival: MoveValue
    gain: float
    noise: float
    z: float

    @property
    def beyond_noise(self) -> bool:
        return self.gain > 0 and self.gain > self.z * self.noise


@dataclass(frozen=True, slots=True)
class Searched:
    """One decision's search: its worlds (``search``), every searched move's value best first,
    the default move the search had to beat (``None`` where there is none; ``searched_default``
    when it is the search's own best move but the call) and the guard's verdict on it (``None``
    when no other move was searched)."""

    search: Search
    values: list[MoveValue]
    default: Choice | None
    guard: Guard | None = None
    searched_default: bool = False


CALL = Move(Action.CALL)


def default_choice(view: SeatView, seed: int | str | None) -> Choice | None:
    """The move the search must clearly beat, before the search: ``strong``'s while the seat
    plays its cards and while it answers a call (a challenge, like a call, is a bet the
    search's noise must not decide); at the start of a turn where no opened seat may
    challenge, the call, which wins for sure. At the start of any other turn where the seat
    may call, the default is the search's best move but the call (``search``)."""
    if view.phase is Phase.PLAY or view.phase is Phase.ANSWER:
        return StrongPolicy(seed).decide(view)
    if view.phase is Phase.START and CALL in view.legal:
        rivals = [s for s in range(3) if s != view.seat and view.opened[s]]
        if not rivals:
            return Choice(CALL, "no other seat has opened, so nobody may challenge: the call wins")
    return None


def search(view: SeatView, seed: int | str | None, params: ExpertParams) -> Searched:
    """The expert's search of ``view``'s decision: its worlds (``world_rng(view, seed)``), the
    sequential halving of its ``candidates`` (and the default move), best first, the default
    put first unless the best beats it by ``guard_z`` standard errors. The bot, the hint and
    the review all call this, so the same position and seed always give them the same answer.

    A call is guarded too: at the start of a turn, unless the call wins for sure, the default
    is the best move but the call, and the search calls only when calling gains over it beyond
    the noise. Left to pick by noise, the hint advised calls at counts of 40 or more into an
    opened seat counting less (coin flips: better in 42 % of the worlds, worse in 50 %)."""
    found = Search(view, world_rng(view, seed), params.inference)
    default = default_choice(view, seed)
    moves = candidates(view)
    if default is not None and default.move not in moves:
        moves.append(default.move)
    values = found.halving(moves, params.budget, params.min_worlds)
    searched = default is None and CALL in moves and len(moves) > 1
    if searched:
        rest = next(v for v in values if v.move != CALL)
        default = Choice(rest.move, "the search's best move but the call, which is not clearly "
                         "better")
    if default is None:
        return Searched(found, values, None)
    values, guard = _guarded(found, values, default.move, params.guard_z)
    return Searched(found, values, default, guard, searched)


def _guarded(
    found: Search, values: list[MoveValue], default: Move, z: float
) -> tuple[list[MoveValue], Guard | None]:
    """``values`` with the default move first, valued on the rival's worlds, unless the rival
    (the best other move) gains over it by more than ``z`` standard errors of the paired
    differences; and the guard's verdict."""
    rival = next((v for v in values if v.move != default), None)
    if rival is None:
        return values, None
    n = rival.worlds
    mine = next((v for v in values if v.move == default and v.worlds >= n), None)
    chips = mine.chips[:n] if mine is not None else found.chips(default, n)
    rivals = rival.chips[:n]
    diffs = [a - b for a, b in zip(rivals, chips, strict=True)]
    noise = statistics.stdev(diffs) / math.sqrt(n) if n > 1 else math.inf
    guard = Guard(
        MoveValue(default, statistics.fmean(chips), n, chips),
        MoveValue(rival.move, statistics.fmean(rivals), n, rivals),
        statistics.fmean(diffs),
        noise,
        z,
    )
    if guard.beyond_noise:
        return values, guard
    return [guard.default, *(v for v in values if v.move != default)], guard


def kept(default: Choice, guard: Guard) -> Choice:
    """The default move, kept because no searched move was clearly better: its own reason and
    the search's verdict on the best other move: worse, or better only within the noise."""
    rival, mine = guard.rival, guard.default
    if guard.gain <= 0:
        return Choice(
            default.move,
            default.why + "; over {} dealt worlds the search agrees (next best {} averages {} "
            "chips, this {})",
            (*default.args, mine.worlds, rival.move, _signed(rival.mean), _signed(mine.mean)),
        )
    return Choice(
        default.move,
        default.why + "; over {} dealt worlds {} averages {} chips, this {}: a gain of {}, "
        "within the noise (±{})",
        (
            *default.args, mine.worlds, rival.move, _signed(rival.mean), _signed(mine.mean),
            f"{guard.gain:.1f}", f"{guard.z * guard.noise:.1f}",
        ),
    )


def overruled(values: Sequence[MoveValue], guard: Guard) -> Choice:
    """The search's best move, which beats the default beyond the noise: ``explain``'s reason
    and the gain over the default."""
    best = explain(values)
    return Choice(
        best.move,
        best.why + "; it beats {} by {} chips, beyond the noise (±{})",
        (*best.args, guard.default.move, f"{guard.gain:.1f}", f"{guard.z * guard.noise:.1f}"),
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
