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

#: Policies that think long enough to hold up every other table if they decided on the event
#: loop (the expert: about 0.1 s of CPU a decision): a table has them decide in a worker
#: thread (``clock.Clock.think``).
SLOW_POLICIES = frozenset({"expert"})


def policy_names() -> list[str]:
    """The bot policies a table may seat."""
    return sorted(POLICIES)


def make_policy(name: str | None, seed: int | None = None) -> Policy:
    """The decision function of a bot seat; ``KeyError`` names the known policies."""
    return get_policy(name or DEFAULT_POLICY, seed=seed)


def warm() -> None:
    """Build a bot of each slow policy once, before the server serves anyone: the expert deals
    its rollouts' tables in its first construction in a process (about 0.2 s of CPU), which
    on the event loop held every table up while the first table seating one was made."""
    for name in SLOW_POLICIES:
        get_policy(name)


def is_slow(name: str | None) -> bool:
    """Whether the policy ``name`` decides in a worker thread (``SLOW_POLICIES``)."""
    return (name or DEFAULT_POLICY) in SLOW_POLICIES


def decide(policy: Policy, view: SeatView) -> Move | Exception:
    """``policy(view)``, or the exception it raised (returned: a worker thread hands it back
    to the table, which plays for a failed bot as it does on the event loop)."""
    try:
        return policy(view)
    except Exception as exc:  # noqa: BLE001 - the table logs it and plays for the bot
        return exc


def autoplay(view: SeatView) -> Move:
    """The move played for a seat whose turn timed out: fold a call; otherwise draw, then
    discard the highest loose card."""
    return autoplay_move(view)
