"""The engine against the rules oracle over many matches: hands checked and disagreements.

``tests/rules_oracle.py`` states RULES.md a second time, independently of the engine;
``tests/oracle_check.py`` plays the two side by side and compares them at every decision (legal
moves both ways, turn and phase, counts, opened and blocked seats, each seat's view, the result,
chips, the next dealer and the ante pot). Match ``i`` is seed ``SEED + i`` at the table of the
two-valued options' combination ``i % 512`` (every combination of RULES.md §10 once per 512
matches), its ante 0, 1 or 5 from the seed; each seat one of ``--players`` (by default random,
passive, eager, greedy and strong; ``expert`` searches much longer per decision).

    python bench/oracle_diff.py --matches 2000 --seed 0 [--hands 3] [--players ...,expert]

Prints each disagreement (seed, options, deal, moves, what differs), how often each rule came up,
and last one JSON line: matches, hands, decisions, disagreements, seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from oracle_check import COMBINATIONS, PLAYERS, Tally, check_match  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hands", type=int, default=3, help="hands per match")
    parser.add_argument("--players", default=",".join(PLAYERS),
                        help="what a seat may be, comma-separated (default: %(default)s)")
    args = parser.parse_args()
    total = Tally()
    start = time.process_time()
    for i in range(args.matches):
        tally = check_match(args.seed + i, args.hands, combination=i % COMBINATIONS,
                            players=args.players.split(","))
        for line in tally.disagreements:
            print("DISAGREEMENT", line, flush=True)
        total.add(tally)
    seconds = time.process_time() - start
    for name, times in sorted(total.seen.items()):
        print(f"{times:8d}  {name}")
    print(json.dumps({"matches": total.matches, "hands": total.hands,
                      "decisions": total.decisions,
                      "disagreements": len(total.disagreements),
                      "cpu_seconds": round(seconds, 1)}))


if __name__ == "__main__":
    main()
