"""Who sits at a table: humans taking, resuming and leaving seats, bots and stand-ins.

A human whose connection drops keeps the seat for ``grace`` seconds (the turn timer still
runs); then a server bot stands in, and the seat's token still resumes it: the human is back
for the next decision. A seat left during the match is a stand-in's for good; before it, the
seat is free again, unless the table's ``Dealing`` sits someone in it (at a ladder table a bot:
nobody else could).
"""

from __future__ import annotations

import logging
import random
import secrets
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

import trio
from tongits.protocol import (
    AddBot,
    CreateTable,
    ErrorCode,
    Join,
    Joined,
    PlayerKind,
    ProtocolError,
    RemoveBot,
    SeatChange,
    SeatUpdate,
    Spectate,
    ok_message,
    to_dict,
)
from tongits.protocol.maps import SeatChangeMap

from ..names import folded
from ..net.peer import TableLink
from . import bots
from .entries import BackEntry, SitEntry, StandInEntry, VacateEntry
from .table import SEATS, new_token, token_digest

if TYPE_CHECKING:
    from ..net.peer import Peer
    from .audience import Audience
    from .dealing import Dealing
    from .parts import TableParts

log = logging.getLogger("tongits.server")


def _seat_number(seat: int) -> int:
    if seat not in SEATS:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"seat must be 0, 1 or 2, not {seat}")
    return seat


class SeatingHost(TableLink, Protocol):
    """What ``Seating`` asks of its table (``actor.Table``) besides its ``TableParts``: to be
    the table its peers are at (``TableLink``), its seat tokens in the lobby's index, and its
    match started once its seats are full (``Progression``, made after ``Seating``)."""

    def index_token(self, digest: str) -> None: ...

    def forget_token(self, digest: str | None) -> None: ...

    def start_match(self) -> None: ...


class Seating:
    """The seat requests of one table and the changes of who plays each seat."""

    __slots__ = ("table", "parts", "audience", "dealing", "bot_policy")

    def __init__(self, table: SeatingHost, parts: TableParts, audience: Audience,
                 dealing: Dealing, bot_policy: str) -> None:
        self.table = table
        self.parts, self.audience, self.dealing = parts, audience, dealing
        #: the policy of the server's bots and stand-ins when none is named
        self.bot_policy = bot_policy

    def restore(self) -> None:
        """After a restart: bots get their policies back, every human is away (their grace
        period and the turn timer start now)."""
        table = self.table
        until = trio.current_time() + self.parts.clock.grace()
        for seat in SEATS:
            info = self.parts.state.seats[seat]
            if info is None:
                continue
            if info.is_bot:
                self.parts.policies[seat] = bots.make_policy(info.policy, seed=self.bot_seed(seat))
            if info.token_hash is not None:
                table.index_token(info.token_hash)
                if not info.is_bot:
                    self.parts.clock.away_until[seat] = until
        self.parts.clock.schedule()

    def create(self, peer: Peer, msg: CreateTable) -> None:
        self.sit_human(peer, 0, msg.id, code=self.parts.state.code)
        for seat in SEATS[1 : 1 + msg.bots]:
            self.sit_bot(seat, None)
        self.changed()

    def join(self, peer: Peer, msg: Join) -> None:
        table = self.table
        state = self.parts.state
        self.check_code(msg.code)
        seat = self._own_seat_gone(peer) if state.private else None
        if seat is not None:
            self._take_back(peer, seat, msg.id)
            return
        if state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has started; spectate")
        if msg.seat is None:
            free = state.free_seats()
            if not free:
                raise ProtocolError(ErrorCode.TABLE_FULL, f"table {table.id} is full")
            seat = free[0]
        else:
            seat = _seat_number(msg.seat)
            if state.seats[seat] is not None:
                raise ProtocolError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        self._check_name_free(peer)
        self.sit_human(peer, seat, msg.id)
        self.changed(seat, SeatChange.SAT)

    def _own_seat_gone(self, peer: Peer) -> int | None:
        """The seat of a private table's player of ``peer``'s name whose connection is gone
        (away, or a bot standing in until it comes back), if any: a friend whose phone died
        has lost its seat token with it, and the table's code (the invite link) with the
        seat's name is what a friend at that table can show instead. A connected seat is
        never taken this way."""
        assert peer.name is not None
        wanted = folded(peer.name)
        for seat, info in enumerate(self.parts.state.seats):
            if (info is not None and info.token_hash is not None
                    and (info.stand_in or not info.is_bot)
                    and self.audience.seat_peers[seat] is None
                    and folded(info.name) == wanted):
                return seat
        return None

    def _take_back(self, peer: Peer, seat: int, ref: int | str | None) -> None:
        """``peer`` plays ``seat`` again under a new token (``_own_seat_gone``; the old token
        no longer resumes it), as a resume without a ``seq`` would: ``joined``, the seat's
        whole view with the hand's events as ``missed``, ``back`` for everyone."""
        table = self.table
        info = self.parts.state.seats[seat]
        assert info is not None and peer.name is not None
        table.forget_token(info.token_hash)
        token = new_token()
        digest = token_digest(token)
        self.parts.policies.pop(seat, None)
        self.parts.ledger.commit(SitEntry(seat, info.name, PlayerKind.HUMAN, digest,
                                          program=peer.kind is PlayerKind.BOT))
        table.index_token(digest)
        log.info("table %s: %r takes seat %d back by its name and the table's code", table.id,
                 peer, seat)
        self._welcome_back(peer, seat, token, None, SeatChange.BACK, ref)

    def _check_name_free(self, peer: Peer) -> None:
        """``name_taken`` if a player of ``peer``'s name sits at the table already, whatever
        its case or width ("ana", "ＡＮＡ"): two Anas at one table could not be told apart in
        its seats, log, chat and results. The joiner picks another name; the one seated is
        never renamed."""
        assert peer.name is not None
        wanted = folded(peer.name)
        for info in self.parts.state.seats:
            if info is not None and folded(info.name) == wanted:
                raise ProtocolError(ErrorCode.NAME_TAKEN,
                                    f"{info.name} already sits here: pick another name")

    def sit_human(
        self, peer: Peer, seat: int, ref: int | str | None, code: str | None = None
    ) -> None:
        table = self.table
        token = new_token()
        digest = token_digest(token)
        assert peer.name is not None
        self.parts.ledger.commit(SitEntry(seat, peer.name, PlayerKind.HUMAN, digest,
                              program=peer.kind is PlayerKind.BOT))
        self.attach(peer, seat, token)
        table.index_token(digest)
        invite = (str(replace(peer.invite, table=table.id, code=code))
                  if code is not None and peer.invite is not None else None)
        joined = Joined(id=ref, table=table.id, seat=seat, token=token, spectator=False,
                        code=code, invite=invite)
        peer.send(to_dict(joined))
        self.audience.chat.retell(peer)
        log.info("table %s: %r sits in seat %d", table.id, peer, seat)

    def attach(self, peer: Peer, seat: int, token: str | None) -> None:
        """``peer``'s connection is the one at ``seat`` now, with ``token``."""
        self.audience.seat_peers[seat] = peer
        peer.table, peer.seat, peer.token = self.table, seat, token

    def sit_bot(self, seat: int, policy: str | None, shown: str | None = None) -> None:
        """A server bot of ``policy`` sits in ``seat``, named ``shown`` (default
        ``POLICY-bot-SEAT``; the ladder's anchors sit under their accounts' names)."""
        name = policy or self.bot_policy
        self.parts.policies[seat] = bots.make_policy(name, seed=self.bot_seed(seat))
        self.parts.ledger.commit(SitEntry(seat, shown or f"{name}-bot-{seat}", PlayerKind.BOT,
                                     policy=name))

    def sit_named_bot(self, seat: int, name: str, policy: str) -> None:
        """A bot whose policy the table's dealing provides (``policies``) sits in ``seat``,
        named ``name``, its policy shown as ``policy`` (the arena's bots and stand-ins)."""
        self.parts.ledger.commit(SitEntry(seat, name, PlayerKind.BOT, policy=policy))

    def take_again(self, peer: Peer, seat: int) -> str:
        """``peer`` (a program the arena restarted) is the connection at ``seat`` from now on,
        with a new token (the seat's old one no longer resumes it): the token."""
        table = self.table
        info = self.parts.state.seats[seat]
        if info is not None:
            table.forget_token(info.token_hash)
        token = new_token()
        self.attach(peer, seat, token)
        table.index_token(token_digest(token))
        return token

    def give_back(self, seat: int, peer: Peer) -> None:
        """The human (program) of ``peer``, at ``seat`` with its token, plays the seat again
        instead of its stand-in."""
        assert peer.name is not None and peer.token is not None
        table = self.table
        digest = token_digest(peer.token)
        self.parts.policies.pop(seat, None)
        self.parts.ledger.commit(SitEntry(seat, peer.name, PlayerKind.HUMAN, digest))
        table.index_token(digest)

    def bot_seed(self, seat: int) -> int:
        return random.Random(f"{self.parts.state.seed}/bot/{seat}").getrandbits(32)

    def spectate(self, peer: Peer, msg: Spectate) -> None:
        table = self.table
        self.check_code(msg.code)
        self.audience.spectators.add(peer)
        peer.table, peer.seat, peer.token = table, None, None
        peer.send(to_dict(Joined(id=msg.id, table=table.id, spectator=True)))
        if self.parts.state.hand is not None:
            peer.send(self.audience.catch_up_state(None, self.audience.seats_info()))
        self.audience.chat.retell(peer)
        self.changed()

    def check_code(self, code: str | None) -> None:
        state = self.parts.state
        expected = state.code
        if state.private and expected is not None and (
            code is None or not secrets.compare_digest(code.encode(), expected.encode())
        ):
            raise ProtocolError(ErrorCode.BAD_JOIN_CODE, "wrong or missing join code")

    def resume(self, peer: Peer, token: str, seq: int | None) -> None:
        """``peer`` takes the seat of ``token`` back: it gets ``joined``, then one ``state``
        with the seat's whole view and the events it missed since state ``seq`` (and the
        ``hand_result`` again if the hand ended meanwhile). A stand-in bot gives the seat back
        at once, so the human makes the seat's next decision."""
        table = self.table
        state = self.parts.state
        seat = state.seat_of_token(token)
        if seat is None:
            raise ProtocolError(ErrorCode.BAD_TOKEN, "unknown or expired token")
        old = self.audience.seat_peers[seat]
        if old is not None and old is not peer:
            old.table = None
            old.kick(ErrorCode.REPLACED, "another connection resumed this seat", flush=False)
        info = state.seats[seat]
        assert info is not None
        change = SeatChange.BACK
        if info.stand_in:
            self.parts.policies.pop(seat, None)
            self.parts.ledger.commit(BackEntry(seat))
        elif old is not None and old is not peer:
            change = SeatChange.REPLACED
        log.info("table %s: %r resumes seat %d", table.id, peer, seat)
        self._welcome_back(peer, seat, token, seq, change)

    def _welcome_back(self, peer: Peer, seat: int, token: str, seq: int | None,
                      change: SeatChange, ref: int | str | None = None) -> None:
        """``peer`` is at ``seat`` again: ``joined`` (the reply to request ``ref``, or pushed),
        one ``state`` with the seat's whole view and the events since state ``seq`` as
        ``missed`` (and the ``hand_result`` again if the hand ended after it), ``change`` for
        everyone."""
        state = self.parts.state
        self.parts.clock.away_until.pop(seat, None)
        self.attach(peer, seat, token)
        # A stand-in about to play: the turn is the human's now, on the timer; a table that
        # waited for its players (``Dealing.paused``) plays on. Another seat's turn keeps its
        # deadline (the others' screens count it down).
        self.parts.clock.schedule()
        peer.send(to_dict(Joined(id=ref, table=self.table.id, seat=seat, token=token,
                                 spectator=False)))
        seats = self.audience.seats_info()
        hand = state.hand
        if hand is not None:
            message = self.audience.catch_up_state(seat, seats)
            message["missed"] = message["view"]["history"][state.steps_since(seq):]
            peer.send(message)
            if hand.over and (seq is None or seq < state.seq):
                peer.send(self.audience.hand_result_message(hand))
        self.audience.chat.retell(peer)
        self.changed(seat, change)

    def leave(self, peer: Peer, *, disconnected: bool = False) -> None:
        """``peer`` leaves its seat or stops watching. A disconnected seat is kept for the
        grace period (it may resume with its token). A seat that leaves is freed before the
        match, and handed to a stand-in bot for good during it. The dealing hears of it last
        (``Dealing.left``)."""
        table = self.table
        seat = peer.seat if peer.table is table else None
        self._leave(peer, disconnected=disconnected)
        self.dealing.left(seat, disconnected=disconnected)

    def _leave(self, peer: Peer, *, disconnected: bool) -> None:
        table = self.table
        audience = self.audience
        if peer.table is not table:
            if disconnected:
                return
            raise ProtocolError(ErrorCode.NOT_SEATED, "not at this table")
        peer.table = None
        if peer in audience.spectators:
            audience.spectators.discard(peer)
            self.changed()
            return
        seat = peer.seat
        peer.seat, peer.token = None, None
        if seat is None or audience.seat_peers[seat] is not peer:
            return
        audience.seat_peers[seat] = None
        info = self.parts.state.seats[seat]
        digest = info.token_hash if info is not None else None
        if disconnected:
            self.parts.clock.away_until[seat] = trio.current_time() + self.parts.clock.grace()
            change = SeatChange.AWAY
        elif not self.parts.state.started:
            table.forget_token(digest)
            change = self._free_before_start(seat)
        else:
            self.stand_in(seat)
            table.forget_token(digest)
            self.dealing.forfeited(seat)
            change = SeatChange.STAND_IN
        log.info("table %s: %r %s seat %d", table.id, peer,
                 "disconnected from" if disconnected else "left", seat)
        self.changed(seat, change)
        if self.parts.state.hand_over:
            self.dealing.deal_if_ready()
        self.parts.clock.schedule()  # the last human gone: the table waits (Dealing.paused)

    def stand_in(self, seat: int, *, returnable: bool = False) -> None:
        """A server bot plays ``seat`` from now on (until its human resumes it, if
        ``returnable``)."""
        policy = self.bot_policy
        self.parts.policies[seat] = bots.make_policy(policy, seed=self.bot_seed(seat))
        self.parts.ledger.commit(StandInEntry(seat, policy, returnable))

    def grace_over(self, seat: int) -> None:
        """The human of ``seat`` stayed away too long: free the seat before the match, or let a
        bot stand in (the token still brings the human back)."""
        table = self.table
        del self.parts.clock.away_until[seat]
        info = self.parts.state.seats[seat]
        if info is None or info.is_bot or self.audience.seat_peers[seat] is not None:
            return
        if self.parts.state.started:
            self.stand_in(seat, returnable=True)
            self.dealing.forfeited(seat)
            change = SeatChange.STAND_IN
            log.info("table %s: seat %d away too long; a bot stands in", table.id, seat)
        else:
            table.forget_token(info.token_hash)
            change = self._free_before_start(seat)
        self.changed(seat, change)
        self.parts.clock.schedule()

    def _free_before_start(self, seat: int) -> SeatChange:
        """The human of ``seat`` left (or stayed away too long) before the match: the seat is
        free again, unless the dealing sits someone in it (``Dealing.vacated``)."""
        info = self.parts.state.seats[seat]
        self.parts.ledger.commit(VacateEntry(seat))
        if info is not None and self.dealing.vacated(seat, info.name):
            return SeatChange.STAND_IN
        return SeatChange.LEFT

    def owner_check(self, peer: Peer) -> None:
        table = self.table
        if peer.table is not table or peer.seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "only a seated player may do this")
        if peer.seat != self.audience.owner():
            raise ProtocolError(ErrorCode.NOT_TABLE_OWNER, "only the table's owner may do this")

    def add_bot(self, peer: Peer, msg: AddBot) -> None:
        state = self.parts.state
        self.owner_check(peer)
        seat = _seat_number(msg.seat)
        if state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has started")
        if state.seats[seat] is not None:
            raise ProtocolError(ErrorCode.SEAT_TAKEN, f"seat {seat} is taken")
        try:
            self.sit_bot(seat, msg.policy)
        except (KeyError, ValueError) as exc:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, str(exc).strip("'\"")) from None
        peer.send(ok_message(msg.id))
        self.changed(seat, SeatChange.SAT)

    def remove_bot(self, peer: Peer, msg: RemoveBot) -> None:
        self.owner_check(peer)
        seat = _seat_number(msg.seat)
        if self.parts.state.started:
            raise ProtocolError(ErrorCode.TABLE_STARTED, "the match has started")
        info = self.parts.state.seats[seat]
        if info is None or not info.is_bot:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"seat {seat} holds no bot")
        self.parts.policies.pop(seat, None)
        self.parts.ledger.commit(VacateEntry(seat))
        peer.send(ok_message(msg.id))
        self.changed(seat, SeatChange.LEFT)

    def changed(self, seat: int | None = None, change: SeatChange | None = None) -> None:
        """Tell everyone at the table who sits where (and what just happened to ``seat``);
        start a full table that auto-starts."""
        table = self.table
        seats = self.audience.seats_info()
        what: SeatChangeMap | None = None
        if seat is not None and change:
            what = {"seat": seat, "change": change.value}
        self.audience.tell(to_dict(SeatUpdate(table=table.id, seats=seats, change=what,
                                              deadline=self.audience.deadline())))
        state = self.parts.state
        if state.full and not state.started and state.auto_start:
            table.start_match()
