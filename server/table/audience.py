"""Who hears a table, and what each of them is told: the table's state fan-out.

A ``Table`` holds one ``Audience``: the connections at its seats and its spectators, and the
messages it sends them. Each change of a hand goes out as one ``state`` per recipient (its own
``seat_view``, the public one for spectators), built from shared parts and encoded once per
codec mode (``fanout.StateFrames``); what the table says to everyone alike (a chat line, a
hand's result) is encoded once per mode too (``tell``). Its talk is kept for who comes later
(``chat.TableChat``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import trio
from tongits.engine import Hand
from tongits.engine.record import hand_record
from tongits.engine.view import seat_legal, seat_view_dict
from tongits.engine.wire import MoveMap, RecordMap, ViewMap
from tongits.protocol import Mode, PlayerKind
from tongits.protocol.maps import HandResultMap, SeatMap, StateHead, StateMap
from tongits.protocol.message_maps import HandResultMessageMap

from .chat import TableChat
from .fanout import HandCache, StateFrames
from .table import SEATS

if TYPE_CHECKING:
    from ..net.peer import Peer
    from .clock import Clock
    from .dealing import Dealing
    from .table import TableLogState

#: What ``Audience.seats_info`` shows of a seat.
_SHOWN_FIELDS = operator.attrgetter("name", "player", "policy", "stand_in", "timeouts",
                                    "program", "token_hash")


class Audience:
    """The connections at one table (``seat_peers``, ``spectators``) and the fan-out to them."""

    __slots__ = ("table_id", "state", "clock", "dealing", "seat_peers", "spectators", "chat",
                 "_hand_cache", "_history_of", "_shown")

    def __init__(self, table_id: str, state: TableLogState, clock: Clock,
                 dealing: Dealing) -> None:
        self.table_id, self.state, self.clock, self.dealing = table_id, state, clock, dealing
        self.seat_peers: list[Peer | None] = [None, None, None]
        self.spectators: set[Peer] = set()
        #: what was said at the table, kept for who comes later
        self.chat = TableChat(table_id, self.tell)
        #: the encoded steps of the current hand's history (``broadcast``), and that hand
        self._hand_cache = HandCache()
        self._history_of: Hand | None = None
        #: the seats as the last state showed them, and what they showed (``shown_seats``)
        self._shown: tuple[tuple[Any, ...] | None, list[SeatMap]] | None = None

    def everyone(self) -> list[Peer]:
        """Every connection at the table: its seats', then its spectators."""
        peers = list(filter(None, self.seat_peers))  # (a connection is never false)
        if self.spectators:
            peers += self.spectators
        return peers

    def empty(self) -> bool:
        """No connection sits at the table or watches it."""
        return not self.spectators and not any(self.seat_peers)  # (a connection is never false)

    def cork(self, peer: Peer | None = None) -> list[Peer]:
        """Cork everyone at the table (and ``peer``) for one step of the table: what the step
        tells each of them leaves in one write, once the step's entries are committed
        (``GroupCommit.hold``)."""
        peers = self.everyone()
        if peer is not None and peer not in peers:
            peers.append(peer)
        for p in peers:
            p.cork()
        return peers

    def tell(self, message: Mapping[str, Any]) -> None:
        """Send ``message`` to everyone at the table, encoded once per codec mode (a hand's
        result, with every seat's cards and the standings, goes to three seats or more)."""
        frames: dict[Mode | None, bytes] = {}
        for peer in self.everyone():
            mode = peer.codec.mode
            frame = frames.get(mode)
            if frame is None:
                frame = frames[mode] = peer.codec.encode(message)
            peer.send_frame(frame)

    # ----- the seats as shown -------------------------------------------------------------

    def owner(self) -> int | None:
        """The owner: the lowest human seat with a connection (the creator sits in seat 0)."""
        seats = self.state.seats
        for seat in SEATS:
            info = seats[seat]
            if info is not None and not info.is_bot and self.seat_peers[seat] is not None:
                return seat
        return None

    def seats_info(self) -> list[SeatMap]:
        """The ``seats`` of ``state``, ``seat_update`` and the lobby's ``tables``."""
        owner = self.owner()
        away_until = self.clock.away_until
        out: list[SeatMap] = []
        for i in SEATS:
            info = self.state.seats[i]
            if info is None:
                out.append({"seat": i, "player": None})
                continue
            entry: SeatMap = {
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
            if i in away_until:
                entry["away"] = True
                entry["grace"] = round(max(0.0, away_until[i] - trio.current_time()), 3)
            if i == owner:
                entry["owner"] = True
            out.append(entry)
        return out

    def shown_seats(self) -> list[SeatMap]:
        """``seats_info()`` for the states of a step, made again only when something it shows
        has changed (read-only: the same list may go out with many states)."""
        key = self._seats_key()
        shown = self._shown
        if key is None or shown is None or shown[0] != key:
            shown = self._shown = (key, self.seats_info())
        return shown[1]

    def _seats_key(self) -> tuple[Any, ...] | None:
        """Everything ``seats_info`` shows (the owner follows from it), or None when it shows
        a countdown (a grace period runs)."""
        if self.clock.away_until:
            return None
        seats = self.state.seats
        try:  # (every seat is filled at a table playing: the fields read in C, by ``map``)
            return (*self.seat_peers, *map(_SHOWN_FIELDS, seats))
        except AttributeError:  # an empty seat
            return (*self.seat_peers,
                    *[None if info is None else _SHOWN_FIELDS(info) for info in seats])

    # ----- states -----------------------------------------------------------------------------

    def broadcast(self, index: int | None, *, timeout: bool = False) -> None:
        """Send the new state to every seat (its own view) and every spectator (the public one),
        all with the same ``seq``; ``index`` is the step of the hand that caused it. What all of
        them see alike is built and encoded once (``StateFrames``), a spectators' frame once
        per mode. The seat then to act hears of it last (``Dealing.offered``)."""
        hand = self.state.hand
        assert hand is not None
        if self._history_of is not hand:
            self._history_of, self._hand_cache = hand, HandCache()
        autoplaying = self.clock.autoplaying
        to_offer = None if hand.over or hand.to_act == autoplaying else hand.to_act
        frames = StateFrames(hand, self.state_head(self.shown_seats()), index, timeout,
                             to_offer, self.state.autoplayed, self._hand_cache)
        dealing = self.dealing
        for seat, peer in enumerate(self.seat_peers):
            if peer is None:
                continue
            # Made from the shared parts, unless the seat's connection does not play it now
            # (``Dealing.offers``).
            if dealing.offers(seat):
                peer.send_frame(frames.frame(peer.codec, seat))
            else:
                peer.send_frame(peer.codec.encode(self.state_message(
                    seat, frames.index, frames.seats, timeout=frames.timeout)))
        if self.spectators:
            spectated: dict[Mode | None, bytes] = {}
            for peer in self.spectators:
                mode = peer.codec.mode
                frame = spectated.get(mode)
                if frame is None:
                    frame = spectated[mode] = frames.frame(peer.codec, None)
                peer.send_frame(frame)
        if not hand.over:
            self.dealing.offered(hand.to_act)

    def state_head(self, seats: list[SeatMap]) -> StateHead:
        """What every recipient's ``state`` message of this change has alike, but the view."""
        state = self.state
        head: StateHead = {"type": "state", "table": self.table_id, "seq": state.state_seq,
                           "hand": state.hand_number, "seats": seats}
        deadline = self.deadline()
        if deadline is not None:
            head["deadline"] = deadline
        return head

    def deadline(self) -> float | None:
        """Seconds left to the human to act (None: no human is, or no timer runs)."""
        hand = self.state.hand
        turn_at = self.clock.turn_at
        if (math.isfinite(turn_at) and hand is not None and not hand.over
                and hand.to_act != self.clock.autoplaying and self._human_to_act(hand)):
            return round(max(0.0, turn_at - trio.current_time()), 3)
        return None

    def _human_to_act(self, hand: Hand) -> bool:
        info = self.state.seats[hand.to_act] if hand.to_act is not None else None
        return info is not None and not info.is_bot

    def _told(self, view: ViewMap) -> ViewMap:
        """``view`` as this table tells it: the steps played for a timed-out seat are marked in
        ``history``. The view's maps are shared (``seat_view_dict``): changed ones are copies."""
        marked = self.state.autoplayed
        if marked:
            history = list(view["history"])
            for step in marked:
                history[step] = {**history[step], "timeout": True}
            view = {**view, "history": history}
        return view

    def _legal(self, seat: int | None) -> list[MoveMap]:
        """The moves ``state.legal`` offers ``seat`` (shared, read-only): none unless it is to
        act, and none while the server is playing its timed-out turn (it goes on at once)."""
        hand = self.state.hand
        assert hand is not None
        if seat is None or seat == self.clock.autoplaying:
            return []
        return seat_legal(hand, seat)

    def state_message(
        self,
        seat: int | None,
        index: int | None,
        seats: list[SeatMap],
        *,
        timeout: bool = False,
    ) -> StateMap:
        """The whole ``state`` for ``seat`` (None: a spectator) after step ``index`` of the hand
        (None: no step, a deal or a catch-up); the frames of ``broadcast`` decode to it."""
        hand = self.state.hand
        assert hand is not None
        view = seat_view_dict(hand, seat)
        state = self.state
        # A plain map with the fields of ``State``: validating our own output on every state
        # cost more than the rest of the fan-out (tests parse it back as a ``State``).
        message: StateMap = {"type": "state", "table": self.table_id, "seq": state.state_seq,
                             "hand": state.hand_number, "seats": seats,
                             "view": self._told(view)}
        if index is not None:
            event = view["history"][index]
            message["event"] = {**event, "timeout": True} if timeout else event
        # Someone else than the seat's connection may play it now: then it is shown the hand,
        # not asked to move.
        offered = seat is None or self.dealing.offers(seat)
        deadline = self.deadline()
        if deadline is not None and offered:
            message["deadline"] = deadline
        legal = self._legal(seat)
        if legal and offered:
            message["legal"] = legal
        return message

    def catch_up_state(self, seat: int | None, seats: list[SeatMap]) -> StateMap:
        """The whole ``state`` for a client catching up (a resume, a ``sync``, a spectator's
        first), with the match's ``standings`` once a hand has been settled: a client started
        again would otherwise show no chips until the next ``hand_result``."""
        message = self.state_message(seat, None, seats)
        standings = self.state.standings()
        if standings["hands"]:
            message["standings"] = standings
        return message

    def hand_result_message(self, hand: Hand,
                            record: RecordMap | None = None) -> HandResultMessageMap:
        """The ``hand_result`` of ``hand``, which has ended: every seat's cards are shown.
        ``record``: the hand's record as the ledger journaled it, when the hand has just
        ended (made again otherwise, for a player who resumes)."""
        state = self.state
        assert hand.result is not None
        result: HandResultMap = {
            **hand.result.to_dict(),
            "hands": [[str(c) for c in sorted(h)] for h in hand.hands],
            "pot_taken": state.pot_taken,
            "why": [[item.to_dict() for item in seat] for seat in hand.settlement],
        }
        # A plain map with the fields of ``HandResult`` in their order, as ``to_dict`` writes
        # them (tests parse it back): the server's own output is not checked again.
        message: HandResultMessageMap = {"type": "hand_result", "table": self.table_id,
                                         "seq": state.seq, "result": result,
                                         "standings": state.standings()}
        if state.match_over is not None:
            message["last"] = True
        elif math.isfinite(self.clock.turn_at):
            message["next_deal"] = round(max(0.0, self.clock.turn_at - trio.current_time()), 3)
        message["record"] = record if record is not None else hand_record(
            hand, state.seat_names())
        return message
