"""Drop seats at every kind of moment on many tables at once; count tables that froze.

Issue #10.1: a seat whose connection closed must be noticed (``away``) within one second
whatever its table was doing, then stood in for after the grace period, then given back to
its token. Each round runs ``--tables`` tables at once on one ``tongits-server`` (a child
process on loopback; the clients in this one), cycling through the moments of
``tests/drop_support.py``. A table that never sees ``away``, ``stand_in`` and ``back`` is
frozen; one that saw ``away`` more than a second after the drop is late (the time includes the
clients' own delay in reading it: with too many tables for this process they lag).

    python bench/drops.py --rounds 70 --tables 30        # 2,100 drops

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from drop_support import MOMENTS, DropOutcome, drop_round, server_process  # noqa: E402


async def run(rounds: int, tables: int, grace: float) -> dict[str, object]:
    outcomes: list[DropOutcome] = []
    with server_process(grace) as port:
        for number in range(rounds):
            moments = tuple(MOMENTS[i % len(MOMENTS)] for i in range(tables))
            got = await drop_round(port, moments, seconds_per_table=60.0)
            outcomes += got
            frozen = sum(1 for o in got if not o.ok(1.0))
            print(f"round {number + 1}: {len(got)} drops, {frozen} not noticed in 1 s or "
                  "not stood in for and given back", flush=True)
    notices = sorted(o.away - o.dropped_at for o in outcomes if o.away < float("inf"))
    bad = [o for o in outcomes if not o.ok(1.0)]
    for outcome in bad[:10]:
        print("  ", outcome)
    return {
        "drops": len(outcomes),
        "frozen": sum(1 for o in outcomes if o.errors or o.back == float("inf")),
        "frozen_or_late": len(bad),
        "by_moment": dict(Counter(o.moment for o in bad)),
        "notice_p50_s": round(statistics.median(notices), 4) if notices else None,
        "notice_max_s": round(notices[-1], 4) if notices else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=70)
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--grace", type=float, default=0.5)
    args = parser.parse_args()
    print(json.dumps(trio.run(run, args.rounds, args.tables, args.grace)))


if __name__ == "__main__":
    main()
