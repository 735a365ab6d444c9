"""``hint``: the engine's advice for the seat (``tongits.engine.advice``), shown as it is.

The moves, their reasons and the counts are the engine's: the reasoning of its strongest policy
that explains itself, counted under the table's options. This module only writes the cards in the
screen's notation (``A♣``, as the hand shows them) and wraps the lines to the log panel.
"""

from __future__ import annotations

import textwrap

from tongits.engine import Card, Move, SeatView
from tongits.engine.advice import advise
from tongits.engine.policies import explaining_policy

_POLICY = explaining_policy()


def hint_lines(view: SeatView, width: int = 78) -> list[str]:
    """The hint for ``view``'s seat, each line at most ``width`` columns."""
    return [
        wrapped
        for line in advise(view, _POLICY).lines(Card.pretty)
        for wrapped in textwrap.wrap(line, width, subsequent_indent="    ")
    ]


def choose_move(view: SeatView) -> Move:
    """The move the hint would suggest first: how the fake session's bots and the tests play."""
    return _POLICY(view)
