"""``SeatEnv``: one seat of the AEC environment as a single-agent Gymnasium env, the other two
seats played by the engine's bots; and ``vector_env``, many of them stepped together.

Most learning libraries train one agent at a time: here the learner takes one seat and
``greedy``, ``strong`` (any name of ``tongits.engine.policies.POLICIES``) take the others, each
deciding from its own seat view as at a table. Observations, actions and the reward are those
of ``TongitsEnv`` for the learner's seat. The learner's seat turns with the hands (hand ``n``:
seat ``n % 3``) unless ``seat`` fixes it, so that it plays as dealer and as the others.

For long runs ``vector_env(n, processes=True)`` runs ``n`` such environments in a worker
process each (Gymnasium's ``AsyncVectorEnv``; without ``processes``, ``SyncVectorEnv`` steps
them in this process), with Gymnasium's usual autoreset: the step after a hand ends deals the
next one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gymnasium import Env, spaces
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv, VectorEnv
from tongits.engine import Options, SeatView, seat_view
from tongits.engine.policies import Policy, get_policy

from .actions import ACTIONS
from .env import AGENTS, ObservationDict, TongitsEnv, observation_space


class SeatEnv(Env[ObservationDict, int]):
    """Hands of Tongits from one seat, against ``opponents`` (two policy names, in turn order
    after the learner). ``seed`` is the match seed (``TongitsEnv``); each opponent's own
    randomness is seeded from it and the hand, so that a seeded run replays exactly."""

    metadata = {"render_modes": []}

    def __init__(self, opponents: Sequence[str] = ("greedy", "greedy"),
                 options: Options | None = None, seed: int | str | None = None,
                 seat: int | None = None) -> None:
        if len(opponents) != 2:
            raise ValueError(f"two opponents are needed, not {len(opponents)}")
        for name in opponents:
            get_policy(name)  # KeyError now, naming the known policies, rather than mid-run
        if seat is not None and seat not in (0, 1, 2):
            raise ValueError(f"seat is 0, 1 or 2, not {seat!r}")
        self.game = TongitsEnv(options, seed)
        self.opponents = tuple(opponents)
        self.fixed_seat = seat
        self.seat = 0
        self.observation_space: spaces.Space[Any] = observation_space()
        self.action_space: spaces.Space[Any] = spaces.Discrete(ACTIONS)
        self._bots: dict[int, Policy] = {}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[ObservationDict, dict[str, Any]]:
        """Deal the next hand (hand 0 of match ``seed`` when given) and play the others'
        turns up to the learner's first decision. A hand that ends before the learner ever
        decides (another seat's Tongits on its first turn) is skipped."""
        super().reset(seed=seed)
        game = self.game
        game.reset(seed=seed, options=options)
        while True:
            number = game.hand_number
            self.seat = number % 3 if self.fixed_seat is None else self.fixed_seat
            self._bots = {
                (self.seat + 1 + i) % 3: get_policy(name, f"{game.match_seed}/{number}/{i}")
                for i, name in enumerate(self.opponents)
            }
            self._play_others()
            if not game.hand.over:
                return game.observe(AGENTS[self.seat]), {}
            game.reset()

    def step(self, action: int) -> tuple[ObservationDict, float, bool, bool, dict[str, Any]]:
        game = self.game
        game.step(action)
        self._play_others()
        agent = AGENTS[self.seat]
        over = game.hand.over
        reward = game.rewards[agent] if over else 0.0
        return game.observe(agent), reward, over, False, {}

    def view(self) -> SeatView:
        """The learner's seat view now (to ask a bot what it would play, for instance)."""
        return seat_view(self.game.hand, self.seat)

    def _play_others(self) -> None:
        hand = self.game.hand
        while not hand.over and hand.to_act != self.seat:
            seat = hand.to_act
            self.game.play(self._bots[seat](seat_view(hand, seat)))


def vector_env(n: int, *, processes: bool = False,
               opponents: Sequence[str] = ("greedy", "greedy"), options: Options | None = None,
               seed: int | str = 0) -> VectorEnv[ObservationDict, Any, Any]:
    """``n`` ``SeatEnv`` stepped together, environment ``i`` on match seed ``f"{seed}/{i}"``:
    each in a worker process of its own with ``processes``, else all in this process."""
    if n < 1:
        raise ValueError(f"n is at least 1, not {n}")

    def one(i: int) -> Callable[[], SeatEnv]:
        return lambda: SeatEnv(opponents, options, f"{seed}/{i}")

    makers = [one(i) for i in range(n)]
    return AsyncVectorEnv(makers) if processes else SyncVectorEnv(makers)
