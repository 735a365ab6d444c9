"""The arena's tallies and standings: what a bot author reads after a run.

A run is split into *chunks* of consecutive deals (one per worker task). A chunk returns a
``ChunkResult``: per ``--bots`` position its ``BotTally`` (integer sums, a latency histogram)
and, per deal, each position's chips summed over the deal's seat rotations. Integer sums do not
depend on the order chunks finish in, and every float of the standings is computed once, here,
from the per-deal chips in deal order: so ``--jobs N`` and ``--cluster`` give exactly the
standings of ``--jobs 1``, timings aside.

**Intervals.** Deals are independent; the rotations of one deal are not. Chips per hand is the
mean over deals of the deal's mean, with the 95 % interval ``mean ± 1.96 · sd / sqrt(deals)``.
The head-to-head difference of two positions is the same statistic over the per-deal
*difference* of their chips: both played the same cards, so the deal's luck cancels and the
interval is much narrower than the two separate intervals suggest.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tongits.engine import End, Hand

ROTATIONS = 3
KINDS = ("tongits", "call", "stock")
#: Latency histogram buckets per doubling of the time (a bucket spans about 9 %).
_BUCKETS_PER_OCTAVE = 8


def latency_bucket(seconds: float) -> int:
    """The histogram bucket of one decision's duration (bucket 0 holds everything ≤ 1 µs)."""
    micros = seconds * 1e6
    return max(0, math.floor(math.log2(micros) * _BUCKETS_PER_OCTAVE)) if micros > 1 else 0


def bucket_ms(bucket: int) -> float:
    """The upper edge of a bucket in milliseconds (a percentile is quoted as this edge)."""
    return 2 ** ((bucket + 1) / _BUCKETS_PER_OCTAVE) / 1000


@dataclass(slots=True)
class BotTally:
    """One ``--bots`` position's totals over some deals.

    ``decisions``/``seconds``/``latency`` count the bot's own decisions only; a stand-in that
    plays for an external bot (after a crash, a timeout or an illegal move) is counted in
    ``stand_in_hands``, and its chips stay the position's."""

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
    max_seconds: float = 0.0
    latency: dict[int, int] = field(default_factory=dict)
    timeouts: int = 0
    illegal: int = 0
    crashes: int = 0
    stand_in_hands: int = 0

    def decided(self, seconds: float) -> None:
        """Count one decision that took ``seconds``."""
        self.decisions += 1
        self.seconds += seconds
        self.max_seconds = max(self.max_seconds, seconds)
        bucket = latency_bucket(seconds)
        self.latency[bucket] = self.latency.get(bucket, 0) + 1

    def played(self, hand: Hand, seat: int) -> None:
        """Count one finished hand in which this position sat in ``seat``."""
        result = hand.result
        assert result is not None
        self.hands += 1
        self.chips += result.chips[seat]
        self.count_sum += result.counts[seat]
        if seat in result.burned:
            self.burned += 1
        if result.winner == seat and result.end is not End.VOID:
            self.wins[result.end.value] += 1
        if result.end is End.CALL:
            if hand.caller == seat:
                self.calls += 1
                self.calls_won += result.winner == seat
            if seat in result.challengers:
                self.challenges += 1
                self.challenges_won += result.winner == seat

    def merge(self, other: BotTally) -> None:
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for kind in KINDS:
            self.wins[kind] += other.wins[kind]
        self.max_seconds = max(self.max_seconds, other.max_seconds)
        for bucket, n in other.latency.items():
            self.latency[bucket] = self.latency.get(bucket, 0) + n

    def percentile_ms(self, q: float) -> float:
        """The ``q`` quantile of the decision times, in ms, to the histogram's ~9 %."""
        if not self.decisions:
            return 0.0
        rank = q * self.decisions
        seen = 0
        for bucket in sorted(self.latency):
            seen += self.latency[bucket]
            if seen >= rank:
                return min(bucket_ms(bucket), 1000 * self.max_seconds)
        return 1000 * self.max_seconds


_SUMMED = (
    "hands", "chips", "count_sum", "calls", "calls_won", "challenges", "challenges_won",
    "burned", "decisions", "seconds", "timeouts", "illegal", "crashes", "stand_in_hands",
)


@dataclass(slots=True)
class ChunkResult:
    """Deals ``start`` to ``stop - 1``: per position its tally; per deal, per position, the
    chips over the deal's rotations. ``notes``: what went wrong with external bots, in words."""

    start: int
    stop: int
    tallies: list[BotTally]
    deal_chips: list[tuple[int, ...]]
    voids: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean with its 95 % interval."""

    mean: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Interval:
        n = len(values)
        mean = sum(values) / n if n else 0.0
        var = sum((x - mean) ** 2 for x in values) / (n - 1) if n > 1 else 0.0
        half = 1.96 * math.sqrt(var / n) if n else 0.0
        return cls(mean, mean - half, mean + half)

    def to_list(self) -> list[float]:
        return [round(self.low, 4), round(self.high, 4)]


@dataclass(frozen=True, slots=True)
class BotStanding:
    name: str
    tally: BotTally
    chips: Interval

    @property
    def chips_per_hand(self) -> float:
        return self.chips.mean

    @property
    def ci95(self) -> tuple[float, float]:
        return self.chips.low, self.chips.high

    def to_dict(self) -> dict[str, Any]:
        t = self.tally
        return {
            "name": self.name,
            "hands": t.hands,
            "chips_per_hand": round(self.chips.mean, 4),
            "ci95": self.chips.to_list(),
            "wins": dict(t.wins),
            "avg_count": round(t.count_sum / t.hands, 3) if t.hands else 0.0,
            "calls": t.calls,
            "calls_won": t.calls_won,
            "challenges": t.challenges,
            "challenges_won": t.challenges_won,
            "burned_rate": round(t.burned / t.hands, 4) if t.hands else 0.0,
            "decisions": t.decisions,
            "ms_per_decision": round(1000 * t.seconds / t.decisions, 3) if t.decisions else 0.0,
            "ms": {
                "p50": round(t.percentile_ms(0.5), 3),
                "p99": round(t.percentile_ms(0.99), 3),
                "max": round(1000 * t.max_seconds, 3),
            },
            "timeouts": t.timeouts,
            "illegal_moves": t.illegal,
            "crashes": t.crashes,
            "stand_in_hands": t.stand_in_hands,
        }


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Position ``a`` minus position ``b`` in chips per hand, paired over the same deals."""

    a: int
    b: int
    diff: Interval

    def to_dict(self, names: Sequence[str]) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "names": [names[self.a], names[self.b]],
            "chips_per_hand": round(self.diff.mean, 4),
            "ci95": self.diff.to_list(),
        }


@dataclass(frozen=True, slots=True)
class Standings:
    hands: int
    deals: int
    seed: int | str
    voids: int
    bots: tuple[BotStanding, ...]
    head_to_head: tuple[HeadToHead, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        names = [b.name for b in self.bots]
        return {
            "hands": self.hands,
            "deals": self.deals,
            "rotations": ROTATIONS,
            "seed": self.seed,
            "voids": self.voids,
            "bots": [b.to_dict() for b in self.bots],
            "head_to_head": [h.to_dict(names) for h in self.head_to_head],
            "notes": list(self.notes),
        }

    def table(self) -> str:
        head = (
            f"{'bot':<22}{'hands':>7}{'tongits':>8}{'call':>6}{'stock':>6}"
            f"{'chips/hand':>11}{'95% CI':>18}{'avg cnt':>8}{'calls':>6}{'won':>6}"
            f"{'burned':>7}"
        )
        lines = [
            f"{self.hands} hands: {self.deals} deals x {ROTATIONS} seat rotations, "
            f"seed {self.seed}",
            head,
        ]
        for position, b in enumerate(self.bots):
            t, d = b.tally, b.to_dict()
            ci = f"[{b.chips.low:+.3f}, {b.chips.high:+.3f}]"
            lines.append(
                f"{_label(position, b.name):<22}{t.hands:>7}{t.wins['tongits']:>8}"
                f"{t.wins['call']:>6}{t.wins['stock']:>6}{b.chips.mean:>+11.3f}{ci:>18}"
                f"{d['avg_count']:>8.1f}{t.calls:>6}{t.calls_won:>6}"
                f"{100 * d['burned_rate']:>6.1f}%"
            )
        lines.append("")
        lines.append(
            f"{'bot':<22}{'decisions':>10}{'ms mean':>9}{'p50':>8}{'p99':>8}{'max':>9}"
            f"{'timeouts':>9}{'illegal':>8}{'crashes':>8}{'stand-in':>9}"
        )
        for position, b in enumerate(self.bots):
            t, d = b.tally, b.to_dict()
            ms = d["ms"]
            lines.append(
                f"{_label(position, b.name):<22}{t.decisions:>10}{d['ms_per_decision']:>9.2f}"
                f"{ms['p50']:>8.2f}{ms['p99']:>8.2f}{ms['max']:>9.2f}{t.timeouts:>9}"
                f"{t.illegal:>8}{t.crashes:>8}{t.stand_in_hands:>9}"
            )
        if self.head_to_head:
            lines.append("")
            lines.append("head to head, chips per hand over the same deals:")
            for h in self.head_to_head:
                first, second = self.bots[h.a].name, self.bots[h.b].name
                lines.append(
                    f"  {_label(h.a, first)} - {_label(h.b, second)}: {h.diff.mean:+.3f} "
                    f"[{h.diff.low:+.3f}, {h.diff.high:+.3f}]"
                )
        if self.voids:
            lines.append(f"{self.voids} void hands")
        lines.extend(self.notes)
        return "\n".join(lines)


def _label(position: int, name: str) -> str:
    label = f"{position + 1}. {name}"
    return label if len(label) <= 21 else label[:20] + "…"


class IncompleteRun(RuntimeError):
    """Chunks that do not cover every deal exactly once: a deal was lost or played twice."""


def standings(
    names: Sequence[str], seed: int | str, chunks: Iterable[ChunkResult], deals: int
) -> Standings:
    """Aggregate chunk results (in any order) into standings over deals ``0 .. deals - 1``."""
    ordered = sorted(chunks, key=lambda c: c.start)
    covered = [(c.start, c.stop) for c in ordered]
    expected = 0
    for start, stop in covered:
        if start != expected:
            raise IncompleteRun(f"deals {expected} to {start - 1} are missing")
        expected = stop
    if expected != deals:
        raise IncompleteRun(f"{expected} of {deals} deals were played")
    per_deal = [chips for chunk in ordered for chips in chunk.deal_chips]
    bots = []
    for position, name in enumerate(names):
        total = BotTally()
        for chunk in ordered:
            total.merge(chunk.tallies[position])
        interval = Interval.of([chips[position] / ROTATIONS for chips in per_deal])
        bots.append(BotStanding(name, total, interval))
    pairs = tuple(
        HeadToHead(a, b, Interval.of([(c[a] - c[b]) / ROTATIONS for c in per_deal]))
        for a in range(len(names))
        for b in range(a + 1, len(names))
    )
    return Standings(
        hands=deals * ROTATIONS,
        deals=deals,
        seed=seed,
        voids=sum(c.voids for c in ordered),
        bots=tuple(bots),
        head_to_head=pairs,
        notes=tuple(note for c in ordered for note in c.notes),
    )
