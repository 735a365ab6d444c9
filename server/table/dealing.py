"""What differs between kinds of tables: where their hands come from and who plays a seat.

A ``Table`` takes one ``Dealing``, which its parts ask at the few points where a lobby's table
and the arena's own (``server/table/arena.py``) differ: the entry that deals each hand, what happens
around a deal, a move asked for and a hand's end, when the next hand is dealt, when the table
is deserted, what its timers do, whether a seat's connection is the one playing it, who sits in
for a seat left before the start, what a seat lost during the match means, and what the
table's end does.
``MatchDealing`` is a lobby table's (``progression.py``): the match deals from its seed, and every
seat is played by whoever sits in it; ``LadderDealing`` a rated ladder match's
(``ladder/ladder_dealing.py``), ``ArenaDealing`` the arena's (``arena.py``).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from tongits.protocol import Join

from .entries import DealEntry, StartEntry

if TYPE_CHECKING:
    from tongits.engine import Hand

    from ..net.peer import Peer


class Dealing(Protocol):
    """How a table deals, and who plays its seats (the table calls it; it may call the
    table's parts back)."""

    def opened(self) -> None:
        """The table's task starts (before any request is taken)."""

    def entry(self, kind: type[StartEntry | DealEntry]) -> StartEntry | DealEntry | None:
        """The ``start`` or ``deal`` entry of the next hand; None: there is none."""

    def dealt(self) -> None:
        """A hand was dealt, and has not gone out yet."""

    def hand_over(self, hand: Hand) -> None:
        """``hand`` ended; its result has not gone out yet."""

    def deal_if_ready(self) -> None:
        """A hand is over, or someone asked for the next one or left: deal when it is time."""

    def deserted(self) -> bool:
        """Whether the table closes now for want of anyone at it."""

    def wake(self) -> None:
        """The table's clock ran out (``Clock.wake_at``)."""

    def timed_out(self, seat: int) -> None:
        """The human of ``seat`` let its turn run out."""

    def offers(self, seat: int) -> bool:
        """Whether the connection at ``seat`` is the one that plays it (is offered moves)."""

    def offered(self, seat: int) -> None:
        """A state offering ``seat`` its moves went out (if ``offers(seat)``)."""

    def watching(self, seat: int) -> AbstractContextManager[None]:
        """Around a move asked by the connection at ``seat`` (``Progression.move_request``
        plays it): entered before the move is checked and played (raising refuses it), exited
        once it was played, or with the refusal that the move met."""

    def join(self, peer: Peer, msg: Join) -> bool:
        """``peer`` asks to join: True if the dealing seated it, else the table does."""

    def left(self, seat: int | None, *, disconnected: bool) -> None:
        """The connection at ``seat`` (None: a spectator, or nobody) left it or dropped."""

    def listed(self) -> bool:
        """Whether ``list_tables`` shows the table."""

    def forfeits(self) -> list[int]:
        """The seats that forfeited the match so far (``match_over.forfeits``)."""

    def vacated(self, seat: int, name: str) -> bool:
        """The human ``name`` left ``seat`` (or stayed away too long) before the match, and the
        seat is free: True if the dealing sat someone in it (a stand-in), False to leave it
        free for whoever joins."""

    def forfeited(self, seat: int) -> None:
        """The player of ``seat`` lost it during the match: it left, or its grace ran out."""

    def ended(self) -> None:
        """The table closed for good (its match over, deserted, or closed by the host); called
        once, in the step that closed it, before anything that step said goes out."""


class UnratedEnd:
    """The last five hooks of ``Dealing`` for a table whose match is not rated (a lobby's, the
    arena's): listed, no forfeits, a seat left before the start stays free for whoever joins,
    a seat lost during the match means no more than its stand-in, and the end rates nothing.
    ``LadderDealing`` overrides them all."""

    __slots__ = ()

    def listed(self) -> bool:
        return True

    def forfeits(self) -> list[int]:
        return []

    def vacated(self, seat: int, name: str) -> bool:
        return False

    def forfeited(self, seat: int) -> None:
        pass

    def ended(self) -> None:
        pass
