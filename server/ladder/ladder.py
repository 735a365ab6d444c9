"""The rated ladder: accounts, their openskill ratings, and the matches being played.

**Accounts.** ``register`` makes an account: a name (unique whatever its case: compared as
``names.folded``, so 'Straße' and 'STRASSE' are one name) and a secret key, returned once; the
server keeps only the key's SHA-256 digest. A name that starts with ``anchor-``, or with
anything that passes for it (``names.looks_like``: a Cyrillic 'а', full-width letters, another
hyphen), is refused. ``Registrations`` limits how many accounts an address makes (a bucket that
refills over an hour) and how many the server holds. A connection that says the
key in ``hello.account`` plays as the account. *Anchor* accounts (``anchor-strong``…) are the
server's own bots, one per policy named in ``ladder_anchors``: they have no key, never queue,
and fill tables a client has waited for (``matchmaker``), which ties the ratings to fixed
strengths.

**Ratings.** openskill's Plackett-Luce model (mu 25, sigma 25/3 to start). A ladder match is
one table of three accounts playing ``ladder_hands`` hands; when it ends it is rated once, the
three ranked by their match chips (equal chips tie). A seat whose player dropped past the grace
period, or left during the match, *forfeits*: it is ranked last whatever its chips (below the
others; two forfeits tie for last), even if its player came back later. A match that ends
early (its table closed before the last hand) is rated only if a seat forfeited, the others
then ranked by the chips they had; otherwise, and when all three forfeited, it is void.
Standings are ordered by the conservative rating ``mu - 3 sigma`` (openskill's ordinal). The
order is kept in memory (``StandingsOrder``, a sorted list updated as accounts are made and
rated), so that a page is a slice and costs the same at any offset with a hundred accounts or
a hundred thousand (SQLite's ``OFFSET`` walks every row before the page: 20 ms a page at
100,000 accounts).

**Threads.** A connection's ``register`` and ``standings`` run in the ladder's own worker thread
(``register_in_worker``, ``standings_in_worker``): a flood of them waits there, not in the event
loop every table and connection shares. The rest (a login, a match formed, a forfeit, a rating:
a few indexed rows each, once per match) runs where it is called. One lock keeps the two
apart on the ladder's one SQLite connection.

**Persistence.** Everything lives in one SQLite file beside the server's database
(``ladder_path``): accounts with their ratings, and every match with its seats, forfeits and,
once rated, the chips it was rated on. A match is written when its table is formed and again at
each forfeit, and rated in one transaction, so a server restarted mid-match (its tables are
restored from the journal) rates the match when it ends, from the ratings it had before. The
rating is committed before the journal marks the table closed (``Table._close``): a server
killed in between restores the finished table, which closes at once and is rated then. A match
still pending when its table is no longer open at start is void.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio
from openskill.models import PlackettLuce
from tongits.protocol import ErrorCode, ProtocolError
from tongits.protocol.maps import LadderEntryMap

from ..names import folded, looks_like
from ..threads import OneThread

log = logging.getLogger("tongits.server")

#: The prefix of anchor accounts' names; clients cannot register a name that starts with it.
ANCHOR_PREFIX = "anchor-"
#: The most standings in one page.
MAX_STANDINGS_PAGE = 100
#: How many sigmas below mu the standings' rating is (openskill's ordinal).
ORDINAL_SIGMAS = 3.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    name TEXT PRIMARY KEY COLLATE NOCASE,
    key_hash TEXT UNIQUE,
    anchor TEXT,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    matches INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id TEXT NOT NULL,
    seats TEXT NOT NULL,
    forfeits TEXT NOT NULL DEFAULT '[]',
    formed REAL NOT NULL,
    ended REAL,
    outcome TEXT,
    chips TEXT
);
CREATE INDEX IF NOT EXISTS pending ON matches(table_id) WHERE ended IS NULL;
"""
#: Columns added since the first release, with what fills them in an older file.
_ADDED_COLUMNS = (("fold", "TEXT"),)
_INDEXES = "CREATE UNIQUE INDEX IF NOT EXISTS account_fold ON accounts(fold);"

#: The ladder's worker thread: one at a time.
_worker = OneThread("ladder worker")


def ladder_path(db: str) -> str:
    """The ladder's file beside the server's database ``db`` (``tongits.db`` ->
    ``tongits.ladder.db``); ``:memory:`` stays in memory. A file of its own: the journal keeps
    a write transaction open between its group commits, which a second writer would wait on."""
    if db == ":memory:":
        return db
    path = Path(db)
    return str(path.with_name(f"{path.stem}.ladder{path.suffix or '.db'}"))


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(slots=True)
class Pending:
    """A ladder match being played: its row in ``matches``, its seats' accounts, and the seats
    that forfeited so far."""

    row: int
    seats: list[str]
    forfeits: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Account:
    """An account as the standings show it; ``anchor`` is the policy of a server bot's."""

    name: str
    mu: float
    sigma: float
    matches: int
    anchor: str | None = None

    @property
    def rating(self) -> float:
        """The conservative rating the standings are ordered by."""
        return self.mu - ORDINAL_SIGMAS * self.sigma

    def to_dict(self, rank: int) -> LadderEntryMap:
        entry: LadderEntryMap = {
            "rank": rank, "name": self.name, "rating": round(self.rating, 3),
            "mu": round(self.mu, 3), "sigma": round(self.sigma, 3), "matches": self.matches,
        }
        if self.anchor is not None:
            entry["anchor"] = self.anchor
        return entry


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a match was rated: each seat's rank (1 best), the chips it was rated on, and the
    accounts after the update; or ``void`` with nothing rated."""

    ranks: tuple[int, ...]
    chips: tuple[int, ...]
    after: tuple[Account, ...]


def ranks_of(chips: Sequence[int], forfeits: Iterable[int]) -> list[int]:
    """Each seat's rank, 1 best: the seats that did not forfeit by chips (equal chips share a
    rank), every forfeited seat after all of them (sharing the last rank)."""
    lost = set(forfeits)
    playing = [s for s in range(len(chips)) if s not in lost]
    ranks = [0] * len(chips)
    for s in playing:
        ranks[s] = 1 + sum(1 for o in playing if chips[o] > chips[s])
    for s in lost:
        ranks[s] = len(playing) + 1
    return ranks


class StandingsOrder:
    """Every account in standings order: best rating first, then most matches, then name
    (whatever its case). A sorted list of keys beside the accounts by name; a change moves one
    key (a binary search and a list move: microseconds at 100,000 accounts), a page is a
    slice."""

    def __init__(self, accounts: Iterable[Account]) -> None:
        self._by_name = {a.name: a for a in accounts}
        self._keys = sorted(map(_order_key, self._by_name.values()))

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, name: str) -> Account:
        return self._by_name[name]

    def put(self, account: Account) -> None:
        """``account``, new or changed."""
        old = self._by_name.get(account.name)
        if old is not None:
            del self._keys[bisect.bisect_left(self._keys, _order_key(old))]
        self._by_name[account.name] = account
        bisect.insort(self._keys, _order_key(account))

    def page(self, offset: int, limit: int) -> list[Account]:
        return [self._by_name[key[-1]] for key in self._keys[offset:offset + limit]]


def _order_key(account: Account) -> tuple[float, int, str, str]:
    return (-account.rating, -account.matches, account.name.casefold(), account.name)


class Registrations:
    """Who may make an account now: each address (``Peer.quota``; None, a client the
    per-address limits exempt, as loopback is by default) has ``per_address`` accounts in a
    bucket that refills over an hour, and the server holds ``max_accounts`` at most. A refusal
    is ``too_many_accounts``, saying which limit and for how long."""

    #: Addresses remembered before the ones whose bucket is full again are forgotten.
    PRUNE_AT = 4096

    def __init__(self, per_address: int, max_accounts: int) -> None:
        self.per_address = per_address
        self.max_accounts = max_accounts
        #: address -> (accounts it may still make, when that was counted)
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, quota: str | None, accounts: int, now: float) -> None:
        """One account for ``quota``'s address, on a server holding ``accounts``."""
        if accounts >= self.max_accounts:
            raise ProtocolError(ErrorCode.TOO_MANY_ACCOUNTS,
                                f"this server holds its {self.max_accounts} ladder accounts "
                                "and makes no more; its host may raise ladder_max_accounts")
        if quota is None:
            return
        refill = self.per_address / 3600.0
        left, at = self._buckets.get(quota, (float(self.per_address), now))
        left = min(float(self.per_address), left + (now - at) * refill)
        if left < 1.0:
            wait = (1.0 - left) / refill
            raise ProtocolError(ErrorCode.TOO_MANY_ACCOUNTS,
                                f"your address has made {self.per_address} ladder accounts "
                                f"this hour; the next in {wait / 60:.0f} min")
        self._buckets[quota] = (left - 1.0, now)
        if len(self._buckets) > self.PRUNE_AT:
            full = self.per_address - 1.0
            self._buckets = {q: (n, t) for q, (n, t) in self._buckets.items()
                             if n + (now - t) * refill < full}


class Ladder:
    """The accounts and ratings, kept in ``path`` (``ladder_path``). Written through at once
    (a rating changes once per match); see the module's docstring for which calls run in the
    ladder's worker thread."""

    def __init__(self, path: str = ":memory:", *, worker: bool | None = None) -> None:
        """``worker``: whether ``register_in_worker`` and ``standings_in_worker`` use the
        worker thread (default: for a file; an in-memory ladder, a test's, answers in the
        calling thread, where a virtual clock sees it)."""
        self.path = path
        self.worker = path != ":memory:" if worker is None else worker
        self.model = PlackettLuce()
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        with contextlib.suppress(sqlite3.DatabaseError):
            self.db.execute("PRAGMA journal_mode=WAL").fetchone()
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        self._upgrade()
        #: every account, in standings order
        self.order = StandingsOrder(Account(*row) for row in self.db.execute(
            "SELECT name, mu, sigma, matches, anchor FROM accounts"))
        #: matches rated: each counts one for each of its three accounts (no query: the host's
        #: ``tongits-server status`` asks for it)
        self.rated = sum(a.matches for a in self.order.page(0, len(self.order))) // 3
        #: the match each table plays, until it is rated or void
        self.pending: dict[str, Pending] = {}
        for row_id, table_id, seats, forfeits in self.db.execute(
            "SELECT id, table_id, seats, forfeits FROM matches WHERE ended IS NULL"
        ):
            self.pending[table_id] = Pending(row_id, json.loads(seats), set(json.loads(forfeits)))

    def _upgrade(self) -> None:
        """Add what a file of an older release lacks: the folded names, and their index."""
        have = {row[1] for row in self.db.execute("PRAGMA table_info(accounts)")}
        for column, kind in _ADDED_COLUMNS:
            if column not in have:
                self.db.execute(f"ALTER TABLE accounts ADD COLUMN {column} {kind}")
        for (name,) in self.db.execute("SELECT name FROM accounts WHERE fold IS NULL").fetchall():
            self.db.execute("UPDATE accounts SET fold = ? WHERE name = ?", (folded(name), name))
        self.db.executescript(_INDEXES)

    def close(self) -> None:
        with self._lock:
            self.db.close()

    # ----- accounts ---------------------------------------------------------------------------

    async def register_in_worker(self, name: str) -> str:
        """``register`` in the ladder's worker thread."""
        if not self.worker:
            return self.register(name)
        return await trio.to_thread.run_sync(self.register, name, limiter=_worker())

    def register(self, name: str) -> str:
        """A new account named ``name`` (already checked as a display name); its secret key.
        ``name_taken`` if an account has the name whatever its case (``names.folded``), or it
        passes for an anchor's (``names.looks_like``)."""
        if looks_like(name, ANCHOR_PREFIX):
            raise ProtocolError(ErrorCode.NAME_TAKEN, f"names starting {ANCHOR_PREFIX!r} (or "
                                "anything that looks like it) are the server's bots'")
        key = secrets.token_urlsafe(24)
        try:
            with self._lock:
                self.db.execute(
                    "INSERT INTO accounts (name, fold, key_hash, mu, sigma, created) "
                    "VALUES (?,?,?,?,?,?)",
                    (name, folded(name), key_digest(key), self.model.mu, self.model.sigma,
                     time.time()),
                )
                self.order.put(Account(name, self.model.mu, self.model.sigma, 0))
        except sqlite3.IntegrityError:
            raise ProtocolError(ErrorCode.NAME_TAKEN, f"an account is named {name!r}") from None
        log.info("ladder: account %r registered", name)
        return key

    @property
    def accounts(self) -> int:
        """How many accounts there are (anchors included)."""
        return len(self.order)

    def login(self, key: str) -> str:
        """The name of the account whose key is ``key``; ``bad_account`` if none."""
        with self._lock:
            row = self.db.execute("SELECT name FROM accounts WHERE key_hash = ?",
                                  (key_digest(key),)).fetchone()
        if row is None:
            raise ProtocolError(ErrorCode.BAD_ACCOUNT, "no ladder account has this key")
        return str(row[0])

    def seed_anchors(self, policies: Iterable[str]) -> list[str]:
        """Make sure each policy has its anchor account; their names."""
        names = []
        with self._lock:
            for policy in policies:
                name = f"{ANCHOR_PREFIX}{policy}"
                added = self.db.execute(
                    "INSERT OR IGNORE INTO accounts (name, fold, anchor, mu, sigma, created) "
                    "VALUES (?,?,?,?,?,?)",
                    (name, folded(name), policy, self.model.mu, self.model.sigma, time.time()),
                ).rowcount
                if added:
                    self.order.put(Account(name, self.model.mu, self.model.sigma, 0, policy))
                names.append(name)
        return names

    def account(self, name: str) -> Account:
        """The account named ``name`` exactly; ``KeyError`` if none."""
        with self._lock:
            return self.order.get(name)

    async def standings_in_worker(self, offset: int = 0, limit: int = MAX_STANDINGS_PAGE) -> (
            tuple[list[Account], int]):
        """``standings`` in the ladder's worker thread."""
        if not self.worker:
            return self.standings(offset, limit)
        return await trio.to_thread.run_sync(self.standings, offset, limit, limiter=_worker())

    def standings(self, offset: int = 0, limit: int = MAX_STANDINGS_PAGE) -> tuple[
            list[Account], int]:
        """One page of the accounts, best rating first (then most matches, then name), and how
        many accounts there are."""
        with self._lock:
            return self.order.page(offset, limit), self.accounts

    # ----- matches ----------------------------------------------------------------------------

    def match_formed(self, table_id: str, seats: Sequence[str]) -> None:
        """Table ``table_id`` plays a ladder match, account ``seats[s]`` in seat ``s``."""
        with self._lock:
            cursor = self.db.execute(
                "INSERT INTO matches (table_id, seats, formed) VALUES (?,?,?)",
                (table_id, json.dumps(list(seats)), time.time()),
            )
        assert cursor.lastrowid is not None
        self.pending[table_id] = Pending(cursor.lastrowid, list(seats))

    def is_ladder_table(self, table_id: str) -> bool:
        return table_id in self.pending

    def forfeit(self, table_id: str, seat: int) -> None:
        """Seat ``seat`` of a ladder table forfeits (its grace ran out, or it left)."""
        match = self.pending.get(table_id)
        if match is None or seat in match.forfeits:
            return
        match.forfeits.add(seat)
        with self._lock:
            self.db.execute("UPDATE matches SET forfeits = ? WHERE id = ?",
                            (json.dumps(sorted(match.forfeits)), match.row))
        log.info("ladder: %r forfeits the match at table %s", match.seats[seat], table_id)

    def void(self, table_id: str, why: str) -> None:
        """The match of ``table_id`` is not rated."""
        match = self.pending.pop(table_id, None)
        if match is None:
            return
        with self._lock:
            self.db.execute("UPDATE matches SET ended = ?, outcome = 'void' WHERE id = ?",
                            (time.time(), match.row))
        log.info("ladder: the match at table %s is void (%s)", table_id, why)

    def void_missing(self, open_tables: Iterable[str]) -> None:
        """At start: void the pending matches whose table was not restored."""
        still = set(open_tables)
        for table_id in [t for t in self.pending if t not in still]:
            self.void(table_id, "its table is no longer open")

    def table_ended(self, table_id: str, chips: Sequence[int], complete: bool) -> Outcome | None:
        """Rate the match of ``table_id``, whose table closed with ``chips`` per seat;
        ``complete`` if it played every hand. None if it is no ladder match or is void."""
        match = self.pending.get(table_id)
        if match is None:
            return None
        seats, forfeits = match.seats, match.forfeits
        if (not complete and not forfeits) or len(forfeits) >= len(seats):
            self.void(table_id, "ended early with no forfeit" if not forfeits
                      else "every seat forfeited")
            return None
        ranks = ranks_of(chips, forfeits)
        before = [self.account(name) for name in seats]
        teams = [[self.model.rating(mu=a.mu, sigma=a.sigma, name=a.name)] for a in before]
        rated = self.model.rate(teams, ranks=[float(r) for r in ranks])
        after = tuple(
            Account(a.name, team[0].mu, team[0].sigma, a.matches + 1, a.anchor)
            for a, team in zip(before, rated, strict=True)
        )
        with self._transaction():
            for a in after:
                self.db.execute("UPDATE accounts SET mu = ?, sigma = ?, matches = ? "
                                "WHERE name = ?", (a.mu, a.sigma, a.matches, a.name))
            self.db.execute(
                "UPDATE matches SET ended = ?, outcome = 'rated', chips = ? WHERE id = ?",
                (time.time(), json.dumps(list(chips)), match.row),
            )
        with self._lock:
            for a in after:
                self.order.put(a)
        self.rated += 1
        del self.pending[table_id]
        log.info("ladder: table %s rated: %s", table_id, ", ".join(
            f"{a.name} #{r} {c:+d} -> {a.mu:.2f}" for a, r, c in zip(after, ranks, chips,
                                                                     strict=True)))
        return Outcome(tuple(ranks), tuple(chips), after)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One SQLite transaction, the worker kept out of it: committed if the block ends,
        rolled back if it raises."""
        with self._lock:
            self.db.execute("BEGIN")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
