"""PettingZoo's usual wrappers around ``TongitsEnv`` (``env()``), at a training loop's pace.

``OrderEnforcingWrapper`` and ``AssertOutOfBoundsWrapper`` answer every attribute they do not
define through ``__getattr__``, one Python call per wrapper, and the AEC loop reads
``agents``, ``agent_selection`` and ``last()`` through both at every step, and its
``agent_iter`` reads them again; gymnasium's ``Discrete.contains`` checks an action with numpy
conversions. Together that cost more than the rest of a step did. These subclasses change
none of the wrappers' answers or errors: the attributes a loop reads every step (``last``
too) come straight from the environment inside them (after the same check of ``reset`` the
order wrapper makes), ``agent_iter`` reads them so as well, a step goes down the wrappers
with no detour, and an action that is a plain ``int`` of the space passes the bounds check
without numpy (anything else still goes through ``Discrete.contains``).
"""

from __future__ import annotations

from typing import Any, TypeAlias

from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

ObservationDict = dict[str, Any]
Last = tuple[ObservationDict | None, float, bool, bool, dict[str, Any]]
Env: TypeAlias = AECEnv[str, ObservationDict, int]


class Straight:
    """What a training loop reads every step, answered by the environment inside every
    wrapper (``unwrapped``) rather than through each wrapper's ``__getattr__``, once the
    wrapper has seen a ``reset`` if it asks for one."""

    env: Env
    #: the environment inside every wrapper
    _inner: Env
    #: whether ``reset`` has been called (``OrderEnforcingWrapper``'s flag; a wrapper that
    #: enforces no order has always been)
    _has_reset: bool

    def last(self, observe: bool = True) -> Last:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        last: Last = self._inner.last(observe)
        return last

    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise AttributeError("agents cannot be accessed before reset")
        agents: list[str] = self._inner.agents
        return agents

    @agents.setter
    def agents(self, agents: list[str]) -> None:
        self.env.agents = agents

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        agent: str = self._inner.agent_selection
        return agent

    @agent_selection.setter
    def agent_selection(self, agent: str) -> None:
        self.env.agent_selection = agent


class InBounds(Straight, AssertOutOfBoundsWrapper[str, ObservationDict, int]):
    """``AssertOutOfBoundsWrapper`` for an environment whose action space is
    ``Discrete(actions)`` for every agent."""

    _has_reset = True  # (no order to enforce)

    def __init__(self, env: Env, actions: int) -> None:
        super().__init__(env)
        self._inner = env.unwrapped
        self._actions = actions

    def step(self, action: int | None) -> None:
        if type(action) is int and 0 <= action < self._actions:
            self.env.step(action)  # Discrete.contains would say yes
        else:
            super().step(action)


class InOrder(Straight, OrderEnforcingWrapper[str, ObservationDict, int]):
    """``OrderEnforcingWrapper``, with the same ``AttributeError`` before ``reset``."""

    def __init__(self, env: Env) -> None:
        super().__init__(env)
        self._inner = env.unwrapped

    def __str__(self) -> str:
        return str(self.env)  # as the wrapper itself shows, not as a subclass of it

    def step(self, action: int | None) -> None:
        if self._has_reset and self._inner.agents:
            self._has_updated = True
            self.env.step(action)
        else:  # (the wrapper's error or warning)
            super().step(action)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable[
            str, ObservationDict, int]:
        super().agent_iter(max_iter)  # (the wrapper's error before reset)
        return _InOrderIterable(self, max_iter)


class _InOrderIterable(AECOrderEnforcingIterable[str, ObservationDict, int]):
    def __iter__(self) -> AECOrderEnforcingIterator[str, ObservationDict, int]:
        return _InOrderIterator(self.env, self.max_iter)


class _InOrderIterator(AECOrderEnforcingIterator[str, ObservationDict, int]):
    """``AECOrderEnforcingIterator``, reading the environment inside the wrappers."""

    env: InOrder

    def __next__(self) -> str:
        wrapper = self.env
        inner = wrapper._inner
        if not inner.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        agent: str = inner.agent_selection
        return agent
