"""PettingZoo's usual wrappers around ``TongitsEnv`` (``env()``), at a training loop's pace.

``OrderEnforcingWrapper`` and ``AssertOutOfBoundsWrapper`` answer every attribute they do not
define through ``__getattr__``, one Python call per wrapper, and the AEC loop reads
``agents``, ``agent_selection`` and ``last()`` through both at every step; gymnasium's
``Discrete.contains`` checks an action with numpy conversions. Together that cost more than
the rest of a step did. These subclasses change none of the wrappers' answers or errors: the
attributes a loop reads every step go straight to the environment (after the same check of
``reset`` the order wrapper makes), ``last`` is the environment's own, and an action that is a
plain ``int`` of the space passes the bounds check without numpy (anything else still goes
through ``Discrete.contains``).
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper

ObservationDict = dict[str, Any]
Last = tuple[ObservationDict | None, float, bool, bool, dict[str, Any]]


class Straight:
    """What a training loop reads every step, answered by the environment itself rather than
    through the wrapper's ``__getattr__``; ``_before_reset`` is where a wrapper checks first."""

    env: AECEnv[str, ObservationDict, int]

    def _before_reset(self, name: str) -> None:
        """Nothing to check unless the wrapper says otherwise."""

    def last(self, observe: bool = True) -> Last:
        self._before_reset("agent_selection")
        last: Last = self.env.last(observe)
        return last

    @property
    def agents(self) -> list[str]:
        self._before_reset("agents")
        agents: list[str] = self.env.agents
        return agents

    @agents.setter
    def agents(self, agents: list[str]) -> None:
        self.env.agents = agents

    @property
    def agent_selection(self) -> str:
        self._before_reset("agent_selection")
        agent: str = self.env.agent_selection
        return agent

    @agent_selection.setter
    def agent_selection(self, agent: str) -> None:
        self.env.agent_selection = agent


class InBounds(Straight, AssertOutOfBoundsWrapper[str, ObservationDict, int]):
    """``AssertOutOfBoundsWrapper`` for an environment whose action space is
    ``Discrete(actions)`` for every agent."""

    def __init__(self, env: AECEnv[str, ObservationDict, int], actions: int) -> None:
        super().__init__(env)
        self._actions = actions

    def step(self, action: int | None) -> None:
        if type(action) is int and 0 <= action < self._actions:
            self.env.step(action)  # Discrete.contains would say yes
        else:
            super().step(action)


class InOrder(Straight, OrderEnforcingWrapper[str, ObservationDict, int]):
    """``OrderEnforcingWrapper``, with the same ``AttributeError`` before ``reset``."""

    def __str__(self) -> str:
        return str(self.env)  # as the wrapper itself shows, not as a subclass of it

    def _before_reset(self, name: str) -> None:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
