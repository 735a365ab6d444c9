"""Engine benchmark (a benchmark, not a test): random-legal-play hands per second on one core,
microseconds per decision (listing the legal moves and applying one), and microseconds per
optimal count of a random 13-card hand. The last line is one JSON object so that runs can be
compared by a script:

    python bench/engine.py [--seconds S] [--rounds N]

Every figure is the best of N rounds, since other work on the machine only ever slows a round
down. A decision is timed from asking ``Hand.legal_moves()`` to the end of ``Hand.apply``.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from tongits.engine import DECK, Hand, hand_count


def play_random_hand(rng: random.Random) -> tuple[int, float]:
    """Play one hand with uniformly random legal moves; return (decisions, seconds deciding)."""
    deck = list(DECK)
    rng.shuffle(deck)
    hand = Hand(deck, rng.randrange(3))
    decisions = 0
    clock = time.perf_counter
    spent = 0.0
    choice = rng.choice
    while not hand.over:
        start = clock()
        hand.apply(hand.to_act, choice(hand.legal_moves()))
        spent += clock() - start
        decisions += 1
    return decisions, spent


def bench_hands(seconds: float, rounds: int) -> tuple[float, float]:
    """Best of ``rounds`` rounds (the machine may be busy with other work): hands per second
    and microseconds per decision."""
    rng = random.Random(1)
    best_rate, best_decision = 0.0, float("inf")
    for _ in range(rounds):
        hands = decisions = 0
        deciding = 0.0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / rounds:
            n, spent = play_random_hand(rng)
            hands += 1
            decisions += n
            deciding += spent
        best_rate = max(best_rate, hands / elapsed)
        best_decision = min(best_decision, deciding / decisions * 1e6)
    return best_rate, best_decision


def bench_count(samples: int, rounds: int) -> float:
    rng = random.Random(2)
    hands = [rng.sample(DECK, 13) for _ in range(samples)]
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for cards in hands:
            hand_count(cards)
        best = min(best, (time.perf_counter() - start) / samples * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time spent playing hands")
    parser.add_argument("--counts", type=int, default=10000, help="random hands counted")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the best one counts")
    args = parser.parse_args()
    hands_per_s, us_per_decision = bench_hands(args.seconds, args.rounds)
    us_per_count = bench_count(args.counts, args.rounds)
    print(f"random legal play: {hands_per_s:,.0f} full hands/s (one core)")
    print(f"decision (legal moves + apply): {us_per_decision:.1f} µs")
    print(f"optimal count of a random 13-card hand: {us_per_count:.1f} µs")
    print(
        json.dumps(
            {
                "hands_per_s": round(hands_per_s, 1),
                "us_per_decision": round(us_per_decision, 2),
                "us_per_count": round(us_per_count, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
