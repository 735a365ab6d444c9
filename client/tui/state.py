"""The one state object every screen reads, and the updates a session delivers into it.

A session (fake or networked) turns what it hears into the small ``Update`` values below and
hands them to ``TableState.apply``; the layout only reads ``TableState``. Everything shown is
derived from the latest view plus the lines heard between its events (chat, seat changes), so a
reconnect that delivers the view again brings the screen back exactly as it was; the events
missed meanwhile are part of that view, and the log marks where they begin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from tongits.engine import (
    Action,
    Card,
    ChipItemMap,
    HandRecord,
    Move,
    RecordError,
    Result,
    RuleError,
    SeatView,
    Step,
)
from tongits.engine.review import decision_points, decisions_seen
from tongits.engine.wire import RecordMap, ResultMap
from tongits.protocol import ErrorCode, PlayerKind, SeatChange
from tongits.protocol.maps import SeatChangeMap, SeatMap, StandingsMap, TableInfoMap
from tongits.protocol.phrases import PHRASES, missed_hands, say

#: What a refused join code (``bad_join_code``: a private table asked for by its id alone, or
#: with a wrong code) is answered with: the two ways in that the lobby takes.
JOIN_CODE_HINT = "join INVITE-LINK or join TABLE CODE"


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """Who sits in a seat, from the server's ``seats`` entry (read as typed where it arrived:
    ``Connection``)."""

    name: str
    bot: bool = False
    connected: bool = True
    standing_in: bool = False  # a bot plays for this human, who left or stayed away too long
    away: bool = False  # the human dropped and may take the seat back
    grace_until: float | None = None  # time.monotonic() at which a bot stands in
    empty: bool = False  # nobody sits here yet
    owner: bool = False  # owns the table: may add bots and ``start`` the match

    @classmethod
    def from_dict(cls, seat: int, data: SeatMap | None, now: float = 0.0) -> SeatInfo:
        """Seat ``seat`` as ``data`` says (None: no entry, an empty seat); ``now`` is
        ``time.monotonic()``, from which an away human's ``grace`` counts."""
        if data is None:
            return cls(name=f"seat {seat} (empty)", empty=True)
        away = data.get("away", False)
        grace = data.get("grace")
        name = data.get("name")
        return cls(
            name=name or f"seat {seat} (empty)",
            bot=data["player"] == PlayerKind.BOT,
            connected=data.get("connected", not away),
            standing_in=data.get("stand_in", False),
            away=away,
            grace_until=now + grace if grace is not None and away else None,
            empty=not name,
            owner=data.get("owner", False),
        )


def seats_from(entries: Sequence[SeatMap] | None, now: float = 0.0) -> list[SeatInfo]:
    by_seat = {entry["seat"]: entry for entry in entries or ()}
    return [SeatInfo.from_dict(s, by_seat.get(s), now) for s in range(3)]


@dataclass(frozen=True, slots=True)
class StateUpdate:
    view: SeatView
    seats: Sequence[SeatMap] | None = None
    deadline: float | None = None  # seconds from now
    table: str = ""
    missed: int | None = None  # on resuming: how many of the view's events came while away
    standings: StandingsMap | None = None  # on catching up (resume, sync): the match so far


@dataclass(frozen=True, slots=True)
class HandOver:
    """A hand ended; ``next_deal``: seconds until the table deals the next hand without
    waiting for everyone's Enter (its timer; ``None``: none, it waits); ``record``: the
    hand's record, when the server sent it (docs/RECORD.md)."""

    result: ResultMap
    standings: StandingsMap
    next_deal: float | None = None
    record: RecordMap | None = None
    #: why each seat won or paid its chips (``hand_result.result.why``; none from a server
    #: older than protocol 1.4)
    why: Sequence[list[ChipItemMap]] = ()


@dataclass(frozen=True, slots=True)
class TableLeft:
    """We left the table (back to the lobby, or on to a new table for another match): nothing
    shown about it stays."""


@dataclass(frozen=True, slots=True)
class MatchEnded:
    """The match reached its declared length (``match_over``): the table has closed, no hand
    follows; ``standings`` is the final ledger."""

    reason: str
    standings: StandingsMap


@dataclass(frozen=True, slots=True)
class ChatReceived:
    """A chat line; ``n``: its number at the table (protocol 1.5), ``earlier``: said before we
    arrived or came back, told again (``TableState`` skips such a line it shows already)."""

    seat: int | None
    name: str
    text: str
    n: int | None = None
    earlier: bool = False


@dataclass(frozen=True, slots=True)
class SeatsChanged:
    """Who sits where; ``change`` is the server's ``{"seat": 1, "change": "away"}``, if any;
    ``deadline``: seconds left to the human to act, when the server says (a player back from a
    stand-in on its own turn has a whole turn again).

    The maps are the server's, of their types (``Connection`` checked them as they arrived);
    a ``change`` this client does not know (a newer server's) is not said."""

    seats: Sequence[SeatMap]
    change: SeatChangeMap | None = None
    deadline: float | None = None


@dataclass(frozen=True, slots=True)
class ServerRefused:
    code: str
    message: str


class LinkStatus(StrEnum):
    """Where the session's connection stands."""

    CONNECTED = "connected"
    LOST = "lost"  # reconnecting
    CLOSED = "closed"  # gave up


@dataclass(frozen=True, slots=True)
class ConnectionChanged:
    status: LinkStatus
    detail: str = ""
    #: LOST: how long before this the server was last heard (``Connection.silent_for``): a
    #: network gone without a word is noticed 20 to 30 s after it went
    silent: float = 0.0


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the session wants the player to read now (back in the seat, an address, the
    invite link of their private table): shown on the message line and kept in the log;
    ``this_hand``: about the hand being played (where its record was saved), not kept after."""

    text: str
    this_hand: bool = False


@dataclass(frozen=True, slots=True)
class TableNamed:
    """The name the table was given (the title shows it beside the id) and how many hands of
    its match were played before this one (so a client started again counts on from there);
    ``seat`` is ours (None: watching), known from the join before any hand is dealt."""

    name: str
    hands_played: int | None = None
    table: str = ""
    seat: int | None = None
    private: bool = False  # joining needs the table's code (its invite link)
    match_hands: int | None = None  # the match's declared number of hands, if any


@dataclass(frozen=True, slots=True)
class TablesListed:
    """The lobby's table list; ``None`` once a seat is taken and the lobby is left."""

    tables: Sequence[TableInfoMap] | None


Update = (
    StateUpdate
    | HandOver
    | MatchEnded
    | ChatReceived
    | SeatsChanged
    | ServerRefused
    | ConnectionChanged
    | TablesListed
    | Notice
    | TableNamed
    | TableLeft
)


class LogKind(StrEnum):
    """What a line of the table's log is, which decides how it is drawn."""

    EVENT = "event"  # a move
    CHAT = "chat"
    SEAT = "seat"  # someone came, went, lost connection…
    INFO = "info"
    ERROR = "error"


@dataclass(slots=True)
class LogLine:
    kind: LogKind
    text: str
    seat: int | None = None
    #: about this hand only (where the moves missed while away begin, where its record was
    #: saved, that we came back to it): the next deal drops it, where the lines heard are
    #: kept a while
    this_hand: bool = False


@dataclass(slots=True)
class TableState:
    """Everything the table screen shows."""

    view: SeatView | None = None
    seats: list[SeatInfo] = field(default_factory=lambda: seats_from(None))
    table: str = ""
    deadline_at: float | None = None  # time.monotonic() at which the turn times out
    #: chat and seat changes, each with the history length when it was heard
    asides: list[tuple[int, LogLine]] = field(default_factory=list)
    #: the numbered chat lines heard at this table, as (number, speaker, text)
    heard: set[tuple[int, str, str]] = field(default_factory=set)
    #: seats whose human came back, with the history length then (marked until they act)
    back_at: dict[int, int] = field(default_factory=dict)
    notes: list[LogLine] = field(default_factory=list)  # local output: help, hint, errors
    notes_scroll: int = 0  # the first note shown, when they are more than the log's lines
    #: the view the notes are about (a hint), when they are about one: they go when it does
    notes_about: SeatView | None = None
    result: Result | None = None
    #: why each seat won or paid its chips (``hand_result.result.why``, protocol 1.4): empty
    #: from an older server, or for a hand whose result came in a catching-up state
    why: list[list[ChipItemMap]] = field(default_factory=list)
    standings: StandingsMap | None = None
    hands_seen: int = 0
    sort_by_rank: bool = False
    message: str = ""
    message_is_error: bool = False
    banner: str | None = None
    link: LinkStatus = LinkStatus.CONNECTED  # where the session's connection stands
    lost_at: float | None = None  # time.monotonic() when the link was lost, until it is back
    closed: bool = False
    lobby: Sequence[TableInfoMap] | None = None  # the server's tables while in the lobby
    #: this hand's views in which the seat had a choice of moves (what ``review`` grades)
    choices: list[SeatView] = field(default_factory=list)
    #: the record of the hand just over, when the server sent one: the whole hand, even what
    #: was played before this client connected (``review`` grades every decision in it)
    record: HandRecord | None = None
    confirming_quit: bool = False  # the player asked to quit a game and is asked to confirm
    confirming_leave: bool = False  # the same, to leave the table for the lobby
    table_name: str = ""
    match_hands: int | None = None  # the match's declared number of hands (the title counts)
    table_private: bool = False  # friends join with the invite link, not by the name
    drawn: Card | None = None  # the card we just drew, until our turn ends
    log_scroll: int = 0  # lines of the log scrolled back from its end (PgUp / PgDn)
    match_over: bool = False  # the match reached its declared length: no hand follows
    #: time.monotonic() at which the table deals the next hand by itself (its timer)
    next_deal_at: float | None = None
    seat: int | None = None  # ours, from the join: the bottom of the screen before a deal
    has_lobby: bool = False  # the session can go back to the server's lobby (not --offline)

    @property
    def seated(self) -> bool:
        """We hold a seat in a match that is still being played (quitting it is asked)."""
        return (
            self.lobby is None and not self.closed and not self.match_over
            and self.view is not None and self.view.seat is not None
        )

    @property
    def waiting_seated(self) -> bool:
        """We hold a seat at a table whose match has not begun: no card dealt yet."""
        return (self.lobby is None and not self.closed and self.view is None
                and self.seat is not None)

    def after_the_match(self) -> str:
        """What may be typed once the match is over: ``again`` (a player: a new match with
        the same settings), ``lobby`` (where there is one)."""
        watching = self.view is not None and self.view.seat is None
        words = [*([] if watching else ["again"]), *(["lobby"] if self.has_lobby else [])]
        return " · ".join([*words, "^Q quit"])

    @property
    def names(self) -> list[str]:
        """Each seat's name as shown; ours, when another seat has the same name, marked
        ``(you)`` by seat: two "Ben" rows in the log, the standings or a result would not say
        which one is us."""
        names = [s.name for s in self.seats]
        me = self.view.seat if self.view is not None else self.seat
        if me is not None and 0 <= me < len(names) and names.count(names[me]) > 1:
            names[me] += " (you)"
        return names

    @property
    def told_names(self) -> list[str]:
        """Each seat's name as the log tells its moves: ours is "You" (the phrasebook's reader,
        as the page says it), the others' by name; a spectator's, every seat by name."""
        names = [s.name for s in self.seats]
        me = self.view.seat if self.view is not None else self.seat
        if me is not None and 0 <= me < len(names):
            names[me] = YOU
        return names

    @property
    def hand_over(self) -> bool:
        return self.result is not None

    def say(self, text: str, *, error: bool = False) -> None:
        self.message = text
        self.message_is_error = error

    def note(
        self, lines: Sequence[str], kind: LogKind = LogKind.INFO, about: SeatView | None = None
    ) -> None:
        """Show ``lines`` in the log's place; ``about``: the position they advise (a hint),
        after which they would mislead, so they go once the game has moved on from it."""
        self.notes = [LogLine(kind, line) for line in lines]
        self.notes_scroll = 0
        self.notes_about = about

    def decisions_to_review(self) -> list[tuple[int, SeatView, Move]]:
        """Every decision of our seat in the hand just over, for ``review``: from the hand's
        record when the server sent it (then decisions made before a reconnect or a restart
        of this client are there too), else from the views this client was sent."""
        view = self.view
        if view is None or view.seat is None:
            return []
        if self.record is not None:
            try:
                return decision_points(self.record, view.seat)
            except RuleError:
                pass  # a record that does not replay: review what we saw instead
        return decisions_seen(self.choices, view)

    def apply(self, update: Update, now: float | None = None) -> None:
        """Take one update from the session; ``now`` is ``time.monotonic()``, from which the
        turn's deadline and the seats' grace periods are counted."""
        now = time.monotonic() if now is None else now
        _APPLY[type(update)](self, update, now)

    def _state(self, update: StateUpdate, now: float) -> None:
        old = self.view
        if (
            old is None
            or len(update.view.history) < len(old.history)
            or (old.result is not None and update.view.result is None)
        ):
            self._new_hand(said_before=old is not None)
        else:
            self._moved_on(old.history, update.view)
        about = self.notes_about
        if about is not None and (about.history, about.phase) != (
                update.view.history, update.view.phase):
            self.notes, self.notes_about = [], None
        if self._turn_came(update.view):
            self.log_scroll = 0  # the log follows: what just happened is what we answer
        self.view = update.view
        if len(update.view.legal) > 1:
            self.choices.append(update.view)
        if update.view.result is not None:
            self.result = update.view.result
        if update.seats is not None:
            self.seats = seats_from(update.seats, now)
        if update.standings is not None:
            self._missed_hands(update.view, update.standings, update.missed)
            self.standings = update.standings
        if update.missed:
            at = len(update.view.history) - update.missed
            moves = "move" if update.missed == 1 else "moves"
            line = LogLine(LogKind.INFO, f"⋯ while you were away ({update.missed} {moves}):",
                           this_hand=True)
            self.asides.append((max(at, 0), line))
        self.table = update.table or self.table
        self.deadline_at = now + update.deadline if update.deadline is not None else None

    def _missed_hands(self, view: SeatView, after: StandingsMap, missed: int | None) -> None:
        """A resume after hands were settled without us (a bot stood in and the table dealt
        on; their results are not sent again) says so before the resumed hand's moves, or
        the chips would have moved without a word."""
        before, seat = self.standings, view.seat
        if missed is None or before is None or seat is None:
            return
        shown = view.result.to_dict() if view.result is not None else None
        line = missed_hands(before, after, seat, self.told_names, shown)
        if line is not None:
            self.asides.append((0, LogLine(LogKind.SEAT, line)))

    def _new_hand(self, *, said_before: bool) -> None:
        """A view of a new hand (or the first view): what was kept about the last one goes,
        but the last few lines heard (not those about that hand only, such as the mark of the
        moves we missed in it: those moves are gone from the log), and the message line if it
        was about the last hand."""
        heard = [line for _, line in self.asides if not line.this_hand]
        self.asides = [(0, line) for line in heard[-6:]]
        self.back_at = {}
        self.result, self.why = None, []
        self.notes, self.notes_about = [], None
        self.choices = []
        self.record = None
        self.next_deal_at = None
        self.hands_seen += 1
        self.drawn = None
        self.log_scroll = 0
        if said_before:
            self.say("")

    def _hand_over(self, update: HandOver, now: float) -> None:
        self.result = Result.from_dict(update.result)
        self.why = list(update.why)
        self.record = None
        if update.record is not None:
            try:
                self.record = HandRecord.from_dict(dict(update.record))
            except RecordError:
                self.record = None  # a record we cannot read: review what we saw instead
        self.standings = update.standings
        self.deadline_at = None
        self.next_deal_at = now + update.next_deal if update.next_deal is not None else None

    def _match_ended(self, update: MatchEnded, _now: float) -> None:
        self.standings = update.standings
        self.match_over = True
        self.deadline_at = self.next_deal_at = None
        self.say("")  # the message line tells the match's end (``render.match_news``)
        self._aside(LogLine(LogKind.INFO, "the match is over"))

    def _left(self, _update: TableLeft, _now: float) -> None:
        """Everything about the table goes; how the player likes the hand sorted and the
        state of the connection stay."""
        fresh = TableState(sort_by_rank=self.sort_by_rank, link=self.link, banner=self.banner,
                           closed=self.closed, has_lobby=self.has_lobby, lost_at=self.lost_at)
        for each in fields(self):
            setattr(self, each.name, getattr(fresh, each.name))

    def _chat(self, update: ChatReceived, _now: float) -> None:
        if update.n is not None:
            key = (update.n, update.name, update.text)
            if update.earlier and key in self.heard:
                return  # told again on coming back: on the screen already
            self.heard.add(key)
        # a spectator's line says so: the players would look for the name among the seats
        name = update.name if update.seat is not None else say("chat.watching", name=update.name)
        self._aside(LogLine(LogKind.CHAT, f"{name}: {update.text}", update.seat))

    def _seats(self, update: SeatsChanged, now: float) -> None:
        before = self.seats
        self.seats = seats_from(update.seats, now)
        if update.deadline is not None:
            self.deadline_at = now + update.deadline
        if update.change is not None:
            self._seat_changed(update.change, before)

    def _refused(self, update: ServerRefused, _now: float) -> None:
        if update.code == ErrorCode.BAD_JOIN_CODE:  # what to do instead, within one line
            self.say(f"{update.message}: {JOIN_CODE_HINT}", error=True)
            return
        self.say(f"server refused: {update.message} ({update.code})", error=True)

    def _named(self, update: TableNamed, _now: float) -> None:
        self.table_name = update.name
        self.table_private = update.private
        self.match_hands = update.match_hands
        self.table = update.table or self.table
        self.seat = update.seat
        if update.hands_played is not None and self.view is not None:
            over = self.view.result is not None
            self.hands_seen = update.hands_played + (0 if over else 1)

    def _notice(self, update: Notice, _now: float) -> None:
        self.say(update.text)
        self._aside(LogLine(LogKind.INFO, update.text, this_hand=update.this_hand))

    def _listed(self, update: TablesListed, _now: float) -> None:
        if self.lobby is not None and update.tables is None:
            self.say("")
        self.lobby = update.tables

    def _connection(self, update: ConnectionChanged, now: float) -> None:
        """The banner says a lost link while it lasts; the log says it was lost once it is
        back (a server started again, a Wi-Fi out of reach): the banner is gone by then. A
        blip of less than a second is no news (a resume that missed nothing leaves the screen
        as it was)."""
        self.link = update.status
        if update.status is LinkStatus.CONNECTED:
            away = round(now - self.lost_at) if self.lost_at is not None else 0
            if away >= 1:
                self._aside(LogLine(LogKind.SEAT, say("link.back", count=away)))
            self.lost_at = None
            self.banner = None
            self.say("")
        elif update.status is LinkStatus.LOST:
            self.lost_at = now - update.silent if self.lost_at is None else self.lost_at
            self.banner = "connection lost, reconnecting (your seat is kept)… " + update.detail
        else:
            self.banner = "disconnected: " + (update.detail or "the server is gone")
            self.closed = True

    def _moved_on(self, before: Sequence[Step], view: SeatView) -> None:
        """The message line describes the present: a note about an earlier moment (``sent:``,
        a refusal of a move since replaced by one of ours) goes once the hand moves on; the
        server playing for us when our time ran out is said until the next message."""
        new = view.history[len(before):]
        if not new:
            return
        ours = [i for i, step in enumerate(new, len(before)) if step.seat == view.seat]
        if ours:
            # Named until the turn ends: a meld or a lay-off after the draw keeps it (unless
            # it is the card that left the hand).
            drawn = self._just_drawn(view)
            kept = self.drawn in view.hand and view.to_act == view.seat
            self.drawn = drawn if drawn is not None else (self.drawn if kept else None)
        auto = [i for i in ours if view.history[i].timeout]
        if view.seat is not None and auto:
            # The whole turn the server played (its steps may arrive one state at a time).
            first = auto[-1]
            while first > 0 and view.history[first - 1].seat == view.seat and \
                    view.history[first - 1].timeout:
                first -= 1
            auto = list(range(first, auto[-1] + 1))
            lines = event_lines(view.history, [YOU] * 3)
            played = ", ".join(lines[i].text.removeprefix(f"{YOU} ").removesuffix(AUTOPLAYED)
                               for i in auto)
            self.say(say("turn.timed_out", moves=played), error=True)
        elif self.confirming_quit or self.confirming_leave:
            pass  # the question asked stays until it is answered
        elif not self.message_is_error or ours or self._turn_came(view):
            # A refusal stays to be read, but not past the start of our turn: "not your turn:
            # Bob is to play" would then say the opposite of the title.
            self.say("")

    def _turn_came(self, view: SeatView) -> bool:
        """Whether ``view`` hands us the turn, which the view before it did not."""
        old = self.view
        return view.seat is not None and view.to_act == view.seat and (
            old is None or old.to_act != view.seat)

    def _just_drawn(self, view: SeatView) -> Card | None:
        """The card our last step drew (the one card new in our hand), if that step was a
        draw: the server's history says only that a card was drawn."""
        old = self.view
        last = view.history[-1] if view.history else None
        if old is None or last is None or last.seat != view.seat or \
                last.move.action is not Action.DRAW:
            return None
        new = set(view.hand) - set(old.hand)
        return new.pop() if len(new) == 1 else None

    def _aside(self, line: LogLine) -> None:
        self.asides.append((len(self.view.history) if self.view is not None else 0, line))

    def _seat_changed(self, change: SeatChangeMap, before: Sequence[SeatInfo]) -> None:
        """A log line for what happened to another seat; our own comings and goings show in
        the banner instead."""
        seat, named = change["seat"], change["change"]
        if not 0 <= seat < 3 or named not in SEAT_CHANGES:
            return
        what = SeatChange(named)
        if self.view is not None and self.view.seat == seat:
            return
        name = (before[seat] if what is SeatChange.LEFT else self.seats[seat]).name
        if what is SeatChange.BACK:
            self.back_at[seat] = len(self.view.history) if self.view is not None else 0
        elif what in (SeatChange.AWAY, SeatChange.LEFT, SeatChange.STAND_IN):
            self.back_at.pop(seat, None)
        self._aside(LogLine(LogKind.SEAT, SEAT_CHANGES[what].format(name=name), seat))

    def is_back(self, seat: int) -> bool:
        """The seat's human came back and has not acted since."""
        at = self.back_at.get(seat)
        if at is None:
            return False
        history = self.view.history if self.view is not None else ()
        return all(step.seat != seat for step in history[at:])

    def log(self) -> list[LogLine]:
        """Public events of this hand, interleaved with the lines heard between them."""
        view = self.view
        events = event_lines(view.history, self.told_names) if view is not None else []
        out: list[LogLine] = []
        chat = sorted(self.asides, key=lambda item: item[0])
        ci = 0
        for i, line in enumerate(events):
            while ci < len(chat) and chat[ci][0] <= i:
                out.append(chat[ci][1])
                ci += 1
            out.append(line)
        out.extend(line for _, line in chat[ci:])
        return out


#: ``TableState.apply``: the handler of each kind of update.
_APPLY: dict[type[Any], Callable[[TableState, Any, float], None]] = {
    StateUpdate: TableState._state,
    HandOver: TableState._hand_over,
    MatchEnded: TableState._match_ended,
    ChatReceived: TableState._chat,
    SeatsChanged: TableState._seats,
    ServerRefused: TableState._refused,
    TableNamed: TableState._named,
    Notice: TableState._notice,
    TablesListed: TableState._listed,
    ConnectionChanged: TableState._connection,
    TableLeft: TableState._left,
}

#: The log line for each ``change`` of a ``seat_update`` (the phrasebook's ``seat.`` words).
SEAT_CHANGES = {change: PHRASES[f"seat.{change.value}"] for change in SeatChange}

#: The reader's own seat in the log's lines (``TableState.told_names``), as the page names it.
YOU = "You"

#: Added to the log line of a move the server played because the seat's time ran out.
AUTOPLAYED = PHRASES["event.timeout"]


def event_lines(history: Sequence[Step], names: Sequence[str]) -> list[LogLine]:
    """One line per public action, in the words of the table: who drew, picked, melded…; a
    move the server played for a seat whose time ran out says so."""
    told = _Told()
    out: list[LogLine] = []
    for step in history:
        who = names[step.seat] if 0 <= step.seat < len(names) else "?"
        text = _NARRATE[step.move.action](told, who, step)
        if step.timeout:  # protocol 1.1: the server played it, the timer ran out
            text += AUTOPLAYED
        out.append(LogLine(LogKind.EVENT, text, step.seat))
    return out


@dataclass(slots=True)
class _Told:
    """What ``event_lines`` keeps while it reads a history: the discard pile (as shown) and
    the number the next meld laid will have."""

    pile: list[str] = field(default_factory=list)
    melds: int = 0

    def next_meld(self) -> int:
        self.melds += 1
        return self.melds - 1


def _cards(step: Step) -> str:
    return " ".join(c.pretty() for c in step.move.cards)


def _verb(_told: _Told, who: str, step: Step) -> str:
    text = say(f"event.{step.move.action.value}", who=who)
    return text + PHRASES["event.not_opened"] if step.auto else text


def _pick(told: _Told, who: str, step: Step) -> str:
    top = told.pile.pop() if told.pile else "?"
    if step.move.meld is not None:
        return say("event.pick_onto", who=who, top=top, meld=step.move.meld)
    return say("event.pick", who=who, top=top, cards=_cards(step), meld=told.next_meld())


def _meld(told: _Told, who: str, step: Step) -> str:
    return say("event.meld", who=who, cards=_cards(step), meld=told.next_meld())


def _secret(told: _Told, who: str, step: Step) -> str:
    meld = told.next_meld()
    if step.move.cards:
        return say("event.secret_shown", who=who, meld=meld, cards=_cards(step))
    return say("event.secret", who=who, meld=meld)


def _sapaw(_told: _Told, who: str, step: Step) -> str:
    return say("event.sapaw", who=who, card=_pretty(step.move.card), meld=step.move.meld)


def _discard(told: _Told, who: str, step: Step) -> str:
    told.pile.append(_pretty(step.move.card))
    return say("event.discard", who=who, card=told.pile[-1])


#: ``event_lines``: the words for each action (every one has its own).
_NARRATE: dict[Action, Callable[[_Told, str, Step], str]] = {
    Action.DRAW: _verb,
    Action.CALL: _verb,
    Action.CHALLENGE: _verb,
    Action.FOLD: _verb,
    Action.PICK: _pick,
    Action.MELD: _meld,
    Action.SECRET: _secret,
    Action.SAPAW: _sapaw,
    Action.DISCARD: _discard,
}


def pile_throwers(history: Sequence[Step]) -> list[int | None]:
    """Who threw each card of the discard pile, bottom to top (a pick takes the top one)."""
    pile: list[int | None] = []
    for step in history:
        action = step.move.action
        if action is Action.DISCARD:
            pile.append(step.seat)
        elif action is Action.PICK and pile:
            pile.pop()
    return pile


def _pretty(card: Card | None) -> str:
    return "?" if card is None else card.pretty()
