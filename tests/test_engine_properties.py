"""Property tests over random hands played with random legal moves (RULES.md throughout).

Each example is a seed: the deck, the dealer, the table options and every choice come from a
private ``random.Random(seed)``, so a failure shrinks to a seed that replays exactly.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from engine_support import SEEDS, choose, random_hand, states
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tongits.engine import (
    DECK,
    Action,
    Card,
    Hand,
    HandRecord,
    IllegalMove,
    Move,
    Options,
    RecordError,
    SeatView,
    hand_record,
    option_choices,
    seat_view,
)
from tongits.engine.cards import cards_of, mask_of
from tongits.engine.count import melds_within
from tongits.engine.options import Scoring

CARD_NAMES = frozenset(str(c) for c in DECK)


def snapshot(hand: Hand) -> Any:
    """Everything that makes up the state of a hand."""
    return (
        json.dumps(hand_record(hand)),
        [sorted(h) for h in hand.hands],
        list(hand.stock),
        list(hand.discards),
        [(m.id, m.owner, list(m.cards), m.secret, dict(m.laid_off)) for m in hand.melds],
        hand.to_act,
        hand.phase,
        hand.turn,
        hand.caller,
        dict(hand.answers),
        hand.result,
        [hand.opened(s) for s in range(3)],
        [hand.call_blocked(s) for s in range(3)],
        [str(m) for m in hand.legal_moves()],
    )


def random_move(rng: random.Random, hand: Hand) -> Move:
    """A well-formed move: the fields its action needs, drawn at random."""
    action = rng.choice(list(Action))
    near = list(hand.hands[hand.to_act]) if rng.random() < 0.8 else []
    near = near or list(DECK)
    pick = rng.sample(near, min(len(near), rng.randint(1, 5)))
    if rng.random() < 0.2:
        pick.append(pick[0])  # a card named twice
    card = rng.choice(near)
    meld = rng.randint(-1, len(hand.melds) + 1)
    if action in (Action.MELD, Action.SECRET):
        return Move(action, tuple(pick))
    if action is Action.PICK:
        return Move(action, meld=meld) if rng.random() < 0.3 else Move(action, tuple(pick[:3]))
    if action is Action.SAPAW:
        return Move(action, card=card, meld=meld)
    if action is Action.DISCARD:
        return Move(action, card=card)
    return Move(action)


def candidates(hand: Hand) -> set[Move]:
    """A superset of the legal moves, built naively: every meld, secret, lay-off, discard and
    pick the seat's cards allow, whatever the phase or the options."""
    seat = hand.to_act
    held = mask_of(hand.hands[seat])
    out = {Move(a) for a in (Action.DRAW, Action.CALL, Action.CHALLENGE, Action.FOLD)}
    for meld in melds_within(held):
        out.add(Move(Action.MELD, tuple(cards_of(meld))))
        out.add(Move(Action.SECRET, tuple(cards_of(meld))))
    for card in hand.hands[seat]:
        out.add(Move.discard(card))
        out |= {Move(Action.SAPAW, card=card, meld=m.id) for m in hand.melds}
    if hand.discards:
        top = hand.discards[-1]
        for meld in melds_within(held | top.bit):
            if meld & top.bit:
                out.add(Move(Action.PICK, tuple(c for c in cards_of(meld) if c != top)))
        out |= {Move(Action.PICK, meld=m.id) for m in hand.melds}
    return out


def table_cards(hand: Hand) -> list[Card]:
    return [
        *(c for h in hand.hands for c in h),
        *hand.stock,
        *hand.discards,
        *(c for m in hand.melds for c in m.cards),
    ]


def cards_in(data: Any) -> set[str]:
    """Every string in a JSON value (keys included) that is a card."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            found |= cards_in(key) | cards_in(value)
    elif isinstance(data, list | tuple):
        for value in data:
            found |= cards_in(value)
    elif isinstance(data, str) and data in CARD_NAMES:
        found.add(data)
    return found


@settings(max_examples=2000, deadline=None)
@given(SEEDS)
def test_cards_are_conserved_every_hand_ends_and_replays(seed: int) -> None:
    for hand in states(seed):
        cards = table_cards(hand)
        assert len(cards) == 52 and set(cards) == set(DECK)
    assert hand.result is not None
    record = hand_record(hand)
    replayed = HandRecord.from_dict(json.loads(json.dumps(record))).replay()
    assert replayed.result == hand.result
    assert hand_record(replayed) == record
    assert sum(hand.result.chips) == 0 or hand.options.scoring is Scoring.TALLY
    if hand.result.winner is not None:
        assert hand.result.winner not in hand.result.burned
    # why each seat's chips are what they are, term by term: the terms add up to the chips
    # (they are made apart from them, only when asked), and nothing is explained by nothing
    why = hand.settlement
    assert tuple(sum(item.chips for item in seat) for seat in why) == hand.result.chips
    assert all(item.chips and item.n > 0 for seat in why for item in seat)
    assert (hand.result.winner is None) == (why == ((), (), ()))


@settings(max_examples=150, deadline=None)
@given(SEEDS)
def test_legal_moves_and_the_legality_check_agree(seed: int) -> None:
    rng = random.Random(seed ^ 0x5EED)
    for hand in states(seed):
        seat = hand.to_act
        legal = hand.legal_moves()
        assert len(set(legal)) == len(legal)
        if not hand.over:
            naive = {m for m in candidates(hand) if hand.why_illegal(seat, m) is None}
            assert naive == set(legal)
        for other in range(3):
            if other != seat or hand.over:
                assert hand.legal_moves(other) == []
        for move in legal:
            assert hand.why_illegal(seat, move) is None
            trial = hand.copy()
            trial.apply(seat, move)
            assert len(table_cards(trial)) == 52
        before = snapshot(hand)
        for _ in range(8):
            move = random_move(rng, hand)
            who = seat if rng.random() < 0.8 else rng.randrange(3)
            if who == seat and move in legal and not hand.over:
                continue
            assert hand.why_illegal(who, move) is not None
            try:
                hand.apply(who, move)
            except IllegalMove as error:
                assert error.code and error.message
            else:
                raise AssertionError(f"{move} applied for seat {who} but is not listed")
            assert snapshot(hand) == before


@settings(max_examples=150, deadline=None)
@given(SEEDS)
def test_views_hide_what_a_seat_may_not_know(seed: int) -> None:
    for hand in states(seed):
        for seat in (0, 1, 2, None):
            view = seat_view(hand, seat)
            data = view.to_dict()
            assert "legal" not in data  # it travels beside the view: state.legal
            legal = json.loads(json.dumps([m.to_dict() for m in view.legal]))
            assert SeatView.from_dict(json.loads(json.dumps(data)), legal) == view
            if hand.over:
                assert view.revealed is not None and view.to_act is None
                continue
            hidden = {str(c) for c in hand.stock}
            hidden |= {str(c) for s in range(3) if s != seat for c in hand.hands[s]}
            hidden |= {str(c) for m in hand.melds if m.secret and m.owner != seat for c in m.cards}
            assert not cards_in(data) & hidden
            assert view.hand == (tuple(sorted(hand.hands[seat])) if seat is not None else ())
            assert view.stock == len(hand.stock)
            assert view.hand_sizes == tuple(len(h) for h in hand.hands)
            expected = hand.legal_moves(seat) if seat is not None else []
            assert list(view.legal) == expected


PINNED = [  # seed: (decisions, legal moves listed over the hand, end, winner, chips)
    (0, 39, 293, "stock", 0, [6, -3, -3]),
    (1, 36, 254, "stock", 1, [0, 3, 0]),
    (2, 34, 248, "stock", 0, [1, 1, 2]),
    (3, 39, 289, "stock", 1, [0, 1, 0]),
    (4, 35, 256, "stock", 2, [-2, -1, 3]),
]


def test_pinned_playouts() -> None:
    """Move counts of chosen playouts, like a chess perft: any change to move generation or to
    the rules shows up here first."""
    for seed, decisions, listed, end, winner, chips in PINNED:
        rng = random.Random(seed)
        hand = random_hand(rng)
        steps = total = 0
        while not hand.over:
            moves = hand.legal_moves()
            steps, total = steps + 1, total + len(moves)
            hand.apply(hand.to_act, choose(rng, moves))
        assert hand.result is not None
        assert (steps, total) == (decisions, listed)
        assert (hand.result.end.value, hand.result.winner, list(hand.result.chips)) == (
            end,
            winner,
            chips,
        )


@given(st.data())
def test_the_option_choices_offered_are_exactly_the_options_accepted(data: st.DataObject) -> None:
    """A client builds its options from ``option_choices`` (sent in ``welcome``): whatever it
    picks is accepted and kept, and a value outside the list is refused."""
    choices = option_choices()
    assert [c["name"] for c in choices] == list(Options().to_dict(omit_defaults=False))
    picked: dict[str, Any] = {}
    for choice in choices:
        assert Options.from_dict({choice["name"]: choice["default"]}) == Options()
        if "values" in choice:
            assert choice["values"][0] == choice["default"]
            picked[choice["name"]] = data.draw(st.sampled_from(choice["values"]))
            offered = {(type(v), v) for v in choice["values"]}
            outside = data.draw(st.one_of(st.text(), st.integers(), st.none()))
            assume((type(outside), outside) not in offered)
        else:
            picked[choice["name"]] = data.draw(st.integers(choice["min"], choice["max"]))
            outside = data.draw(st.one_of(st.integers(max_value=choice["min"] - 1),
                                          st.integers(min_value=choice["max"] + 1)))
        with pytest.raises(RecordError):
            Options.from_dict({choice["name"]: outside})
    assert Options.from_dict(picked).to_dict(omit_defaults=False) == picked
