"""Bots on duplicate deals: variants of the strong bot, and the expert's cost and strength.

    python bench/bots.py --hands 6000 --jobs 2 --set call_min_win=0.5 --set feed_cost=6
    python bench/bots.py expert --budgets 20,40,80,160 --hands 600 --against strong,strong

Without a sub-command, each ``--set`` overrides one ``StrongParams`` field; the variant plays
as ``strong*`` against ``--against`` in the arena (worker processes are forked, so the
registered variant reaches them).

``expert`` prints, for each budget (rollouts per decision): decisions per second and the
median and 99th percentile of the time of one decision (CPU time of this process, so other
work on a shared machine does not inflate it; wall time beside it), then chips per hand with
its 95 % interval against ``--against`` over ``--hands`` duplicate-deal hands: the strength
curve. ``--timing-hands`` hands are played once, single-threaded, for the timings.

``explain`` says where the expert's chips against two ``strong`` come from. The expert plays
``strong``'s move unless its search overrules it, and both decide by the position alone, so each
hand is the hand three ``strong`` bots play on the same deck until the expert's first decision
that differs; the expert's chips less ``strong``'s in that seat, summed over every hand, are
exactly its arena result against two ``strong`` (the chips of a hand add up to zero). Each such
hand is summed by the kind of that first decision (``--log``: one JSON line each):

    python bench/bots.py --seed e1 --jobs 2 explain --hands 600 --log expert.jsonl

``--set`` gives the expert's parameters there and in ``expert`` (``budget=192``,
``inference.passed=0.3``).

``hint`` prints the same timings for the terminal client's whole ``hint`` (``engine.advice``:
the expert's decision and the rest of the turn it suggests, e.g. a meld then a discard) at
every turn of ``--timing-hands`` hands of strong bots where the seat has a choice.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import multiprocessing
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from tongits.client.arena import ArenaConfig, Progress, play_chunk, run_arena
from tongits.engine import Hand, deck_for, seat_view
from tongits.engine.advice import advise
from tongits.engine.policies import (
    POLICIES,
    ExpertParams,
    ExpertPolicy,
    Policy,
    StrongParams,
    StrongPolicy,
    get_policy,
)


def variant(overrides: list[str]) -> StrongParams:
    kinds = {f.name: f.type for f in dataclasses.fields(StrongParams)}
    values: dict[str, Any] = {}
    for item in overrides:
        key, _, raw = item.partition("=")
        if key not in kinds:
            raise SystemExit(f"unknown parameter {key!r}; known: {', '.join(kinds)}")
        values[key] = json.loads(raw)
    return dataclasses.replace(StrongParams(), **values)


def strong_variant(args: argparse.Namespace) -> int:
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


def expert_variant(overrides: list[str], budget: int | None = None) -> ExpertParams:
    """``ExpertParams`` with each ``NAME=VALUE`` of ``overrides`` (``inference.NAME`` for the
    inference's), and ``budget`` if given."""
    params = ExpertParams() if budget is None else ExpertParams(budget=budget)
    for item in overrides:
        key, _, raw = item.partition("=")
        head, _, tail = key.partition(".")
        target = params.inference if tail else params
        name = tail or head
        known = {f.name for f in dataclasses.fields(target)}
        if name not in known or (tail and head != "inference"):
            raise SystemExit(f"unknown expert parameter {key!r}")
        if tail:
            params = dataclasses.replace(
                params, inference=dataclasses.replace(params.inference, **{name: json.loads(raw)}))
        else:
            params = dataclasses.replace(params, **{name: json.loads(raw)})
    return params


def _play_on(hand: Hand, policies: list[Policy]) -> Hand:
    while not hand.over:
        seat = hand.to_act
        hand.apply(seat, policies[seat](seat_view(hand, seat)))
    return hand


class Expert:
    """Makes the expert that plays in a hand (``expert_divergences``): ``ExpertPolicy`` with
    ``params``, its worlds dealt from its view. A maker of another expert (bench/expert_bound.py's,
    whose worlds are the hand's true cards) is handed the hand it plays in."""

    def __init__(self, params: ExpertParams) -> None:
        self.params = params

    def __call__(self, hand: Hand) -> Policy:
        return ExpertPolicy(None, self.params)

    def __str__(self) -> str:
        return f"expert ({self.params})"


def expert_divergences(task: tuple[str, int, int, Expert]) -> list[dict[str, Any]]:
    """The hands of deals ``start..stop-1`` of ``seed`` (the expert in every seat against two
    ``strong``) where the expert's move differed from ``strong``'s: the first such decision,
    and the expert's chips with the expert playing on and with ``strong`` in its seat."""
    seed, start, stop, make = task
    strong = StrongPolicy()
    out: list[dict[str, Any]] = []
    for index in range(start, stop):
        deck, dealer = deck_for(seed, index), index % 3
        for seat in range(3):
            hand = Hand(deck, dealer)
            while not hand.over:
                mover = hand.to_act
                view = seat_view(hand, mover)
                move = strong(view)
                if mover == seat and len(view.legal) > 1:
                    mine = make(hand)(view)
                    if mine != move:
                        ruled, kept = hand.copy(), hand.copy()
                        policies: list[Policy] = [strong, strong, strong]
                        policies[seat] = make(ruled)
                        ruled.apply(mover, mine)
                        kept.apply(mover, move)
                        _play_on(ruled, policies)
                        _play_on(kept, [strong] * 3)
                        assert ruled.result is not None and kept.result is not None
                        caller = view.caller
                        out.append({
                            "deal": index, "seat": seat, "phase": view.phase.value,
                            "expert": str(mine), "strong": str(move), "count": view.count(),
                            "hand_cards": len(view.hand), "stock": view.stock,
                            "caller_count": None if caller is None else hand.count(caller),
                            "chips_expert": ruled.result.chips[seat],
                            "chips_strong": kept.result.chips[seat],
                            "end_expert": ruled.result.end.value,
                            "end_strong": kept.result.end.value,
                        })
                        break
                hand.apply(mover, move)
    return out


def _kind(entry: dict[str, Any]) -> str:
    """A divergence's kind: the phase and the two moves' actions (a discard's card class)."""
    mine, theirs = entry["expert"].split()[0], entry["strong"].split()[0]
    return f"{entry['phase']}: {mine} for {theirs}"


def explain_expert(args: argparse.Namespace) -> int:
    """Print where the expert's chips against two ``strong`` come from (``expert_divergences``)."""
    return explain(args, Expert(expert_variant(args.set, args.budget)))


def explain(args: argparse.Namespace, make: Expert) -> int:
    """``explain_expert`` for the expert ``make`` makes: ``args.seed``, ``args.hands``,
    ``args.jobs``, ``args.log``."""
    deals = -(-args.hands // 3)
    size = max(1, min(25, deals // (4 * args.jobs)))
    tasks = [(args.seed, a, min(a + size, deals), make) for a in range(0, deals, size)]
    per_deal = [0.0] * deals
    groups: dict[str, list[float]] = {}
    start = time.monotonic()
    with (args.log.open("w", encoding="utf-8") if args.log else nullcontext()) as log:
        pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
        results = pool.imap(expert_divergences, tasks) if pool else map(expert_divergences, tasks)
        for chunk in results:
            for entry in chunk:
                if log is not None:
                    log.write(json.dumps(entry) + "\n")
                gained = entry["chips_expert"] - entry["chips_strong"]
                per_deal[entry["deal"]] += gained / 3
                group = groups.setdefault(_kind(entry), [0, 0.0, 0.0])
                group[0] += 1
                group[1] += gained
                group[2] += gained * gained
        if pool:
            pool.close()
    mean = statistics.fmean(per_deal)
    half = 1.96 * statistics.stdev(per_deal) / math.sqrt(deals) if deals > 1 else 0.0
    print(f"{make} vs strongx2, seed {args.seed}, {3 * deals} hands: {mean:+.3f} "
          f"chips a hand [{mean - half:+.3f}, {mean + half:+.3f}] "
          f"({time.monotonic() - start:.0f} s); by its first move that differs from strong's:")
    print(f"  {'kind':<32}{'hands':>7}{'chips':>8}{'per hand':>10}{'±95%':>7}")
    for kind, (n, chips, squares) in sorted(groups.items(), key=lambda kv: kv[1][1]):
        var = max(0.0, squares / n - (chips / n) ** 2) if n > 1 else 0.0
        print(f"  {kind:<32}{n:>7}{chips:>+8.0f}{chips / n:>+10.2f}"
              f"{1.96 * math.sqrt(var / n):>7.2f}")
    return 0


def time_decisions(
    params: ExpertParams, hands: int, against: list[str]
) -> tuple[list[float], list[float]]:
    """CPU and wall seconds of each expert decision with more than one legal move."""
    cpu: list[float] = []
    wall: list[float] = []
    for i in range(hands):
        hand = Hand(deck_for("timing", i), i % 3)
        seat_of_expert = i % 3
        bots = [get_policy(against[(s - seat_of_expert) % 3 - 1], s) for s in range(3)]
        bots[seat_of_expert] = ExpertPolicy(i, params)
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            c0, w0 = time.process_time(), time.perf_counter()
            move = bots[seat](view)
            if seat == seat_of_expert and len(view.legal) > 1:
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
            hand.apply(seat, move)
    return cpu, wall


def hint_latency(args: argparse.Namespace) -> int:
    policy = ExpertPolicy(None, ExpertParams(budget=args.budget))
    bots = [get_policy("strong", s) for s in range(3)]
    cpu: list[float] = []
    wall: list[float] = []
    for i in range(args.timing_hands):
        hand = Hand(deck_for("hint", i), i % 3)
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            if len(view.legal) > 1:
                c0, w0 = time.process_time(), time.perf_counter()
                advise(view, policy)
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
            hand.apply(seat, bots[seat](view))
    print(f"hint at budget {args.budget}: {len(cpu)} hints over {args.timing_hands} hands; "
          f"CPU median {1000 * statistics.median(cpu):.0f} ms, p99 "
          f"{1000 * percentile(cpu, 0.99):.0f} ms; wall median "
          f"{1000 * statistics.median(wall):.0f} ms, p99 {1000 * percentile(wall, 0.99):.0f} ms")
    return 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def expert_curve(args: argparse.Namespace) -> int:
    against = args.against.split(",")
    print(f"expert vs {args.against}: {args.hands} duplicate-deal hands a budget, seed {args.seed}")
    print(f"{'budget':>7}{'dec/s':>8}{'median ms':>11}{'p99 ms':>8}{'wall med':>10}"
          f"{'chips/hand':>12}{'95% CI':>18}")
    for budget in (int(b) for b in args.budgets.split(",")):
        params = expert_variant(args.set, budget)
        cpu, wall = time_decisions(params, args.timing_hands, against)

        def make(seed: int | str | None, params: ExpertParams = params) -> Policy:
            return ExpertPolicy(seed, params)

        POLICIES["expert*"] = make
        chips, ci = float("nan"), (float("nan"), float("nan"))
        if args.hands:
            config = ArenaConfig(("expert*", *against), args.seed)
            result = run_arena(config, args.hands, jobs=args.jobs)
            chips, ci = result.bots[0].chips_per_hand, result.bots[0].ci95
        print(
            f"{budget:>7}{len(cpu) / sum(cpu):>8.1f}{1000 * statistics.median(cpu):>11.1f}"
            f"{1000 * percentile(cpu, 0.99):>8.1f}{1000 * statistics.median(wall):>10.1f}"
            f"{chips:>+12.3f}{f'[{ci[0]:+.3f}, {ci[1]:+.3f}]':>18}",
            flush=True,
        )
    return 0


def measure(args: argparse.Namespace) -> int:
    """Deals of ``tongits arena --bots BOTS --seed SEED`` played one by one, each deal's result
    appended to ``--log`` as one JSON line as soon as it is played (a long run can be read
    while it goes, and resumed: deals already in the log are skipped; ``--first`` and ``--stop``
    let processes share a run); then the standings of every deal in the log."""
    bots = tuple(args.bots.split(","))
    config = ArenaConfig(bots, args.seed)
    path = Path(args.log)
    done = {d["deal"] for d in read_log(path)} if path.exists() else set()
    n_deals = -(-args.hands // 3)
    with path.open("a", encoding="utf-8") as log:
        for index in range(args.first, min(args.stop or n_deals, n_deals)):
            if index in done:
                continue
            deal = play_chunk(config, index, index + 1)
            entry = {"deal": index, "chips": list(deal.deal_chips[0]),
                     "decisions": [t.decisions for t in deal.tallies],
                     "seconds": [round(t.seconds, 4) for t in deal.tallies]}
            log.write(json.dumps(entry) + "\n")
            log.flush()
    summarize(path, bots)
    return 0


def read_log(path: Path) -> list[dict[str, Any]]:
    """The deals of a ``measure`` log (a line cut short by a killed run is skipped)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def summarize(path: Path, bots: tuple[str, ...]) -> None:
    """Chips per hand and the 95 % interval over the deals of a ``measure`` log."""
    deals = read_log(path)
    print(f"{len(deals) * 3} hands ({len(deals)} deals x 3 rotations) in {path}")
    for position, name in enumerate(bots):
        per_deal = [d["chips"][position] / 3 for d in deals]
        mean = statistics.fmean(per_deal)
        half = 1.96 * statistics.stdev(per_deal) / math.sqrt(len(per_deal)) if len(deals) > 1 else 0
        decisions = sum(d["decisions"][position] for d in deals)
        seconds = sum(d["seconds"][position] for d in deals)
        print(f"  {position + 1}. {name:<8} {mean:+.3f} chips/hand, 95% CI "
              f"[{mean - half:+.3f}, {mean + half:+.3f}], {1000 * seconds / decisions:.1f} ms "
              "a decision (wall, all decisions)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=6000)
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--against", default="greedy,greedy")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    sub = parser.add_subparsers(dest="command")
    expert = sub.add_parser("expert", help="the expert's decisions/s and strength per budget")
    expert.add_argument("--budgets", default="20,40,80,160")
    expert.add_argument("--hands", type=int, default=600)
    expert.add_argument("--timing-hands", type=int, default=6)
    expert.add_argument("--against", default="strong,strong")
    hint = sub.add_parser("hint", help="the latency of the client's hint (the expert's advice)")
    hint.add_argument("--budget", type=int, default=ExpertParams().budget)
    hint.add_argument("--timing-hands", type=int, default=6)
    why = sub.add_parser("explain", help="where the expert's chips against strong come from")
    why.add_argument("--hands", type=int, default=600)
    why.add_argument("--budget", type=int)
    why.add_argument("--log", type=Path, help="each hand where the expert overruled strong")
    long_run = sub.add_parser("measure", help="a long arena run, logged deal by deal")
    long_run.add_argument("--bots", default="expert,strong,strong")
    long_run.add_argument("--hands", type=int, default=3000)
    long_run.add_argument("--log", required=True, metavar="FILE")
    long_run.add_argument("--first", type=int, default=0, help="start at this deal (a split run)")
    long_run.add_argument("--stop", type=int, help="stop before this deal (a split run)")
    args = parser.parse_args()
    if args.command == "expert":
        return expert_curve(args)
    if args.command == "explain":
        return explain_expert(args)
    if args.command == "hint":
        return hint_latency(args)
    if args.command == "measure":
        return measure(args)
    return strong_variant(args)


if __name__ == "__main__":
    sys.exit(main())
