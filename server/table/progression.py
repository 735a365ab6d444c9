"""A table's match as it goes on: the start, each deal, each move played, each hand's end,
and the turns the server plays on its own (bots, and humans whose turn timed out).

The entry that deals a hand comes from the table's ``Dealing`` (the match's seed by default,
``MatchDealing`` here; the arena's decks for the arena), and so does what happens around a
deal and a hand's end; the rest is the same for every table.
"""

from __future__ import annotations

import contextlib
import logging
import math
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

import trio
from tongits.engine import Action, Hand, IllegalMove, Move, seat_view
from tongits.protocol import (
    ErrorCode,
    Join,
    MatchOver,
    MoveRequest,
    NextHand,
    ProtocolError,
    Start,
    ok_message,
    to_dict,
)

from ..net.peer import TableLink
from ..threads import OneThread
from . import bots
from .dealing import UnratedEnd
from .entries import DealEntry, MoveEntry, StartEntry

if TYPE_CHECKING:
    from ..net.peer import Peer
    from .audience import Audience
    from .clock import Clock
    from .dealing import Dealing
    from .ledger import Ledger
    from .table import TableLogState

log = logging.getLogger("tongits.server")

#: Safety bound on moves the server plays for one timed-out decision.
_MAX_AUTOPLAY = 40

#: The worker thread slow bots decide in, one for the whole server (``threads``).
_thinkers = OneThread("thinkers")

#: Who asked for a change, to be answered ``ok`` once it is journaled: a peer and its
#: request's id.
Reply = tuple["Peer", int | str | None]


class _Seats(Protocol):
    def owner_check(self, peer: Peer) -> None: ...

    def grace_over(self, seat: int) -> None: ...


class TableParts(Protocol):
    """What every part of a table (``actor.Table``) may ask of it: its state, who is at it
    (``audience``), its clock, and the seats whose player asked for the next hand."""

    @property
    def state(self) -> TableLogState: ...

    @property
    def audience(self) -> Audience: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def ready(self) -> set[int]: ...


class ProgressionHost(TableLink, TableParts, Protocol):
    """What ``Progression`` needs of its table (the table its players' peers are at) besides
    ``TableParts``: the ledger that changes the state, the parts it plays with (the bots'
    policies, the dealing, the seats' owner and grace periods), and the pace of the match it
    keeps."""

    @property
    def ledger(self) -> Ledger: ...

    @property
    def policies(self) -> dict[int, bots.Policy]: ...

    @property
    def dealing(self) -> Dealing: ...

    @property
    def seating(self) -> _Seats: ...

    closed: bool
    #: moves played at the table
    actions: int
    #: when a human last moved here
    played_at: float


class _Deals(Protocol):
    def deal(self) -> None: ...

    def wake(self) -> None: ...

    def autoplay(self, seat: int) -> None: ...


class MatchHost(TableParts, Protocol):
    """What ``MatchDealing`` needs of its table besides ``TableParts``: its match to deal and
    wake."""

    @property
    def progression(self) -> _Deals: ...


class Progression:
    """Starts, deals, plays and ends the hands of one table's match."""

    __slots__ = ("table", "_decided")

    def __init__(self, table: ProgressionHost) -> None:
        self.table = table
        #: a slow bot's decision made in a worker thread (``think``): its seat, the hand's
        #: steps when it decided, and its move (or what it raised)
        self._decided: tuple[int, int, Move | Exception] | None = None

    def start_request(self, peer: Peer, msg: Start) -> None:
        table = self.table
        table.seating.owner_check(peer)
        if table.state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has already started")
        if not table.state.full:
            raise ProtocolError(ErrorCode.NOT_READY, "three seats must be filled to start")
        self.start(reply=(peer, msg.id))

    def start(self, reply: Reply | None = None) -> None:
        """Start the match; ``reply``: the peer and request id to answer ``ok``, once the start
        is journaled and before the first deal goes out. Nothing happens when the dealing has
        no hand to deal."""
        entry = self.table.dealing.entry(StartEntry)
        if entry is None:
            return
        self.table.ledger.commit(entry)
        if reply is not None:
            peer, ref = reply
            peer.send(ok_message(ref))
        self.hand_dealt()

    def deal(self) -> None:
        """Deal the next hand, unless the match is over or the dealing has none left."""
        table = self.table
        if table.state.match_over is not None:
            return
        entry = table.dealing.entry(DealEntry)
        if entry is None:
            return
        table.ledger.commit(entry)
        self.hand_dealt()

    def hand_dealt(self) -> None:
        table = self.table
        hand = table.state.hand
        assert hand is not None and table.state.match is not None
        table.ready.clear()
        table.dealing.dealt()
        log.info("table %s: hand %d dealt, dealer seat %d", table.id,
                 table.state.match.hands_played + 1, hand.dealer)
        table.clock.schedule()
        table.audience.broadcast(None)

    def next_hand_request(self, peer: Peer, msg: NextHand) -> None:
        table = self.table
        if peer.table is not table or peer.seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may ask")
        if not table.state.hand_over:
            raise ProtocolError(ErrorCode.NOT_READY, "the hand is not over")
        peer.send(ok_message(msg.id))
        table.ready.add(peer.seat)
        table.dealing.deal_if_ready()

    def move_request(self, peer: Peer, msg: MoveRequest) -> None:
        """A seat's connection asks to move: the dealing watches it (``Dealing.watching``:
        the arena times its programs), the engine judges it (``play``)."""
        table = self.table
        seat = peer.seat
        if peer.table is not table or seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may move")
        with table.dealing.watching(seat):
            if table.state.hand is None:
                raise ProtocolError(ErrorCode.NOT_READY, "the match has not started")
            self.play(seat, Move.from_dict(msg.move), reply=(peer, msg.id))

    def play(
        self,
        seat: int,
        move: Move,
        *,
        timeout: bool = False,
        reply: Reply | None = None,
    ) -> None:
        """Play ``move`` for ``seat``; the engine's check when it is applied is the only one
        (``IllegalMove`` leaves everything unchanged). ``reply``: the peer and request id to
        answer ``ok``, before anyone gets the new state."""
        table = self.table
        hand = table.state.hand
        assert hand is not None
        index = len(hand.steps)
        table.ledger.commit(MoveEntry(seat, move, timeout))
        if reply is not None:
            peer, ref = reply
            peer.send(ok_message(ref))
            table.played_at = trio.current_time()
        table.actions += 1
        table.clock.schedule()
        table.audience.broadcast(index, timeout=timeout)
        if hand.over:
            self.hand_over(hand)

    def hand_over(self, hand: Hand) -> None:
        """``hand`` has ended: the dealing hears of it first, then everyone gets its result;
        the match ends, or the next hand is dealt when the players are ready."""
        table = self.table
        table.dealing.hand_over(hand)
        message = table.audience.hand_result_message(hand)
        result = message["result"]
        log.info("table %s: hand %d over: %s, winner %s, chips %s", table.id,
                 message["standings"]["hands"], result["end"], result["winner"],
                 result["chips"])
        table.audience.tell(message)
        reason = table.state.match_over
        if reason is not None:
            self.match_over(reason)
        else:
            table.dealing.deal_if_ready()

    def match_over(self, reason: str) -> None:
        """The match reached its declared length: everyone hears ``match_over`` with the final
        standings, and the table closes (the players are back in the lobby)."""
        table = self.table
        over = to_dict(MatchOver(table=table.id, reason=reason,
                                 standings=table.state.standings(),
                                 forfeits=table.dealing.forfeits() or None))
        table.audience.tell(over)
        log.info("table %s: match over (%s) after %d hands", table.id, reason,
                 table.state.hand_number)
        table.closed = True

    # ----- the turns the server plays ----------------------------------------------------

    def wake(self) -> None:
        """The table's clock ran out: end the grace periods due, then play the bot or the
        timed-out human to act, or deal the next hand (``MatchDealing.wake``)."""
        table = self.table
        clock = table.clock
        now = trio.current_time()
        for seat, until in sorted(clock.away_until.items()):
            if until <= now:
                table.seating.grace_over(seat)
        if clock.turn_at > now:
            return
        clock.turn_at = math.inf
        hand = table.state.hand
        if hand is None:
            return
        if hand.over:
            self.deal()
            return
        seat = hand.to_act
        info = table.state.seats[seat]
        if info is not None and info.is_bot:
            self.bot_move(seat)
        else:
            table.dealing.timed_out(seat)

    async def think(self) -> None:
        """Before a step of its own: a bot seat to act whose policy is slow (``bots.is_slow``)
        decides now, in a worker thread, while the event loop serves the other tables. The
        table waits for the decision without taking any request (they wait in its inbox), so
        the hand cannot change meanwhile and the policy sees exactly the views, in the order,
        it would see on the loop: its decisions are the same. ``bot_move`` plays it."""
        table = self.table
        hand = table.state.hand
        if hand is None or hand.over or table.clock.turn_at > trio.current_time():
            return
        seat = hand.to_act
        info = table.state.seats[seat]
        policy = table.policies.get(seat)
        if info is None or not info.is_bot or policy is None or not bots.is_slow(info.policy):
            return
        view = seat_view(hand, seat)
        decision = await trio.to_thread.run_sync(bots.decide, policy, view,
                                                 limiter=_thinkers())
        self._decided = (seat, len(hand.steps), decision)

    def bot_move(self, seat: int) -> None:
        """The bot of ``seat`` plays (its move decided in ``think``, or now); a bot that fails
        or moves illegally is played for."""
        table = self.table
        hand = table.state.hand
        assert hand is not None
        view = seat_view(hand, seat)
        decided, self._decided = self._decided, None
        if decided is not None and decided[:2] == (seat, len(hand.steps)):
            decision = decided[2]
        else:
            decision = bots.decide(table.policies[seat], view)
        if isinstance(decision, Exception):
            log.error("table %s: bot in seat %d failed; playing for it", table.id, seat,
                      exc_info=decision)
            move = bots.autoplay(view)
        else:
            move = decision
        try:
            self.play(seat, move)
        except IllegalMove:
            log.exception("table %s: bot in seat %d moved illegally; playing for it", table.id,
                          seat)
            self.play(seat, bots.autoplay(view))

    def autoplay(self, seat: int) -> None:
        """Play for a human whose turn timed out: fold a call; draw, then let ``autoplay``
        finish the turn (it ends with a discard)."""
        table = self.table
        hand = table.state.hand
        assert hand is not None
        log.info("table %s: seat %d timed out", table.id, seat)
        table.clock.autoplaying = seat
        try:
            for _ in range(_MAX_AUTOPLAY):
                if hand.over or hand.to_act != seat:
                    return
                view = seat_view(hand, seat)
                move = bots.autoplay(view)
                self.play(seat, move, timeout=True)
                if move.action in (Action.FOLD, Action.DISCARD):
                    return
        finally:
            table.clock.autoplaying = None


class MatchDealing(UnratedEnd):
    """A lobby table's ``Dealing``: hands are dealt from the match's seed when every
    connected human asked for the next one (or the turn timer runs out), every seat is played
    by whoever sits in it, and the table closes once nobody is at it."""

    __slots__ = ("table",)

    def __init__(self, table: MatchHost) -> None:
        self.table = table

    def opened(self) -> None:
        pass

    def entry(self, kind: type[StartEntry | DealEntry]) -> StartEntry | DealEntry:
        return kind()

    def dealt(self) -> None:
        pass

    def hand_over(self, hand: Hand) -> None:
        pass

    def deal_if_ready(self) -> None:
        """After a hand, deal once every connected human has asked for the next one (with no
        human connected, the turn timer deals)."""
        table = self.table
        peers = table.audience.seat_peers
        if not table.state.hand_over or all(p is None for p in peers):
            return
        if all(p is None or s in table.ready or p.auto_next for s, p in enumerate(peers)):
            table.progression.deal()

    def deserted(self) -> bool:
        """A table closes once no human is connected to a seat, nobody watches, and no seat
        waits for its human within the grace period."""
        return self.table.audience.empty() and not self.table.clock.away_until

    def wake(self) -> None:
        self.table.progression.wake()

    def timed_out(self, seat: int) -> None:
        self.table.progression.autoplay(seat)

    def offers(self, seat: int) -> bool:
        return True

    def offered(self, seat: int) -> None:
        pass

    def watching(self, seat: int) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def join(self, peer: Peer, msg: Join) -> bool:
        return False

    def left(self, seat: int | None, *, disconnected: bool) -> None:
        pass

