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
   The move with the best mean chips is played, with one guard: the ``strong`` bot's move is
   the default, which the search overrules only when its best other move gains over it by
   more than ``guard_z`` standard errors on the same worlds. Between discards the search's
   noise (a few chips over a hundred rollouts) dwarfs the differences (a fraction of a chip),
   and a search left to pick by noise delayed its opening meld (the rollouts would place it
   next turn, the search again did not) and kept high cards: it lost 0.59 chips a hand against
   two ``strong`` bots. A call or a challenge is a bet of several chips that the noise must not
   place either.
   **A call is valued against a table that must guess** (``doubt.py``): the rollouts' own
   answerers see the caller's cards and challenge exactly when they win, the worst a caller
   can meet; valued so, the search seldom overruled a draw with a call and overruled many of
   ``strong``'s calls. The seats facing the seat's call answer as a player reading it from what
   the table has seen of the caller, believing a low count more than a high one.
4. **Reason.** ``decide`` says why in the search's own terms: the move's mean chips over the
   worlds it was played in, the runner-up's, and in how many of the worlds both were played the
   move did better or worse than the runner-up (``Choice``, cards in the reader's notation,
   seats by the players' names). A kept default gives its own reason and the guard's verdict:
   the search agrees, or the better move's gain is "within the noise", with the noise.

The budget counts rollouts, not seconds, so the same budget always gives the same move whatever
the machine's load. The worlds of a decision are seeded by the position as the seat sees it
(``world_rng``: its place after the dealer, its cards, the public history by the movers'
places), never by seat numbers or the seed the policy is built with: the hint, the bot and
``tongits review`` (``engine/review.py``), which all call ``search``, deal the same worlds for
the same position and find the same move, and an expert behind the protocol plays as the
in-process one.

A Tongits available this turn (``tongits_line``) is played without a search: every meld that
begins it ends the same way in every world, and the search would name the first of them.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..cards import mask_of
from ..count import best_arrangement
from ..hand import Hand, Phase
from ..moves import CALL, CHALLENGE, FOLD, Action, Move
from ..view import SeatView
from .common import Choice, position_key
from .doubt import Doubt, doubt_of
from .rollout import imagine_counts, plan, play_out, rollout_move
from .strong import StrongPolicy
from .worlds import InferenceParams, WorldMaker

DEFAULT_BUDGET = 96

Worlds = Callable[[SeatView, InferenceParams], WorldMaker]
"""What deals a decision's worlds: ``WorldMaker``, from the seat's view alone. A bench that
measures how far the search gets with more knowledge passes a maker of its own
(bench/expert_bound.py deals the true cards); no policy a server or arena can select does."""


@dataclass(frozen=True, slots=True)
class ExpertParams:
    """The expert's knobs: ``budget`` is the number of rollouts per decision."""

    budget: int = DEFAULT_BUDGET
    min_worlds: int = 6  # worlds per candidate in the first round of halving
    guard_z: float = 2.0  # standard errors by which the search must beat the default move
    switch_kinds: bool = False  # may the search trade strong's meld, lay-off or discard for
    # a move of another kind of these (see ``_guarded``)
    fold_above: int = 25  # the default folds a call nobody has challenged above this count
    # (``default_move``)
    inference: InferenceParams = field(default_factory=InferenceParams)


@dataclass(frozen=True, slots=True)
class MoveValue:
    """A move's estimated value: mean chips for the seat over ``worlds`` rollouts; ``chips``
    holds each rollout's chips, world by world from the first (empty when not kept)."""

    move: Move
    mean: float
    worlds: int
    chips: tuple[int, ...] = ()


def world_rng(view: SeatView, salt: str | None = None) -> random.Random:
    """The random source of the worlds of ``view``'s decision: the position as the seat sees it
    (``position_key``: its place after the dealer, its cards, every public move by its mover's
    place) and ``salt``. The same position gets the same worlds whoever asks (the bot, the hint,
    the review) and whatever the seats' numbers: an expert behind the protocol, where the dealer
    goes round instead of the bots, plays as the in-process one."""
    return random.Random(f"worlds/{salt}/{position_key(view)}")


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


def _rollout(world: Hand, seat: int, move: Move, doubt: Doubt | None = None) -> int:
    hand = world.copy()
    hand.apply_legal(seat, move)
    if doubt is not None and move == CALL:
        while hand.phase is Phase.ANSWER:
            hand.apply_legal(hand.to_act, doubt.answer(hand))
    play_out(hand)
    assert hand.result is not None
    return hand.result.chips[seat]


class Search:
    """The worlds and rollouts of one decision (shared by the policy and the review)."""

    def __init__(
        self, view: SeatView, rng: random.Random, params: InferenceParams,
        doubt: Doubt | None = None, worlds: Worlds = WorldMaker,
    ):
        assert view.seat is not None
        self.seat = view.seat
        self.maker = worlds(view, params)
        self.rng = rng
        self.worlds: list[Hand] = []
        self.doubt = doubt

    def world(self, i: int) -> Hand:
        while len(self.worlds) <= i:
            self.worlds.append(self.maker.sample(self.rng))
        return self.worlds[i]

    def chips(self, move: Move, worlds: int) -> tuple[int, ...]:
        """The seat's chips after ``move`` in each of the first ``worlds`` worlds."""
        return tuple(_rollout(self.world(i), self.seat, move, self.doubt) for i in range(worlds))

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
                chips[m] += [_rollout(self.world(i), self.seat, m, self.doubt) for i in worlds]
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

    def __init__(
        self, seed: int | str | None = None, params: ExpertParams | None = None,
        worlds: Worlds = WorldMaker,
    ):
        """``seed``: taken, as every policy takes one, and not used (the worlds come from the
        position: see the module's docstring). ``worlds``: what deals them (``Worlds``). The
        rollouts' guesses at the seats' counts are dealt here, once per process
        (``imagine_counts``), not in the first decision."""
        self.params = params or ExpertParams()
        self.worlds = worlds
        imagine_counts()

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
        found = search(view, self.params, self.worlds)
        if found.guard is None:
            return explain(found.values)
        if found.values[0].move == found.default.move:
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
    the default move the search had to beat (``strong``'s) and the guard's verdict on it
    (``None`` when no other move was searched)."""

    search: Search
    values: list[MoveValue]
    default: Choice
    guard: Guard | None = None



def search(view: SeatView, params: ExpertParams, worlds: Worlds = WorldMaker) -> Searched:
    """The expert's search of ``view``'s decision: its worlds (``world_rng(view)``, dealt by
    ``worlds``), the sequential halving of its ``candidates`` and of ``strong``'s move, the
    default, best first, the default put first unless the best beats it by ``guard_z``
    standard errors. Where the seat may call, a call is valued against the answers of a table
    that reads it (``doubt_of``). The bot, the hint and the review all call this, so the same
    position always gives them the same answer."""
    answerers = [s for s in range(3) if s != view.seat and view.opened[s]]
    doubt = doubt_of(view, params.inference) if CALL in view.legal and answerers else None
    found = Search(view, world_rng(view), params.inference, doubt, worlds)
    default = default_move(view, params)
    moves = candidates(view)
    if default.move not in moves:
        moves.append(default.move)
    values = found.halving(moves, params.budget, params.min_worlds)
    values, guard = _guarded(found, values, default.move, params)
    return Searched(found, values, default, guard)


def default_move(view: SeatView, params: ExpertParams) -> Choice:
    """The move the search must beat: ``strong``'s, but a fold where ``strong`` would be the
    first to challenge a call holding more than ``fold_above`` (25: ``strong``'s own highest
    count to call, ``call_max_count``). ``strong`` challenges there because it believes one
    caller in ten counts more than 10, its defence against a seat that calls whatever its
    count; a caller that calls by its count (``strong``, ``greedy``) never calls above 25, so
    such a challenge loses the showdown, and the seat pays more than a fold would have cost
    (replayed over 4,500 hands of three ``strong``, a fold did better in 204 of 502 such
    hands and worse in none: docs/BOTS.md). The search still challenges where its worlds,
    which believe callers as ``strong`` does, find a challenge better beyond the noise: that
    keeps a seat that calls at every chance losing to the expert."""
    strong = StrongPolicy().decide(view)
    if (
        strong.move != CHALLENGE
        or view.count() <= params.fold_above
        or any(step.move == CHALLENGE for step in view.history)
    ):
        return strong
    return Choice(
        FOLD,
        "your count {} is above {}, where a seat that calls by its count does not call: "
        "folding costs less than a challenge that loses",
        (view.count(), params.fold_above),
    )


def _guarded(
    found: Search, values: list[MoveValue], default: Move, params: ExpertParams
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
        params.guard_z,
    )
    if guard.beyond_noise and (params.switch_kinds or not _switches(default, rival.move)):
        return values, guard
    return [guard.default, *(v for v in values if v.move != default)], guard


def _switches(default: Move, rival: Move) -> bool:
    """Whether ``rival`` plays the seat's cards otherwise than ``default`` does: a discard for
    a meld or a lay-off, a meld for a discard, .... The search's rollouts lay off and meld by
    rote, so it values these trades worse than it values two discards: on duplicate deals
    against two ``strong``, the hands where it made one lost 55 chips over 1,500 hands
    (``bench/bots.py explain``, seed e1)."""
    return rival.action is not default.action and rival.action in _PLAYING


_PLAYING = frozenset({Action.MELD, Action.SECRET, Action.SAPAW, Action.DISCARD})


def kept(default: Choice, guard: Guard) -> Choice:
    """The default move, kept because no searched move was clearly better: its own reason and
    the search's verdict on the best other move: worse, better only within the noise, or
    better beyond it but another kind of move (``_switches``)."""
    rival, mine = guard.rival, guard.default
    if guard.gain <= 0:
        return Choice(
            default.move,
            default.why + "; over {} dealt worlds the search agrees (next best {} averages {} "
            "chips, this {})",
            (*default.args, mine.worlds, rival.move, _signed(rival.mean), _signed(mine.mean)),
        )
    if guard.beyond_noise:  # a trade of another kind of move, which the search misjudges
        return Choice(
            default.move,
            default.why + "; over {} dealt worlds {} averages {} chips, this {}: {} is better "
            "by {}, beyond the noise (±{}), but the search misjudges a {} played for a {}",
            (
                *default.args, mine.worlds, rival.move, _signed(rival.mean), _signed(mine.mean),
                rival.move, f"{guard.gain:.1f}", f"{guard.z * guard.noise:.1f}",
                rival.move.action.value, mine.move.action.value,
            ),
        )
    return Choice(
        default.move,
        default.why + "; over {} dealt worlds {} averages {} chips, this {}: {} seems better "
        "by {}, within the noise (±{})",
        (
            *default.args, mine.worlds, rival.move, _signed(rival.mean), _signed(mine.mean),
            rival.move, f"{guard.gain:.1f}", f"{guard.z * guard.noise:.1f}",
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
