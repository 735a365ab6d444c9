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

The table's work is done by its parts: ``audience.Audience`` (the fan-out), ``clock.Clock``,
``seating.Seating``, ``progression.Progression`` (deals, moves, the turns the server plays),
and a ``dealing.Dealing`` (``dealing.MatchDealing``; the arena's, ``arena.ArenaDealing``; a
ladder match's, ``ladder.ladder_dealing.LadderDealing``). A move request goes straight to
``Progression``, inside the dealing's watch (``Dealing.watching``); whatever changes the
state, the part that changes it commits through the table's ``ledger.Ledger``, never back up
through the table. The parts get what they share when they are made (``parts.TableParts``:
the state, ledger, clock, bots and who is ready, and the parts made before them); what they
still ask of the table itself, each names as a small Protocol (``SeatingHost``: the lobby's
token index and the start; ``MatchHost``, ``ArenaHost``: parts made after the dealing).

A human whose connection drops keeps the seat for ``grace`` seconds (the turn timer still
runs); then a server bot stands in, and the seat's token still resumes it: the human is back
for the next decision. The table closes once nobody is connected and no seat is within its
grace period, so a table restored after a restart waits ``grace`` seconds for its players.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import trio
from tongits.protocol import (
    AddBot,
    Chat,
    CreateTable,
    ErrorCode,
    Join,
    Leave,
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
    Sync,
    encode_value,
    error_message,
    ok_message,
    to_dict,
)
from tongits.protocol.maps import TableInfoMap
from tongits.protocol.phrases import counted

from ..errors import error_frame, is_refusal
from ..pace import AddressPace
from ..storage.commit import GroupCommit
from ..storage.journal import table_number
from .audience import Audience
from .clock import Clock
from .dealing import Dealing, MatchDealing
from .ledger import Ledger
from .parts import TableParts
from .progression import Progression
from .requests import Disconnected, HostClose, HostRemove, Resume, SeatBot, TableRequest
from .seating import Seating
from .table import TableLogState

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..net.peer import Peer

log = logging.getLogger("tongits.server")

class TableDirectory(Protocol):
    """What a table tells the lobby that holds it (``lobby.Lobby``)."""

    def listing_changed(self) -> None: ...

    def index_token(self, digest: str, table: Table) -> None: ...

    def forget_token(self, digest: str | None) -> None: ...

    def table_closed(self, table: Table) -> None: ...




@dataclass(slots=True)
class Request:
    peer: Peer | None
    msg: TableRequest
    done: trio.Event | None = field(default=None)


class Table:
    """The task that owns one table; ``state`` is read by nobody else.

    Its parts: ``audience`` (who is at the table, and the fan-out of what they are told),
    ``clock`` (its timers, bots and timed-out turns), ``seating`` (who plays each seat),
    ``progression`` (the match's deals, moves and hands' ends), and ``dealing``, given by whoever
    makes the table (``MatchDealing`` by default; the arena's, ``server/table/arena.py``)
    from the ``TableParts`` and the table."""

    def __init__(
        self,
        state: TableLogState,
        config: ServerConfig,
        lobby: TableDirectory,
        journal: GroupCommit,
        *,
        restored: bool = False,
        dealing: Callable[[TableParts, Table], Dealing] = MatchDealing,
    ) -> None:
        self.state = state
        self.config = config
        self.lobby = lobby
        self.journal = journal
        self.id = state.id
        self.closed = False
        self.restored = restored
        #: a step failed (``_fail``): the table is closed for good, its log kept
        self.failed = False
        #: the table has ended for good (``_end``)
        self._ended = False
        #: the creator's address for the per-address table limit (``Lobby.create``)
        self.quota: str | None = None
        #: the lobby entry encoded per mode, until the next step (``listing_entry``)
        self._listed: dict[Mode, bytes] = {}
        self._options = state.options.to_dict(omit_defaults=False)
        #: what the parts share; its ledger is the only way ``state`` changes
        self.parts = TableParts(self.id, state, Ledger(self.id, state, journal),
                                Clock(state, config), {}, set())
        self.clock: Clock = self.parts.clock
        self.dealing: Dealing = dealing(self.parts, self)
        self.clock.paused = self.dealing.paused
        self.audience: Audience = Audience(self.id, state, self.clock, self.dealing)
        self.seating: Seating = Seating(self, self.parts, self.audience, self.dealing,
                                        config.bot_policy)
        self.progression: Progression = Progression(self, self.parts, self.audience,
                                                    self.dealing, self.seating)
        self._send, self._inbox = trio.open_memory_channel[Request](math.inf)
        #: requests handed over (``_put``) and not yet taken by the table's task
        self._queued = 0
        #: the table's task waits for a request and none is on its way (``call`` steps inline)
        self._idle = False
        #: the scope of that wait, whose deadline is the table's ``wake_at``
        self._waiting: trio.CancelScope | None = None
        #: how fast each address may chat here
        self._chat_pace = AddressPace(config.chat_rate, config.chat_burst)

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

    def summary(self) -> TableInfoMap:
        """The table's entry in ``tables``; read by the lobby, in the same thread. Seats hold no
        ``grace`` countdown here: an entry is encoded once per change, not per request."""
        state = self.state
        seats = self.audience.seats_info()
        for seat in seats:
            seat.pop("grace", None)
        return {
            "table": self.id,
            "name": state.name,
            "seats": seats,
            "players": sum(1 for s in state.seats if s is not None),
            "humans": sum(1 for s in seats if s["player"] == PlayerKind.HUMAN),
            "bots": sum(1 for s in seats if s["player"] == PlayerKind.BOT),
            "spectators": len(self.audience.spectators),
            "options": self._options,
            "timer": state.timer,
            "private": state.private,
            "started": state.started,
            "hands": state.match.hands_played if state.match else 0,
            "match_length": state.length.to_dict(),
        }

    def index_token(self, digest: str) -> None:
        """The lobby finds this table by the token of ``digest`` (``resume``)."""
        self.lobby.index_token(digest, self)

    def forget_token(self, digest: str | None) -> None:
        self.lobby.forget_token(digest)

    def start_match(self) -> None:
        """Start the match (``Progression.start``): its seats are full and it starts then."""
        self.progression.start()

    @property
    def played_at(self) -> float:
        """When a human last moved here (else when the table was made): the table idle longest
        may be closed to make room on a full server (``Lobby.make_room``)."""
        return self.progression.played_at

    @property
    def broken(self) -> bool:
        """An entry could not be journaled: the table closes, its log as committed so far."""
        return self.parts.ledger.broken

    # ----- the task -----------------------------------------------------------------------

    @property
    def wake_at(self) -> float:
        """When the task must wake up on its own (``Clock.wake_at``)."""
        return self.clock.wake_at

    async def run(self) -> None:
        """The table's task. Its wall: whatever fails in a step fails this table only
        (``_fail``), never the server."""
        self.dealing.opened()
        state = self.state
        log.info("table %s %r %s (timer %s s, private %s)", self.id, state.name,
                 "restored" if self.restored else "created", state.timer, state.private)
        try:
            if self.restored:
                self._restore()
            while not self.closed:
                if self.wake_at <= trio.current_time():
                    await self.progression.think()
                    await self.journal.settled()
                    self.journal.step_begins()
                    corked, joinable = self.audience.cork(), self.joinable
                    try:
                        self.dealing.wake()
                    except Exception as exc:  # noqa: BLE001 - the table's wall
                        self._fail(exc)
                    finally:
                        self.journal.hold(corked)
                        self._stepped(joinable)
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
        self.journal.step_begins()
        corked, joinable = self.audience.cork(request.peer), self.joinable
        try:
            self._handle(request)
        except Exception as exc:  # noqa: BLE001 - the table's wall
            self._fail(exc, request)
        finally:
            self.journal.hold(corked)
            self._stepped(joinable)

    def _stepped(self, joinable: bool) -> None:
        """After a step: the lobby entry may have changed, and with it the lobby's order; the
        table closes when the step ended its match or left it deserted (``Dealing.deserted``),
        and a step that closed the table ends it now (``_end``)."""
        self._listed.clear()
        if self.joinable != joinable:
            self.lobby.listing_changed()
        if not self.closed and (self.state.match_over is not None or self.dealing.deserted()):
            self.closed = True
        if self.closed and not self.broken:
            self._end()

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
        for peer in self.audience.everyone():
            if request is None or peer is not request.peer:
                peer.send(error_message(ErrorCode.TABLE_FAILED, message))
        if request is not None and request.peer is not None:
            request.peer.send(error_message(ErrorCode.TABLE_FAILED, message, ref))


    def _restore(self) -> None:
        """After a restart (``Seating.restore``); a match that ended just before it is over,
        and a table nobody can come back to closes at once."""
        self.seating.restore()
        if self.state.match_over is not None or self.dealing.deserted():
            self.closed = True

    def _handle(self, request: Request) -> None:
        """Handle one request; a refusal (``errors.is_refusal``) is answered with its error and
        changes nothing; anything else propagates to ``run``, which fails the table."""
        peer, msg = request.peer, request.msg
        if peer is None:
            if isinstance(msg, HostClose):
                self._host_close(msg)
            elif isinstance(msg, SeatBot) and not self.state.started:
                self.seating.sit_bot(msg.seat, msg.policy, msg.name)
                self.seating.changed(msg.seat, SeatChange.SAT)
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
            self.seating.leave(peer, disconnected=True)

    def _dispatch(self, peer: Peer, msg: TableRequest) -> None:
        handler = _HANDLERS.get(type(msg))
        if handler is None:
            kind = getattr(msg, "TYPE", type(msg).__name__)
            raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"{kind} is not a table request")
        handler(self, peer, msg)

    def _disconnected(self, peer: Peer, _msg: Disconnected) -> None:
        self.seating.leave(peer, disconnected=True)

    def _resume_request(self, peer: Peer, msg: Resume) -> None:
        self.seating.resume(peer, msg.token, msg.seq)

    def _join(self, peer: Peer, msg: Join) -> None:
        if not self.dealing.join(peer, msg):
            self.seating.join(peer, msg)

    def _leave_request(self, peer: Peer, msg: Leave) -> None:
        self.seating.leave(peer)
        peer.send(ok_message(msg.id))

    def _host_remove(self, peer: Peer, msg: HostRemove) -> None:
        if peer.table is self:
            self.seating.leave(peer)
        peer.kick(ErrorCode.REMOVED_BY_HOST, "the host removed you from the server")

    def _sync(self, peer: Peer, msg: Sync) -> None:
        """``ok``, then the table as ``peer`` may see it now: one ``state`` (for a seat or a
        spectator) during the match, a ``seat_update`` before it."""
        if peer.table is not self:
            raise ProtocolError(ErrorCode.NOT_SEATED, "not at this table")
        peer.send(ok_message(msg.id))
        seats = self.audience.seats_info()
        if self.state.hand is None:
            peer.send(to_dict(SeatUpdate(table=self.id, seats=seats)))
        else:
            peer.send(self.audience.catch_up_state(peer.seat, seats))

    def chat(self, peer: Peer, msg: Chat) -> None:
        """Say ``msg`` at the table. The connection's reader calls this itself: a chat line
        changes nothing at the table, so it never waits in the inbox ahead of moves."""
        try:
            self._chat(peer, msg)
        except ProtocolError as exc:
            peer.send(error_frame(exc, msg.id))

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
        wait = self._chat_pace.take(peer.quota, trio.current_time())
        if wait:
            raise ProtocolError(ErrorCode.CHAT_TOO_FAST, "too many chat lines from your address "
                                f"at this table: say the next in {wait} s")
        peer.send(ok_message(msg.id))
        self.audience.chat.say(peer.seat, peer.name or "?", text)

    # ----- closing ------------------------------------------------------------------------------

    def _host_close(self, msg: HostClose) -> None:
        for peer in self.audience.everyone():
            peer.kick(ErrorCode.CLOSED_BY_HOST, msg.reason or f"the host closed table {self.id}")
        log.info("table %s: closed by the host", self.id)
        self.closed = True

    def _close(self, *, for_good: bool) -> None:
        """The table's task ends: requests still in the inbox are refused, and the table ends
        (``_end``) unless the server is stopping, when it stays open in the journal."""
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
        if for_good:
            self._end()
            return
        self._leave_lobby()
        if not self.broken:  # the server stops: the table stays open in the journal
            hands = self.state.match.hands_played if self.state.match else 0
            log.info("table %s stopped after %s; it resumes when the server starts again",
                     self.id, counted(hands, "hand"))

    def _end(self) -> None:
        """The table is closed for good: everyone at it is back in the lobby, which forgets the
        table, its dealing ends it (``Dealing.ended``: a ladder match is rated) and the journal
        closes it. Done once, in the step that closed the table (``_stepped``), before anything
        that step said goes out: a player told ``match_over`` may create, join or ``queue`` at
        once, without waiting for the table's task to wind up."""
        if self._ended:
            return
        self._ended = True
        self._leave_lobby()
        self.dealing.ended()
        self.journal.close_table(self.id)
        hands = self.state.match.hands_played if self.state.match else 0
        log.info("table %s closed after %s", self.id, counted(hands, "hand"))

    def _leave_lobby(self) -> None:
        """Everyone still at the table is back in the lobby, and the lobby forgets the table
        and its tokens."""
        for peer in self.audience.everyone():
            if peer.table is self:
                peer.table, peer.seat, peer.token = None, None, None
        for info in self.state.seats:
            if info is not None and info.token_hash:
                self.lobby.forget_token(info.token_hash)
        self.lobby.table_closed(self)


#: The handler of each request a table takes (``Table._dispatch``), built once for all tables.
_HANDLERS: dict[type[object], Callable[[Table, Peer, Any], None]] = {
    Disconnected: Table._disconnected,
    Resume: Table._resume_request,
    CreateTable: lambda table, peer, msg: table.seating.create(peer, msg),
    Join: Table._join,
    Spectate: lambda table, peer, msg: table.seating.spectate(peer, msg),
    MoveRequest: lambda table, peer, msg: table.progression.move_request(peer, msg),
    Leave: Table._leave_request,
    AddBot: lambda table, peer, msg: table.seating.add_bot(peer, msg),
    RemoveBot: lambda table, peer, msg: table.seating.remove_bot(peer, msg),
    Start: lambda table, peer, msg: table.progression.start_request(peer, msg),
    NextHand: lambda table, peer, msg: table.progression.next_hand_request(peer, msg),
    Sync: Table._sync,
    HostRemove: Table._host_remove,
}
