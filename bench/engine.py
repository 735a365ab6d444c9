"""Engine benchmark (a benchmark, not a test): random-legal-play hands per second beside RLCard's
gin rummy, microseconds per decision and per optimal count, and the expert's worlds per second.
The last line is one JSON object so that runs can be compared by a script:

    python bench/engine.py [--seconds S] [--reps N] [--expert-decisions D] [--pure]

The engine runs as installed: compiled (setup.py compiles the modules of
``tongits.engine.compiled``) unless it was built with ``TONGITS_PURE=1``; the first line says
which. ``--pure`` measures the pure Python engine (the ``.py`` sources, their extensions passed
over) in a process of its own: #37's first row compares pure Python both.

Every rate is per second of this process's CPU time (``time.process_time``), so that other
work on a shared machine, which takes the CPU away, does not lower it (it still slows the
caches: compare figures of one run). Each figure is the median of ``--reps`` repetitions.

* **Random legal play**: whole hands, a uniformly random legal move at each decision
  (``Hand.legal_moves``, ``Hand.apply``), decks shuffled by the loop. The anchor, when RLCard
  is installed (``pip install rlcard``: it is no dependency of this project), is RLCard 1.2's
  gin rummy game played the same way (``GinRummyGame.step`` of a random one of
  ``judge.get_legal_actions()``, the game dealing its own deck), pure Python both. Ours and
  the anchor alternate rep by rep and the ratio is the median of each rep's ratio (its range
  beside it), so a change of load in the run touches both sides alike. ``with views`` plays
  the same hands building the seat's ``seat_view`` at each decision, as a training
  environment would (RLCard's ``step`` builds the next player's state too).
* **Decision**: from asking ``legal_moves`` to the end of ``apply``; **count**: the optimal
  count (RULES.md §7) of a random 13-card hand.
* **Expert**: ``--expert-decisions`` decisions of the ``expert`` bot (its default budget of
  rollouts, each one world dealt and played to the end) at every choice of strong-bot hands:
  worlds per second, and milliseconds per decision.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable

from tongits.engine import DECK, Card, Hand, deck_for, hand_count, seat_view
from tongits.engine.compiled import MODULES, pure_requested, running_compiled
from tongits.engine.policies import ExpertPolicy, get_policy
from tongits.engine.policies.expert import DEFAULT_BUDGET

clock = time.process_time
#: Decks shuffled beforehand for ``our_hands(dealt=True)`` (played in turn).
_DEALT = 2000


def our_hands(seconds: float, rng: random.Random, *, views: bool = False,
              dealt: bool = False) -> tuple[float, float]:
    """Random legal play for ``seconds`` of CPU: (hands per second, µs per decision). With
    ``dealt`` the decks are shuffled before the clock starts (chance is the engine's input)."""
    hands = decisions = 0
    deciding = 0.0
    choice = rng.choice
    decks: list[list[Card]] = []
    for _ in range(_DEALT if dealt else 0):
        decks.append(list(DECK))
        rng.shuffle(decks[-1])
    start = clock()
    while (elapsed := clock() - start) < seconds:
        if dealt:
            deck = decks[hands % _DEALT]
        else:
            deck = list(DECK)
            rng.shuffle(deck)
        hand = Hand(deck, hands % 3 if dealt else rng.randrange(3))
        began = clock()
        while not hand.over:
            seat = hand.to_act
            legal = seat_view(hand, seat).legal if views else hand.legal_moves()
            hand.apply(seat, choice(legal))
            decisions += 1
        deciding += clock() - began
        hands += 1
    return hands / elapsed, deciding / max(1, decisions) * 1e6


def rlcard_games() -> Callable[[float, random.Random], float] | None:
    """RLCard's gin rummy played by random legal moves (games per CPU second for ``seconds``),
    or None when RLCard is not installed."""
    try:
        from rlcard.games.gin_rummy.game import GinRummyGame
    except ImportError:
        return None
    import numpy

    game = GinRummyGame()

    def play(seconds: float, rng: random.Random) -> float:
        game.np_random = numpy.random.RandomState(rng.randrange(2**32))
        choice = rng.choice
        games = 0
        start = clock()
        while (elapsed := clock() - start) < seconds:
            game.init_game()
            while not game.is_over():
                game.step(choice(game.judge.get_legal_actions()))
            games += 1
        return float(games / elapsed)

    return play


def bench_count(samples: int) -> float:
    rng = random.Random(2)
    hands = [rng.sample(DECK, 13) for _ in range(samples)]
    start = clock()
    for cards in hands:
        hand_count(cards)
    return (clock() - start) / samples * 1e6


def bench_expert(decisions: int) -> tuple[float, float]:
    """(worlds per CPU second, ms per decision) of the expert at its default budget, deciding
    at every turn with a choice of hands played by strong bots (seeded: the same decisions
    every run)."""
    spent = 0.0
    made = 0
    index = 0
    while made < decisions:
        hand = Hand(deck_for("bench-expert", index), index % 3)
        expert = ExpertPolicy(f"bench/{index}")
        strong = get_policy("strong", f"bench/{index}")
        while not hand.over and made < decisions:
            view = seat_view(hand, hand.to_act)
            if len(view.legal) > 1:
                start = clock()
                expert(view)
                spent += clock() - start
                made += 1
            hand.apply(hand.to_act, strong(view))
        index += 1
    return made * DEFAULT_BUDGET / spent, spent / made * 1e3


def median_range(values: list[float]) -> str:
    return f"{statistics.median(values):,.1f} ({min(values):,.1f}–{max(values):,.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="CPU seconds of each side's random play per rep")
    parser.add_argument("--reps", type=int, default=4, help="alternated reps; medians count")
    parser.add_argument("--counts", type=int, default=10000, help="random hands counted")
    parser.add_argument("--expert-decisions", type=int, default=40,
                        help="expert decisions timed (0: none)")
    parser.add_argument("--pure", action="store_true",
                        help="the engine's .py sources, not its compiled modules")
    args = parser.parse_args()
    if args.pure and not pure_requested():
        # the compiled modules are loaded already: the same command again, told to pass them over
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "TONGITS_PURE": "1"})
    compiled = running_compiled()
    # a compiled build's module whose source changed since the build runs as Python
    changed = [name for name in MODULES if name in sys.modules and name not in compiled]
    print("engine: pure Python" if not compiled else
          f"engine: compiled ({len(compiled)} modules)" if not changed else
          f"engine: compiled ({len(compiled)} modules), as Python since changed: {changed}")
    rng = random.Random(1)
    anchor = rlcard_games()
    ours: list[float] = []
    viewed: list[float] = []
    dealt: list[float] = []
    theirs: list[float] = []
    decision: list[float] = []
    for _ in range(args.reps):
        rate, us = our_hands(args.seconds, rng)
        ours.append(rate)
        decision.append(us)
        if anchor is not None:
            theirs.append(anchor(args.seconds, rng))
        viewed.append(our_hands(args.seconds, rng, views=True)[0])
        dealt.append(our_hands(args.seconds, rng, dealt=True)[0])
    counts = [bench_count(args.counts) for _ in range(args.reps)]
    print(f"random legal play: {median_range(ours)} hands per CPU second; with each decision's "
          f"view {median_range(viewed)}")
    figures: dict[str, float] = {
        "hands_per_s": round(statistics.median(ours), 1),
        "hands_per_s_views": round(statistics.median(viewed), 1),
        "us_per_decision": round(statistics.median(decision), 2),
        "us_per_count": round(statistics.median(counts), 2),
        "compiled_modules": len(compiled),
    }
    if anchor is not None:
        ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
        dealt_ratios = [a / b for a, b in zip(dealt, theirs, strict=True)]
        print(f"RLCard gin rummy, the same way: {median_range(theirs)} games per CPU second")
        print(f"  ours ÷ RLCard: {median_range(ratios)}× (alternated reps)")
        print(f"  with our decks shuffled before the clock (RLCard's game shuffles its own, in "
              f"numpy): {median_range(dealt)} hands per CPU second, "
              f"{median_range(dealt_ratios)}×")
        figures["ratio_rlcard_dealt"] = round(statistics.median(dealt_ratios), 2)
        figures["rlcard_games_per_s"] = round(statistics.median(theirs), 1)
        figures["ratio_rlcard"] = round(statistics.median(ratios), 2)
    else:
        print("RLCard gin rummy: skipped (pip install rlcard to compare)")
    print(f"decision (legal moves + apply): {statistics.median(decision):.1f} µs")
    print(f"optimal count of a random 13-card hand: {statistics.median(counts):.1f} µs")
    if args.expert_decisions:
        worlds, ms = bench_expert(args.expert_decisions)
        print(f"expert: {worlds:,.0f} worlds per CPU second ({DEFAULT_BUDGET} a decision: "
              f"{ms:.1f} ms CPU per decision, {args.expert_decisions} decisions)")
        figures["expert_worlds_per_s"] = round(worlds, 1)
        figures["expert_ms_per_decision"] = round(ms, 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
