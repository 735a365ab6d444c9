"""The networked session: ``tongits.client.connection`` run by Trio in guest mode on top of the
asyncio loop that prompt_toolkit runs (trio docs, "Using guest mode to run Trio on top of other
event loops"), so the screen reuses the very connection class the bots use.

Trio's tasks run on the screen's thread between asyncio callbacks, so they hand updates to the
sink directly; the screen's calls go the other way through ``TrioToken.run_sync_soon``. A lost
connection is announced, then retried with the seat token and the ``seq`` of the last message
heard until it comes back: the server answers with the whole view and the events missed
meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import outcome
import trio
from tongits.engine import Move, RuleError, SeatView
from tongits.protocol import (
    Chat,
    ChatLine,
    ClientMessage,
    Error,
    ErrorCode,
    HandResult,
    Leave,
    MatchOver,
    MoveRequest,
    NextHand,
    PlayerKind,
    SeatUpdate,
    Start,
    State,
)
from tongits.protocol.keepalive import DEFAULT_HEARTBEAT
from tongits.protocol.maps import SeatMap, TableInfoMap
from tongits.protocol.transport import AddressError, Endpoint, Invite

from ..connection import (
    Connection,
    ConnectionClosed,
    ServerError,
    highest_seq,
    open_connection,
)
from ..tls import ClientTLS, TrustError
from .records import save_record, saved_words
from .seats import SavedSeat, SeatStore
from .state import (
    ChatReceived,
    ConnectionChanged,
    HandOver,
    LinkStatus,
    MatchEnded,
    Notice,
    SeatsChanged,
    ServerRefused,
    StateUpdate,
    TableLeft,
    TableNamed,
    Update,
)

log = logging.getLogger("tongits.client")

Sink = Callable[[Update], None]
#: Takes a seat once connected (create, join or spectate); not called when resuming.
JoinStep = Callable[[Connection], Awaitable[Any]]
#: Runs before connecting (e.g. an embedded server) and returns (host, port).
Prelude = Callable[[trio.Nursery], Awaitable[tuple[str, int]]]

#: Closing errors after which retrying cannot help.
FINAL = frozenset({
    ErrorCode.REPLACED, ErrorCode.BAD_TOKEN, ErrorCode.VERSION_UNSUPPORTED, ErrorCode.BAD_NAME,
    ErrorCode.BAD_PASSWORD, ErrorCode.TLS_REQUIRED, ErrorCode.REMOVED_BY_HOST,
    ErrorCode.CLOSED_BY_HOST,
})

#: Refusals of the join step (``join``, ``create_table``, ``spectate``; an invite link's table
#: gone or full, a wrong code): asking again gets the same answer, so the session ends with it
#: rather than retrying under "reconnecting (your seat is kept)".
JOIN_REFUSED = frozenset({
    ErrorCode.NO_SUCH_TABLE, ErrorCode.TABLE_FULL, ErrorCode.SEAT_TAKEN, ErrorCode.BAD_JOIN_CODE,
    ErrorCode.TABLE_STARTED, ErrorCode.ALREADY_SEATED, ErrorCode.TOO_MANY_TABLES,
    ErrorCode.BAD_OPTIONS,
})

#: Said when an invite link's table is gone (it closes when its match ends): the lobby follows.
INVITE_CLOSED = ("the invite's table is closed (its match is over, or everyone left): "
                 "create a table or join one")

#: Why a connection ended when the server's certificate is not trusted (``TrustError``): no
#: error code, since the server never got to say anything; final too.
UNTRUSTED_REASON = "untrusted certificate"

#: The banner when a reconnection meets a certificate that is not trusted (one that changed).
UNTRUSTED = "the server's certificate is not the trusted one: ^Q to read what to do"


#: Said when the screen asks for something after the session ended for good.
ENDED = ("not connected any more (the connection ended): ^Q quits; `tongits connect` again "
         "goes back to the server")


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOptions:
    """How a ``NetSession`` says who it is, takes its seat and keeps it.

    ``join`` takes a seat once connected (not run when resuming); ``lobby`` chooses a table in
    the server's lobby, run again when the player goes back there (``to_lobby``; ``None``:
    there is no lobby to go to). ``prelude`` runs before connecting (an embedded server) and
    says where to connect. A lost connection is retried after each of ``retry_delays`` in
    turn (the last one from then on), ``give_up_after`` times. ``seats`` keeps our seat token
    on disk under ``server_key`` (default ``HOST:PORT``) and our name: a session started again
    with the same key and name resumes that seat instead of running ``join``. ``heartbeat``: a
    ``ping`` every that many seconds, so that a network that drops silently is noticed on both
    sides (docs/PROTOCOL.md, ``hello``). ``account``: the key of our ladder account at this
    server, said in every ``hello``. ``record_dir``: where the record of each hand the server
    sends is kept (``None``: not kept). ``invited``: the table of the invite link the session
    was started with, named when a seat saved at another table is taken back instead."""

    name: str
    join: JoinStep
    lobby: JoinStep | None = None
    prelude: Prelude | None = None
    retry_delays: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0)
    give_up_after: int = 60
    seats: SeatStore | None = None
    server_key: str | None = None
    tls: ClientTLS | bool = False
    password: str | None = None
    heartbeat: float | None = DEFAULT_HEARTBEAT
    account: str | None = None
    record_dir: Path | None = None
    invited: str | None = None


@dataclass(frozen=True, slots=True)
class Again:
    """The screen's ``again``: another match with the players of the one that ended."""


@dataclass(frozen=True, slots=True)
class ToLobby:
    """The screen's ``lobby``: back to the server's lobby on the same connection."""


#: What the screen asks the network side to do: a request as it goes on the wire, or a step
#: that takes more than one request.
Outgoing = ClientMessage | Again | ToLobby


class NetSession:
    def __init__(self, host: str, port: int, options: SessionOptions) -> None:
        """A session with the server at ``host``:``port`` (or where ``options.prelude``
        says), as ``options`` says."""
        self.options = options
        self.host, self.port = host, port
        #: our table's entry in the lobby's list (its settings), for ``again``
        self.table_entry: TableInfoMap | None = None
        self.token: str | None = None
        self.table = ""
        #: the table and our seat's token of the match that just ended: ``again`` asks the
        #: server to seat us with its other players (``create_table.rematch``)
        self.ended_seat: tuple[str, str] | None = None
        #: the invite link of the private table we made and sit at, if any
        self.invite: str | None = None
        self.watching: str | None = None  # the table we spectate (no token brings us back)
        self.watch_code: str | None = None  # its join code, if it is private
        self._token_from_disk = False
        #: back from a token on disk: our invite link is still to be said (_say_invite_again)
        self._invite_unsaid = False
        #: whether the records' folder was said (once a session; then only file names)
        self._records_said = False
        self._leaving = False
        self.on_quit = "Your seat is kept: a bot plays it until you connect again with this name."
        self.seq: int | None = None  # of the last state or hand_result delivered
        self.sink: Sink = lambda update: None
        self._trio: trio.lowlevel.TrioToken | None = None
        self._cancel = trio.CancelScope()
        #: how long the last connection's server had been silent when it ended
        #: (``Connection.silent_for``), told with the LOST that follows
        self._silent = 0.0
        self._outbox_send, self._outbox = trio.open_memory_channel[Outgoing](100)
        self._done: asyncio.Future[None] | None = None
        self._early: list[Outgoing] = []
        #: said on the terminal once the screen is gone: the whole of a certificate warning
        #: (what to check, and the command that accepts a new certificate) fits no status line
        self.farewell: str | None = None
        self.match_over = False  # the match ended (match_over): a lost connection is not retried
        #: ``next_hand`` was asked for the hand now over, and whether it still waits to be sent:
        #: a server restarted meanwhile has forgotten it (as the SDK's bots do, it is asked
        #: again on resuming a hand that is still over)
        self._asked_next_hand = self._next_hand_unsent = False
        #: how each kind of outgoing item is sent that is not one plain request
        self._senders: dict[type[Outgoing], Callable[[Connection, Any], Awaitable[None]]] = {
            NextHand: self._send_next_hand,
            Leave: self._send_leave,
            Again: self._send_again,
            ToLobby: self._send_to_lobby,
        }

    @property
    def name(self) -> str:
        return self.options.name

    # ----- the Session interface, called on the screen's side -----------------------------------

    def start(self, sink: Sink) -> None:
        self.sink = sink
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()

        def done(result: outcome.Outcome[None]) -> None:
            if isinstance(result, outcome.Error):
                log.error("network task failed", exc_info=result.error)
                sink(ConnectionChanged(LinkStatus.CLOSED, str(result.error)))
            if self._done is not None and not self._done.done():
                self._done.set_result(None)

        trio.lowlevel.start_guest_run(
            self._main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=done,
            host_uses_signal_set_wakeup_fd=True,
        )

    def _post(self, item: Outgoing) -> None:
        if self._trio is None:
            self._early.append(item)
            return
        try:
            self._trio.run_sync_soon(self._outbox_send.send_nowait, item)
        except trio.RunFinishedError:
            # the session has ended for good (the match over, then the connection lost; a
            # refusal): nothing can be sent any more, and the screen is told so
            self.sink(Notice(ENDED))

    def send_move(self, move: Move) -> None:
        self._post(MoveRequest(move=move.to_dict()))

    def send_chat(self, text: str) -> None:
        self._post(Chat(text=text))

    def next_hand(self) -> None:
        self._asked_next_hand = self._next_hand_unsent = True
        self._post(NextHand())

    def start_match(self) -> None:
        self._post(Start())

    def again(self) -> None:
        """Once the match is over: the table with the same settings (name, rules, timer,
        bots, length, private or not) where the server seats every player of the old one who
        asks (``create_table.rematch``); the old table itself has closed."""
        self._post(Again())

    def to_lobby(self) -> None:
        """Back to the server's lobby on the same connection, giving up our seat first if the
        match still goes on (a bot plays it for good, as ``leave`` does)."""
        self._post(ToLobby())

    def leave(self) -> None:
        """Give the seat up for good (a bot plays it to the end of the match); the saved
        token is forgotten. The screen closes the session afterwards."""
        self._leaving = True
        if self.options.seats is not None:  # at once: the server may not be reachable to hear it
            self.options.seats.forget(self._key, self.name)
        self._post(Leave())

    def close(self) -> None:
        """Stop the network side; after ``leave``, only once the server heard it (or a
        second has passed)."""
        if self._trio is not None:
            stop = self._stop_after_leaving if self._leaving else self._cancel.cancel
            with contextlib.suppress(trio.RunFinishedError):
                self._trio.run_sync_soon(stop)

    def _stop_after_leaving(self) -> None:
        self._cancel.deadline = min(self._cancel.deadline, trio.current_time() + 1.0)

    async def wait_closed(self) -> None:
        if self._done is not None:
            await asyncio.wait_for(asyncio.shield(self._done), 5)

    # ----- the Trio side ----------------------------------------------------------------------

    async def _main(self) -> None:
        self._trio = trio.lowlevel.current_trio_token()
        for item in self._early:
            self._outbox_send.send_nowait(item)
        self._early.clear()
        with self._cancel:
            async with trio.open_nursery() as nursery:
                if self.options.prelude is not None:
                    self.host, self.port = await self.options.prelude(nursery)
                self._load_seat()
                await self._connect_loop()
                nursery.cancel_scope.cancel()

    async def _connect_loop(self) -> None:
        failures = 0
        while True:
            reason = await self._one_connection()
            if self.match_over:  # nothing to come back to: the table closed with the match
                self.sink(ConnectionChanged(LinkStatus.CLOSED, "the match is over"))
                return
            if reason == "bad_token" and self._token_from_disk:
                self._forget_seat()
                self.sink(Notice(f"your saved seat at {self.table or 'the table'} is gone "
                                 "(the table has closed)"))
                continue
            if reason in FINAL or reason in JOIN_REFUSED or reason == UNTRUSTED_REASON:
                detail = UNTRUSTED if reason == UNTRUSTED_REASON else reason
                self.sink(ConnectionChanged(LinkStatus.CLOSED, detail))
                return
            failures += 1
            if failures > self.options.give_up_after:
                self.sink(ConnectionChanged(LinkStatus.CLOSED, reason))
                return
            delays = self.options.retry_delays
            delay = delays[min(failures - 1, len(delays) - 1)]
            self.sink(ConnectionChanged(LinkStatus.LOST, f"({reason}; retry in {delay:g}s)",
                                        silent=self._silent))
            await trio.sleep(delay)

    async def _one_connection(self) -> str:
        """Connect, take or resume the seat, relay messages; return why it ended."""
        self._silent = 0.0
        try:
            return await self._connection()
        except BaseExceptionGroup as group:  # the connection's nursery wraps its errors
            known = group.subgroup(
                lambda e: isinstance(
                    e,
                    ServerError
                    | ConnectionClosed
                    | OSError
                    | trio.BrokenResourceError
                    | trio.TooSlowError
                    | TrustError,
                )
            )
            if known is None:
                raise
            first: BaseException = known
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            return self._reason(first)

    def _reason(self, error: BaseException) -> str:
        if isinstance(error, ServerError):
            if error.code == ErrorCode.SHUTTING_DOWN:  # news, not a refusal: we reconnect
                self.sink(Notice(error.message))
            elif error.code not in FINAL:
                self.sink(ServerRefused(error.code, error.message))
            return error.code
        if isinstance(error, ConnectionClosed):
            return error.error.code if error.error else error.lost or "the server closed"
        if isinstance(error, trio.TooSlowError):
            return "no answer from the server"
        if isinstance(error, TrustError):
            self.farewell = str(error)
            return UNTRUSTED_REASON
        return str(error) or type(error).__name__

    async def _connection(self) -> str:
        try:
            options = self.options
            async with open_connection(
                self.host, self.port, name=options.name, token=self.token,
                seq=self.seq if self.token is not None else None, connect_timeout=5,
                tls=options.tls, password=options.password, heartbeat=options.heartbeat,
                account=options.account,
            ) as conn:
                resumed = self.token is not None
                if not resumed:
                    await self._first_seat(conn)
                self.table = conn.table or self.table
                self._save_seat()
                self.sink(ConnectionChanged(LinkStatus.CONNECTED))
                try:
                    await self._listen(conn, await self._said_after_the_view(conn, resumed),
                                       resumed)
                finally:
                    self._silent = conn.silent_for()
                if conn.closed_by:
                    return conn.closed_by.code
                return conn.lost or "the server closed"
        except (
            ServerError,
            ConnectionClosed,
            OSError,
            trio.BrokenResourceError,
            trio.TooSlowError,
            TrustError,
        ) as error:
            return self._reason(error)

    async def _first_seat(self, conn: Connection) -> None:
        """The session's first step (``join``); an invite link's table that refuses it (closed
        since its match ended, full, a code cut short) is said, and the lobby follows on the
        same connection, where the player can open a table or join another, instead of a
        screen whose session ended."""
        try:
            await self._sit_down(conn)
        except ServerError as error:
            lobby = self.options.lobby
            if lobby is None or self.options.join is lobby or error.code not in JOIN_REFUSED:
                raise
            if error.code == ErrorCode.NO_SUCH_TABLE:
                self.sink(Notice(INVITE_CLOSED))
            else:
                self.sink(ServerRefused(error.code, error.message))
            await self._sit_down(conn, lobby)

    async def _sit_down(self, conn: Connection, step: JoinStep | None = None) -> None:
        """A first connection: ``join`` (or, for a spectator coming back, watch again); or,
        with ``step``, that way to another table."""
        if self.watching is not None and step is None:
            await conn.spectate(self.watching, self.watch_code)
            return
        await (step or self.options.join)(conn)
        self.token, self.invite = conn.token, conn.invite
        if conn.invite is not None:
            self.sink(Notice(invite_words(conn.invite)))
        if conn.token is None and conn.table is not None:
            self.watching, self.watch_code = conn.table, conn.watch_code

    async def _said_after_the_view(self, conn: Connection, resumed: bool) -> list[Update]:
        """What is said once the view is there, so that it describes the view: the table's
        name (also now, for the title) and, back from a token on disk, that we are back."""
        after_view: list[Update] = []
        named = await self._table_named(conn)
        if named is not None:  # now for the title, again to count the view's hand
            self.sink(named)
            after_view.append(named)
            link = self._browser_link(named)
            if link is not None and not resumed:
                after_view.append(Notice(f"friends in a browser or on a phone open {link}"))
        if resumed and self._token_from_disk:
            self._token_from_disk = False
            back = f"back in your seat at {self.table}"
            invited = self.options.invited
            if invited is not None and invited != self.table:
                back += (f", not {invited} of the invite link: `leave` gives this seat to a bot"
                         " for good and goes to the lobby, where `join` takes the link")
            after_view.append(Notice(back, this_hand=True))
            self._invite_unsaid = self.invite is not None
        return after_view

    async def _listen(self, conn: Connection, after_view: list[Update], resumed: bool) -> None:
        """Deliver the server's messages (and send ours) until the connection ends; a resumed
        seat whose hand is still over asks for the next one again if it had (``next_hand``)."""
        first = True
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._send_loop, conn)
            try:
                async for msg in conn:
                    self._deliver(msg, conn.seat)
                    if first and isinstance(msg, SeatUpdate):
                        # A table still waiting for players sends no state, only its seats:
                        # what is said of our coming back is said now, not at the deal.
                        for said in [u for u in after_view if isinstance(u, Notice)]:
                            after_view.remove(said)
                            self.sink(said)
                    if self._invite_unsaid and isinstance(msg, State | SeatUpdate):
                        self._say_invite_again(msg.seats)
                    if isinstance(msg, State):
                        for update in after_view:
                            self.sink(update)
                        after_view.clear()
                        if first and resumed and msg.view.get("result") is not None and \
                                self._asked_next_hand and not self._next_hand_unsent:
                            self.next_hand()
                        first = False
            finally:
                nursery.cancel_scope.cancel()

    def _say_invite_again(self, seats: Sequence[SeatMap]) -> None:
        """Back from a token on disk at the private table we made, whose seats are not all
        taken yet: its invite link again (said once; the ``joined`` that gave it is not sent
        to a resume, and a table waiting for players sends no ``state``)."""
        self._invite_unsaid = False
        if self.invite is not None and any(seat["player"] is None for seat in seats):
            self.sink(Notice(invite_words(self.invite)))

    def _browser_link(self, named: TableNamed) -> str | None:
        """The page's address opening into a public table still waiting for players (the
        page shows it to its players; a terminal at a public table said only "friends type
        `join Friday`", which a friend with a phone cannot type): None for a private table
        (its invite link holds the code), a match begun, or a server of this process (``tongits
        play``, which says its address itself when it lets friends in)."""
        entry = self.table_entry
        if (named.private or self.options.prelude is not None or entry is None
                or entry["started"] or entry["players"] >= 3):
            return None
        tls = self.options.tls is not False
        return Invite(Endpoint(self.host, self.port, tls), named.table).browser()

    async def _table_named(self, conn: Connection) -> TableNamed | None:
        """The table's name and hands played, from the lobby's list (the table's messages
        carry only its id), asked for alone: the lobby's first page may not hold it (a server
        that predates the filter answers with that page, searched as before)."""
        for table in await conn.list_tables(table=self.table):
            if table["table"] == self.table and table["name"]:
                self.table_entry = table
                return TableNamed(table["name"], table["hands"], self.table, conn.seat,
                                  table["private"], table.get("match_length", {}).get("hands"))
        return None

    async def _send_loop(self, conn: Connection) -> None:
        async for item in self._outbox:
            send = self._senders.get(type(item), self._send_request)
            try:
                await send(conn, item)
            except ServerError as error:
                self.sink(ServerRefused(error.code, error.message))

    async def _send_request(self, conn: Connection, request: ClientMessage) -> None:
        await conn.request(request)

    async def _send_next_hand(self, conn: Connection, request: NextHand) -> None:
        self._next_hand_unsent = False
        await conn.request(request)

    async def _send_leave(self, conn: Connection, request: Leave) -> None:
        self._forget_seat()
        await conn.leave()
        self._cancel.cancel()

    async def _send_again(self, conn: Connection, step: Again) -> None:
        await self._another_table(conn, self._same_again)

    async def _send_to_lobby(self, conn: Connection, step: ToLobby) -> None:
        if self.options.lobby is not None:
            await self._another_table(conn, self.options.lobby)

    async def _another_table(self, conn: Connection, step: JoinStep) -> None:
        """Leave this table (resigning a seat in a match still played; a closed table, after
        ``match_over``, has nothing to leave), forget all about it, and take a seat (or watch)
        the way ``step`` does, on the same connection."""
        if conn.table is not None and not self.match_over:
            await conn.leave()
        self._forget_seat()
        self.watching = self.watch_code = None
        self.match_over = self._asked_next_hand = self._next_hand_unsent = False
        self.sink(TableLeft())
        try:
            await self._sit_down(conn, step)
        except ServerError as error:  # no new table (too many): said, and the lobby instead
            lobby = self.options.lobby
            if lobby is None or step is lobby:
                raise
            self.sink(ServerRefused(error.code, error.message))
            await self._sit_down(conn, lobby)
        self.table = conn.table or ""
        self._save_seat()
        named = await self._table_named(conn)
        if named is not None:
            self.sink(named)

    async def _same_again(self, conn: Connection) -> None:
        """Another match with the players of the match that just ended (``ended_seat``): the
        server seats everyone of it who asks at one new table with its settings. A server
        that no longer knows that match (restarted meanwhile) gets a new table with those
        settings, as the lobby listed them."""
        entry = self.table_entry
        settings: dict[str, Any] = {}  # never listed (the server did not name it): the defaults
        if entry is not None:
            length = entry.get("match_length", {})
            bots = sum(s["player"] == PlayerKind.BOT and not s.get("remote")
                       for s in entry["seats"])
            settings = {"options": entry["options"], "timer": entry["timer"],
                        "private": entry["private"], "bots": min(bots, 2),
                        "hands": length.get("hands"), "target": length.get("target")}
        name = entry["name"] if entry is not None and entry["name"] else "again"
        ended, self.ended_seat = self.ended_seat, None
        if ended is not None:
            try:
                await conn.create_table(name, rematch=ended[0], token=ended[1], **settings)
                return
            except ServerError as error:
                if error.code != ErrorCode.BAD_TOKEN:
                    raise
        await conn.create_table(name, **settings)

    def _keep_record(self, msg: HandResult) -> None:
        """Write the hand's record (``tongits replay`` reads it) and say where."""
        assert self.options.record_dir is not None and msg.record is not None
        try:
            path = save_record(self.options.record_dir, self._key, msg.table,
                               msg.standings["hands"], msg.record)
        except OSError as error:
            self.sink(ServerRefused("records", f"hand record not written: {error}"))
            return
        for line in saved_words(path, self._records_said):
            self.sink(Notice(line, this_hand=True))
        self._records_said = True

    # ----- the seat token on disk ---------------------------------------------------------------

    @property
    def _key(self) -> str:
        return self.options.server_key or f"{self.host}:{self.port}"

    def _load_seat(self) -> None:
        seats = self.options.seats
        saved = seats.load(self._key, self.name) if seats is not None else None
        if saved is not None and self.token is None:
            self.token, self.table = saved.token, saved.table
            self.invite = saved.invite or None
            self._token_from_disk = True

    def _save_seat(self) -> None:
        if self.options.seats is not None and self.token is not None:
            self.options.seats.save(SavedSeat(self._key, self.name, self.token, self.table,
                                              invite=self.invite or ""))

    def _forget_seat(self) -> None:
        if self.options.seats is not None:
            self.options.seats.forget(self._key, self.name)
        self.token, self.seq, self._token_from_disk = None, None, False
        self.invite = None

    def _match_ended(self, msg: MatchOver) -> None:
        """The table has closed: its token opens nothing any more but ``again`` (kept in
        ``ended_seat``)."""
        if self.token is not None:
            self.ended_seat = (msg.table, self.token)
        self._forget_seat()
        self.match_over = True
        self.sink(MatchEnded(msg.reason, msg.standings))

    def _deliver(self, msg: Any, seat: int | None = None) -> None:
        """Hand ``msg`` to the screen as an ``Update``; changes to our own ``seat`` (sitting
        down, coming back) are left out of the log: the screen shows them itself."""
        if isinstance(msg, State):
            # Resumed with a token read from disk, without a seq heard: nothing to mark.
            heard = self.seq is not None
            self.seq = highest_seq(self.seq, msg.seq)
            if msg.view.get("result") is None:
                self._asked_next_hand = False
            try:
                view = SeatView.from_dict(msg.view, msg.legal)
            except (KeyError, TypeError, ValueError, RuleError) as exc:
                log.warning("a state whose view cannot be read was ignored: %r", exc)
                self.sink(ServerRefused("bad_view", "the server sent a view that cannot be read"))
                return
            missed = len(msg.missed) if msg.missed is not None and heard else None
            self.sink(
                StateUpdate(view, msg.seats, msg.deadline, msg.table, missed, msg.standings)
            )
        elif isinstance(msg, HandResult):
            self.seq = highest_seq(self.seq, msg.seq)
            self.sink(HandOver(msg.result, msg.standings, msg.next_deal, msg.record,
                               msg.result.get("why", [])))
            if msg.record is not None and self.options.record_dir is not None:
                self._keep_record(msg)
        elif isinstance(msg, MatchOver):
            self._match_ended(msg)
        elif isinstance(msg, ChatLine):
            self.sink(ChatReceived(msg.seat, msg.name, msg.text, msg.n, bool(msg.earlier)))
        elif isinstance(msg, SeatUpdate):
            ours = msg.change is not None and msg.change["seat"] == seat
            self.sink(SeatsChanged(msg.seats, None if ours else msg.change, msg.deadline))
        elif isinstance(msg, Error):
            self.sink(ServerRefused(msg.code, msg.message))


def invite_words(link: str) -> str:
    """The line that hands a private table's invite link out: the ``tongits connect`` command
    a friend pastes into a shell and, beside it, the same link for a friend's browser. The
    link is in double quotes: bare, a shell reads its ``&`` as "run in the background" (bash
    then says ``--name: command not found``) and zsh its ``?`` as a file pattern; double quotes
    mean the same to bash, zsh, PowerShell and Windows' cmd, and a link holds nothing they
    treat inside them (all but letters, digits and ``:/?=&#%._-~[]`` is %-encoded)."""
    try:
        web = Invite.parse(link).browser()
    except AddressError:
        return f"invite friends: {link}"
    return f'invite friends: tongits connect "{link}" --name NAME (in a browser: {web})'
