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
from typing import Protocol

from ..moves import Move
from ..view import SeatView
from .basic import GreedyPolicy, RandomPolicy, autoplay_move
from .expert import ExpertParams, ExpertPolicy
from .strong import StrongParams, StrongPolicy


class Policy(Protocol):
    """A bot: called once per decision with the seat's view, returns one of ``view.legal``."""

    name: str

    def __call__(self, view: SeatView) -> Move: ...


POLICIES: dict[str, Callable[[int | str | None], Policy]] = {
    "random": RandomPolicy,
    "greedy": GreedyPolicy,
    "strong": StrongPolicy,
    "expert": ExpertPolicy,
}


def get_policy(name: str, seed: int | str | None = None) -> Policy:
    """A new policy ``name`` seeded with ``seed``; ``KeyError`` names the known policies."""
    try:
        factory = POLICIES[name]
    except KeyError:
        known = ", ".join(sorted(POLICIES))
        raise KeyError(f"unknown policy {name!r}; known: {known}") from None
    return factory(seed)


__all__ = [
    "ExpertParams",
    "ExpertPolicy",
    "POLICIES",
    "GreedyPolicy",
    "Policy",
    "RandomPolicy",
    "StrongParams",
    "StrongPolicy",
    "autoplay_move",
    "get_policy",
]
