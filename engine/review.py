"""A review of one seat's decisions in a hand record: what each move cost in expected chips.

For each decision of the seat (an action it took with more than one legal move), the expert's
search (``policies.expert``) values every legal move from that seat's view *at that moment* —
the same ``SeatView`` the seat had, never a card it could not see — on the same sampled worlds,
so the moves are compared on equal luck. The **loss** of the move played is the best value less
its value (never negative). A reason in a few words goes with each costly decision.

Deterministic for a given seed and budget: every decision's worlds come from
``random.Random(f"review/{seed}/{seat}/{index}")``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .hand import End, Phase
from .moves import Action, Move
from .policies.expert import Search
from .policies.worlds import InferenceParams
from .record import HandRecord
from .view import SeatView, seat_view
from .wire import DecisionMap, SeatReviewMap

DEFAULT_WORLDS = 48  # worlds per legal move of each decision (``--budget``)
COSTLY = 0.5  # a decision losing at least this many expected chips is marked


@dataclass(frozen=True, slots=True)
class Decision:
    """One graded decision. ``values`` maps every legal move (command form) to its expected
    chips for the seat."""

    index: int  # counts the seat's decisions from 0
    action_index: int  # the action's place in the hand record
    turn: int
    played: Move
    best: Move
    loss: float
    values: dict[str, float]
    reason: str

    def to_dict(self) -> DecisionMap:
        return {
            "index": self.index,
            "played": self.played.to_dict(),
            "best": self.best.to_dict(),
            "loss": round(self.loss, 3),
            "values": {k: round(v, 3) for k, v in self.values.items()},
        }


@dataclass(frozen=True, slots=True)
class SeatReview:
    seat: int
    decisions: tuple[Decision, ...]

    @property
    def total_loss(self) -> float:
        return sum(d.loss for d in self.decisions)

    def worst(self, n: int = 3) -> list[Decision]:
        """The ``n`` costliest decisions with a loss, costliest first."""
        costly = [d for d in self.decisions if d.loss > 0]
        return sorted(costly, key=lambda d: (-d.loss, d.index))[:n]

    def to_dict(self) -> SeatReviewMap:
        return {
            "seat": self.seat,
            "decisions": [d.to_dict() for d in self.decisions],
            "total_loss": round(self.total_loss, 3),
        }


def decision_points(record: HandRecord, seat: int) -> list[tuple[int, SeatView, Move]]:
    """Each decision of ``seat``: (its action's place in the record, the seat's view just before
    it, the move it played). Raises ``ReplayError`` if the record does not replay."""
    record.replay()  # every action is then a legal move of a valid seat
    hand = record.replay(upto=0)
    out = []
    for i, action in enumerate(record.actions):
        move = Move.from_dict(action)
        if action["seat"] == seat:
            view = seat_view(hand, seat)
            if len(view.legal) > 1:
                out.append((i, view, move))
        hand.apply(action["seat"], move)
    return out


def decisions_seen(
    views: Sequence[SeatView], final: SeatView
) -> list[tuple[int, SeatView, Move]]:
    """Decision points from the views a seat was sent during a hand (as a client keeps them)
    and the final view of the hand: each view with more than one legal move, and the move the
    seat then played (the step of the final history at that view's history length)."""
    history = final.history
    out: list[tuple[int, SeatView, Move]] = []
    seen: set[int] = set()
    for view in views:
        at = len(view.history)
        if len(view.legal) < 2 or at in seen or at >= len(history):
            continue
        step = history[at]
        if step.seat != view.seat:
            continue
        seen.add(at)
        out.append((at, view, step.move))
    return out


def review_seat(
    record: HandRecord,
    seat: int,
    *,
    worlds: int = DEFAULT_WORLDS,
    seed: int | str = 0,
    progress: Callable[[int, int], None] | None = None,
) -> SeatReview:
    """Grade every decision of ``seat`` in ``record``; ``progress(done, total)`` after each."""
    return review_decisions(
        seat, decision_points(record, seat), worlds=worlds, seed=seed, progress=progress
    )


def review_decisions(
    seat: int,
    points: Sequence[tuple[int, SeatView, Move]],
    *,
    worlds: int = DEFAULT_WORLDS,
    seed: int | str = 0,
    progress: Callable[[int, int], None] | None = None,
) -> SeatReview:
    """Grade each (place, view, move played) of ``seat``: every legal move of the view is
    valued on the same ``worlds`` sampled worlds."""
    decisions = []
    for index, (action_index, view, played) in enumerate(points):
        rng = random.Random(f"review/{seed}/{seat}/{index}")
        search = Search(view, rng, InferenceParams())
        values = {v.move: v.mean for v in search.values(view.legal, worlds)}
        best = max(view.legal, key=lambda m: values[m])
        if values.get(played, float("-inf")) >= values[best]:
            best = played
        loss = max(0.0, values[best] - values.get(played, values[best]))
        reason = _reason(search, view, played, best, loss) if loss > 0 else ""
        decisions.append(
            Decision(
                index,
                action_index,
                view.turn,
                played,
                best,
                loss,
                {str(m): v for m, v in values.items()},
                reason,
            )
        )
        if progress is not None:
            progress(index + 1, len(points))
    return SeatReview(seat, tuple(decisions))


def _reason(search: Search, view: SeatView, played: Move, best: Move, loss: float) -> str:
    """Why ``best`` beats ``played``, in a few words, from what the rollouts showed."""
    world = search.world(0).copy()
    seat = search.seat
    world.apply(seat, best)
    if world.over and world.result is not None and world.result.end is End.TONGITS:
        return f"a Tongits was available ({best})"
    if played.action is Action.DISCARD and played.card is not None:
        fed = search.share_fed(played)
        if fed >= 0.5:
            card = played.card.pretty()
            return f"you threw the {card} that the next player could pick into a meld"
    if played.action is Action.CALL:
        return "the call was likely to lose to a challenger"
    if played.action is Action.FOLD:
        return "challenging the call would likely have won"
    if played.action is Action.CHALLENGE:
        return "the caller likely counted lower: folding cost less"
    if best.action is Action.CALL:
        return "calling would likely have won the hand now"
    if best.action is Action.PICK and played.action is Action.DRAW:
        return f"picking the {view.top.pretty() if view.top else 'discard'} would have melded it"
    if view.phase is Phase.PLAY and best.action in (Action.MELD, Action.SECRET, Action.SAPAW):
        return f"{best} first was worth {loss:.1f} chips more"
    return f"{best} was worth {loss:.1f} chips more"
