"""The optimal count of RULES.md §7, checked against an independent brute-force reference."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tongits.engine import DECK, best_arrangement, hand_count, is_meld, parse_cards
from tongits.engine.cards import cards_of, mask_of
from tongits.engine.count import (
    arrangement_masks,
    deadwood_mask,
    deadwood_points,
    meldable,
    melds_in,
    melds_within,
    pick_partners,
)

RANKS = "A23456789TJQK"


def _rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def _points(card: str) -> int:
    return min(_rank(card), 10)


def _reference_melds(cards: list[str]) -> list[frozenset[str]]:
    """Every meld within ``cards``, from first principles on the two-character notation."""
    held = set(cards)
    out: list[frozenset[str]] = []
    for rank in RANKS:
        same = [c for c in cards if c[0] == rank]
        for size in (3, 4):
            out += [frozenset(combo) for combo in combinations(same, size)]
    for suit in "cdhs":
        for low in range(13):
            run = []
            for rank in RANKS[low:]:
                if rank + suit not in held:
                    break
                run.append(rank + suit)
                if len(run) >= 3:
                    out.append(frozenset(run))
    return out


def reference_count(cards: list[str]) -> tuple[int, int]:
    """(minimum count, most 4+ card melds among arrangements reaching it), by trying every
    collection of disjoint melds."""
    melds = _reference_melds(cards)
    total = sum(_points(c) for c in cards)
    best = (total, 0)

    def search(start: int, used: frozenset[str], covered: int, big: int) -> None:
        nonlocal best
        key = (total - covered, -big)
        if key < (best[0], -best[1]):
            best = (total - covered, big)
        for i in range(start, len(melds)):
            meld = melds[i]
            if not meld & used:
                search(
                    i + 1,
                    used | meld,
                    covered + sum(_points(c) for c in meld),
                    big + (len(meld) >= 4),
                )

    search(0, frozenset(), 0, 0)
    return best


@pytest.mark.parametrize(
    ("cards", "count"),
    [
        ("As 2s 3s 9c 9d Kh", 28),  # RULES §12
        ("7c 7h 7s 8h 9h", 14),  # RULES §12: the run beats the set
        ("", 0),
        ("Kh", 10),
        ("Qc Kc Ac", 21),  # QKA is not a run
        ("Kc Ac 2c", 13),  # nor is KA2
        ("Ac 2c 3c", 0),
        ("5d 5h 5s 5c", 0),
        ("5d 5h 5s 5c 6c 7c", 0),
        ("5d 5h 5s 5c 6c 7c 6h", 6),
        ("Tc Jc Qc Kc Th Ts Jd", 10),
        ("2c 3d 4h 5s", 14),
    ],
)
def test_count_examples(cards: str, count: int) -> None:
    assert hand_count(parse_cards(cards)) == count
    assert best_arrangement(parse_cards(cards)).count == count


def test_concealed_melds_count_counts_every_card() -> None:
    cards = parse_cards("As 2s 3s 9c 9d Kh")
    assert hand_count(cards, concealed_melds_count=True) == 1 + 2 + 3 + 9 + 9 + 10


def test_tie_break_prefers_most_four_card_melds() -> None:
    """``A..8h`` counts 0 as one 8-run, as 3+5 or as 4+4; the tally needs 4+4 (RULES §13)."""
    arrangement = best_arrangement(parse_cards("Ah 2h 3h 4h 5h 6h 7h 8h"))
    assert arrangement.count == 0 and arrangement.big_melds == 2
    arrangement = best_arrangement(parse_cards("3h 4h 5h 6h 7h 8h"))
    assert arrangement.count == 0 and arrangement.big_melds == 1
    # 7c7d7h + 7s8s9s is the only way to 0
    arrangement = best_arrangement(parse_cards("7c 7d 7h 7s 8s 9s"))
    assert arrangement.count == 0 and arrangement.big_melds == 0
    arrangement = best_arrangement(parse_cards("7c 7d 7h 7s 8s 9s Ts"))
    assert arrangement.count == 0 and arrangement.big_melds == 1


SUBDECKS = st.builds(
    lambda suits, low, width: [
        c for c in DECK if str(c)[1] in suits and low <= c.rank < low + width
    ],
    st.sets(st.sampled_from("cdhs"), min_size=1),
    st.integers(1, 13),
    st.integers(3, 13),
)

HANDS = st.one_of(
    st.lists(st.sampled_from(DECK), min_size=1, max_size=14, unique=True),
    SUBDECKS.filter(bool).flatmap(
        lambda deck: st.lists(
            st.sampled_from(deck), min_size=1, max_size=min(14, len(deck)), unique=True
        )
    ),
)


@settings(max_examples=2500, deadline=None)
@given(HANDS)
def test_optimal_count_matches_brute_force(cards: list) -> None:  # type: ignore[type-arg]
    names = [str(c) for c in cards]
    count, big = reference_count(names)
    assert hand_count(cards) == count
    arrangement = best_arrangement(cards)
    assert arrangement.count == count
    assert arrangement.big_melds == big
    placed = [c for meld in arrangement.melds for c in meld]
    assert sorted(placed + list(arrangement.deadwood)) == sorted(cards)
    assert all(is_meld(meld) for meld in arrangement.melds)
    assert sum(c.points for c in arrangement.deadwood) == count
    assert hand_count(cards, concealed_melds_count=True) == sum(c.points for c in cards)


@settings(max_examples=2500, deadline=None)
@given(HANDS)
def test_deadwood_mask_is_the_best_arrangements(cards: list) -> None:  # type: ignore[type-arg]
    """``deadwood_mask`` (the observation's deadwood, with its shortcut when no card lies both
    in a run and in a set) is the deadwood of ``arrangement_masks``, bit for bit; and
    ``deadwood_points`` (the deadwood and its points in one call, suit by suit) is it and the
    hand's count."""
    mask = mask_of(cards)
    assert deadwood_mask(mask) == arrangement_masks(mask)[1]
    dead, points = deadwood_points(mask)
    assert dead == deadwood_mask(mask)
    assert points == sum(c.points for c in cards_of(dead)) == hand_count(cards)


@settings(max_examples=1500, deadline=None)
@given(HANDS, st.sampled_from(DECK))
def test_meld_and_pick_generators_agree_with_the_search(cards: list, top) -> None:  # type: ignore[no-untyped-def, type-arg]
    """``melds_in`` and ``pick_partners`` (move generation) against ``melds_within`` (the
    count's own enumeration) and the reference."""
    mask = mask_of(cards)
    found = melds_in(mask)
    assert len(found) == len(set(found))
    assert set(found) == set(melds_within(mask))
    assert {frozenset(str(c) for c in cards_of(m)) for m in found} == set(
        _reference_melds([str(c) for c in cards])
    )
    joined = 0
    for meld in found:
        joined |= meld
    assert meldable(mask) == joined  # the cards in some meld, found without listing them
    hand = mask & ~top.bit
    partners = pick_partners(hand, top)
    assert len(partners) == len(set(partners))
    assert set(partners) == {m ^ top.bit for m in melds_within(hand | top.bit) if m & top.bit}
