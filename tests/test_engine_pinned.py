"""The engine's results pinned across speed work: digests of many seeded hands, computed before
the hot paths were rewritten and asserted after, so that a faster engine is the same engine.

Each digest covers one part a speed change could alter without any rules test noticing: the
full action sequences and settlements of random and bot hands under every option set, every
seat's (and a spectator's) wire view and legal moves in every state, the expert's moves with
their reasons, and the worlds it deals. A digest changes only when a result does; if a rules
change means to change results, recompute the digests (``python tests/test_engine_pinned.py``
prints them) and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest
from engine_support import OPTION_SETS
from tongits.engine import Hand, Options, deck_for, hand_record, seat_view
from tongits.engine.policies import ExpertParams, ExpertPolicy, get_policy
from tongits.engine.policies.worlds import InferenceParams, WorldMaker
from tongits.engine.view import seat_legal, seat_view_dict

Policy = Callable[[Any], Any]


def _digest(items: Iterator[Any]) -> str:
    sha = hashlib.sha256()
    for item in items:
        sha.update(json.dumps(item, sort_keys=True, separators=(",", ":")).encode())
        sha.update(b"\n")
    return sha.hexdigest()[:16]


def _play(seed: str, index: int, options: Options, policies: Sequence[Policy],
          observe: Callable[[Hand], None] | None = None) -> Hand:
    hand = Hand(deck_for(seed, index), index % 3, options)
    while not hand.over:
        if observe is not None:
            observe(hand)
        seat = hand.to_act
        hand.apply(seat, policies[seat](seat_view(hand, seat)))
    if observe is not None:
        observe(hand)
    return hand


def random_records() -> Iterator[Any]:
    """Random legal play, 120 hands under each option set: each hand's record."""
    for n, options in enumerate(OPTION_SETS):
        for index in range(120):
            players = [get_policy("random", f"pin/{n}/{index}/{s}") for s in range(3)]
            yield hand_record(_play(f"pin/{n}", index, options, players))


#: The entries a view had when the digests were made: an entry added since (the page's
#: ``count``) is checked by its own tests, and leaves these digests as they were.
VIEW_ENTRIES = ("dealer", "options", "hand_sizes", "stock", "discards", "opened", "blocked",
                "to_act", "phase", "turn", "caller", "result", "revealed", "seat", "hand",
                "melds", "history")


def _pinned_entries(view: Mapping[str, Any]) -> dict[str, Any]:
    return {key: view[key] for key in VIEW_ENTRIES if key in view}


def views() -> Iterator[Any]:
    """Every seat's and a spectator's wire view, and the legal moves, in every state of 15
    random hands under each option set."""
    out: list[Any] = []

    def observe(hand: Hand) -> None:
        for seat in (0, 1, 2, None):
            out.append(_pinned_entries(seat_view_dict(hand, seat)))
            out.append(seat_legal(hand, seat))
            out.append(_pinned_entries(seat_view(hand, seat).to_dict()))

    for n, options in enumerate(OPTION_SETS):
        for index in range(15):
            players = [get_policy("random", f"view/{n}/{index}/{s}") for s in range(3)]
            _play(f"view/{n}", index, options, players, observe)
            yield from out
            out.clear()


def bot_records() -> Iterator[Any]:
    """greedy, strong and random seated together, 12 hands under each option set."""
    for n, options in enumerate(OPTION_SETS):
        for index in range(12):
            players = [get_policy(("strong", "greedy", "random")[(s + index) % 3],
                                  f"bots/{n}/{index}/{s}") for s in range(3)]
            yield hand_record(_play(f"bots/{n}", index, options, players))


def expert_decisions() -> Iterator[Any]:
    """The expert (a small budget) beside strong and greedy, one hand under each option set:
    every one of its moves with the reason it gives, and the hands' records."""
    for n, options in enumerate(OPTION_SETS):
        expert = ExpertPolicy(f"expert/{n}", ExpertParams(budget=24))
        decided: list[Any] = []

        def expert_seat(view: Any, expert: ExpertPolicy = expert,
                        decided: list[Any] = decided) -> Any:
            choice = expert.decide(view)
            decided.append([choice.move.to_dict(), choice.reason()])
            return choice.move

        players: list[Policy] = [expert_seat, get_policy("strong", f"x/{n}"),
                                 get_policy("greedy", f"y/{n}")]
        hand = _play(f"expert/{n}", n, options, players)
        yield decided
        yield hand_record(hand)


def worlds() -> Iterator[Any]:
    """The worlds the expert deals for seat to act in every state of a strong-bot hand under
    each option set: every hand and the stock of 4 worlds a state."""
    for n, options in enumerate(OPTION_SETS):
        states: list[Any] = []

        def observe(hand: Hand, states: list[Any] = states) -> None:
            if not hand.over:
                states.append(seat_view(hand, hand.to_act))

        players = [get_policy("strong", f"w/{n}/{s}") for s in range(3)]
        _play(f"worlds/{n}", n, options, players, observe)
        for i, view in enumerate(states):
            maker = WorldMaker(view, InferenceParams())
            rng = random.Random(f"w/{n}/{i}")
            for _ in range(4):
                world = maker.sample(rng)
                yield [sorted(world.hands[s]) for s in range(3)] + [world.stock]


PINNED = {
    random_records: "b65603ad737c7aec",
    views: "852b62f2b002ba68",
    bot_records: "a076ca79d87592c3",
    expert_decisions: "103e09ccf807c4e4",
    worlds: "171d8f0b9fd56ede",
}


@pytest.mark.parametrize("part", list(PINNED), ids=lambda f: f.__name__)
def test_results_are_the_pinned_ones(part: Callable[[], Iterator[Any]]) -> None:
    assert _digest(part()) == PINNED[part]


if __name__ == "__main__":
    for part in PINNED:
        print(f"    {part.__name__}: {_digest(part())!r},")
