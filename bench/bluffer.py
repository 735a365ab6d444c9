"""``bluffer``: a seat that calls at every chance, whatever its count, and plays as ``strong``
otherwise. It measures how a bot answers calls: against bots that fold to almost any call it
wins chips, against bots that weigh a call by what the caller may hold it loses.

    tongits arena --bots py:bench/bluffer.py:make,strong,strong --hands 300 --seed b1

Not a shipped bot: it exists to test the others (``tests/test_policies.py`` plays it too).
"""

from __future__ import annotations

from tongits.engine import Action, Move, SeatView
from tongits.engine.policies import Policy, get_policy

CALL = Move(Action.CALL)


class Bluffer:
    """Calls whenever ``call`` is legal; otherwise the ``strong`` bot's move."""

    name = "bluffer"

    def __init__(self, seed: int | str | None = None) -> None:
        self.strong = get_policy("strong", seed)

    def __call__(self, view: SeatView) -> Move:
        return CALL if CALL in view.legal else self.strong(view)


def make(seed: int | str | None = None) -> Policy:
    """The arena's factory (``py:bench/bluffer.py:make``)."""
    return Bluffer(seed)
