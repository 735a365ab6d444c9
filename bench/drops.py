"""Drop seats at every kind of moment on many tables at once; count tables that froze.

Issue #10.1: a seat whose connection closed must be noticed (``away``) within one second
whatever its table was doing, then stood in for after the grace period, then given back to
its token. Each round runs ``--tables`` tables at once on one ``tongits-server`` (a child
process on loopback; the players in this one), cycling through the moments of
``tests/drop_support.py``. A table that never sees ``away``, ``stand_in`` and ``back`` is
frozen; one whose ``away`` came more than a second after the drop is late.

How long the server took to tell of the drop is read by an observer, a spectator of every
table in a third process that only reads (``notice``). The players read the same message later
(``seen``): their process plays every table, and on a loaded machine it lags; the difference
is the players' lag, not the server's. Both are printed.

    python bench/drops.py --rounds 70 --tables 30        # 2,100 drops

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import Counter
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from drop_support import (  # noqa: E402
    MOMENTS,
    DropOutcome,
    drop_round,
    observer_process,
    server_process,
)


async def run(rounds: int, tables: int, grace: float) -> dict[str, object]:
    outcomes: list[DropOutcome] = []
    with server_process(grace) as port:
        async with observer_process(port) as observer:
            for number in range(rounds):
                moments = tuple(MOMENTS[i % len(MOMENTS)] for i in range(tables))
                got = await drop_round(port, moments, seconds_per_table=60.0, observer=observer)
                outcomes += got
                late = sum(1 for o in got if not o.ok(1.0))
                print(f"round {number + 1}: {len(got)} drops, {late} frozen or noticed after "
                      f"1 s; slowest notice {max(o.notice for o in got):.3f} s, seen "
                      f"{max(o.seen for o in got):.3f} s", flush=True)
    bad = [o for o in outcomes if not o.ok(1.0)]
    for outcome in bad[:10]:
        print("  ", outcome)
    return {
        "drops": len(outcomes),
        "frozen": sum(1 for o in outcomes if o.frozen),
        "late_notice": sum(1 for o in outcomes if not o.frozen and o.notice > 1.0),
        "late_seen": sum(1 for o in outcomes if not o.frozen and o.seen > 1.0),
        "by_moment": dict(Counter(o.moment for o in bad)),
        **_spread("notice", [o.notice for o in outcomes if not o.frozen]),
        **_spread("seen", [o.seen for o in outcomes if not o.frozen]),
        "watched": sum(1 for o in outcomes if o.watched_away < math.inf),
    }


def _spread(name: str, values: list[float]) -> dict[str, float | None]:
    """Median, 99th percentile and maximum of ``values``, in seconds."""
    if not values:
        return {f"{name}_p50_s": None, f"{name}_p99_s": None, f"{name}_max_s": None}
    values = sorted(values)
    return {f"{name}_p50_s": round(statistics.median(values), 4),
            f"{name}_p99_s": round(values[int(0.99 * (len(values) - 1))], 4),
            f"{name}_max_s": round(values[-1], 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=70)
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--grace", type=float, default=0.5)
    args = parser.parse_args()
    print(json.dumps(trio.run(run, args.rounds, args.tables, args.grace)))


if __name__ == "__main__":
    main()
