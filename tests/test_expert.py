"""The expert bot: its sampled worlds agree with the seat's view, it plays only legal moves, the
same seed and budget give the same moves, it finds a Tongits when one is there, and it calls
only beyond its search's noise, saying so in the hint."""

from __future__ import annotations

import itertools
import random

import pytest
from client_positions import position
from engine_support import OPTION_SETS, deal_with
from hypothesis import given, settings
from hypothesis import strategies as st
from tongits.engine import (
    DECK,
    Action,
    Card,
    End,
    Hand,
    Move,
    Options,
    Phase,
    SeatView,
    deck_for,
    parse_cards,
    seat_view,
)
from tongits.engine.advice import advise
from tongits.engine.cards import POINTS
from tongits.engine.count import count_mask
from tongits.engine.policies import ExpertParams, ExpertPolicy, StrongParams, get_policy, rollout
from tongits.engine.policies.doubt import doubt_of
from tongits.engine.policies.expert import Search, search, world_rng
from tongits.engine.policies.rollout import rollout_move
from tongits.engine.policies.worlds import InferenceParams, WorldMaker

SMALL = ExpertParams(budget=12, min_worlds=2)


def positions(options: Options, seed: int, moves: int) -> Hand:
    """A hand after ``moves`` moves of greedy and random bots."""
    hand = Hand(deck_for("worlds", seed), seed % 3, options)
    rng = random.Random(seed)
    bots = [get_policy("greedy", 0), get_policy("random", seed), get_policy("strong", 1)]
    for _ in range(moves):
        if hand.over:
            break
        seat = hand.to_act
        hand.apply(seat, bots[rng.randrange(3)](seat_view(hand, seat)))
    return hand


@settings(max_examples=60, deadline=None)
@given(
    options=st.sampled_from(OPTION_SETS),
    seed=st.integers(0, 10_000),
    moves=st.integers(0, 60),
    world_seed=st.integers(0, 1_000),
    inference=st.booleans(),
)
def test_a_sampled_world_shows_the_seat_exactly_its_view(
    options: Options, seed: int, moves: int, world_seed: int, inference: bool
) -> None:
    hand = positions(options, seed, moves)
    if hand.over:
        return
    seat = hand.to_act
    view = seat_view(hand, seat)
    world = WorldMaker(view, InferenceParams(enabled=inference)).sample(random.Random(world_seed))
    seen = seat_view(world, seat)
    for name in ("hand", "hand_sizes", "stock", "discards", "opened", "blocked", "to_act",
                 "phase", "turn", "caller", "legal"):
        assert getattr(seen, name) == getattr(view, name), name
    assert [(m.id, m.owner, m.secret, m.cards, m.laid_off) for m in seen.melds] == [
        (m.id, m.owner, m.secret, m.cards, m.laid_off) for m in view.melds
    ]
    everywhere = [*world.stock, *world.discards, *(c for h in world.hands for c in h),
                  *(c for m in world.melds for c in m.cards)]
    assert sorted(everywhere) == list(DECK)
    for m in world.melds:
        if m.secret:
            assert len(m.cards) == 4 and len({c.rank for c in m.cards}) == 1
    # the world plays on like any hand, with the same rules
    while not world.over:
        world.apply(world.to_act, world.legal_moves()[0])


def test_expert_plays_only_legal_moves_and_repeats_itself_for_a_seed_and_budget() -> None:
    for n, options in enumerate(OPTION_SETS):
        hand = Hand(deck_for("expert-legal", n), n % 3, options)
        twin = ExpertPolicy(f"s{n}", SMALL)
        bots = [ExpertPolicy(f"s{n}", SMALL), get_policy("strong", 1), get_policy("greedy", 2)]
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            move = bots[seat](view)
            assert move in view.legal
            if seat == 0:
                assert twin(view) == move
            hand.apply(seat, move)
        assert hand.result is not None


def test_expert_goes_tongits_on_its_first_turn_when_it_can() -> None:
    """Dealt 13 cards that all meld, the dealer melds them all and wins by Tongits."""
    deck = deal_with("Ac 2c 3c 4c 5d 6d 7d 9s Ts Js Jh Qh Kh")
    hand = Hand(deck, 0)
    expert = ExpertPolicy(1, SMALL)
    while not hand.over and hand.to_act == 0:
        hand.apply(0, expert(seat_view(hand, 0)))
    assert hand.result is not None
    assert hand.result.end is End.TONGITS and hand.result.winner == 0


def test_the_rollout_policy_plays_only_legal_moves() -> None:
    """Rollouts skip the legality check (``Hand.apply_legal``) for speed: here every rollout
    move goes through ``Hand.apply``, which would raise on an illegal one."""
    for n, options in enumerate(OPTION_SETS):
        for i in range(12):
            hand = Hand(deck_for("rollout-legal", 12 * n + i), i % 3, options)
            while not hand.over:
                move = rollout_move(hand)
                assert move in hand.legal_moves()
                hand.apply(hand.to_act, move)


CALL = Move(Action.CALL)
CHALLENGE = Move(Action.CHALLENGE)
FOLD = Move(Action.FOLD)
BOTH_OPENED = [(1, "9c 9d 9h"), (2, "Qs Qh Qd")]
"""Seat 1 may call; seat 2, opened too, may challenge."""


def test_the_expert_overrules_strongs_move_at_the_start_of_a_turn_only_beyond_the_noise() -> None:
    """At the start of a turn the default is ``strong``'s move: here a draw (``strong`` never
    calls above 25). The search calls instead only when calling gains over the draw by more
    than ``guard_z`` standard errors on the same worlds. At count 41 in both positions: with
    one hand the call's gain is within the noise, so the expert draws and the hint says so;
    with the other it is well beyond: call. A call ``strong`` makes is kept when the search
    agrees."""
    close = position("6h 4h 4s 7h Jc 2h 8c", melds=BOTH_OPENED, top="7c")
    found = search(close, ExpertParams())
    assert found.default.move == Move(Action.DRAW) and close.count() == 41
    assert found.guard is not None and found.guard.rival.move == CALL
    assert 0 < found.guard.gain <= found.guard.z * found.guard.noise
    assert ExpertPolicy()(close) == Move(Action.DRAW)
    reason = advise(close).steps[0].reason()
    assert "call averages" in reason and "within the noise" in reason
    # which move the gain is of: "a gain of 0.6" read as the draw's own gain
    assert f"call seems better by {found.guard.gain:.1f}, within the noise" in reason

    clear = position("8s Td 5h Kh 3h 4s Ah", melds=BOTH_OPENED, top="7c")
    found = search(clear, ExpertParams())
    assert found.default.move == Move(Action.DRAW) and clear.count() == 41
    assert found.guard is not None and found.guard.beyond_noise
    assert ExpertPolicy()(clear) == CALL
    assert "beyond the noise" in advise(clear).steps[0].reason()

    low = position("5s 2s Jc 2h 6s", melds=BOTH_OPENED, top="7c")
    found = search(low, ExpertParams())
    assert found.default.move == CALL and found.guard is not None and found.guard.gain <= 0
    assert "the search agrees" in advise(low).steps[0].reason()


def test_a_call_is_valued_against_a_table_that_must_guess_the_callers_count() -> None:
    """The seats facing the expert's call (in its search) read it as a player would: from the
    caller's hand size and throws, believing a low count more than a high one. A caller
    holding K♦ T♠ 5♣ (25) is folded to by a seat counting 24, which would win the showdown (the
    rollouts' own answerers, who see the caller's cards, challenged it), and challenged by a
    seat counting 9. The more a count, the fewer of the caller's imagined hands it beats."""
    view = position("Kd Ts 5c", melds=BOTH_OPENED, top="7c")
    doubt = doubt_of(view, InferenceParams())
    assert all(a >= b for a, b in itertools.pairwise(doubt.beaten))
    world = Search(view, world_rng(view), InferenceParams()).world(0)
    world.apply(1, CALL)
    answerer = world.to_act
    world.hands[answerer] = set(parse_cards("Kh Jd 4c"))  # 24, less than the caller's 25
    assert rollout_move(world) == Move(Action.CHALLENGE)
    assert doubt.answer(world) == Move(Action.FOLD)
    world.hands[answerer] = set(parse_cards("5h 4d"))  # 9
    assert doubt.answer(world) == Move(Action.CHALLENGE)


def test_the_hint_says_within_the_noise_only_when_the_other_move_gains() -> None:
    """When the default move is itself the search's best, the hint says the search agrees
    (it once printed "+12.0 vs -1.0: within the noise" for a default far ahead of the next best
    move); "within the noise" is kept for a better move whose gain is not clearly real."""
    pick = position("7s Kh 7d", melds=BOTH_OPENED, top="7c")
    step = advise(pick).steps[0]
    assert step.move == Move(Action.PICK, parse_cards("7d 7s"))
    assert "within the noise" not in step.reason() and "next best call" in step.reason()
    play = position("Qc 4h 9s 2d 5c", melds=BOTH_OPENED, phase=Phase.PLAY)
    for step in advise(play).steps:
        text = step.reason()
        assert ("search agrees" in text) != ("within the noise" in text), text


def test_the_hint_names_seats_by_the_players_names() -> None:
    """A reason that concerns another seat names its player, as the screen does ("blocks Cy's
    next call"), and says ``seat N`` only when it has no names."""
    play = position("Qc 4h 9s 2d 5c", melds=BOTH_OPENED, phase=Phase.PLAY)
    first = advise(play).steps[0]
    assert first.move == Move(Action.SAPAW, card=Card.parse("Qc"), meld=1)
    assert "blocks Cy's next call" in first.reason(str, ["Ana", "Ben", "Cy"])
    assert "blocks seat 2's next call" in first.reason()


def test_playing_its_cards_the_expert_keeps_strongs_kind_of_move() -> None:
    """The search's rollouts meld and lay off by rote, so it misjudges a lay-off or a meld
    traded for a discard (and back): on duplicate deals against two ``strong`` the hands where
    it made such a trade lost chips (docs/BOTS.md). Here its search finds throwing 7♣ better
    than laying it off, beyond the noise; the expert lays it off, as ``strong`` does, and the
    hint says why. Allowed to trade (``switch_kinds``), it throws the card."""
    hand = positions(Options(), 5, 24)
    view = seat_view(hand, hand.to_act)
    found = search(view, ExpertParams())
    lay_off = Move(Action.SAPAW, card=Card.parse("7c"), meld=1)
    throw = Move(Action.DISCARD, card=Card.parse("7c"))
    assert found.default.move == lay_off and found.guard is not None
    assert found.guard.rival.move == throw and found.guard.beyond_noise
    assert ExpertPolicy()(view) == lay_off
    assert "misjudges a discard played for a sapaw" in ExpertPolicy().decide(view).reason()
    assert ExpertPolicy(params=ExpertParams(switch_kinds=True))(view) == throw


def first_answer(deal: int, seat: int) -> SeatView:
    """``seat``'s first answer to a call in deal ``deal`` of seed "fold", three ``strong``."""
    strong = get_policy("strong", 0)
    hand = Hand(deck_for("fold", deal), deal % 3)
    while not hand.over:
        view = seat_view(hand, hand.to_act)
        if view.seat == seat and view.phase is Phase.ANSWER:
            return view
        hand.apply(hand.to_act, strong(view))
    raise AssertionError("no answer")


def test_the_expert_folds_where_strong_would_challenge_first_above_25_unless_its_search_objects(
) -> None:
    """No seat that calls by its count calls above 25, so the default answer to a call that
    nobody has challenged, holding more, is a fold where ``strong`` challenges (it doubts one
    caller in ten). The search overrules the fold only beyond the noise: at 37 it keeps it and
    the hint says why; at 29 its worlds find a challenge far better, and it challenges. Those
    worlds believe a caller counting up to 25 (more, one time in ten): at 33, believing one
    counting up to 10 only, as ``strong`` does, the search challenged."""
    strong = get_policy("strong", 0)
    kept = first_answer(2, 1)
    assert kept.count() == 37 and strong(kept) == CHALLENGE
    found = search(kept, ExpertParams())
    assert found.default.move == FOLD and found.guard is not None
    assert not found.guard.beyond_noise
    assert ExpertPolicy()(kept) == FOLD
    assert "above 25, where a seat that calls by its count" in advise(kept).steps[0].reason()
    assert search(kept, ExpertParams(fold_above=40)).default.move == CHALLENGE

    overruled = first_answer(6, 2)
    assert overruled.count() == 29 and strong(overruled) == CHALLENGE
    found = search(overruled, ExpertParams())
    assert found.default.move == FOLD and found.guard is not None and found.guard.beyond_noise
    assert ExpertPolicy()(overruled) == CHALLENGE

    believed = first_answer(7, 1)
    assert believed.count() == 33 and strong(believed) == CHALLENGE
    assert ExpertPolicy()(believed) == FOLD
    doubting = ExpertParams(inference=InferenceParams(answer_cap=10))
    assert ExpertPolicy(params=doubting)(believed) == CHALLENGE


def test_the_rollouts_count_guesses_are_dealt_when_the_bot_is_built() -> None:
    """The first decision of a process used to deal them (the 99th percentile of its time)."""
    rollout._above.cache_clear()
    ExpertPolicy()
    built = rollout._above.cache_info()
    for size in range(1, 13):
        for cap in range(1, 11):
            rollout._above(size, cap, False, False)
    assert rollout._above.cache_info().misses == built.misses


def test_a_count_guess_weighs_each_imagined_hand_by_its_cards_above_the_last_throw() -> None:
    weight = StrongParams().high_card_weight
    size, cap = 9, 6
    rng = random.Random(f"imagined/{size}")
    mass = [0.0] * (size * 10 + 2)
    for _ in range(rollout.IMAGINED):
        cards = rng.sample(range(52), size)
        high = sum(POINTS[c] > cap for c in cards)
        mass[count_mask(sum(1 << c for c in cards))] += weight**high
    above = rollout._above(size, cap, False, False)
    for m in (0, 10, 25, 40):
        assert above[m] == pytest.approx(sum(mass[m + 1:]) / sum(mass))
