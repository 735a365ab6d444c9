"""The policies: legal moves only, decisions from the seat's view alone, determinism per seed."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_support import OPTION_SETS
from tongits.client.arena import ArenaConfig, run_arena
from tongits.client.arena.specs import BotSpec
from tongits.engine import Action, Hand, Move, Options, Phase, SeatView, deck_for, seat_view
from tongits.engine.count import hand_count
from tongits.engine.policies import (
    POLICIES,
    ExpertParams,
    Policy,
    StrongPolicy,
    autoplay_move,
    get_policy,
)
from tongits.engine.policies.worlds import InferenceParams, WorldMaker


class Checked:
    """Wraps a policy: every decision must come from ``view.legal``."""

    def __init__(self, name: str, seed: str):
        self.policy = get_policy(name, seed)
        self.decisions = 0

    def __call__(self, view: SeatView) -> Move:
        move = self.policy(view)
        assert move in view.legal, f"{self.policy.name} played {move} not in {view.legal}"
        self.decisions += 1
        return move


def play(hand: Hand, policies: list[Checked]) -> None:
    while not hand.over:
        seat = hand.to_act
        hand.apply(seat, policies[seat](seat_view(hand, seat)))


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: str(o.to_dict()) or "defaults")
def test_every_bot_plays_only_legal_moves(options: Options) -> None:
    names = [n for n in POLICIES if n != "expert"]  # the expert: tests/test_expert.py
    rng = random.Random(f"legal/{options}")
    ends = set()
    for i in range(60):
        lineup = [rng.choice(names) for _ in range(3)]
        policies = [Checked(name, f"{i}/{s}") for s, name in enumerate(lineup)]
        hand = Hand(deck_for("legal", i), i % 3, options)
        play(hand, policies)
        assert hand.result is not None
        ends.add(hand.result.end)
    assert len(ends) >= 2


def test_strong_decides_from_the_wire_form_of_its_view() -> None:
    """A view rebuilt from its public dict (no Hand behind it) gets the same moves, the same
    ones from a second instance with the same seed, and only legal ones."""
    for i in range(6):
        hand = Hand(deck_for("wire", i), i % 3)
        a, b = StrongPolicy(seed=7), StrongPolicy(seed=7)
        greedy = get_policy("greedy")
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            wire = SeatView.from_dict(view.to_dict(), [m.to_dict() for m in view.legal])
            move = a(view)
            assert move in view.legal
            assert b(wire) == move
            assert a(view) == move  # no hidden state changes the answer to the same view
            hand.apply(seat, move if seat == 0 else greedy(view))


def test_views_given_to_bots_hide_the_other_hands() -> None:
    hand = Hand(deck_for("hidden", 0), 0)
    play(hand, [Checked("greedy", "x"), Checked("strong", "y"), Checked("random", "z")])
    hand = Hand(deck_for("hidden", 1), 1)
    strong = get_policy("strong", 1)
    seen: list[SeatView] = []
    while not hand.over:
        seat = hand.to_act
        view = seat_view(hand, seat)
        seen.append(view)
        hand.apply(seat, strong(view))
    for view in seen:
        assert view.revealed is None and view.result is None
        assert view.seat is not None
        others = set().union(*(hand.hands[s] for s in range(3) if s != view.seat))
        assert not others & set(view.hand)


def test_get_policy_knows_its_names() -> None:
    assert set(POLICIES) == {"random", "greedy", "strong", "expert"}
    for name in POLICIES:
        assert get_policy(name, 1).name == name
    with pytest.raises(KeyError, match="unknown policy"):
        get_policy("clever")


def test_random_is_deterministic_per_seed() -> None:
    hand = Hand(deck_for("rnd", 0), 0)
    view = seat_view(hand, 0)
    assert [get_policy("random", 3)(view) for _ in range(3)] == [get_policy("random", 3)(view)] * 3


def test_autoplay_draws_then_throws_the_highest_loose_card_and_folds_calls() -> None:
    hand = Hand(deck_for("auto", 0), 0)
    view = seat_view(hand, 0)
    move = autoplay_move(view)
    assert move.action is Action.DISCARD and move in view.legal
    hand.apply(0, move)
    assert autoplay_move(seat_view(hand, 1)) == Move.draw()
    greedy = get_policy("greedy")
    for i in range(40):
        hand = Hand(deck_for("auto", i), i % 3)
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            if view.phase is Phase.ANSWER:
                assert autoplay_move(view).action is Action.FOLD
            assert autoplay_move(view) in view.legal
            hand.apply(seat, greedy(view))


def test_greedy_and_strong_call_when_nobody_can_challenge() -> None:
    """An opened seat facing two unopened seats wins by calling: both bots see it."""
    for name in ("greedy", "strong"):
        policy = get_policy(name, 0)
        found = 0
        for i in range(200):
            hand = Hand(deck_for("call", i), i % 3)
            while not hand.over:
                seat = hand.to_act
                view = seat_view(hand, seat)
                move = policy(view)
                if Move(Action.CALL) in view.legal and not any(
                    view.opened[s] for s in range(3) if s != seat
                ):
                    assert move == Move(Action.CALL)
                    found += 1
                hand.apply(seat, move)
        assert found


EXPLOITERS = Path(__file__).parent.parent / "bench" / "exploiters.py"
BLUFFER = BotSpec.parse(f"py:{EXPLOITERS}:always_call")
"""A seat that calls at every chance, whatever its count (``bench/exploiters.py``)."""


@pytest.mark.parametrize("name", ["strong", "greedy"])
def test_a_caller_holding_many_cards_is_challenged_on_a_middling_count(name: str) -> None:
    """A seat that calls with 8 cards or more in hand seldom counts 10 or less: a bot that
    counts 11 to 25 must challenge it. Both bots once took every call to mean a count of 10
    or less and folded here (``strong`` challenged at 8 or less against such a caller,
    ``greedy`` at 8 or less against any)."""
    seen = 0
    for i in range(150):
        policies = [BLUFFER.policy(i), get_policy(name, 1), get_policy(name, 2)]
        hand = Hand(deck_for("bluff-answer", i), i % 3)
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            move = policies[seat](view)
            caller = view.caller
            if (
                view.phase is Phase.ANSWER
                and caller is not None
                and Move(Action.CHALLENGE) in view.legal
                and not any(step.move.action is Action.CHALLENGE for step in view.history)
                and view.hand_sizes[caller] >= 8
                and 11 <= view.count() <= 25
            ):
                seen += 1
                assert move == Move(Action.CHALLENGE), (i, view.count(), view.hand_sizes[caller])
            hand.apply(seat, move)
    assert seen >= 10


@pytest.mark.parametrize(
    ("exploiter", "name"),
    [("always_call", "strong"), ("always_call", "greedy"), ("call_after_1", "strong")],
)
def test_calling_at_every_chance_loses_chips_against_two_of_a_bot(
    exploiter: str, name: str
) -> None:
    """Duplicate deals (300 arena hands, seed b1): a seat that calls at every chance, whatever
    its count, loses chips against two ``strong`` or two ``greedy`` bots, and so does one that
    lets its first chance to call go by and then calls at every chance. Before they weighed a
    call by the caller's hand size the first won 2.1 chips a hand from two ``strong`` and 3.0
    from two ``greedy``; while ``strong`` believed every caller that had let a chance go by,
    the second won 1.25 a hand from two ``strong`` (1,500 hands, seed x1)."""
    POLICIES["exploiter"] = BotSpec.parse(f"py:{EXPLOITERS}:{exploiter}").policy
    try:
        standings = run_arena(ArenaConfig(("exploiter", name, name), "b1"), 300)
    finally:
        del POLICIES["exploiter"]
    assert standings.bots[0].chips_per_hand < 0


def test_the_experts_worlds_do_not_make_every_caller_count_low() -> None:
    """The expert's worlds keep a deal where a caller counts high now and then: a caller
    holding 9 cards rarely counts 10 or less, and a call from it says less than its cards do.
    When every world was redrawn until the caller counted low (or counted least), the expert
    imagined a seat with 40 in hand counting 25 and folded; against a seat that calls at every
    chance it lost 1.4 chips a hand (150 arena hands), and the change won it 1.6-1.9 a hand
    against the expert of before (600)."""
    strong = get_policy("strong", 1)
    for i in range(60):
        policies: list[Policy] = [BLUFFER.policy(i), strong, strong]
        hand = Hand(deck_for("bluff", i), 0)
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            caller = view.caller
            if view.phase is Phase.ANSWER and caller is not None and view.hand_sizes[caller] >= 8:
                break
            hand.apply(seat, policies[seat](view))
        else:
            continue
        assert caller is not None
        assert hand.count(caller) > 30
        assert imagined_count(view, caller, InferenceParams()) > 30
        assert imagined_count(view, caller, InferenceParams(bluff_weight=0.0)) < 30
        return
    pytest.fail("no call from a seat holding 8 cards or more in 60 deals")


def imagined_count(view: SeatView, caller: int, params: InferenceParams) -> int:
    """The median count of ``caller`` over 40 of the expert's worlds of ``view``."""
    maker, rng = WorldMaker(view, params), random.Random(5)
    counts = sorted(hand_count(maker.sample(rng).hands[caller]) for _ in range(40))
    return counts[len(counts) // 2]


def _bench_module(name: str, path: Path) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["challenge_at_20", "call_after_1"])
def test_explainedexpert_divergences_add_up_to_the_arena_result(name: str) -> None:
    """``bench/exploiters.py --explain`` attributes an exploiter's chips against two ``strong``
    to the hands where its rule overruled ``strong``: what it gained there, with its rule's move
    rather than ``strong``'s, must be its arena result on the same deals to the chip, or the
    explanation explains something else."""
    module: Any = _bench_module("bench_exploiters", EXPLOITERS)
    found = list(module.divergences(name, "explain", 8))
    assert found, "the rule never overruled strong: nothing was checked"
    gained = sum(d.chips_rule - d.chips_strong for d in found)
    config = ArenaConfig((f"py:{EXPLOITERS}:{name}", "strong", "strong"), "explain")
    assert run_arena(config, 24).bots[0].tally.chips == gained


def test_the_experts_explained_hands_add_up_to_its_arena_result() -> None:
    """``bench/bots.py explain`` attributes the expert's chips against two ``strong`` to the
    hands where it first played otherwise than ``strong``: what it gained there must be its
    arena result on the same deals to the chip."""
    module: Any = _bench_module("bench_bots", EXPLOITERS.parent / "bots.py")
    found = module.expert_divergences(("explain", 0, 3, module.Expert(ExpertParams())))
    assert found, "the expert never overruled strong: nothing was checked"
    gained = sum(d["chips_expert"] - d["chips_strong"] for d in found)
    config = ArenaConfig(("expert", "strong", "strong"), "explain")
    assert run_arena(config, 9).bots[0].tally.chips == gained


def test_the_bounds_worlds_are_the_true_hand() -> None:
    """``bench/expert_bound.py`` measures the expert whose worlds know the truth: with ``deal``
    every world is the hand itself, stock order included; with ``hands`` the hands and melds
    are the true ones and the stock holds the true stock's cards; at a kind of decision not
    named, the worlds are the expert's own."""
    _bench_module("bots", EXPLOITERS.parent / "bots.py")  # what expert_bound imports
    module: Any = _bench_module("bench_expert_bound", EXPLOITERS.parent / "expert_bound.py")
    hand, strong = Hand(deck_for("bound", 0), 0), StrongPolicy()
    while hand.phase is not Phase.START or not hand.opened_seats[hand.to_act]:
        hand.apply(hand.to_act, strong(seat_view(hand, hand.to_act)))
    view, rng = seat_view(hand, hand.to_act), random.Random(1)
    assert module.kind_of(view) in ("call", "pick")
    every = frozenset(module.KINDS)
    for _ in range(3):
        world = module.Knowing(hand, True, every)(view, InferenceParams()).sample(rng)
        assert world.hands == hand.hands and world.stock == hand.stock
        assert [m.cards for m in world.melds] == [m.cards for m in hand.melds]
        world = module.Knowing(hand, False, every)(view, InferenceParams()).sample(rng)
        assert world.hands == hand.hands and sorted(world.stock) == sorted(hand.stock)
    others = module.Knowing(hand, True, every - {module.kind_of(view)})(view, InferenceParams())
    assert type(others) is WorldMaker
