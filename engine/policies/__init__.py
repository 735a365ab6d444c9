"""Decision policies: ``policy(view) -> move`` from a seat's view alone (RULES.md §11).

The same interface runs server-side bot seats, the in-process arena and remote bots. A policy is
a callable object; it only ever returns a move from ``view.legal`` and is deterministic given its
seed (its randomness comes from its own ``random.Random``).

``get_policy(name, seed)`` builds one of ``POLICIES``: ``random``, ``greedy``, ``strong``,
``expert``.
``autoplay_move(view)`` is the server's move for a seat whose turn timed out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from ..moves import Move
from ..view import SeatView
from .basic import GreedyPolicy, RandomPolicy, autoplay_move
from .common import Choice, Notation
from .expert import ExpertParams, ExpertPolicy
from .strong import StrongParams, StrongPolicy


class Policy(Protocol):
    """A bot: called once per decision with the seat's view, returns one of ``view.legal``."""

    name: str

    def __call__(self, view: SeatView) -> Move: ...


@runtime_checkable
class ExplainingPolicy(Policy, Protocol):
    """A policy that can say why: ``decide(view)`` is the move ``policy(view)`` returns, with
    its reason (``Choice``). The client's ``hint`` shows the reasoning of ``HINT_POLICY``."""

    def decide(self, view: SeatView) -> Choice: ...


HINT_POLICY = "expert"
"""The strongest policy (it explains its moves): the one whose reasoning the ``hint`` shows."""


POLICIES: dict[str, Callable[[int | str | None], Policy]] = {
    "random": RandomPolicy,
    "greedy": GreedyPolicy,
    "strong": StrongPolicy,
    "expert": ExpertPolicy,
}


def explaining_policy(name: str = HINT_POLICY, seed: int | str | None = None) -> ExplainingPolicy:
    """``get_policy(name, seed)`` when that policy explains its moves, else ``TypeError``."""
    policy = get_policy(name, seed)
    if not isinstance(policy, ExplainingPolicy):
        raise TypeError(f"policy {name!r} does not explain its moves")
    return policy


def get_policy(name: str, seed: int | str | None = None) -> Policy:
    """A new policy ``name`` seeded with ``seed``; ``KeyError`` names the known policies."""
    try:
        factory = POLICIES[name]
    except KeyError:
        known = ", ".join(sorted(POLICIES))
        raise KeyError(f"unknown policy {name!r}; known: {known}") from None
    return factory(seed)


__all__ = [
    "HINT_POLICY",
    "ExpertParams",
    "ExpertPolicy",
    "POLICIES",
    "Choice",
    "ExplainingPolicy",
    "GreedyPolicy",
    "Policy",
    "RandomPolicy",
    "StrongParams",
    "StrongPolicy",
    "Notation",
    "autoplay_move",
    "explaining_policy",
    "get_policy",
]
