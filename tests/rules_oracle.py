"""A second statement of RULES.md, written only to test the engine against (a test oracle).

This module is the one allowed duplicate of the rules: it was written from RULES.md (and, where
RULES.md leaves room, the reading docs/RULES-NOTES.md records) without reading the engine's rule
code, so that a misreading in one is caught by the other. It is deliberately simple and slow:
melds are listed by brute force, counts by a plain recursive search, the sapaw block by the turn
numbers of §5's words, settlement term by term as §9 lists it. It borrows only the engine's data
types to speak its language (``Card`` and its text form, ``Options``, ``Move``/``Action``), and
decides every rule again: who acts, which moves are legal, the counts, the end of the hand, the
winner, the burned seats and the chips, and what each seat may know (§11).

``OracleHand`` follows one hand; ``OracleLedger`` follows a match's ante pot (§9, §13).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations

from tongits.engine import Action, Card, Move, Options
from tongits.engine.options import CallTie, SapawBlock, Scoring, StockoutNoneOpen

RANKS = "A23456789TJQK"
DEALT = 37  # §3: 13 + 12 + 12 cards dealt, the other 15 are the stock


def rank_of(card: Card) -> int:
    """1 (ace) to 13 (king), read from the card's notation (§1)."""
    return RANKS.index(str(card)[0]) + 1


def suit_of(card: Card) -> str:
    return str(card)[1]


def points_of(card: Card) -> int:
    """§1: A = 1, 2-10 face value, J Q K = 10."""
    return min(rank_of(card), 10)


def is_set(cards: Iterable[Card]) -> bool:
    """§2: 3 or 4 cards of one rank."""
    cards = list(cards)
    return 3 <= len(cards) <= 4 and len({rank_of(c) for c in cards}) == 1


def is_run(cards: Iterable[Card]) -> bool:
    """§2: 3 or more cards of one suit in consecutive ranks, aces low only."""
    cards = list(cards)
    if len(cards) < 3 or len({suit_of(c) for c in cards}) != 1:
        return False
    ranks = sorted(rank_of(c) for c in cards)
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def is_meld(cards: Iterable[Card]) -> bool:
    cards = list(cards)
    return len(set(cards)) == len(cards) and (is_set(cards) or is_run(cards))


def melds_within(cards: frozenset[Card]) -> list[frozenset[Card]]:
    """Every valid meld made of some of ``cards``: the sets of 3 and 4 of each rank, and every
    stretch of three or more consecutive ranks of a suit."""
    out: list[frozenset[Card]] = []
    by_rank: dict[int, list[Card]] = {}
    by_suit: dict[str, dict[int, Card]] = {}
    for card in cards:
        by_rank.setdefault(rank_of(card), []).append(card)
        by_suit.setdefault(suit_of(card), {})[rank_of(card)] = card
    for group in by_rank.values():
        for size in (3, 4):
            out.extend(frozenset(c) for c in combinations(group, size))
    for ranks in by_suit.values():
        for low in range(1, 14):
            high = low
            while high in ranks:
                if high - low >= 2:
                    out.append(frozenset(ranks[r] for r in range(low, high + 1)))
                high += 1
    return out


@lru_cache(maxsize=200_000)
def best_arrangement(cards: frozenset[Card]) -> tuple[int, int]:
    """(count, melds of four or more cards) of the best arrangement of §7 within ``cards``: the
    fewest points left uncovered, and among those the most melds of four or more (§13, tally).
    The lowest card is either left over or in one of the melds that hold it."""
    if not cards:
        return (0, 0)
    first = min(cards)
    count, fours = best_arrangement(cards - {first})
    best = (count + points_of(first), fours)
    for meld in melds_within(cards):
        if first in meld:
            count, fours = best_arrangement(cards - meld)
            candidate = (count, fours + (len(meld) >= 4))
            if (candidate[0], -candidate[1]) < (best[0], -best[1]):
                best = candidate
    return best


def hand_count(cards: Iterable[Card], options: Options) -> int:
    """§7, and the option ``concealed_melds_count`` (every card counts)."""
    cards = frozenset(cards)
    if options.concealed_melds_count:
        return sum(points_of(c) for c in cards)
    return best_arrangement(cards)[0]


@dataclass
class OracleMeld:
    """A meld on the table (§1): its id, owner, cards, whether face down, who laid off what."""

    id: int
    owner: int
    cards: set[Card]
    secret: bool
    laid_off: list[tuple[Card, int]] = field(default_factory=list)

    def takes(self, card: Card) -> bool:
        """§4 sapaw: a face-up meld takes a card that leaves it a valid meld."""
        return not self.secret and card not in self.cards and is_meld(self.cards | {card})


@dataclass(frozen=True)
class OracleResult:
    """§9's list of what a hand's result names."""

    end: str
    winner: int | None
    counts: tuple[int, int, int]
    burned: frozenset[int]
    challengers: frozenset[int]
    chips: tuple[int, int, int]


class OracleError(Exception):
    """A move the oracle's rules do not allow now (the engine must refuse it too)."""


class OracleHand:
    """One hand played by RULES.md, move by move. ``phase`` is ``start`` (call, draw, pick),
    ``play`` (meld, secret, sapaw, discard), ``answer`` (challenge, fold) or ``over``."""

    def __init__(self, deck: Sequence[Card], dealer: int, options: Options) -> None:
        self.options = options
        # §3: position i < 37 goes to seat (dealer + i) % 3; the rest is the stock, top first
        self.hands: list[set[Card]] = [set(), set(), set()]
        for i in range(DEALT):
            self.hands[(dealer + i) % 3].add(deck[i])
        self.stock: list[Card] = list(deck[DEALT:])
        self.pile: list[Card] = []
        self.melds: list[OracleMeld] = []
        self.opened = [False, False, False]
        #: §5: the turn number of the lay-off that blocks each seat's call (None: not blocked)
        self.blocked_since: list[int | None] = [None, None, None]
        self.to_act = dealer
        self.phase = "play"  # §4: the dealer's first turn has no start and no acquire
        self.turn = 0
        self.caller: int | None = None
        self.waiting: list[int] = []  # seats still to answer a call, in turn order
        self.challengers: list[int] = []
        self.result: OracleResult | None = None
        #: every card some action showed face up (§11); own cards and own secrets aside
        self.shown: set[Card] = set()
        self.secret_cards: list[set[Card]] = [set(), set(), set()]
        #: every action in order, as (seat, move, automatic): the automatic folds of §6.2 too
        self.history: list[tuple[int, Move, bool]] = []

    # ----- rules of a position ----------------------------------------------------------------
    def blocked(self, seat: int) -> bool:
        return self.blocked_since[seat] is not None

    def count(self, seat: int) -> int:
        return hand_count(self.hands[seat], self.options)

    def legal(self) -> set[Move]:
        """Every move the seat to act may make now (§4, §5, §6, §10 options, §13)."""
        if self.phase == "answer":
            return {Move(Action.CHALLENGE), Move(Action.FOLD)}
        if self.phase == "start":
            return self._start_moves()
        if self.phase == "play":
            return self._play_moves()
        return set()

    def _start_moves(self) -> set[Move]:
        """§4 steps 1-2: call (§6.2, §5), draw, or pick the discard top into a new meld (or,
        with ``pick_to_sapaw``, onto a meld)."""
        seat, opts = self.to_act, self.options
        hand = frozenset(self.hands[seat])
        moves = {Move(Action.DRAW)}
        if self.opened[seat] and not self.blocked(seat):
            moves.add(Move(Action.CALL))
        if not self.pile:
            return moves
        top = self.pile[-1]
        for meld in melds_within(hand | {top}):
            rest = meld - {top}
            if top in meld and not (opts.tongits_needs_discard and rest == hand):
                moves.add(Move(Action.PICK, cards=tuple(rest)))
        if opts.pick_to_sapaw:
            moves.update(Move(Action.PICK, meld=m.id) for m in self.melds if m.takes(top))
        return moves

    def _play_moves(self) -> set[Move]:
        """§4 steps 3-4: meld, secret, sapaw, discard; ``tongits_needs_discard`` refuses a play
        that empties the hand, ``no_sapawable_discard`` a discard that could be laid off."""
        seat, opts = self.to_act, self.options
        hand = frozenset(self.hands[seat])
        moves: set[Move] = set()
        for meld in melds_within(hand):
            if opts.tongits_needs_discard and meld == hand:
                continue
            moves.add(Move(Action.MELD, cards=tuple(meld)))
            if len(meld) == 4 and is_set(meld):
                moves.add(Move(Action.SECRET, cards=tuple(meld)))
        if not (opts.tongits_needs_discard and len(hand) == 1):
            for card in hand:
                moves.update(Move(Action.SAPAW, card=card, meld=m.id)
                             for m in self.melds if m.takes(card))
        discards = set(hand)
        if opts.no_sapawable_discard:
            keep = {c for c in hand if not any(m.takes(c) for m in self.melds)}
            discards = keep or discards  # §13: a seat always has a legal discard
        moves.update(Move(Action.DISCARD, card=c) for c in discards)
        return moves

    # ----- playing ----------------------------------------------------------------------------
    def apply(self, seat: int, move: Move) -> None:
        if self.phase == "over" or seat != self.to_act or move not in self.legal():
            raise OracleError(f"seat {seat} may not {move} now")
        self.history.append((seat, move, False))
        if move.action is Action.CALL:
            self._call(seat)
        elif move.action in (Action.CHALLENGE, Action.FOLD):
            self.waiting.pop(0)
            if move.action is Action.CHALLENGE:
                self.challengers.append(seat)
            self._next_answer()
        else:
            self._play(seat, move)
            if self.phase != "over" and not self.hands[seat]:
                self._finish("tongits", seat)  # §6.1: the hand of the seat to act is empty

    def _play(self, seat: int, move: Move) -> None:
        """A move of the seat's own turn: acquire, play or discard (§4)."""
        action = move.action
        if action is Action.DRAW:
            self.hands[seat].add(self.stock.pop(0))
            self.phase = "play"
        elif action is Action.PICK:
            top = self.pile.pop()
            self.shown.add(top)
            self.phase = "play"
            if move.meld is not None:
                self._lay_off(seat, top, move.meld)
            else:
                self._place(seat, set(move.cards) | {top}, secret=False, from_hand=move.cards)
        elif action in (Action.MELD, Action.SECRET):
            self._place(seat, set(move.cards), action is Action.SECRET, from_hand=move.cards)
        else:
            card = move.card
            assert card is not None
            self.hands[seat].remove(card)
            self.shown.add(card)
            if action is Action.SAPAW:
                assert move.meld is not None
                self._lay_off(seat, card, move.meld)
            else:
                self.pile.append(card)
                if self.hands[seat]:
                    self._end_turn(seat)

    def _place(self, seat: int, cards: set[Card], secret: bool, from_hand: Iterable[Card]) -> None:
        for card in from_hand:
            self.hands[seat].remove(card)
        self.melds.append(OracleMeld(len(self.melds), seat, cards, secret))
        self.opened[seat] = True  # §4: owning a meld, face up or secret, opens
        if secret:
            self.secret_cards[seat] |= cards
        else:
            self.shown |= cards

    def _lay_off(self, seat: int, card: Card, meld_id: int) -> None:
        meld = self.melds[meld_id]
        meld.cards.add(card)
        meld.laid_off.append((card, seat))
        # §5, §13: a lay-off onto another's meld blocks its owner's call; onto one's own only
        # with self_sapaw_blocks_call
        if meld.owner != seat or self.options.self_sapaw_blocks_call:
            self.blocked_since[meld.owner] = self.turn

    def _end_turn(self, seat: int) -> None:
        """§4 discard ends the turn; §5 a block ends with the blocked seat's turn after it;
        §6.3 the stock is out once the seat that drew its last card has finished."""
        since = self.blocked_since[seat]
        if (self.options.sapaw_block is SapawBlock.NEXT_TURN and since is not None
                and since < self.turn):
            self.blocked_since[seat] = None
        if not self.stock:
            self._stock_out(seat)
            return
        self.turn += 1
        self.to_act = (seat + 1) % 3
        self.phase = "start"

    def _call(self, seat: int) -> None:
        """§6.2: the two others answer in turn order; a seat that has not opened folds."""
        self.caller = seat
        self.waiting = [(seat + 1) % 3, (seat + 2) % 3]
        self.phase = "answer"
        self._next_answer()

    def _next_answer(self) -> None:
        while self.waiting and not self.opened[self.waiting[0]]:
            self.history.append((self.waiting.pop(0), Move(Action.FOLD), True))
        if self.waiting:
            self.to_act = self.waiting[0]
            return
        caller = self.caller
        assert caller is not None
        if not self.challengers:
            self._finish("call", caller)
            return
        if self.options.call_tie is CallTie.CHALLENGER:
            order = [*self.challengers, caller]
        else:
            order = [caller, *self.challengers]
        self._finish("call", min(order, key=lambda s: (self.count(s), order.index(s))))

    def _stock_out(self, last: int) -> None:
        """§6.3: the seats that opened compete (all three if none did, or the hand is void);
        ties go to the last drawer, then the first after it in turn order."""
        order = [last, (last + 1) % 3, (last + 2) % 3]
        competing = [s for s in order if self.opened[s]]
        if not competing:
            if self.options.stockout_none_open is StockoutNoneOpen.VOID:
                self._finish("void", None)
                return
            competing = order
        self._finish("stock", min(competing, key=lambda s: (self.count(s), order.index(s))))

    # ----- the result -------------------------------------------------------------------------
    def _finish(self, end: str, winner: int | None) -> None:
        counts = (self.count(0), self.count(1), self.count(2))
        if winner is None:
            burned = frozenset({0, 1, 2})  # §13: a void hand lists every seat
        else:
            burned = frozenset(s for s in range(3) if not self.opened[s] and s != winner)  # §8
        self.result = OracleResult(end, winner, counts, burned, frozenset(self.challengers),
                                   self._chips(end, winner, burned))
        self.phase = "over"

    def aces(self, seat: int) -> int:
        """Aces in the seat's hand and in every meld it owns, lay-offs by others included."""
        owned = [c for m in self.melds if m.owner == seat for c in m.cards]
        return sum(1 for c in [*self.hands[seat], *owned] if rank_of(c) == 1)

    def secrets(self, seat: int) -> int:
        return sum(1 for m in self.melds if m.owner == seat and m.secret)

    def _chips(self, end: str, winner: int | None, burned: frozenset[int]) -> tuple[int, int, int]:
        """§9 settlement, as its list reads, for either ``scoring``."""
        if winner is None:
            return (0, 0, 0)
        big = end == "tongits" or (end == "call" and bool(self.challengers))
        if self.options.scoring is Scoring.PAYMENTS:
            hand = self.hands[winner]
            fours = sum(1 for r in range(1, 14)
                        if sum(1 for c in hand if rank_of(c) == r) == 4)
            each = (3 if big else 1) + self.aces(winner) + 3 * fours + 3 * self.secrets(winner)
            chips = [0, 0, 0]
            for loser in range(3):
                if loser != winner:
                    paid = each + (1 if loser in burned else 0)
                    chips[loser] -= paid
                    chips[winner] += paid
            return (chips[0], chips[1], chips[2])
        tally = [0, 0, 0]
        for seat in range(3):
            concealed = 0
            if not self.options.concealed_melds_count:
                concealed = best_arrangement(frozenset(self.hands[seat]))[1]
            tally[seat] = self.aces(seat) + 3 * concealed + 3 * self.secrets(seat)
        tally[winner] += 3 if big else 1
        if end == "call" and self.challengers and winner != self.caller:
            assert self.caller is not None
            tally[self.caller] -= 1
        return (tally[0], tally[1], tally[2])

    # ----- §11 --------------------------------------------------------------------------------
    def history_seen_by(self, seat: int | None) -> list[tuple[int, Move, bool]]:
        """The actions as ``seat`` sees them: until the hand ends, another seat's secret meld
        without its cards (a draw never names its card)."""
        if self.phase == "over":
            return list(self.history)
        return [(s, Move(Action.SECRET) if m.action is Action.SECRET and s != seat else m, auto)
                for s, m, auto in self.history]

    def knowable(self, seat: int | None) -> set[Card]:
        """The cards a seat (None: a spectator) may have seen: every card shown face up, its own
        hand and its own secret melds; after the hand, everything."""
        if self.phase == "over":
            return set(Card(i) for i in range(52))
        if seat is None:
            return set(self.shown)
        return self.shown | self.hands[seat] | self.secret_cards[seat]


@dataclass
class OracleLedger:
    """§9's pot and §13's streak: before each deal every seat puts ``ante`` in; a seat that wins
    two hands in a row takes the pot; a void hand breaks the streak and leaves the pot; after a
    pot is taken the streak starts again."""

    ante: int
    chips: list[int] = field(default_factory=lambda: [0, 0, 0])
    pot: int = 0
    last_winner: int | None = None
    streak: int = 0

    def deal(self) -> None:
        for seat in range(3):
            self.chips[seat] -= self.ante
        self.pot += 3 * self.ante

    def settle(self, result: OracleResult) -> int:
        """Book a finished hand; returns the pot taken (0 if none)."""
        for seat in range(3):
            self.chips[seat] += result.chips[seat]
        if result.winner is None:
            self.last_winner, self.streak = None, 0
            return 0
        if result.winner == self.last_winner:
            self.streak += 1
        else:
            self.last_winner, self.streak = result.winner, 1
        if self.streak < 2 or not self.pot:
            return 0
        taken, self.pot = self.pot, 0
        self.chips[result.winner] += taken
        self.last_winner, self.streak = None, 0
        return taken
