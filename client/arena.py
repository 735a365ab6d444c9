"""``tongits arena``: bots play each other in-process on duplicate deals; a standings table.

**Duplicate deals.** Deal ``i`` uses the deck ``deck_for(seed, i)`` and the dealer ``i % 3`` (so
the dealer rotates too). Each deal is played three times, once per *seat rotation*: in rotation
``r`` the bot given ``j``-th to ``--bots`` sits in seat ``(j + r) % 3``. Every bot therefore
plays every deal from every seat, with the same cards, against the same opponents in the same
turn order (rotations, not all six permutations: with ``a,b,b`` the other three permutations only
swap the two identical bots). ``--hands N`` is rounded up to a multiple of 3: ``ceil(N / 3)``
deals.

**Statistics.** Each entry of the standings is one position of ``--bots`` over all rotations.
Chips per hand is the mean of the per-deal means (three hands each), and its 95 % confidence
interval is ``mean ± 1.96 · sd / sqrt(deals)`` over deals: deals are independent, the three
rotations of a deal are not. The hands are independent of each other, so ``--jobs N`` splits the
deals between processes and gives exactly the standings of ``--jobs 1`` (except the timings).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tongits.engine import End, Hand, Options, RecordError, deck_for, hand_record, seat_view
from tongits.engine.policies import POLICIES, Policy, get_policy

ROTATIONS = 3
KINDS = ("tongits", "call", "stock")


@dataclass(slots=True)
class BotTally:
    """One ``--bots`` position's totals over some deals."""

    hands: int = 0
    chips: int = 0
    wins: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    count_sum: int = 0
    calls: int = 0
    calls_won: int = 0
    challenges: int = 0
    challenges_won: int = 0
    burned: int = 0
    decisions: int = 0
    seconds: float = 0.0

    def merge(self, other: BotTally) -> None:
        self.hands += other.hands
        self.chips += other.chips
        for kind in KINDS:
            self.wins[kind] += other.wins[kind]
        self.count_sum += other.count_sum
        self.calls += other.calls
        self.calls_won += other.calls_won
        self.challenges += other.challenges
        self.challenges_won += other.challenges_won
        self.burned += other.burned
        self.decisions += other.decisions
        self.seconds += other.seconds


@dataclass(slots=True)
class DealResult:
    """The three rotations of one deal: per position, its tally (its chips are the deal's)."""

    index: int
    tallies: list[BotTally]
    voids: int = 0


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    bots: tuple[str, ...]
    seed: int | str
    options: Options = field(default_factory=Options)
    record: str | None = None


def play_hand(
    deck: Sequence[Any], dealer: int, policies: Sequence[Policy], options: Options | None = None
) -> tuple[Hand, list[int], list[float]]:
    """Play one hand to its end, ``policies[s]`` deciding for seat ``s`` from its view alone.

    Returns the finished hand and, per seat, the number of decisions and seconds spent in them.
    A move outside the view's legal moves raises ``IllegalMove`` (from ``Hand.apply``)."""
    hand = Hand(deck, dealer, options)
    decisions = [0, 0, 0]
    seconds = [0.0, 0.0, 0.0]
    clock = time.perf_counter
    while not hand.over:
        seat = hand.to_act
        view = seat_view(hand, seat)
        start = clock()
        move = policies[seat](view)
        seconds[seat] += clock() - start
        decisions[seat] += 1
        hand.apply(seat, move)
    return hand, decisions, seconds


def seat_of(position: int, rotation: int) -> int:
    """The seat of the bot given ``position``-th to ``--bots`` in rotation ``rotation``."""
    return (position + rotation) % 3


def play_deal(config: ArenaConfig, index: int) -> DealResult:
    """Play deal ``index`` in every seat rotation."""
    deck = deck_for(config.seed, index)
    dealer = index % 3
    tallies = [BotTally() for _ in config.bots]
    voids = 0
    for rotation in range(ROTATIONS):
        by_seat = {
            seat_of(position, rotation): get_policy(
                name, f"{config.seed}/{index}/{rotation}/{position}"
            )
            for position, name in enumerate(config.bots)
        }
        policies = [by_seat[seat] for seat in range(3)]
        hand, decisions, seconds = play_hand(deck, dealer, policies, config.options)
        result = hand.result
        assert result is not None
        if result.end is End.VOID:
            voids += 1
        for position, tally in enumerate(tallies):
            seat = seat_of(position, rotation)
            tally.hands += 1
            tally.chips += result.chips[seat]
            tally.count_sum += result.counts[seat]
            tally.decisions += decisions[seat]
            tally.seconds += seconds[seat]
            if seat in result.burned:
                tally.burned += 1
            if result.winner == seat and result.end is not End.VOID:
                tally.wins[result.end.value] += 1
            if result.end is End.CALL:
                if hand.caller == seat:
                    tally.calls += 1
                    tally.calls_won += result.winner == seat
                if seat in result.challengers:
                    tally.challenges += 1
                    tally.challenges_won += result.winner == seat
        if config.record is not None:
            path = Path(config.record) / f"deal{index:06d}-rot{rotation}.json"
            path.write_text(json.dumps(hand_record(hand)) + "\n", encoding="utf-8")
    return DealResult(index, tallies, voids)


def _play_chunk(args: tuple[ArenaConfig, int, int]) -> list[DealResult]:
    config, start, stop = args
    return [play_deal(config, i) for i in range(start, stop)]


@dataclass(frozen=True, slots=True)
class BotStanding:
    name: str
    tally: BotTally
    chips_per_hand: float
    ci95: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        t = self.tally
        return {
            "name": self.name,
            "hands": t.hands,
            "chips_per_hand": round(self.chips_per_hand, 4),
            "ci95": [round(self.ci95[0], 4), round(self.ci95[1], 4)],
            "wins": dict(t.wins),
            "avg_count": round(t.count_sum / t.hands, 3) if t.hands else 0.0,
            "calls": t.calls,
            "calls_won": t.calls_won,
            "challenges": t.challenges,
            "challenges_won": t.challenges_won,
            "burned_rate": round(t.burned / t.hands, 4) if t.hands else 0.0,
            "decisions": t.decisions,
            "ms_per_decision": round(1000 * t.seconds / t.decisions, 3) if t.decisions else 0.0,
        }


@dataclass(frozen=True, slots=True)
class Standings:
    hands: int
    deals: int
    seed: int | str
    voids: int
    bots: tuple[BotStanding, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "hands": self.hands,
            "deals": self.deals,
            "rotations": ROTATIONS,
            "seed": self.seed,
            "voids": self.voids,
            "bots": [b.to_dict() for b in self.bots],
        }

    def table(self) -> str:
        head = (
            f"{'bot':<12}{'hands':>7}{'tongits':>8}{'call':>6}{'stock':>6}"
            f"{'chips/hand':>11}{'95% CI':>18}{'avg cnt':>8}{'calls':>6}{'won':>6}"
            f"{'burned':>7}{'ms/dec':>8}"
        )
        lines = [
            f"{self.hands} hands: {self.deals} deals x {ROTATIONS} seat rotations, "
            f"seed {self.seed}",
            head,
        ]
        for position, b in enumerate(self.bots):
            t = b.tally
            d = b.to_dict()
            ci = f"[{b.ci95[0]:+.3f}, {b.ci95[1]:+.3f}]"
            lines.append(
                f"{f'{position + 1}. {b.name}':<12}{t.hands:>7}{t.wins['tongits']:>8}"
                f"{t.wins['call']:>6}{t.wins['stock']:>6}{b.chips_per_hand:>+11.3f}{ci:>18}"
                f"{d['avg_count']:>8.1f}{t.calls:>6}{t.calls_won:>6}"
                f"{100 * d['burned_rate']:>6.1f}%{d['ms_per_decision']:>8.2f}"
            )
        if self.voids:
            lines.append(f"{self.voids} void hands")
        return "\n".join(lines)


def standings(config: ArenaConfig, deals: Sequence[DealResult]) -> Standings:
    """Aggregate deal results (in deal order) into standings."""
    ordered = sorted(deals, key=lambda d: d.index)
    n = len(ordered)
    out = []
    for position, name in enumerate(config.bots):
        total = BotTally()
        per_deal = []
        for deal in ordered:
            tally = deal.tallies[position]
            total.merge(tally)
            per_deal.append(tally.chips / tally.hands)
        mean = sum(per_deal) / n if n else 0.0
        var = sum((x - mean) ** 2 for x in per_deal) / (n - 1) if n > 1 else 0.0
        half = 1.96 * math.sqrt(var / n) if n else 0.0
        out.append(BotStanding(name, total, mean, (mean - half, mean + half)))
    return Standings(
        hands=n * ROTATIONS,
        deals=n,
        seed=config.seed,
        voids=sum(d.voids for d in ordered),
        bots=tuple(out),
    )


class Progress:
    """A one-line progress bar on a stream, redrawn at most every 0.2 s."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.start = time.monotonic()
        self.shown = 0.0

    def update(self, done: int) -> None:
        now = time.monotonic()
        if done < self.total and now - self.shown < 0.2:
            return
        self.shown = now
        frac = done / self.total if self.total else 1.0
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        self.stream.write(
            f"\r[{bar}] {100 * frac:5.1f}% {done * ROTATIONS}/{self.total * ROTATIONS} hands "
            f"{elapsed:6.1f}s eta {eta:6.1f}s"
        )
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def run_arena(
    config: ArenaConfig,
    hands: int,
    *,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Standings:
    """Play ``ceil(hands / 3)`` deals in every rotation and return the standings.

    ``progress(deals_done)`` is called as deals finish."""
    if len(config.bots) != 3:
        raise ValueError(f"three bots are needed, not {len(config.bots)}")
    for name in config.bots:
        if name not in POLICIES:
            raise ValueError(f"unknown bot {name!r}; known: {', '.join(sorted(POLICIES))}")
    if config.record is not None:
        Path(config.record).mkdir(parents=True, exist_ok=True)
    n_deals = -(-hands // ROTATIONS)
    results: list[DealResult] = []
    if jobs <= 1:
        for i in range(n_deals):
            results.append(play_deal(config, i))
            if progress:
                progress(i + 1)
    else:
        size = max(1, min(50, n_deals // (jobs * 8)))
        chunks = [(config, a, min(a + size, n_deals)) for a in range(0, n_deals, size)]
        with multiprocessing.get_context().Pool(jobs) as pool:
            for chunk in pool.imap_unordered(_play_chunk, chunks):
                results.extend(chunk)
                if progress:
                    progress(len(results))
    return standings(config, results)


def run(
    bots: str,
    *,
    hands: int,
    seed: str,
    jobs: int = 1,
    record: str | None = None,
    as_json: bool = False,
    options: str | None = None,
) -> int:
    """The ``tongits arena`` command: progress on stderr, the table (or one JSON line) on stdout."""
    names = tuple(b.strip() for b in bots.split(",") if b.strip())
    try:
        table_options = Options.from_dict(json.loads(options)) if options else Options()
    except (ValueError, RecordError) as exc:
        print(f"tongits arena: bad --options: {exc}", file=sys.stderr)
        return 2
    config = ArenaConfig(
        names, int(seed) if seed.lstrip("-").isdigit() else seed, table_options, record
    )
    n_deals = -(-hands // ROTATIONS)
    bar = Progress(n_deals)
    try:
        result = run_arena(config, hands, jobs=jobs, progress=bar.update)
    except ValueError as exc:
        print(f"tongits arena: {exc}", file=sys.stderr)
        return 2
    if record is not None:
        meta = {
            "bots": list(names),
            "seed": config.seed,
            "seats": {f"rot{r}": [names[(s - r) % 3] for s in range(3)] for r in range(ROTATIONS)},
        }
        (Path(record) / "arena.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
    if as_json:
        print(json.dumps(result.to_dict()))
    else:
        print(result.table())
    return 0
