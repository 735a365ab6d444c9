"""The arena's own table: a ``Table`` the arena opens in-process on its loopback server.

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

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio
from tongits.engine import Card, Hand, SeatView
from tongits.protocol import (
    Codec,
    ErrorCode,
    Join,
    Joined,
    MoveRequest,
    PlayerKind,
    ProtocolError,
    SeatChange,
    to_dict,
)

from . import bots
from .actor import Table
from .entries import DealEntry, SitEntry, StartEntry
from .fanout import StateFrames
from .table import SEATS, new_token, token_digest

if TYPE_CHECKING:
    from .commit import GroupCommit
    from .config import ServerConfig
    from .lobby import Lobby
    from .peer import Peer
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


class ArenaTable(Table):
    def __init__(
        self,
        state: TableLogState,
        config: ServerConfig,
        lobby: Lobby,
        journal: GroupCommit,
        *,
        driver: ArenaDriver,
        start_timeout: float = 30.0,
    ) -> None:
        super().__init__(state, config, lobby, journal)
        self.driver = driver
        self.start_timeout = start_timeout
        self._start_by = math.inf
        self._planned: tuple[Sequence[Card], int] | None = None
        self._reports = [SeatReport() for _ in SEATS]
        self._asked_at: dict[int, float] = {}
        self._late: dict[int, int] = {}
        self._finished = False

    async def run(self) -> None:
        for seat in SEATS:
            if seat not in self.driver.external:
                self._commit(SitEntry(seat, self.driver.bot_name(seat), PlayerKind.BOT,
                                      policy=self.driver.bot_name(seat)))
        self._start_by = trio.current_time() + self.start_timeout
        self.turn_at = trio.current_time()
        await super().run()

    # ----- decks and hands ------------------------------------------------------------------

    def _deal_entry(self, kind: type[StartEntry | DealEntry]) -> StartEntry | DealEntry:
        assert self._planned is not None
        deck, dealer = self._planned
        return kind(tuple(deck), dealer)

    def _start(self, reply: tuple[Peer, int | str | None] | None = None) -> None:
        self._planned = self.driver.next_deal()
        if self._planned is None:
            self._finish()
            return
        super()._start(reply)

    def _hand_dealt(self) -> None:
        self._reports = [SeatReport() for _ in SEATS]
        self._asked_at.clear()
        for seat in SEATS:
            info = self.state.seats[seat]
            if seat not in self.driver.external:
                self.policies[seat] = _Timed(self.driver.policy(seat), self._reports[seat])
            elif info is None or info.is_bot:
                peer = self.seat_peers[seat]
                if peer is not None and peer.token is not None:
                    self._give_back(seat, peer)
                else:
                    self._reports[seat].stood_in = True
        super()._hand_dealt()

    def _give_back(self, seat: int, peer: Peer) -> None:
        """The program at ``seat`` plays it again from this hand on."""
        assert peer.name is not None and peer.token is not None
        digest = token_digest(peer.token)
        self.policies.pop(seat, None)
        self._commit(SitEntry(seat, peer.name, PlayerKind.HUMAN, digest))
        self.lobby.index_token(digest, self)

    def _hand_over(self, hand: Hand) -> None:
        """The hand goes to the driver first: telling the table's players of it goes on to the
        next deal (``_deal_if_ready``), or to the end when the driver has none left."""
        self.driver.hand_over(hand, self._reports)
        super()._hand_over(hand)

    def _deal_if_ready(self) -> None:
        """Deal once every connected program asked for the next hand (at once if none is
        connected: the stand-ins need no turn timer) and no restarted program is on its way."""
        if self.state.hand_over and all(
            self.seat_peers[s] is None or s in self.ready for s in SEATS
        ):
            self._deal_when_present()

    def _deal_when_present(self) -> None:
        if self._missing():
            self.turn_at = trio.current_time() + POLL
        else:
            self._deal()

    def _missing(self) -> bool:
        """Whether a program the arena is (re)starting has yet to take its seat."""
        return any(
            self.seat_peers[s] is None and self.driver.expected(s) for s in self.driver.external
        )

    def _deal(self) -> None:
        self._planned = self.driver.next_deal()
        if self._planned is None:
            self._finish()
            return
        self._commit(self._deal_entry(DealEntry))
        self._hand_dealt()

    def _finish(self) -> None:
        if not self._finished:
            self._finished = self.closed = True
            self.turn_at = math.inf
            self.driver.finished()

    def _deserted(self) -> bool:
        return self._finished

    # ----- the clock ------------------------------------------------------------------------

    def _schedule(self) -> None:
        if self.state.hand is None:
            self.turn_at = trio.current_time() + POLL  # look for the programs until they sit
            return
        super()._schedule()

    def _wake(self) -> None:
        now, hand = trio.current_time(), self.state.hand
        if hand is None:
            if self._finished:
                return
            if self._missing() and now < self._start_by:
                self.turn_at = now + POLL
            else:
                self._start_without_the_missing()
            return
        if hand.over:
            if self.turn_at <= now:
                # The next hand is due: a program that did not ask for it is not waited for.
                self.turn_at = math.inf
                self._deal_when_present()
            return
        super()._wake()
        # Play on while in-process bots (or stand-ins) are to act: their moves leave in one
        # write per program instead of one each, which spares the programs most wake-ups.
        for _ in range(_MAX_BOT_RUN):
            hand = self.state.hand
            if hand is None or hand.over or self._finished:
                break
            info = self.state.seats[hand.to_act]
            if info is None or not info.is_bot:
                break
            self.turn_at = math.inf
            self._bot_move(hand.to_act)

    def _start_without_the_missing(self) -> None:
        for seat in self.state.free_seats():
            self.policies[seat] = self.driver.stand_in(seat)
            self._commit(SitEntry(seat, f"stand-in-{seat}", PlayerKind.BOT, policy="stand-in"))
        self._seats_changed()
        if not self.state.started:
            self._start()

    def _timeout(self, seat: int) -> None:
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
        self._reports[seat].stood_in = True
        self._stand_in(seat, returnable=True)
        self.policies[seat] = self.driver.stand_in(seat)
        self._seats_changed(seat, SeatChange.STAND_IN)
        self._schedule()

    # ----- the programs ---------------------------------------------------------------------

    def _broadcast(self, index: int | None, *, timeout: bool = False) -> None:
        super()._broadcast(index, timeout=timeout)
        hand = self.state.hand
        if hand is not None and not hand.over and self._plays(hand.to_act):
            self._asked_at[hand.to_act] = time.perf_counter()

    def _plays(self, seat: int) -> bool:
        """Whether the program of an external ``seat`` is the one playing it now."""
        info = self.state.seats[seat]
        return (seat in self.driver.external and info is not None and not info.is_bot
                and self.seat_peers[seat] is not None)

    def _move_request(self, peer: Peer, msg: MoveRequest) -> None:
        seat = peer.seat
        if seat is None or seat not in self.driver.external or not self._plays(seat):
            if seat is not None and seat in self.driver.external:
                raise ProtocolError(ErrorCode.NOT_YOUR_TURN,
                                    "a stand-in plays this seat until the next hand")
            super()._move_request(peer, msg)
            return
        hand, report = self.state.hand, self._reports[seat]
        asked = self._asked_at.pop(seat, None)
        if asked is not None:  # booked first: the move may end the hand and report it
            report.seconds.append(time.perf_counter() - asked)
        try:
            super()._move_request(peer, msg)
        except Exception:
            if asked is not None:
                report.seconds.pop()
            if hand is not None and not hand.over and hand is self.state.hand:
                report.illegal += 1
                if hand.to_act == seat:
                    self._replace(seat)
            raise
        self._late[seat] = 0

    def _state_frame(self, codec: Codec, frames: StateFrames, seat: int | None) -> bytes:
        if seat is None or seat not in self.driver.external or self._plays(seat):
            return super()._state_frame(codec, frames, seat)
        return codec.encode(self._state_message(seat, frames.index, frames.seats,
                                                timeout=frames.timeout))

    def _state_message(
        self,
        seat: int | None,
        index: int | None,
        seats: list[dict[str, Any]],
        *,
        timeout: bool = False,
    ) -> dict[str, Any]:
        message = super()._state_message(seat, index, seats, timeout=timeout)
        if seat is not None and seat in self.driver.external and not self._plays(seat):
            # A stand-in plays this seat: the program is shown the hand, not asked to move.
            message.pop("legal", None)
            message.pop("deadline", None)
        return message

    def _leave(self, peer: Peer, *, disconnected: bool = False) -> None:
        """A program that disconnects (it crashed, or was stopped) loses its seat to a stand-in
        at once, not after a grace period: the arena restarts it, and it joins again."""
        seat = peer.seat if peer.table is self else None
        super()._leave(peer, disconnected=disconnected)
        if disconnected and seat in self.driver.external and seat in self.away_until:
            self._grace_over(seat)
            if self.state.started:
                self.policies[seat] = self.driver.stand_in(seat)
                if self.state.hand is not None and not self.state.hand.over:
                    self._reports[seat].stood_in = True
            self._deal_if_ready()

    def _join(self, peer: Peer, msg: Join) -> None:
        """A restarted program takes its seat back (from the next deal) with the table's code."""
        seat = msg.seat
        if (not self.state.started or seat not in self.driver.external
                or self.seat_peers[seat] is not None):
            super()._join(peer, msg)
            return
        self._check_code(msg.code)
        info = self.state.seats[seat]
        if info is not None:
            self.lobby.forget_token(info.token_hash)
        token = new_token()
        self._attach(peer, seat, token)
        self.lobby.index_token(token_digest(token), self)
        peer.send(to_dict(Joined(id=msg.id, table=self.id, seat=seat, token=token,
                                 spectator=False)))
        if self.state.hand is not None:
            self._send_state(peer, seat, None, self._seats_info())
        self._seats_changed(seat, SeatChange.BACK)
        if self.state.hand_over:
            self._deal_if_ready()
