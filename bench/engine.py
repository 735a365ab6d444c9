"""Engine benchmark (a benchmark, not a test): random-legal-play hands per second on one core,
microseconds per decision (listing the legal moves and applying one), and microseconds per
optimal count of a random 13-card hand. The last line is one JSON object so that runs can be
compared by a script:

    python bench/engine.py [--seconds S]
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


def bench_hands(seconds: float) -> tuple[float, float]:
    rng = random.Random(1)
    hands = decisions = 0
    deciding = 0.0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        n, spent = play_random_hand(rng)
        hands += 1
        decisions += n
        deciding += spent
    return hands / elapsed, deciding / decisions * 1e6


def bench_count(samples: int) -> float:
    rng = random.Random(2)
    hands = [rng.sample(DECK, 13) for _ in range(samples)]
    start = time.perf_counter()
    for cards in hands:
        hand_count(cards)
    return (time.perf_counter() - start) / samples * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time spent playing hands")
    parser.add_argument("--counts", type=int, default=20000, help="random hands counted")
    args = parser.parse_args()
    hands_per_s, us_per_decision = bench_hands(args.seconds)
    us_per_count = bench_count(args.counts)
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
