"""Advice for one seat from its own view: the ``hint`` of the terminal client.

The moves and the reasons are those of the strongest policy that explains itself
(``policies.HINT_POLICY``): for the seat to act, what that policy would play for the rest of the
turn, tried one after the other on ``SeatView.position()``, each with its reason, and the count
they leave. Counts follow the table's options (``concealed_melds_count``). Cards are written in
the reader's notation (``Advice.lines(Card.pretty)`` for the screen).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .count import Arrangement, best_arrangement
from .errors import IllegalMove
from .hand import Phase
from .moves import Action
from .policies import ExplainingPolicy, explaining_policy
from .policies.common import Choice, Notation
from .view import SeatView, seat_view

#: Moves after which the seat's cards are not known yet (a drawn card, a call's outcome).
_UNKNOWN_AFTER = frozenset((Action.DRAW, Action.CALL, Action.CHALLENGE, Action.FOLD))


@dataclass(frozen=True, slots=True)
class Advice:
    """What the hint says: the hand's best arrangement and count now, then the moves to play
    (``steps``, possibly none) and the count they leave (``None`` after a ``draw`` or a call,
    whose outcome is unknown). ``note`` says why there are no steps."""

    arrangement: Arrangement
    count: int
    steps: tuple[Choice, ...] = ()
    count_after: int | None = None
    note: str = ""

    def lines(self, notation: Notation = str, names: Sequence[str] = ()) -> list[str]:
        """The hint's lines, cards in ``notation``, seats by ``names`` (the players' names by
        seat; ``seat N`` without them)."""
        a = self.arrangement
        melds = "  ".join("[" + " ".join(notation(c) for c in m) + "]" for m in a.melds)
        loose = " ".join(notation(c) for c in a.deadwood) or "none"
        out = [f"best: {melds or 'no meld'}  loose: {loose}  count {self.count}"]
        if self.count != a.count:
            out[0] += " (this table counts melds kept in hand)"
        if self.steps:
            plan = " · ".join(step.move.text(notation) for step in self.steps)
            if self.count_after is not None:
                plan += f" → count {self.count_after}"
            out.append("suggest: " + plan)
            out += [
                f"{step.move.text(notation)}: {step.reason(notation, names)}" for step in self.steps
            ]
        if self.note:
            out.append(self.note)
        return out


def advise(view: SeatView, policy: ExplainingPolicy | None = None) -> Advice:
    """The advice for ``view``'s seat (``policy`` defaults to ``HINT_POLICY``)."""
    arrangement = best_arrangement(view.hand)
    count = view.count()
    seat = view.seat
    if seat is None:
        return Advice(arrangement, count, note="you are watching: no advice")
    if view.phase is Phase.OVER:
        return Advice(arrangement, count, note="the hand is over")
    if not view.legal:
        return Advice(arrangement, count, note="wait for your turn")
    policy = policy or explaining_policy()
    position = view.position()
    steps: list[Choice] = []
    current = view
    while True:
        step = policy.decide(current)
        steps.append(step)
        if step.move.action in _UNKNOWN_AFTER:
            return Advice(arrangement, count, tuple(steps))
        try:
            position.apply(seat, step.move)
        except IllegalMove:  # a view that contradicts itself: say no more than this step
            return Advice(arrangement, count, tuple(steps))
        if step.move.action is Action.DISCARD or position.over or position.to_act != seat:
            break
        current = replace(seat_view(position, seat), history=view.history + tuple(position.steps))
    after = position.count(seat)
    return Advice(arrangement, count, tuple(steps), after)
