"""Where each request of a connection goes: one route table keyed by the message's class.

``Router.request`` parses a decoded frame, holds a connection to ``hello`` first
(``handshake.Handshake``), and hands every later request to the route of its class: the
lobby's own (``ping``, ``list_tables``, sitting down or watching) here, the ladder's from
``ladder_requests``, and every other request to the table the connection is at. Lobby-changing
requests (create, join, spectate) wait for the table's answer, so that a connection is always
at one table at most. A failure becomes an ``error`` frame in one place; a fatal one ends the
connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio
from tongits.protocol import (
    Chat,
    CreateTable,
    ErrorCode,
    Hello,
    Join,
    ListTables,
    Mode,
    Ping,
    Pong,
    ProtocolError,
    Spectate,
    Sync,
    Tables,
    parse_client,
    to_dict,
)

from .config import ServerConfig
from .errors import FATAL, error_frame, request_ref
from .handshake import Handshake
from .lobby import Lobby
from .net.peer import Peer
from .pace import AddressPace
from .table.actor import Table

#: What one ``list_tables`` (or ``register``, or ``sync``) costs in the rate limit, in
#: messages: a page and a whole state are the most expensive replies (docs/PROTOCOL.md,
#: "Limits").
LIST_TABLES_COST = 5
#: The share of one connection's message rate and burst that one address may spend on lobby
#: pages and syncs with all its connections (``pace``): 10 a second, 30 at once, by default;
#: a browser in the lobby asks for a page every 4 s.
LOBBY_PAGE_SHARE = 0.5
#: Addresses the lobby pages' and syncs' bucket remembers before it forgets those that are
#: full again.
LOBBY_PAGE_ADDRESSES = 4096

#: Bytes a ``tables`` reply keeps free beyond its head as measured with no ``total`` and
#: ``next`` (their digits, the list's header and brackets).
_PAGE_SLACK = 64

#: A route: what to do with one request of a peer that has said ``hello``.
Route = Callable[[Peer, Any], Awaitable[None]]


def charge(peer: Peer, what: str) -> None:
    """Take ``LIST_TABLES_COST`` messages of ``peer``'s rate limit for an expensive request
    (the one message it is already counted as included); ``rate_limited`` if it has not that
    many."""
    if not peer.take_token(LIST_TABLES_COST - 1):
        raise ProtocolError(ErrorCode.RATE_LIMITED, f"{what} counts as {LIST_TABLES_COST} messages")


class Router:
    """The route table: the lobby's routes, then ``routes`` (the ladder's); a request of a
    class in neither goes to the connection's table."""

    def __init__(self, config: ServerConfig, lobby: Lobby, handshake: Handshake,
                 routes: Mapping[type[Any], Route]) -> None:
        self.config = config
        self.lobby = lobby
        self.handshake = handshake
        self._pages = AddressPace(config.rate * LOBBY_PAGE_SHARE,
                                  config.burst * LOBBY_PAGE_SHARE, LOBBY_PAGE_ADDRESSES)
        self.routes: dict[type[Any], Route] = {
            Hello: self._hello_again, Ping: self._ping, ListTables: self._list_tables,
            CreateTable: self._sit, Join: self._sit, Spectate: self._sit, Chat: self._chat,
            Sync: self._sync,
            **routes,
        }

    async def request(self, peer: Peer, raw: dict[Any, Any]) -> None:
        """Handle one decoded frame of ``peer``: its answer, or an ``error`` frame (a fatal
        one ends the connection)."""
        ref = request_ref(raw)
        try:
            msg = parse_client(raw)
            if peer.hello_done:
                route = self.routes.get(type(msg))
                if route is not None:
                    await route(peer, msg)
                elif peer.table is None:  # every other request is the table's
                    raise ProtocolError(ErrorCode.NOT_SEATED, f"{msg.TYPE} needs a table")
                else:  # it waits for the table's answer
                    await peer.table.call(peer, msg)
            elif isinstance(msg, Hello):
                await self.handshake.hello(peer, msg)
            else:
                raise ProtocolError(ErrorCode.HELLO_REQUIRED, "say hello first", ref)
        except Exception as exc:  # noqa: BLE001 - mapped to an error frame in one place
            frame = error_frame(exc, ref)
            if frame["code"] in FATAL:
                peer.kick(frame["code"], frame["message"], frame.get("ref"))
            else:
                peer.send(frame)

    async def _hello_again(self, peer: Peer, msg: Hello) -> None:
        raise ProtocolError(ErrorCode.BAD_FIELD, "hello was already received")

    async def _ping(self, peer: Peer, msg: Ping) -> None:
        peer.send(to_dict(Pong(id=msg.id)))

    async def _list_tables(self, peer: Peer, msg: ListTables) -> None:
        """Answer with one page of the lobby, its entries spliced in as they were encoded
        (never a frame over ``max_frame_size``, the limit the server enforces)."""
        self._expensive(peer, "list_tables")
        head = _tables_head(msg, 0, None)
        budget = self.config.max_frame_size - len(peer.codec.encode(head)) - _PAGE_SLACK
        page = self.lobby.page(msg, peer.codec.mode or Mode.BINARY, budget)
        head = _tables_head(msg, page.total, page.next)
        peer.send_frame(peer.codec.encode_spliced(head, "tables", page.entries))

    async def _sync(self, peer: Peer, msg: Sync) -> None:
        """A whole state, which the table's task builds between its moves: charged as a lobby
        page (sixty connections of one address syncing at their rate slowed a table's moves,
        p99 14 -> 66 ms, and took 3.9 MB a second)."""
        if peer.table is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, f"{msg.TYPE} needs a table")
        self._expensive(peer, "sync")
        await peer.table.call(peer, msg)

    def _expensive(self, peer: Peer, what: str) -> None:
        """Charge an expensive request (``charge``) and count it in its address's bucket of
        them; ``rate_limited`` beyond either."""
        charge(peer, what)
        if self._pages.take(peer.quota, trio.current_time()):
            raise ProtocolError(ErrorCode.RATE_LIMITED, "your address asks for more than "
                                f"{self._pages.rate:g} lobby pages and syncs a second")

    async def _sit(self, peer: Peer, msg: CreateTable | Join | Spectate) -> None:
        """Sit down or watch: the table answers, and the connection is then at it."""
        if peer.table is not None:
            raise ProtocolError(ErrorCode.ALREADY_SEATED, f"already at table {peer.table.id}")
        table, request = await self._table_for(peer, msg)
        await table.call(peer, request)

    async def _table_for(
        self, peer: Peer, msg: CreateTable | Join | Spectate
    ) -> tuple[Table, CreateTable | Join | Spectate]:
        """The table a request to sit or watch goes to (made for a ``create_table``), and the
        request it gets: a rematch's ``create_table`` becomes the old table's settings or a
        ``join`` of the table another player's rematch made (``Lobby.rematch``)."""
        if isinstance(msg, CreateTable) and msg.rematch is not None:
            return await self.lobby.rematch(msg, peer.quota)
        if isinstance(msg, CreateTable):
            await self.lobby.make_room(msg, peer.quota)
            return self.lobby.create(msg, peer.quota), msg
        return self.lobby.get(msg.table), msg

    async def _chat(self, peer: Peer, msg: Chat) -> None:
        if peer.table is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, f"{msg.TYPE} needs a table")
        peer.table.chat(peer, msg)


def _tables_head(msg: ListTables, total: int, next_offset: int | None) -> dict[str, Any]:
    """The ``tables`` reply to ``msg`` but its ``tables``, which are spliced in as encoded."""
    head: dict[str, Any] = dict(to_dict(Tables(id=msg.id, tables=[], total=total,
                                               offset=msg.offset, next=next_offset)))
    del head["tables"]
    return head
