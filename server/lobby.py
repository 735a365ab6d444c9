"""The lobby: which tables exist, and which table holds a seat token.

Tables own their seats and tokens; the lobby only indexes them (by the token's digest, so a
lookup reveals nothing) so that ``hello`` with a token finds its table. Everything here runs in
the server's one Trio thread, so no lock is needed: a lobby call never awaits, but for
``make_room``, which waits for the table it closes.

Who may hold how many tables: ``max_tables_per_address`` open tables per creator's address (an
IPv4 address, an IPv6 /64: ``connection.address_key``) and ``max_tables_per_network`` per IPv6 /48
(a site: whoever has one /64 often has 65,536 of them). Those bound what one stranger holds,
not what many do: a server full of tables (``max_tables``) where no human has moved for
``evict_idle`` seconds closes the one idle longest for a new creator (``make_room``), so idle
connections cannot keep an honest creator out; tables where people play are never closed.
Many addresses that do play (a move at each table now and then) are bounded by the reserve:
the last ``table_reserve`` of ``max_tables`` go only to creators whose network (an IPv4 /24,
an IPv6 /48: ``block_of``) holds no open table, so holding every table takes that many
networks on top of the addresses that fill the rest. An address may also make only
``table_rate`` tables a second, in bursts of twice its share (``pace.AddressPace``): a table
made and left at once closes, but its log stays in the database for good, and sixty
connections of one address doing that made 515 tables in 15 s (20 KB of log a second, 1.7 GB
a day).

``again`` at a match's end (``create_table`` with ``rematch``): the lobby remembers each
finished match's settings (``Rematch``) and the table its first ``again`` made, so that every
player of the old table who asks, with the old seat's token, is seated at that one new table.
"""

from __future__ import annotations

import ipaddress
import itertools
import logging
import math
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import trio
from tongits.engine import MatchLength, Options
from tongits.engine.errors import shown
from tongits.protocol import CreateTable, ErrorCode, Join, ListTables, Mode, ProtocolError

from .names import shows_blank
from .pace import AddressPace
from .storage.commit import GroupCommit
from .storage.journal import Journal
from .table.actor import Table
from .table.dealing import Dealing, MatchDealing
from .table.entries import CreateEntry
from .table.parts import TableParts
from .table.requests import HostClose
from .table.table import TableLogState, token_digest

if TYPE_CHECKING:
    from .config import ServerConfig

log = logging.getLogger("tongits.server")

#: Builds a table's task object from its state, settings, lobby and journal.
TableFactory = Callable[[TableLogState, "ServerConfig", "Lobby", GroupCommit], Table]
#: Builds a table's ``Dealing`` (``Table``'s ``dealing``).
DealingFactory = Callable[[TableParts, Table], Dealing]

#: The most tables in one ``tables`` reply.
MAX_PAGE = 50
#: Seat tokens of finished matches remembered (the oldest forgotten first beyond that), so
#: that a late resume hears why its token opens nothing.
MAX_ENDED_TOKENS = 10_000


@dataclass(slots=True)
class Rematch:
    """What a finished match leaves for ``again``: its table's ``create`` entry (the next match
    gets the same settings, with a new seed and join code), how many server bots sat from the
    start (stand-ins for humans who left are not counted: those seats are for the humans), and
    the id of the table the first ``again`` made (None until then)."""

    create: CreateEntry
    bots: int
    table: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the lobby: its table entries, already encoded; how many tables the filter
    matches; the offset of the next page (None after the last)."""

    entries: list[bytes]
    total: int
    next: int | None


class Lobby:
    def __init__(self, config: ServerConfig, journal: Journal) -> None:
        self.config = config
        self.journal = GroupCommit(journal)
        self.tables: dict[str, Table] = {}
        self._tokens: dict[str, Table] = {}
        #: token digest -> id of the table whose match ended (``table_closed``), oldest first
        self._ended: dict[str, str] = {}
        #: id of a table whose match ended -> its ``Rematch``, oldest first
        self._rematches: dict[str, Rematch] = {}
        #: open tables per creator's address (``Peer.quota``) and per IPv6 /48 (``network_of``)
        self._per_address: Counter[str] = Counter()
        #: how fast each address makes tables
        self._made = AddressPace(config.table_rate, 2 * config.max_tables_per_address,
                                 TABLE_RATE_ADDRESSES)
        self._per_network: Counter[str] = Counter()
        #: open tables per creator's IPv4 /24 or IPv6 /48 (``block_of``): for the reserve
        self._per_block: Counter[str] = Counter()
        #: no table can have been idle ``evict_idle`` seconds before this time (``idlest``)
        self._no_idle_before = -math.inf
        self._ids = itertools.count(journal.last_table_number() + 1)
        self._nursery: trio.Nursery | None = None
        self._order: list[Table] | None = None
        self._joinable = 0

    def bind(self, nursery: trio.Nursery) -> None:
        """The nursery that runs table tasks and the journal's commits (owned by
        ``Server.serve``)."""
        self._nursery = nursery
        nursery.start_soon(self.journal.run, name="group commit")

    def restore(self, dealing_for: Callable[[str], DealingFactory | None] | None = None) -> int:
        """Rebuild every table the journal holds open by replaying its log, and start its task
        (its humans are away until they resume); returns how many tables. ``dealing_for``: the
        dealing of a table by its id, when it is not a lobby table's (a ladder match's,
        ``Matchmaker.dealing_for``)."""
        if self._nursery is None:
            raise RuntimeError("the lobby is not running")
        count = 0
        for entries in self.journal.open_tables():
            try:
                state = TableLogState.replay(entries)
            except Exception:
                log.exception("cannot restore table %s; left as it is in the journal",
                              getattr(entries[0], "table", "?") if entries else "?")
                continue
            dealing = dealing_for(state.id) if dealing_for is not None else None
            table = Table(state, self.config, self, self.journal, restored=True,
                          dealing=dealing or MatchDealing)
            self.tables[state.id] = table
            self.listing_changed()
            self._nursery.start_soon(table.run, name=f"table {state.id}")
            count += 1
        return count

    def listing_changed(self) -> None:
        """A table appeared, went, or became joinable or not: the lobby's order is rebuilt at
        the next ``list_tables``."""
        self._order = None

    def _ordered(self) -> tuple[list[Table], int]:
        """Every open table in the lobby's order (joinable ones first, then the others; oldest
        first within each), and how many are joinable; rebuilt only after a change."""
        if self._order is None:
            tables = [t for t in self.tables.values() if not t.closed and t.dealing.listed()]
            tables.sort(key=lambda t: (not t.joinable, t.number))
            self._order = tables
            self._joinable = sum(1 for t in tables if t.joinable)
        return self._order, self._joinable

    def count(self) -> int:
        """How many tables are open."""
        return len(self._ordered()[0])

    def page(self, msg: ListTables, mode: Mode, budget: int) -> Page:
        """The page of the lobby ``msg`` asks for, as entries encoded for ``mode`` (each table
        encodes its entry once per change, not once per request), at most ``MAX_PAGE`` of
        them and at most ``budget`` bytes together."""
        if msg.offset < 0 or (msg.limit is not None and msg.limit < 1):
            raise ProtocolError(ErrorCode.BAD_FIELD, "offset must be ≥ 0 and limit ≥ 1")
        ordered, joinable = self._ordered()
        total = joinable if msg.open else len(ordered)
        if msg.table is not None:
            wanted = self.tables.get(msg.table)
            ordered = [] if wanted is None or wanted.closed or not wanted.dealing.listed() or (
                msg.open and not wanted.joinable) else [wanted]
            total = len(ordered)
        limit = min(msg.limit or MAX_PAGE, MAX_PAGE)
        entries: list[bytes] = []
        used = 0
        index = msg.offset
        while index < total and len(entries) < limit:
            entry = ordered[index].listing_entry(mode)
            if used + len(entry) + 1 > budget:
                if not entries:  # a table whose entry alone exceeds the frame: not listed
                    log.warning("table %s: lobby entry of %d bytes exceeds the frame size",
                                ordered[index].id, len(entry))
                    index += 1
                    continue
                break
            entries.append(entry)
            used += len(entry) + 1
            index += 1
        return Page(entries, total, index if index < total else None)

    def get(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None or table.closed:
            raise ProtocolError(ErrorCode.NO_SUCH_TABLE, f"no table {shown(table_id)}")
        return table

    def invite_name(self, table_id: str, code: str | None, *, codeless: bool) -> str | None:
        """The name of the open table ``table_id``, for the page its invite link opens (the
        form a friend meets first names the table): None when there is no such table, when a
        private table's ``code`` is wrong, and, unless ``codeless`` (a server without a
        password), for a public table, whose code (none, or any) proves nothing of the link's
        holder: a stranger trying table ids learns no name from a server that keeps its tables
        to its guests."""
        table = self.tables.get(table_id)
        if table is None or table.closed or not (codeless or table.state.private):
            return None
        try:
            table.seating.check_code(code)
        except ProtocolError:
            return None
        return table.state.name

    def check_quota(self, quota: str | None) -> None:
        """``too_many_tables`` if the creator's address (``quota``; None: exempt) or its IPv6
        /48 holds its share of open tables already."""
        if quota is None:
            return
        limit = self.config.max_tables_per_address
        if self._per_address[quota] >= limit:
            raise ProtocolError(ErrorCode.TOO_MANY_TABLES,
                                f"your address has {limit} open tables already")
        network = network_of(quota)
        limit = self.config.max_tables_per_network
        if network is not None and self._per_network[network] >= limit:
            raise ProtocolError(ErrorCode.TOO_MANY_TABLES,
                                f"your network ({network}) has {limit} open tables already")

    def own_waiting(self, quota: str | None) -> Table | None:
        """If the address ``quota`` holds its share of open tables (``max_tables_per_address``):
        the one of them that waits longest for players who are all away (``Dealing.paused``).
        A waiting table lasts until its players come back, so a player who abandons tables
        (a browser closed, a new phone) would otherwise be refused new ones for good."""
        if quota is None or self._per_address[quota] < self.config.max_tables_per_address:
            return None
        waiting = [t for t in self.tables.values()
                   if not t.closed and t.quota == quota and t.dealing.paused()]
        return min(waiting, key=lambda t: (t.played_at, t.number), default=None)

    def idlest(self) -> Table | None:
        """The open table where no human has moved for longest, if that is ``evict_idle``
        seconds or more (None: every table is in play, or eviction is off). A table's
        ``played_at`` only grows and a new table's is now, so after one look none can qualify
        before the oldest ``played_at`` seen plus ``evict_idle``: until then nothing is
        looked at (a full server refuses a flood of creators at no cost per table)."""
        now = trio.current_time()
        if self.config.evict_idle <= 0 or now < self._no_idle_before:
            return None
        open_tables = [t for t in self.tables.values() if not t.closed]
        if not open_tables:
            return None
        table = min(open_tables, key=lambda t: (t.played_at, t.number))
        if now - table.played_at < self.config.evict_idle:
            self._no_idle_before = table.played_at + self.config.evict_idle
            return None
        return table

    async def make_room(self, msg: CreateTable | None, quota: str | None) -> None:
        """Before ``create``: refuse a request ``create`` would refuse for its address's share
        or its fields; on a full server, close the table idle longest (``idlest``) to make room,
        everyone at it told ``closed_by_host`` and why. Without such a table ``create``
        refuses. ``msg`` None: a rematch, whose settings were already accepted once. An address
        at its share first gets its own table that waits for players all away
        (``own_waiting``) closed: it gives way to the new one."""
        waiting = self.own_waiting(quota)
        if waiting is not None:
            log.info("table %s closed to make room for a new table of its creator's address: "
                     "its players were all away", waiting.id)
            await waiting.call(None, HostClose(
                f"table {waiting.id} was closed for a new table of its creator's address: "
                f"its players were all away"))
            self.table_closed(waiting)
        self.check_quota(quota)
        if self._room_refusal(quota) is None:
            return
        if msg is not None:
            self._entry(msg)  # a request create refuses closes nothing
        table = self.idlest()
        if table is None:
            return
        idle = trio.current_time() - table.played_at
        log.info("table %s closed to make room: the server has %d tables and nobody has "
                 "moved at this one for %.0f s", table.id, self.config.max_tables, idle)
        await table.call(None, HostClose(
            f"table {table.id} was closed to make room for a new one: the server is full and "
            f"nobody had played at it for {_duration(idle)}"))
        self.table_closed(table)  # its place is free now, not once its task has ended

    def create(self, msg: CreateTable, quota: str | None = None) -> Table:
        """Check a ``create_table`` request, log the table's ``create`` entry and start its task.
        The creator is seated by the table itself (the request is then passed to it).
        ``quota``: the creator's address as the per-address limits count it (None: exempt)."""
        if self._nursery is None:
            raise RuntimeError("the lobby is not running")
        self.admit(quota)
        return self.open(self._entry(msg), quota=quota)

    def admit(self, quota: str | None) -> None:
        """``too_many_tables`` if the server has no room for a table of the address ``quota``
        (``_room_refusal``: ``max_tables``, or only the reserve is left) or the address holds
        its share (``check_quota``)."""
        refusal = self._room_refusal(quota)
        if refusal is not None:
            raise ProtocolError(ErrorCode.TOO_MANY_TABLES, refusal)
        self.check_quota(quota)
        wait = self._made.take(quota, trio.current_time())
        if wait:
            raise ProtocolError(ErrorCode.TOO_MANY_TABLES, "your address has made tables "
                                f"faster than {self.config.table_rate * 60:g} a minute: "
                                f"the next in {wait} s")

    def _room_refusal(self, quota: str | None) -> str | None:
        """Why a new table of a creator at ``quota`` does not fit now (None: it does): the
        server is at ``max_tables``, or only the reserve is left and the creator's network
        (``block_of``) holds an open table already."""
        free = self.config.max_tables - len(self.tables)
        if free <= 0:
            return "the server has too many tables"
        reserve = math.floor(self.config.max_tables * self.config.table_reserve)
        if free > reserve or quota is None or not self._per_block[block_of(quota)]:
            return None
        return (f"the server is nearly full: its last {reserve} tables are kept for players "
                f"whose network ({block_of(quota)}) has no open table")

    def _counted(self, table: Table, quota: str | None) -> Table:
        """``table``, counted among the open tables of its creator's address ``quota``."""
        table.quota = quota
        if quota is not None:
            self._per_address[quota] += 1
            self._per_block[block_of(quota)] += 1
            network = network_of(quota)
            if network is not None:
                self._per_network[network] += 1
        return table

    def _entry(self, msg: CreateTable) -> CreateEntry:
        """The ``create`` entry of a ``create_table`` request (its ``table`` still empty), or
        the refusal of a field out of bounds."""
        name = check_name(msg.name, self.config.name_max, "table name")
        if not 0 <= msg.bots <= 2:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, "bots must be 0, 1 or 2")
        timer = self.config.timer if msg.timer is None else msg.timer
        if not 0 <= timer <= 3600:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, "timer must be 0 (none) to 3600 seconds")
        options = Options.from_dict(msg.options)
        try:
            MatchLength(msg.hands, msg.target)
        except ValueError as exc:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, str(exc)) from None
        return CreateEntry(
            table="", name=name, seed=secrets.randbits(64), options=options, timer=timer,
            private=msg.private, code=join_code() if msg.private else None,
            auto_start=msg.auto_start, hands=msg.hands, target=msg.target,
        )

    def open(self, create: CreateEntry, make: TableFactory | None = None,
             quota: str | None = None) -> Table:
        """Give a new table its id, journal its ``create`` entry (``create`` with that id in
        place of its ``table``) and start its task. ``make`` builds the task object (the
        arena's in-process tables take the arena's dealing, ``arena.arena_table``; the
        ladder's, ``ladder_dealing.ladder_table``); default: a plain ``Table``. The table
        counts among the open tables of the address ``quota`` (None: of nobody's); the caller
        checked it may (``admit``)."""
        if self._nursery is None:
            raise RuntimeError("the lobby is not running")
        table_id = f"t{next(self._ids)}"
        entry = replace(create, table=table_id)
        self.journal.append(table_id, entry)
        table = (make or Table)(TableLogState(entry), self.config, self, self.journal)
        self.tables[table_id] = table
        self.listing_changed()
        self._nursery.start_soon(table.run, name=f"table {table_id}")
        return self._counted(table, quota)

    async def rematch(
        self, msg: CreateTable, quota: str | None
    ) -> tuple[Table, CreateTable | Join]:
        """The table for a ``create_table`` with ``rematch`` (a player of that finished match,
        by its old seat's ``token``) and the request that seats the caller there: a ``join``
        of the table the first ``again`` of that match made, while it has a free seat and has
        not begun; else a new table with the old one's settings (``create``, its bots seated
        again), which the next ``again`` then joins. ``bad_token`` for anyone else."""
        assert msg.rematch is not None
        digest = token_digest(msg.token or "")
        record = self._rematches.get(msg.rematch)
        if record is None or self._ended.get(digest) != msg.rematch:
            raise ProtocolError(ErrorCode.BAD_TOKEN,
                                f"no finished match at table {shown(msg.rematch)} for this token")
        await self.make_room(None, quota)  # may wait, and another again meanwhile make a table
        made = self.tables.get(record.table or "")
        if made is not None and not made.closed and made.joinable:
            return made, Join(id=msg.id, table=made.id, code=made.state.code)
        self.admit(quota)
        old = record.create
        table = self.open(replace(old, table="", seed=secrets.randbits(64),
                                  code=join_code() if old.private else None), quota=quota)
        record.table = table.id
        return table, CreateTable(id=msg.id, name=old.name, bots=record.bots)

    def table_closed(self, table: Table) -> None:
        state = table.state
        if state.match_over is not None and table.id not in self._rematches:
            for seat in state.seats:
                if seat is not None and seat.token_hash is not None:
                    self._ended[seat.token_hash] = table.id
            while len(self._ended) > MAX_ENDED_TOKENS:
                del self._ended[next(iter(self._ended))]
            bots = sum(1 for seat in state.seats
                       if seat is not None and seat.is_bot and not seat.stand_in)
            create = CreateEntry(
                table=table.id, name=state.name, seed=state.seed, options=state.options,
                timer=state.timer, private=state.private, code=state.code,
                auto_start=state.auto_start, hands=state.length.hands,
                target=state.length.target)
            self._rematches[table.id] = Rematch(create, bots)
            while len(self._rematches) > MAX_ENDED_TOKENS:
                del self._rematches[next(iter(self._rematches))]
        if self.tables.get(table.id) is table:
            del self.tables[table.id]
            self.listing_changed()
            if table.quota is not None:
                _release(self._per_address, table.quota)
                _release(self._per_block, block_of(table.quota))
                network = network_of(table.quota)
                if network is not None:
                    _release(self._per_network, network)

    def index_token(self, digest: str, table: Table) -> None:
        self._tokens[digest] = table

    def forget_token(self, digest: str | None) -> None:
        if digest is not None:
            self._tokens.pop(digest, None)

    def table_of_token(self, token: str) -> Table:
        digest = token_digest(token)
        table = self._tokens.get(digest)
        if table is None or table.closed:
            ended = self._ended.get(digest)
            if ended is not None:
                raise ProtocolError(ErrorCode.BAD_TOKEN, f"the match at table {ended} is over")
            raise ProtocolError(ErrorCode.BAD_TOKEN, "unknown or expired token")
        return table


def _release(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


def _duration(seconds: float) -> str:
    """``seconds`` in words: "45 seconds", "12 minutes"."""
    if seconds < 120:
        return f"{seconds:.0f} seconds"
    return f"{seconds / 60:.0f} minutes"


def network_of(quota: str) -> str | None:
    """The IPv6 /48 of a creator's address key (an IPv6 /64, ``connection.address_key``); None for
    an IPv4 address (one address is already scarce) or anything else."""
    try:
        network = ipaddress.ip_network(quota, strict=False)
    except ValueError:
        return None
    if not isinstance(network, ipaddress.IPv6Network) or network.prefixlen < 48:
        return None
    return str(network.supernet(new_prefix=48))


def block_of(quota: str) -> str:
    """What the table reserve counts a creator's address key under: an IPv4 address by its
    /24, an IPv6 /64 by its /48 (a subscriber's or a site's block: addresses in one are
    cheap to have many of); anything else as itself."""
    try:
        network = ipaddress.ip_network(quota, strict=False)
    except ValueError:
        return quota
    prefix = 24 if network.version == 4 else 48
    if network.prefixlen < prefix:
        return str(network)
    return str(network.supernet(new_prefix=prefix))


#: Addresses the tables made bucket remembers before it forgets those that are full again.
TABLE_RATE_ADDRESSES = 4096


#: The letters of join codes: lowercase, no 0/o, 1/l/i to misread.
JOIN_CODE_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
JOIN_CODE_LENGTH = 10


def join_code() -> str:
    """A private table's join code: 10 letters of 31, 49 bits. Guessing one at the server's
    whole pace (about 5,000 wrong codes a second) takes over a thousand years on average."""
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def check_name(name: str, limit: int, what: str) -> str:
    """A display name: trimmed, 1 to ``limit`` printable characters, none of which prints as
    nothing (``names.shows_blank``)."""
    name = name.strip()
    if not name or len(name) > limit or not name.isprintable():
        raise ProtocolError(
            ErrorCode.BAD_NAME, f"{what} must be 1 to {limit} printable characters"
        )
    if shows_blank(name):
        raise ProtocolError(ErrorCode.BAD_NAME, f"{what} has a character that shows as a blank "
                            "(a Hangul filler, a blank Braille pattern, or a mark alone)")
    return name
