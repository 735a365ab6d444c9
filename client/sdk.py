"""Write a Tongits bot in a few lines: a ``policy(view) -> move`` played over the network.

::

    from tongits.client.sdk import run_bot

    def policy(view):               # a SeatView (tongits.engine), the seat's own knowledge
        return view.legal[0]        # one of the legal moves (a Move, or its text "discard Kd")

    run_bot(policy, host="127.0.0.1", port=7777, name="mybot", table="t1")
    run_bot(policy, host="tls://play.example.com", name="mybot", password="…")

The interface is the one of the server's bot seats and of ``tongits arena``
(``tongits.engine.policies``), so a policy written for one runs in the others. ``run_bot`` blocks
(it calls ``trio.run``); inside a Trio program use ``await play_bot(...)``; both take the
settings of ``Bot`` and return a ``BotRun``.

What the SDK does for the policy:

* connects (over TLS for ``tls=True`` or a ``tls://HOST[:PORT]`` host: a certificate from a
  public authority is verified; a self-signed one must have been accepted once, with
  ``tongits trust tls://HOST:PORT``, see client/tls.py), says ``hello`` as ``kind: "bot"``
  with the server ``password`` (default: ``$TONGITS_PASSWORD``) and takes a seat:
  ``create=True`` opens a table (named ``table``) with ``bots`` server bots; otherwise it joins
  ``table`` (an id such as ``t1`` or a table name, with ``code`` if private), or, without
  ``table``, the first public table with a free seat;
* calls the policy on every ``state`` that lists legal moves for its seat (a sync or an async
  policy), and sends the move. A policy that raises, or returns a move that is not legal, is
  logged and replaced by ``autoplay_move`` (the server's own timeout move), so the bot never
  hangs; so is a move the server refuses;
* after each ``hand_result`` asks for the next hand, until ``hands`` hands are over; then it
  leaves the table (a server bot plays out the seat);
* with ``ladder=True`` it plays rated ladder matches instead (docs/PROTOCOL.md, "The ladder"):
  it says ``hello`` with its account's key (``account``; else the key kept for ``name`` at this
  server in the user's key file, ``client/accounts.py``; else it registers ``name`` and keeps
  the new key there), ``queue``s, plays the match it is seated at, and queues again after each
  ``match_over``, until ``matches`` matches are over (None: for ever);
* when the connection drops, reconnects with its seat token and the ``seq`` of the last message
  it received, and carries on. The server keeps the seat for its grace period (60 s by
  default), then lets a server bot stand in and hands the seat back when the bot returns; the
  resumed ``state`` brings the seat's whole view, and a ``hand_result`` missed meanwhile is sent
  again (and counted); a table whose every player is away waits for them. A seat is lost for
  good only when its table closed meanwhile: its host closed it, or a full server made room.

Logging goes to the ``tongits.sdk`` logger: one INFO line per hand, WARNING for fallbacks and
reconnections.
"""

from __future__ import annotations

import argparse
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import trio
from tongits.engine import Move, Result, SeatView
from tongits.engine.policies import Policy as BuiltinPolicy
from tongits.engine.policies import autoplay_move
from tongits.protocol import Error, ErrorCode, HandResult, Joined, MatchOver, SeatUpdate, State
from tongits.protocol.keepalive import DEFAULT_HEARTBEAT
from tongits.protocol.maps import StandingsMap, TableInfoMap
from tongits.protocol.phrases import counted
from tongits.protocol.transport import AddressError, Endpoint, Invite

from .accounts import AccountKeys
from .connection import (
    Connection,
    ConnectionClosed,
    ServerError,
    highest_seq,
    open_connection,
)
from .tls import ClientTLS, TrustError
from .tui.records import save_record

log = logging.getLogger("tongits.sdk")

#: What a policy returns: a ``Move``, its command text (``"sapaw 8d 3"``), or an awaitable of one.
Decision: TypeAlias = Move | str
Policy: TypeAlias = Callable[[SeatView], Decision | Awaitable[Decision]]

DEFAULT_PORT = 7777
#: The environment variables of a host-assigned seat (``seat_from_env``, docs/BOTS.md).
ENV_SERVER, ENV_TABLE, ENV_CODE, ENV_SEAT = (
    "TONGITS_SERVER", "TONGITS_TABLE", "TONGITS_CODE", "TONGITS_SEAT"
)
#: Seconds to wait before each reconnection attempt; the bot gives up after the last one,
#: about three minutes after its connection was lost (a Wi-Fi that drops for a minute or two
#: fails every attempt at once, and its seat waits for its token whatever the delay).
RETRY_DELAYS: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 4.0, *(8.0,) * 20)
#: Seconds allowed to open the TCP connection.
CONNECT_TIMEOUT = 10.0

#: Connection-ending errors after which reconnecting cannot help.
_FINAL = {
    ErrorCode.REPLACED,
    ErrorCode.BAD_TOKEN,
    ErrorCode.VERSION_UNSUPPORTED,
    ErrorCode.BAD_NAME,
    ErrorCode.SHUTTING_DOWN,
    ErrorCode.BAD_PASSWORD,
    ErrorCode.TLS_REQUIRED,
    ErrorCode.REMOVED_BY_HOST,
}


class BotError(Exception):
    """The bot cannot play (on): no table to join, a refused request, the seat lost for good."""


@dataclass(frozen=True, slots=True)
class HandOutcome:
    """One finished hand; ``standings`` is the match so far (see ``hand_result`` in
    docs/PROTOCOL.md)."""

    result: Result
    standings: StandingsMap


@dataclass(slots=True)
class BotRun:
    """What a bot did: where it sat, the hands it saw end, and how often the SDK stepped in."""

    table: str | None = None
    seat: int | None = None
    hands: list[HandOutcome] = field(default_factory=list)
    decisions: int = 0
    fallbacks: int = 0
    #: seats taken back with their token after a lost connection
    reconnects: int = 0
    #: connections that reached the server and were then lost (a server restarted, a network
    #: gone); ``reconnects`` counts those after which a seat was resumed
    lost: int = 0
    #: the final standings of each ladder match played (``match_over``), with its seat
    matches: list[tuple[int | None, StandingsMap]] = field(default_factory=list)

    @property
    def chips(self) -> int | None:
        """This seat's chips in the match after the last hand (None before the first)."""
        if not self.hands or self.seat is None:
            return None
        return int(self.hands[-1].standings["chips"][self.seat])


def seat_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The seat a host assigned through the environment, as ``Bot`` settings; None when
    ``TONGITS_SERVER`` is not set.

    A host that starts bot programs (``tongits arena --bots cmd:...``) sets ``TONGITS_SERVER``
    (an address as ``--connect`` takes it), ``TONGITS_TABLE`` (a table id), ``TONGITS_CODE``
    (its join code) and ``TONGITS_SEAT`` (0, 1 or 2). These win over the program's own
    settings: a bot written to open its own table and leave after three hands joins the
    assigned seat and plays until the host's server closes, unchanged."""
    env = os.environ if environ is None else environ
    address = env.get(ENV_SERVER, "").strip()
    if not address:
        return None
    host, port = parse_address(address)
    seat = env.get(ENV_SEAT, "").strip()
    if seat and not seat.isdigit():
        raise ValueError(f"{ENV_SEAT} must be a seat number, not {seat!r}")
    return {
        "host": host,
        "port": port,
        "table": env.get(ENV_TABLE) or None,
        "code": env.get(ENV_CODE) or None,
        "seat": int(seat) if seat else None,
        "create": False,
        "bots": 0,
        "hands": None,
    }


def parse_address(address: str, default_port: int = DEFAULT_PORT) -> tuple[str, int]:
    """``HOST:PORT`` (or ``HOST``, or ``[v6]:PORT``) as ``(host, port)``. A ``tls://`` prefix
    stays on the host, where ``Bot`` reads it."""
    host, sep, port = address.rpartition(":")
    if not sep or "]" in port:
        host, port = address, str(default_port)
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"not a HOST:PORT address: {address!r}")
    return host, int(port)


class Bot:
    """One remote bot seat; ``await bot.run()`` plays until done and returns a ``BotRun``.

    ``policy`` decides (sync or async). Seating: ``create`` a table named ``table`` with
    ``bots`` server bots (a number of the server's default bot, or a list of policy names such
    as ``["strong", "greedy"]``), ``timer`` seconds per turn (None: the server's default, 0:
    none), rule ``options`` (docs/RECORD.md), ``private``; or join ``table`` (id or name,
    ``seat`` and join ``code`` optional), or the first free table. ``hands``: stop after that many
    hands (None: play until the server closes). ``text`` speaks the JSON-lines mode instead of
    msgpack. ``retry_delays``: the pauses between reconnection attempts; empty to never retry.
    ``record``: a folder to write each hand's record in (the server sends it with the
    result), for ``tongits review DIR --bot NAME`` (None: none kept). ``host`` may be a whole
    address, ``tls://HOST[:PORT]``; ``tls`` True (or a ``ClientTLS``
    saying which authorities and pins to trust) speaks TLS; ``password`` is the server password
    (None: ``$TONGITS_PASSWORD`` if set). ``heartbeat``: a ``ping`` every that many seconds, so
    that a network that drops without closing is noticed within three periods by both sides and
    the bot resumes its seat (None: no heartbeat). A heartbeat bot's policy must not hold the
    event loop for two periods (20 s) or more: make a slow policy ``async`` and think in a
    thread (``trio.to_thread.run_sync``).
    """

    def __init__(
        self,
        policy: Policy,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        name: str = "bot",
        table: str | None = None,
        create: bool = False,
        seat: int | None = None,
        code: str | None = None,
        bots: int | Sequence[str] = 0,
        timer: float | None = None,
        options: dict[str, Any] | None = None,
        private: bool = False,
        hands: int | None = None,
        text: bool = False,
        retry_delays: Iterable[float] = RETRY_DELAYS,
        tls: ClientTLS | bool = False,
        password: str | None = None,
        heartbeat: float | None = DEFAULT_HEARTBEAT,
        ladder: bool = False,
        account: str | None = None,
        matches: int | None = None,
        keys: AccountKeys | None = None,
        record: Path | None = None,
    ) -> None:
        if hands is not None and hands < 1:
            raise ValueError("hands must be at least 1 (or None for no limit)")
        if ladder and (hands is not None or create or table is not None):
            raise ValueError("a ladder bot is seated by the server: no hands, create or table")
        if matches is not None and matches < 1:
            raise ValueError("matches must be at least 1 (or None for no limit)")
        self.policy = policy
        if "://" in host:
            endpoint = Endpoint.parse(host, port)
            host, port, tls = endpoint.host, endpoint.port, tls or endpoint.tls
        self.host, self.port, self.name = host, port, name
        self.tls = tls
        self.heartbeat = heartbeat
        self.password = password if password is not None else os.environ.get("TONGITS_PASSWORD")
        self.table, self.create, self.seat, self.code = table, create, seat, code
        self.bots = bots if isinstance(bots, int) else list(bots)
        self.timer, self.options, self.private = timer, options, private
        self.hands, self.text = hands, text
        self.retry_delays = tuple(retry_delays)
        self.ladder, self.account, self.matches = ladder, account, matches
        self.keys = keys
        self.record = record
        self.report = BotRun()
        self._token: str | None = None
        self._seq: int | None = None
        self._starts_table = False
        self._hand_open = False
        self._resumed = False
        #: the current connection (``_ever_reached``: any connection) got past ``hello``
        self._reached = self._ever_reached = False

    # ----- connections ----------------------------------------------------------------------

    async def run(self) -> BotRun:
        """Play until ``hands`` hands (or ``matches`` ladder matches) are over or the server
        closes; ``BotError`` if the bot cannot take a seat or loses it for good. A ladder bot
        never gives up on a lost connection once it has reached the server: it reconnects
        with back-off (``retry_delays``, then their last for ever) and queues again."""
        failures = 0
        while True:
            self._reached = False
            try:
                await self._session()
                return self.report
            except (ConnectionClosed, TrustError, OSError, trio.BrokenResourceError,
                    trio.ClosedResourceError, trio.TooSlowError, ServerError) as exc:
                reason = self._lost(exc)
            if reason is None:
                log.warning("the server is shutting down; stopping")
                return self.report
            if self._reached:  # the last attempt got through to the server
                failures = 0
                self.report.lost += 1
            if self.ladder and self._ever_reached and self.retry_delays:
                delay = self.retry_delays[min(failures, len(self.retry_delays) - 1)]
            elif self._token is None or failures >= len(self.retry_delays):
                raise BotError(f"connection lost ({reason}); giving up")
            else:
                delay = self.retry_delays[failures]
            failures += 1
            log.warning("connection lost (%s); %s in %g s", reason,
                        "queueing again" if self._token is None
                        else f"resuming seat {self.report.seat}", delay)
            await trio.sleep(delay)

    def _lost(self, exc: Exception) -> str | None:
        """Why the connection ended, when the seat may still be resumed (or, for a ladder bot,
        the queue joined again); None when the server is shutting down (a ladder bot waits
        for it to come back instead). ``BotError`` when the bot cannot go on."""
        if isinstance(exc, ConnectionClosed):
            error = exc.error
            if error is not None and error.code == ErrorCode.SHUTTING_DOWN:
                return "the server is restarting" if self.ladder else None
            if error is not None and error.code in _FINAL:
                raise BotError(f"seat lost: {error.code}: {error.message}") from exc
            return str(exc)
        if isinstance(exc, TrustError):
            raise BotError(str(exc)) from exc
        if isinstance(exc, ServerError):
            if self.ladder and self._token is not None and exc.code == ErrorCode.BAD_TOKEN:
                # The match ended, or was void, while the bot was away: on to the next.
                self._token, self._seq, self._hand_open = None, None, False
                return f"its match is over ({exc})"
            raise BotError(self._refusal(exc)) from exc
        if self._token is None and not (self.ladder and self._ever_reached):
            raise BotError(f"cannot reach {self.host}:{self.port}: {exc}") from exc
        return str(exc) or type(exc).__name__

    def _refusal(self, exc: ServerError) -> str:
        if self._token is not None and exc.code == ErrorCode.BAD_TOKEN:
            return ("cannot resume: the seat's token is no longer valid (the table closed "
                    "while the bot was away: its host closed it, or a full server made room)")
        return f"the server refused: {exc}"

    async def _session(self) -> None:
        """One connection: take (or resume) the seat and play until done; raises
        ``ConnectionClosed`` (or an I/O error) if the connection ends first."""
        try:
            if self.ladder and self.account is None:
                self.account = await self._account_key()
            async with open_connection(
                self.host, self.port, name=self.name, kind="bot", token=self._token,
                seq=self._seq if self._token is not None else None, text=self.text,
                connect_timeout=CONNECT_TIMEOUT, tls=self.tls, password=self.password,
                heartbeat=self.heartbeat, account=self.account if self.ladder else None,
            ) as conn:
                self._reached = self._ever_reached = True
                if self.ladder:
                    await self._ladder_matches(conn)
                    return
                if self._token is None:
                    joined = await self._sit(conn)
                    self._token = joined.token
                    self._seated(joined)
                else:
                    self.report.reconnects += 1
                    self._resumed = True
                await self._play(conn)
        except BaseExceptionGroup as group:  # the connection's nursery wraps what it raises
            raise sole_error(group) from None

    async def _account_key(self) -> str:
        """The key of ladder account ``name`` at this server: kept, or registered now."""
        keys = self.keys if self.keys is not None else AccountKeys()
        server = Endpoint(self.host, self.port).hostport
        key = keys.get(server, self.name)
        if key is not None:
            return key
        async with open_connection(
            self.host, self.port, name=self.name, kind="bot", text=self.text,
            connect_timeout=CONNECT_TIMEOUT, tls=self.tls, password=self.password,
        ) as conn:
            registered = await conn.register(self.name)
        keys.save(server, registered.name, registered.key)
        log.info("registered ladder account %s; its key is kept in %s", registered.name,
                 keys.path)
        return registered.key

    async def _ladder_matches(self, conn: Connection) -> None:
        """Queue, play the match the server seats us at, and again, until ``matches`` are
        over. A resumed session plays its match out first."""
        if self._token is not None:
            self.report.reconnects += 1
            self._resumed = True
            await self._play(conn)
        while self.matches is None or len(self.report.matches) < self.matches:
            await self._queue(conn)
            log.info("%s is queued for a ladder match", self.name)
            joined = await self._next_joined(conn)
            self._token = joined.token
            self._seated(joined)
            await self._play(conn)

    async def _queue(self, conn: Connection) -> None:
        """``queue``, again after a pause while the server says the account is still busy
        (``already_seated``, ``not_ready``: its last table has not let it go yet, or its old
        connection, dropped, has not been noticed yet); other refusals end the bot."""
        for pause in (*self.retry_delays, *(self.retry_delays[-1:] * 30)):
            try:
                await conn.queue()
                return
            except ServerError as exc:
                if exc.code not in (ErrorCode.ALREADY_SEATED, ErrorCode.NOT_READY):
                    raise
                log.warning("queue refused (%s); again in %g s", exc, pause)
            await trio.sleep(pause)
        await conn.queue()

    async def _next_joined(self, conn: Connection) -> Joined:
        while True:
            msg = await conn.receive()
            if isinstance(msg, Joined):
                return msg
            if isinstance(msg, Error):
                log.warning("server error %s: %s", msg.code, msg.message)

    def _match_over(self, msg: MatchOver) -> None:
        """A ladder match ended: its table is closed, the seat's token with it."""
        self.report.matches.append((self.report.seat, msg.standings))
        chips = msg.standings["chips"]
        mine = chips[self.report.seat] if self.report.seat is not None and chips else 0
        log.info("ladder match %d over at table %s: chips %+d", len(self.report.matches),
                 msg.table, mine)
        self._token, self._seq, self._hand_open = None, None, False

    async def _sit(self, conn: Connection) -> Joined:
        if self.create:
            name = self.table or f"{self.name}'s table"
            if isinstance(self.bots, int):
                return await conn.create_table(name, options=self.options, timer=self.timer,
                                               private=self.private, bots=self.bots)
            if len(self.bots) > 2:
                raise BotError("a table has two seats for bots next to the creator")
            joined = await conn.create_table(name, options=self.options, timer=self.timer,
                                             private=self.private, auto_start=False)
            for seat, policy in enumerate(self.bots, start=1):
                await conn.add_bot(seat, policy)
            self._starts_table = True
            if len(self.bots) == 2:
                await conn.start()
            return joined
        if self.table is not None and self.seat is not None:
            # A given seat at a given table (a host's assignment): joined as it is.
            return await conn.join(self.table, seat=self.seat, code=self.code)
        tables = await conn.list_tables()
        if self.table is not None:
            named = [t for t in tables if self.table in (t["table"], t["name"])]
            if not named:
                known = ", ".join(f"{t['table']} ({t['name']})" for t in tables)
                raise BotError(f"no table {self.table!r}; open tables: {known or 'none'}")
            chosen = next((t for t in named if _has_free_seat(t)), named[0])
        else:
            free = [t for t in tables if _has_free_seat(t) and not t["private"]]
            if not free:
                raise BotError("no public table has a free seat; create one")
            chosen = free[0]
        return await conn.join(chosen["table"], seat=self.seat, code=self.code)

    def _seated(self, joined: Joined, *, resumed: bool = False) -> None:
        self.report.table, self.report.seat = joined.table, joined.seat
        log.info("%s %s table %s, seat %s", self.name, "is back at" if resumed else "sits at",
                 joined.table, joined.seat)

    # ----- the game -------------------------------------------------------------------------

    async def _play(self, conn: Connection) -> None:
        """Answer pushed messages until done; ``ConnectionClosed`` if the connection ends."""
        while True:
            msg = await conn.receive()
            if isinstance(msg, State | HandResult):
                self._seq = highest_seq(self._seq, msg.seq)
                if await self._on_progress(conn, msg):
                    return
            elif isinstance(msg, Joined):  # pushed when the server resumes the seat
                self._seated(msg, resumed=True)
            elif isinstance(msg, MatchOver) and self.ladder:
                self._match_over(msg)
                return
            elif isinstance(msg, SeatUpdate):
                await self._maybe_start(conn, msg)
            elif isinstance(msg, Error):
                log.warning("server error %s: %s", msg.code, msg.message)

    async def _on_progress(self, conn: Connection, msg: State | HandResult) -> bool:
        """A state or a hand's result; True when the bot is done (it left the table)."""
        if isinstance(msg, State):
            return await self._on_state(conn, msg)
        self._hand_over(Result.from_dict(msg.result), msg.standings)
        if self.record is not None and msg.record is not None:
            self._keep_record(msg)
        return await self._after_hand(conn, last=bool(msg.last))

    def _keep_record(self, msg: HandResult) -> None:
        """Write the hand's record into ``record`` (a failed write is logged: the bot plays
        on), named as ``tongits connect`` names its own."""
        assert self.record is not None and msg.record is not None
        try:
            save_record(self.record, f"{self.host}:{self.port}", msg.table,
                        msg.standings["hands"], msg.record)
        except OSError as exc:
            log.warning("hand record not written: %s", exc)

    async def _on_state(self, conn: Connection, msg: State) -> bool:
        """Play if the seat is to act; True when the bot is done (it left the table). The view
        is read only when the policy needs it: most states show another seat's move, and reading
        each would put a millisecond of parsing per state before the bot's own turn."""
        resumed, self._resumed = self._resumed, False
        if msg.view.get("result") is not None:
            # A hand that ended while the bot was away is counted from the ``hand_result`` that
            # follows this state; one counted before the drop may still need ``next_hand``.
            if resumed and not self._hand_open:
                return await self._after_hand(conn)
            return False
        self._hand_open = True
        if msg.legal:
            view = SeatView.from_dict(msg.view, msg.legal)
            move = await self._decide(view, msg.deadline)
            await self._send(conn, view, move)
        return False

    async def _decide(self, view: SeatView, deadline: float | None) -> Move:
        """The policy's move, or the fallback if it fails or answers with an illegal move."""
        self.report.decisions += 1
        started = trio.current_time()
        try:
            choice = self.policy(view)
            if inspect.isawaitable(choice):
                choice = await choice
            move = choice if isinstance(choice, Move) else Move.parse(choice)
        except Exception:
            log.exception("the policy failed on seat %s's view; playing a fallback", view.seat)
            return self._fallback(view)
        if move not in view.legal:
            log.warning("the policy chose %r, which is not legal now (legal: %s); "
                        "playing a fallback", str(move), ", ".join(str(m) for m in view.legal))
            return self._fallback(view)
        took = trio.current_time() - started
        if deadline is not None and took > deadline:
            log.warning("the policy took %.2f s, past the %.2f s turn timer", took, deadline)
        return move

    def _fallback(self, view: SeatView) -> Move:
        self.report.fallbacks += 1
        return autoplay_move(view)

    async def _send(self, conn: Connection, view: SeatView, move: Move) -> None:
        try:
            await conn.move(move)
            return
        except ServerError as exc:
            if exc.error.number // 1000 != 3:
                log.warning("the server refused %s: %s", move, exc)
                return
            fallback = self._fallback(view)
            log.warning("the server refused %s: %s; trying %s", move, exc, fallback)
        if fallback == move:
            return
        try:
            await conn.move(fallback)
        except ServerError as exc:
            log.warning("the server refused %s too: %s; waiting for the next state",
                        fallback, exc)

    def _hand_over(self, result: Result, standings: StandingsMap) -> None:
        self._hand_open = False
        self.report.hands.append(HandOutcome(result, standings))
        mine = result.chips[self.report.seat] if self.report.seat is not None else 0
        total = self.report.chips
        log.info("hand %d over: %s, winner %s, chips %+d%s", len(self.report.hands),
                 result.end.value, "none" if result.winner is None else f"seat {result.winner}",
                 mine, "" if total is None else f" (match {total:+d})")

    async def _after_hand(self, conn: Connection, *, last: bool = False) -> bool:
        """Leave when enough hands are over (True), else ask for the next hand. After the
        ``last`` hand of a match neither: the table closes by itself with ``match_over``."""
        if self.hands is not None and len(self.report.hands) >= self.hands:
            if not last:
                try:
                    await conn.leave()
                except ServerError as exc:
                    log.debug("leave: %s", exc)
            return True
        if not last:
            try:
                await conn.next_hand()
            except ServerError as exc:  # e.g. the turn timer dealt it already
                log.debug("next_hand: %s", exc)
        return False

    async def _maybe_start(self, conn: Connection, msg: SeatUpdate) -> None:
        """A table created with named server bots and a free seat starts once it is full."""
        if self._starts_table and all(s["player"] for s in msg.seats):
            self._starts_table = False
            try:
                await conn.start()
            except ServerError as exc:
                log.debug("start: %s", exc)


def _has_free_seat(table: TableInfoMap) -> bool:
    return not table["started"] and table["players"] < 3


def sole_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception inside nested groups, or the group itself if there are several."""
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else group


def _assigned(policy: Policy, host: str, port: int, settings: dict[str, Any]) -> Bot:
    """The bot of ``settings``, or of the seat a host assigned in the environment."""
    assigned = seat_from_env()
    if assigned is not None:
        settings = {**settings, **assigned}
        host, port = settings.pop("host"), settings.pop("port")
    return Bot(policy, host, port, **settings)


async def play_bot(policy: Policy, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                   **settings: Any) -> BotRun:
    """Run a bot inside a Trio program; ``settings`` are those of ``Bot``, except where the
    environment assigns a seat (``seat_from_env``)."""
    return await _assigned(policy, host, port, settings).run()


def run_bot(policy: Policy, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
            **settings: Any) -> BotRun:
    """Run a bot until it is done (blocking); ``settings`` are those of ``Bot``, except where
    the environment assigns a seat (``seat_from_env``)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    return trio.run(_assigned(policy, host, port, settings).run)


def run_builtin(args: argparse.Namespace) -> int:
    """``tongits bot NAME --connect HOST:PORT …``: a policy of ``tongits.engine.policies``, or
    an in-process bot of the arena's ``py:MODULE:FACTORY`` form (a trained policy, your own),
    as a remote client. Prints each hand's result (logging) and a closing line; exit status 1
    if the bot could not play."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    table, code = args.table, args.code
    try:
        assigned = seat_from_env()
        if assigned is None and not args.connect:
            raise ValueError(f"--connect HOST:PORT is needed (or {ENV_SERVER} set by a host)")
        endpoint = Endpoint("", 0)
        if args.connect and Invite.looks_like(args.connect):
            invite = Invite.parse(args.connect)
            endpoint, table, code = invite.endpoint, invite.table, invite.code
        elif args.connect:
            endpoint = Endpoint.parse(args.connect)
        policy = _named_policy(args.policy, args.seed)
        password = read_password(args.password_file)
    except (AddressError, ValueError, KeyError, OSError) as exc:
        # a KeyError's own words (its str() quotes them); an OSError's args[0] is its errno
        said = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"tongits bot: {said}", file=sys.stderr)
        return 2
    seated = args.bots.strip()
    bots: int | list[str] = (int(seated) if seated.isdigit()
                             else [b for b in seated.split(",") if b])
    settings: dict[str, Any] = {
        "host": endpoint.host, "port": endpoint.port, "name": args.name or policy.name,
        "table": table, "code": code, "create": args.create, "bots": bots, "timer": args.timer,
        "hands": args.hands, "text": args.text, "tls": args.tls or endpoint.tls,
        "password": password, "record": Path(args.record) if args.record else None,
        **(assigned or {}),
    }
    if args.ladder:
        settings.update(ladder=True, matches=args.matches)

    try:
        run = trio.run(Bot(policy, settings.pop("host"), settings.pop("port"), **settings).run)
    except ValueError as exc:  # --ladder with --hands, --create or --table
        print(f"tongits bot: {exc}", file=sys.stderr)
        return 2
    except BotError as exc:
        print(f"tongits bot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    links = (f"{counted(run.lost, 'connection')} lost, "
             f"{counted(run.reconnects, 'seat')} resumed")
    if args.ladder:
        print(f"{len(run.matches)} ladder matches, {len(run.hands)} hands: "
              f"{run.decisions} decisions, {run.fallbacks} fallbacks, {links}")
        return 0
    print(f"{len(run.hands)} hands at table {run.table}, seat {run.seat}: "
          f"{sum(1 for h in run.hands if h.result.winner == run.seat)} won, "
          f"chips {run.chips if run.chips is not None else 0:+d}, "
          f"{run.decisions} decisions, {run.fallbacks} fallbacks, {links}")
    return 0


def _named_policy(name: str, seed: str | None) -> BuiltinPolicy:
    """The policy ``tongits bot NAME`` plays: a built-in name or a ``py:`` bot of the arena
    (``BotSpecError``, a ``ValueError``, for anything else)."""
    from .arena.specs import BotSpec, BotSpecError

    spec = BotSpec.parse(name)
    if not spec.in_process:
        raise BotSpecError(f"{spec}: tongits bot runs a built-in or py: bot; run a cmd: "
                           "program yourself")
    return spec.policy(seed)


def read_password(path: str | None) -> str | None:
    """The server password for a command-line client: the first line of ``path``, else
    ``$TONGITS_PASSWORD``, else None (never a command-line argument: ``ps`` shows those)."""
    if path:
        text = Path(path).read_text(encoding="utf-8")
        return text.splitlines()[0] if text else ""
    return os.environ.get("TONGITS_PASSWORD")


__all__ = [
    "RETRY_DELAYS",
    "Bot",
    "BotError",
    "BotRun",
    "Decision",
    "HandOutcome",
    "Policy",
    "parse_address",
    "read_password",
    "play_bot",
    "run_bot",
    "run_builtin",
    "seat_from_env",
]
