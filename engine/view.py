"""What one seat may know (RULES.md §11), decided in one class from the seat argument alone.

``seat_view(hand, seat)`` is what the server sends a seat, what a server-side bot decides from and
what a remote bot receives (``SeatView.from_dict``); ``seat=None`` is a spectator. Until the hand
ends nobody sees another seat's cards, the stock, or a secret meld's rank; afterwards all is
revealed. Each field of a view is decided by ``LiveView``, which reads it from the live hand when
asked (a training environment's view, read every step); ``seat_view`` is its value at one state.

The wire form of a view (``to_dict``, ``seat_view_dict``) has no ``legal``: a seat's legal moves
travel once per ``state``, beside the view (``state.legal``, ``seat_legal``), and
``SeatView.from_dict`` takes them back from there.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .cards import DECK, Card, mask_of
from .count import count_mask, hand_count, points_of
from .errors import IllegalMove, RuleCode
from .hand import Hand, Phase, Result, Step
from .melds import TableMeld, fits
from .moves import Action, Move
from .options import Options
from .wire import (
    MeldMap,
    MoveMap,
    ResultMap,
    StepMap,
    ViewBase,
    ViewFixed,
    ViewMap,
    ViewOwn,
    ViewShared,
    ViewSharedWhole,
)

#: ``glance``'s answer: the seat's cards as a bitmask, the history from a step on, the hand
#: sizes, the stock, the phase, the seats blocked from calling and the caller.
Glance = tuple[int, tuple[Step, ...], tuple[int, int, int], int, Phase, tuple[bool, bool, bool],
               int | None]


@dataclass(frozen=True, slots=True)
class MeldView:
    """A meld as a seat sees it; a secret meld of another seat shows no cards until the end."""

    id: int
    owner: int
    cards: tuple[Card, ...]
    secret: bool = False
    laid_off: tuple[tuple[Card, int], ...] = ()

    def accepts(self, card: Card) -> bool:
        return not self.secret and fits(self.cards, card)

    def to_dict(self) -> MeldMap:
        return meld_map(self.id, self.owner, self.secret,
                        [str(c) for c in self.cards] if self.cards else None,
                        {str(c): s for c, s in self.laid_off})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MeldView:
        cards = tuple(Card.parse(c) for c in data.get("cards") or ())
        laid = tuple((Card.parse(c), s) for c, s in (data.get("laid_off") or {}).items())
        return cls(data["id"], data["owner"], cards, bool(data.get("secret")), laid)


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything a seat (or a spectator, ``seat is None``) may know about a hand."""

    seat: int | None
    dealer: int
    options: Options
    hand: tuple[Card, ...]
    hand_sizes: tuple[int, int, int]
    stock: int
    discards: tuple[Card, ...]
    melds: tuple[MeldView, ...]
    opened: tuple[bool, bool, bool]
    blocked: tuple[bool, bool, bool]
    to_act: int | None
    phase: Phase
    turn: int
    caller: int | None
    history: tuple[Step, ...]
    legal: tuple[Move, ...]
    result: Result | None = None
    revealed: tuple[tuple[Card, ...], ...] | None = None

    def may_call(self, seat: int) -> bool:
        """Whether ``seat`` may call when its turn starts (§5): it has opened and no lay-off
        onto its melds blocks it. Public, so the client can word another seat's turn."""
        return self.opened[seat] and not self.blocked[seat]

    @property
    def my_turn(self) -> bool:
        return bool(self.legal)

    @property
    def top(self) -> Card | None:
        return self.discards[-1] if self.discards else None

    @property
    def cards_mask(self) -> int:
        """The seat's cards as a bitmask (card ``i`` is bit ``i``), as ``LiveView`` has it."""
        return mask_of(self.hand)

    def steps_since(self, start: int) -> tuple[Step, ...]:
        """The history from its step ``start`` on, as ``LiveView`` has it."""
        return self.history[start:]

    def glance(self, start: int) -> Glance:
        """What ``LiveView.glance`` reads, from this view's fields."""
        return (self.cards_mask, self.history[start:], self.hand_sizes, self.stock, self.phase,
                self.blocked, self.caller)

    # ----- what the engine answers from this seat's knowledge alone ---------------------------

    def why_illegal(self, move: Move) -> IllegalMove | None:
        """``None`` if this seat may play ``move`` now, else the ``IllegalMove`` that
        ``Hand.apply`` would raise on the real hand: the same code and the same order of checks,
        since the engine asks ``Hand.why_illegal`` of ``position()``. A spectator gets
        ``not_your_turn``. A player's legality depends only on what the seat knows (its cards,
        the table, the pile's top), which the property tests check over random hands."""
        if self.seat is None:
            return IllegalMove(RuleCode.NOT_YOUR_TURN, f"{move.action}: a spectator has no moves")
        return self.position().why_illegal(self.seat, move)

    def count(self, without: Iterable[Card] = ()) -> int:
        """The count (RULES.md §7) of this seat's hand less ``without``, under the table's
        options: with ``concealed_melds_count`` every card in hand counts."""
        gone = set(without)
        return hand_count(
            (c for c in self.hand if c not in gone),
            concealed_melds_count=self.options.concealed_melds_count,
        )

    def position(self) -> Hand:
        """A ``Hand`` consistent with everything this seat knows, to ask about its own moves or
        to try them on: its cards, the pile, the melds, turn, phase and call exactly; the other
        hands and the stock filled, in deck order, with cards this seat cannot place (so what
        it says about other seats' cards means nothing). A view whose meld ids are not
        0, 1, 2… is malformed: ``ValueError``."""
        if [m.id for m in self.melds] != list(range(len(self.melds))):
            raise ValueError("the view's meld ids are not 0, 1, 2…")
        seat = self.seat
        hands: list[set[Card]] = [set(), set(), set()]
        if seat is not None:
            hands[seat] = set(self.hand)
        seen = set(self.hand) | set(self.discards)
        for meld in self.melds:
            seen.update(meld.cards)
        pool = [c for c in DECK if c not in seen]
        for other in range(3):
            if other != seat:
                size = self.hand_sizes[other]
                hands[other], pool = set(pool[:size]), pool[size:]
        answers: dict[int, Action] = {}
        for step in self.history:
            action = step.move.action
            if action is Action.CALL:
                answers = {}
            elif action is Action.CHALLENGE or action is Action.FOLD:
                answers[step.seat] = action
        return Hand.restore(
            options=self.options,
            dealer=self.dealer,
            hands=hands,
            stock=pool[: self.stock],
            discards=self.discards,
            melds=[TableMeld(m.id, m.owner, list(m.cards), m.secret, dict(m.laid_off))
                   for m in self.melds],
            to_act=self.dealer if self.to_act is None else self.to_act,
            phase=self.phase,
            turn=self.turn,
            caller=self.caller,
            answers=answers,
            opened=self.opened,
            blocked=self.blocked,
        )

    def to_dict(self) -> ViewMap:
        base = view_base(
            hand_sizes=list(self.hand_sizes),
            stock=self.stock,
            discards=[str(c) for c in self.discards],
            opened=list(self.opened),
            blocked=list(self.blocked),
            to_act=self.to_act,
            phase=self.phase.value,
            turn=self.turn,
            caller=self.caller,
            result=self.result.to_dict() if self.result is not None else None,
            revealed=[[str(c) for c in h] for h in self.revealed]
            if self.revealed is not None else None,
        )
        return view_map(view_fixed(self.dealer, self.options.to_dict(omit_defaults=False)),
                        base, self.seat, [str(c) for c in self.hand],
                        None if self.seat is None else self.count(),
                        [m.to_dict() for m in self.melds],
                        [step.to_dict() for step in self.history])

    @classmethod
    def from_dict(cls, data: Mapping[str, Any],
                  legal: Iterable[Mapping[str, Any]] | None = None) -> SeatView:
        """Rebuild a view received over the wire (the inverse of ``to_dict``). ``legal`` is the
        ``state`` message's list of moves (absent when the seat may not act): the wire view
        does not carry them, so that each state lists them once."""

        def cards(items: Any) -> tuple[Card, ...]:
            return tuple(Card.parse(c) for c in items or ())

        result = data.get("result")
        revealed = data.get("revealed")
        return cls(
            seat=data.get("seat"),
            dealer=data["dealer"],
            options=Options.from_dict(data.get("options")),
            hand=cards(data.get("hand")),
            hand_sizes=tuple(data["hand_sizes"]),
            stock=data["stock"],
            discards=cards(data.get("discards")),
            melds=tuple(MeldView.from_dict(m) for m in data.get("melds") or ()),
            opened=tuple(data["opened"]),
            blocked=tuple(data["blocked"]),
            to_act=data.get("to_act"),
            phase=Phase(data["phase"]),
            turn=data.get("turn", 0),
            caller=data.get("caller"),
            history=tuple(_wire_step(step) for step in data.get("history") or ()),
            legal=tuple(Move.from_dict(m) for m in legal or ()),
            result=Result.from_dict(result) if result else None,
            revealed=tuple(cards(h) for h in revealed) if revealed else None,
        )


def seat_view(hand: Hand, seat: int | None) -> SeatView:
    """The view of ``seat`` (``None``: a spectator). Everything is taken from ``seat``, never from
    the seat to act, so a view built for a waiting seat holds only that seat's knowledge."""
    return LiveView(hand, seat).now()


class LiveView:
    """``seat``'s view of ``hand`` while the hand is played: every field of ``SeatView``, by the
    same name, read from the hand when it is asked for. This is where each field of a view is
    decided (``seat_view`` is ``now()``), so at every moment a field says what
    ``seat_view(hand, seat)`` would.

    For a reader that wants a few fields at every step of many hands (a training environment
    observes a seat once a step): nothing is built that is not read, and the melds' views are
    kept until a step changes the melds. Two fields more for such a reader: ``cards_mask``
    (the seat's cards as a bitmask) and ``steps_since(n)`` (the history from step ``n`` on);
    and ``glance(n)``, the fields such a reader reads at every step, in one call. ``SeatView``
    has all three as well, so that one reader takes either."""

    __slots__ = ("_hand", "seat", "dealer", "options", "_melds")

    def __init__(self, hand: Hand, seat: int | None) -> None:
        self._hand = hand
        self.seat = seat
        self.dealer = hand.dealer
        self.options = hand.options
        #: the melds' views, and the hand's ``meld_changes`` and end of hand they were made at
        self._melds: tuple[int, bool, tuple[MeldView, ...]] | None = None

    def now(self) -> SeatView:
        """The view as it is now, as a value that stays."""
        return SeatView(
            seat=self.seat,
            dealer=self.dealer,
            options=self.options,
            hand=self.hand,
            hand_sizes=self.hand_sizes,
            stock=self.stock,
            discards=self.discards,
            melds=self.melds,
            opened=self.opened,
            blocked=self.blocked,
            to_act=self.to_act,
            phase=self.phase,
            turn=self.turn,
            caller=self.caller,
            history=self.history,
            legal=self.legal,
            result=self.result,
            revealed=self.revealed,
        )

    @property
    def hand(self) -> tuple[Card, ...]:
        seat = self.seat
        return tuple(sorted(self._hand.hands[seat])) if seat is not None else ()

    @property
    def cards_mask(self) -> int:
        """The seat's cards as a bitmask (card ``i`` is bit ``i``); 0 for a spectator."""
        seat = self.seat
        return self._hand.cards_mask(seat) if seat is not None else 0

    @property
    def hand_sizes(self) -> tuple[int, int, int]:
        hands = self._hand.hands
        return (len(hands[0]), len(hands[1]), len(hands[2]))

    @property
    def stock(self) -> int:
        return len(self._hand.stock)

    @property
    def discards(self) -> tuple[Card, ...]:
        return tuple(self._hand.discards)

    @property
    def top(self) -> Card | None:
        discards = self._hand.discards
        return discards[-1] if discards else None

    @property
    def melds(self) -> tuple[MeldView, ...]:
        """The melds as the seat sees them: a secret meld of another seat without its cards
        until the hand is over (§11). The same tuple until a step places a meld or adds to one,
        or the hand ends."""
        hand = self._hand
        changes, over = hand.meld_changes, hand.phase is _OVER
        known = self._melds
        if known is not None and known[0] == changes and known[1] == over:
            return known[2]
        seat = self.seat
        melds = tuple([_meld_view(m, _sees_meld(m.secret, m.owner, seat, over))
                       for m in hand.melds])
        self._melds = (changes, over, melds)
        return melds

    @property
    def opened(self) -> tuple[bool, bool, bool]:
        return self._hand.opened_seats

    @property
    def blocked(self) -> tuple[bool, bool, bool]:
        return self._hand.blocked_seats

    @property
    def to_act(self) -> int | None:
        hand = self._hand
        return None if hand.over else hand.to_act

    @property
    def phase(self) -> Phase:
        return self._hand.phase

    @property
    def turn(self) -> int:
        return self._hand.turn

    @property
    def caller(self) -> int | None:
        return self._hand.caller

    @property
    def history(self) -> tuple[Step, ...]:
        return self.steps_since(0)

    def steps_since(self, start: int) -> tuple[Step, ...]:
        """The history from its step ``start`` on, as the seat sees it now: until the hand is
        over, another seat's secret meld shows no cards (``Step.hidden``)."""
        hand = self._hand
        steps = hand.steps[start:]
        if hand.secret_melds and hand.phase is not _OVER:
            seat = self.seat
            return tuple([step if step.seat == seat else step.hidden() for step in steps])
        return tuple(steps)

    def glance(self, start: int) -> Glance:
        """``cards_mask``, ``steps_since(start)``, ``hand_sizes``, ``stock``, ``phase``,
        ``blocked`` and ``caller``, in that order: what a reader at every step (a training
        environment's observation) reads each time, in one call rather than seven."""
        hand = self._hand
        seat, hands = self.seat, hand.hands
        # (``steps_since`` itself only when a secret meld may hide a step: a call fewer a step)
        return (hand.cards_mask(seat) if seat is not None else 0,
                self.steps_since(start) if hand.secret_melds else tuple(hand.steps[start:]),
                (len(hands[0]), len(hands[1]), len(hands[2])), len(hand.stock), hand.phase,
                hand.blocked_seats, hand.caller)

    @property
    def legal(self) -> tuple[Move, ...]:
        seat = self.seat
        return self._hand.legal(seat) if seat is not None else ()

    @property
    def result(self) -> Result | None:
        return self._hand.result

    @property
    def revealed(self) -> tuple[tuple[Card, ...], ...] | None:
        """Every seat's cards once the hand is over (None before)."""
        hand = self._hand
        return tuple(tuple(sorted(h)) for h in hand.hands) if hand.over else None


#: Bound on the memoized meld views (cleared when reached).
_MELD_VIEWS_MAX = 4096
#: Per meld on the table, by its id: the meld (so that no other takes that id while it is
#: here), its size, and its view with and without its cards. A meld changes only by growing
#: (``TableMeld.add``), so its size says which state the views are of.
_MELD_VIEWS: dict[int, tuple[TableMeld, int, MeldView, MeldView]] = {}


def _meld_view(meld: TableMeld, sees: bool) -> MeldView:
    """The view of ``meld``, with its cards if ``sees``; memoized: a meld stays the same for
    many states, and every view of them (a training environment builds one per step) would
    otherwise make its ``MeldView`` again."""
    known = _MELD_VIEWS.get(id(meld))
    if known is None or known[0] is not meld or known[1] != len(meld.cards):
        if len(_MELD_VIEWS) >= _MELD_VIEWS_MAX:
            _MELD_VIEWS.clear()
        laid_off = tuple(meld.laid_off.items())
        known = _MELD_VIEWS[id(meld)] = (
            meld, len(meld.cards),
            MeldView(meld.id, meld.owner, tuple(meld.cards), meld.secret, laid_off),
            MeldView(meld.id, meld.owner, (), meld.secret, laid_off),
        )
    return known[2] if sees else known[3]


def seat_view_dict(hand: Hand, seat: int | None) -> ViewMap:
    """``seat_view(hand, seat).to_dict()`` (no legal moves: ``seat_legal``), built from parts
    made once per state and shared by every seat's view of it (and the history, once per step
    for the whole hand).

    For a whole view at once (a resume, a ``sync``); the server's fan-out encodes the parts
    themselves (``view_parts``). The result shares its lists and maps with other views, so it
    must be treated as read-only. Tests check it equals ``seat_view(...).to_dict()`` for every
    seat of every state, so both show exactly the same knowledge."""
    parts = view_parts(hand)
    return view_map(parts.fixed, parts.base, seat, parts.cards(seat), parts.count(seat),
                    parts.melds_of(seat), parts.history_of(seat))


# ----- the builders of a view's map: the one place each of its entries is written ----------------
#
# A view's map is built from a ``SeatView`` (``SeatView.to_dict``: a remote bot's or a test's
# view) and from a hand's shared parts (``seat_view_dict`` and the server's fan-out, which
# encodes ``ViewParts`` without building whole maps); both build it through these, so the two
# cannot write different keys or shapes.


def view_fixed(dealer: int, options: dict[str, Any]) -> ViewFixed:
    """The entries of a view that stay the same for the whole hand; ``options`` is
    ``Options.to_dict(omit_defaults=False)``."""
    return {"dealer": dealer, "options": options}


def view_base(*, hand_sizes: list[int], stock: int, discards: list[str], opened: list[bool],
              blocked: list[bool], to_act: int | None, phase: str, turn: int,
              caller: int | None, result: ResultMap | None,
              revealed: list[list[str]] | None) -> ViewBase:
    """The entries every seat's view of one state has alike but ``melds`` and ``history``
    (``result`` and ``revealed`` only once the hand is over)."""
    base: ViewBase = {"hand_sizes": hand_sizes, "stock": stock, "discards": discards,
                      "opened": opened, "blocked": blocked, "to_act": to_act, "phase": phase,
                      "turn": turn, "caller": caller}
    if result is not None:
        base["result"] = result
    if revealed is not None:
        base["revealed"] = revealed
    return base


def view_map(fixed: ViewFixed, base: ViewBase, seat: int | None, cards: list[str],
             count: int | None, melds: list[MeldMap], history: list[StepMap]) -> ViewMap:
    """A whole view's map from its parts: ``cards`` are the seat's own (none for a spectator)
    and ``count`` their count (None for a spectator), ``melds`` and ``history`` as the seat
    sees them."""
    return {**fixed, **base, "seat": seat, "hand": cards, "count": count, "melds": melds,
            "history": history}


def meld_map(meld_id: int, owner: int, secret: bool, cards: list[str] | None,
             laid_off: dict[str, int]) -> MeldMap:
    """A meld's map: ``cards`` None when the seat may not see them (another seat's secret
    meld); ``laid_off`` (card: seat) only when some card was laid off onto it."""
    out: MeldMap = {"id": meld_id, "owner": owner, "secret": secret, "cards": cards}
    if laid_off:
        out["laid_off"] = laid_off
    return out


def seat_view_parts(hand: Hand, seat: int | None) -> tuple[ViewShared | ViewSharedWhole, ViewOwn]:
    """``seat_view_dict(hand, seat)`` as two maps with no key in common: the entries every
    seat's view of this state has alike (the same map for every seat, until the hand changes)
    and the seat's own. Both are read-only."""
    parts = view_parts(hand)
    own = parts.own(seat)
    if parts.history is None:
        own = {**own, "history": parts.history_of(seat)}
    return parts.shared, own


def seat_legal(hand: Hand, seat: int | None) -> list[MoveMap]:
    """The wire form of ``seat_view(hand, seat).legal`` (empty unless ``seat`` is to act), made
    once per state and shared: read-only. A ``state`` message carries it as ``legal``."""
    if seat is None or seat != hand.to_act or hand.over:
        return []
    return view_parts(hand).legal(hand)


def step_forms(hand: Hand) -> list[StepMap]:
    """Each step's ``Step.to_dict()`` so far, as its own seat (and everyone, after the hand)
    sees it: made once per step for the views and shared with them (read-only). The hand
    record's actions are these, less the ``auto`` folds."""
    return _views_of(hand).full


def view_parts(hand: Hand) -> ViewParts:
    """The wire form of every view of ``hand``'s current state, in parts made once per state
    and shared by all of them (read-only): the server encodes each part once per state, not
    once per recipient."""
    return _views_of(hand).parts(hand)


# ----- what the views of one hand share ---------------------------------------------------------

_CARD_STR: tuple[str, ...] = tuple(str(c) for c in DECK)
#: A card's wire form, for ``map``: the lists of a state's cards are made in C, not a loop.
_card_str = _CARD_STR.__getitem__
#: Each phase's wire form.
_PHASES: dict[Phase, str] = {phase: phase.value for phase in Phase}


class _SuitNames(dict[int, tuple[str, ...]]):
    """The wire forms of one suit's cards by their 13-bit mask, in rank order, each tuple made
    on first use (from the entry without its lowest card, most often there already): a
    seat's cards are listed from the hand's mask by four look-ups, in the order ``sorted``
    gives them (card index order), without sorting the cards."""

    def __init__(self, suit: int) -> None:
        super().__init__({0: ()})
        self.first = 13 * suit

    def __missing__(self, bits: int) -> tuple[str, ...]:
        low = bits & -bits
        names = self[bits] = (_CARD_STR[self.first + low.bit_length() - 1], *self[bits ^ low])
        return names


_CLUBS, _DIAMONDS, _HEARTS, _SPADES = (_SuitNames(suit) for suit in range(4))


def _mask_names(mask: int) -> list[str]:
    """The wire forms of the cards of ``mask``, sorted (as ``map(str, sorted(cards))``)."""
    return [*_CLUBS[mask & 0x1FFF], *_DIAMONDS[mask >> 13 & 0x1FFF],
            *_HEARTS[mask >> 26 & 0x1FFF], *_SPADES[mask >> 39]]


#: The seats, for ``map``.
_SEATS = (0, 1, 2)
#: A spectator's cards (shared, read-only).
_NO_CARDS: list[str] = []
_SECRET = Action.SECRET
_OVER = Phase.OVER
#: The moves that place a meld or add to one: the only ones that change the melds (a reader
#: of the history knows from it when the melds it read are out of date).
MELD_CHANGES = frozenset({Action.MELD, Action.SECRET, Action.PICK, Action.SAPAW})


def _sees_meld(secret: bool, owner: int, seat: int | None, over: bool) -> bool:
    """Whether ``seat`` sees the cards of a meld (§11): a secret meld only its owner, until
    the hand is over."""
    return not secret or over or owner == seat


#: Bound on the steps whose wire forms ``_step_forms`` keeps (cleared when reached).
_STEP_FORMS_MAX = 50_000
#: The wire forms of each step met, by the step's id, with the step (held, so that no other
#: object takes its id): the engine's steps are shared objects, one per seat and move.
_STEP_FORMS: dict[int, tuple[Step, StepMap, StepMap]] = {}


def _step_forms(step: Step) -> tuple[StepMap, StepMap]:
    """A step's wire form as everyone else sees it and as its own seat (and everyone, after
    the hand) sees it: they differ only for a secret meld, whose cards are for its owner.
    Made once per step and shared (read-only), as the moves' maps are (``_move_dict``)."""
    known = _STEP_FORMS.get(id(step))
    if known is None or known[0] is not step:
        if len(_STEP_FORMS) >= _STEP_FORMS_MAX:
            _STEP_FORMS.clear()
        full = step.to_dict()
        public = full if step.move.action is not _SECRET else step.hidden().to_dict()
        known = _STEP_FORMS[id(step)] = (step, public, full)
    return known[1], known[2]


class _HandViews:
    """Per hand, the parts of the views built once: each step's forms, as the history of each
    seat and of spectators, the melds' forms until a step changes them, each seat's cards
    until they change, and the parts of the latest state's wire form. A hand changes only
    through ``Hand.apply``, which always adds a step, so the number of steps identifies the
    state."""

    __slots__ = ("steps", "fixed", "full", "seen", "_meld_steps", "acted", "_melds",
                 "_meld_forms", "_cards", "_concealed", "_parts", "__weakref__")

    def __init__(self, hand: Hand) -> None:
        self.steps = 0
        #: the entries of every view that stay the same for the whole hand
        self.fixed = view_fixed(hand.dealer, _options_dict(hand.options))
        self.full: list[StepMap] = []
        #: the history of seats 0, 1, 2 and of a spectator (index 3) before the hand is over
        self.seen: tuple[list[StepMap], ...] = ([], [], [], [])
        #: the steps so far that placed a meld or added to one
        self._meld_steps = 0
        #: the melds' forms (``melds``), and the meld steps and end of hand they were made at
        self._melds: tuple[int, bool, _MeldForms] | None = None
        #: per meld id: its size and lay-offs when its forms were made, its full form and the
        #: form without cards
        self._meld_forms: list[tuple[int, int, MeldMap, MeldMap]] = []
        #: the steps each seat has played so far
        self.acted = [0, 0, 0]
        #: per seat: its steps played when its cards' wire form was made, that form and the
        #: cards' count (made when first asked)
        self._cards: list[tuple[int, list[str], list[int]] | None] = [None, None, None]
        self._concealed = hand.options.concealed_melds_count
        self._parts: ViewParts | None = None

    def _catch_up(self, hand: Hand) -> None:
        steps = hand.steps
        for step in steps[self.steps :]:
            public, full = _step_forms(step)
            self.full.append(full)
            for perspective, seen in enumerate(self.seen):
                seen.append(full if perspective == step.seat else public)
            if step.move.action in MELD_CHANGES:
                self._meld_steps += 1
            self.acted[step.seat] += 1
        self.steps = len(steps)

    def history(self, seat: int | None, over: bool) -> list[StepMap]:
        """The history as ``seat`` sees it (after ``_catch_up``). The list grows with the hand:
        copy it for a view of this state; its maps are shared and read-only."""
        if over:
            return self.full
        return self.seen[3 if seat is None else seat]

    def melds(self, hand: Hand) -> _MeldForms:
        """The melds' wire forms (after ``_catch_up``), made again only after a step that
        placed a meld or added to one, or at the end of the hand (which reveals them)."""
        over = hand.over
        known = self._melds
        if known is not None and known[:2] == (self._meld_steps, over):
            return known[2]
        full: list[MeldMap] = []
        public: list[tuple[MeldMap, int]] = []
        secret = False
        made = self._meld_forms
        form: MeldMap
        hidden: MeldMap
        for m in hand.melds:
            size, laid = len(m.cards), len(m.laid_off)
            if m.id < len(made) and made[m.id][:2] == (size, laid):
                form, hidden = made[m.id][2:]
            else:
                laid_off = {_CARD_STR[c]: s for c, s in m.laid_off.items()}
                form = meld_map(m.id, m.owner, m.secret, [_CARD_STR[c] for c in m.cards],
                                laid_off)
                hidden = meld_map(m.id, m.owner, m.secret, None, laid_off)
                if m.id < len(made):
                    made[m.id] = (size, laid, form, hidden)
                else:
                    made.append((size, laid, form, hidden))
            full.append(form)
            if _sees_meld(m.secret, m.owner, None, over):
                public.append((form, m.owner))
            else:
                public.append((hidden, m.owner))
                secret = True
        forms = _MeldForms(full, public, secret)
        self._melds = (self._meld_steps, over, forms)
        return forms

    def cards(self, mask: int, seat: int) -> list[str]:
        """The wire form of ``seat``'s cards, whose mask is ``mask`` (after ``_catch_up``),
        sorted: the same list until the seat plays a step (only its own moves change its
        cards)."""
        return self._known_cards(mask, seat)[1]

    def count(self, mask: int, seat: int) -> int:
        """The count (RULES.md §7) of ``seat``'s cards, whose mask is ``mask``, under the
        hand's options (``hand_count``), made once until the seat plays a step."""
        known = self._known_cards(mask, seat)
        if not known[2]:
            known[2].append(points_of(mask) if self._concealed else count_mask(mask))
        return known[2][0]

    def _known_cards(self, mask: int, seat: int) -> tuple[int, list[str], list[int]]:
        known = self._cards[seat]
        acted = self.acted[seat]
        if known is None or known[0] != acted:
            known = self._cards[seat] = (acted, _mask_names(mask), [])
        return known

    def parts(self, hand: Hand) -> ViewParts:
        parts = self._parts
        if parts is None or parts.steps != len(hand.steps):
            parts = self._parts = ViewParts(hand, self)
        return parts


class _MeldForms(NamedTuple):
    """The melds' wire forms: ``full`` as their owners see them (and everyone after the
    hand), ``public`` with each owner as the other seats see them (no cards of a secret
    meld), ``secret``: some meld shows no cards to some seat."""

    full: list[MeldMap]
    public: list[tuple[MeldMap, int]]
    secret: bool


class ViewParts:
    """The wire form of the views of one state, in parts shared by every view (``view_parts``):

    - ``fixed``: the entries every seat's view has alike for the whole hand (the same map in
      every state of the hand);
    - ``base``: the other entries every seat's view has alike but ``melds`` and ``history``;
    - ``melds`` and ``history``: the melds and the history every view has alike, or None
      while a secret meld is on the table (each seat's own: ``own``, ``history_of``); the
      same ``melds`` list in each state until a step places a meld or adds to one;
    - ``own(seat)``: the seat's own entries (``seat``, ``hand``, ``count``, and ``melds`` when
      they are its own), no key in common with the others; its ``hand`` is the same list in
      each state as long as the seat's cards are the same;
    - ``legal``: the legal moves of the seat to act (they travel beside the view).

    Everything is read-only, made at most once per state, and only good while the hand is in
    that state (``own`` reads the cards then)."""

    __slots__ = ("steps", "over", "acted", "fixed", "base", "melds", "history", "_views",
                 "_masks", "_melds",
                 "_own", "_own_melds", "_histories", "_shared", "_legal")

    def __init__(self, hand: Hand, views: _HandViews) -> None:
        over = self.over = hand.over
        self.steps = len(hand.steps)
        #: the steps each seat has played so far: its cards (``cards``, ``count``) are the same
        #: as in an earlier state of the hand as long as this is
        self.acted: tuple[int, ...] = tuple(views.acted)
        hands = hand.hands
        #: the views' parts are kept by the views (``_HandViews.parts``): a strong reference
        #: back would make each hand's views a cycle, garbage only a full collection frees;
        #: so they keep the seats' cards as masks, not the hand
        self._views = weakref.ref(views)
        masks = self._masks = tuple(map(hand.cards_mask, _SEATS))
        melds = self._melds = views.melds(hand)
        self.fixed = views.fixed
        result = hand.result
        self.base = view_base(
            hand_sizes=[len(hands[0]), len(hands[1]), len(hands[2])],
            stock=len(hand.stock),
            discards=list(map(_card_str, hand.discards)),
            opened=list(hand.opened_seats),
            blocked=list(hand.blocked_seats),
            to_act=None if over else hand.to_act,
            phase=_PHASES[hand.phase],
            turn=hand.turn,
            caller=hand.caller,
            result=result.to_dict() if result is not None else None,
            revealed=list(map(_mask_names, masks)) if over else None,
        )
        self.history: list[StepMap] | None = None
        self.melds: list[MeldMap] | None = None
        if not melds.secret:
            self.melds = melds.full
            self.history = list(views.history(None, over))
        self._own: dict[int | None, ViewOwn] = {}
        self._own_melds: dict[int | None, list[MeldMap]] = {}
        self._histories: dict[int | None, list[StepMap]] = {}
        self._shared: ViewShared | ViewSharedWhole | None = None
        self._legal: list[MoveMap] | None = None

    @property
    def own_count(self) -> int:
        """How many entries ``own`` has (the same for every seat)."""
        return 3 if self.history is not None else 4

    def own(self, seat: int | None) -> ViewOwn:
        own = self._own.get(seat)
        if own is None:
            own = {"seat": seat, "hand": self.cards(seat), "count": self.count(seat)}
            melds = self.own_melds(seat)
            if melds is not None:
                own["melds"] = melds
            self._own[seat] = own
        return own

    def cards(self, seat: int | None) -> list[str]:
        """``own(seat)["hand"]``: the same list as long as the seat's cards are the same."""
        if seat is None:
            return _NO_CARDS
        return self._live_views().cards(self._masks[seat], seat)

    def count(self, seat: int | None) -> int | None:
        """``own(seat)["count"]``: the count of the seat's cards (None for a spectator), made
        once per change of them."""
        if seat is None:
            return None
        return self._live_views().count(self._masks[seat], seat)

    def own_melds(self, seat: int | None) -> list[MeldMap] | None:
        """``own(seat)["melds"]`` (None when every view has the same ``melds``), made once per
        state."""
        if self.history is not None:
            return None
        melds = self._own_melds.get(seat)
        if melds is None:
            full = self._melds.full
            melds = self._own_melds[seat] = [full[i] if owner == seat else m
                                             for i, (m, owner) in enumerate(self._melds.public)]
        return melds

    def melds_of(self, seat: int | None) -> list[MeldMap]:
        """The melds as ``seat`` sees them: ``melds`` when every view has the same."""
        if self.melds is not None:
            return self.melds
        melds = self.own_melds(seat)
        assert melds is not None
        return melds

    def history_of(self, seat: int | None) -> list[StepMap]:
        """The history as ``seat`` sees it: ``history`` when every view has the same."""
        if self.history is not None:
            return self.history
        seen = self._histories.get(seat)
        if seen is None:
            seen = self._histories[seat] = list(self._live_views().history(seat, False))
        return seen

    def _live_views(self) -> _HandViews:
        views = self._views()
        assert views is not None, "a state's view parts are read while its hand lives"
        return views

    @property
    def shared(self) -> ViewShared | ViewSharedWhole:
        """``fixed`` and ``base`` with the ``history`` every view has alike (when they have):
        the part of ``seat_view_parts`` shared by all seats."""
        if self._shared is None:
            if self.melds is not None and self.history is not None:
                whole: ViewSharedWhole = {**self.fixed, **self.base, "melds": self.melds,
                                          "history": self.history}
                self._shared = whole
            else:
                alike: ViewShared = {**self.fixed, **self.base}
                self._shared = alike
        return self._shared

    def legal(self, hand: Hand) -> list[MoveMap]:
        if self._legal is None:
            self._legal = list(map(_move_dict, hand.legal()))
        return self._legal


#: Bound on the memoized move maps (the distinct moves seen; cleared when reached).
_MOVE_DICTS_MAX = 50_000
#: Move maps by the id of the move (the legal moves are shared objects, ``moves.py``), which
#: each entry holds, so that no other move takes its id.
_MOVE_DICTS: dict[int, tuple[Move, MoveMap]] = {}


def _move_dict(move: Move) -> MoveMap:
    """``move.to_dict()``, memoized and shared (read-only): the same discards, draws and
    lay-offs are legal state after state."""
    hit = _MOVE_DICTS.get(id(move))
    if hit is None or hit[0] is not move:
        if len(_MOVE_DICTS) >= _MOVE_DICTS_MAX:
            _MOVE_DICTS.clear()
        hit = _MOVE_DICTS[id(move)] = (move, move.to_dict())
    return hit[1]


#: Bound on the memoized history steps read from the wire (cleared when reached).
_STEPS_MAX = 50_000
_STEPS: dict[tuple[Any, ...], Step] = {}


def _wire_step(data: Any) -> Step:
    """``Step.from_dict(data)``, memoized: a view received over the wire repeats the whole
    hand's history, state after state, and a remote bot or the client decodes each one."""
    if not isinstance(data, dict) or type(data.get("seat")) is not int \
            or type(data.get("meld", 0)) is not int:  # (True == 1, but is no seat)
        return Step.from_dict(data)
    cards = data.get("cards")
    key = (data.get("seat"), data.get("action"), data.get("card"),
           tuple(cards) if isinstance(cards, list) else cards, data.get("meld"),
           data.get("auto"), data.get("timeout"))
    try:
        step = _STEPS.get(key)
    except TypeError:  # an unhashable field: malformed, and Step.from_dict says how
        return Step.from_dict(data)
    if step is None:
        step = Step.from_dict(data)
        if len(_STEPS) >= _STEPS_MAX:
            _STEPS.clear()
        _STEPS[key] = step
    return step


_OPTIONS: dict[Options, dict[str, Any]] = {}


def _options_dict(options: Options) -> dict[str, Any]:
    """``options.to_dict(omit_defaults=False)``, memoized (a table's options never change)."""
    out = _OPTIONS.get(options)
    if out is None:
        out = _OPTIONS[options] = options.to_dict(omit_defaults=False)
    return out


#: The shared parts of the views of each live hand; a hand knows nothing of its views, and its
#: entry goes when the hand does.
_VIEWS: weakref.WeakKeyDictionary[Hand, _HandViews] = weakref.WeakKeyDictionary()


def _views_of(hand: Hand) -> _HandViews:
    views = _VIEWS.get(hand)
    if views is None:
        views = _VIEWS[hand] = _HandViews(hand)
    if views.steps != len(hand.steps):
        views._catch_up(hand)
    return views
