"""The lobby of ``tongits connect``: the server's tables, and commands to create, join or watch
one, or to ``queue`` for a rated ladder match (with the account key ``tongits ladder --register``
kept for this name and server). It is the join step of a ``NetSession``: it lists tables on the
session's connection until the player chooses, then takes the seat; the same screen then shows
the table.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

import trio
from tongits.protocol import ErrorCode, Joined
from tongits.protocol.maps import TableInfoMap
from tongits.protocol.transport import AddressError, Endpoint, Invite

from ..accounts import AccountKeys
from ..connection import Connection, ServerError
from ..user_files import data_dir
from .app import TableScreen
from .dial import Target
from .listing import CREATE_FORM, LOBBY_COMMANDS
from .net import JoinStep, NetSession, SessionOptions
from .seats import SeatStore
from .state import Notice, ServerRefused, TablesListed

REFRESH = 2.0
CREATE_USAGE = f"usage: {CREATE_FORM}"


class LobbyError(Exception):
    """A lobby line that cannot be acted on; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class LobbyChoice:
    action: str  # "create", "join", "watch", "queue" or "unqueue"
    table: str = ""  # table id, or the new table's name
    seat: int | None = None
    bots: int = 0  # a table made in the lobby is for friends, who join it
    timer: float | None = None
    private: bool = False  # a private table: its creator gets an invite link
    hands: int | None = None  # the match's declared length (None: the server's, open-ended)
    code: str | None = None  # the join code of a private table (from its invite link)
    #: the server of the invite link joined (``HOST:PORT``): the lobby's own, or refused
    server: str | None = None


def parse_lobby(line: str) -> LobbyChoice:
    words = line.split()
    if not words:
        raise LobbyError(f"type a command: {LOBBY_COMMANDS}")
    head, args = words[0].lower(), words[1:]
    if head == "create":
        return _create(args)
    if head in ("join", "watch", "spectate") and len(args) == 1 and Invite.looks_like(args[0]):
        try:
            invite = Invite.parse(args[0])
        except AddressError as error:
            raise LobbyError(str(error)) from None
        return LobbyChoice("join" if head == "join" else "watch", invite.table,
                           code=invite.code, server=invite.endpoint.hostport)
    if head == "join" and args:
        # A private table's code may be told rather than linked (10 letters and digits; a
        # seat is one digit): join t3 hnes5rbjkm, join t3 2 hnes5rbjkm
        extra = args[1:]
        seat = int(extra.pop(0)) if extra and extra[0].isdigit() and len(extra[0]) < 3 \
            else None
        if len(extra) > 1 or (extra and not extra[0].isalnum()):
            raise LobbyError("usage: join TABLE [SEAT] [CODE]")
        return LobbyChoice("join", args[0], seat=seat, code=extra[0] if extra else None)
    if head in ("watch", "spectate") and len(args) in (1, 2):
        # A private table's code may be told rather than linked: watch t3 hnes5rbjkm
        return LobbyChoice("watch", args[0], code=args[1] if len(args) == 2 else None)
    if head in ("queue", "unqueue") and not args:
        return LobbyChoice(head)
    if head in ("join", "watch", "spectate"):
        raise LobbyError(f"usage: {head} TABLE" + (" [SEAT]" if head == "join" else "") + " [CODE]")
    raise LobbyError(f"unknown command {words[0]!r}: {LOBBY_COMMANDS}")


def _create(args: list[str]) -> LobbyChoice:
    """``create NAME [bots N] [timer S] [hands N] [private]``, the words after ``create``."""
    if not args:
        raise LobbyError(CREATE_USAGE)
    name, rest = args[0], [word.lower() for word in args[1:]]  # keywords in any case, as moves
    private = "private" in rest
    rest = [word for word in rest if word != "private"]
    opts: dict[str, str] = {}
    while rest:
        if len(rest) < 2 or rest[0] not in ("bots", "timer", "hands"):
            raise LobbyError(CREATE_USAGE)
        opts[rest[0]], rest = rest[1], rest[2:]
    try:
        bots = int(opts.get("bots", "0"))
        timer = float(opts["timer"]) if "timer" in opts else None
        hands = int(opts["hands"]) if "hands" in opts else None
    except ValueError:
        raise LobbyError("bots, timer and hands take numbers") from None
    return LobbyChoice("create", name, bots=bots, timer=timer, private=private, hands=hands)


def table_id(tables: Sequence[TableInfoMap], word: str) -> str:
    """The id of the table ``word`` names: an id as it is, else a listed table's name (any
    case); a name two tables share must be told apart by id."""
    if any(t["table"] == word for t in tables):
        return word
    named = [t for t in tables if t["name"].lower() == word.lower()]
    if len(named) > 1:
        ids = ", ".join(t["table"] for t in named)
        raise LobbyError(f"{len(named)} tables are named {word!r}: use the id ({ids})")
    if named:
        return named[0]["table"]
    return word  # not listed (yet): the server answers for it


class LobbyJoin:
    """The join step: refreshes the table list until ``choose`` is called from the screen."""

    help = f"{LOBBY_COMMANDS} (their forms are listed above)"

    def __init__(self) -> None:
        self.session: NetSession | None = None
        self.tables: Sequence[TableInfoMap] = []
        self._token: trio.lowlevel.TrioToken | None = None
        self._send, self._receive = trio.open_memory_channel[LobbyChoice](8)

    def choose(self, line: str) -> str | None:
        """Called by the screen with a typed line; returns an error to show, or None."""
        try:
            choice = parse_lobby(line)
            if choice.server is not None:
                session = self.session
                here = Endpoint(session.host, session.port).hostport if session else None
                if choice.server != here:
                    return (f"that invite is for {choice.server}, not this server: "
                            "tongits connect LINK")
            elif choice.action in ("join", "watch"):
                choice = replace(choice, table=table_id(self.tables, choice.table))
        except LobbyError as error:
            return str(error)
        if self._token is None:
            return "not connected yet"
        self._token.run_sync_soon(self._send.send_nowait, choice)
        return None

    async def __call__(self, conn: Connection) -> None:
        assert self.session is not None
        sink = self.session.sink
        self._token = trio.lowlevel.current_trio_token()
        while True:
            self.tables = await conn.list_tables()
            sink(TablesListed(self.tables))
            choice: LobbyChoice | None = None
            with trio.move_on_after(REFRESH):  # only the wait: a request is never cut off
                choice = await self._receive.receive()
            if choice is None:
                continue
            try:
                seated = await (self._queue(conn) if choice.action == "queue"
                                else self._take(conn, choice))
            except ServerError as error:
                sink(ServerRefused(error.code, error.message))
                continue
            if seated:
                sink(TablesListed(None))
                return

    async def _queue(self, conn: Connection) -> bool:
        """Wait for a ladder match (``queue``) until the server seats us (True) or the player
        types ``unqueue`` (False). Any other command meanwhile is refused."""
        assert self.session is not None
        sink = self.session.sink
        try:
            await conn.queue()
        except ServerError as error:
            if error.code != ErrorCode.NEEDS_ACCOUNT:
                raise
            server = Endpoint(self.session.host, self.session.port).hostport
            sink(ServerRefused(error.code, f"{self.session.name} has no ladder account kept for "
                               f"{server}: tongits ladder {server} --register "
                               f"{self.session.name}"))
            return False
        sink(Notice("queued for a rated ladder match: waiting for two players near your "
                    "rating (unqueue to stop)"))
        seat: list[Joined] = []
        before = conn.table  # a table left for the lobby may still be named here
        async with trio.open_nursery() as nursery:

            async def seated() -> None:
                # Not taken from the pushed messages: back in the lobby from a table, the
                # session's listener reads them meanwhile.
                seat.append(await conn.next_joined())
                nursery.cancel_scope.cancel()

            nursery.start_soon(seated)
            while True:
                choice = await self._receive.receive()
                if choice.action == "unqueue":
                    await conn.unqueue()
                    nursery.cancel_scope.cancel()
                    break
                sink(ServerRefused("queued", "you are queued for a ladder match: unqueue first"))
        if not seat and conn.table == before:  # not seated just before the unqueue either
            sink(Notice("no longer queued"))
            return False
        return True

    @staticmethod
    async def _take(conn: Connection, choice: LobbyChoice) -> bool:
        """Act on a lobby command; True once seated (or watching)."""
        if choice.action == "unqueue":
            await conn.unqueue()
            return False
        if choice.action == "create":
            await conn.create_table(choice.table, bots=choice.bots, timer=choice.timer,
                                    private=choice.private, hands=choice.hands)
        elif choice.action == "join":
            await conn.join(choice.table, choice.seat, code=choice.code)
        else:
            await conn.spectate(choice.table, choice.code)
        return True


def connect_session(
    target: Target, name: str, password: str | None, *, watch: bool = False
) -> NetSession:
    """The session of ``tongits connect``: its first step is the lobby, or the invite link's
    table (a seat in it, or, ``watch``, watching it); ``lobby`` (where the screen's ``lobby``
    and ``leave`` go) is the server's lobby either way."""
    endpoint, invite = target.endpoint, target.invite
    lobby = LobbyJoin()
    join: JoinStep = lobby
    if invite is not None:
        table, code = invite.table, invite.code

        async def sit_down(conn: Connection) -> None:
            if watch:
                await conn.spectate(table, code)
            else:
                await conn.join(table, code=code)

        join = sit_down
    session = NetSession(endpoint.host, endpoint.port, SessionOptions(
        name=name, join=join, seats=None if watch else SeatStore(), tls=endpoint.tls,
        password=password, lobby=lobby, record_dir=data_dir() / "hands",
        account=AccountKeys().get(endpoint.hostport, name),
        invited=invite.table if invite is not None and not watch else None))
    lobby.session = session
    return session


def connect(
    target: Target, name: str, *, password_file: str | None = None, watch: bool = False
) -> int:
    """``tongits connect ADDRESS --name NAME``: the lobby, then the table; with an invite
    link, straight into the link's table, in a seat or (``watch``) watching it. A seat this
    name held at this server (token saved on disk) is taken back at once, without the lobby
    (not when watching: a watcher takes no seat)."""
    from .dial import Cancelled, DialError, settle
    from .logs import quiet_logging

    try:
        password = settle(target, name, password_file)
    except DialError as error:
        print(f"tongits connect: {error}", file=sys.stderr)
        return error.exit_status if isinstance(error, Cancelled) else 1
    session = connect_session(target, name, password, watch=watch)
    lobby = session.options.lobby
    assert isinstance(lobby, LobbyJoin)
    quiet_logging()
    asyncio.run(TableScreen(session, lobby=lobby).run())
    if session.farewell is not None:
        print(f"tongits connect: {session.farewell}", file=sys.stderr)
        return 1
    return 0
