"""A small numpy policy for the environment, and the bot that plays it at any table.

``MLPPolicy`` is a masked softmax over a one-hidden-layer perceptron of the observation
(``observation.py``) with a value head for a baseline: small enough to train on a laptop CPU
without torch (``examples/train_rl.py``), saved as one ``.npz`` file. ``PolicyBot`` turns it
into an engine policy (``policy(view) -> move``), so the saved file plays wherever a bot plays:
``tongits arena --bots py:tongits.client.rl.policy:saved,greedy,strong`` and ``tongits bot
py:tongits.client.rl.policy:saved --ladder``, which read the file named by
``$TONGITS_RL_POLICY`` (default ``rl_policy.npz`` in the current directory).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tongits.engine import Move, SeatView

from .actions import ACTIONS, legal_actions
from .observation import OBSERVATION_SIZE, encode

Array = npt.NDArray[np.float64]
#: What ``saved`` reads when ``$TONGITS_RL_POLICY`` is not set.
DEFAULT_FILE = "rl_policy.npz"
ENV_FILE = "TONGITS_RL_POLICY"
_FORMAT = 1


class PolicyFileError(ValueError):
    """A file that holds no policy of this format and size (the message says why)."""


@dataclass(slots=True)
class MLPPolicy:
    """``logits = tanh(obs @ w1 + b1) @ w2 + b2``, ``value = tanh(obs @ w1 + b1) @ wv + bv``;
    illegal actions get probability 0."""

    w1: Array
    b1: Array
    w2: Array
    b2: Array
    wv: Array
    bv: Array

    @classmethod
    def new(cls, hidden: int = 64, seed: int = 0) -> MLPPolicy:
        """Small random weights (the output layer starts at zero: uniform over legal moves)."""
        rng = np.random.default_rng(seed)
        return cls(
            rng.normal(0.0, 1.0 / np.sqrt(OBSERVATION_SIZE), (OBSERVATION_SIZE, hidden)),
            np.zeros(hidden),
            np.zeros((hidden, ACTIONS)),
            np.zeros(ACTIONS),
            np.zeros(hidden),
            np.zeros(1),
        )

    @property
    def params(self) -> list[Array]:
        """The weights, in a fixed order (the optimizer's)."""
        return [self.w1, self.b1, self.w2, self.b2, self.wv, self.bv]

    def hidden(self, obs: npt.NDArray[np.floating]) -> Array:
        return np.tanh(obs @ self.w1 + self.b1)

    def logits(self, hidden: Array, mask: npt.NDArray[np.integer]) -> Array:
        """Masked logits: an illegal action's is -inf."""
        return np.where(mask > 0, hidden @ self.w2 + self.b2, -np.inf)

    def value(self, hidden: Array) -> Array:
        return hidden @ self.wv + self.bv

    def save(self, path: str | Path) -> None:
        np.savez(path, format=_FORMAT, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2,
                 wv=self.wv, bv=self.bv)

    @classmethod
    def load(cls, path: str | Path) -> MLPPolicy:
        """The policy saved at ``path``; ``PolicyFileError`` if it is not one, ``OSError`` if
        it cannot be read."""
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: np.asarray(data[k], dtype=np.float64)
                          for k in ("w1", "b1", "w2", "b2", "wv", "bv")}
                version = int(data["format"])
        except (KeyError, ValueError) as exc:
            raise PolicyFileError(f"{path}: not a saved policy ({exc})") from None
        if version != _FORMAT:
            raise PolicyFileError(f"{path}: policy format {version}, not {_FORMAT}")
        hidden = arrays["b1"].shape
        shapes = {"w1": (OBSERVATION_SIZE, *hidden), "w2": (*hidden, ACTIONS),
                  "b2": (ACTIONS,), "wv": hidden, "bv": (1,)}
        for name, shape in shapes.items():
            if arrays[name].shape != shape:
                raise PolicyFileError(
                    f"{path}: {name} has shape {arrays[name].shape}, not {shape} (a policy "
                    "for another observation or action space)")
        return cls(**arrays)


def softmax(logits: Array) -> Array:
    """Row-wise softmax of masked logits (each row has at least one finite entry)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)  # type: ignore[no-any-return]


class PolicyBot:
    """An engine policy playing ``policy``: its most likely legal move, or with ``sample`` a
    move drawn from its probabilities (``random.Random(seed)``)."""

    name = "rl"

    def __init__(self, policy: MLPPolicy, seed: int | str | None = None, *,
                 sample: bool = False) -> None:
        self.policy = policy
        self.sample = sample
        self.rng = random.Random(seed)

    def __call__(self, view: SeatView) -> Move:
        legal = legal_actions(view)
        if len(legal) == 1:
            return next(iter(legal.values()))
        mask = np.zeros(ACTIONS, dtype=np.int8)
        mask[list(legal)] = 1
        logits = self.policy.logits(self.policy.hidden(encode(view)), mask)
        if not self.sample:
            return legal[int(np.argmax(logits))]
        probabilities = softmax(logits)
        indices = list(legal)
        chosen = self.rng.choices(indices, weights=[probabilities[i] for i in indices])[0]
        return legal[chosen]


_LOADED: dict[tuple[str, float], MLPPolicy] = {}


def saved(seed: int | str | None = None) -> PolicyBot:
    """The arena's and ``tongits bot``'s factory (``py:tongits.client.rl.policy:saved``): the
    policy saved in ``$TONGITS_RL_POLICY`` (default ``rl_policy.npz``), read once per file
    version, playing its most likely move."""
    path = Path(os.environ.get(ENV_FILE) or DEFAULT_FILE).resolve()
    key = (str(path), path.stat().st_mtime)
    policy = _LOADED.get(key)
    if policy is None:
        policy = _LOADED[key] = MLPPolicy.load(path)
    return PolicyBot(policy, seed)
