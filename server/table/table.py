"""One table's state as a replay of its log: no I/O, no clock, no connections.

Every change is an *entry* (``entries.py``: one typed value per kind) passed to
``TableLogState.apply``; nothing else mutates the state, so ``TableLogState.replay(entries)``
rebuilds a table exactly (the match seed is in the ``CreateEntry`` and every deck follows from
it).

The sequence numbers of the messages a table sends follow from the log too: ``start``, ``deal``
and ``move`` each make one ``state`` (``state_seq``), and a move that ends the hand one
``hand_result`` after it, so ``seq`` and ``step_at`` are the same after a restart.

Validation belongs to the caller (``actor.Table``): ``apply`` trusts entries it is given, except
that the engine still refuses an illegal move, before anything changes (the server relies on
that: a player's move is checked there, once).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from tongits.engine import Hand, Match, MatchLength
from tongits.protocol import PlayerKind
from tongits.protocol.maps import StandingsMap, standings_map

from .entries import (
    BackEntry,
    CreateEntry,
    DealEntry,
    Entry,
    MoveEntry,
    SitEntry,
    StandInEntry,
    StartEntry,
    VacateEntry,
)

SEATS = (0, 1, 2)
#: ``PlayerKind.BOT`` as a module global (an ``Enum`` class's attribute is looked up through
#: a hook of ``EnumType``'s, ~800 instructions; ``is_bot`` is asked at every action).
_BOT = PlayerKind.BOT


def token_digest(token: str) -> str:
    """What the table keeps of a seat token: a SHA-256 digest, never the token itself."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token() -> str:
    """A seat token: 192 random bits, URL-safe."""
    return secrets.token_urlsafe(24)


@dataclass(slots=True)
class Seat:
    """Who sits in a seat. ``token_hash`` is set for humans; ``policy`` for bots.
    ``stand_in`` marks a bot playing out the match for a human who left. ``program`` marks a
    seat played over the wire by a client that said ``kind: "bot"``: the server treats it as a
    human's (it waits for its moves), everyone is shown a bot."""

    name: str
    player: PlayerKind
    token_hash: str | None = None
    policy: str | None = None
    stand_in: bool = False
    timeouts: int = 0
    program: bool = False

    @property
    def is_bot(self) -> bool:
        return self.player is _BOT


class TableLogState:
    """Seats, tokens, the match and the current hand of one table."""

    def __init__(self, create: Entry) -> None:
        if not isinstance(create, CreateEntry):
            raise ValueError("a table's log starts with its create entry")
        self.id = create.table
        self.name = create.name
        self.options = create.options
        self.timer = create.timer
        self.private = create.private
        self.code = create.code
        self.seed = create.seed
        self.auto_start = create.auto_start
        self.length = MatchLength(create.hands, create.target)
        self.seats: list[Seat | None] = [None, None, None]
        self.match: Match | None = None
        self.hand: Hand | None = None
        self.pot_taken = 0
        self.entries = 1
        self.seq = 0
        self.state_seq = 0
        #: ``step_at[i]``: the steps of the current hand when its state ``hand_seq + i`` was sent
        self.hand_seq = 0
        self.step_at: list[int] = []
        #: the steps of the current hand the server played for a timed-out seat
        self.autoplayed: list[int] = []

    @classmethod
    def replay(cls, entries: list[Entry]) -> TableLogState:
        """The table rebuilt from its whole log."""
        state = cls(entries[0])
        for entry in entries[1:]:
            state.apply(entry)
        return state

    # ----- queries -------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self.match is not None

    @property
    def full(self) -> bool:
        return all(s is not None for s in self.seats)

    @property
    def hand_over(self) -> bool:
        return self.hand is not None and self.hand.over

    @property
    def match_over(self) -> str | None:
        """Why the match has ended (``MatchLength.over``), or None."""
        if self.match is None or not self.hand_over:
            return None
        return self.length.over(self.match)

    @property
    def hand_number(self) -> int:
        """The current hand's number in the match, from 1 (0 before the match)."""
        if self.match is None:
            return 0
        return self.match.hands_played + (0 if self.hand_over else 1)

    def seat_names(self) -> list[str]:
        """The name in each seat (``""``: empty), as hand records carry them."""
        return [s.name if s else "" for s in self.seats]

    def free_seats(self) -> list[int]:
        return [i for i in SEATS if self.seats[i] is None]

    def seat_of_token(self, token: str) -> int | None:
        """The seat whose token this is, compared in constant time against every seat."""
        digest = token_digest(token)
        found = None
        for i in SEATS:
            seat = self.seats[i]
            stored = seat.token_hash if seat is not None and seat.token_hash else ""
            if hmac.compare_digest(stored, digest) and stored:
                found = i
        return found

    def steps_since(self, seq: int | None) -> int:
        """How many steps of the current hand a client that saw state ``seq`` already knows
        (0 if ``seq`` is unknown or from an earlier hand)."""
        if seq is None or self.hand is None:
            return 0
        offset = seq - self.hand_seq
        if 0 <= offset < len(self.step_at):
            return self.step_at[offset]
        if offset >= len(self.step_at) and seq <= self.seq:
            return len(self.hand.steps)
        return 0

    def standings(self) -> StandingsMap:
        """The match so far: hands played, chips per seat, wins, pot and next dealer."""
        names = [s.name if s else None for s in self.seats]
        return standings_map(self.match, names, self.pot_taken)

    # ----- the one mutator ------------------------------------------------------------------

    def apply(self, entry: Entry) -> None:
        """Apply one entry (a ``CreateEntry`` only starts a log: ``ValueError``)."""
        match entry:
            case MoveEntry():
                self._move(entry)
            case SitEntry():
                self.seats[entry.seat] = Seat(entry.name, entry.player, entry.token_hash,
                                              entry.policy, program=entry.program)
            case VacateEntry():
                self.seats[entry.seat] = None
            case StandInEntry():
                seat = self.seats[entry.seat]
                assert seat is not None
                seat.player, seat.policy, seat.stand_in = PlayerKind.BOT, entry.policy, True
                if not entry.returnable:
                    seat.token_hash = None
            case BackEntry():
                seat = self.seats[entry.seat]
                assert seat is not None and seat.token_hash is not None
                seat.player, seat.policy, seat.stand_in = PlayerKind.HUMAN, None, False
            case StartEntry():
                self.match = Match(self.options, self.seed)
                self._dealt(self._next_hand(entry))
            case DealEntry():
                assert self.match is not None
                self.pot_taken = 0
                self._dealt(self._next_hand(entry))
            case CreateEntry():
                raise ValueError(f"a second create entry in the log of table {self.id}")
        self.entries += 1

    def _next_hand(self, entry: StartEntry | DealEntry) -> Hand:
        """The match's next hand; a ``deck`` in the entry (the arena's duplicate deals, given to
        its table in-process: no request can put one there) replaces the match's own."""
        assert self.match is not None
        if entry.deck is not None:
            assert entry.dealer is not None
            return Hand(entry.deck, entry.dealer, self.options)
        return self.match.deal()

    def _dealt(self, hand: Hand) -> None:
        self.hand = hand
        self.seq += 1
        self.state_seq = self.hand_seq = self.seq
        self.step_at = [len(hand.steps)]
        self.autoplayed = []

    def _move(self, entry: MoveEntry) -> None:
        hand = self.hand
        assert hand is not None and self.match is not None
        seat_index = entry.seat
        step = len(hand.steps)
        hand.apply(seat_index, entry.move)
        seat = self.seats[seat_index]
        if entry.timeout:
            self.autoplayed.append(step)
            if seat is not None:
                seat.timeouts += 1
        self.seq += 1
        self.state_seq = self.seq
        self.step_at.append(len(hand.steps))
        if hand.over:
            self.seq += 1
            assert hand.result is not None
            self.pot_taken = self.match.settle(hand.result)
