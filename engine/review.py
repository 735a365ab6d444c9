"""A review of one seat's decisions in a hand record: what each move cost in expected chips.

For each decision of the seat (an action it took with more than one legal move), the expert's
search (``policies.expert.search``: the hint's own search, on the same worlds, seeded by the
position) runs from that seat's view *at that moment* — the same ``SeatView`` the seat had,
never a card it could not see — and names the best move. When that is not the move played,
the moves it searched and the move played are valued again on ``CONFIRM_WORLDS`` fresh worlds
of the position, all of them on the same worlds, so they are compared on equal luck: the worlds
that chose the best would flatter it (a move picked for its lucky worlds). The **loss** of the
move played is the best value less its value (never negative), with the half-width of its
95 % interval (``margin``): only a loss beyond that noise is marked costly. A Tongits available
this turn is named as one (the melds that begin it all end the same, and the search would name
the first of them). A reason in a few words goes with each costly decision.

The review takes no seed: its worlds are the hint's (seeded by the position alone), so the best
move of a decision is the hint's move for that position, and the marks of a hand are a function
of its record and the budget. With a seed of the user's, a search picking between near-equal
moves named another best move for some seeds, and a costly mark came and went with it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from .hand import End, Phase
from .moves import Action, Move
from .options import Scoring
from .policies.expert import (
    DEFAULT_BUDGET,
    ExpertParams,
    Search,
    search,
    tongits_line,
    world_rng,
)
from .record import HandRecord
from .view import SeatView, seat_view
from .wire import DecisionMap, SeatReviewMap

COSTLY = 0.25  # marked: a loss that exceeds its margin of noise by at least this many chips
CONFIRM_WORLDS = 192  # a loss is measured again on this many fresh worlds


@dataclass(frozen=True, slots=True)
class Decision:
    """One graded decision. ``values`` maps each valued move (command form: the moves the
    search kept, the best and the move played) to its expected chips for the seat, over the
    same worlds. ``margin`` is the half-width of the 95 % interval of the loss (the spread of
    the best's gain over the move played, world by world): a loss within it is noise.
    ``tongits``: the seat could go out this turn, and ``best`` begins that Tongits."""

    index: int  # counts the seat's decisions from 0
    action_index: int  # the action's place in the hand record
    turn: int
    played: Move
    best: Move
    loss: float
    margin: float
    values: dict[str, float]
    reason: str
    tongits: bool = False

    @property
    def costly(self) -> bool:
        """Marked ``!``: the loss exceeds the search's own noise (``margin``) by ``COSTLY``
        chips or more. A loss inside its noise changes with the worlds dealt; marking every
        loss of half a chip marked different decisions for different deals of the worlds."""
        return self.loss - self.margin >= COSTLY

    def to_dict(self) -> DecisionMap:
        return {
            "index": self.index,
            "played": self.played.to_dict(),
            "best": self.best.to_dict(),
            "loss": round(self.loss, 3),
            "margin": round(self.margin, 3) if math.isfinite(self.margin) else None,
            "costly": self.costly,
            "tongits": self.tongits,
            "values": {k: round(v, 3) for k, v in self.values.items()},
        }


class Blame(Enum):
    """What a lost hand is put down to: the deal, when the seat's decisions cost (in expected
    chips) less than half of what it lost, else its decisions. A bot's author read "-10 chips"
    beside "total expected loss: 0.79 chips" and could not tell whether to change the bot."""

    DEAL = "deal"
    DECISIONS = "decisions"


@dataclass(frozen=True, slots=True)
class SeatReview:
    seat: int
    decisions: tuple[Decision, ...]

    @property
    def total_loss(self) -> float:
        return sum(d.loss for d in self.decisions)

    def blame(self, chips: int) -> Blame | None:
        """What the hand the seat ended with ``chips`` was lost to; None when it lost
        nothing."""
        if chips >= 0:
            return None
        return Blame.DEAL if self.total_loss < -chips / 2 else Blame.DECISIONS

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
    budget: int = DEFAULT_BUDGET,
    progress: Callable[[int, int], None] | None = None,
) -> SeatReview:
    """Grade every decision of ``seat`` in ``record``; ``progress(done, total)`` after each."""
    return review_decisions(
        seat, decision_points(record, seat), budget=budget, progress=progress
    )


def review_decisions(
    seat: int,
    points: Sequence[tuple[int, SeatView, Move]],
    *,
    budget: int = DEFAULT_BUDGET,
    progress: Callable[[int, int], None] | None = None,
) -> SeatReview:
    """Grade each (place, view, move played) of ``seat``: the expert's search of the view (the
    hint's, ``policies.expert.search``) names the best move; then the searched moves and the
    move played are valued on the worlds the best was played on."""
    params = ExpertParams(budget=budget)
    decisions = []
    for index, (action_index, view, played) in enumerate(points):
        decisions.append(_grade(index, action_index, view, played, params))
        if progress is not None:
            progress(index + 1, len(points))
    return SeatReview(seat, tuple(decisions))


def _grade(
    index: int,
    action_index: int,
    view: SeatView,
    played: Move,
    params: ExpertParams,
) -> Decision:
    searched = search(view, params)
    found, ranked = searched.search, searched.values
    line = tongits_line(view)
    worlds = ranked[0].worlds
    first = (line[0],) if line is not None else ()
    moves = list(dict.fromkeys((*first, *(v.move for v in ranked), played)))
    known = {v.move: v.chips for v in ranked if v.worlds == worlds}
    chips = {m: known.get(m) or found.chips(m, worlds) for m in moves}
    values = {m: statistics.fmean(c) for m, c in chips.items()}
    best = moves[0]  # the hint's move: the Tongits, else the search's choice
    if values[played] >= values[best]:
        best = played
    if best != played:  # the loss is measured again, on fresh worlds of the position alone
        confirm = Search(view, world_rng(view, "confirm"), params.inference)
        worlds = CONFIRM_WORLDS
        chips = {m: confirm.chips(m, worlds) for m in moves}
        values = {m: statistics.fmean(c) for m, c in chips.items()}
    diffs = [b - p for b, p in zip(chips[best], chips[played], strict=True)]
    loss = max(0.0, statistics.fmean(diffs))
    margin = 1.96 * statistics.stdev(diffs) / math.sqrt(worlds) if worlds > 1 else math.inf
    reason = ""
    if line is not None and loss > 0:
        reason = "a Tongits was available (" + " · ".join(map(str, line)) + ")"
    elif loss > 0:
        reason = _reason(found, view, played, best, loss)
    return Decision(
        index,
        action_index,
        view.turn,
        played,
        best,
        loss,
        margin,
        {str(m): v for m, v in values.items()},
        reason,
        line is not None and best == line[0],
    )


#: Why a call, or an answer to one, was the worse move.
_CALL_REASONS = {
    Action.CALL: "the call was likely to lose to a challenger",
    Action.FOLD: "challenging the call would likely have won",
    Action.CHALLENGE: "the caller likely counted lower: folding cost less",
}


def _kept_meld(played: Move, scoring: Scoring) -> str:
    """Why a meld was worth keeping in hand (RULES.md §7, §9, §4): concealed it counts nothing
    either, a four of a kind concealed earns 3 chips, and a meld on the table takes the others'
    lay-offs. "discard Qc was worth 0.7 chips more" told the author of a bot that melds
    everything nothing it could change."""
    cards = " ".join(card.pretty() for card in played.cards)
    if len(played.cards) == 4 and len({card.rank for card in played.cards}) == 1:
        paid = "3 chips from each loser if you win" if scoring is Scoring.PAYMENTS else "3 chips"
        return f"{cards} kept in hand counts nothing either and earns {paid}"
    return f"{cards} kept in hand counts nothing either; face up it takes others' lay-offs"


def _reason(
    search: Search,
    view: SeatView,
    played: Move,
    best: Move,
    loss: float,
) -> str:
    """Why ``best`` beats ``played``, in a few words, from what the rollouts showed."""
    world = search.world(0).copy()
    world.apply(search.seat, best)
    if world.over and world.result is not None and world.result.end is End.TONGITS:
        return f"a Tongits was available ({best})"
    if played.action is Action.DISCARD and played.card is not None:
        fed = search.share_fed(played)
        if fed >= 0.5:
            card = played.card.pretty()
            return f"you threw the {card} that the next player could pick into a meld"
    if played.action in _CALL_REASONS:
        return _CALL_REASONS[played.action]
    if best.action is Action.CALL:
        return "calling would likely have won the hand now"
    if best.action is Action.PICK and played.action is Action.DRAW:
        return f"picking the {view.top.pretty() if view.top else 'discard'} would have melded it"
    if played.action is Action.MELD and best.action not in (Action.MELD, Action.SECRET) \
            and not view.options.concealed_melds_count:
        return _kept_meld(played, view.options.scoring)
    if view.phase is Phase.PLAY and best.action in (Action.MELD, Action.SECRET, Action.SAPAW):
        return f"{best} first was worth {loss:.1f} chips more"
    return f"{best} was worth {loss:.1f} chips more"
