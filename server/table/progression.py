"""A table's match as it goes on: the start, each deal, each move played, each hand's end,
and the turns the server plays on its own (bots, and humans whose turn timed out).

The entry that deals a hand comes from the table's ``Dealing`` (the match's seed for a lobby's
table, ``dealing.MatchDealing``; the arena's decks for the arena), and so does what happens
around a deal and a hand's end; the rest is the same for every table. ``Progression`` works on
the table's ``TableParts``, its audience, dealing and seats, all given when it is made: of the
table itself it only knows that its players' connections are at it (``TableLink``).
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Protocol

import trio
from tongits.engine import Action, Hand, IllegalMove, Move, seat_view
from tongits.protocol import (
    ErrorCode,
    MatchOver,
    MoveRequest,
    NextHand,
    ProtocolError,
    Start,
    ok_message,
    to_dict,
)
from tongits.protocol.phrases import counted

from ..net.peer import TableLink
from ..threads import OneThread
from . import bots
from .entries import DealEntry, MoveEntry, StartEntry

if TYPE_CHECKING:
    from ..net.peer import Peer
    from .audience import Audience
    from .dealing import Dealing
    from .parts import TableParts

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


class Progression:
    """Starts, deals, plays and ends the hands of one table's match."""

    __slots__ = ("table", "parts", "audience", "dealing", "seating", "played_at", "_decided")

    def __init__(self, table: TableLink, parts: TableParts, audience: Audience,
                 dealing: Dealing, seating: _Seats) -> None:
        #: the table its players' connections are at
        self.table = table
        self.parts, self.audience, self.dealing, self.seating = parts, audience, dealing, seating
        #: when a human last moved at the table, else when it was made: the table idle longest
        #: may be closed to make room on a full server (``Lobby.make_room``)
        self.played_at = trio.current_time()
        #: a slow bot's decision made in a worker thread (``think``): its seat, the hand's
        #: steps when it decided, and its move (or what it raised)
        self._decided: tuple[int, int, Move | Exception] | None = None

    def start_request(self, peer: Peer, msg: Start) -> None:
        parts = self.parts
        self.seating.owner_check(peer)
        if parts.state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has already started")
        if not parts.state.full:
            raise ProtocolError(ErrorCode.NOT_READY, "three seats must be filled to start")
        self.start(reply=(peer, msg.id))

    def start(self, reply: Reply | None = None) -> None:
        """Start the match; ``reply``: the peer and request id to answer ``ok``, once the start
        is journaled and before the first deal goes out. Nothing happens when the dealing has
        no hand to deal."""
        entry = self.dealing.entry(StartEntry)
        if entry is None:
            return
        self.parts.ledger.commit(entry)
        if reply is not None:
            peer, ref = reply
            peer.send(ok_message(ref))
        self.hand_dealt()

    def deal(self) -> None:
        """Deal the next hand, unless the match is over or the dealing has none left."""
        parts = self.parts
        if parts.state.match_over is not None:
            return
        entry = self.dealing.entry(DealEntry)
        if entry is None:
            return
        parts.ledger.commit(entry)
        self.hand_dealt()

    def hand_dealt(self) -> None:
        parts = self.parts
        hand = parts.state.hand
        assert hand is not None and parts.state.match is not None
        parts.ready.clear()
        self.dealing.dealt()
        log.info("table %s: hand %d dealt, dealer seat %d", parts.id,
                 parts.state.match.hands_played + 1, hand.dealer)
        parts.clock.schedule()
        self.audience.broadcast(None)

    def next_hand_request(self, peer: Peer, msg: NextHand) -> None:
        parts = self.parts
        if peer.table is not self.table or peer.seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may ask")
        if not parts.state.hand_over:
            raise ProtocolError(ErrorCode.NOT_READY, "the hand is not over")
        peer.send(ok_message(msg.id))
        parts.ready.add(peer.seat)
        self.dealing.deal_if_ready()

    def move_request(self, peer: Peer, msg: MoveRequest) -> None:
        """A seat's connection asks to move: the dealing watches it (``Dealing.watching``:
        the arena times its programs), the engine judges it (``play``)."""
        parts = self.parts
        seat = peer.seat
        if peer.table is not self.table or seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may move")
        with self.dealing.watching(seat):
            if parts.state.hand is None:
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
        parts = self.parts
        hand = parts.state.hand
        assert hand is not None
        index = len(hand.steps)
        parts.ledger.commit(MoveEntry(seat, move, timeout))
        if reply is not None:
            peer, ref = reply
            peer.send(ok_message(ref))
            self.played_at = trio.current_time()
        parts.clock.schedule()
        self.audience.broadcast(index, timeout=timeout)
        if hand.over:
            self.hand_over(hand)

    def hand_over(self, hand: Hand) -> None:
        """``hand`` has ended: the dealing hears of it first, then everyone gets its result;
        the match ends, or the next hand is dealt when the players are ready."""
        parts = self.parts
        self.dealing.hand_over(hand)
        message = self.audience.hand_result_message(hand, parts.ledger.record)
        result = message["result"]
        log.info("table %s: hand %d over: %s, winner %s, chips %s", parts.id,
                 message["standings"]["hands"], result["end"], result["winner"],
                 result["chips"])
        self.audience.tell(message)
        reason = parts.state.match_over
        if reason is not None:
            self.match_over(reason)
        else:
            self.dealing.deal_if_ready()

    def match_over(self, reason: str) -> None:
        """The match reached its declared length: everyone hears ``match_over`` with the final
        standings; the table closes after this step (``Table._stepped``: the players are back in
        the lobby)."""
        parts = self.parts
        over = to_dict(MatchOver(table=parts.id, reason=reason,
                                 standings=parts.state.standings(),
                                 forfeits=self.dealing.forfeits() or None))
        self.audience.tell(over)
        log.info("table %s: match over (%s) after %s", parts.id, reason,
                 counted(parts.state.hand_number, "hand"))

    # ----- the turns the server plays ----------------------------------------------------

    def wake(self) -> None:
        """The table's clock ran out: end the grace periods due, then play the bot or the
        timed-out human to act, or deal the next hand (``MatchDealing.wake``)."""
        parts = self.parts
        clock = parts.clock
        now = trio.current_time()
        for seat, until in sorted(clock.away_until.items()):
            if until <= now:
                self.seating.grace_over(seat)
        if clock.turn_at > now:
            return
        clock.turn_at = math.inf
        hand = parts.state.hand
        if hand is None:
            return
        if hand.over:
            self.deal()
            return
        seat = hand.to_act
        info = parts.state.seats[seat]
        if info is not None and info.is_bot:
            self.bot_move(seat)
        else:
            self.dealing.timed_out(seat)

    async def think(self) -> None:
        """Before a step of its own: a bot seat to act whose policy is slow (``bots.is_slow``)
        decides now, in a worker thread, while the event loop serves the other tables. The
        table waits for the decision without taking any request (they wait in its inbox), so
        the hand cannot change meanwhile and the policy sees exactly the views, in the order,
        it would see on the loop: its decisions are the same. ``bot_move`` plays it."""
        parts = self.parts
        hand = parts.state.hand
        if hand is None or hand.over or parts.clock.turn_at > trio.current_time():
            return
        seat = hand.to_act
        info = parts.state.seats[seat]
        policy = parts.policies.get(seat)
        if info is None or not info.is_bot or policy is None or not bots.is_slow(info.policy):
            return
        view = seat_view(hand, seat)
        decision = await trio.to_thread.run_sync(bots.decide, policy, view,
                                                 limiter=_thinkers())
        self._decided = (seat, len(hand.steps), decision)

    def bot_move(self, seat: int) -> None:
        """The bot of ``seat`` plays (its move decided in ``think``, or now); a bot that fails
        or moves illegally is played for. A stand-in for a human who may come back plays
        marked as the server's (``timeout``, as a timed-out turn): back, the human reads "You
        discarded 5♣ (time ran out: played by the server)", not a move they never made."""
        parts = self.parts
        hand = parts.state.hand
        assert hand is not None
        info = parts.state.seats[seat]
        away = info is not None and info.stand_in and info.token_hash is not None
        view = seat_view(hand, seat)
        decided, self._decided = self._decided, None
        if decided is not None and decided[:2] == (seat, len(hand.steps)):
            decision = decided[2]
        else:
            decision = bots.decide(parts.policies[seat], view)
        if isinstance(decision, Exception):
            log.error("table %s: bot in seat %d failed; playing for it", parts.id, seat,
                      exc_info=decision)
            move = bots.autoplay(view)
        else:
            move = decision
        try:
            self.play(seat, move, timeout=away)
        except IllegalMove:
            log.exception("table %s: bot in seat %d moved illegally; playing for it", parts.id,
                          seat)
            self.play(seat, bots.autoplay(view), timeout=away)

    def autoplay(self, seat: int) -> None:
        """Play for a human whose turn timed out: fold a call; draw, then let ``autoplay``
        finish the turn (it ends with a discard)."""
        parts = self.parts
        hand = parts.state.hand
        assert hand is not None
        log.info("table %s: seat %d timed out", parts.id, seat)
        parts.clock.autoplaying = seat
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
            parts.clock.autoplaying = None
