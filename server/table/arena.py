"""The arena's own table: a ``Table`` dealt by ``ArenaDealing``, opened in-process on the
arena's loopback server.

``tongits arena`` with an external (``cmd:``) bot runs a ``Server`` for itself and opens one of
these with ``Lobby.open(entry, make=...)``: a private table whose code only the arena's programs
get. What makes it the arena's, all of it given in-process by an ``ArenaDriver`` (nothing here
is reachable by a request, so no client can choose a deck):

* **its decks**: every ``start``/``deal`` entry carries the deck and dealer of the arena's next
  duplicate deal (``TableLogState`` deals from them instead of the match's seed);
* **in-process bots**: the other seats hold the arena's built-in or ``py:`` policies, a fresh
  one per hand (seeded as in-process arena hands are), played at once (``bot_delay`` 0);
* **measured programs**: for each external seat the table times every decision (from the
  ``state`` that offered moves to the ``move`` that answered it), and counts turn timeouts and
  refused moves;
* **stand-ins**: a program that times out, sends a refused move or disconnects loses its seat
  to a stand-in bot for the rest of the hand; a program that is (still or again) connected
  gets the seat back at the next deal. The stand-in's states offer no moves to the program, and
  a move from it meanwhile is refused. A program that crashed and was restarted by the arena
  joins its seat again with the table's code, even mid-match;
* **its end**: the table deals until the driver has no deal left, reports every hand to the
  driver, and never closes because nobody is connected (the stand-ins play on).

A program that joins too late (``start_timeout`` seconds) finds its seat held by a stand-in from
the first hand; it gets the seat at the next deal after it joins.
"""

from __future__ import annotations

import contextlib
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import trio
from tongits.engine import Card, Hand, SeatView
from tongits.protocol import (
    ErrorCode,
    Join,
    Joined,
    ProtocolError,
    SeatChange,
    to_dict,
)

from . import bots
from .actor import Table
from .dealing import Dealing
from .entries import DealEntry, StartEntry
from .table import SEATS

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..lobby import Lobby
    from ..net.peer import Peer
    from ..storage.commit import GroupCommit
    from .audience import Audience
    from .parts import TableParts
    from .table import TableLogState

#: Timeouts in a row after which a program is reported as hung (the driver may stop it).
HUNG_AFTER = 3
#: In-process moves played in one step of the table at most (a hand has far fewer).
_MAX_BOT_RUN = 200
#: Seconds between two looks at whether a (re)starting program has taken its seat.
POLL = 0.05


@dataclass(slots=True)
class SeatReport:
    """What one seat's player did in one hand: its decisions' durations (its own, not a
    stand-in's), turn timeouts, refused moves, and whether a stand-in played for it."""

    seconds: list[float] = field(default_factory=list)
    timeouts: int = 0
    illegal: int = 0
    stood_in: bool = False


class ArenaDriver(ABC):
    """What the arena gives its table in-process: seats, decks, bots, and where hands go."""

    #: the seats of external programs; every other seat holds an in-process bot
    external: frozenset[int]

    @abstractmethod
    def bot_name(self, seat: int) -> str:
        """The name shown for an in-process seat."""

    @abstractmethod
    def next_deal(self) -> tuple[Sequence[Card], int] | None:
        """The deck and dealer of the next hand; None when the run is over."""

    @abstractmethod
    def more(self) -> bool:
        """Whether ``next_deal`` has another hand."""

    @abstractmethod
    def policy(self, seat: int) -> bots.Policy:
        """The in-process bot of ``seat`` for the hand just dealt."""

    @abstractmethod
    def stand_in(self, seat: int) -> bots.Policy:
        """A stand-in for an external seat."""

    @abstractmethod
    def hand_over(self, hand: Hand, reports: Sequence[SeatReport]) -> None:
        """A hand ended; ``reports[seat]`` says how each seat played it."""

    @abstractmethod
    def expected(self, seat: int) -> bool:
        """Whether the program of ``seat``, not at the table now, is (re)starting and should
        take its seat soon: the table waits for it before dealing (and polls this)."""

    @abstractmethod
    def hung(self, seat: int) -> None:
        """The program of ``seat`` let its turn time out ``HUNG_AFTER`` times in a row."""

    @abstractmethod
    def finished(self) -> None:
        """The last hand is over; the table has closed."""


class _Timed:
    """An in-process bot whose decisions are timed into the current hand's report."""

    def __init__(self, policy: bots.Policy, report: SeatReport) -> None:
        self.policy, self.report = policy, report

    def __call__(self, view: SeatView) -> Any:
        started = time.perf_counter()
        try:
            return self.policy(view)
        finally:
            self.report.seconds.append(time.perf_counter() - started)


class _ArenaSeats(Protocol):
    def sit_named_bot(self, seat: int, name: str, policy: str) -> None: ...

    def give_back(self, seat: int, peer: Peer) -> None: ...

    def take_again(self, peer: Peer, seat: int) -> str: ...

    def stand_in(self, seat: int, *, returnable: bool = False) -> None: ...

    def grace_over(self, seat: int) -> None: ...

    def check_code(self, code: str | None) -> None: ...

    def changed(self, seat: int | None = None, change: SeatChange | None = None) -> None: ...


class _ArenaPlay(Protocol):
    def start(self) -> None: ...

    def deal(self) -> None: ...

    def wake(self) -> None: ...

    def bot_move(self, seat: int) -> None: ...


class ArenaHost(Protocol):
    """What ``ArenaDealing`` asks of its table besides its ``TableParts``: who is at it, its
    seats to fill and give back, and its match to start and to play bots in."""

    @property
    def audience(self) -> Audience: ...

    @property
    def seating(self) -> _ArenaSeats: ...

    @property
    def progression(self) -> _ArenaPlay: ...


class ArenaDealing(Dealing):
    """The arena table's ``Dealing``: the driver's decks, bots and programs (see above)."""

    def __init__(self, parts: TableParts, table: ArenaHost, driver: ArenaDriver,
                 start_timeout: float) -> None:
        self.parts = parts
        self.table = table
        self.driver = driver
        self.start_timeout = start_timeout
        self._start_by = math.inf
        self._reports = [SeatReport() for _ in SEATS]
        self._asked_at: dict[int, float] = {}
        self._late: dict[int, int] = {}
        self._finished = False

    def opened(self) -> None:
        """The in-process bots sit down, and the table looks for its programs at once."""
        table = self.table
        for seat in SEATS:
            if seat not in self.driver.external:
                name = self.driver.bot_name(seat)
                table.seating.sit_named_bot(seat, name, name)
        self._start_by = trio.current_time() + self.start_timeout
        self.parts.clock.turn_at = trio.current_time()

    # ----- decks and hands ------------------------------------------------------------------

    def entry(self, kind: type[StartEntry | DealEntry]) -> StartEntry | DealEntry | None:
        """The driver's next deal; with none left, the table finishes."""
        planned = self.driver.next_deal()
        if planned is None:
            self._finish()
            return None
        deck, dealer = planned
        return kind(tuple(deck), dealer)

    def dealt(self) -> None:
        table = self.table
        self._reports = [SeatReport() for _ in SEATS]
        self._asked_at.clear()
        for seat in SEATS:
            info = self.parts.state.seats[seat]
            if seat not in self.driver.external:
                self.parts.policies[seat] = _Timed(self.driver.policy(seat), self._reports[seat])
            elif info is None or info.is_bot:
                peer = table.audience.seat_peers[seat]
                if peer is not None and peer.token is not None:
                    table.seating.give_back(seat, peer)
                else:
                    self._reports[seat].stood_in = True

    def hand_over(self, hand: Hand) -> None:
        """The hand goes to the driver first: telling the table's players of it goes on to the
        next deal (``deal_if_ready``), or to the end when the driver has none left."""
        self.driver.hand_over(hand, self._reports)

    def deal_if_ready(self) -> None:
        """Deal once every connected program asked for the next hand (at once if none is
        connected: the stand-ins need no turn timer) and no restarted program is on its way."""
        table = self.table
        if self.parts.state.hand_over and all(
            table.audience.seat_peers[s] is None or s in self.parts.ready for s in SEATS
        ):
            self._deal_when_present()

    def _deal_when_present(self) -> None:
        if self._missing():
            self.parts.clock.turn_at = trio.current_time() + POLL
        else:
            self.table.progression.deal()

    def _missing(self) -> bool:
        """Whether a program the arena is (re)starting has yet to take its seat."""
        peers = self.table.audience.seat_peers
        return any(peers[s] is None and self.driver.expected(s) for s in self.driver.external)

    def _finish(self) -> None:
        if not self._finished:
            self._finished = True
            self.parts.clock.turn_at = math.inf
            self.driver.finished()

    def deserted(self) -> bool:
        """Never for want of players (the stand-ins play on): only once the run is over."""
        return self._finished

    # ----- the clock ------------------------------------------------------------------------

    def wake(self) -> None:
        table = self.table
        clock = self.parts.clock
        now, hand = trio.current_time(), self.parts.state.hand
        if hand is None:
            if self._finished:
                return
            if self._missing() and now < self._start_by:
                clock.turn_at = now + POLL  # look for the programs until they sit
            else:
                self._start_without_the_missing()
            return
        if hand.over:
            if clock.turn_at <= now:
                # The next hand is due: a program that did not ask for it is not waited for.
                clock.turn_at = math.inf
                self._deal_when_present()
            return
        table.progression.wake()
        # Play on while in-process bots (or stand-ins) are to act: their moves leave in one
        # write per program instead of one each, which spares the programs most wake-ups.
        for _ in range(_MAX_BOT_RUN):
            hand = self.parts.state.hand
            if hand is None or hand.over or self._finished:
                break
            info = self.parts.state.seats[hand.to_act]
            if info is None or not info.is_bot:
                break
            clock.turn_at = math.inf
            table.progression.bot_move(hand.to_act)

    def _start_without_the_missing(self) -> None:
        table = self.table
        for seat in self.parts.state.free_seats():
            self.parts.policies[seat] = self.driver.stand_in(seat)
            table.seating.sit_named_bot(seat, f"stand-in-{seat}", "stand-in")
        table.seating.changed()
        if not self.parts.state.started:
            table.progression.start()

    def timed_out(self, seat: int) -> None:
        """The program of ``seat`` let its turn run out: a stand-in plays the rest of the hand."""
        report = self._reports[seat]
        report.timeouts += 1
        self._asked_at.pop(seat, None)
        self._late[seat] = self._late.get(seat, 0) + 1
        self._replace(seat)
        if self._late[seat] >= HUNG_AFTER:
            self._late[seat] = 0
            self.driver.hung(seat)

    def _replace(self, seat: int) -> None:
        """A stand-in takes ``seat`` for the rest of the hand (the token stays, for ``back``)."""
        table = self.table
        self._reports[seat].stood_in = True
        table.seating.stand_in(seat, returnable=True)
        self.parts.policies[seat] = self.driver.stand_in(seat)
        table.seating.changed(seat, SeatChange.STAND_IN)
        self.parts.clock.schedule()

    # ----- the programs ---------------------------------------------------------------------

    def offers(self, seat: int) -> bool:
        """An external seat's program is offered moves only while it plays the seat (a
        stand-in's states show it the hand)."""
        return seat not in self.driver.external or self._plays(seat)

    def offered(self, seat: int) -> None:
        if self._plays(seat):
            self._asked_at[seat] = time.perf_counter()

    def _plays(self, seat: int) -> bool:
        """Whether the program of an external ``seat`` is the one playing it now."""
        table = self.table
        info = self.parts.state.seats[seat]
        return (seat in self.driver.external and info is not None and not info.is_bot
                and table.audience.seat_peers[seat] is not None)

    def watching(self, seat: int) -> AbstractContextManager[None]:
        """A program's move is timed, and a refused one counted (and its seat given to a
        stand-in if it was to act); a move from a program whose seat a stand-in plays is
        refused."""
        if seat not in self.driver.external:
            return contextlib.nullcontext()
        if not self._plays(seat):
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN,
                                "a stand-in plays this seat until the next hand")
        return self._timed(seat)

    @contextlib.contextmanager
    def _timed(self, seat: int) -> Iterator[None]:
        hand, report = self.parts.state.hand, self._reports[seat]
        asked = self._asked_at.pop(seat, None)
        if asked is not None:  # booked first: the move may end the hand and report it
            report.seconds.append(time.perf_counter() - asked)
        try:
            yield
        except Exception:
            if asked is not None:
                report.seconds.pop()
            if hand is not None and not hand.over and hand is self.parts.state.hand:
                report.illegal += 1
                if hand.to_act == seat:
                    self._replace(seat)
            raise
        self._late[seat] = 0

    def left(self, seat: int | None, *, disconnected: bool) -> None:
        """A program that disconnects (it crashed, or was stopped) loses its seat to a stand-in
        at once, not after a grace period: the arena restarts it, and it joins again."""
        table = self.table
        if disconnected and seat in self.driver.external and seat in self.parts.clock.away_until:
            table.seating.grace_over(seat)
            if self.parts.state.started:
                self.parts.policies[seat] = self.driver.stand_in(seat)
                if self.parts.state.hand is not None and not self.parts.state.hand.over:
                    self._reports[seat].stood_in = True
            self.deal_if_ready()

    def join(self, peer: Peer, msg: Join) -> bool:
        """A restarted program takes its seat back (from the next deal) with the table's code."""
        table = self.table
        seat = msg.seat
        if (not self.parts.state.started or seat not in self.driver.external
                or table.audience.seat_peers[seat] is not None):
            return False
        table.seating.check_code(msg.code)
        token = table.seating.take_again(peer, seat)
        peer.send(to_dict(Joined(id=msg.id, table=self.parts.id, seat=seat, token=token,
                                 spectator=False)))
        if self.parts.state.hand is not None:
            seats = table.audience.seats_info()
            peer.send(table.audience.state_message(seat, None, seats))
        table.seating.changed(seat, SeatChange.BACK)
        if self.parts.state.hand_over:
            self.deal_if_ready()
        return True


def arena_table(
    state: TableLogState,
    config: ServerConfig,
    lobby: Lobby,
    journal: GroupCommit,
    *,
    driver: ArenaDriver,
    start_timeout: float = 30.0,
) -> Table:
    """A table dealt by ``driver`` (``Lobby.open``'s ``make``)."""
    return Table(state, config, lobby, journal,
                 dealing=lambda parts, table: ArenaDealing(parts, table, driver, start_timeout))
