"""``hint``: the engine's advice for the seat (``tongits.engine.advice``), shown as it is.

The moves, their reasons and the counts are the engine's: the reasoning of its strongest policy
(``policies.HINT_POLICY``, the expert's search), counted under the table's options. This module
only writes the cards in the screen's notation (``A♣``, as the hand shows them) and wraps the
lines to the log panel. The search takes a noticeable moment, so the screen runs ``hint_lines``
off its event loop (``TableScreen._hint``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from tongits.engine import Card, Move, SeatView
from tongits.engine.advice import advise
from tongits.engine.policies import explaining_policy, get_policy

_POLICY = explaining_policy()
_QUICK = get_policy("strong")


def hint_lines(view: SeatView, names: Sequence[str] = (), width: int = 78) -> list[str]:
    """The hint for ``view``'s seat, each line at most ``width`` columns, seats named by
    ``names`` (the players' names by seat, as the screen shows them); the same view always gets
    the same hint (the policy's search is seeded by the view)."""
    return [
        wrapped
        for line in advise(view, _POLICY).lines(Card.pretty, names)
        for wrapped in textwrap.wrap(line, width, subsequent_indent="    ")
    ]


def hint_move(view: SeatView) -> Move:
    """The first move the hint suggests: the hint policy's own decision."""
    return _POLICY(view)


def choose_move(view: SeatView) -> Move:
    """A good move at once (the ``strong`` bot's, no search): how the fake session's fallback
    bots and the tests play whole hands quickly. The hint searches further (``hint_move``)."""
    return _QUICK(view)
