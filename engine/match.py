"""A match: hands in a row with the dealer rule of RULES.md §3, the chip ledger and the ante pot.

Chance is input: every deck comes from ``(seed, hand number)`` through a private
``random.Random``, so a match replays exactly and one hand's deck does not depend on how many
cards earlier hands used.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cards import DECK, Card
from .hand import Hand, Result
from .options import Options
from .wire import MatchMap


def deck_for(seed: int | str, hand_number: int) -> tuple[Card, ...]:
    """The shuffled deck of hand ``hand_number`` (0-based) of the match with ``seed``."""
    cards = list(DECK)
    getrandbits = random.Random(f"tongits/{seed}/{hand_number}").getrandbits
    # ``Random.shuffle(cards)`` written out, draw for draw: it swaps each position ``i`` from
    # the top with a uniform ``j <= i``, which ``Random._randbelow(i + 1)`` draws as ``bits``
    # random bits, again while ``j > i``. Without that method's call per card ``deck_for``
    # takes 7.3 µs, not 10.6 (a training environment deals every hand so);
    # tests/test_engine_rules.py holds it to ``Random.shuffle``.
    for i, bits in _SHUFFLE_STEPS:
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


#: The positions ``deck_for`` swaps, from the top, each with the bits of a draw of 0 to it.
_SHUFFLE_STEPS = tuple((i, (i + 1).bit_length()) for i in reversed(range(1, len(DECK))))


def first_dealer(seed: int | str) -> int:
    return random.Random(f"tongits/{seed}/dealer").randrange(3)


@dataclass(slots=True)
class Match:
    """The running state of a match between seats 0, 1, 2.

    ``ledger`` holds each seat's chips so far, antes and pot winnings included. The pot goes to
    a seat that wins two hands in a row; after that its streak starts again from zero, and a
    hand with no winner breaks every streak (RULES.md §13).
    """

    options: Options
    seed: int | str
    hands_played: int = 0
    dealer: int = -1
    ledger: list[int] = field(default_factory=lambda: [0, 0, 0])
    pot: int = 0
    streak_seat: int | None = None
    streak: int = 0
    wins: list[int] = field(default_factory=lambda: [0, 0, 0])

    def __post_init__(self) -> None:
        if self.dealer < 0:
            self.dealer = first_dealer(self.seed)

    def deal(self) -> Hand:
        """Collect the ante and deal the next hand."""
        ante = self.options.ante
        if ante:
            for seat in range(3):
                self.ledger[seat] -= ante
            self.pot += 3 * ante
        return Hand(deck_for(self.seed, self.hands_played), self.dealer, self.options)

    def settle(self, result: Result) -> int:
        """Book a finished hand; returns the pot chips the winner took (0 if none)."""
        for seat in range(3):
            self.ledger[seat] += result.chips[seat]
        self.hands_played += 1
        winner = result.winner
        if winner is None:
            self.streak_seat, self.streak = None, 0
            return 0
        self.wins[winner] += 1
        self.dealer = winner
        if self.streak_seat == winner:
            self.streak += 1
        else:
            self.streak_seat, self.streak = winner, 1
        if self.streak >= 2 and self.pot:
            taken, self.pot = self.pot, 0
            self.ledger[winner] += taken
            self.streak_seat, self.streak = None, 0
            return taken
        return 0

    def to_dict(self) -> MatchMap:
        return {
            "options": self.options.to_dict(),
            "seed": self.seed,
            "hands_played": self.hands_played,
            "dealer": self.dealer,
            "ledger": list(self.ledger),
            "pot": self.pot,
            "streak_seat": self.streak_seat,
            "streak": self.streak,
            "wins": list(self.wins),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Match:
        return cls(
            Options.from_dict(data["options"]),
            data["seed"],
            data["hands_played"],
            data["dealer"],
            list(data["ledger"]),
            data["pot"],
            data["streak_seat"],
            data["streak"],
            list(data["wins"]),
        )


#: Bounds of a match's declared length (``MatchLength``).
MAX_MATCH_HANDS = 10_000
MAX_MATCH_TARGET = 1_000_000


@dataclass(frozen=True, slots=True)
class MatchLength:
    """How long a match lasts, declared when its table is made: ``hands`` hands, or until a
    seat's chip total reaches ``target`` chips up or down (someone has won or lost that much),
    whichever comes first. Neither: the match is open-ended (it goes on while anyone plays).
    """

    hands: int | None = None
    target: int | None = None

    def __post_init__(self) -> None:
        if self.hands is not None and not 1 <= self.hands <= MAX_MATCH_HANDS:
            raise ValueError(f"hands must be 1 to {MAX_MATCH_HANDS}")
        if self.target is not None and not 1 <= self.target <= MAX_MATCH_TARGET:
            raise ValueError(f"target must be 1 to {MAX_MATCH_TARGET} chips")

    def over(self, match: Match) -> str | None:
        """Why ``match`` is over (``"hands"`` or ``"target"``), or None while it goes on."""
        if self.hands is not None and match.hands_played >= self.hands:
            return "hands"
        if self.target is not None and any(abs(c) >= self.target for c in match.ledger):
            return "target"
        return None

    def to_dict(self) -> dict[str, int]:
        """The declared length, as shown in table info: ``{}`` for an open-ended match."""
        out = {}
        if self.hands is not None:
            out["hands"] = self.hands
        if self.target is not None:
            out["target"] = self.target
        return out
