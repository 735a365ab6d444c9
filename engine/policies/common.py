"""Helpers shared by the policies: counting from a seat's own cards, the meld plan, lay-offs, and
what the public history says about the other seats.

Everything here reads a ``SeatView`` (RULES.md §11) and nothing else; no helper ever sees a
``Hand``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ..cards import DECK, POINTS, Card, mask_of
from ..count import best_arrangement, count_mask, points_of
from ..moves import Action, Move
from ..view import SeatView

Notation = Callable[[Card], str]
"""How a reader writes a card: ``str`` (``Th``, the notation of RULES.md §1) or ``Card.pretty``
(``T♥``, the terminal client's screen)."""


@dataclass(frozen=True, slots=True)
class Choice:
    """A policy's move with the reason for it, for a player to read (the ``hint``).

    ``why`` is one sentence whose ``{}`` fields take ``args``: cards, groups of cards, moves,
    seats (``SeatRef``) and numbers, so the reader chooses how cards are written
    (``reason(Card.pretty)``) and seats are named (``names``: the players' names by seat)."""

    move: Move
    why: str
    args: tuple[object, ...] = ()

    def reason(self, notation: Notation = str, names: Sequence[str] = ()) -> str:
        return self.why.format(*(_written(a, notation, names) for a in self.args))


@dataclass(frozen=True, slots=True)
class SeatRef:
    """A seat named in a reason: written with the player's name when the reader knows it
    (``Choice.reason``), else as ``seat N``."""

    seat: int

    def name(self, names: Sequence[str] = ()) -> str:
        if 0 <= self.seat < len(names) and names[self.seat]:
            return names[self.seat]
        return f"seat {self.seat}"


def _written(arg: object, notation: Notation, names: Sequence[str]) -> str:
    if isinstance(arg, SeatRef):
        return arg.name(names)
    if isinstance(arg, Move):
        return arg.text(notation)
    if isinstance(arg, Card):
        return notation(arg)
    if isinstance(arg, tuple | list) and all(isinstance(c, Card) for c in arg):
        return " ".join(notation(c) for c in arg)
    return str(arg)


@lru_cache(maxsize=1 << 16)
def _count_cached(mask: int) -> int:
    return count_mask(mask)


def count_of(mask: int, *, concealed_melds_count: bool = False) -> int:
    """The count (RULES.md §7) of the cards in ``mask``, memoised across calls."""
    if concealed_melds_count:
        return points_of(mask)
    return _count_cached(mask)


def view_count(view: SeatView, mask: int | None = None) -> int:
    """The count of the seat's hand (or of ``mask``) under the view's table options."""
    return count_of(
        mask_of(view.hand) if mask is None else mask,
        concealed_melds_count=view.options.concealed_melds_count,
    )


def place(view: SeatView, seat: int) -> int:
    """``seat``'s place after the dealer (0: the dealer, 1: the first to play after it)."""
    return (seat - view.dealer) % 3


def position_key(view: SeatView) -> str:
    """The position as the seat sees it, without seat numbers: its place after the dealer,
    its cards, and every move so far by the mover's place. A seeded bot keyed by this decides
    alike wherever it runs: in-process (the arena moves the bots round the seats), behind the
    protocol (there the dealer goes round instead), at a server's table."""
    assert view.seat is not None
    history = " ".join(f"{place(view, step.seat)}:{step.move}" for step in view.history)
    return f"{place(view, view.seat)}/{' '.join(map(str, view.hand))}/{history}"


def find(legal: Sequence[Move], action: Action) -> Move | None:
    return next((m for m in legal if m.action is action), None)


def of_action(legal: Sequence[Move], action: Action) -> list[Move]:
    return [m for m in legal if m.action is action]


def plan_melds(view: SeatView, *, secret_fours: bool = False) -> Move | None:
    """The next meld of the seat's best arrangement that may be placed now, or ``None``.

    With ``secret_fours`` a four-of-a-kind goes down face down (it opens the hand, takes no
    lay-offs and keeps its bonus)."""
    legal = set(view.legal)
    for meld in best_arrangement(view.hand).melds:
        if secret_fours and len(meld) == 4 and meld[0].rank == meld[1].rank:
            secret = Move(Action.SECRET, meld)
            if secret in legal:
                return secret
        move = Move(Action.MELD, meld)
        if move in legal:
            return move
    return None


def useful_lay_off(view: SeatView, *, prefer_others: bool = True) -> Move | None:
    """A legal lay-off that does not raise the seat's count (a card that is deadwood, or the
    spare end of a long concealed run). Lay-offs onto another seat's meld come first when
    ``prefer_others``: they also block that seat's next call (RULES.md §5)."""
    sapaws = of_action(view.legal, Action.SAPAW)
    if not sapaws:
        return None
    hand = mask_of(view.hand)
    now = view_count(view, hand)
    owners = {m.id: m.owner for m in view.melds}
    good = [m for m in sapaws if m.card is not None and view_count(view, hand ^ m.card.bit) <= now]
    if not good:
        return None
    if prefer_others:
        good.sort(key=lambda m: owners.get(m.meld if m.meld is not None else -1) == view.seat)
    return good[0]


def deadwood_discards(view: SeatView) -> list[Move]:
    """Legal discards, the loose (deadwood) cards first, each group highest points first."""
    discards = of_action(view.legal, Action.DISCARD)
    dead = set(best_arrangement(view.hand).deadwood)
    return sorted(
        discards,
        key=lambda m: (m.card not in dead, -POINTS[m.card] if m.card is not None else 0, m.card),
    )


def best_pick(view: SeatView) -> Move | None:
    """The legal pick that leaves the lowest count (then the most cards on the table)."""
    picks = of_action(view.legal, Action.PICK)
    if not picks:
        return None
    hand = mask_of(view.hand)

    def left(m: Move) -> tuple[int, int]:
        return (view_count(view, hand & ~mask_of(m.cards)), -len(m.cards))

    return min(picks, key=left)


@dataclass(slots=True)
class PublicKnowledge:
    """What the public history and the table say about where the cards are, for one seat.

    ``unseen`` holds every card the seat cannot place: the other hands, the stock and the
    other seats' secret melds; ``thrown[s]`` are the cards seat ``s`` discarded, in order.
    """

    seat: int
    unseen: int
    thrown: list[list[Card]] = field(default_factory=lambda: [[], [], []])
    hidden_secrets: list[int] = field(default_factory=lambda: [0, 0, 0])


def public_knowledge(view: SeatView) -> PublicKnowledge:
    """Read the seat's view: the cards it can place, and every seat's discards."""
    assert view.seat is not None
    known = mask_of(view.hand) | mask_of(view.discards)
    secrets = [0, 0, 0]
    for meld in view.melds:
        if meld.cards:
            known |= mask_of(meld.cards)
        else:
            secrets[meld.owner] += 1
    info = PublicKnowledge(view.seat, mask_of(DECK) & ~known, hidden_secrets=secrets)
    for step in view.history:
        card = step.move.card
        if step.move.action is Action.DISCARD and card is not None:
            info.thrown[step.seat].append(card)
    return info


def _meld_neighbours(card: int) -> int:
    """Cards that can share a three-card meld with ``card``: same rank, or same suit within two
    ranks."""
    suit, rank0 = divmod(card, 13)
    mask = 0
    for s in range(4):
        if s != suit:
            mask |= 1 << (s * 13 + rank0)
    for d in (-2, -1, 1, 2):
        if 0 <= rank0 + d < 13:
            mask |= 1 << (suit * 13 + rank0 + d)
    return mask


NEIGHBOURS: tuple[int, ...] = tuple(_meld_neighbours(c) for c in range(52))


@dataclass(frozen=True, slots=True)
class Stakes:
    """What answering a call is worth to one seat (RULES.md §9, ``payments``): ``gain``, the
    chips it wins by winning the challenge (both others pay 3 and its aces); ``caller_aces``,
    the aces in the caller's melds, which it pays on top of 1 chip for a fold or 3 for a lost
    challenge."""

    gain: int
    caller_aces: int

    def challenge_pays(self, p_win: float) -> bool:
        """Whether challenging the caller alone beats folding, with the chance ``p_win`` of
        beating it."""
        lost, folded = 3 + self.caller_aces, 1 + self.caller_aces
        return p_win * self.gain - (1 - p_win) * lost > -folded


def melded_aces(view: SeatView, seat: int) -> int:
    """The aces in ``seat``'s face-up melds (laid-off ones included): what a loser pays it on
    top of the stake if it wins (RULES.md §9)."""
    return sum(c.rank == 1 for m in view.melds if m.owner == seat for c in m.cards)
