"""``tongits arena --tournament``: every triple plays, every hand is recorded, the ratings
follow the chips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tongits.client.arena import tournament
from tongits.client.arena.tournament import DealMatch
from tongits.client.cli import main


def test_every_triple_of_four_entrants_plays_and_is_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text(
        "from tongits.engine.policies import POLICIES\n"
        "def make(seed):\n    return POLICIES['greedy'](seed)\n"
    )
    records = tmp_path / "records"
    entrants = f"random,greedy,strong,py:{copy}:make"
    code = main(
        ["arena", "--tournament", entrants, "--hands", "6", "--seed", "2", "--record",
         str(records), "--json"]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["triples"]) == 4
    assert {r["name"]: r["matches"] for r in out["ratings"]} == {
        name: 3 * 2 for name in entrants.split(",")
    }
    meta = json.loads((records / "tournament.json").read_text())
    assert sorted(meta["triples"]) == [f"triple{k}" for k in range(4)]
    for k, bots in meta["triples"].items():
        assert json.loads((records / k / "arena.json").read_text())["bots"] == bots
        assert len(list((records / k).glob("deal*-rot*.json"))) == 6


def test_a_triple_of_built_ins_rates_strong_over_greedy_over_random(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["arena", "--tournament", "random,greedy,strong", "--hands", "90", "--seed", "3"])
    assert code == 0
    out = capsys.readouterr().out
    ranked = [line.split()[1] for line in out.splitlines()[2:5]]
    assert ranked == ["strong", "greedy", "random"]


def test_ratings_follow_the_chips_and_the_interval_holds_the_rating() -> None:
    names = ["a", "b", "c", "d"]
    per_triple = [
        [DealMatch(t, (3, 0, -3)) if k % 4 else DealMatch(t, (-1, 2, -1)) for k in range(12)]
        for t in tournament.triples_of(4)
    ]
    rated = tournament.ratings(names, per_triple, resamples=30)
    assert [r.name for r in rated] == ["a", "b", "c", "d"]
    for r in rated:
        assert r.low <= r.mu <= r.high
        assert r.matches == 3 * 12


@pytest.mark.parametrize("entrants", ["random,greedy", "random,greedy,random"])
def test_too_few_or_repeated_entrants_exit_2(
    entrants: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["arena", "--tournament", entrants, "--hands", "3"]) == 2
    assert "tournament" in capsys.readouterr().err
