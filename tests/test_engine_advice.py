"""What the engine tells a seat from its own view: why a move is refused, the hand's count under
the table's options, and the hint's advice (RULES.md §4-§7, §10, §11).

The property tests compare every answer given from a view with the real hand's: a verdict, a
count or a suggested move that needed a card the seat cannot see would differ somewhere.
"""

from __future__ import annotations

import random
import re

from engine_support import SEEDS, states
from hypothesis import given, settings
from tongits.engine import (
    DECK,
    Action,
    Card,
    Hand,
    Move,
    Options,
    Phase,
    SeatView,
    deck_for,
    parse_cards,
    seat_view,
)
from tongits.engine.advice import advise
from tongits.engine.melds import TableMeld
from tongits.engine.policies import ExpertParams, ExpertPolicy, explaining_policy, get_policy

PERSPECTIVES = (0, 1, 2, None)
#: The hint's policy with a small search budget, for the property tests over many positions.
QUICK_EXPERT = ExpertPolicy(params=ExpertParams(budget=12, min_worlds=2))
_CARD_TEXT = re.compile(r"\b[2-9TJQKA][cdhs]\b")


@settings(max_examples=60, deadline=None)
@given(SEEDS)
def test_a_views_position_answers_as_the_real_hand(seed: int) -> None:
    """For every state and every seat: the position rebuilt from the seat's view lists the same
    legal moves as the real hand, counts the seat's hand the same, and refuses every move of the
    real hand's lists with the same code."""
    for hand in states(seed):
        tried = {m for s in range(3) for m in _moves_near(hand, s)}
        for seat in PERSPECTIVES:
            view = seat_view(hand, seat)
            position = view.position()
            if seat is None:
                assert all(view.why_illegal(m) is not None for m in tried)
                continue
            assert position.legal_moves(seat) == hand.legal_moves(seat)
            assert view.count() == hand.count(seat)
            for move in tried:
                real = hand.why_illegal(seat, move)
                mine = view.why_illegal(move)
                assert (real and real.code) == (mine and mine.code), (seat, str(move))


def _moves_near(hand: Hand, seat: int) -> list[Move]:
    """Moves a player might try: the seat's cards in every action, the legal moves of the seat
    to act, and lay-offs onto every meld id (and one past them)."""
    cards = sorted(hand.hands[seat])
    out = list(hand.legal_moves())
    for card in cards[:4]:
        out.append(Move.discard(card))
        out += [Move(Action.SAPAW, card=card, meld=i) for i in range(len(hand.melds) + 1)]
    for i in range(len(cards) - 2):
        out.append(Move(Action.MELD, tuple(cards[i : i + 3])))
        out.append(Move(Action.PICK, tuple(cards[i : i + 2])))
    out += [Move(Action.SECRET, tuple(cards[:4])), Move(Action.PICK, meld=0)]
    out += [Move(a) for a in (Action.DRAW, Action.CALL, Action.CHALLENGE, Action.FOLD)]
    return out


@settings(max_examples=40, deadline=None)
@given(SEEDS)
def test_advice_is_legal_on_the_real_hand_and_counts_what_it_leaves(seed: int) -> None:
    """The suggested moves, played in order on the real hand, are each legal; the count the
    advice announces after them is the real count the seat is left with."""
    rng = random.Random(seed)
    for hand in states(seed):
        if hand.over or rng.random() < 0.8:
            continue
        seat = hand.to_act
        advice = advise(seat_view(hand, seat), QUICK_EXPERT)
        assert advice.steps and advice.count == hand.count(seat)
        trial = hand.copy()
        for step in advice.steps:
            assert trial.why_illegal(seat, step.move) is None, str(step.move)
            assert step.reason()  # every suggestion says why
            trial.apply(seat, step.move)
        if advice.count_after is not None:
            assert advice.count_after == trial.count(seat)


def table(
    mine: str,
    *,
    phase: Phase = Phase.PLAY,
    options: Options | None = None,
    melds: tuple[tuple[int, str], ...] = (),
    top: str = "",
) -> SeatView:
    """Seat 0 to act holding ``mine``; ``melds`` are (owner, cards); the other cards are dealt
    to seats 1 and 2 (ten each) and the stock."""
    held = parse_cards(mine)
    laid = [parse_cards(cards) for _, cards in melds]
    pile = parse_cards(top) if top else ()
    used = {*held, *pile, *(c for cards in laid for c in cards)}
    rest = [c for c in DECK if c not in used]
    hand = Hand.restore(
        options=options or Options(),
        dealer=2,
        hands=[held, rest[:10], rest[10:20]],
        stock=rest[20:],
        discards=pile,
        melds=[TableMeld(i, owner, list(laid[i])) for i, (owner, _) in enumerate(melds)],
        to_act=0,
        phase=phase,
        turn=4,
        opened=tuple(any(owner == s for owner, _ in melds) for s in range(3)),
    )
    return seat_view(hand, 0)


def test_four_of_a_kind_goes_down_secret_and_the_count_is_after_the_discard() -> None:
    """The strong bot's plan (the expert may keep the four in hand: concealed, it earns the
    same bonus, §9); the advice counts what is left after the discard."""
    view = table("Kc Kd Kh Ks 4c 5c 6c 9h Js 2d")
    advice = advise(view, explaining_policy("strong"))
    assert [str(s.move) for s in advice.steps] == ["secret Kc Kd Kh Ks", "discard Js"]
    assert advice.count == 2 + 9 + 10
    assert advice.count_after == 2 + 9
    lines = advice.lines(Card.pretty)
    assert "suggest: secret K♣ K♦ K♥ K♠ · discard J♠ → count 11" in lines
    assert any("face down" in line and "K♣" in line for line in lines)
    assert not any("Kc" in line for line in lines)


def test_concealed_melds_count_counts_every_card_in_hand() -> None:
    """§10 ``concealed_melds_count``: melds kept in hand count, so the advice lays them down."""
    plain, concealed = Options(), Options(concealed_melds_count=True)
    hand = "Ac 2c 3c 4d 4h 4s 5s"
    assert table(hand, options=plain).count() == 5
    assert table(hand, options=concealed).count() == 1 + 2 + 3 + 4 * 3 + 5
    advice = advise(table(hand, options=concealed))
    assert advice.count == 23 and "melds kept in hand" in advice.lines()[0]
    assert [s.move.action for s in advice.steps][:2] == [Action.MELD, Action.MELD]
    assert table(hand, options=concealed).count(parse_cards("Ac 2c 3c")) == 17


def test_refusals_from_the_view_carry_the_engines_codes() -> None:
    view = table("7h 7s 5h 6h Kd 3d", phase=Phase.START, melds=((2, "4d 5d 6d"),), top="7c")
    def code(text: str) -> str | None:
        error = view.why_illegal(Move.parse(text))
        return None if error is None else error.code
    assert code("pick 7h 7s") is None
    assert code("pick 5h 6h") == "pick_needs_meld"
    assert code("discard Kd") == "must_acquire"
    assert code("call") == "not_opened"
    assert code("sapaw 3d 0") == "must_acquire"
    assert code("fold") == "no_call"
    spectator = seat_view(view.position(), None)
    assert spectator.why_illegal(Move.parse("draw")).code == "not_your_turn"  # type: ignore[union-attr]


def test_advice_when_not_to_act() -> None:
    view = table("Kc Kd Kh Ks 4c 5c 6c 9h Js 2d")
    waiting = seat_view(view.position(), 1)
    assert advise(waiting).steps == () and "wait" in advise(waiting).note
    assert "watching" in advise(seat_view(view.position(), None)).note


@settings(max_examples=12, deadline=None)
@given(SEEDS)
def test_the_hint_is_the_experts_decision_and_says_why_in_the_screens_notation(
    seed: int,
) -> None:
    """For one position of each random hand where the seat has a choice: the advice's first
    move is what the expert plays from that view, the same view always gets the same advice,
    and each suggested move is shown with its reason, its cards written as the hand shows them
    (``K♦``) and never in the text notation (``Kd``)."""
    rng = random.Random(seed)
    chosen = [h.copy() for h in states(seed) if not h.over and len(h.legal_moves()) > 1]
    if not chosen:
        return
    hand = rng.choice(chosen)
    view = seat_view(hand, hand.to_act)
    advice = advise(view)
    assert advice.steps[0].move == ExpertPolicy()(view)
    assert advise(view) == advice
    lines = advice.lines(Card.pretty)
    for step in advice.steps:
        said = f"{step.move.text(Card.pretty)}: {step.reason(Card.pretty)}"
        assert said in lines
        assert step.reason() == "the only legal move" or "dealt worlds" in step.reason()
    assert not any(_CARD_TEXT.search(line) for line in lines), lines


def test_the_hint_seldom_calls_on_a_high_count_that_an_opened_rival_may_challenge() -> None:
    """At the start of a turn where the seat counts 30 or more and another seat has opened (so
    may challenge), a call is challenged whenever that seat counts less, which with its melds
    kept in hand is common: the hint must rarely say ``call``. The search once had its imagined
    opponents challenge only at 9 or less, and advised calling in nearly every such position
    (126 of 127 over 40 deals), at counts up to 63."""
    bots = [get_policy("strong", s) for s in range(3)]
    expert = ExpertPolicy(0, ExpertParams(budget=48))
    seen = calls = 0
    for i in range(30):
        hand = Hand(deck_for("hint-call", i), i % 3)
        while not hand.over:
            seat = hand.to_act
            view = seat_view(hand, seat)
            opened = any(view.opened[s] for s in range(3) if s != seat)
            if Move(Action.CALL) in view.legal and view.count() >= 30 and opened:
                seen += 1
                calls += expert(view) == Move(Action.CALL)
            hand.apply(seat, bots[seat](view))
    assert seen >= 50
    assert calls <= 0.15 * seen, (calls, seen)
