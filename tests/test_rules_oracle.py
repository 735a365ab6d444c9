"""The engine agrees with an independent statement of RULES.md (``rules_oracle``) at every
decision of random matches under every table option, and that statement agrees with the shared
public conformance cases and RULES.md §12's worked examples (so that the oracle is itself
checked against the outside reference). ``bench/oracle_diff.py`` runs many more matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle_check import COMBINATIONS, check_match, replay
from rules_oracle import hand_count
from tongits.engine import Options, parse_cards

CASES = Path(__file__).parents[2] / "shared" / "conformance" / "cases"


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32), combination=st.integers(0, COMBINATIONS - 1))
def test_engine_agrees_with_the_rules_oracle_at_every_decision(seed: int, combination: int
                                                               ) -> None:
    tally = check_match(seed, hands=2, combination=combination)
    assert tally.disagreements == []
    assert tally.hands == 2


@pytest.mark.skipif(not CASES.exists(), reason="no ../shared/conformance next to the repository")
@pytest.mark.parametrize("name", sorted(p.name for p in CASES.glob("*.json")) or ["none"])
def test_the_oracle_passes_the_public_conformance_cases(name: str) -> None:
    case = json.loads((CASES / name).read_text())
    want = case["expect"]
    got = replay(case["record"])
    if "error" in want:
        assert got == {"error": {"index": want["error"]["index"]}}
    else:
        result = want["result"]
        assert got["result"] == {**result, "burned": sorted(result["burned"]),
                                 "challengers": sorted(result["challengers"])}


@pytest.mark.parametrize(("cards", "count"), [
    ("As 2s 3s 9c 9d Kh", 28),  # §12: a run, a pair that is no meld
    ("7c 7h 7s 8h 9h", 14),  # §12: the run 7h 8h 9h beats the set of sevens
])
def test_the_oracle_counts_the_worked_examples(cards: str, count: int) -> None:
    assert hand_count(parse_cards(cards), Options()) == count
