"""The fixed action space of the environment: every legal move of RULES.md as one index.

A learner needs the same index to mean the same move in every state, and one index per move.
The moves that name a meld id (``sapaw CARD MELD``, ``pick MELD``) are indexed by the card and
the *place* it takes on that meld instead, so that an index does not depend on the order in
which melds were placed: a card fits at most one set (the set of its rank) and at most two runs
(the run it would extend downwards, the run it would extend upwards), so ``(card, place)``
names exactly one meld of the table. Every other move is named by its cards alone.

==========  =====  ==========================================================================
indices     count  move
==========  =====  ==========================================================================
0           1      ``draw``
1           1      ``call``
2           1      ``challenge``
3           1      ``fold``
4-55        52     ``discard CARD``: 4 + card index (``Card(i)``: clubs A..K, diamonds, ...)
56-384      329    ``meld CARDS``: 56 + the index of the meld in ``MELDS``
385-713     329    ``pick CARDS``: 385 + the index in ``MELDS`` of the meld the pick places
                   (the discard's top card and ``CARDS``)
714-726     13     ``secret CARDS``: 714 + rank - 1 (the four cards of that rank)
727-882     156    ``sapaw CARD MELD``: 727 + 3 * card index + place (``Place``)
883-885     3      ``pick MELD`` (option ``pick_to_sapaw``): 883 + the place the top card takes
==========  =====  ==========================================================================

``MELDS`` lists every meld of one deck: per rank (A to K) its four sets of three (without
spades, hearts, diamonds, clubs in that order) and its set of four; then per suit (clubs,
diamonds, hearts, spades) every run from its lowest rank, shortest first. The table is built
from the rules' own meld test (``is_meld``), and ``legal_actions`` from the engine's legal
moves, so that the two can never disagree: the mask is exactly ``SeatView.legal``.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from itertools import repeat

from tongits.engine import DECK, Action, Card, LiveView, Move, SeatView, is_meld
from tongits.engine.cards import BITS, mask_of
from tongits.engine.moves import CALL as CALL_MOVE
from tongits.engine.moves import CHALLENGE as CHALLENGE_MOVE
from tongits.engine.moves import DISCARD_MOVES, MELD_MOVES, SECRET_MOVES
from tongits.engine.moves import DRAW as DRAW_MOVE
from tongits.engine.moves import FOLD as FOLD_MOVE


class Place(IntEnum):
    """Where a laid-off card goes on its meld: the set of its rank, or either end of a run."""

    SET = 0
    RUN_LOW = 1  # the card becomes the run's new lowest card
    RUN_HIGH = 2  # the card becomes the run's new highest card


def _all_melds() -> tuple[tuple[Card, ...], ...]:
    melds: list[tuple[Card, ...]] = []
    for rank in range(1, 14):
        four = tuple(Card.of(rank, suit) for suit in range(4))
        for left_out in reversed(range(4)):
            melds.append(tuple(c for c in four if c.suit != left_out))
        melds.append(four)
    for suit in range(4):
        for low in range(1, 12):
            for high in range(low + 2, 14):
                melds.append(tuple(Card.of(rank, suit) for rank in range(low, high + 1)))
    assert all(is_meld(m) for m in melds)
    return tuple(melds)


#: Every meld of one deck, in the order of the module's table (cards sorted by index).
MELDS: tuple[tuple[Card, ...], ...] = _all_melds()
#: The index in ``MELDS`` of each meld, by the bitmask of its cards.
_MELD_INDEX: dict[int, int] = {mask_of(m): i for i, m in enumerate(MELDS)}

DRAW, CALL, CHALLENGE, FOLD = 0, 1, 2, 3
DISCARD = 4
MELD = DISCARD + 52
PICK = MELD + len(MELDS)
SECRET = PICK + len(MELDS)
SAPAW = SECRET + 13
PICK_SAPAW = SAPAW + 3 * 52
#: The size of the action space.
ACTIONS = PICK_SAPAW + 3

_PLAIN = {Action.DRAW: DRAW, Action.CALL: CALL, Action.CHALLENGE: CHALLENGE, Action.FOLD: FOLD}


class ActionError(ValueError):
    """An action index that names no legal move of the seat to act (the mask says which do)."""


def place_on(meld: Sequence[Card], card: Card) -> Place:
    """Where ``card`` goes when laid off onto ``meld`` (its cards sorted by rank), which must
    accept it."""
    first = meld[0]
    if first % 13 == meld[1] % 13:  # (card indices: rank - 1 is the index % 13)
        return Place.SET
    return Place.RUN_LOW if card < first else Place.RUN_HIGH  # (a card of the run's suit)


def action_index(move: Move, melds: Sequence[Sequence[Card]], top: Card | None) -> int:
    """The index of a legal ``move``; ``melds[i]`` are the cards of meld id ``i`` as the seat
    sees them and ``top`` the discard pile's top card (both only read for the moves that
    need them)."""
    action = move.action
    plain = _PLAIN.get(action)
    if plain is not None:
        return plain
    if action is Action.DISCARD:
        assert move.card is not None
        return DISCARD + move.card
    if action is Action.MELD:
        return MELD + _MELD_INDEX[mask_of(move.cards)]
    if action is Action.SECRET:
        return SECRET + move.cards[0].rank - 1
    if action is Action.SAPAW:
        assert move.card is not None and move.meld is not None
        return SAPAW + 3 * move.card + place_on(melds[move.meld], move.card)
    assert action is Action.PICK and top is not None
    if move.meld is not None:
        return PICK_SAPAW + place_on(melds[move.meld], top)
    return PICK + _MELD_INDEX[sum(map(BITS.__getitem__, move.cards)) | BITS[top]]


def legal_actions(view: SeatView | LiveView) -> dict[int, Move]:
    """The seat's legal moves by action index: its keys are the mask's ones."""
    indices, legal = legal_indices(view)
    return dict(zip(indices, legal, strict=True))


def legal_indices(view: SeatView | LiveView) -> tuple[list[int], Sequence[Move]]:
    """The seat's legal moves (the engine's, in its order) and the action index of each:
    ``legal_actions`` as two lists, which is what an environment keeps from step to step."""
    return indices_of(view.legal, view)


def indices_of(legal: Sequence[Move], view: SeatView | LiveView) -> tuple[list[int],
                                                                         Sequence[Move]]:
    """``legal_indices(view)`` of ``view.legal``, given (a reader that has it already)."""
    # (-1 for a move to work out: comparing ints with it is quicker than with None)
    indices = list(map(_SHARED.get, map(id, legal), repeat(-1)))
    if -1 in indices:  # picks and lay-offs: their index depends on the pile's top or a meld
        top = view.top
        melds: list[tuple[Card, ...]] = []  # (the melds' cards, read for the first lay-off)
        position = -1
        for _ in range(indices.count(-1)):
            position = indices.index(-1, position + 1)
            move = legal[position]
            if move.meld is not None and not melds:
                melds = [m.cards for m in view.melds]
            indices[position] = action_index(move, melds, top)
    return indices, legal


def _shared_indices() -> dict[int, int]:
    """The index of each of the engine's shared moves whose index needs no context, by the
    move's id: those objects live as long as the engine (``tongits.engine.moves``), so an id
    is theirs for good. A draw, the answers, every discard, meld and secret meld."""
    moves = [DRAW_MOVE, CALL_MOVE, CHALLENGE_MOVE, FOLD_MOVE, *DISCARD_MOVES]
    moves += [MELD_MOVES[mask_of(m)] for m in MELDS]
    moves += [SECRET_MOVES[mask_of(m)] for m in MELDS if len(m) == 4 and m[0].rank == m[1].rank]
    return {id(move): action_index(move, (), None) for move in moves}


_SHARED = _shared_indices()


def index_of(view: SeatView, move: Move) -> int:
    """The action index of ``move``, one of ``view.legal`` (a bot's choice, to imitate it)."""
    return action_index(move, [m.cards for m in view.melds], view.top)


def describe(index: int) -> str:
    """What an action index means, in the words of the module's table (for logs and docs):
    ``discard Th``, ``pick to make 7c 7h 7s``, ``sapaw 8d (run, high end)``."""
    if not 0 <= index < ACTIONS:
        raise ActionError(f"no action {index}: the actions are 0 to {ACTIONS - 1}")
    if index < DISCARD:
        return ("draw", "call", "challenge", "fold")[index]
    if index < MELD:
        return f"discard {DECK[index - DISCARD]}"
    if index < PICK:
        return "meld " + " ".join(map(str, MELDS[index - MELD]))
    if index < SECRET:
        return "pick to make " + " ".join(map(str, MELDS[index - PICK]))
    if index < SAPAW:
        return f"secret four of rank {'A23456789TJQK'[index - SECRET]}"
    if index < PICK_SAPAW:
        card, place = divmod(index - SAPAW, 3)
        return f"sapaw {DECK[card]} ({_PLACE_WORDS[Place(place)]})"
    return f"pick the top to lay off ({_PLACE_WORDS[Place(index - PICK_SAPAW)]})"


_PLACE_WORDS = {Place.SET: "set", Place.RUN_LOW: "run, low end", Place.RUN_HIGH: "run, high end"}
