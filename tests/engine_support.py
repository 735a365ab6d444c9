"""Random and chosen hands for the engine, policy and client tests: seeds as a hypothesis
strategy, random table options, every state of a random playout, a deck dealt to order, and
the option sets the bots are tried under.

No test lives here; the tests import these helpers (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from hypothesis import strategies as st
from tongits.engine import DECK, Action, Card, Hand, Move, Options, parse_cards
from tongits.engine.options import CallTie, SapawBlock, Scoring, StockoutNoneOpen

SEEDS = st.integers(0, 2**32)
MAX_ACTIONS = 400  # far more than any hand can last: 15 draws, 52 cards

#: Table options that change what the bots may do (discards, lay-offs, calls, stock-outs, tally).
OPTION_SETS = [
    Options(),
    Options(tongits_needs_discard=True, no_sapawable_discard=True),
    Options.from_dict(
        {"pick_to_sapaw": True, "sapaw_block": "hand", "self_sapaw_blocks_call": True}
    ),
    Options.from_dict(
        {"call_tie": "caller", "stockout_none_open": "void", "concealed_melds_count": True}
    ),
    Options.from_dict({"scoring": "tally"}),
]


def random_options(rng: random.Random) -> Options:
    return Options(
        pick_to_sapaw=rng.random() < 0.5,
        sapaw_block=rng.choice(list(SapawBlock)),
        self_sapaw_blocks_call=rng.random() < 0.5,
        tongits_needs_discard=rng.random() < 0.5,
        call_tie=rng.choice(list(CallTie)),
        stockout_none_open=rng.choice(list(StockoutNoneOpen)),
        no_sapawable_discard=rng.random() < 0.5,
        concealed_melds_count=rng.random() < 0.5,
        scoring=rng.choice(list(Scoring)),
        ante=rng.choice([0, 0, 1, 5]),
    )


def random_hand(rng: random.Random) -> Hand:
    deck = list(DECK)
    rng.shuffle(deck)
    return Hand(deck, rng.randrange(3), random_options(rng))


def choose(rng: random.Random, moves: list[Move]) -> Move:
    """A random legal move, calling rarely so that stock-outs happen too."""
    if rng.random() < 0.85:
        quieter = [m for m in moves if m.action is not Action.CALL]
        moves = quieter or moves
    return rng.choice(moves)


def states(seed: int) -> Iterator[Hand]:
    """Every state of one random hand, the final one included (the same object, mutated)."""
    rng = random.Random(seed)
    hand = random_hand(rng)
    for _ in range(MAX_ACTIONS):
        yield hand
        if hand.over:
            return
        moves = hand.legal_moves()
        assert moves, "a seat to act always has a legal move"
        hand.apply(hand.to_act, choose(rng, moves))
    raise AssertionError("the hand did not end")


def deal_with(dealer_cards: str, dealer: int = 0, seed: int = 0) -> list[Card]:
    """A deck whose dealer is dealt exactly ``dealer_cards`` (13 cards); the rest shuffled."""
    mine = list(parse_cards(dealer_cards))
    assert len(mine) == 13
    rest = [c for c in DECK if c not in mine]
    random.Random(seed).shuffle(rest)
    deck: list[Card] = []
    for i in range(52):
        if i < 37 and (i - 0) % 3 == 0:
            deck.append(mine.pop(0))
        else:
            deck.append(rest.pop(0))
    assert Hand(deck, dealer).hands[dealer] == set(parse_cards(dealer_cards))
    return deck
