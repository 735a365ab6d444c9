"""A table as one Trio task: the only code that changes a ``TableLogState``.

Connections put ``Request``s in the table's bounded inbox; the task handles them one at a time,
turns each accepted change into a log entry (journal first, then ``TableLogState.apply``), and fans
the result out: each seat gets ``state`` with its own ``seat_view``, spectators the public view.
The same loop runs the clock: a bot seat to act is played after ``bot_delay``; a human seat
that lets the turn timer run out is played for (``bots.autoplay``) and marked; after a hand the
next one is dealt when every connected human asked for it, or when the timer runs out.
The task never awaits a peer: ``Peer.send`` writes only what the socket takes at once, and
queues the rest. During a step the table's peers are corked; what the step said to them leaves
once its entries are committed (``commit.GroupCommit``).

A human whose connection drops keeps the seat for ``grace`` seconds (the turn timer still
runs); then a server bot stands in, and the seat's token still resumes it: the human is back
for the next decision. The table closes once nobody is connected and no seat is within its
grace period, so a table restored after a restart waits ``grace`` seconds for its players.
"""

from __future__ import annotations

import contextlib
import logging
import math
import operator
import random
import secrets
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import trio
from tongits.engine import Action, Hand, IllegalMove, Move, hand_record, seat_view
from tongits.engine.view import seat_legal, seat_view_dict
from tongits.protocol import (
    AddBot,
    Chat,
    ChatLine,
    Codec,
    CreateTable,
    ErrorCode,
    HandResult,
    Join,
    Joined,
    Leave,
    MatchOver,
    Mode,
    MoveRequest,
    NextHand,
    PlayerKind,
    ProtocolError,
    RemoveBot,
    SeatChange,
    SeatUpdate,
    Spectate,
    Start,
    State,
    Sync,
    encode_value,
    error_message,
    ok_message,
    to_dict,
)

from . import bots
from .commit import GroupCommit
from .entries import (
    BackEntry,
    DealEntry,
    Entry,
    MoveEntry,
    SitEntry,
    StandInEntry,
    StartEntry,
    VacateEntry,
)
from .errors import error_frame, is_refusal
from .fanout import HandCache, StateFrames
from .journal import table_number
from .requests import Disconnected, HostClose, HostRemove, Resume, SeatBot, TableRequest
from .table import SEATS, TableLogState, new_token, token_digest

if TYPE_CHECKING:
    from .config import ServerConfig
    from .peer import Peer

log = logging.getLogger("tongits.server")

#: What ``Table._seats_info`` shows of a seat.
_SHOWN_FIELDS = operator.attrgetter("name", "player", "policy", "stand_in", "timeouts",
                                    "program", "token_hash")

#: Safety bound on moves the server plays for one timed-out decision.
_MAX_AUTOPLAY = 40

#: Worker threads slow bots decide in, at most, for the whole server: one, since their Python
#: holds the interpreter's lock anyway (more would only take turns with the event loop more).
_THINKERS: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar("thinkers")


def _thinkers() -> trio.CapacityLimiter:
    try:
        return _THINKERS.get()
    except LookupError:
        limiter = trio.CapacityLimiter(1)
        _THINKERS.set(limiter)
        return limiter


class TableDirectory(Protocol):
    """What a table tells the lobby that holds it (``lobby.Lobby``)."""

    def listing_changed(self) -> None: ...

    def index_token(self, digest: str, table: Table) -> None: ...

    def forget_token(self, digest: str | None) -> None: ...

    def table_closed(self, table: Table) -> None: ...

    def seat_forfeited(self, table: Table, seat: int) -> None: ...

    def table_ended(self, table: Table) -> None: ...




@dataclass(slots=True)
class Request:
    peer: Peer | None
    msg: TableRequest
    done: trio.Event | None = field(default=None)


class Table:
    """The task that owns one table; ``state`` is read by nobody else."""

    def __init__(
        self,
        state: TableLogState,
        config: ServerConfig,
        lobby: TableDirectory,
        journal: GroupCommit,
        *,
        restored: bool = False,
    ) -> None:
        self.state = state
        self.config = config
        self.lobby = lobby
        self.journal = journal
        self.id = state.id
        self.seat_peers: list[Peer | None] = [None, None, None]
        self.spectators: set[Peer] = set()
        self.policies: dict[int, bots.Policy] = {}
        self.turn_at = math.inf
        #: seats whose human is disconnected, and when their grace period ends
        self.away_until: dict[int, float] = {}
        self.ready: set[int] = set()
        self.closed = False
        self.restored = restored
        self.broken = False
        #: a step failed (``_fail``): the table is closed for good, its log kept
        self.failed = False
        #: the creator's address for the per-address table limit (``Lobby.create``)
        self.quota: str | None = None
        #: the lobby entry encoded per mode, until the next step (``listing_entry``)
        self._listed: dict[Mode, bytes] = {}
        self._options = state.options.to_dict(omit_defaults=False)
        self.actions = 0
        #: when a human last moved here (else when the table was made): the table idle longest
        #: may be closed to make room on a full server (``Lobby.make_room``)
        self.played_at = trio.current_time()
        #: the seat whose timed-out turn the server is playing, during that step
        self.autoplaying: int | None = None
        self._send, self._inbox = trio.open_memory_channel[Request](math.inf)
        #: the encoded steps of the current hand's history (``_broadcast``), and that hand
        self._hand_cache = HandCache()
        self._history_of: Hand | None = None
        #: the seats as the last state showed them, and what they showed (``_shown_seats``)
        self._shown: tuple[tuple[Any, ...] | None, list[dict[str, Any]]] | None = None
        #: a slow bot's decision made in a worker thread (``_think``): its seat, the hand's
        #: steps when it decided, and its move (or what it raised)
        self._decided: tuple[int, int, Move | Exception] | None = None
        #: requests handed over (``_put``) and not yet taken by the table's task
        self._queued = 0
        #: the table's task waits for a request and none is on its way (``call`` steps inline)
        self._idle = False
        #: the scope of that wait, whose deadline is the table's ``wake_at``
        self._waiting: trio.CancelScope | None = None

    # ----- the interface for connections --------------------------------------------------

    async def call(self, peer: Peer | None, msg: TableRequest) -> None:
        """Hand a request to the table and wait until it has been handled (``peer`` None: a
        request of the host's, ``HostClose``).

        A connection's reader waits for each request it hands over, so a connection has at
        most one request (and then its ``Disconnected``) in the inbox: the inbox needs no bound
        of its own (it holds at most two per connection) and nobody can fill it ahead of the
        others' moves.

        When the table's task is waiting for a request and none is on its way to it, the step
        is taken here, in the caller's task, exactly as the table's task would take it (a step
        never awaits, so nothing else runs meanwhile): handing the request over and waiting for
        it cost two task switches, a channel and an event for every move. The table's task
        then only has its wake-up time moved (``_inline``).
        """
        if self._idle and not self.closed:
            self._inline(Request(peer, msg))
            return
        done = trio.Event()
        self._put(Request(peer, msg, done))
        await done.wait()

    def _inline(self, request: Request) -> None:
        """Take the step of ``request`` outside the table's task (``call``), then wake that task
        when it must act sooner than it was waiting for, or end its wait if the table closed."""
        self._step(request)
        scope = self._waiting
        if scope is not None:
            if self.closed:
                scope.cancel()
            elif self.wake_at != scope.deadline:
                scope.deadline = self.wake_at

    def disconnected(self, peer: Peer) -> None:
        """``peer``'s connection has ended: the table hears of it after the request it may
        still be handling for that peer, never later (this never waits, never drops)."""
        with contextlib.suppress(ProtocolError):  # the table has closed: nothing is bound to it
            self._put(Request(peer, Disconnected()))

    def _put(self, request: Request) -> None:
        try:
            self._send.send_nowait(request)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise ProtocolError(ErrorCode.NO_SUCH_TABLE, f"table {self.id} is closed") from None
        self._idle = False
        self._queued += 1

    @property
    def number(self) -> int:
        """``N`` of the id ``tN``: the lobby lists older tables first."""
        return table_number(self.id)

    @property
    def joinable(self) -> bool:
        """A seat is free and the match has not begun (the lobby lists these first)."""
        return not self.state.started and not self.state.full

    def listing_entry(self, mode: Mode) -> bytes:
        """The table's entry in ``tables``, encoded for ``mode`` at most once per step of the
        table (a step may change it; see ``run``)."""
        entry = self._listed.get(mode)
        if entry is None:
            entry = self._listed[mode] = encode_value(self.summary(), mode)
        return entry

    def summary(self) -> dict[str, Any]:
        """The table's entry in ``tables``; read by the lobby, in the same thread. Seats hold no
        ``grace`` countdown here: an entry is encoded once per change, not per request."""
        state = self.state
        seats = self._seats_info()
        for seat in seats:
            seat.pop("grace", None)
        return {
            "table": self.id,
            "name": state.name,
            "seats": seats,
            "players": sum(1 for s in state.seats if s is not None),
            "humans": sum(1 for s in seats if s["player"] == PlayerKind.HUMAN),
            "bots": sum(1 for s in seats if s["player"] == PlayerKind.BOT),
            "spectators": len(self.spectators),
            "options": self._options,
            "timer": state.timer,
            "private": state.private,
            "started": state.started,
            "hands": state.match.hands_played if state.match else 0,
            "match_length": state.length.to_dict(),
        }

    # ----- the task -----------------------------------------------------------------------

    @property
    def wake_at(self) -> float:
        """When the task must wake up on its own: a turn, a bot, a deal or a grace period."""
        if self.away_until:
            return min(self.turn_at, min(self.away_until.values()))
        return self.turn_at

    async def run(self) -> None:
        """The table's task. Its wall: whatever fails in a step fails this table only
        (``_fail``), never the server."""
        state = self.state
        log.info("table %s %r %s (timer %s s, private %s)", self.id, state.name,
                 "restored" if self.restored else "created", state.timer, state.private)
        try:
            if self.restored:
                self._restore()
            while not self.closed:
                if self.wake_at <= trio.current_time():
                    await self._think()
                    await self.journal.settled()
                    corked, joinable = self._cork(), self.joinable
                    try:
                        self._wake()
                    except Exception as exc:  # noqa: BLE001 - the table's wall
                        self._fail(exc)
                    finally:
                        self.journal.hold(corked)
                        self._stepped(joinable)
                    if not self.closed and self._deserted():
                        self.closed = True
                    continue
                request = await self._next_request()
                if request is not None:
                    self._step(request)
        except Exception as exc:  # noqa: BLE001 - the table's wall, outside a step
            self._fail(exc)
        finally:
            # Cancelled (server shutdown): the table stays open in the journal, for a restart.
            self._close(for_good=self.closed and not self.broken)

    async def _next_request(self) -> Request | None:
        """The next request handed over, or None once ``wake_at`` has come (or the table has
        closed). While it waits with nothing handed over (``_idle``), requests are handled in
        their callers' tasks (``call``), which move this wait's deadline."""
        with trio.CancelScope(deadline=self.wake_at) as scope:
            self._waiting = scope
            self._idle = self._queued == 0
            try:
                request = await self._inbox.receive()
            finally:
                self._idle, self._waiting = False, None
            self._queued -= 1
            return request
        return None

    def _step(self, request: Request) -> None:
        """Handle one request as one step of the table: its messages leave together, once its
        entries are committed. Whatever fails in it fails this table only (``_fail``)."""
        corked, joinable = self._cork(request.peer), self.joinable
        try:
            self._handle(request)
        except Exception as exc:  # noqa: BLE001 - the table's wall
            self._fail(exc, request)
        finally:
            self.journal.hold(corked)
            self._stepped(joinable)

    def _stepped(self, joinable: bool) -> None:
        """After a step: the lobby entry may have changed, and with it the lobby's order."""
        self._listed.clear()
        if self.joinable != joinable:
            self.lobby.listing_changed()

    def _fail(self, exc: Exception, request: Request | None = None) -> None:
        """A step failed (our bug, or a journal that cannot write): the table is closed, its
        log kept for diagnosis (a failed table is not restored; a table whose journal failed
        is, from its last committed entry), the error logged once, and everyone at it told
        with ``table_failed`` (the request that was being handled gets it as its answer).
        The connections stay open, back in the lobby."""
        log.error("table %s failed; closing it (its log is kept)", self.id, exc_info=exc)
        self.failed = self.closed = True
        message = f"table {self.id} failed and is closed; the incident is logged"
        ref = getattr(request.msg, "id", None) if request is not None else None
        for peer in self._audience():
            if request is None or peer is not request.peer:
                peer.send(error_message(ErrorCode.TABLE_FAILED, message))
        if request is not None and request.peer is not None:
            request.peer.send(error_message(ErrorCode.TABLE_FAILED, message, ref))

    def _cork(self, peer: Peer | None = None) -> list[Peer]:
        """Cork everyone at the table (and ``peer``) for one step of the table: what the step
        tells each of them leaves in one write, once the step's entries are committed
        (``GroupCommit.hold``)."""
        peers = self._audience()
        if peer is not None and peer not in peers:
            peers.append(peer)
        for p in peers:
            p.cork()
        return peers

    def _restore(self) -> None:
        """After a restart: bots get their policies back, every human is away (their grace
        period and the turn timer start now)."""
        until = trio.current_time() + self._grace()
        for seat in SEATS:
            info = self.state.seats[seat]
            if info is None:
                continue
            if info.is_bot:
                self.policies[seat] = bots.make_policy(info.policy, seed=self._bot_seed(seat))
            if info.token_hash is not None:
                self.lobby.index_token(info.token_hash, self)
                if not info.is_bot:
                    self.away_until[seat] = until
        self._schedule()
        if self._deserted() or self.state.match_over is not None:
            # A match that ended just before a restart is over: the table closes for good.
            self.closed = True

    def _handle(self, request: Request) -> None:
        """Handle one request; a refusal (``errors.is_refusal``) is answered with its error and
        changes nothing; anything else propagates to ``run``, which fails the table."""
        peer, msg = request.peer, request.msg
        if peer is None:
            if isinstance(msg, HostClose):
                self._host_close(msg)
            elif isinstance(msg, SeatBot) and not self.state.started:
                self._sit_bot(msg.seat, msg.policy, msg.name)
                self._seats_changed(msg.seat, SeatChange.SAT)
            if request.done is not None:
                request.done.set()
            return
        ref = getattr(msg, "id", None)
        try:
            self._dispatch(peer, msg)
        except Exception as exc:
            if not is_refusal(exc):
                raise
            peer.send(error_frame(exc, ref))
        finally:
            if request.done is not None:
                request.done.set()
        if peer.gone and peer.table is self:
            # Its connection ended while the request waited (it sat down a peer that had
            # gone): nothing else would ever tell the table.
            self._leave(peer, disconnected=True)
        if not self.closed and self._deserted():
            self.closed = True

    def _dispatch(self, peer: Peer, msg: TableRequest) -> None:
        name = _HANDLERS.get(type(msg))
        if name is None:
            kind = getattr(msg, "TYPE", type(msg).__name__)
            raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"{kind} is not a table request")
        getattr(self, name)(peer, msg)  # by name: a subclass's override is the handler

    def _disconnected(self, peer: Peer, _msg: Disconnected) -> None:
        self._leave(peer, disconnected=True)

    def _resume_request(self, peer: Peer, msg: Resume) -> None:
        self._resume(peer, msg.token, msg.seq)

    def _leave_request(self, peer: Peer, msg: Leave) -> None:
        self._leave(peer)
        peer.send(ok_message(msg.id))

    def _host_remove(self, peer: Peer, msg: HostRemove) -> None:
        if peer.table is self:
            self._leave(peer)
        peer.kick(ErrorCode.REMOVED_BY_HOST, "the host removed you from the server")

    def _commit(self, entry: Entry) -> None:
        """The only way the state changes: apply the entry (the engine refuses an illegal
        move, before anything changes), then journal it, with the hand record if it ended the
        hand. Both happen before the task yields, so before anyone hears of the change."""
        state = self.state
        state.apply(entry)
        finished = None
        hand = state.hand
        if isinstance(entry, MoveEntry) and hand is not None and hand.over:
            assert state.match is not None
            names = self._names()
            finished = {"hand": state.match.hands_played, "names": names,
                        "record": hand_record(hand, names)}
        try:
            self.journal.append(self.id, entry, finished)
        except Exception:
            log.exception("table %s: cannot journal %s; closing the table", self.id,
                          type(entry).__name__)
            self.broken = self.closed = True
            raise

    # ----- seats ----------------------------------------------------------------------------

    def _create(self, peer: Peer, msg: CreateTable) -> None:
        self._sit_human(peer, 0, msg.id, code=self.state.code)
        for seat in SEATS[1 : 1 + msg.bots]:
            self._sit_bot(seat, None)
        self._seats_changed()

    def _join(self, peer: Peer, msg: Join) -> None:
        state = self.state
        self._check_code(msg.code)
        if state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has started; spectate")
        if msg.seat is None:
            free = state.free_seats()
            if not free:
                raise ProtocolError(ErrorCode.TABLE_FULL, f"table {self.id} is full")
            seat = free[0]
        else:
            seat = _seat_number(msg.seat)
            if state.seats[seat] is not None:
                raise ProtocolError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        self._sit_human(peer, seat, msg.id)
        self._seats_changed(seat, SeatChange.SAT)

    def _sit_human(
        self, peer: Peer, seat: int, ref: int | str | None, code: str | None = None
    ) -> None:
        token = new_token()
        digest = token_digest(token)
        assert peer.name is not None
        self._commit(SitEntry(seat, peer.name, PlayerKind.HUMAN, digest,
                              program=peer.kind is PlayerKind.BOT))
        self._attach(peer, seat, token)
        self.lobby.index_token(digest, self)
        invite = (str(replace(peer.invite, table=self.id, code=code))
                  if code is not None and peer.invite is not None else None)
        joined = Joined(id=ref, table=self.id, seat=seat, token=token, spectator=False, code=code,
                        invite=invite)
        peer.send(to_dict(joined))
        log.info("table %s: %r sits in seat %d", self.id, peer, seat)

    def _attach(self, peer: Peer, seat: int, token: str | None) -> None:
        self.seat_peers[seat] = peer
        peer.table, peer.seat, peer.token = self, seat, token

    def _sit_bot(self, seat: int, policy: str | None, shown: str | None = None) -> None:
        name = policy or self.config.bot_policy
        self.policies[seat] = bots.make_policy(name, seed=self._bot_seed(seat))
        self._commit(
            SitEntry(seat, shown or f"{name}-bot-{seat}", PlayerKind.BOT, policy=name)
        )

    def _bot_seed(self, seat: int) -> int:
        return random.Random(f"{self.state.seed}/bot/{seat}").getrandbits(32)

    def _spectate(self, peer: Peer, msg: Spectate) -> None:
        self._check_code(msg.code)
        self.spectators.add(peer)
        peer.table, peer.seat, peer.token = self, None, None
        peer.send(to_dict(Joined(id=msg.id, table=self.id, spectator=True)))
        if self.state.hand is not None:
            peer.send(self._catch_up_state(None, self._seats_info()))
        self._seats_changed()

    def _check_code(self, code: str | None) -> None:
        expected = self.state.code
        if self.state.private and expected is not None and (
            code is None or not secrets.compare_digest(code.encode(), expected.encode())
        ):
            raise ProtocolError(ErrorCode.BAD_JOIN_CODE, "wrong or missing join code")

    def _resume(self, peer: Peer, token: str, seq: int | None) -> None:
        """``peer`` takes the seat of ``token`` back: it gets ``joined``, then one ``state``
        with the seat's whole view and the events it missed since state ``seq`` (and the
        ``hand_result`` again if the hand ended meanwhile). A stand-in bot gives the seat back
        at once, so the human makes the seat's next decision."""
        state = self.state
        seat = state.seat_of_token(token)
        if seat is None:
            raise ProtocolError(ErrorCode.BAD_TOKEN, "unknown or expired token")
        old = self.seat_peers[seat]
        if old is not None and old is not peer:
            old.table = None
            old.kick(ErrorCode.REPLACED, "another connection resumed this seat", flush=False)
        self.away_until.pop(seat, None)
        info = state.seats[seat]
        assert info is not None
        change = SeatChange.BACK
        if info.stand_in:
            self.policies.pop(seat, None)
            self._commit(BackEntry(seat))
            hand = state.hand
            if hand is not None and not hand.over and hand.to_act == seat:
                # The stand-in was about to play: the turn is the human's now, on the timer.
                # Another seat's turn keeps its deadline (the others' screens count it down).
                self._schedule()
        elif old is not None and old is not peer:
            change = SeatChange.REPLACED
        self._attach(peer, seat, token)
        peer.send(to_dict(Joined(table=self.id, seat=seat, token=token, spectator=False)))
        log.info("table %s: %r resumes seat %d", self.id, peer, seat)
        seats = self._seats_info()
        hand = state.hand
        if hand is not None:
            message = self._catch_up_state(seat, seats)
            message["missed"] = message["view"]["history"][state.steps_since(seq):]
            peer.send(message)
            if hand.over and (seq is None or seq < state.seq):
                peer.send(self._hand_result_message(hand))
        self._seats_changed(seat, change)

    def _leave(self, peer: Peer, *, disconnected: bool = False) -> None:
        """``peer`` leaves its seat or stops watching. A disconnected seat is kept for the
        grace period (it may resume with its token). A seat that leaves is freed before the
        match, and handed to a stand-in bot for good during it."""
        if peer.table is not self:
            if disconnected:
                return
            raise ProtocolError(ErrorCode.NOT_SEATED, "not at this table")
        peer.table = None
        if peer in self.spectators:
            self.spectators.discard(peer)
            self._seats_changed()
            return
        seat = peer.seat
        peer.seat, peer.token = None, None
        if seat is None or self.seat_peers[seat] is not peer:
            return
        self.seat_peers[seat] = None
        info = self.state.seats[seat]
        digest = info.token_hash if info is not None else None
        if disconnected:
            self.away_until[seat] = trio.current_time() + self._grace()
            change = SeatChange.AWAY
        elif not self.state.started:
            self._commit(VacateEntry(seat))
            self.lobby.forget_token(digest)
            change = SeatChange.LEFT
        else:
            self._stand_in(seat)
            self.lobby.forget_token(digest)
            self.lobby.seat_forfeited(self, seat)
            change = SeatChange.STAND_IN
        log.info("table %s: %r %s seat %d", self.id, peer,
                 "disconnected from" if disconnected else "left", seat)
        self._seats_changed(seat, change)
        if self.state.hand_over:
            self._deal_if_ready()
        else:
            self._schedule()

    def _grace(self) -> float:
        """How long a disconnected human keeps the seat: ``grace`` once the match has begun,
        at most ``pregame_grace`` before (a table abandoned before its match closes soon, and
        its creator's address gets its table back)."""
        if self.state.started:
            return self.config.grace
        return min(self.config.grace, self.config.pregame_grace)

    def _stand_in(self, seat: int, *, returnable: bool = False) -> None:
        policy = self.config.bot_policy
        self.policies[seat] = bots.make_policy(policy, seed=self._bot_seed(seat))
        self._commit(StandInEntry(seat, policy, returnable))

    def _grace_over(self, seat: int) -> None:
        """The human of ``seat`` stayed away too long: free the seat before the match, or let a
        bot stand in (the token still brings the human back)."""
        del self.away_until[seat]
        info = self.state.seats[seat]
        if info is None or info.is_bot or self.seat_peers[seat] is not None:
            return
        if self.state.started:
            self._stand_in(seat, returnable=True)
            self.lobby.seat_forfeited(self, seat)
            change = SeatChange.STAND_IN
            log.info("table %s: seat %d away too long; a bot stands in", self.id, seat)
        else:
            self._commit(VacateEntry(seat))
            self.lobby.forget_token(info.token_hash)
            change = SeatChange.LEFT
        self._seats_changed(seat, change)
        self._schedule()

    def _owner_check(self, peer: Peer) -> None:
        if peer.table is not self or peer.seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may do this")
        if peer.seat != self._owner():
            raise ProtocolError(ErrorCode.NOT_TABLE_OWNER, "only the table's owner may do this")

    def _owner(self) -> int | None:
        """The owner: the lowest human seat with a connection (the creator sits in seat 0)."""
        for seat in SEATS:
            info = self.state.seats[seat]
            if info is not None and not info.is_bot and self.seat_peers[seat] is not None:
                return seat
        return None

    def _add_bot(self, peer: Peer, msg: AddBot) -> None:
        self._owner_check(peer)
        seat = _seat_number(msg.seat)
        if self.state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has started")
        if self.state.seats[seat] is not None:
            raise ProtocolError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        try:
            self._sit_bot(seat, msg.policy)
        except (KeyError, ValueError) as exc:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, str(exc).strip("'\"")) from None
        peer.send(ok_message(msg.id))
        self._seats_changed(seat, SeatChange.SAT)

    def _remove_bot(self, peer: Peer, msg: RemoveBot) -> None:
        self._owner_check(peer)
        seat = _seat_number(msg.seat)
        if self.state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has started")
        info = self.state.seats[seat]
        if info is None or not info.is_bot:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"seat {seat} holds no bot")
        self.policies.pop(seat, None)
        self._commit(VacateEntry(seat))
        peer.send(ok_message(msg.id))
        self._seats_changed(seat, SeatChange.LEFT)

    def _seats_changed(self, seat: int | None = None, change: SeatChange | None = None) -> None:
        """Tell everyone at the table who sits where (and what just happened to ``seat``);
        start a full table that auto-starts."""
        seats = self._seats_info()
        what = {"seat": seat, "change": change.value} if seat is not None and change else None
        self._tell(to_dict(SeatUpdate(table=self.id, seats=seats, change=what)))
        if self.state.full and not self.state.started and self.state.auto_start:
            self._start()

    def _seats_info(self) -> list[dict[str, Any]]:
        owner = self._owner()
        out: list[dict[str, Any]] = []
        for i in SEATS:
            info = self.state.seats[i]
            if info is None:
                out.append({"seat": i, "player": None})
                continue
            entry: dict[str, Any] = {
                "seat": i,
                "name": info.name,
                "player": PlayerKind.BOT.value if info.program else info.player.value,
                "connected": info.is_bot or self.seat_peers[i] is not None,
                "timeouts": info.timeouts,
            }
            if info.is_bot:
                entry["policy"] = info.policy
            elif info.program:
                entry["remote"] = True
            if info.stand_in:
                entry["stand_in"] = True
                if info.token_hash is not None:
                    entry["away"] = True
            if i in self.away_until:
                entry["away"] = True
                entry["grace"] = round(max(0.0, self.away_until[i] - trio.current_time()), 3)
            if i == owner:
                entry["owner"] = True
            out.append(entry)
        return out

    def _audience(self) -> list[Peer]:
        return [p for p in self.seat_peers if p is not None] + list(self.spectators)

    def _tell(self, message: dict[str, Any]) -> None:
        """Send ``message`` to everyone at the table, encoded once per codec mode (a hand's
        result, with every seat's cards and the standings, goes to three seats or more)."""
        frames: dict[Mode | None, bytes] = {}
        for peer in self._audience():
            mode = peer.codec.mode
            frame = frames.get(mode)
            if frame is None:
                frame = frames[mode] = peer.codec.encode(message)
            peer.send_frame(frame)

    def _deserted(self) -> bool:
        """A table closes once no human is connected to a seat, nobody watches, and no seat
        waits for its human within the grace period."""
        return (not self.spectators and not self.away_until
                and all(p is None for p in self.seat_peers))

    # ----- the match ------------------------------------------------------------------------

    def _start_request(self, peer: Peer, msg: Start) -> None:
        self._owner_check(peer)
        if self.state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has already started")
        if not self.state.full:
            raise ProtocolError(ErrorCode.NOT_READY, "three seats must be filled to start")
        self._start(reply=(peer, msg.id))

    def _start(self, reply: tuple[Peer, int | str | None] | None = None) -> None:
        """Start the match; ``reply``: the peer and request id to answer ``ok``, once the start
        is journaled and before the first deal goes out."""
        self._commit(self._deal_entry(StartEntry))
        if reply is not None:
            peer, ref = reply
            peer.send(ok_message(ref))
        self._hand_dealt()

    def _hand_dealt(self) -> None:
        hand = self.state.hand
        assert hand is not None and self.state.match is not None
        self.ready.clear()
        log.info("table %s: hand %d dealt, dealer seat %d", self.id,
                 self.state.match.hands_played + 1, hand.dealer)
        self._schedule()
        self._broadcast(None)

    def _move_request(self, peer: Peer, msg: MoveRequest) -> None:
        if peer.table is not self or peer.seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may move")
        hand = self.state.hand
        if hand is None:
            raise ProtocolError(ErrorCode.NOT_READY, "the match has not started")
        self._play(peer.seat, Move.from_dict(msg.move), reply=(peer, msg.id))

    def _play(
        self,
        seat: int,
        move: Move,
        *,
        timeout: bool = False,
        reply: tuple[Peer, int | str | None] | None = None,
    ) -> None:
        """Play ``move`` for ``seat``; the engine's check when it is applied is the only one
        (``IllegalMove`` leaves everything unchanged). ``reply``: the peer and request id to
        answer ``ok``, before anyone gets the new state."""
        hand = self.state.hand
        assert hand is not None
        index = len(hand.steps)
        self._commit(MoveEntry(seat, move, timeout))
        if reply is not None:
            peer, ref = reply
            peer.send(ok_message(ref))
            self.played_at = trio.current_time()
        self.actions += 1
        self._schedule()
        self._broadcast(index, timeout=timeout)
        if hand.over:
            self._hand_over(hand)

    def _hand_over(self, hand: Hand) -> None:
        message = self._hand_result_message(hand)
        result = message["result"]
        log.info("table %s: hand %d over: %s, winner %s, chips %s", self.id,
                 message["standings"]["hands"], result["end"], result["winner"],
                 result["chips"])
        self._tell(message)
        reason = self.state.match_over
        if reason is not None:
            self._match_over(reason)
        else:
            self._deal_if_ready()

    def _match_over(self, reason: str) -> None:
        """The match reached its declared length: everyone hears ``match_over`` with the final
        standings, and the table closes (the players are back in the lobby)."""
        over = to_dict(MatchOver(table=self.id, reason=reason,
                                 standings=self.state.standings()))
        self._tell(over)
        log.info("table %s: match over (%s) after %d hands", self.id, reason,
                 self.state.hand_number)
        self.closed = True

    def _hand_result_message(self, hand: Hand) -> dict[str, Any]:
        assert hand.result is not None
        result = hand.result.to_dict()
        result["hands"] = [[str(c) for c in sorted(h)] for h in hand.hands]
        result["pot_taken"] = self.state.pot_taken
        standings = self.state.standings()
        next_deal = None
        if math.isfinite(self.turn_at) and self.state.match_over is None:
            next_deal = round(max(0.0, self.turn_at - trio.current_time()), 3)
        return to_dict(HandResult(table=self.id, seq=self.state.seq, result=result,
                                  standings=standings, next_deal=next_deal,
                                  record=hand_record(hand, self._names()),
                                  last=True if self.state.match_over is not None else None))

    def _names(self) -> list[str]:
        """The name in each seat (``""``: empty), as hand records carry them."""
        return [s.name if s else "" for s in self.state.seats]

    def _sync(self, peer: Peer, msg: Sync) -> None:
        """``ok``, then the table as ``peer`` may see it now: one ``state`` (for a seat or a
        spectator) during the match, a ``seat_update`` before it."""
        if peer.table is not self:
            raise ProtocolError(ErrorCode.NOT_SEATED, "not at this table")
        peer.send(ok_message(msg.id))
        seats = self._seats_info()
        if self.state.hand is None:
            peer.send(to_dict(SeatUpdate(table=self.id, seats=seats)))
        else:
            peer.send(self._catch_up_state(peer.seat, seats))

    def _next_hand_request(self, peer: Peer, msg: NextHand) -> None:
        if peer.table is not self or peer.seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may ask")
        if not self.state.hand_over:
            raise ProtocolError(ErrorCode.NOT_READY, "the hand is not over")
        peer.send(ok_message(msg.id))
        self.ready.add(peer.seat)
        self._deal_if_ready()

    def _deal_if_ready(self) -> None:
        """After a hand, deal once every connected human has asked for the next one (with no
        human connected, the turn timer deals)."""
        if not self.state.hand_over or all(p is None for p in self.seat_peers):
            return
        if all(p is None or s in self.ready or p.auto_next
               for s, p in enumerate(self.seat_peers)):
            self._deal()

    def _deal(self) -> None:
        if self.state.match_over is not None:
            return
        self._commit(self._deal_entry(DealEntry))
        self._hand_dealt()

    def _deal_entry(self, kind: type[StartEntry | DealEntry]) -> StartEntry | DealEntry:
        """The ``start`` or ``deal`` entry: the match deals from its seed (the arena's tables
        give their own decks, ``server/arena.py``)."""
        return kind()

    def _schedule(self) -> None:
        """When the task must act on its own: a bot's move, a turn timer, the next deal."""
        state, now = self.state, trio.current_time()
        hand = state.hand
        timer = state.timer
        if hand is None:
            self.turn_at = math.inf
        elif hand.over:
            self.turn_at = now + timer if timer > 0 else math.inf
        else:
            seat = state.seats[hand.to_act]
            if seat is not None and seat.is_bot:
                self.turn_at = now + self.config.bot_delay
            else:
                self.turn_at = now + timer if timer > 0 else math.inf

    def _wake(self) -> None:
        now = trio.current_time()
        for seat, until in sorted(self.away_until.items()):
            if until <= now:
                self._grace_over(seat)
        if self.turn_at > now:
            return
        self.turn_at = math.inf
        hand = self.state.hand
        if hand is None:
            return
        if hand.over:
            self._deal()
            return
        seat = hand.to_act
        info = self.state.seats[seat]
        if info is not None and info.is_bot:
            self._bot_move(seat)
        else:
            self._timeout(seat)

    async def _think(self) -> None:
        """Before a step of its own: a bot seat to act whose policy is slow (``bots.is_slow``)
        decides now, in a worker thread, while the event loop serves the other tables. The
        table waits for the decision without taking any request (they wait in its inbox), so
        the hand cannot change meanwhile and the policy sees exactly the views, in the order,
        it would see on the loop: its decisions are the same. ``_bot_move`` plays it."""
        hand = self.state.hand
        if hand is None or hand.over or self.turn_at > trio.current_time():
            return
        seat = hand.to_act
        info = self.state.seats[seat]
        policy = self.policies.get(seat)
        if info is None or not info.is_bot or policy is None or not bots.is_slow(info.policy):
            return
        view = seat_view(hand, seat)
        decision = await trio.to_thread.run_sync(bots.decide, policy, view,
                                                 limiter=_thinkers())
        self._decided = (seat, len(hand.steps), decision)

    def _bot_move(self, seat: int) -> None:
        hand = self.state.hand
        assert hand is not None
        view = seat_view(hand, seat)
        decided, self._decided = self._decided, None
        if decided is not None and decided[:2] == (seat, len(hand.steps)):
            decision = decided[2]
        else:
            decision = bots.decide(self.policies[seat], view)
        if isinstance(decision, Exception):
            log.error("table %s: bot in seat %d failed; playing for it", self.id, seat,
                      exc_info=decision)
            move = bots.autoplay(view)
        else:
            move = decision
        try:
            self._play(seat, move)
        except IllegalMove:
            log.exception("table %s: bot in seat %d moved illegally; playing for it", self.id,
                          seat)
            self._play(seat, bots.autoplay(view))

    def _timeout(self, seat: int) -> None:
        """Play for a human whose turn timed out: fold a call; draw, then let ``autoplay``
        finish the turn (it ends with a discard)."""
        hand = self.state.hand
        assert hand is not None
        log.info("table %s: seat %d timed out", self.id, seat)
        self.autoplaying = seat
        try:
            for _ in range(_MAX_AUTOPLAY):
                if hand.over or hand.to_act != seat:
                    return
                view = seat_view(hand, seat)
                move = bots.autoplay(view)
                self._play(seat, move, timeout=True)
                if move.action in (Action.FOLD, Action.DISCARD):
                    return
        finally:
            self.autoplaying = None

    # ----- fan-out ----------------------------------------------------------------------------

    def _broadcast(self, index: int | None, *, timeout: bool = False) -> None:
        """Send the new state to every seat (its own view) and every spectator (the public one),
        all with the same ``seq``; ``index`` is the step of the hand that caused it. What all of
        them see alike is built and encoded once (``StateFrames``), a spectators' frame once
        per mode."""
        hand = self.state.hand
        assert hand is not None
        if self._history_of is not hand:
            self._history_of, self._hand_cache = hand, HandCache()
        to_offer = None if hand.over or hand.to_act == self.autoplaying else hand.to_act
        frames = StateFrames(hand, self._state_head(self._shown_seats()), index, timeout,
                             to_offer, self.state.autoplayed, self._hand_cache)
        for seat in SEATS:
            peer = self.seat_peers[seat]
            if peer is not None:
                peer.send_frame(self._state_frame(peer.codec, frames, seat))
        if self.spectators:
            spectated: dict[Mode | None, bytes] = {}
            for peer in self.spectators:
                mode = peer.codec.mode
                frame = spectated.get(mode)
                if frame is None:
                    frame = spectated[mode] = self._state_frame(peer.codec, frames, None)
                peer.send_frame(frame)

    def _state_frame(self, codec: Codec, frames: StateFrames, seat: int | None) -> bytes:
        """The ``state`` frame of this change for ``seat`` (None: a spectator): a subclass may
        tell a seat otherwise."""
        return frames.frame(codec, seat)

    def _shown_seats(self) -> list[dict[str, Any]]:
        """``_seats_info()`` for the states of a step, made again only when something it shows
        has changed (read-only: the same list may go out with many states)."""
        key = self._seats_key()
        shown = self._shown
        if key is None or shown is None or shown[0] != key:
            shown = self._shown = (key, self._seats_info())
        return shown[1]

    def _seats_key(self) -> tuple[Any, ...] | None:
        """Everything ``_seats_info`` shows (the owner follows from it), or None when it shows
        a countdown (a grace period runs)."""
        if self.away_until:
            return None
        return (*self.seat_peers,
                *[None if info is None else _SHOWN_FIELDS(info) for info in self.state.seats])

    def _state_head(self, seats: list[dict[str, Any]]) -> dict[str, Any]:
        """What every recipient's ``state`` message of this change has alike, but the view."""
        head: dict[str, Any] = {"type": State.TYPE, "table": self.id,
                                "seq": self.state.state_seq, "hand": self.state.hand_number,
                                "seats": seats}
        hand = self.state.hand
        if (math.isfinite(self.turn_at) and hand is not None and not hand.over
                and hand.to_act != self.autoplaying and self._human_to_act(hand)):
            head["deadline"] = round(max(0.0, self.turn_at - trio.current_time()), 3)
        return head

    def _told(self, view: dict[str, Any]) -> dict[str, Any]:
        """``view`` (a whole view, or a part of one) as this table tells it: the steps played for
        a timed-out seat are marked in ``history``. The view's maps are shared
        (``seat_view_dict``): changed ones are copies."""
        marked = self.state.autoplayed
        if marked and "history" in view:
            history = list(view["history"])
            for step in marked:
                history[step] = {**history[step], "timeout": True}
            view = {**view, "history": history}
        return view

    def _legal(self, seat: int | None) -> list[dict[str, Any]]:
        """The moves ``state.legal`` offers ``seat`` (shared, read-only): none unless it is to
        act, and none while the server is playing its timed-out turn (it goes on at once)."""
        hand = self.state.hand
        assert hand is not None
        if seat is None or seat == self.autoplaying:
            return []
        return seat_legal(hand, seat)

    def _send_state(
        self,
        peer: Peer,
        seat: int | None,
        index: int | None,
        seats: list[dict[str, Any]],
        *,
        timeout: bool = False,
    ) -> None:
        peer.send(self._state_message(seat, index, seats, timeout=timeout))

    def _catch_up_state(self, seat: int | None, seats: list[dict[str, Any]]) -> dict[str, Any]:
        """The whole ``state`` for a client catching up (a resume, a ``sync``, a spectator's
        first), with the match's ``standings`` once a hand has been settled: a client started
        again would otherwise show no chips until the next ``hand_result``."""
        message = self._state_message(seat, None, seats)
        standings = self.state.standings()
        if standings["hands"]:
            message["standings"] = standings
        return message

    def _state_message(
        self,
        seat: int | None,
        index: int | None,
        seats: list[dict[str, Any]],
        *,
        timeout: bool = False,
    ) -> dict[str, Any]:
        hand = self.state.hand
        assert hand is not None
        view = seat_view_dict(hand, seat)
        event = None
        if index is not None:
            event = dict(view["history"][index])
            if timeout:
                event["timeout"] = True
        # A plain map with the fields of ``State``: validating our own output on every state
        # cost more than the rest of the fan-out (tests parse it back as a ``State``).
        message = self._state_head(seats)
        message["view"] = self._told(view)
        if event is not None:
            message["event"] = event
        legal = self._legal(seat)
        if legal:
            message["legal"] = legal
        return message

    def chat(self, peer: Peer, msg: Chat) -> None:
        """Say ``msg`` at the table. The connection's reader calls this itself: a chat line
        changes nothing at the table, so it never waits in the inbox ahead of moves."""
        try:
            self._chat(peer, msg)
        except ProtocolError as exc:
            peer.send(error_frame(exc, msg.id))

    def _human_to_act(self, hand: Hand) -> bool:
        info = self.state.seats[hand.to_act] if hand.to_act is not None else None
        return info is not None and not info.is_bot

    def _chat(self, peer: Peer, msg: Chat) -> None:
        if peer.table is not self:
            raise ProtocolError(ErrorCode.NOT_SEATED, "not at this table")
        text = msg.text.strip()
        if len(text) > self.config.chat_max:
            raise ProtocolError(
                ErrorCode.CHAT_TOO_LONG, f"chat is limited to {self.config.chat_max} characters"
            )
        if not text or any(not ch.isprintable() for ch in text):
            raise ProtocolError(ErrorCode.BAD_FIELD, "chat text is empty or has control characters")
        peer.send(ok_message(msg.id))
        self._tell(to_dict(ChatLine(table=self.id, seat=peer.seat, name=peer.name or "?",
                                    text=text)))

    # ----- closing ------------------------------------------------------------------------------

    def _host_close(self, msg: HostClose) -> None:
        for peer in self._audience():
            peer.kick(ErrorCode.CLOSED_BY_HOST, msg.reason or f"the host closed table {self.id}")
        log.info("table %s: closed by the host", self.id)
        self.closed = True

    def _close(self, *, for_good: bool) -> None:
        self.closed = True
        self._send.close()
        while True:
            try:
                request = self._inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            if request.peer is not None and not isinstance(request.msg, Disconnected):
                ref = getattr(request.msg, "id", None)
                request.peer.send(error_frame(
                    ProtocolError(ErrorCode.NO_SUCH_TABLE, f"table {self.id} is closed"), ref))
            if request.done is not None:
                request.done.set()
        for peer in self._audience():
            peer.table, peer.seat, peer.token = None, None, None
        for info in self.state.seats:
            if info is not None and info.token_hash:
                self.lobby.forget_token(info.token_hash)
        self.lobby.table_closed(self)
        hands = self.state.match.hands_played if self.state.match else 0
        if for_good:
            self.lobby.table_ended(self)
            self.journal.close_table(self.id)
            log.info("table %s closed after %d hands", self.id, hands)
        elif not self.broken:  # the server stops: the table stays open in the journal
            log.info("table %s stopped after %d hands; it resumes when the server starts again",
                     self.id, hands)


#: The name of the table's handler of each request it takes (``Table._dispatch``; by name, so
#: that a subclass's override, e.g. the arena table's ``_move_request``, is the one called).
_HANDLERS: dict[type[object], str] = {
    Disconnected: "_disconnected",
    Resume: "_resume_request",
    CreateTable: "_create",
    Join: "_join",
    Spectate: "_spectate",
    MoveRequest: "_move_request",
    Leave: "_leave_request",
    AddBot: "_add_bot",
    RemoveBot: "_remove_bot",
    Start: "_start_request",
    NextHand: "_next_hand_request",
    Sync: "_sync",
    HostRemove: "_host_remove",
}


def _seat_number(seat: int) -> int:
    if seat not in SEATS:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"seat must be 0, 1 or 2, not {seat}")
    return seat

