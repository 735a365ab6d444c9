"""The arena's deals played in-process, and what every way of playing them shares.

``ArenaConfig`` is what a worker needs to play any deal; ``DealBook`` books finished hands into
a chunk's ``ChunkResult`` whoever played them (``play_in_process`` here, the arena's loopback
server in ``host``). The rules of duplicate deals and rotations: ``client/arena/runner.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tongits.engine import End, Hand, Options, deck_for, hand_record, seat_view
from tongits.engine.policies import Policy

from .specs import BotKind, BotSpec
from .stats import ROTATIONS, BotTally, ChunkResult

#: Seconds an external bot may think per decision unless ``--timer`` says otherwise.
DEFAULT_TIMER = 5.0


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    """What every worker needs to play any deal: ``bots`` are ``--bots`` entries (built-in
    names, ``py:`` or ``cmd:``), ``timer`` the seconds an external bot may think."""

    bots: tuple[str, ...]
    seed: int | str
    options: Options = field(default_factory=Options)
    record: str | None = None
    timer: float = DEFAULT_TIMER

    @property
    def specs(self) -> tuple[BotSpec, ...]:
        return tuple(BotSpec.parse(b) for b in self.bots)

    @property
    def external(self) -> bool:
        """Whether a ``cmd:`` bot plays, so the deals need the arena's server."""
        return any(s.kind is BotKind.COMMAND for s in self.specs)

    def policy_seed(self, index: int, rotation: int, position: int) -> str:
        """The seed of position ``position``'s policy for one hand: the same wherever the
        hand is played."""
        return f"{self.seed}/{index}/{rotation}/{position}"

    def record_path(self, index: int, rotation: int) -> Path | None:
        if self.record is None:
            return None
        return Path(self.record) / f"deal{index:06d}-rot{rotation}.json"


def play_hand(
    deck: Sequence[Any], dealer: int, policies: Sequence[Policy], options: Options | None = None
) -> tuple[Hand, list[list[float]]]:
    """Play one hand to its end, ``policies[s]`` deciding for seat ``s`` from its view alone.

    Returns the finished hand and, per seat, the seconds of each of its decisions. A move
    outside the view's legal moves raises ``IllegalMove`` (from ``Hand.apply``)."""
    hand = Hand(deck, dealer, options)
    times: list[list[float]] = [[], [], []]
    clock = time.perf_counter
    while not hand.over:
        seat = hand.to_act
        view = seat_view(hand, seat)
        start = clock()
        move = policies[seat](view)
        times[seat].append(clock() - start)
        hand.apply(seat, move)
    return hand, times


def seat_of(position: int, rotation: int) -> int:
    """The seat of the bot given ``position``-th to ``--bots`` in rotation ``rotation``."""
    return (position + rotation) % 3


class DealBook:
    """Builds one chunk's ``ChunkResult`` from finished hands, whichever way they were played."""

    def __init__(self, config: ArenaConfig, start: int, stop: int) -> None:
        self.config = config
        self.result = ChunkResult(start, stop, [BotTally() for _ in config.bots], [])
        self._chips = [0] * len(config.bots)
        self._rotations = 0

    def hand(self, index: int, rotation: int, hand: Hand, seats: Sequence[int],
             tallies: Sequence[BotTally] = ()) -> bool:
        """Book rotation ``rotation`` of deal ``index``: ``seats[p]`` is position ``p``'s seat,
        ``tallies[p]`` its decisions in the hand (decisions, timings, faults) if any. Rotations
        come in order; True when the deal is complete."""
        result = hand.result
        assert result is not None and rotation == self._rotations
        if result.end is End.VOID:
            self.result.voids += 1
        for position, seat in enumerate(seats):
            total = self.result.tallies[position]
            total.played(hand, seat)
            if tallies:
                total.merge(tallies[position])
            self._chips[position] += result.chips[seat]
        path = self.config.record_path(index, rotation)
        if path is not None:  # (who played each seat: tongits replay and review name them)
            names = [""] * 3
            for position, seat in enumerate(seats):
                names[seat] = self.config.bots[position]
            path.write_text(json.dumps(hand_record(hand, names)) + "\n", encoding="utf-8")
        self._rotations += 1
        if self._rotations < ROTATIONS:
            return False
        self.result.deal_chips.append(tuple(self._chips))
        self._chips = [0] * len(self.config.bots)
        self._rotations = 0
        return True


def play_in_process(
    config: ArenaConfig, start: int, stop: int, on_deal: Callable[[], None] | None = None
) -> ChunkResult:
    """Play deals ``start`` to ``stop - 1`` in every rotation with in-process bots only;
    ``on_deal()`` after each deal."""
    specs = config.specs
    factories = [s.factory() for s in specs]
    book = DealBook(config, start, stop)
    for index in range(start, stop):
        deck, dealer = deck_for(config.seed, index), index % 3
        for rotation in range(ROTATIONS):
            seats = [seat_of(p, rotation) for p in range(len(specs))]
            by_seat = {
                seats[p]: factories[p](config.policy_seed(index, rotation, p))
                for p in range(len(specs))
            }
            hand, times = play_hand(deck, dealer, [by_seat[s] for s in range(3)], config.options)
            tallies = []
            for seat in seats:
                tally = BotTally()
                for seconds in times[seat]:
                    tally.decided(seconds)
                tallies.append(tally)
            book.hand(index, rotation, hand, seats, tallies)
        if on_deal is not None:
            on_deal()
    return book.result
