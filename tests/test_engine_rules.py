"""Scripted deals with exact outcomes for every rule of RULES.md §2-§9 and every option of §10.

``deal`` builds the 52-card deck that gives each seat the cards asked for, honouring the dealing
order of §3 (position ``i < 37`` goes to seat ``(dealer + i) % 3``; ``deck[37]`` tops the stock).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest
from tongits.engine import (
    DECK,
    Action,
    Card,
    End,
    Hand,
    IllegalMove,
    Match,
    Move,
    Options,
    Phase,
    Result,
    Why,
    deck_for,
    hand_record,
    parse_cards,
    seat_view,
)
from tongits.engine.options import CallTie, SapawBlock, Scoring, StockoutNoneOpen
from tongits.engine.wire import ResultMap


def _safe(hand: Sequence[Card], card: Card) -> bool:
    """Whether ``card`` joins ``hand`` without making a new meld in it."""
    held = set(hand)
    if sum(1 for c in hand if c.rank == card.rank) >= 2:
        return False

    def has(offset: int) -> bool:
        rank = card.rank + offset
        return 1 <= rank <= 13 and Card.of(rank, card.suit) in held

    return not ((has(-2) and has(-1)) or (has(-1) and has(1)) or (has(1) and has(2)))


def deal(hands: Sequence[str], stock: str = "", dealer: int = 0) -> list[str]:
    """The deck giving seat ``s`` the cards ``hands[s]`` and a stock that starts with ``stock``
    (top first). Seats are filled up with cards that make no new meld in them, high ranks first,
    and the rest goes to the bottom of the stock."""
    wanted = [list(parse_cards(h)) for h in hands]
    top = list(parse_cards(stock))
    used = [c for h in wanted for c in h] + top
    assert len(set(used)) == len(used), "a card is asked for twice"
    pool = sorted((c for c in DECK if c not in set(used)), key=lambda c: (-c.rank, c.suit))
    for seat in range(3):
        size = 13 if seat == dealer else 12
        assert len(wanted[seat]) <= size
        while len(wanted[seat]) < size:
            card = next(c for c in pool if _safe(wanted[seat], c))
            pool.remove(card)
            wanted[seat].append(card)
    deck: list[Card] = []
    taken = [0, 0, 0]
    for i in range(37):
        seat = (dealer + i) % 3
        deck.append(wanted[seat][taken[seat]])
        taken[seat] += 1
    deck += top + pool
    return [str(c) for c in deck]


def new_hand(hands: Sequence[str], stock: str = "", dealer: int = 0, **options: Any) -> Hand:
    return Hand(deal(hands, stock, dealer), dealer, Options(**options))


def play(hand: Hand, script: str) -> None:
    """Apply moves written ``SEAT command`` separated by ``;`` or new lines."""
    for line in script.replace(";", "\n").splitlines():
        if line.strip():
            seat, text = line.split(None, 1)
            hand.apply(int(seat), Move.parse(text))


def cycle(hand: Hand, turns: int = 1) -> None:
    """The seat to act draws and discards the card it drew, ``turns`` times."""
    for _ in range(turns):
        assert hand.phase is Phase.START
        seat, card = hand.to_act, hand.stock[-1]
        hand.apply(seat, Move.draw())
        hand.apply(seat, Move.discard(card))


def illegal(hand: Hand, seat: int, text: str) -> str:
    """Apply a move that must be refused; check nothing changed and return the error code."""
    before = json.dumps(hand_record(hand)), json.dumps(seat_view(hand, seat).to_dict())
    move = Move.parse(text)
    assert move not in hand.legal_moves(seat)
    with pytest.raises(IllegalMove) as info:
        hand.apply(seat, move)
    assert hand.why_illegal(seat, move) is not None
    assert (json.dumps(hand_record(hand)), json.dumps(seat_view(hand, seat).to_dict())) == before
    return info.value.code


def legal(hand: Hand, text: str) -> bool:
    return Move.parse(text) in hand.legal_moves()


def result(hand: Hand) -> ResultMap:
    assert hand.result is not None
    return hand.result.to_dict()


# ----- the deal and the dealer's first turn (§3, §4) -----------------------------------------


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_deal_follows_the_dealing_order(dealer: int) -> None:
    hands = ["7c 7h 7s", "2d 3d", "Kd"]
    deck = deal(hands, "Qs Jh", dealer)
    hand = Hand(deck, dealer)
    for seat in range(3):
        assert len(hand.hands[seat]) == (13 if seat == dealer else 12)
        assert set(parse_cards(hands[seat])) <= hand.hands[seat]
        assert all(str(deck[i]) in map(str, hand.hands[(dealer + i) % 3]) for i in range(37))
    assert [str(c) for c in hand.stock[::-1][:2]] == ["Qs", "Jh"] == deck[37:39]
    assert len(hand.stock) == 15 and hand.discards == []
    assert (hand.to_act, hand.phase, hand.turn) == (dealer, Phase.PLAY, 0)


def test_dealers_first_turn_has_no_draw_pick_or_call() -> None:
    hand = new_hand(["7c 7h 7s Kd", "", ""])
    actions = {m.action for m in hand.legal_moves()}
    assert actions == {Action.MELD, Action.DISCARD}
    assert illegal(hand, 0, "draw") == "dealer_first_turn"
    assert illegal(hand, 0, "call") == "dealer_first_turn"
    assert illegal(hand, 1, "draw") == "not_your_turn"
    play(hand, "0 meld 7c 7h 7s")
    assert illegal(hand, 0, "call") == "dealer_first_turn"
    play(hand, "0 discard Kd")
    assert (hand.to_act, hand.phase) == (1, Phase.START)
    assert illegal(hand, 1, "call") == "not_opened"
    assert illegal(hand, 1, "discard " + str(min(hand.hands[1]))) == "must_acquire"
    assert {m.action for m in hand.legal_moves()} <= {Action.DRAW, Action.PICK}
    play(hand, "1 draw")
    assert illegal(hand, 1, "draw") == "already_acquired"
    assert illegal(hand, 1, "challenge") == "no_call"


# ----- pick (§4, §12 example 1) ---------------------------------------------------------------


def test_pick_only_forms_a_new_meld_with_two_hand_cards() -> None:
    hand = new_hand(["7c", "7h 7s 5h 6h Kd", ""])
    play(hand, "0 discard 7c")
    assert illegal(hand, 1, "pick 5h 6h") == "pick_needs_meld"
    assert illegal(hand, 1, "pick 7h") == "pick_needs_meld"
    assert illegal(hand, 1, "pick 0") == "pick_needs_meld"  # no pick_to_sapaw
    assert legal(hand, "pick 7h 7s") and not legal(hand, "pick 5h 6h")
    play(hand, "1 pick 7h 7s")
    assert [str(c) for c in hand.melds[0].cards] == ["7c", "7h", "7s"]
    assert hand.melds[0].owner == 1 and hand.opened(1) and not hand.discards
    assert len(hand.hands[1]) == 10 and hand.phase is Phase.PLAY
    assert illegal(hand, 1, "draw") == "already_acquired"
    play(hand, "1 discard Kd")
    assert hand.discards == [Card.parse("Kd")] and hand.to_act == 2


def test_pick_with_the_empty_pile_and_cards_not_held() -> None:
    hand = new_hand(["7c 9c", "7h 7s 8c", ""])
    play(hand, "0 discard 9c")
    assert illegal(hand, 1, "pick 7h 7c") == "card_not_in_hand"
    assert illegal(hand, 1, "pick 7h 7s") == "pick_needs_meld"  # 9c on top, not 7c


# ----- meld, secret, sapaw (§4) ---------------------------------------------------------------


def test_meld_must_be_a_meld_of_held_cards() -> None:
    hand = new_hand(["Qc Kc Ac 2c 3c 5d 5h", "", ""])
    assert illegal(hand, 0, "meld Qc Kc Ac") == "not_a_meld"
    assert illegal(hand, 0, "meld Kc Ac 2c") == "not_a_meld"
    assert illegal(hand, 0, "meld 5d 5h") == "not_a_meld"
    assert illegal(hand, 0, "meld 5d 5h 5s") == "card_not_in_hand"
    assert illegal(hand, 0, "secret 5d 5h 5c 5s") == "card_not_in_hand"
    assert illegal(hand, 0, "secret Ac 2c 3c") == "not_four_of_a_kind"
    play(hand, "0 meld Ac 2c 3c")
    assert hand.melds[0].id == 0 and hand.opened(0)


def test_secret_meld_is_hidden_until_the_hand_ends() -> None:
    hand = new_hand(["Qc Qd Qh Qs 2d", "", ""])
    play(hand, "0 secret Qs Qh Qd Qc; 0 discard 2d")
    queens = ["Qc", "Qd", "Qh", "Qs"]
    assert hand.opened(0) and hand.melds[0].secret
    for seat in (1, 2, None):
        view = seat_view(hand, seat)
        assert view.melds[0].cards == () and view.melds[0].secret and view.melds[0].owner == 0
        text = json.dumps(view.to_dict())
        assert not any(q in text for q in queens)
        assert view.history[0].to_dict() == {"seat": 0, "action": "secret"}
    assert [str(c) for c in seat_view(hand, 0).melds[0].cards] == queens
    assert [str(c) for c in seat_view(hand, 0).history[0].move.cards] == queens
    cycle(hand, 2)
    play(hand, "0 call")  # a secret meld opens the hand; seats 1 and 2 fold automatically
    assert hand.over
    for seat in (1, 2, None):
        assert [str(c) for c in seat_view(hand, seat).melds[0].cards] == queens
        assert seat_view(hand, seat).revealed is not None
    # payments: 1 for the call + 3 for the secret, +1 for each burned loser
    assert result(hand) == {
        "end": "call",
        "winner": 0,
        "counts": result(hand)["counts"],
        "burned": [1, 2],
        "challengers": [],
        "chips": [10, -5, -5],
    }
    assert [s.auto for s in hand.steps[-2:]] == [True, True]
    assert [a["action"] for a in hand_record(hand)["actions"]][-1] == "call"


def test_sapaw_grows_runs_at_both_ends_never_past_ace_or_king() -> None:
    hand = new_hand(["2d 3d 4d Ad 5d Kd Jh Qh Kh Ah Th 6c 8s", "", ""])
    play(hand, "0 meld 2d 3d 4d")
    assert illegal(hand, 0, "sapaw Kd 0") == "cannot_sapaw"
    assert illegal(hand, 0, "sapaw 6c 0") == "cannot_sapaw"
    assert illegal(hand, 0, "sapaw Ad 1") == "no_such_meld"
    play(hand, "0 sapaw Ad 0")
    assert illegal(hand, 0, "sapaw Kd 0") == "cannot_sapaw"  # never below A
    play(hand, "0 sapaw 5d 0; 0 meld Jh Qh Kh")
    assert illegal(hand, 0, "sapaw Ah 1") == "cannot_sapaw"  # never above K
    play(hand, "0 sapaw Th 1")
    assert [str(c) for c in hand.melds[0].cards] == ["Ad", "2d", "3d", "4d", "5d"]
    assert [str(c) for c in hand.melds[1].cards] == ["Th", "Jh", "Qh", "Kh"]
    assert seat_view(hand, 1).melds[0].to_dict()["laid_off"] == {"Ad": 0, "5d": 0}


def test_set_of_three_takes_its_fourth_and_secret_takes_nothing() -> None:
    hand = new_hand(["9c 9d 9h 9s 8c Qc Qd Qh Qs Kc", "", ""])
    play(hand, "0 meld 9c 9d 9h; 0 secret Qc Qd Qh Qs")
    assert illegal(hand, 0, "sapaw 8c 0") == "cannot_sapaw"
    assert illegal(hand, 0, "sapaw Kc 1") == "cannot_sapaw"
    assert not any(m.action is Action.SAPAW and m.meld == 1 for m in hand.legal_moves())
    play(hand, "0 sapaw 9s 0")
    assert len(hand.melds[0].cards) == 4
    assert not any(m.action is Action.SAPAW for m in hand.legal_moves())


def test_laying_off_does_not_open_a_hand() -> None:
    hand = new_hand(["4d 5d 6d", "7d", ""])
    play(hand, "0 meld 4d 5d 6d")
    play(hand, "0 discard " + str(max(hand.hands[0])))
    play(hand, "1 draw; 1 sapaw 7d 0")
    assert not hand.opened(1)
    play(hand, "1 discard " + str(max(hand.hands[1])))
    cycle(hand, 2)
    assert illegal(hand, 1, "call") == "not_opened"


# ----- the sapaw block on calls (§5, §12 example 2) -------------------------------------------


def _example_two(**options: Any) -> Hand:
    """RULES §12 example 2: seat 0 lays 7d then 8d off onto seat 2's meld 3 = 4d 5d 6d."""
    hand = new_hand(["Ac Ad Ah 2c 2d 2h 3c 3d 3h 7d 8d Ks", "", "4d 5d 6d"], **options)
    play(hand, "0 meld Ac Ad Ah; 0 meld 2c 2d 2h; 0 meld 3c 3d 3h; 0 discard Ks")
    cycle(hand)  # seat 1
    drawn = hand.stock[-1]
    play(hand, f"2 draw; 2 meld 4d 5d 6d; 2 discard {drawn}")
    drawn = hand.stock[-1]
    play(hand, f"0 draw; 0 sapaw 7d 3; 0 sapaw 8d 3; 0 discard {drawn}")
    assert [str(c) for c in hand.melds[3].cards] == ["4d", "5d", "6d", "7d", "8d"]
    assert hand.melds[3].owner == 2
    cycle(hand)  # seat 1
    return hand


def test_sapaw_blocks_the_owners_call_at_its_next_turn() -> None:
    hand = _example_two()
    assert hand.to_act == 2 and seat_view(hand, 1).blocked == (False, False, True)
    assert illegal(hand, 2, "call") == "call_blocked"
    cycle(hand, 3)
    assert hand.to_act == 2 and legal(hand, "call")


def test_option_sapaw_block_hand_lasts_the_whole_hand() -> None:
    hand = _example_two(sapaw_block=SapawBlock.HAND)
    assert illegal(hand, 2, "call") == "call_blocked"
    cycle(hand, 3)
    assert illegal(hand, 2, "call") == "call_blocked"
    cycle(hand, 3)
    assert illegal(hand, 2, "call") == "call_blocked"


def _self_sapaw(**options: Any) -> Hand:
    hand = new_hand(["", "", "4d 5d 6d 7d"], **options)
    play(hand, "0 discard " + str(max(hand.hands[0])))
    cycle(hand)
    drawn = hand.stock[-1]
    play(hand, f"2 draw; 2 meld 4d 5d 6d; 2 sapaw 7d 0; 2 discard {drawn}")
    cycle(hand, 2)
    return hand


def test_option_self_sapaw_blocks_call() -> None:
    assert legal(_self_sapaw(), "call")
    hand = _self_sapaw(self_sapaw_blocks_call=True)
    assert illegal(hand, 2, "call") == "call_blocked"
    cycle(hand, 3)
    assert legal(hand, "call")  # next_turn: the block is over
    hand = _self_sapaw(self_sapaw_blocks_call=True, sapaw_block=SapawBlock.HAND)
    cycle(hand, 3)
    assert illegal(hand, 2, "call") == "call_blocked"


# ----- Tongits (§6.1) -------------------------------------------------------------------------

FOUR_MELDS = "Ac 2c 3c 4d 5d 6d 7h 8h 9h Ts Js Qs Ks"
TONGITS_RESULT_CHIPS = [10, -5, -5]  # 3 for a Tongits + 1 for Ac, +1 from each burned loser


def test_tongits_by_meld() -> None:
    hand = new_hand([FOUR_MELDS, "", ""])
    play(hand, "0 meld Ac 2c 3c; 0 meld 4d 5d 6d; 0 meld 7h 8h 9h; 0 meld Ts Js Qs Ks")
    r = result(hand)
    assert (r["end"], r["winner"], r["burned"], r["chips"]) == (
        "tongits",
        0,
        [1, 2],
        TONGITS_RESULT_CHIPS,
    )
    assert r["counts"][0] == 0 and hand.legal_moves() == []
    assert illegal(hand, 0, "discard Ks") == "hand_over"
    # 3 for the Tongits and 1 for the ace (Ac), from each; both losers burned
    assert _why(hand)[1] == [("tongits", -3, 1), ("aces", -1, 1), ("burned", -1, 1)]


def test_tongits_by_sapaw_and_by_discard() -> None:
    hand = new_hand([FOUR_MELDS, "", ""])
    play(hand, "0 meld Ac 2c 3c; 0 meld 4d 5d 6d; 0 meld 7h 8h 9h; 0 meld Ts Js Qs")
    play(hand, "0 sapaw Ks 3")
    assert result(hand)["end"] == "tongits" and result(hand)["chips"] == TONGITS_RESULT_CHIPS
    hand = new_hand([FOUR_MELDS, "", ""])
    play(hand, "0 meld Ac 2c 3c; 0 meld 4d 5d 6d; 0 meld 7h 8h 9h; 0 meld Ts Js Qs")
    play(hand, "0 discard Ks")
    assert result(hand)["end"] == "tongits" and hand.discards[-1] == Card.parse("Ks")


def test_option_tongits_needs_discard() -> None:
    hand = new_hand([FOUR_MELDS, "", ""], tongits_needs_discard=True)
    play(hand, "0 meld Ac 2c 3c; 0 meld 4d 5d 6d; 0 meld 7h 8h 9h")
    assert illegal(hand, 0, "meld Ts Js Qs Ks") == "must_keep_card"
    play(hand, "0 meld Ts Js Qs")
    assert illegal(hand, 0, "sapaw Ks 3") == "must_keep_card"
    assert hand.legal_moves() == [Move.discard(Card.parse("Ks"))]
    play(hand, "0 discard Ks")
    assert result(hand)["end"] == "tongits" and result(hand)["chips"] == TONGITS_RESULT_CHIPS


def _tongits_by_pick(**options: Any) -> Hand:
    """Seat 1 melds ten cards, keeps Kc Ks, and picks the Kh that seat 0 discards."""
    hand = new_hand(["Kh", "2h 3h 4h 5h 6c 7c 8c 9s 9d 9c Kc Ks", ""], stock="Jd", **options)
    play(hand, "0 discard " + str(min(hand.hands[0] - {Card.parse("Kh")})))
    play(hand, "1 draw; 1 meld 2h 3h 4h 5h; 1 meld 6c 7c 8c; 1 meld 9s 9d 9c; 1 discard Jd")
    cycle(hand)
    drawn = hand.stock[-1]
    play(hand, "0 draw; 0 discard Kh")
    assert drawn in hand.hands[0]
    return hand


def test_tongits_by_pick() -> None:
    hand = _tongits_by_pick()
    play(hand, "1 pick Kc Ks")
    r = result(hand)
    assert (r["end"], r["winner"], r["counts"][1], r["burned"]) == ("tongits", 1, 0, [0, 2])
    assert r["chips"] == [-4, 8, -4]  # 3 each, +1 per burned loser, no aces


def test_option_tongits_needs_discard_refuses_an_emptying_pick() -> None:
    hand = _tongits_by_pick(tongits_needs_discard=True)
    assert illegal(hand, 1, "pick Kc Ks") == "must_keep_card"
    assert hand.legal_moves() == [Move.draw()] or all(
        m.action is not Action.PICK for m in hand.legal_moves()
    )


def test_tongits_by_a_seat_that_never_opened_does_not_burn_it() -> None:
    # §8: the winner is never burned, however it won; seat 1 owns no meld but lays off its
    # whole hand onto seat 0's runs and discards the card it drew
    hand = new_hand(["Ac 2c 3c Ad 2d 3d", "4c 5c 6c 7c 8c 9c Tc Jc Qc Kc 4d 5d", ""], stock="9s")
    play(hand, "0 meld Ac 2c 3c; 0 meld Ad 2d 3d")
    play(hand, "0 discard " + str(min(hand.hands[0])))
    play(hand, "1 draw; " + "; ".join(f"1 sapaw {r}c 0" for r in "456789TJQK"))
    play(hand, "1 sapaw 4d 1; 1 sapaw 5d 1; 1 discard 9s")
    assert not hand.opened(1)
    r = result(hand)
    assert (r["end"], r["winner"], r["burned"]) == ("tongits", 1, [2])
    assert r["chips"] == [-3, 7, -4]  # 3 from each loser, +1 from burned seat 2; no aces


# ----- call (§6.2) ----------------------------------------------------------------------------

CALL_HANDS = {  # by role: the dealer (caller), the next seat, the one after
    "caller": ("7c 8c 9c", "4s 5s 6s Th Jh Qh", "Ks"),
    "first": ("2h 3h 4h", "9d Td Jd 5c 5d 5h", ""),
    "second": ("6h 7h 8h", "Jc Qc Kc 2c 2d 2s", ""),
}


def call_hand(
    dead: tuple[str, str, str],
    *,
    dealer: int = 0,
    second_opens: bool = True,
    **options: Any,
) -> Hand:
    """The dealer melds, the next two seats draw (and meld), then the dealer is to call. Each
    role keeps two concealed melds and three deadwood cards ``dead``."""
    hands = ["", "", ""]
    for offset, (role, extra) in enumerate(zip(CALL_HANDS, dead, strict=True)):
        meld, concealed, discard = CALL_HANDS[role]
        hands[(dealer + offset) % 3] = " ".join((meld, concealed, extra, discard))
    hand = new_hand(hands, dealer=dealer, **options)
    first, second = (dealer + 1) % 3, (dealer + 2) % 3
    play(hand, f"{dealer} meld 7c 8c 9c; {dealer} discard Ks")
    drawn = hand.stock[-1]
    play(hand, f"{first} draw; {first} meld 2h 3h 4h; {first} discard {drawn}")
    drawn = hand.stock[-1]
    play(hand, f"{second} draw")
    if second_opens:
        play(hand, f"{second} meld 6h 7h 8h")
    play(hand, f"{second} discard {drawn}")
    assert hand.to_act == dealer and hand.phase is Phase.START
    return hand


# deadwood by count; none of them makes a meld with a role's cards
D13A, D13B, D16 = "3c 4d 6d", "3d 4c 6c", "3d 6c 7s"
D25, D27, D30 = "8s 7d Qs", "8s 9s Qd", "Ts Js Kd"


def test_call_nobody_challenges() -> None:
    hand = call_hand((D13A, D13B, D30))
    assert legal(hand, "call")
    play(hand, "0 call")
    assert (hand.phase, hand.to_act) == (Phase.ANSWER, 1)
    assert {str(m) for m in hand.legal_moves()} == {"challenge", "fold"}
    assert illegal(hand, 1, "draw") == "must_answer"
    assert illegal(hand, 2, "fold") == "not_your_turn"
    play(hand, "1 fold")
    assert hand.to_act == 2
    # seen by seat 2
    assert seat_view(hand, 2).history[-1].to_dict() == {"seat": 1, "action": "fold"}
    play(hand, "2 fold")
    assert result(hand) == {
        "end": "call",
        "winner": 0,
        "counts": [13, 13, 30],
        "burned": [],
        "challengers": [],
        "chips": [2, -1, -1],
    }


def test_call_challenger_with_lower_count_wins_three_chips() -> None:
    hand = call_hand((D25, D13B, D13A))
    play(hand, "0 call; 1 challenge; 2 fold")  # seat 2 folds with the lower count
    assert result(hand) == {
        "end": "call",
        "winner": 1,
        "counts": [25, 13, 13],
        "burned": [],
        "challengers": [1],
        "chips": [-3, 6, -3],
    }


def test_call_caller_with_lower_count_beats_a_challenge() -> None:
    hand = call_hand((D13A, D25, D30))
    play(hand, "0 call; 1 challenge; 2 challenge")
    r = result(hand)
    assert (r["winner"], r["challengers"], r["chips"]) == (0, [1, 2], [6, -3, -3])


@pytest.mark.parametrize(("tie", "winner"), [(CallTie.CHALLENGER, 1), (CallTie.CALLER, 0)])
def test_option_call_tie(tie: CallTie, winner: int) -> None:
    hand = call_hand((D13A, D13B, D30), call_tie=tie)
    play(hand, "0 call; 1 challenge; 2 fold")
    r = result(hand)
    assert r["counts"] == [13, 13, 30] and r["winner"] == winner


def test_call_two_challengers_tie_first_after_the_caller_wins() -> None:
    # the dealer and caller is seat 1: seat 2 answers first, then seat 0
    hand = call_hand((D27, D13A, D13B), dealer=1)
    play(hand, "1 call")
    assert hand.to_act == 2
    play(hand, "2 challenge; 0 challenge")
    r = result(hand)
    assert r["counts"] == [13, 27, 13] and r["winner"] == 2 and sorted(r["challengers"]) == [0, 2]
    for tie in CallTie:  # the caller's tie rule does not matter between two challengers
        hand = call_hand((D27, D13A, D13B), dealer=1, call_tie=tie)
        play(hand, "1 call; 2 challenge; 0 challenge")
        assert result(hand)["winner"] == 2


def test_call_unopened_seat_folds_automatically_and_is_burned() -> None:
    hand = call_hand((D13A, D25, D16), second_opens=False)
    play(hand, "0 call; 1 challenge")
    r = result(hand)
    # seat 2 never answered: it folded automatically; its concealed 6h7h8h still count nothing
    assert r == {
        "end": "call",
        "winner": 0,
        "counts": [13, 25, 16],
        "burned": [2],
        "challengers": [1],
        "chips": [7, -3, -4],
    }
    auto = [s for s in hand.steps if s.auto]
    assert [(s.seat, s.move.action) for s in auto] == [(2, Action.FOLD)]
    assert {"seat": 2, "action": "fold"} not in hand_record(hand)["actions"]
    assert seat_view(hand, 1).history[-1].to_dict() == {"seat": 2, "action": "fold", "auto": True}


def test_call_blocked_and_not_on_the_play_step() -> None:
    hand = call_hand((D13A, D13B, D30))
    play(hand, "0 draw")
    assert illegal(hand, 0, "call") == "call_at_start"


# ----- stock exhausted (§6.3, §12 example 4) ---------------------------------------------------


def stock_hand(
    dealer_dead: str,
    second_dead: str,
    *,
    second_opens: bool,
    none_open: bool = False,
    **options: Any,
) -> Hand:
    """Dealer 1 (who draws the last stock card), seat 2 then seat 0; everybody else draws and
    discards what they drew until the stock runs out."""
    hands = [
        "7c 8c 9c 4s 5s 6s Th Jh Qh 2s 3c 7d",  # count 12
        f"9d Td Jd 5c 5d 5h Jc Qc Kc {dealer_dead} Qs",
        f"Ah 2h 3h 4h 8d 8h 8s Kd Kh Ks {second_dead}",
    ]
    hand = new_hand(hands, dealer=1, **options)
    if not none_open:
        play(hand, "1 meld 9d Td Jd; 1 meld 5c 5d 5h; 1 meld Jc Qc Kc")
    play(hand, "1 discard Qs")
    drawn = hand.stock[-1]
    play(hand, "2 draw" + ("; 2 meld 8d 8h 8s" if second_opens else "") + f"; 2 discard {drawn}")
    drawn = hand.stock[-1]
    play(hand, "0 draw" + ("" if none_open else "; 0 meld 7c 8c 9c") + f"; 0 discard {drawn}")
    cycle(hand, 12)
    assert len(hand.stock) == 1 and hand.to_act == 1
    return hand


def test_stock_out_example_four_last_drawer_wins_the_tie() -> None:
    hand = stock_hand("2c 4c 6d", "Ac 2d", second_opens=False)
    play(hand, "1 draw")
    assert not hand.stock and not hand.over  # the last drawer finishes the turn
    drawn = max(hand.hands[1] - set(parse_cards("2c 4c 6d")))
    play(hand, f"1 discard {drawn}")
    assert result(hand) == {
        "end": "stock",
        "winner": 1,
        "counts": [12, 12, 3],
        "burned": [2],
        "challengers": [],
        "chips": [-1, 3, -2],
    }


def test_stock_out_tie_goes_first_in_turn_order_after_the_last_drawer() -> None:
    hand = stock_hand("3s 4c 6d", "2d Ts", second_opens=True)
    cycle(hand)
    r = result(hand)
    assert (r["end"], r["counts"], r["winner"], r["burned"]) == ("stock", [12, 13, 12], 2, [])


@pytest.mark.parametrize("value", list(StockoutNoneOpen))
def test_option_stockout_none_open(value: StockoutNoneOpen) -> None:
    hand = stock_hand(
        "2c 4c 6d", "Ac 2d", second_opens=False, none_open=True, stockout_none_open=value
    )
    cycle(hand)
    assert not any(hand.opened(s) for s in range(3))
    r = result(hand)
    if value is StockoutNoneOpen.COMPARE_ALL:
        assert (r["end"], r["winner"], r["counts"]) == ("stock", 2, [12, 12, 3])
        assert r["burned"] == [0, 1]  # the winner is never burned
        assert r["chips"] == [-4, -4, 8]  # 1 + Ah + Ac each, +1 for being burned
    else:
        assert r == {
            "end": "void",
            "winner": None,
            "counts": [12, 12, 3],
            "burned": [0, 1, 2],
            "challengers": [],
            "chips": [0, 0, 0],
        }


# ----- options that change what may be played -------------------------------------------------


@pytest.mark.parametrize("last", ["Ks", "6h"])
def test_option_no_sapawable_discard(last: str) -> None:
    cards = f"Ac 2c 3c 4d 5d 6d 7h 8h 9h 4c 7d Th {last}"
    for flag in (False, True):
        hand = new_hand([cards, "", ""], no_sapawable_discard=flag)
        play(hand, "0 meld Ac 2c 3c; 0 meld 4d 5d 6d; 0 meld 7h 8h 9h")
        discards = {str(m) for m in hand.legal_moves() if m.action is Action.DISCARD}
        if flag and last == "Ks":
            assert discards == {"discard Ks"}
            assert illegal(hand, 0, "discard 4c") == "sapawable_discard"
        else:  # without the option, or when every card could be laid off
            assert discards == {f"discard {c}" for c in ("4c", "7d", "Th", last)}
            play(hand, "0 discard 4c")


@pytest.mark.parametrize("flag", [False, True])
def test_option_concealed_melds_count(flag: bool) -> None:
    hand = call_hand((D13A, D30, D16), concealed_melds_count=flag)
    play(hand, "0 call; 1 fold; 2 challenge")
    r = result(hand)
    if flag:  # 4s5s6s ThJhQh now count: 15 + 30 + 13 against 2c2d2s JcQcKc: 6 + 30 + 16
        assert (r["counts"], r["winner"]) == ([58, 74, 52], 2)
    else:
        assert (r["counts"], r["winner"]) == ([13, 30, 16], 0)


def _pick_to_sapaw(**options: Any) -> Hand:
    hand = new_hand(["4d 5d 6d 7d", "", ""], **options)
    play(hand, "0 meld 4d 5d 6d; 0 discard 7d")
    return hand


def test_option_pick_to_sapaw() -> None:
    assert illegal(_pick_to_sapaw(), 1, "pick 0") == "pick_needs_meld"
    hand = _pick_to_sapaw(pick_to_sapaw=True)
    assert legal(hand, "pick 0")
    size = len(hand.hands[1])
    play(hand, "1 pick 0")
    assert hand_record(hand)["actions"][-1] == {"seat": 1, "action": "pick", "meld": 0}
    assert [str(c) for c in hand.melds[0].cards] == ["4d", "5d", "6d", "7d"]
    assert hand.melds[0].laid_off == {Card.parse("7d"): 1}
    assert len(hand.hands[1]) == size and not hand.opened(1) and hand.phase is Phase.PLAY
    play(hand, "1 discard " + str(max(hand.hands[1])))
    cycle(hand)
    assert illegal(hand, 0, "call") == "call_blocked"  # blocks the owner like a sapaw
    cycle(hand)
    assert illegal(hand, 1, "call") == "not_opened"  # and does not open the picker


# ----- settlement (§9) ------------------------------------------------------------------------

SCORING_HANDS = [
    "9c 9d 9h 9s 2h 3h 4h Jc Jd Jh Js Ac Kd",
    "Ah 2c 4d 6h 8s Tc Qd Kh 3s 5c 7d Ts",
    "Qc Qh Qs Ad 3c 4s 6d 8d Td Kc 7h 5h",
]


def _scoring_hand(face_up_four: bool = False, **options: Any) -> Hand:
    """Seat 0 places a secret 9s and the run 2h3h4h (meld 1), keeps Jc..Js and Ac; seat 1 lays
    Ah off onto meld 1; seat 2 opens; seat 0 calls once its block is over."""
    hand = new_hand(SCORING_HANDS, **options)
    play(hand, "0 secret 9c 9d 9h 9s; 0 meld 2h 3h 4h")
    if face_up_four:
        play(hand, "0 meld Jc Jd Jh Js")
    play(hand, "0 discard Kd")
    drawn = hand.stock[-1]
    play(hand, f"1 draw; 1 sapaw Ah 1; 1 discard {drawn}")
    drawn = hand.stock[-1]
    play(hand, f"2 draw; 2 meld Qc Qh Qs; 2 discard {drawn}")
    assert illegal(hand, 0, "call") == "call_blocked"
    cycle(hand, 3)
    play(hand, "0 call; 2 fold")
    return hand


def test_payments_aces_fours_secrets_and_burned() -> None:
    r = result(_scoring_hand())
    # each loser pays 1 (call) + 2 aces (Ac in hand, Ah laid off onto meld 1) + 3 (Jc..Js held)
    # + 3 (the secret) = 9, and seat 1, burned, one more
    assert (r["winner"], r["burned"], r["counts"][0], r["chips"]) == (0, [1], 1, [19, -10, -9])
    # and why, term by term (what a table tells its players beside each seat's sum)
    assert _why(_scoring_hand()) == [
        [("win", 2, 1), ("aces", 4, 2), ("fours", 6, 1), ("secret_melds", 6, 1),
         ("burned", 1, 1)],
        [("win", -1, 1), ("aces", -2, 2), ("fours", -3, 1), ("secret_melds", -3, 1),
         ("burned", -1, 1)],
        [("win", -1, 1), ("aces", -2, 2), ("fours", -3, 1), ("secret_melds", -3, 1)]]
    r = result(_scoring_hand(face_up_four=True))
    assert r["chips"] == [13, -7, -6]  # a four placed face up earns nothing
    r = result(_scoring_hand(concealed_melds_count=True))
    assert r["counts"][0] == 41 and r["chips"] == [19, -10, -9]


def _why(hand: Hand) -> list[list[tuple[str, int, int]]]:
    """Each seat's settlement items as (why, chips, n); their sums are the result's chips."""
    assert hand.result is not None
    items = [[(i.why.value, i.chips, i.n) for i in seat] for seat in hand.settlement]
    # with payments a loser's terms are all paid to the winner; with tally nobody pays
    paid_to = {i.to for seat in hand.settlement for i in seat if i.chips < 0
               and i.why is not Why.LOST_CHALLENGE}
    assert paid_to <= {hand.result.winner}
    assert [sum(chips for _, chips, _ in seat) for seat in items] == list(hand.result.chips)
    return items


def test_option_scoring_tally() -> None:
    r = result(_scoring_hand(scoring=Scoring.TALLY))
    # seat 0: 1 (win) + 2 aces + 3 (Jc..Js concealed) + 3 (secret); seat 2: Ad in hand
    assert r["chips"] == [9, 0, 1]
    assert _why(_scoring_hand(scoring=Scoring.TALLY)) == [
        [("win", 1, 1), ("aces", 2, 2), ("secret_melds", 3, 1), ("concealed_melds", 3, 1)],
        [], [("aces", 1, 1)]]
    r = result(_scoring_hand(face_up_four=True, scoring=Scoring.TALLY))
    assert r["chips"] == [6, 0, 1]
    # concealed melds of four earn nothing when every card counts
    r = result(_scoring_hand(scoring=Scoring.TALLY, concealed_melds_count=True))
    assert r["chips"] == [6, 0, 1]


def test_tally_caller_who_loses_a_challenge_loses_one() -> None:
    hand = call_hand((D25, D13B, D30), scoring=Scoring.TALLY)
    play(hand, "0 call; 1 challenge; 2 fold")
    assert result(hand)["chips"] == [-1, 3, 0]
    assert _why(hand) == [[("lost_challenge", -1, 1)], [("challenged_call", 3, 1)], []]
    hand = call_hand((D13A, D25, D30), scoring=Scoring.TALLY)
    play(hand, "0 call; 1 fold; 2 fold")
    assert result(hand)["chips"] == [1, 0, 0]


# ----- the match: dealer rule, ledger, ante pot (§3, §9, §13) ----------------------------------


def _result(winner: int | None) -> Result:
    if winner is None:
        return Result(End.VOID, None, (5, 5, 5), (0, 1, 2), (), (0, 0, 0))
    chips = [-1, -1, -1]
    chips[winner] = 2
    return Result(End.STOCK, winner, (5, 5, 5), (), (), (chips[0], chips[1], chips[2]))


def test_match_is_reproducible_from_its_seed() -> None:
    a, b = Match(Options(), seed=42), Match(Options(), seed=42)
    assert a.dealer == b.dealer and a.deal().deck == b.deal().deck
    assert Match(Options(), seed=43).deal().deck != Match(Options(), seed=42).deal().deck
    assert Match.from_dict(a.to_dict()) == a


@pytest.mark.parametrize("seed", [0, 42, "a match", 2**63 - 1])
def test_a_deck_is_python_s_shuffle_of_its_seed(seed: int | str) -> None:
    """``deck_for`` writes ``random.Random.shuffle`` out: the same decks, so that records and
    replays from before stay what they were."""
    for number in range(200):
        cards = list(DECK)
        random.Random(f"tongits/{seed}/{number}").shuffle(cards)
        assert deck_for(seed, number) == tuple(cards)


def test_match_dealer_rule() -> None:
    match = Match(Options(), seed=1, dealer=2)
    assert match.deal().dealer == 2
    match.settle(_result(0))
    assert match.dealer == 0 and match.deal().dealer == 0
    match.settle(_result(None))
    assert match.dealer == 0  # no winner: the same dealer deals again
    match.settle(_result(1))
    assert match.dealer == 1 and match.ledger == [1, 1, -2]


def test_option_ante_pot() -> None:
    plain = Match(Options(), seed=1, dealer=0)
    match = Match(Options(ante=2), seed=1, dealer=0)
    taken = []
    for winner in (0, 0, 1, None, 1, 1, 1, 2):
        plain.deal()
        plain.settle(_result(winner))
        match.deal()
        taken.append(match.settle(_result(winner)))
    # hands 1-2: seat 0 wins twice and takes 12; seat 1's streak is broken by the void hand;
    # seat 1 wins hands 5-6 and takes the 4 antes since; its next win starts a new streak
    assert taken == [0, 12, 0, 0, 0, 24, 0, 0]
    assert match.pot == 12
    assert plain.ledger == [-1, 5, -4]
    assert match.ledger == [-1 - 16 + 12, 5 - 16 + 24, -4 - 16]
    assert sum(match.ledger) + match.pot == 0


# ----- malformed moves are refused with a typed error, never applied --------------------------


@pytest.mark.parametrize(
    "move",
    [
        Move(Action.SECRET, parse_cards("Qc Qc Qd Qh")),
        Move(Action.MELD, parse_cards("Qc Qc Qd")),
        Move(Action.MELD),
        Move(Action.DISCARD),
        Move(Action.SAPAW, card=Card.parse("Qc")),
        Move(Action.SAPAW, meld=0),
        Move(Action.DISCARD, parse_cards("Qc Qd Qh"), card=Card.parse("Qc")),
        Move(Action.SECRET, parse_cards("Qc Qd Qh Qs"), meld=0),
    ],
    ids=str,
)
def test_malformed_moves_raise_illegal_move(move: Move) -> None:
    hand = new_hand(["Qc Qd Qh Qs 4d 5d 6d", "", ""])
    play(hand, "0 meld 4d 5d 6d")
    before = json.dumps(hand_record(hand)), sorted(hand.hands[0])
    assert move not in hand.legal_moves()
    assert hand.why_illegal(0, move) is not None
    with pytest.raises(IllegalMove):
        hand.apply(0, move)
    assert (json.dumps(hand_record(hand)), sorted(hand.hands[0])) == before


def test_malformed_pick_is_refused() -> None:
    hand = new_hand(["7c", "7h 7s", ""], pick_to_sapaw=True)
    play(hand, "0 discard 7c")
    for move in (
        Move(Action.PICK),
        Move(Action.PICK, parse_cards("7h 7s"), meld=0),
        Move(Action.PICK, parse_cards("7h 7h")),
        Move(Action.DRAW, parse_cards("7h")),
    ):
        assert move not in hand.legal_moves()
        with pytest.raises(IllegalMove):
            hand.apply(1, move)
    assert not hand.melds and hand.discards


def _laid_off_or_picked() -> Hand:
    """Seat 1 to act, with the discard top ``6d`` that it may pick with ``7d 8d`` or, with
    ``pick_to_sapaw``, lay off onto seat 0's meld 0 (``pick 0``)."""
    hand = new_hand(["6d 3d 4d 5d", "7d 8d 9h", ""], pick_to_sapaw=True)
    play(hand, "0 meld 3d 4d 5d; 0 discard 6d")
    assert legal(hand, "pick 7d 8d") and legal(hand, "pick 0")
    return hand


@pytest.mark.parametrize(
    "action",
    [
        {"action": "pick", "cards": ["7d", "8d"], "meld": 0},
        {"action": "draw", "card": "9h"},
        {"action": "draw", "meld": 0},
        {"action": "call", "cards": ["9h"]},
    ],
    ids=json.dumps,
)
def test_a_wire_move_with_fields_its_action_does_not_take_is_refused(
    action: dict[str, Any],
) -> None:
    """The protocol's and the record's form of a move (``Move.from_dict``) keeps the fields
    its action does not take, so that the rules refuse it (``malformed_move``): ``pick`` with
    cards and a meld id is not played as the lay-off ``pick 0``."""
    hand = _laid_off_or_picked()
    before = json.dumps(hand_record(hand))
    with pytest.raises(IllegalMove) as info:
        hand.apply(1, Move.from_dict(action))
    assert info.value.code == "malformed_move"
    assert json.dumps(hand_record(hand)) == before


@pytest.mark.parametrize(
    "action",
    [
        {"action": "discard", "card": "9h", "cards": ["9h"]},
        {"action": "discard", "card": "9h", "meld": 1},
        {"action": "sapaw", "card": "9h", "meld": 1, "cards": ["9h"]},
        {"action": "meld", "cards": ["6d", "7d", "8d"], "card": "9h"},
    ],
    ids=json.dumps,
)
def test_a_wire_play_with_fields_its_action_does_not_take_is_refused(
    action: dict[str, Any],
) -> None:
    hand = _laid_off_or_picked()
    play(hand, "1 pick 7d 8d")
    before = json.dumps(hand_record(hand))
    with pytest.raises(IllegalMove) as info:
        hand.apply(1, Move.from_dict(action))
    assert info.value.code == "malformed_move"
    assert json.dumps(hand_record(hand)) == before
