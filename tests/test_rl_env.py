"""The PettingZoo environment of ``tongits.client.rl`` (the ``rl`` extra): PettingZoo's own API
and seed tests, one action index per legal move and the mask exactly the legal moves, no other
seat's hidden card in an observation, rewards that are the settlement's chips, and hands that
replay from their seed. Skipped, saying so, only when the extra is not installed."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")
pytest.importorskip("gymnasium", reason="the rl extra is not installed: pip install '.[rl]'")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install '.[rl]'")

import numpy as np  # noqa: E402
from engine_support import SEEDS, choose, random_options, states  # noqa: E402
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pettingzoo import AECEnv  # noqa: E402
from pettingzoo.test import api_test, seed_test  # noqa: E402
from tongits.client.rl import (  # noqa: E402
    ACTIONS,
    AGENTS,
    MELDS,
    OBSERVATION_SIZE,
    ActionError,
    TongitsEnv,
    describe,
    encode,
    env,
    legal_actions,
)
from tongits.client.rl import actions as layout  # noqa: E402
from tongits.client.rl.observation import DEADWOOD  # noqa: E402
from tongits.engine import (  # noqa: E402
    DECK,
    Card,
    Hand,
    IllegalMove,
    Options,
    Scoring,
    best_arrangement,
    deck_for,
    is_meld,
    seat_view,
)


def test_pettingzoo_api_test_passes_wrapped_and_raw() -> None:
    api_test(env(seed=1), num_cycles=1000)
    api_test(TongitsEnv(Options(pick_to_sapaw=True, scoring=Scoring.TALLY), seed=2),
             num_cycles=1000)


def test_pettingzoo_seed_test_passes() -> None:
    seed_test(lambda: env(), num_cycles=300)


def test_the_meld_table_is_every_meld_of_a_deck_once() -> None:
    assert len(MELDS) == len(set(map(frozenset, MELDS))) == 13 * 5 + 4 * 66
    assert all(is_meld(m) for m in MELDS)
    assert layout.PICK_SAPAW + 3 == ACTIONS == 886


def _ranges() -> dict[str, range]:
    return {
        "plain": range(0, layout.DISCARD), "discard": range(layout.DISCARD, layout.MELD),
        "meld": range(layout.MELD, layout.PICK), "pick": range(layout.PICK, layout.SECRET),
        "secret": range(layout.SECRET, layout.SAPAW),
        "sapaw": range(layout.SAPAW, layout.PICK_SAPAW),
        "pick_sapaw": range(layout.PICK_SAPAW, ACTIONS),
    }


def test_every_legal_move_has_its_own_index_and_the_mask_is_the_legal_moves() -> None:
    """Over random hands under random options, in every state, for every seat: the indices
    of the legal moves are distinct, each says what its move does (``describe``), and the
    observation's mask has exactly those ones. Every kind of action is met on the way."""
    seen: Counter[str] = Counter()
    kinds = _ranges()
    game = TongitsEnv()
    for seed in range(250):
        for hand in states(seed):
            for seat in range(3):
                view = seat_view(hand, seat)
                legal = legal_actions(view)
                assert len(legal) == len(view.legal)
                assert set(legal.values()) == set(view.legal)
                for index, move in legal.items():
                    kind = next(k for k, r in kinds.items() if index in r)
                    seen[kind] += 1
                    text = describe(index)
                    if move.card is not None:
                        assert str(move.card) in text
                    assert text.split()[0] == move.action.value or kind == "pick"
                game.hand = hand
                mask = game.observe(AGENTS[seat])["action_mask"]
                assert set(np.flatnonzero(mask)) == set(legal)
    assert set(seen) == set(kinds), seen


def _relabelled(deck: list[Card], hidden: set[Card], rng: random.Random) -> list[Card]:
    """``deck`` with the cards of ``hidden`` shuffled among their own positions."""
    cards = sorted(hidden)
    shuffled = cards[:]
    rng.shuffle(shuffled)
    swap = dict(zip(cards, shuffled, strict=True))
    return [swap.get(c, c) for c in deck]


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.integers(0, 80), st.integers(0, 2), st.integers(0, 2**32))
def test_no_other_seats_hidden_card_reaches_an_observation(
        seed: int, stop: int, seat: int, shuffle: int) -> None:
    """Play a random hand ``stop`` moves; then deal the same deck with every card that
    ``seat`` cannot know (the other hands, the stock) moved among themselves and replay the
    same actions. The other seats hold other cards, ``seat``'s observation and mask are the
    same, in every state on the way."""
    rng = random.Random(seed)
    options = random_options(rng)
    deck = list(DECK)
    rng.shuffle(deck)
    dealer = rng.randrange(3)
    first = TongitsEnv(options)
    first.reset(options={"deck": deck, "dealer": dealer})
    actions: list[int] = []
    for _ in range(stop):
        if first.hand.over:
            break
        index, _ = random.Random(f"{seed}/{len(actions)}").choice(list(first.legal().items()))
        actions.append(index)
        first.step(index)
    hand = first.hand
    hidden = set(hand.stock)
    for other in range(3):
        if other != seat:
            hidden |= hand.hands[other]
    assume(not hand.over and len(hidden) > 1)
    other_deck = _relabelled(deck, hidden, random.Random(shuffle))
    assume(other_deck != deck)
    first.reset(options={"deck": deck, "dealer": dealer})
    second = TongitsEnv(options)
    second.reset(options={"deck": other_deck, "dealer": dealer})
    agent = AGENTS[seat]
    for step in range(len(actions) + 1):
        mine, theirs = first.observe(agent), second.observe(agent)
        assert np.array_equal(mine["observation"], theirs["observation"])
        assert np.array_equal(mine["action_mask"], theirs["action_mask"])
        if step == len(actions):
            break
        index = actions[step]
        first.step(index)
        try:
            second.step(index)
        except (ActionError, IllegalMove):
            # Only under no_sapawable_discard, where another seat's legal discards depend
            # on its hidden cards: the two hands are no longer the same game.
            assume(False)
    assert any(first.hand.hands[s] != second.hand.hands[s] for s in range(3) if s != seat) \
        or first.hand.stock != second.hand.stock


def test_an_observation_changes_with_the_seats_own_cards() -> None:
    """The leak test's counterpart: the observation does read the seat's own hand."""
    deck = list(deck_for(3, 0))
    game = TongitsEnv()
    game.reset(options={"deck": deck, "dealer": 0})
    before = game.observe("seat_1")["observation"]
    swapped = deck[:]
    swapped[1], swapped[40] = swapped[40], swapped[1]  # a card of seat 1 with a stock card
    game.reset(options={"deck": swapped, "dealer": 0})
    after = game.observe("seat_1")["observation"]
    assert not np.array_equal(before, after)
    assert before.shape == (OBSERVATION_SIZE,) and before.dtype == np.float32


@settings(max_examples=40, deadline=None)
@given(SEEDS)
def test_rewards_are_the_settlements_chips_and_a_hand_replays_from_its_seed(seed: int) -> None:
    rng = random.Random(seed)
    options = random_options(rng)
    game = TongitsEnv(options)
    game.reset(seed=seed)
    totals = dict.fromkeys(AGENTS, 0.0)
    played = []
    for agent in game.agent_iter():
        _, reward, done, _, _ = game.last()
        totals[agent] += reward
        if done:
            game.step(None)
            continue
        move = choose(rng, list(game.legal().values()))
        index = next(i for i, m in game.legal().items() if m == move)
        played.append(index)
        game.step(index)
    result = game.hand.result
    assert result is not None
    assert [totals[a] for a in AGENTS] == list(result.chips)
    record = game.record()
    assert record.replay().result == result
    again = TongitsEnv(options)
    again.reset(seed=seed)
    assert again.hand.deck == Hand(deck_for(seed, 0), again.hand.dealer).deck
    for index in played:
        again.step(index)
    assert again.record() == record


def test_resets_without_a_seed_deal_the_matchs_next_hands_in_order() -> None:
    game = TongitsEnv(seed="m")
    decks = []
    for _ in range(3):
        game.reset()
        decks.append((game.hand.deck, game.hand.dealer))
    game.reset(seed="m")
    assert (game.hand.deck, game.hand.dealer) == decks[0]
    assert decks[1][0] == deck_for("m", 1) and decks[2][0] == deck_for("m", 2)
    assert len({d for _, d in decks}) == 3


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    game = TongitsEnv(seed=5)
    game.reset(seed=5)
    legal = game.legal()
    wrong = next(i for i in range(ACTIONS) if i not in legal)
    steps = len(game.hand.steps)
    with pytest.raises(ActionError, match="may not play action"):
        game.step(wrong)
    with pytest.raises(ActionError, match="no action at all"):
        game.step(ACTIONS)
    with pytest.raises(ActionError):
        game.step(None)
    assert len(game.hand.steps) == steps and game.legal() == legal


def test_describe_names_each_kind_of_action() -> None:
    assert describe(0) == "draw" and describe(3) == "fold"
    assert describe(layout.DISCARD + 9) == "discard Tc"
    assert describe(layout.MELD + 4) == "meld Ac Ad Ah As"
    assert describe(layout.PICK) == "pick to make Ac Ad Ah"
    assert describe(layout.SECRET + 12) == "secret four of rank K"
    assert describe(layout.SAPAW + 3 * 9 + 2) == "sapaw Tc (run, high end)"
    assert describe(ACTIONS - 3) == "pick the top to lay off (set)"
    with pytest.raises(ActionError):
        describe(ACTIONS)


def test_encode_is_the_observation_of_the_env() -> None:
    game = TongitsEnv(seed=9)
    game.reset(seed=9)
    view = seat_view(game.hand, 2)
    assert np.array_equal(encode(view), game.observe("seat_2")["observation"])


def test_the_loop_of_bots_md_plays_a_hand_to_its_end() -> None:
    """docs/BOTS.md's ten-line loop, run verbatim: it plays hand 0 of seed 1 to its end."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "BOTS.md").read_text(encoding="utf-8")
    loop = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S)
                if "tongits.client.rl import env" in b)
    assert len(loop.strip().splitlines()) <= 12
    names: dict[str, object] = {}
    exec(compile(loop, "BOTS.md", "exec"), names)
    game = names["game"]
    assert isinstance(game, AECEnv) and not game.agents  # every agent finished
    assert game.unwrapped.hand.over


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.integers(0, 2))
def test_the_envs_observations_are_encode_of_the_seat_view_in_every_state(
        seed: int, first: int) -> None:
    """The environment encodes each hand's views incrementally (the history and the melds
    read once): in every state of random hands under random options, every seat's
    observation is exactly ``encode`` of its view made afresh, and the deadwood feature is
    ``best_arrangement``'s. A learner keeps observations: each stays as it was handed out
    to the end of the hand."""
    rng = random.Random(seed)
    game = TongitsEnv(random_options(rng))
    for _ in range(2):  # two hands: the second must not see the first's history
        deck = list(DECK)
        rng.shuffle(deck)
        game.reset(options={"deck": deck, "dealer": rng.randrange(3)})
        kept = []
        while True:
            for rel in range(3):
                seat = (first + rel) % 3
                view = seat_view(game.hand, seat)
                seen = game.observe(AGENTS[seat])
                assert np.array_equal(seen["observation"], encode(view))
                kept.append((seen, {k: v.copy() for k, v in seen.items()}))
                dead = {Card(int(i))
                        for i in np.flatnonzero(seen["observation"][DEADWOOD:DEADWOOD + 52])}
                if not game.hand.options.concealed_melds_count:
                    assert dead == set(best_arrangement(view.hand).deadwood)
            if game.hand.over:
                break
            game.step(rng.choice(list(game.legal())))
        for seen, copy in kept:
            assert all(np.array_equal(seen[k], copy[k]) for k in copy)


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.floats(0.0, 1.0))
def test_observations_read_now_and_then_are_encode_of_the_seat_view(
        seed: int, skip: float) -> None:
    """A training loop observes the seat to act, and some loops not every state: the
    environment reads what changed since the last observation of the hand (the steps, the
    melds when a step changed them), whoever made it. Observing only some seats in only some
    states of random hands, each observation is ``encode`` of the view made afresh, to the
    ends of the hands."""
    rng = random.Random(seed)
    game = TongitsEnv(random_options(rng))
    for _ in range(3):
        deck = list(DECK)
        rng.shuffle(deck)
        game.reset(options={"deck": deck, "dealer": rng.randrange(3)})
        while not game.hand.over:
            if rng.random() >= skip:
                seat = game.hand.to_act if rng.random() < 0.8 else rng.randrange(3)
                seen = game.observe(AGENTS[seat])
                assert np.array_equal(seen["observation"],
                                      encode(seat_view(game.hand, seat)))
            game.step(rng.choice(list(game.legal())))
        for seat in range(3):
            seen = game.observe(AGENTS[seat])
            assert np.array_equal(seen["observation"], encode(seat_view(game.hand, seat)))
            assert not seen["action_mask"].any()


def test_env_wraps_as_pettingzoos_own_wrappers_do() -> None:
    """``env()``'s wrappers (``wrappers.py``: PettingZoo's, with a faster path for what a loop
    reads every step) give what PettingZoo's own give: the same name, the same errors before
    ``reset`` and for an action out of the space, and the same ``last()`` at every step of
    whole hands, actions as ints, numpy ints and None."""
    from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper

    ours = env(seed=4)
    theirs = OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TongitsEnv(seed=4)))
    assert str(ours) == str(theirs) == "tongits_v0"
    for game in (ours, theirs):
        for name in ("agents", "agent_selection"):
            with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
                getattr(game, name)
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            game.last()
    rng = random.Random(4)
    for _ in range(20):
        ours.reset()
        theirs.reset()
        for agent, other in zip(ours.agent_iter(), theirs.agent_iter(), strict=True):
            assert agent == other and ours.agents == theirs.agents
            mine, its = ours.last(), theirs.last()
            assert mine[1:] == its[1:]
            seen = mine[0]
            assert seen is not None and its[0] is not None
            assert all(np.array_equal(seen[k], its[0][k]) for k in its[0])
            if mine[2]:
                ours.step(None)
                theirs.step(None)
                continue
            for bad in (-1, ACTIONS, 2.0, np.int64(ACTIONS)):
                for game in (ours, theirs):
                    with pytest.raises(AssertionError, match="not in action space"):
                        game.step(bad)
            action = rng.choice([int(i) for i in np.flatnonzero(seen["action_mask"])])
            ours.step(action if rng.random() < 0.5 else np.int64(action))
            theirs.step(action)
        assert ours.unwrapped.record() == theirs.unwrapped.record()
