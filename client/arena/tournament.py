"""``tongits arena --tournament a,b,c,d,...``: every triple of the entrants on duplicate deals,
and one rating per entrant.

**Play.** Each triple (``itertools.combinations`` of the entrants, in the order given) is an
ordinary arena run (``runner.py``): the same ``--hands``, the same ``--seed`` and so the
same deals for every triple, each deal in its three seat rotations, in-process, with ``cmd:``
bots on the arena's loopback server, on ``--jobs`` or ``--cluster`` as a single run would be.
With ``--record DIR`` triple ``k`` writes its hand records and its ``arena.json`` into
``DIR/tripleK/``, and ``DIR/tournament.json`` names the entrants of each triple.

**Rating.** One *match* is one deal of one triple: its three bots ranked by their chips summed
over the deal's rotations (equal chips are a tie). The matches are rated with openskill's
Plackett-Luce model (Weng-Lin, mu 25, sigma 25/3 to start), taken in a fixed interleaved order
(deal 0 of every triple, then deal 1, ...) so that no triple is rated entirely before another.
openskill is an online update, so its sigma is a belief, not a sampling interval: the 95 %
interval printed is a **bootstrap** one, in the manner of Ordo, the 2.5 and 97.5 percentiles of
each entrant's mu over ``BOOTSTRAP`` re-ratings, each from a resample (with replacement) of every
triple's deals. A bot ranked above another by the point rating but inside its interval has not
been shown to be stronger.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from tongits.engine import Options

from .play import DEFAULT_TIMER, ArenaConfig
from .runner import (
    ArenaCommand,
    Progress,
    play_deals,
    print_result,
    read_inputs,
    seed_value,
    write_meta,
)
from .stats import ROTATIONS, Standings, standings

#: Re-ratings from resampled deals behind each interval.
BOOTSTRAP = 100


@dataclass(frozen=True, slots=True)
class DealMatch:
    """One deal of one triple: ``entrants`` are indices into the tournament's entrants,
    ``chips[p]`` what ``entrants[p]`` won over the deal's rotations."""

    entrants: tuple[int, int, int]
    chips: tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Rating:
    """One entrant's result: openskill mu over every match, its bootstrap 95 % interval, the
    matches (deals) it played, and its chips per hand over them."""

    name: str
    mu: float
    low: float
    high: float
    matches: int
    chips_per_hand: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "mu": round(self.mu, 3),
            "ci95": [round(self.low, 3), round(self.high, 3)],
            "matches": self.matches,
            "chips_per_hand": round(self.chips_per_hand, 4),
        }


@dataclass(frozen=True, slots=True)
class Tournament:
    """The ratings, best first, and each triple's own arena standings."""

    entrants: tuple[str, ...]
    ratings: tuple[Rating, ...]
    triples: tuple[Standings, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "entrants": list(self.entrants),
            "rating": "openskill Plackett-Luce, bootstrap 95% intervals",
            "ratings": [r.to_dict() for r in self.ratings],
            "triples": [t.to_dict() for t in self.triples],
        }

    def table(self) -> str:
        deals = self.triples[0].deals if self.triples else 0
        lines = [
            f"{len(self.triples)} triples x {deals} deals x {ROTATIONS} seat rotations, "
            f"seed {self.triples[0].seed if self.triples else ''}; "
            f"openskill Plackett-Luce over deals, {BOOTSTRAP} bootstrap resamples",
            f"{'rank':<5}{'bot':<24}{'mu':>8}{'95% interval':>20}{'deals':>7}{'chips/hand':>12}",
        ]
        for rank, r in enumerate(self.ratings, 1):
            interval = f"[{r.low:.2f}, {r.high:.2f}]"
            name = r.name if len(r.name) <= 23 else r.name[:22] + "…"
            lines.append(
                f"{rank:<5}{name:<24}{r.mu:>8.2f}{interval:>20}{r.matches:>7}"
                f"{r.chips_per_hand:>+12.3f}"
            )
        lines.append("")
        lines.append("per triple, chips per hand:")
        for t in self.triples:
            cells = ", ".join(f"{b.name} {b.chips.mean:+.3f}" for b in t.bots)
            lines.append(f"  {cells}")
        return "\n".join(lines)


def triples_of(count: int) -> list[tuple[int, int, int]]:
    """Every triple of ``count`` entrants, as index triples in the entrants' order."""
    return [(a, b, c) for a, b, c in itertools.combinations(range(count), 3)]


def interleave(per_triple: Sequence[Sequence[DealMatch]]) -> list[DealMatch]:
    """Deal 0 of every triple, then deal 1, ...: the order the matches are rated in."""
    return [
        m for row in itertools.zip_longest(*per_triple) for m in row if m is not None
    ]


def rate(count: int, matches: Sequence[DealMatch]) -> list[float]:
    """Each entrant's openskill Plackett-Luce mu after the matches, in order."""
    model = PlackettLuce()
    players = [model.rating() for _ in range(count)]
    for match in matches:
        teams = [[players[e]] for e in match.entrants]
        rated = model.rate(teams, scores=list(match.chips))
        for e, team in zip(match.entrants, rated, strict=True):
            players[e] = team[0]
    return [p.mu for p in players]


def ratings(
    names: Sequence[str], per_triple: Sequence[Sequence[DealMatch]], *, seed: int | str = 0,
    resamples: int = BOOTSTRAP,
) -> list[Rating]:
    """The entrants' ratings, best first: mu from the matches as played, the interval from
    ``resamples`` re-ratings of resampled deals (``seed`` makes them reproducible)."""
    count = len(names)
    point = rate(count, interleave(per_triple))
    rng = random.Random(f"tournament/{seed}")
    samples: list[list[float]] = [[] for _ in range(count)]
    for _ in range(resamples):
        resampled = [[rng.choice(ms) for _ in ms] if ms else [] for ms in per_triple]
        for e, mu in enumerate(rate(count, interleave(resampled))):
            samples[e].append(mu)
    played = [0] * count
    chips = [0] * count
    for ms in per_triple:
        for m in ms:
            for e, c in zip(m.entrants, m.chips, strict=True):
                played[e] += 1
                chips[e] += c
    result = []
    for e, name in enumerate(names):
        ordered = sorted(samples[e]) or [point[e]]
        low = ordered[int(0.025 * (len(ordered) - 1))]
        high = ordered[int(round(0.975 * (len(ordered) - 1)))]
        per_hand = chips[e] / (played[e] * ROTATIONS) if played[e] else 0.0
        result.append(Rating(name, point[e], low, high, played[e], per_hand))
    return sorted(result, key=lambda r: -r.mu)


def run_tournament(
    entrants: Sequence[str],
    hands: int,
    *,
    seed: int | str = 0,
    options: Options | None = None,
    record: str | None = None,
    timer: float = DEFAULT_TIMER,
    jobs: int = 1,
    cluster: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> Tournament:
    """Play every triple of ``entrants`` (``--bots`` entries) for ``hands`` hands each and
    rate them. ``progress(deals_done)`` counts deals over the whole tournament.
    ``ValueError`` for fewer than three entrants or one given twice."""
    if len(entrants) < 3:
        raise ValueError(f"a tournament needs at least three bots, not {len(entrants)}")
    if len(set(entrants)) != len(entrants):
        raise ValueError("each bot may enter a tournament once")
    deals = -(-hands // ROTATIONS)
    triples = triples_of(len(entrants))
    per_triple: list[list[DealMatch]] = []
    tables: list[Standings] = []
    if record is not None:
        Path(record).mkdir(parents=True, exist_ok=True)
        meta = {
            "entrants": list(entrants),
            "triples": {f"triple{k}": [entrants[i] for i in t] for k, t in enumerate(triples)},
        }
        (Path(record) / "tournament.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
    for k, triple in enumerate(triples):
        config = ArenaConfig(
            tuple(entrants[i] for i in triple),
            seed,
            options if options is not None else Options(),
            str(Path(record) / f"triple{k}") if record is not None else None,
            timer,
        )
        done_before = k * deals

        def advance(done: int, before: int = done_before) -> None:
            if progress is not None:
                progress(before + done)

        chunks = play_deals(config, hands, jobs=jobs, cluster=cluster, progress=advance)
        tables.append(standings(list(config.bots), seed, chunks, deals))
        write_meta(config)
        ordered = sorted(chunks, key=lambda c: c.start)
        per_triple.append([
            DealMatch(triple, (chips[0], chips[1], chips[2]))
            for chunk in ordered
            for chips in chunk.deal_chips
        ])
    return Tournament(tuple(entrants), tuple(ratings(entrants, per_triple, seed=seed)),
                      tuple(tables))


def run(command: ArenaCommand) -> int:
    """``tongits arena --tournament``: progress on stderr, the ratings (or JSON) on stdout."""
    inputs = read_inputs(command.bots, command.options)
    if inputs is None:
        return 2
    entrants, table_options = list(inputs[0]), inputs[1]
    deals = -(-command.hands // ROTATIONS)
    bar = Progress(deals * len(triples_of(len(entrants))))
    return print_result(command, lambda: run_tournament(
        entrants,
        command.hands,
        seed=seed_value(command.seed),
        options=table_options,
        record=command.record,
        timer=command.timer,
        jobs=command.jobs,
        cluster=command.cluster,
        progress=bar.update,
    ))
