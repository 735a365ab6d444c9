"""What differs between kinds of tables: where their hands come from and who plays a seat.

A ``Table`` takes one ``Dealing``, which its parts ask at the few points where a lobby's table,
a rated ladder match's (``ladder/ladder_dealing.py``) and the arena's own (``arena.py``)
differ. Five hooks every dealing says for itself (abstract here): the entry that deals each
hand, when the next hand is dealt, when the table is deserted, what its clock does when it runs
out, and what a human's turn run out means. Every other hook has a default here, a lobby
table's, written once and documented on the hook: a dealing overrides only what it changes
(the ladder: who sits in for a seat left before the start, what a lost seat means, what the
end does; the arena: its programs' seats, the hands it reports), and a hook added for a new
kind of table enters with its default, so no other dealing spells it out.

``MatchDealing`` is a lobby table's: the match deals from its seed, every seat is played by
whoever sits in it, and the table closes once nobody is at it.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from tongits.protocol import Join

from .entries import DealEntry, StartEntry

if TYPE_CHECKING:
    from tongits.engine import Hand

    from ..net.peer import Peer
    from .parts import TableParts


#: ``Dealing.watching``'s default, made once (a ``nullcontext`` holds nothing, and a move
#: is read at every action).
_UNWATCHED: AbstractContextManager[None] = contextlib.nullcontext()

class Dealing(ABC):
    """How a table deals, and who plays its seats (the table's parts call it; it may call
    them back)."""

    __slots__ = ()

    # ----- what every dealing says for itself ----------------------------------------------

    @abstractmethod
    def entry(self, kind: type[StartEntry | DealEntry]) -> StartEntry | DealEntry | None:
        """The ``start`` or ``deal`` entry of the next hand; None: there is none."""

    @abstractmethod
    def deal_if_ready(self) -> None:
        """A hand is over, or someone asked for the next one or left: deal when it is time."""

    @abstractmethod
    def deserted(self) -> bool:
        """Whether the table closes now for want of anyone at it."""

    @abstractmethod
    def wake(self) -> None:
        """The table's clock ran out (``Clock.wake_at``)."""

    def paused(self) -> bool:
        """Whether the table waits for its players: no move is made, no timer runs (the grace
        periods of disconnected humans but run out). By default never."""
        return False

    @abstractmethod
    def timed_out(self, seat: int) -> None:
        """The human of ``seat`` let its turn run out."""

    # ----- around the match: nothing more by default -----------------------------------------

    def opened(self) -> None:  # noqa: B027 - a default: nothing
        """The table's task starts (before any request is taken)."""

    def dealt(self) -> None:  # noqa: B027 - a default: nothing
        """A hand was dealt, and has not gone out yet."""

    def hand_over(self, hand: Hand) -> None:  # noqa: B027 - a default: nothing
        """``hand`` ended; its result has not gone out yet."""

    # ----- who plays a seat: whoever sits in it, by default -----------------------------------

    def offers(self, seat: int) -> bool:
        """Whether the connection at ``seat`` is the one that plays it (is offered moves);
        by default it is."""
        return True

    def offered(self, seat: int) -> None:  # noqa: B027 - a default: nothing
        """A state offering ``seat`` its moves went out (if ``offers(seat)``)."""

    def watching(self, seat: int) -> AbstractContextManager[None]:
        """Around a move asked by the connection at ``seat`` (``Progression.move_request``
        plays it): entered before the move is checked and played (raising refuses it), exited
        once it was played, or with the refusal that the move met. By default it does nothing."""
        return _UNWATCHED

    def join(self, peer: Peer, msg: Join) -> bool:
        """``peer`` asks to join: True if the dealing seated it; by default the table does
        (``Seating.join``)."""
        return False

    def left(self, seat: int | None, *, disconnected: bool) -> None:  # noqa: B027 - a default: nothing
        """The connection at ``seat`` (None: a spectator, or nobody) left it or dropped; the
        table has already done what it does then (``Seating.leave``)."""

    # ----- the match as a result: not rated, by default ---------------------------------------

    def listed(self) -> bool:
        """Whether ``list_tables`` shows the table; by default it does."""
        return True

    def forfeits(self) -> list[int]:
        """The seats that forfeited the match so far (``match_over.forfeits``); by default
        none: a seat lost means no more than its stand-in."""
        return []

    def vacated(self, seat: int, name: str) -> bool:
        """The human ``name`` left ``seat`` (or stayed away too long) before the match, and the
        seat is free: True if the dealing sat someone in it (a stand-in); by default False, the
        seat stays free for whoever joins."""
        return False

    def forfeited(self, seat: int) -> None:  # noqa: B027 - a default: nothing
        """The player of ``seat`` lost it during the match: it left, or its grace ran out (a
        stand-in plays it now)."""

    def ended(self) -> None:  # noqa: B027 - a default: nothing
        """The table closed for good (its match over, deserted, or closed by the host); called
        once, in the step that closed it, before anything that step said goes out. By default
        nothing is rated."""


class _Deals(Protocol):
    def deal(self) -> None: ...

    def wake(self) -> None: ...

    def autoplay(self, seat: int) -> None: ...


class _Present(Protocol):
    @property
    def seat_peers(self) -> list[Peer | None]: ...

    @property
    def spectators(self) -> set[Peer]: ...

    def empty(self) -> bool: ...


class MatchHost(Protocol):
    """What ``MatchDealing`` asks of its table besides its ``TableParts``: who is at it, and
    its match to deal and wake (parts made after the dealing)."""

    @property
    def audience(self) -> _Present: ...

    @property
    def progression(self) -> _Deals: ...


class MatchDealing(Dealing):
    """A lobby table's ``Dealing``: hands are dealt from the match's seed when every
    connected human asked for the next one (or the turn timer runs out), every seat is played
    by whoever sits in it, and the table closes once nobody is at it and no human may come
    back to it.

    Once every human who may come back has been away longer than the grace period (a phone
    that locked its screen, a router restarting, all the friends at once) and nobody watches,
    the table waits for them (``paused``): its bots and stand-ins make no move and no timer
    runs, so that the match is neither played out by bots nor closed under a player who comes
    back in five minutes.
    ``waits`` False (the ladder: an account away too long forfeits, and its rated match plays
    on) keeps the table playing."""

    __slots__ = ("parts", "table")

    #: whether the table waits for humans who are away (``paused``) rather than playing on
    waits = True

    def __init__(self, parts: TableParts, table: MatchHost) -> None:
        self.parts = parts
        self.table = table

    def entry(self, kind: type[StartEntry | DealEntry]) -> StartEntry | DealEntry:
        return kind()

    def deal_if_ready(self) -> None:
        """After a hand, deal once every connected human has asked for the next one (with no
        human connected, the turn timer deals)."""
        peers = self.table.audience.seat_peers
        if not self.parts.state.hand_over or all(p is None for p in peers):
            return
        ready = self.parts.ready
        if all(p is None or s in ready or p.auto_next for s, p in enumerate(peers)):
            self.table.progression.deal()

    def deserted(self) -> bool:
        """A table closes once no human is connected to a seat, nobody watches, and no seat
        waits for its human: within the grace period, or (``waits``) for as long as the seat's
        token may bring its human back (a stand-in plays it meanwhile)."""
        return (self.table.audience.empty() and not self.parts.clock.away_until
                and not (self.waits and self._returnable()))

    def paused(self) -> bool:
        """Nobody is at the table (no human connected to a seat, nobody watching: a spectator
        sees the match play on), every human away has run out of grace (the table plays on
        meanwhile, an away human's turns on the timer), and one may come back (``waits``)."""
        audience = self.table.audience  # asked at every schedule: someone at it answers at once
        if audience.spectators or any(audience.seat_peers):
            return False
        return self.waits and not self.parts.clock.away_until and self._returnable()

    def _returnable(self) -> bool:
        """Some seat's human may come back with its token (away, or a stand-in plays it)."""
        return any(seat is not None and seat.token_hash for seat in self.parts.state.seats)

    def wake(self) -> None:
        self.table.progression.wake()

    def timed_out(self, seat: int) -> None:
        self.table.progression.autoplay(seat)
