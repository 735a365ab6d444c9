"""Server-side bots and timeout auto-play, deciding from a seat's view only.

Both come from ``tongits.engine.policies``; this module only adds the server's default policy
name and the list of names a table may seat.
"""

from __future__ import annotations

from collections.abc import Callable

from tongits.engine import Move, SeatView
from tongits.engine.policies import POLICIES, autoplay_move, get_policy

Policy = Callable[[SeatView], Move]

DEFAULT_POLICY = "greedy"


def policy_names() -> list[str]:
    """The bot policies a table may seat."""
    return sorted(POLICIES)


def make_policy(name: str | None, seed: int | None = None) -> Policy:
    """The decision function of a bot seat; ``KeyError`` names the known policies."""
    return get_policy(name or DEFAULT_POLICY, seed=seed)


def autoplay(view: SeatView) -> Move:
    """The move played for a seat whose turn timed out: fold a call; otherwise draw, then
    discard the highest loose card."""
    return autoplay_move(view)
