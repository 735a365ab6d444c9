"""Compare variants of the strong bot against two greedy bots on the same duplicate deals.

    python bench/bots.py --hands 6000 --jobs 2 --set call_min_win=0.5 --set feed_cost=6

Each ``--set`` overrides one ``StrongParams`` field; the variant plays as ``strong*`` in the
arena (worker processes are forked, so the registered variant reaches them).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from tongits.client.arena import ArenaConfig, Progress, run_arena
from tongits.engine.policies import POLICIES, Policy, StrongParams, StrongPolicy


def variant(overrides: list[str]) -> StrongParams:
    kinds = {f.name: f.type for f in dataclasses.fields(StrongParams)}
    values: dict[str, Any] = {}
    for item in overrides:
        key, _, raw = item.partition("=")
        if key not in kinds:
            raise SystemExit(f"unknown parameter {key!r}; known: {', '.join(kinds)}")
        values[key] = json.loads(raw)
    return dataclasses.replace(StrongParams(), **values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=6000)
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--against", default="greedy,greedy")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    params = variant(args.set)

    def make(seed: int | str | None) -> Policy:
        return StrongPolicy(seed, params)

    POLICIES["strong*"] = make
    bots = ("strong*", *args.against.split(","))
    config = ArenaConfig(bots, args.seed)
    bar = Progress(-(-args.hands // 3))
    result = run_arena(config, args.hands, jobs=args.jobs, progress=bar.update)
    print(" ".join(args.set) or "defaults")
    print(result.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
