"""Reinforcement learning over the engine: a PettingZoo environment, its encodings, a numpy
policy that plays anywhere a bot plays (docs/BOTS.md, "Train a bot").

Why here: the environment is a client of the engine like the arena and the bot SDK are — it
asks the engine for legal moves, seat views and settlement and decides no rule itself — so it
lives beside them in ``tongits.client`` and depends on ``tongits.engine`` alone (engine <-
protocol <- server, client). It is a subpackage that nothing else imports: numpy, gymnasium
and pettingzoo come with ``pip install 'tongits[rl]'`` and are loaded only when
``tongits.client.rl`` is imported, so the engine and the core install stay light.
"""

# before this package's compiled modules are looked for: the finder that decides whether each
# runs as its extension (tongits.engine.compiled)
import tongits.engine.compiled  # noqa: F401

from .actions import (
    ACTIONS,
    MELDS,
    ActionError,
    Place,
    action_index,
    describe,
    index_of,
    legal_actions,
    legal_indices,
)
from .env import AGENTS, TongitsEnv, env, mask_of, observation_space
from .observation import OBSERVATION_SIZE, encode
from .seat_env import SeatEnv, vector_env

__all__ = [
    "ACTIONS",
    "AGENTS",
    "MELDS",
    "OBSERVATION_SIZE",
    "ActionError",
    "Place",
    "SeatEnv",
    "TongitsEnv",
    "action_index",
    "describe",
    "encode",
    "env",
    "index_of",
    "legal_actions",
    "legal_indices",
    "mask_of",
    "observation_space",
    "vector_env",
]
