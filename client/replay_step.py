"""``tongits replay FILE --step``: a hand walked through position by position, every card
shown (the hand is over), each decision marked as ``tongits review`` grades it.

The marks are the review's own (``engine.review.review_seat``, the expert's search on the
seat's view at that moment): a decision whose loss exceeds the search's noise by ``COSTLY``
chips (``Decision.costly``) is marked ``!`` with the better move and why, the others ``ok``.
In a terminal the walk is interactive (Enter or ``n`` next, ``p`` back, a number goes to that
action, ``q`` quits); otherwise every position is printed in turn, for a pager or a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from tongits.engine import Card, Hand, HandRecord, Move
from tongits.engine.review import Decision, SeatReview

#: What the prompt of the interactive walk says.
KEYS = "Enter/n next · p back · NUMBER go to action · q quit"


@dataclass(frozen=True, slots=True)
class Mark:
    """The review's word on one action: its decision graded."""

    decision: Decision

    def __str__(self) -> str:
        d = self.decision
        if d.costly:
            return f"! -{d.loss:.2f} chips: {d.best} was better ({d.reason})"
        if d.loss > 0:
            return f"ok (-{d.loss:.2f} chips against {d.best}, within the noise)"
        return "ok (the search's best)"


def marks_of(reviews: Iterable[SeatReview]) -> dict[int, Mark]:
    """Each graded action's mark, by its place in the record."""
    return {d.action_index: Mark(d) for review in reviews for d in review.decisions}


def positions(record: HandRecord) -> list[Hand]:
    """The hand before any action, then after each action of the record."""
    return [record.replay(upto=i) for i in range(len(record.actions) + 1)]


def _cards(cards: Iterable[Card]) -> str:
    return " ".join(card.pretty() for card in sorted(cards)) or "-"


def frame(record: HandRecord, hand: Hand, at: int, marks: dict[int, Mark]) -> str:
    """The position after ``at`` actions: the action just played (and its mark), every
    seat's hand and melds, the pile and the stock, and who is to act."""
    total = len(record.actions)
    lines = []
    if at == 0:
        lines.append(f"deal: {record.name(record.dealer)} deals · action 0/{total}")
    else:
        action = record.actions[at - 1]
        seat = action["seat"]
        lines.append(f"action {at}/{total}: {record.name(seat)} {Move.from_dict(action)}")
        mark = marks.get(at - 1)
        if mark is not None:
            lines.append(f"  review: {mark}")
    width = max(len(record.name(s)) for s in range(3))
    for seat in range(3):
        melds = "  ".join(f"#{m.id} {_cards(m.cards)}" for m in hand.melds if m.owner == seat)
        lines.append(f"  {record.name(seat):<{width}}  count {hand.count(seat):>3}  "
                     f"{_cards(hand.hands[seat])}" + (f"   melds {melds}" if melds else ""))
    top = hand.discards[-1].pretty() if hand.discards else "-"
    lines.append(f"  stock {len(hand.stock)} · discard {top}")
    if hand.result is not None:
        winner = hand.result.winner
        lines.append(f"  over: {hand.result.end.value}, " + (
            f"{record.name(winner)} wins" if winner is not None else "no winner"))
    else:
        lines.append(f"  {record.name(hand.to_act)} to act ({hand.phase.value})")
    return "\n".join(lines)


def walk(record: HandRecord, marks: dict[int, Mark], answers: Iterator[str],
         show: Callable[[str], None]) -> None:
    """The interactive walk: show a position, read an answer, move; ends at ``q`` or when
    the answers run out."""
    hands = positions(record)
    at = 0
    while True:
        show(frame(record, hands[at], at, marks))
        try:
            answer = next(answers).strip().lower()
        except StopIteration:
            return
        if answer in ("q", "quit"):
            return
        if answer == "p":
            at = max(0, at - 1)
        elif answer.isdigit():
            at = min(len(hands) - 1, int(answer))
        elif answer in ("", "n"):
            at = min(len(hands) - 1, at + 1)
        else:
            show(f"? {KEYS}")


def every_frame(record: HandRecord, marks: dict[int, Mark]) -> str:
    """Every position in turn, separated by blank lines."""
    return "\n\n".join(frame(record, hand, at, marks)
                       for at, hand in enumerate(positions(record)))
