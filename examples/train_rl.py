"""Train a small Tongits policy with plain numpy: REINFORCE with a learned baseline.

    pip install 'tongits[rl]'
    nice python examples/train_rl.py --minutes 20 --out rl_policy.npz
    TONGITS_RL_POLICY=rl_policy.npz tongits arena \\
        --bots py:tongits.client.rl.policy:saved,greedy,greedy --hands 1500

The learner plays one seat of ``SeatEnv`` (tongits.client.rl) against two ``greedy`` bots
(``--opponents``), its seat turning with the hands. ``--envs`` environments are stepped
together, so that the policy's forward pass runs once per step for all of them (a batch of
observations, one matrix product); every ``--batch`` finished hands make one update.

The policy is ``MLPPolicy``: a masked softmax over a one-hidden-layer perceptron of the
observation, and a value head on the same hidden layer. Learning from chips alone, with a
reward only at the end of a hand and 886 actions, is slow from a uniform start, so training
has two phases:

1. **imitation** (the first ``--imitate`` hands): the ``--teacher`` bot plays the learner's
   seat and the policy learns its moves (cross-entropy on the teacher's action), the value
   head the chips that follow;
2. **REINFORCE with a baseline** (the rest): the policy plays, every decision of a hand is
   credited with the hand's chips (the only reward) less the value head's estimate,
   ``advantage = chips - value(obs)``, normalised per batch; the gradient of
   ``-advantage * log p(action) - entropy_bonus * entropy`` for the policy and of
   ``(value - chips)**2 / 2`` for the value head, by hand, and one Adam step.

It prints a line per update (hands, chips per hand of the learner's seat over the batch,
the teacher's while imitating, and the policy's entropy) and saves the policy every 20
updates, at the end of imitation (as ``NAME-imitation.npz``) and at the end. Ctrl-C
stops it early, and saves. No torch, no GPU: a laptop CPU.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from tongits.client.rl import SeatEnv, index_of
from tongits.client.rl.policy import Array, MLPPolicy, softmax
from tongits.engine.policies import Policy, get_policy


@dataclass(slots=True)
class Adam:
    """Adam (Kingma & Ba) over a fixed list of arrays, updated in place."""

    params: list[Array]
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    steps: int = 0
    m: list[Array] = field(default_factory=list)
    v: list[Array] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]

    def step(self, grads: list[Array]) -> None:
        self.steps += 1
        fix1, fix2 = 1 - self.beta1 ** self.steps, 1 - self.beta2 ** self.steps
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= self.beta1
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * g * g
            p -= self.lr * (m / fix1) / (np.sqrt(v / fix2) + self.eps)


@dataclass(slots=True)
class Batch:
    """Decisions of finished hands: observation, mask, action, and the hand's chips."""

    obs: list[npt.NDArray[np.float32]] = field(default_factory=list)
    masks: list[npt.NDArray[np.int8]] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    hands: int = 0
    chips: float = 0.0


def gradients(policy: MLPPolicy, batch: Batch, entropy_bonus: float,
              value_weight: float, *, imitate: bool = False) -> tuple[list[Array], float]:
    """The loss's gradients for ``policy.params`` and the mean entropy of the batch; with
    ``imitate`` the policy's loss is the cross-entropy of the batch's (the teacher's)
    actions instead."""
    obs = np.asarray(batch.obs, dtype=np.float64)
    masks = np.asarray(batch.masks)
    actions = np.asarray(batch.actions)
    returns = np.asarray(batch.returns)
    n = len(actions)
    if n == 0:
        return [np.zeros_like(p) for p in policy.params], 0.0
    hidden = policy.hidden(obs)
    probs = softmax(policy.logits(hidden, masks))
    value = policy.value(hidden)
    advantage = returns - value
    advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
    logp = np.log(np.where(probs > 0, probs, 1.0))
    entropy = -(probs * logp).sum(axis=1)
    if imitate:
        d_logits = probs.copy()
        d_logits[np.arange(n), actions] -= 1.0
    else:
        d_logits = probs * advantage[:, None]
        d_logits[np.arange(n), actions] -= advantage
        d_logits += entropy_bonus * probs * (logp + entropy[:, None])
    d_logits /= n
    d_value = value_weight * (value - returns) / n
    d_hidden = d_logits @ policy.w2.T + np.outer(d_value, policy.wv)
    d_pre = d_hidden * (1 - hidden * hidden)
    grads = [obs.T @ d_pre, d_pre.sum(axis=0), hidden.T @ d_logits, d_logits.sum(axis=0),
             hidden.T @ d_value, np.array([d_value.sum()])]
    return grads, float(entropy.mean())


def update(policy: MLPPolicy, adam: Adam, batch: Batch, entropy_bonus: float,
           value_weight: float, *, imitate: bool, rng: np.random.Generator,
           epochs: int = 8, minibatch: int = 512) -> float:
    """One update from ``batch``: one Adam step on the whole batch for REINFORCE (the data
    is the policy's own, good for one step), ``epochs`` passes of shuffled minibatches when
    imitating (the teacher's moves stay right however often they are read). Returns the
    mean entropy of the policy over the batch."""
    if not imitate:
        grads, entropy = gradients(policy, batch, entropy_bonus, value_weight)
        adam.step(grads)
        return entropy
    entropy = 0.0
    for _ in range(epochs):
        order = rng.permutation(len(batch.actions))
        for begin in range(0, len(order), minibatch):
            part = order[begin:begin + minibatch]
            grads, entropy = gradients(policy, Batch(
                [batch.obs[i] for i in part], [batch.masks[i] for i in part],
                [batch.actions[i] for i in part], [batch.returns[i] for i in part]),
                entropy_bonus, value_weight, imitate=True)
            adam.step(grads)
    return entropy


def train(*, minutes: float, out: str, envs: int = 32, batch_hands: int = 256,
          hidden: int = 64, lr: float = 1e-3, entropy_bonus: float = 0.01,
          value_weight: float = 0.5, opponents: tuple[str, str] = ("greedy", "greedy"),
          imitate_hands: int = 5000, teacher: str = "greedy", seed: int = 0,
          save_every: int = 20, max_hands: int | None = None) -> MLPPolicy:
    """Train for ``minutes`` (or ``max_hands`` hands) and save the policy to ``out``."""
    rng = np.random.default_rng(seed)
    tutor: Policy = get_policy(teacher, seed)
    policy = MLPPolicy.new(hidden, seed)
    adam = Adam(policy.params, lr)
    games = [SeatEnv(opponents, seed=f"train/{seed}/{i}") for i in range(envs)]
    current = [game.reset()[0] for game in games]
    pending: list[Batch] = [Batch() for _ in games]
    batch = Batch()
    start = time.monotonic()
    hands = updates = 0
    try:
        while time.monotonic() - start < minutes * 60 and (max_hands is None
                                                            or hands < max_hands):
            obs = np.stack([o["observation"] for o in current])
            masks = np.stack([o["action_mask"] for o in current])
            probs = softmax(policy.logits(policy.hidden(obs), masks))
            draws = rng.random((len(games), 1))
            chosen = (probs.cumsum(axis=1) < draws).sum(axis=1)
            imitating = hands < imitate_hands
            for i, game in enumerate(games):
                if imitating:
                    view = game.view()
                    action = index_of(view, tutor(view))
                else:
                    action = int(chosen[i])
                    if action >= len(masks[i]) or not masks[i][action]:
                        action = int(np.flatnonzero(masks[i])[-1])  # rounding of the sum
                mine = pending[i]
                mine.obs.append(current[i]["observation"])
                mine.masks.append(masks[i])
                mine.actions.append(action)
                current[i], reward, over, _, _ = game.step(action)
                if over:
                    batch.obs += mine.obs
                    batch.masks += mine.masks
                    batch.actions += mine.actions
                    batch.returns += [reward] * len(mine.actions)
                    batch.hands += 1
                    batch.chips += reward
                    pending[i] = Batch()
                    current[i] = game.reset()[0]
            if batch.hands >= batch_hands:
                entropy = update(policy, adam, batch, entropy_bonus, value_weight,
                                 imitate=imitating, rng=rng)
                hands += batch.hands
                updates += 1
                phase = "imitate" if imitating else "play   "
                print(f"{phase} update {updates:4d}  hands {hands:7d}  "
                      f"chips/hand {batch.chips / batch.hands:+.3f}  entropy {entropy:.3f}  "
                      f"{time.monotonic() - start:6.0f} s", flush=True)
                batch = Batch()
                if updates % save_every == 0:
                    policy.save(out)
                if imitating and hands >= imitate_hands:
                    policy.save(out.removesuffix(".npz") + "-imitation.npz")
    except KeyboardInterrupt:
        print("stopped: saving", flush=True)
    policy.save(out)
    return policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0, help="training time")
    parser.add_argument("--out", default="rl_policy.npz", help="where to save the policy")
    parser.add_argument("--envs", type=int, default=32, help="environments stepped together")
    parser.add_argument("--batch", type=int, default=256, help="hands per update")
    parser.add_argument("--hidden", type=int, default=64, help="hidden units")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's step size")
    parser.add_argument("--entropy", type=float, default=0.01, help="entropy bonus")
    parser.add_argument("--opponents", default="greedy,greedy", help="two built-in bots")
    parser.add_argument("--imitate", type=int, default=5000,
                        help="hands of imitation first (0: none)")
    parser.add_argument("--teacher", default="greedy", help="the bot imitated")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    first, second = args.opponents.split(",")
    train(minutes=args.minutes, out=args.out, envs=args.envs, batch_hands=args.batch,
          hidden=args.hidden, lr=args.lr, entropy_bonus=args.entropy,
          opponents=(first, second), imitate_hands=args.imitate, teacher=args.teacher,
          seed=args.seed)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
