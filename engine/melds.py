"""What makes a meld (RULES.md §2) and what a meld on the table will accept (§4 sapaw)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .cards import SET_MASKS, Card, rank_suit_key


class MeldKind(StrEnum):
    SET = "set"
    RUN = "run"


def meld_kind(cards: Sequence[Card]) -> MeldKind | None:
    """``SET`` or ``RUN`` if the distinct ``cards`` form a valid meld, else ``None``.

    A set is 3 or 4 cards of one rank; a run 3 or more cards of one suit in consecutive ranks,
    aces low only (``QKA`` is not a run).
    """
    n = len(cards)
    if n < 3 or len(set(cards)) != n:
        return None
    ranks = sorted(c.rank for c in cards)
    if ranks[0] == ranks[-1]:
        return MeldKind.SET if n <= 4 else None
    suit = cards[0].suit
    if all(c.suit == suit for c in cards) and ranks[-1] - ranks[0] == n - 1:
        return MeldKind.RUN
    return None


def is_meld(cards: Sequence[Card]) -> bool:
    return meld_kind(cards) is not None


def fits(cards: Sequence[Card], card: Card) -> bool:
    """Whether ``card`` may be laid off onto the face-up meld ``cards`` (sorted by rank): a set
    of 3 takes its fourth card; a run grows at either end, never below A or above K."""
    first = cards[0]
    if first.rank == cards[1].rank:
        return len(cards) == 3 and card.rank == first.rank
    if card.suit != first.suit:
        return False
    return card.rank == first.rank - 1 or card.rank == cards[-1].rank + 1


@dataclass(slots=True)
class TableMeld:
    """A meld placed on the table: it keeps its id and owner for the rest of the hand.

    ``laid_off`` maps each card added by sapaw to the seat that added it (§11: public).
    """

    id: int
    owner: int
    cards: list[Card]
    secret: bool = False
    laid_off: dict[Card, int] = field(default_factory=dict)
    accept_mask: int = field(default=0, init=False, repr=False, compare=False)
    """The cards this meld would take now, as a bitmask (kept up to date by ``add``)."""

    def __post_init__(self) -> None:
        self.accept_mask = _accept_mask(self.cards, self.secret)

    @property
    def kind(self) -> MeldKind:
        kind = meld_kind(self.cards)
        assert kind is not None
        return kind

    def accepts(self, card: Card) -> bool:
        return bool(self.accept_mask >> card & 1)

    def copy(self) -> TableMeld:
        """An independent copy (its accept mask is copied, not recomputed: searches copy
        hands by the million)."""
        other = TableMeld.__new__(TableMeld)
        other.id, other.owner, other.secret = self.id, self.owner, self.secret
        other.cards, other.laid_off = list(self.cards), dict(self.laid_off)
        other.accept_mask = self.accept_mask
        return other

    def add(self, card: Card, seat: int) -> None:
        self.cards.append(card)
        self.cards.sort(key=rank_suit_key)
        self.laid_off[card] = seat
        self.accept_mask = _accept_mask(self.cards, self.secret)


def _accept_mask(cards: Sequence[Card], secret: bool) -> int:
    """The cards that ``fits`` the meld ``cards`` (sorted by rank), as a bitmask."""
    if secret or len(cards) < 3:
        return 0
    first, last = int(cards[0]), int(cards[-1])
    if first % 13 == int(cards[1]) % 13:
        if len(cards) != 3:
            return 0
        return SET_MASKS[first] & ~((1 << first) | (1 << int(cards[1])) | (1 << last))
    mask = 0
    if first % 13:
        mask |= 1 << (first - 1)
    if last % 13 != 12:
        mask |= 1 << (last + 1)
    return mask
