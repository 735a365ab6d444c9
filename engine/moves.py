"""Moves: what a seat asks to do, in the vocabulary of RULES.md §4 and §6 and the hand record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .cards import DECK, Card, cards_of, parse_cards
from .count import SUIT_RUNS, sets_of_rank
from .errors import InvalidMove, RuleCode
from .wire import MoveMap


class Action(StrEnum):
    DRAW = "draw"
    PICK = "pick"
    MELD = "meld"
    SECRET = "secret"
    SAPAW = "sapaw"
    DISCARD = "discard"
    CALL = "call"
    CHALLENGE = "challenge"
    FOLD = "fold"


_NEEDS_CARDS = {Action.MELD, Action.SECRET}
_NEEDS_CARD = {Action.SAPAW, Action.DISCARD}
#: Members read as module globals where a move is read (once per action of a server): an
#: ``Enum`` class's attribute goes through ``EnumType.__getattr__``'s hook, ~800 instructions.
_PICK, _SAPAW, _DISCARD = Action.PICK, Action.SAPAW, Action.DISCARD
#: Each action's wire form (``Action.value`` is a Python property, called for each step).
ACTION_VALUES: dict[Action, str] = {action: action.value for action in Action}


def _card_key(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)


@dataclass(frozen=True, slots=True)
class Move:
    """One action of a seat. ``cards`` are kept sorted (rank, then suit) so that two spellings of
    the same meld are the same move and ``move in legal_moves`` is the legality test."""

    action: Action
    cards: tuple[Card, ...] = ()
    card: Card | None = None
    meld: int | None = None

    def __post_init__(self) -> None:
        if self.cards:
            object.__setattr__(self, "cards", tuple(sorted(self.cards, key=_card_key)))

    @classmethod
    def draw(cls) -> Move:
        return DRAW

    @classmethod
    def discard(cls, card: Card) -> Move:
        return DISCARD_MOVES[card]

    @classmethod
    def from_dict(cls, data: Any) -> Move:
        """Read a hand-record action (``seat`` is ignored); raise ``InvalidMove`` if malformed.

        Every move field present is kept, those its action does not take too, so that the
        rules refuse such a move (``malformed_move``) instead of playing another one: a
        ``pick`` naming both ``cards`` and a ``meld`` is no lay-off, a ``discard`` with
        ``cards`` no discard."""
        if not isinstance(data, dict):
            raise InvalidMove(RuleCode.BAD_MOVE, "a move must be an object")
        action = _named_action(data.get("action"))
        cards: tuple[Card, ...] = ()
        card = None
        meld = data.get("meld")
        if meld is not None and (isinstance(meld, bool) or not isinstance(meld, int)):
            raise InvalidMove(RuleCode.BAD_MOVE, f"{action}: meld must be an integer id")
        raw = data.get("cards")
        if raw is not None or action in _NEEDS_CARDS or (action is _PICK and meld is None):
            if not isinstance(raw, list | tuple | str):
                raise InvalidMove(RuleCode.BAD_MOVE, f"{action}: a list of cards is needed")
            cards = parse_cards(raw)
        raw_card = data.get("card")
        if raw_card is not None:
            card = Card.parse(raw_card)
        elif action in _NEEDS_CARD:
            raise InvalidMove(RuleCode.BAD_MOVE, f"{action}: a card is needed")
        if action is _SAPAW and meld is None:
            raise InvalidMove(RuleCode.BAD_MOVE, "sapaw: a meld id is needed")
        return _shared(action, cards, card, meld) or cls(action, cards, card, meld)

    @classmethod
    def parse(cls, text: str) -> Move:
        """Read the command form of ``__str__`` (``pick 7h 7s``, ``pick 3``, ``sapaw 8d 3``),
        leniently as ``Card.parse``; raise ``InvalidMove(bad_move)`` if malformed."""
        if not isinstance(text, str) or not text.split():
            raise InvalidMove(RuleCode.BAD_MOVE, f"not a move: {text!r}")
        word, *args = text.split()
        action = _ACTION_WORDS.get(word.lower())
        if action is None:
            raise InvalidMove(RuleCode.BAD_MOVE, f"unknown action {word!r}")
        return cls._with_words(action, args, text)

    @classmethod
    def _with_words(cls, action: Action, args: list[str], text: str) -> Move:
        """``parse`` once the action is read: what its words after it say."""
        if action is Action.SAPAW:
            if len(args) != 2 or not args[1].isdigit():
                raise InvalidMove(RuleCode.BAD_MOVE, f"sapaw takes a card and a meld id: {text!r}")
            return cls(action, card=Card.parse(args[0]), meld=int(args[1]))
        if action is Action.DISCARD:
            if len(args) != 1:
                raise InvalidMove(RuleCode.BAD_MOVE, f"discard takes one card: {text!r}")
            return cls(action, card=Card.parse(args[0]))
        if action is Action.PICK and len(args) == 1 and args[0].isdigit():
            return cls(action, meld=int(args[0]))
        if action in _NEEDS_CARDS or action is Action.PICK:
            if not args:
                raise InvalidMove(RuleCode.BAD_MOVE, f"{action} takes cards: {text!r}")
            return cls(action, parse_cards(args))
        if args:
            raise InvalidMove(RuleCode.BAD_MOVE, f"{action} takes nothing more: {text!r}")
        return cls(action)

    def to_dict(self) -> MoveMap:
        """The hand-record form, without ``seat``."""
        out: MoveMap = {"action": self.action.value}
        self.add_operands(out)
        return out

    def add_operands(self, out: MoveMap) -> None:
        """Set what the move acts on (``cards``, ``card``, ``meld``) in ``out``, a map of this
        move's (``to_dict``) or of a step of it (``Step.to_dict``)."""
        if self.cards:
            out["cards"] = [str(c) for c in self.cards]
        if self.card is not None:
            out["card"] = str(self.card)
        if self.meld is not None:
            out["meld"] = self.meld

    def __str__(self) -> str:
        """Command form, as typed in the client: ``pick 7h 7s``, ``sapaw 8d 3``."""
        return self.text()

    def text(self, notation: Callable[[Card], str] = str) -> str:
        """The command form with each card written by ``notation`` (``Card.pretty`` gives the
        screen's ``sapaw 8♦ 3``, which ``parse`` reads back too)."""
        parts = [self.action.value, *(notation(c) for c in self.cards)]
        if self.card is not None:
            parts.append(notation(self.card))
        if self.meld is not None:
            parts.append(str(self.meld))
        return " ".join(parts)


# Shared move objects, so that listing the legal moves builds (almost) nothing. Moves are frozen
# values; these tables are pure memos, bounded by the number of distinct melds and meld ids.
DRAW = Move(Action.DRAW)
CALL = Move(Action.CALL)
CHALLENGE = Move(Action.CHALLENGE)
FOLD = Move(Action.FOLD)
DISCARD_MOVES: tuple[Move, ...] = tuple(Move(Action.DISCARD, card=c) for c in DECK)
#: The moves that are their action alone.
_PLAIN_MOVES: dict[Action, Move] = {move.action: move for move in (DRAW, CALL, CHALLENGE, FOLD)}


class _CardsMoves(dict[int, Move]):
    """The moves of one action by the bitmask of their cards, each made on first use."""

    def __init__(self, action: Action) -> None:
        super().__init__()
        self.action = action

    def __missing__(self, mask: int) -> Move:
        move = self[mask] = Move(self.action, tuple(cards_of(mask)))
        return move


class _SuitDiscards(dict[int, tuple[Move, ...]]):
    """The discards of one suit's cards by their 13-bit mask (ace lowest), in card order, each
    tuple made on first use: a hand's discards are four look-ups, not a sort of its cards."""

    def __init__(self, suit: int) -> None:
        super().__init__()
        self.first = 13 * suit

    def __missing__(self, bits: int) -> tuple[Move, ...]:
        # the lowest card's, then those of the cards above it (most often known already)
        low = bits & -bits
        moves = self[bits] = (
            (DISCARD_MOVES[self.first + low.bit_length() - 1], *self[bits ^ low]) if bits else ())
        return moves


class _SuitRunMelds(dict[int, tuple[Move, ...]]):
    """``meld`` of each run within one suit's cards by their 13-bit mask, in the order of
    ``count.SUIT_RUNS``, each tuple made on first use."""

    def __init__(self, suit: int) -> None:
        super().__init__()
        self.runs = SUIT_RUNS[suit]

    def __missing__(self, bits: int) -> tuple[Move, ...]:
        moves = self[bits] = tuple(map(MELD_MOVES.__getitem__, self.runs[bits]))
        return moves


class _RankSetMelds(dict[int, tuple[Move, ...]]):
    """The set melds of one rank by ``rank << 4 | suits`` (a bit for each suit of the rank in
    the hand): ``meld`` of each set of ``count.sets_of_rank``, a four of a kind followed by
    its ``secret``, each tuple made on first use."""

    def __missing__(self, key: int) -> tuple[Move, ...]:
        moves: list[Move] = []
        for meld in sets_of_rank(key >> 4, key & 15):
            moves.append(MELD_MOVES[meld])
            if meld.bit_count() == 4:  # four of a kind: it may be melded in secret too
                moves.append(SECRET_MOVES[meld])
        found = self[key] = tuple(moves)
        return found


class _PickSapawMoves(dict[int, Move]):
    """``pick MELD`` by the meld's id, each made on first use."""

    def __missing__(self, meld: int) -> Move:
        move = self[meld] = Move(Action.PICK, meld=meld)
        return move


class _SapawMoves(dict[tuple[int, int], Move]):
    """``sapaw CARD MELD`` by ``(card, meld)``, each made on first use."""

    def __missing__(self, key: tuple[int, int]) -> Move:
        move = self[key] = Move(Action.SAPAW, card=DECK[key[0]], meld=key[1])
        return move


def _shared(action: Action, cards: tuple[Card, ...], card: Card | None,
            meld: int | None) -> Move | None:
    """The shared object of a move that nearly every turn makes (a draw, a discard), if it is
    one: the legal moves are those objects too, and a server reads a move per action."""
    if cards or meld is not None:
        return None
    if card is None:
        return _PLAIN_MOVES.get(action)
    return DISCARD_MOVES[card] if action is _DISCARD else None


#: The moves by what they act on (dict look-ups: a search lists them by the million).
MELD_MOVES = _CardsMoves(Action.MELD)
"""``meld`` of the cards of a bitmask."""
SECRET_MOVES = _CardsMoves(Action.SECRET)
"""``secret`` meld of the cards of a bitmask."""
PICK_MOVES = _CardsMoves(Action.PICK)
"""``pick`` with the hand cards of a bitmask."""
PICK_SAPAW_MOVES = _PickSapawMoves()
"""``pick MELD`` (option ``pick_to_sapaw``) by the meld's id."""
SAPAW_MOVES = _SapawMoves()
"""``sapaw CARD MELD`` by ``(card index, meld id)``."""
SUIT_DISCARDS: tuple[_SuitDiscards, ...] = tuple(_SuitDiscards(suit) for suit in range(4))
"""Per suit (clubs, diamonds, hearts, spades), the discards of its cards by their 13-bit mask."""
SUIT_RUN_MELDS: tuple[_SuitRunMelds, ...] = tuple(_SuitRunMelds(suit) for suit in range(4))
"""Per suit, ``meld`` of each run within its cards by their 13-bit mask."""
RANK_SET_MELDS = _RankSetMelds()
"""The ``meld`` (and ``secret``) moves of one rank's sets by ``rank << 4 | suits``."""


#: ``Move.parse``: the action each command word names.
_ACTION_WORDS = {action.value: action for action in Action}


def _named_action(named: Any) -> Action:
    """The action a hand-record move names; ``InvalidMove`` if none or an unknown one."""
    action = _ACTION_WORDS.get(named) if isinstance(named, str) else None
    if action is None:
        known = ", ".join(a.value for a in Action)
        what = f"unknown action {named}" if isinstance(named, str) else "no action"
        raise InvalidMove(RuleCode.BAD_MOVE, f"{what}: a move's action is one of {known}")
    return action
