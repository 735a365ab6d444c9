"""How far the expert's kind of search can get: its chips against two ``strong`` when its worlds
know more than its view does.

The expert deals the cards it cannot see many times over (its *worlds*) and plays each candidate
move forward in them. Here its worlds are dealt from the truth instead, everything else as it is
(the same number of worlds, rollouts, default move and guard):

* ``--know hands`` (a perfect opponent model): the other two seats' true hands and secret melds,
  the stock dealt from the true stock's cards in a random order;
* ``--know deal`` (perfect information): the true deal, stock order included (every world the
  same);
* ``--know none``: its worlds as they are (the baseline, as ``bench/bots.py explain``).

``--at`` names the decisions whose worlds know (the rest are dealt from the view as now):
``call`` (the start of a turn where it may call), ``pick`` (the start of a turn where it may not:
draw or pick up), ``meld`` (its play where a meld or a lay-off is legal), ``discard`` (its play
where only discards are), ``answer`` (answering a call); ``all`` for every one. Such an expert
only exists here: no policy a server or an arena can select sees the truth.

``run`` plays as ``bench/bots.py explain`` does (each hand three ``strong`` bots play until the
expert's first move that differs, then both branches to the end; the sum is the expert's arena
result against two ``strong`` on those deals) and logs each such hand; ``pair`` compares two logs
of the same seed and hands deal by deal (a hand where neither moved off ``strong``'s move counts
zero for both), with a 95 % interval over the per-deal means:

    python bench/expert_bound.py --seed e1 run --know deal --hands 1500 --log deal.jsonl
    python bench/expert_bound.py --seed e1 run --know none --hands 1500 --log none.jsonl
    python bench/expert_bound.py pair --hands 1500 none.jsonl deal.jsonl

A smoke check: ``python bench/expert_bound.py run --know deal --hands 6``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from pathlib import Path

from bots import Expert, expert_variant, explain
from tongits.engine import Action, Hand, Phase, SeatView
from tongits.engine.policies import ExpertParams, ExpertPolicy, Policy
from tongits.engine.policies.worlds import InferenceParams, WorldMaker

KINDS = ("call", "pick", "meld", "discard", "answer")
_MELDING = frozenset({Action.MELD, Action.SECRET, Action.SAPAW})


def kind_of(view: SeatView) -> str:
    """The kind of ``view``'s decision (one of ``KINDS``)."""
    if view.phase is Phase.ANSWER:
        return "answer"
    if view.phase is Phase.START:
        return "call" if any(m.action is Action.CALL for m in view.legal) else "pick"
    return "meld" if any(m.action in _MELDING for m in view.legal) else "discard"


class TrueWorlds(WorldMaker):
    """Worlds that are the hand ``truth`` as it is: every seat's cards and the secret melds',
    the stock in its true order (``stock_order``) or shuffled anew in each world."""

    def __init__(
        self, view: SeatView, params: InferenceParams, truth: Hand, stock_order: bool
    ) -> None:
        super().__init__(view, params)
        secret = {m.id: list(m.cards) for m in truth.melds}
        self.hands = [set(h) for h in truth.hands]
        self.stock = list(truth.stock)
        self.secrets = [secret[m.id] for m in view.melds if not m.cards]
        self.stock_order = stock_order

    def sample(self, rng: random.Random) -> Hand:
        stock = list(self.stock)
        if not self.stock_order:
            rng.shuffle(stock)
        return self.world(([set(h) for h in self.hands], stock, self.secrets))


class Knowing:
    """The expert's ``Worlds`` in the hand ``truth``: ``TrueWorlds`` at the decisions of the
    kinds ``at``, its own worlds elsewhere."""

    def __init__(self, truth: Hand, stock_order: bool, at: frozenset[str]) -> None:
        self.truth, self.stock_order, self.at = truth, stock_order, at

    def __call__(self, view: SeatView, params: InferenceParams) -> WorldMaker:
        if kind_of(view) in self.at:
            return TrueWorlds(view, params, self.truth, self.stock_order)
        return WorldMaker(view, params)


class Seer(Expert):
    """Makes the expert whose worlds know ``know`` (``hands`` or ``deal``) of the hand it plays
    in, at the decisions of the kinds ``at``."""

    def __init__(self, params: ExpertParams, know: str, at: frozenset[str]) -> None:
        super().__init__(params)
        self.know, self.at = know, at

    def __call__(self, hand: Hand) -> Policy:
        return ExpertPolicy(None, self.params, Knowing(hand, self.know == "deal", self.at))

    def __str__(self) -> str:
        return f"expert knowing the {self.know} at {','.join(sorted(self.at))} ({self.params})"


def run(args: argparse.Namespace) -> int:
    params = expert_variant(args.set, args.budget)
    at = frozenset(KINDS if args.at == "all" else args.at.split(","))
    if not at <= set(KINDS):
        raise SystemExit(f"--at takes all or some of {', '.join(KINDS)}")
    make = Expert(params) if args.know == "none" else Seer(params, args.know, at)
    return explain(args, make)


def per_deal(path: Path, deals: int) -> list[float]:
    """A ``run`` log's gain over ``strong`` deal by deal: the chips a hand, over the 3 seats."""
    gains = [0.0] * deals
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["deal"] < deals:
            gains[entry["deal"]] += (entry["chips_expert"] - entry["chips_strong"]) / 3
    return gains


def interval(values: list[float]) -> str:
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"


def pair(args: argparse.Namespace) -> int:
    deals = -(-args.hands // 3)
    base, other = per_deal(args.base, deals), per_deal(args.variant, deals)
    print(f"{3 * deals} hands: {args.base} {interval(base)} a hand against two strong, "
          f"{args.variant} {interval(other)}; paired gain "
          f"{interval([b - a for a, b in zip(base, other, strict=True)])}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", default="e1")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="an ExpertParams field (inference.NAME for the inference's)")
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("run", help="the expert knowing more, against two strong")
    play.add_argument("--know", choices=("none", "hands", "deal"), default="deal")
    play.add_argument("--at", default="all", help=f"all, or some of {','.join(KINDS)}")
    play.add_argument("--hands", type=int, default=1500)
    play.add_argument("--budget", type=int)
    play.add_argument("--log", type=Path, help="each hand where the expert overruled strong")
    both = sub.add_parser("pair", help="two run logs of the same deals, paired deal by deal")
    both.add_argument("--hands", type=int, default=1500)
    both.add_argument("base", type=Path)
    both.add_argument("variant", type=Path)
    args = parser.parse_args()
    return run(args) if args.command == "run" else pair(args)


if __name__ == "__main__":
    sys.exit(main())
