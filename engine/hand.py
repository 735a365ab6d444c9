"""One hand of Tongits as a deterministic state machine (RULES.md §2-§9).

A hand is a pure function of ``(options, dealer, deck order)`` and the moves applied to it.
``legal_moves`` is the single source of truth: ``apply`` accepts exactly the moves it lists and
raises ``IllegalMove`` with a machine code for anything else (``why_illegal`` says which).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import repeat
from operator import is_
from typing import Any

from .cards import BITS, Card, mask_of, rank_suit_key
from .count import count_mask, pick_partners, points_of
from .errors import IllegalMove, InvalidMove, RecordCode, RecordError, RuleCode
from .melds import TableMeld, meld_kind
from .moves import (
    ACTION_VALUES,
    CALL,
    CHALLENGE,
    DRAW,
    FOLD,
    PICK_MOVES,
    PICK_SAPAW_MOVES,
    RANK_SET_MELDS,
    SAPAW_MOVES,
    SUIT_DISCARDS,
    SUIT_RUN_MELDS,
    Action,
    Move,
)
from .options import CallTie, Options, SapawBlock, StockoutNoneOpen
from .settlement import Counted, Settlement, Why, items_of, settle
from .wire import ResultMap, StepMap

DEALT = 37  # deck positions dealt to the seats; the other 15 are the stock (§3)


class Phase(StrEnum):
    START = "start"  # may call, draw or pick
    PLAY = "play"  # meld, secret, sapaw, then discard
    ANSWER = "answer"  # challenge or fold a call
    OVER = "over"


class End(StrEnum):
    TONGITS = "tongits"
    CALL = "call"
    STOCK = "stock"
    VOID = "void"


# Enum members as module constants: the hot paths below read them many times per move, and a
# module global is several times cheaper than an enum class attribute.
_START, _PLAY, _ANSWER, _OVER = Phase.START, Phase.PLAY, Phase.ANSWER, Phase.OVER
#: The winner's base terms (module names: an enum member read from its class, or hashed,
#: costs a Python call in 3.11, at every hand's end of every search).
_WIN, _TONGITS_WIN, _CHALLENGED_CALL = Why.WIN, Why.TONGITS, Why.CHALLENGED_CALL
_END_TONGITS, _END_CALL = End.TONGITS, End.CALL
_DRAW, _PICK, _MELD, _SECRET, _SAPAW = (
    Action.DRAW,
    Action.PICK,
    Action.MELD,
    Action.SECRET,
    Action.SAPAW,
)
_DISCARD, _CALL, _CHALLENGE, _FOLD = Action.DISCARD, Action.CALL, Action.CHALLENGE, Action.FOLD
#: The legal moves of the states that have no others.
_ONLY_DRAW, _CALL_DRAW, _ANSWERS = (DRAW,), (CALL, DRAW), (CHALLENGE, FOLD)
#: Those tuples: ``Hand.legal`` returns these very objects (they live as long as the engine), so
#: a reader that works something out of a state's legal moves may keep it for them by ``id``.
SHARED_LEGAL = (_ONLY_DRAW, _CALL_DRAW, _ANSWERS)
_NEXT_TURN = SapawBlock.NEXT_TURN
#: another seat's secret meld as a history shows it before the hand is over: no cards (§11)
HIDDEN_SECRET = Move(_SECRET)


@dataclass(frozen=True, slots=True)
class Result:
    """How a hand ended, in the form of the hand record's ``result``."""

    end: End
    winner: int | None
    counts: tuple[int, int, int]
    burned: tuple[int, ...]
    challengers: tuple[int, ...]
    chips: tuple[int, int, int]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        return cls(
            End(data["end"]),
            data["winner"],
            tuple(data["counts"]),
            tuple(data["burned"]),
            tuple(data["challengers"]),
            tuple(data["chips"]),
        )

    def to_dict(self) -> ResultMap:
        return {
            "end": self.end.value,
            "winner": self.winner,
            "counts": list(self.counts),
            "burned": list(self.burned),
            "challengers": list(self.challengers),
            "chips": list(self.chips),
        }


@dataclass(frozen=True, slots=True)
class Step:
    """A move as it happened: an entry of ``Hand.steps`` and of a seat's ``SeatView.history``.
    ``auto`` marks the folds of seats that had not opened: they are public events but not part
    of the hand record. ``timeout`` marks a move the server played for a seat whose time ran
    out (the server's mark, wire protocol 1.1: the engine never sets it). In a history, another
    seat's secret meld has no cards until the hand is over."""

    seat: int
    move: Move
    auto: bool = False
    timeout: bool = False

    def to_dict(self) -> StepMap:
        """The wire form of a history step: the hand-record action with its ``seat``, and
        ``auto``/``timeout`` when set."""
        out: StepMap = {"seat": self.seat, "action": ACTION_VALUES[self.move.action]}
        self.move.add_operands(out)
        if self.auto:
            out["auto"] = True
        if self.timeout:
            out["timeout"] = True
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Step:
        """Read a history step of a view received over the wire; ``InvalidMove`` if it is
        malformed. A secret meld without cards is another seat's, whose cards are hidden."""
        if not isinstance(data, dict):
            raise InvalidMove(RuleCode.BAD_MOVE, "a history step must be an object")
        seat = data.get("seat")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < 3:
            raise InvalidMove(RuleCode.BAD_MOVE, f"a step's seat is 0, 1 or 2, not {seat!r}")
        if data.get("action") == _SECRET and not data.get("cards"):
            move = HIDDEN_SECRET
        else:
            move = Move.from_dict(data)
        return cls(seat, move, bool(data.get("auto")), bool(data.get("timeout")))

    def hidden(self) -> Step:
        """This step as the other seats see it before the hand is over: a secret meld shows no
        cards (§11); any other step is shown as it is."""
        if self.move.action is not _SECRET:
            return self
        return Step(self.seat, HIDDEN_SECRET, self.auto, self.timeout)


def check_deck(deck: Sequence[Any]) -> tuple[Card, ...]:
    """The deck as cards, or ``RecordError(bad_deck)`` unless it is all 52 cards once each."""
    if len(deck) == 52 and set(map(type, deck)) == _CARD_TYPE and len(set(deck)) == 52:
        return tuple(deck)  # 52 distinct ``Card``s (every hand of a search or arena starts so)
    if len(deck) != 52:
        raise RecordError(RecordCode.BAD_DECK, f"a deck has 52 cards, not {len(deck)}")
    try:
        cards = tuple(c if isinstance(c, Card) else Card.parse(c) for c in deck)
    except InvalidMove as exc:
        raise RecordError(RecordCode.BAD_DECK, f"deck: {exc.message}") from None
    if len(set(cards)) != 52:
        seen: set[Card] = set()
        dup = next(c for c in cards if c in seen or seen.add(c))  # type: ignore[func-returns-value]
        raise RecordError(RecordCode.BAD_DECK, f"the deck holds {dup} twice")
    return cards


_CARD_TYPE = {Card}
#: The classic rules, for a hand made without options (options are frozen values).
_CLASSIC = Options()
_PLACES = frozenset((_MELD, _SECRET))


def _malformed(move: Move) -> IllegalMove | None:
    """A move whose fields do not fit its action: a missing card or meld id, a field the action
    does not take, or a card named twice."""
    action = move.action
    cards, card, meld = move.cards, move.card, move.meld
    if action is _DISCARD:
        ok = card is not None and not cards and meld is None
    elif action is _SAPAW:
        ok = card is not None and meld is not None and not cards
    elif action is _MELD or action is _SECRET:
        ok = card is None and meld is None
    elif action is _PICK:
        ok = card is None and not (cards and meld is not None)
    else:
        ok = card is None and meld is None and not cards
    if not ok:
        return IllegalMove(
            RuleCode.MALFORMED_MOVE, f"{action}: these fields do not fit: {move.to_dict()}"
        )
    if len(cards) > 1 and len(set(cards)) != len(cards):
        return IllegalMove(RuleCode.DUPLICATE_CARD, f"{move}: a card is named twice")
    return None


#: Per seat, its steps of the shared moves (``moves.py``) by the move's id (each step holds its
#: move, so that no other move takes that id while it is here): a step is a frozen value, and
#: a hand of a search or an arena adds one per move.
_STEPS: tuple[dict[int, Step], dict[int, Step], dict[int, Step]] = ({}, {}, {})
_STEPS_MAX = 20_000


def _step(seat: int, move: Move) -> Step:
    """``Step(seat, move)``, kept in ``_STEPS`` (cleared when it holds ``_STEPS_MAX``)."""
    memo = _STEPS[seat]
    if len(memo) >= _STEPS_MAX:
        memo.clear()
    step = memo[id(move)] = Step(seat, move)
    return step


#: Each seat's automatic fold (a seat that had not opened when a call came, §6.2).
_AUTO_FOLDS = tuple(Step(seat, FOLD, auto=True) for seat in range(3))


def _accepted_by(melds: Iterable[TableMeld]) -> int:
    """The cards that some meld of ``melds`` would take now (a bitmask)."""
    accept = 0
    for meld in melds:
        accept |= meld.accept_mask
    return accept


def _lowest(contenders: Sequence[int], counts: Sequence[int]) -> int:
    """The contender with the lowest count; ties go to the first in ``contenders``."""
    return min(contenders, key=lambda s: (counts[s], contenders.index(s)))


class Hand:
    """The state of one hand. Mutable, but changed only through ``apply``."""

    def __init__(self, deck: Sequence[Card | str], dealer: int, options: Options | None = None):
        if dealer not in (0, 1, 2):
            raise RecordError(
                RecordCode.BAD_DEALER, f"dealer must be seat 0, 1 or 2, not {dealer!r}"
            )
        self.options = options or _CLASSIC
        self.dealer = dealer
        self.deck = check_deck(deck)
        #: one card each in turn from the dealer: seat ``s`` gets the deck's positions
        #: ``i < DEALT`` with ``(dealer + i) % 3 == s``
        dealt = [self.deck[(seat - dealer) % 3 : DEALT : 3] for seat in range(3)]
        self.hands: list[set[Card]] = [set(cards) for cards in dealt]
        #: each seat's cards as a bitmask too, kept beside ``hands`` by every change: legal
        #: moves and counts work on masks, and summing a hand's bits anew costs more
        self._masks = [sum(map(BITS.__getitem__, cards)) for cards in dealt]
        self.stock: list[Card] = list(reversed(self.deck[DEALT:]))  # top of the stock is last
        self.discards: list[Card] = []  # top of the pile is last
        self.melds: list[TableMeld] = []
        #: how many of ``melds`` are secret (a reader of the history at every step asks
        #: whether a step must be hidden from a seat)
        self.secret_melds = 0
        #: the cards that some meld on the table would take now (a bitmask), kept beside the
        #: melds by every change: legal moves ask it at every turn
        self._accept = 0
        self.to_act = dealer
        self.phase = _PLAY  # the dealer's first turn has no start and no acquire step
        self.turn = 0
        self.steps: list[Step] = []
        self.caller: int | None = None
        self.answers: dict[int, Action] = {}
        self.result: Result | None = None
        #: once the hand is over, what its chips were counted from (``settlement``)
        self._counted: Counted | None = None
        #: which seats have opened, and which may not call for a lay-off onto their melds
        #: (``opened``, ``call_blocked`` of each seat): tuples replaced when one changes, so
        #: that a reader at every step (a view) takes them as they are
        self.opened_seats: tuple[bool, bool, bool] = (False, False, False)
        self.blocked_seats: tuple[bool, bool, bool] = (False, False, False)
        self._block_turn: list[int | None] = [None, None, None]
        #: the moves so far that placed a meld or added to one (a reader of the melds knows
        #: from it whether what it read of them is out of date)
        self.meld_changes = 0
        self._legal: tuple[Move, ...] | None = None

    @classmethod
    def restore(
        cls,
        *,
        options: Options,
        dealer: int,
        hands: Sequence[Iterable[Card]],
        stock: Sequence[Card],
        discards: Sequence[Card],
        melds: Sequence[TableMeld],
        to_act: int,
        phase: Phase,
        turn: int,
        caller: int | None = None,
        answers: dict[int, Action] | None = None,
        opened: Sequence[bool] = (False, False, False),
        blocked: Sequence[bool] = (False, False, False),
        block_turns: Sequence[int | None] | None = None,
    ) -> Hand:
        """A hand in the given state, without the moves that led there: a position to ask
        questions of (``why_illegal``, ``legal_moves``, ``count``) or to try a seat's moves on.

        It has no deck order and no steps, so it makes no hand record. ``stock`` lists the
        stock bottom first; a ``blocked`` seat was laid off onto before this turn. Whoever
        knows the turn of each seat's blocking lay-off (None: not blocked) gives
        ``block_turns`` instead, so that each block ends exactly when play would end it."""
        hand = cls.__new__(cls)
        hand.options, hand.dealer, hand.deck = options, dealer, ()
        hand.hands = [set(h) for h in hands]
        hand._masks = [mask_of(h) for h in hand.hands]
        hand.stock = list(stock)
        hand.discards = list(discards)
        hand.melds = list(melds)
        hand.secret_melds = sum(m.secret for m in hand.melds)
        hand._accept = _accepted_by(hand.melds)
        hand.to_act, hand.phase, hand.turn = to_act, phase, turn
        hand.steps = []
        hand.caller = caller
        hand.answers = dict(answers or {})
        hand.result, hand._counted = None, None
        hand.opened_seats = (bool(opened[0]), bool(opened[1]), bool(opened[2]))
        hand._block_turn = (list(block_turns) if block_turns is not None
                            else [turn - 1 if b else None for b in blocked])
        hand._blocks_changed()
        hand.meld_changes = 0
        hand._legal = None
        return hand

    def copy(self) -> Hand:
        """An independent copy of this state (for search: try a move, look, throw it away)."""
        other = Hand.__new__(Hand)
        other.options, other.dealer, other.deck = self.options, self.dealer, self.deck
        other.hands = [set(h) for h in self.hands]
        other._masks = list(self._masks)
        other.stock = list(self.stock)
        other.discards = list(self.discards)
        other.melds = [m.copy() for m in self.melds]
        other.secret_melds = self.secret_melds
        other._accept = self._accept
        other.to_act, other.phase, other.turn = self.to_act, self.phase, self.turn
        other.steps = list(self.steps)
        other.caller = self.caller
        other.answers = dict(self.answers)
        other.result, other._counted = self.result, self._counted
        other.opened_seats, other.blocked_seats = self.opened_seats, self.blocked_seats
        other._block_turn = list(self._block_turn)
        other.meld_changes = self.meld_changes
        other._legal = self._legal
        return other

    # ----- what a seat may know or do -------------------------------------------------------

    @property
    def settlement(self) -> Settlement:
        """Once the hand is over, why each seat won or paid its chips (``result.chips`` are
        the sums; the hand record keeps only those); nothing before."""
        return items_of(self._counted)

    @property
    def over(self) -> bool:
        return self.phase is _OVER

    def opened(self, seat: int) -> bool:
        """A seat has opened once it owns a meld, face up or secret (§4)."""
        return self.opened_seats[seat]

    def cards_mask(self, seat: int) -> int:
        """The seat's cards as a bitmask (card ``i`` is bit ``i``), read, not computed."""
        return self._masks[seat]

    def call_blocked(self, seat: int) -> bool:
        """Whether a lay-off onto this seat's melds stops it calling now (§5)."""
        return self.blocked_seats[seat]

    def can_lay_off(self, card: Card) -> bool:
        return bool(self._accept >> card & 1)

    def legal_moves(self, seat: int | None = None) -> list[Move]:
        """Every legal move of the seat to act (or of ``seat``: none unless it is to act).

        Generated directly from the rules; ``why_illegal`` (the check ``apply`` uses) accepts
        exactly these moves, which the property tests verify. The order is: ``call``, ``draw``,
        picks; or melds (each four of a kind followed by its ``secret``), lay-offs, discards;
        or ``challenge``, ``fold``. The moves are worked out once per state."""
        if seat is not None and seat != self.to_act:
            return []
        cached = self._legal
        return list(cached if cached is not None else self._list_legal())

    def legal(self, seat: int | None = None) -> tuple[Move, ...]:
        """``legal_moves`` as the tuple the hand keeps for this state, not a copy: for a reader
        that asks at every step (a view, a training environment)."""
        if seat is not None and seat != self.to_act:
            return ()
        cached = self._legal
        return cached if cached is not None else self._list_legal()

    def _list_legal(self) -> tuple[Move, ...]:
        phase = self.phase
        if phase is _PLAY:
            moves = self._play_moves(self.to_act)
        elif phase is _START:
            moves = self._start_moves(self.to_act)
        elif phase is _ANSWER:
            moves = _ANSWERS
        else:
            moves = ()
        self._legal = moves
        return moves

    def _start_moves(self, seat: int) -> tuple[Move, ...]:
        may_call = self.opened_seats[seat] and not self.blocked_seats[seat]
        first = _CALL_DRAW if may_call else _ONLY_DRAW
        discards = self.discards
        if not discards:
            return first
        top = discards[-1]
        hand = self._masks[seat]
        options = self.options
        partners = pick_partners(hand, top)
        if partners and options.tongits_needs_discard:
            size = hand.bit_count()
            partners = tuple([used for used in partners if used.bit_count() < size])
        if options.pick_to_sapaw:
            return (*first, *map(PICK_MOVES.__getitem__, partners),
                    *[PICK_SAPAW_MOVES[m.id] for m in self.melds if m.accept_mask >> top & 1])
        return (*first, *map(PICK_MOVES.__getitem__, partners)) if partners else first

    def _play_moves(self, seat: int) -> tuple[Move, ...]:
        hand = self._masks[seat]
        # the hand by suit (13-bit masks): its runs and its discards are per-suit look-ups
        c, d, h, s = hand & 0x1FFF, hand >> 13 & 0x1FFF, hand >> 26 & 0x1FFF, hand >> 39
        runs_c, runs_d, runs_h, runs_s = SUIT_RUN_MELDS
        moves = [*runs_c[c], *runs_d[d], *runs_h[h], *runs_s[s]]
        threes = (c & d & (h | s)) | ((c | d) & h & s)  # ranks of which 3 or 4 cards are here
        while threes:
            low = threes & -threes
            threes ^= low
            rank = low.bit_length() - 1
            moves += RANK_SET_MELDS[rank << 4 | c >> rank & 1 | (d >> rank & 1) << 1
                                    | (h >> rank & 1) << 2 | (s >> rank & 1) << 3]
        options = self.options
        limit = hand.bit_count() + 1
        if options.tongits_needs_discard:
            limit -= 1
            if moves:
                moves = [move for move in moves if len(move.cards) < limit]
        layable = hand & self._accept
        if layable:
            if limit > 1:
                melds = self.melds
                rest = layable
                while rest:  # (plain loops: a comprehension per card costs more here)
                    low = rest & -rest
                    rest ^= low
                    card = low.bit_length() - 1
                    for meld in melds:
                        if meld.accept_mask & low:
                            moves.append(SAPAW_MOVES[card, meld.id])
            if options.no_sapawable_discard and layable != hand:
                hand &= ~layable
                c, d, h, s = hand & 0x1FFF, hand >> 13 & 0x1FFF, hand >> 26 & 0x1FFF, hand >> 39
        clubs, diamonds, hearts, spades = SUIT_DISCARDS
        return (*moves, *clubs[c], *diamonds[d], *hearts[h], *spades[s])

    def why_illegal(self, seat: int, move: Move) -> IllegalMove | None:
        """``None`` if ``move`` is legal for ``seat`` now, else the error ``apply`` would raise."""
        if self.phase is _OVER:
            return IllegalMove(RuleCode.HAND_OVER, f"{move.action}: the hand is over")
        if seat != self.to_act:
            return IllegalMove(
                RuleCode.NOT_YOUR_TURN, f"seat {self.to_act} is to act, not seat {seat}"
            )
        action = move.action
        plain = not move.cards and move.meld is None
        if plain and self.phase is _PLAY and action is _DISCARD:
            card = move.card
            if card is not None:  # the most common move, checked first
                return self._discard_violation(seat, card)
        if plain and self.phase is _START and action is _DRAW and move.card is None:
            return None
        malformed = _malformed(move)
        if malformed is not None:
            return malformed
        if self.phase is _PLAY:
            return self._play_phase_violation(seat, move)
        if self.phase is _ANSWER:
            if action is _CHALLENGE or action is _FOLD:
                return None
            return IllegalMove(
                RuleCode.MUST_ANSWER, f"{action}: seat {seat} must challenge or fold the call"
            )
        return self._start_phase_violation(seat, move)

    def _play_phase_violation(self, seat: int, move: Move) -> IllegalMove | None:
        """``why_illegal`` after the seat drew or picked (a well-formed move)."""
        action = move.action
        if action is _DISCARD or action is _SAPAW or action in _PLACES:
            return self._play_violation(seat, move)
        if action is _CALL:
            if self.turn == 0:
                return IllegalMove(
                    RuleCode.DEALER_FIRST_TURN, "call: not on the dealer's first turn"
                )
            return IllegalMove(RuleCode.CALL_AT_START, "call: only at the start of a turn")
        if action is _DRAW or action is _PICK:
            if self.turn == 0:
                return IllegalMove(
                    RuleCode.DEALER_FIRST_TURN, f"{action}: the dealer's first turn has none"
                )
            return IllegalMove(
                RuleCode.ALREADY_ACQUIRED, f"{action}: already drawn or picked this turn"
            )
        return IllegalMove(RuleCode.NO_CALL, f"{action}: there is no call to answer")

    def _start_phase_violation(self, seat: int, move: Move) -> IllegalMove | None:
        """``why_illegal`` at the start of the seat's turn (a well-formed move)."""
        action = move.action
        if action is _DRAW:
            return None
        if action is _CALL:
            return self._call_violation(seat)
        if action is _PICK:
            return self._pick_violation(seat, move)
        if action is _CHALLENGE or action is _FOLD:
            return IllegalMove(RuleCode.NO_CALL, f"{action}: there is no call to answer")
        return IllegalMove(RuleCode.MUST_ACQUIRE, f"{action}: draw or pick first")

    def _call_violation(self, seat: int) -> IllegalMove | None:
        if not self.opened_seats[seat]:
            return IllegalMove(RuleCode.NOT_OPENED, f"call: seat {seat} has no meld on the table")
        if self.call_blocked(seat):
            return IllegalMove(RuleCode.CALL_BLOCKED, f"call: seat {seat} is blocked by a sapaw")
        return None

    def _meld_by_id(self, meld_id: int | None) -> TableMeld | IllegalMove:
        if meld_id is None or not 0 <= meld_id < len(self.melds):
            return IllegalMove(RuleCode.NO_SUCH_MELD, f"there is no meld {meld_id}")
        return self.melds[meld_id]

    def _missing(self, seat: int, cards: Iterable[Card]) -> IllegalMove | None:
        hand = self.hands[seat]
        for c in cards:
            if c not in hand:
                return IllegalMove(RuleCode.CARD_NOT_IN_HAND, f"{c} is not in seat {seat}'s hand")
        return None

    def _would_empty(self, seat: int, used: int) -> IllegalMove | None:
        if self.options.tongits_needs_discard and used >= len(self.hands[seat]):
            return IllegalMove(
                RuleCode.MUST_KEEP_CARD, "tongits_needs_discard: the last card must be discarded"
            )
        return None

    def _pick_violation(self, seat: int, move: Move) -> IllegalMove | None:
        if not self.discards:
            return IllegalMove(RuleCode.EMPTY_DISCARD, "pick: the discard pile is empty")
        top = self.discards[-1]
        if move.meld is not None:
            if not self.options.pick_to_sapaw:
                return IllegalMove(
                    RuleCode.PICK_NEEDS_MELD, "pick: the discard only goes to a new meld"
                )
            meld = self._meld_by_id(move.meld)
            if isinstance(meld, IllegalMove):
                return meld
            if not meld.accept_mask >> top & 1:
                return IllegalMove(
                    RuleCode.CANNOT_SAPAW, f"pick: {top} does not fit meld {meld.id}"
                )
            return None
        missing = self._missing(seat, move.cards)
        if missing:
            return missing
        if len(move.cards) < 2 or meld_kind((*move.cards, top)) is None:
            shown = " ".join(str(c) for c in (*move.cards, top))
            return IllegalMove(RuleCode.PICK_NEEDS_MELD, f"pick: {shown} is not a meld")
        return self._would_empty(seat, len(move.cards))

    def _discard_violation(self, seat: int, card: Card) -> IllegalMove | None:
        if card not in self.hands[seat]:
            return IllegalMove(RuleCode.CARD_NOT_IN_HAND, f"{card} is not in seat {seat}'s hand")
        if self.options.no_sapawable_discard:
            accepting = self._accept
            if accepting >> card & 1 and mask_of(self.hands[seat]) & ~accepting:
                return IllegalMove(RuleCode.SAPAWABLE_DISCARD, f"discard: {card} could be laid off")
        return None

    def _play_violation(self, seat: int, move: Move) -> IllegalMove | None:
        action = move.action
        if action is _DISCARD:
            assert move.card is not None
            return self._discard_violation(seat, move.card)
        if action is _SAPAW:
            assert move.card is not None
            missing = self._missing(seat, (move.card,))
            if missing:
                return missing
            meld = self._meld_by_id(move.meld)
            if isinstance(meld, IllegalMove):
                return meld
            if not meld.accept_mask >> move.card & 1:
                why = "a secret meld" if meld.secret else "it would not stay a meld"
                return IllegalMove(
                    RuleCode.CANNOT_SAPAW, f"sapaw: {move.card} onto meld {meld.id}: {why}"
                )
            return self._would_empty(seat, 1)
        missing = self._missing(seat, move.cards)
        if missing:
            return missing
        shown = " ".join(str(c) for c in move.cards)
        if action is _SECRET:
            if len(move.cards) != 4 or len({c.rank for c in move.cards}) != 1:
                return IllegalMove(
                    RuleCode.NOT_FOUR_OF_A_KIND, f"secret: {shown} is not four of a kind"
                )
        elif meld_kind(move.cards) is None:
            return IllegalMove(RuleCode.NOT_A_MELD, f"meld: {shown} is not a meld")
        return self._would_empty(seat, len(move.cards))

    # ----- changing the state ---------------------------------------------------------------

    def apply(self, seat: int, move: Move) -> None:
        """Apply a legal move of ``seat``, or raise ``IllegalMove`` and change nothing.

        A move that is one of the objects ``legal_moves`` listed for this state (a bot's or
        the search's choice, nearly always) is legal without the checks of ``why_illegal``,
        which accepts exactly those moves."""
        legal = self._legal
        if legal is None or seat != self.to_act or not any(map(is_, legal, repeat(move))):
            error = self.why_illegal(seat, move)
            if error is not None:
                raise error
        self.apply_legal(seat, move)

    def apply_legal(self, seat: int, move: Move) -> None:
        """``apply`` without the check, for search rollouts that play millions of moves: the
        caller guarantees ``move`` is legal for ``seat`` now (an illegal one corrupts the
        state). Everything else must use ``apply``."""
        self._legal = None
        step = _STEPS[seat].get(id(move))
        if step is None or step.move is not move:
            step = _step(seat, move)
        self.steps.append(step)
        action = move.action
        hand = self.hands[seat]
        if action is _DISCARD:  # the moves of nearly every turn first
            card = move.card
            assert card is not None
            hand.discard(card)
            self._masks[seat] ^= BITS[card]
            self.discards.append(card)
            if hand:
                self._end_turn(seat)
        elif action is _DRAW:
            card = self.stock.pop()
            hand.add(card)
            self._masks[seat] |= BITS[card]
            self.phase = _PLAY
        elif action is _PICK:
            self._pick(seat, move)
        elif action in (_MELD, _SECRET):
            self._place(seat, move.cards, move.cards, secret=action is _SECRET)
        elif action is _SAPAW:
            assert move.card is not None and move.meld is not None
            hand.discard(move.card)
            self._masks[seat] ^= BITS[move.card]
            self._lay_off(seat, move.card, move.meld)
        else:
            self._answer(seat, action)
        if not hand and self.phase is not _OVER:
            self._finish(End.TONGITS, seat)

    def _pick(self, seat: int, move: Move) -> None:
        top = self.discards.pop()
        self.phase = _PLAY
        if move.meld is not None:
            self._lay_off(seat, top, move.meld)
        else:
            self._place(seat, (*move.cards, top), move.cards, secret=False)

    def _answer(self, seat: int, action: Action) -> None:
        """A call, or a challenge or fold of one: the next seat to answer, or the showdown."""
        if action is _CALL:
            self.caller = seat
            self.phase = _ANSWER
        else:
            self.answers[seat] = action
        self._next_answer(seat)

    def _place(
        self, seat: int, cards: Sequence[Card], from_hand: Sequence[Card], *, secret: bool
    ) -> None:
        self.hands[seat].difference_update(from_hand)
        self._masks[seat] &= ~mask_of(from_hand)
        ordered = sorted(cards, key=rank_suit_key)
        meld = TableMeld(len(self.melds), seat, ordered, secret)
        self.melds.append(meld)
        self.secret_melds += secret
        self._accept |= meld.accept_mask
        self.meld_changes += 1
        if not self.opened_seats[seat]:
            opened = self.opened_seats
            self.opened_seats = (opened[0] or seat == 0, opened[1] or seat == 1,
                                 opened[2] or seat == 2)

    def _lay_off(self, seat: int, card: Card, meld_id: int) -> None:
        meld = self.melds[meld_id]
        meld.add(card, seat)
        self._accept = _accepted_by(self.melds)
        self.meld_changes += 1
        if meld.owner != seat or self.options.self_sapaw_blocks_call:
            self._block_turn[meld.owner] = self.turn
            self._blocks_changed()

    def _blocks_changed(self) -> None:
        """``blocked_seats`` after a change of ``_block_turn``."""
        block = self._block_turn
        self.blocked_seats = (block[0] is not None, block[1] is not None, block[2] is not None)

    def _end_turn(self, seat: int) -> None:
        block = self._block_turn[seat]
        if block is not None and block < self.turn and self.options.sapaw_block is _NEXT_TURN:
            self._block_turn[seat] = None
            self._blocks_changed()
        if not self.stock:
            self._stock_out(seat)
            return
        self.turn += 1
        self.to_act = (seat + 1) % 3
        self.phase = _START

    def _next_answer(self, after: int) -> None:
        """Move the answer to the next seat after ``after`` (in turn order from the caller) that
        has opened; the others fold automatically. With no one left, settle the call."""
        assert self.caller is not None
        seat = (after + 1) % 3
        while seat != self.caller:
            if self.opened_seats[seat]:
                self.to_act = seat
                return
            self.answers[seat] = _FOLD
            self.steps.append(_AUTO_FOLDS[seat])
            seat = (seat + 1) % 3
        self._resolve_call()

    def _resolve_call(self) -> None:
        caller = self.caller
        assert caller is not None
        order = [(caller + 1) % 3, (caller + 2) % 3]
        challengers = [s for s in order if self.answers.get(s) is _CHALLENGE]
        if self.options.call_tie is CallTie.CHALLENGER:
            contenders = [*challengers, caller]
        else:
            contenders = [caller, *challengers]
        counts = self._counts()
        self._finish(End.CALL, _lowest(contenders, counts), counts, tuple(challengers))

    def _stock_out(self, last_drawer: int) -> None:
        order = [last_drawer, (last_drawer + 1) % 3, (last_drawer + 2) % 3]
        contenders = [s for s in order if self.opened_seats[s]]
        if not contenders:
            if self.options.stockout_none_open is StockoutNoneOpen.VOID:
                self._finish(End.VOID, None)
                return
            contenders = order
        counts = self._counts()
        self._finish(End.STOCK, _lowest(contenders, counts), counts)

    def count(self, seat: int) -> int:
        """The seat's hand count (§7) as it would be scored now."""
        if self.options.concealed_melds_count:
            return points_of(self._masks[seat])
        return count_mask(self._masks[seat])

    def _counts(self) -> tuple[int, int, int]:
        return (self.count(0), self.count(1), self.count(2))

    def _finish(
        self,
        end: End,
        winner: int | None,
        counts: tuple[int, int, int] | None = None,
        challengers: tuple[int, ...] = (),
    ) -> None:
        if counts is None:
            counts = self._counts()
        burned = tuple(s for s in range(3) if not self.opened_seats[s] and s != winner)
        big_win = (_TONGITS_WIN if end is _END_TONGITS else
                   _CHALLENGED_CALL if challengers and end is _END_CALL else _WIN)
        chips, self._counted = settle(
            self.options,
            big_win=big_win,
            winner=winner,
            caller=self.caller,
            challenged=bool(challengers),
            burned=burned,
            hands=self.hands,
            melds=self.melds,
        )
        self.result = Result(end, winner, counts, burned, challengers, chips)
        self.phase = _OVER
