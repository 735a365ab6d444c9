"""From training to a table (the ``rl`` extra): the single-seat environment against the
engine's bots, many of them stepped together, the numpy policy saved and loaded, the example's
training loop, and the saved policy playing in the arena through ``py:``."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")
pytest.importorskip("gymnasium", reason="the rl extra is not installed: pip install '.[rl]'")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install '.[rl]'")

import numpy as np  # noqa: E402
from tongits.client.arena.play import ArenaConfig, play_in_process  # noqa: E402
from tongits.client.rl import ACTIONS, OBSERVATION_SIZE, SeatEnv, vector_env  # noqa: E402
from tongits.client.rl.policy import (  # noqa: E402
    ENV_FILE,
    MLPPolicy,
    PolicyBot,
    PolicyFileError,
    saved,
)
from tongits.engine import Hand, deck_for, seat_view  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_rl.py"


def _random_action(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    """A random legal action; 0 after the end of a hand, when a vector env's next step
    deals the next hand and ignores the action (Gymnasium's autoreset)."""
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(len(legal))]) if len(legal) else 0


def test_a_seat_plays_whole_hands_against_greedy_and_gets_its_chips() -> None:
    game = SeatEnv(("greedy", "strong"), seed=4)
    rng = np.random.default_rng(0)
    for number in range(3):
        obs, _ = game.reset()
        assert game.seat == game.game.hand_number % 3
        assert game.game.hand.to_act == game.seat and obs["action_mask"].any()
        done = False
        while not done:
            obs, reward, done, truncated, _ = game.step(_random_action(obs, rng))
            assert not truncated
            if not done:
                assert game.game.hand.to_act == game.seat
        result = game.game.hand.result
        assert result is not None and reward == result.chips[game.seat]
        assert number == 0 or game.game.hand_number >= number


def test_a_seeded_seat_env_replays_exactly() -> None:
    def run() -> list[float]:
        game = SeatEnv(seed="x")
        rng = np.random.default_rng(1)
        obs, _ = game.reset(seed=3)
        rewards = []
        for _ in range(60):
            obs, reward, done, _, _ = game.step(_random_action(obs, rng))
            if done:
                rewards.append(reward)
                obs, _ = game.reset()
        return rewards

    assert run() == run()


def test_a_seat_env_refuses_unknown_opponents_and_seats() -> None:
    with pytest.raises(KeyError, match="known"):
        SeatEnv(("greedy", "nobody"))
    with pytest.raises(ValueError, match="two opponents"):
        SeatEnv(("greedy",))
    with pytest.raises(ValueError, match="seat"):
        SeatEnv(seat=3)


@pytest.mark.parametrize("processes", [False, True])
def test_vector_envs_step_several_hands_together(processes: bool) -> None:
    envs = vector_env(3, processes=processes, seed=7)
    try:
        obs, _ = envs.reset(seed=1)
        assert obs["observation"].shape == (3, OBSERVATION_SIZE)
        assert obs["action_mask"].shape == (3, ACTIONS)
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(80):
            actions = np.array([_random_action({"action_mask": m}, rng)
                                for m in obs["action_mask"]])
            obs, rewards, done, _, _ = envs.step(actions)
            finished += int(done.sum())
        assert finished > 0
    finally:
        envs.close()


def test_a_saved_policy_loads_the_same_and_plays_legal_moves(tmp_path: Path) -> None:
    policy = MLPPolicy.new(hidden=8, seed=3)
    policy.w2 += np.random.default_rng(0).normal(size=policy.w2.shape)
    path = tmp_path / "p.npz"
    policy.save(path)
    loaded = MLPPolicy.load(path)
    assert all(np.array_equal(a, b) for a, b in zip(policy.params, loaded.params, strict=True))
    rng = random.Random(0)
    for bot in (PolicyBot(loaded), PolicyBot(loaded, 5, sample=True)):
        hand = Hand(deck_for(11, 0), 0)
        while not hand.over:
            view = seat_view(hand, hand.to_act)
            move = bot(view) if hand.to_act == 0 else rng.choice(view.legal)
            hand.apply(hand.to_act, move)  # IllegalMove if the bot chose badly


def test_a_file_that_is_no_policy_is_refused_with_its_reason(tmp_path: Path) -> None:
    other = tmp_path / "other.npz"
    np.savez(other, w1=np.zeros(3))
    with pytest.raises(PolicyFileError, match="not a saved policy"):
        MLPPolicy.load(other)
    wrong = tmp_path / "wrong.npz"
    policy = MLPPolicy.new(hidden=4)
    policy.w1 = np.zeros((OBSERVATION_SIZE - 1, 4))
    policy.save(wrong)
    with pytest.raises(PolicyFileError, match="w1 has shape"):
        MLPPolicy.load(wrong)


def _example() -> object:
    spec = importlib.util.spec_from_file_location("train_rl_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_example_trains_saves_and_the_arena_plays_the_saved_policy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's loop, imitation then REINFORCE, on a few hands; then the file it saved
    plays as ``py:tongits.client.rl.policy:saved`` in the arena against greedy."""
    out = tmp_path / "rl_policy.npz"
    example = _example()
    trained = example.train(minutes=5, out=str(out), envs=4, batch_hands=4,  # type: ignore[attr-defined]
                            hidden=8, imitate_hands=4, max_hands=12)
    assert out.exists() and (tmp_path / "rl_policy-imitation.npz").exists()
    start = MLPPolicy.new(8, 0)
    assert not np.array_equal(trained.w2, start.w2)
    monkeypatch.setenv(ENV_FILE, str(out))
    assert isinstance(saved(1), PolicyBot)
    config = ArenaConfig(("py:tongits.client.rl.policy:saved", "greedy", "greedy"), seed=2)
    result = play_in_process(config, 0, 2)
    assert len(result.deal_chips) == 2
    assert sum(sum(deal) for deal in result.deal_chips) == 0  # payments: zero-sum chips


def test_tongits_bot_takes_a_py_bot_as_the_arena_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tongits bot py:tongits.client.rl.policy:saved --ladder`` seats the saved policy;
    a ``cmd:`` entry is no in-process bot and is refused with its reason."""
    from tongits.client.arena.specs import BotSpecError
    from tongits.client.sdk import _named_policy

    out = tmp_path / "p.npz"
    MLPPolicy.new(hidden=4).save(out)
    monkeypatch.setenv(ENV_FILE, str(out))
    bot = _named_policy("py:tongits.client.rl.policy:saved", "1")
    assert isinstance(bot, PolicyBot) and bot.name == "rl"
    assert _named_policy("greedy", None).name == "greedy"
    with pytest.raises(BotSpecError, match="cmd: program"):
        _named_policy("cmd:node examples/bot.js", None)
