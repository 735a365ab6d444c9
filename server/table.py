"""One table's state as a replay of its log: no I/O, no clock, no connections.

Every change is an *entry* (a plain map) passed to ``TableLogState.apply``; nothing else mutates
the state, so ``TableLogState.replay(entries)`` rebuilds a table exactly (the match seed is in the
``create`` entry and every deck follows from it). The entries, in order of use:

* ``{"kind": "create", "table", "name", "options", "timer", "private", "code", "seed",
  "auto_start", "hands"?, "target"?}`` — ``hands``/``target``: the match's ``MatchLength``
* ``{"kind": "sit", "seat", "name", "player": "human" | "bot", "token_hash"?, "policy"?,
  "program"?}`` — ``program``: a human seat held by a client that said it is a bot
* ``{"kind": "vacate", "seat"}`` — before the match: the seat is empty again
* ``{"kind": "stand_in", "seat", "policy", "returnable"?}`` — during the match a bot takes a
  human's seat; ``returnable`` (the human was away past the grace period) keeps the seat's token
  so that the human can take the seat back
* ``{"kind": "back", "seat"}`` — the human of a returnable stand-in seat is back
* ``{"kind": "start", "deck"?, "dealer"?}`` — the match begins and the first hand is dealt
* ``{"kind": "move", "seat", "move", "timeout"?}`` — one action of the current hand
* ``{"kind": "deal", "deck"?, "dealer"?}`` — the next hand of the match is dealt (from the given
  deck and dealer at the arena's tables, ``server/arena.py``)

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
from typing import Any

from tongits.engine import Hand, Match, MatchLength, Move, Options

from .journal import Entry

SEATS = (0, 1, 2)


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
    player: str
    token_hash: str | None = None
    policy: str | None = None
    stand_in: bool = False
    timeouts: int = 0
    program: bool = False

    @property
    def is_bot(self) -> bool:
        return self.player == "bot"


class TableLogState:
    """Seats, tokens, the match and the current hand of one table."""

    def __init__(self, create: Entry) -> None:
        if create.get("kind") != "create":
            raise ValueError("a table's log starts with its create entry")
        self.id: str = create["table"]
        self.name: str = create["name"]
        self.options = Options.from_dict(create.get("options"))
        self.timer: float = float(create.get("timer") or 0)
        self.private: bool = bool(create.get("private"))
        self.code: str | None = create.get("code")
        self.seed: int | str = create["seed"]
        self.auto_start: bool = bool(create.get("auto_start", True))
        self.length = MatchLength(create.get("hands"), create.get("target"))
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

    def standings(self) -> dict[str, Any]:
        """The match so far: hands played, chips per seat, wins, pot and next dealer."""
        match = self.match
        names = [s.name if s else None for s in self.seats]
        if match is None:
            return {"hands": 0, "chips": [0, 0, 0], "wins": [0, 0, 0], "pot": 0, "names": names}
        return {
            "hands": match.hands_played,
            "chips": list(match.ledger),
            "wins": list(match.wins),
            "pot": match.pot,
            "pot_taken": self.pot_taken,
            "dealer": match.dealer,
            "names": names,
        }

    # ----- the one mutator ------------------------------------------------------------------

    def apply(self, entry: Entry, move: Move | None = None) -> None:
        """Apply one entry. A caller that already holds a move entry's ``Move`` passes it as
        ``move`` (it must be ``Move.from_dict(entry["move"])``), which spares reading it again."""
        kind = entry["kind"]
        if kind == "move":
            self._move(entry, move)
        elif kind == "sit":
            self.seats[entry["seat"]] = Seat(
                entry["name"], entry["player"], entry.get("token_hash"), entry.get("policy"),
                program=bool(entry.get("program")),
            )
        elif kind == "vacate":
            self.seats[entry["seat"]] = None
        elif kind == "stand_in":
            seat = self.seats[entry["seat"]]
            assert seat is not None
            seat.player, seat.policy, seat.stand_in = "bot", entry.get("policy"), True
            if not entry.get("returnable"):
                seat.token_hash = None
        elif kind == "back":
            seat = self.seats[entry["seat"]]
            assert seat is not None and seat.token_hash is not None
            seat.player, seat.policy, seat.stand_in = "human", None, False
        elif kind == "start":
            self.match = Match(self.options, self.seed)
            self._dealt(self._next_hand(entry))
        elif kind == "deal":
            assert self.match is not None
            self.pot_taken = 0
            self._dealt(self._next_hand(entry))
        else:
            raise ValueError(f"unknown table entry {kind!r}")
        self.entries += 1

    def _next_hand(self, entry: Entry) -> Hand:
        """The match's next hand; a ``deck`` in the entry (the arena's duplicate deals, given to
        its table in-process: no request can put one there) replaces the match's own."""
        assert self.match is not None
        if "deck" in entry:
            return Hand(entry["deck"], entry["dealer"], self.options)
        return self.match.deal()

    def _dealt(self, hand: Hand) -> None:
        self.hand = hand
        self.seq += 1
        self.state_seq = self.hand_seq = self.seq
        self.step_at = [len(hand.steps)]
        self.autoplayed = []

    def _move(self, entry: Entry, move: Move | None) -> None:
        hand = self.hand
        assert hand is not None and self.match is not None
        seat_index: int = entry["seat"]
        step = len(hand.steps)
        hand.apply(seat_index, move if move is not None else Move.from_dict(entry["move"]))
        seat = self.seats[seat_index]
        if entry.get("timeout"):
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
