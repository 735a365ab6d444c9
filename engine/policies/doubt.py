"""How the table reads the searching seat's call: the answers its search imagines to that call.

A seat facing a call cannot see the caller's cards. It guesses them from what the table has seen
(the caller's hand size and throws) and, since a seat mostly calls on a low count, believes a
low count more than a high one; it challenges when that guess makes a challenge worth more than
folding (RULES.md §6.2, §9). The rollouts' own answerers see every card of their world and
challenge exactly when they would win: the worst a caller can meet. Valued against them, a call
looks worse than it is against players who must guess, and the expert called about four times
less often than it used to.

``Doubt`` is that guess, worked out once per decision from the searching seat's view (which
shows what the others see of it): for each count an answerer may hold, the weighted share of the
caller's imagined hands it beats. In a world, an answerer holding that count and its own aces
challenges when the expected chips of a challenge beat a fold's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..cards import POINTS, indices_of, mask_of
from ..hand import Hand
from ..moves import CHALLENGE, FOLD, Action, Move
from ..options import CallTie
from ..view import SeatView
from .common import Stakes, count_of, melded_aces, position_key, public_knowledge
from .worlds import InferenceParams

SAMPLES = 96
"""Imagined hands of the caller per decision (``strong`` reads a caller over as many)."""


@dataclass(frozen=True, slots=True)
class Doubt:
    """How the table answers a call by ``caller``: ``beaten[m]`` is the share of the caller's
    imagined hands (weighted by how likely a seat holding each is to call) that a count of ``m``
    beats in the showdown, for every ``m`` up to the highest imagined count (higher counts beat
    none); ``caller_aces``: the aces in the caller's melds, which a folding or losing seat pays
    on top of its stake."""

    caller: int
    beaten: tuple[float, ...]
    caller_aces: int

    def answer(self, hand: Hand) -> Move:
        """The answer of the seat to act in ``hand`` (a world in which ``caller`` called)."""
        if any(a is Action.CHALLENGE for a in hand.answers.values()):
            return CHALLENGE  # the stake is 3 chips whatever this seat does
        seat = hand.to_act
        cards = hand.hands[seat]
        mine = count_of(mask_of(cards), concealed_melds_count=hand.options.concealed_melds_count)
        aces = sum(c.rank == 1 for c in cards) + sum(
            c.rank == 1 for m in hand.melds if m.owner == seat for c in m.cards
        )
        return CHALLENGE if self.challenges(mine, aces) else FOLD

    def challenges(self, count: int, aces: int = 0) -> bool:
        """Whether a seat holding ``count`` and ``aces`` aces (in hand and in its melds)
        challenges the call, the call not yet challenged."""
        p = self.beaten[count] if count < len(self.beaten) else 0.0
        return Stakes(2 * (3 + aces), self.caller_aces).challenge_pays(p)


def doubt_of(view: SeatView, params: InferenceParams) -> Doubt:
    """How the others read a call by ``view``'s seat now: its hand dealt ``SAMPLES`` times from
    the cards they cannot place (all but the discards and the face-up melds: their own hands are
    not known to the seat, so they stay in), cards above its last throw ``above_throw`` as likely
    (it throws high cards first), each deal weighted 1 if it counts ``caller_cap`` or less, else
    ``bluff_weight``: the reading of ``strong`` (the expert's own worlds, answering a call,
    believe a caller up to ``answer_cap``)."""
    know = public_knowledge(view)
    me = know.seat
    pool = indices_of(know.unseen | mask_of(view.hand))
    k = len(view.hand)
    cap = POINTS[know.thrown[me][-1]] if know.thrown[me] else 10
    power = [1.0 if POINTS[c] <= cap else 1 / params.above_throw for c in range(52)]
    concealed = view.options.concealed_melds_count
    rng = random.Random(f"doubt/{position_key(view)}")
    weighted: list[tuple[int, float]] = []
    for _ in range(SAMPLES):
        keyed = sorted(pool, key=lambda c: rng.random() ** power[c], reverse=True)
        count = count_of(mask_of(keyed[:k]), concealed_melds_count=concealed)
        weighted.append((count, 1.0 if count <= params.caller_cap else params.bluff_weight))
    total = sum(w for _, w in weighted)
    strict = view.options.call_tie is CallTie.CALLER
    top = max(c for c, _ in weighted)
    beaten = tuple(
        sum(w for c, w in weighted if c > m or (not strict and c == m)) / total
        for m in range(top + 1)
    )
    return Doubt(me, beaten, melded_aces(view, me))
