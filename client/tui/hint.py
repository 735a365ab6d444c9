"""``hint``: advice computed locally from the seat's own view and nothing else.

The best arrangement of the hand and its count come from the engine (RULES.md §7); the
suggested acquisition, plays and discard are the choices that lower that count most, taken
only from ``view.legal``. The call advice is a rule of thumb, said with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tongits.engine import Action, Arrangement, Card, Move, Phase, SeatView, best_arrangement
from tongits.engine.count import hand_count

CALL_AT_MOST = 7  # a count this low usually wins a call
CHALLENGE_AT_MOST = 9  # a caller rarely holds more than this


@dataclass(frozen=True, slots=True)
class Hint:
    arrangement: Arrangement
    moves: tuple[Move, ...]  # what to play now, in order (may be empty)
    advice: str  # one line about calling / answering / what comes next

    @property
    def count(self) -> int:
        return self.arrangement.count

    def lines(self) -> list[str]:
        a = self.arrangement
        melds = "  ".join("[" + " ".join(str(c) for c in m) + "]" for m in a.melds) or "none"
        dead = " ".join(str(c) for c in a.deadwood) or "none"
        out = [f"best: {melds}  loose: {dead}  count {a.count}"]
        if self.moves:
            out.append("suggest: " + " · ".join(str(m) for m in self.moves))
        out.append(self.advice)
        return out


def _count_without(hand: Iterable[Card], used: Iterable[Card]) -> int:
    gone = set(used)
    return hand_count(c for c in hand if c not in gone)


def best_discard(hand: tuple[Card, ...], legal: Iterable[Move]) -> Move | None:
    """The legal discard leaving the lowest count; ties shed the higher card."""
    cards = [m.card for m in legal if m.action is Action.DISCARD and m.card is not None]
    if not cards:
        return None
    return Move.discard(min(cards, key=lambda c: (_count_without(hand, [c]), -c.points, -c.rank)))


def best_pick(hand: tuple[Card, ...], legal: Iterable[Move]) -> Move | None:
    """The legal pick (into a new meld) that leaves the lowest count, if any."""
    picks = [m for m in legal if m.action is Action.PICK and m.cards]
    if not picks:
        return None
    return min(picks, key=lambda m: (_count_without(hand, m.cards), -len(m.cards)))


def plays(hand: tuple[Card, ...], legal: Iterable[Move]) -> list[Move]:
    """The melds of the best arrangement that may be laid now, then lay-offs of loose cards."""
    legal = list(legal)
    arrangement = best_arrangement(hand)
    out: list[Move] = []
    for meld in arrangement.melds:
        move = Move(Action.MELD, meld)
        if move in legal:
            out.append(move)
    used: set[Card] = set()
    for m in legal:
        card = m.card
        if m.action is Action.SAPAW and card in arrangement.deadwood and card not in used:
            out.append(m)
            used.add(card)
    return out


def hint_for(view: SeatView) -> Hint:
    hand = view.hand
    arrangement = best_arrangement(hand)
    legal = view.legal
    seat = view.seat
    count = arrangement.count
    moves: list[Move] = []
    if seat is None:
        return Hint(arrangement, (), "you are watching: no advice")
    if view.phase is Phase.OVER:
        advice = "the hand is over"
    elif view.phase is Phase.ANSWER and legal:
        if count <= CHALLENGE_AT_MOST:
            moves.append(Move(Action.CHALLENGE))
            advice = f"challenge: your count {count} may beat the caller"
        else:
            moves.append(Move(Action.FOLD))
            advice = f"fold: a caller rarely holds more than {CHALLENGE_AT_MOST}, you hold {count}"
    elif view.phase is Phase.START and legal:
        call = Move(Action.CALL)
        if call in legal and count <= CALL_AT_MOST:
            moves.append(call)
            advice = f"call: your count {count} is low"
        else:
            pick = best_pick(hand, legal)
            if pick is not None:
                moves.append(pick)
            else:
                moves.append(Move(Action.DRAW))
            if call in legal:
                advice = f"calling is risky with count {count} (wise at {CALL_AT_MOST} or less)"
            elif not view.opened[seat]:
                advice = "you cannot call yet: lay a meld first"
            elif view.blocked[seat]:
                advice = "you cannot call this turn: a sapaw blocked you"
            else:
                advice = "draw or pick"
    elif view.phase is Phase.PLAY and legal:
        moves.extend(plays(hand, legal))
        after = set(hand)
        for m in moves:
            after.difference_update(m.cards)
            if m.card is not None:
                after.discard(m.card)
        discard = (
            best_discard(tuple(sorted(after)), [m for m in legal if m.card in after])
            if after
            else None
        )
        if discard is not None:
            moves.append(discard)
        advice = (
            "lay melds to open your hand (unopened hands are burned)"
            if not view.opened[seat] and not any(m.action is Action.MELD for m in moves)
            else (f"then discard; count now {count}")
        )
    else:
        advice = f"wait for your turn; count {count}"
    return Hint(arrangement, tuple(moves), advice)


def choose_move(view: SeatView) -> Move:
    """A simple player built on the hint: what a bot of the fake session plays."""
    hint = hint_for(view)
    legal = view.legal
    for move in hint.moves:
        if move in legal:
            return move
    discard = best_discard(view.hand, legal)
    if discard is not None:
        return discard
    return legal[0]
