"""The arena: duplicate deals, the --json line, and --jobs giving the same standings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tongits.client import arena
from tongits.client.cli import main
from tongits.engine import HandRecord


def test_every_bot_plays_every_deal_from_every_seat() -> None:
    for position in range(3):
        assert {arena.seat_of(position, r) for r in range(arena.ROTATIONS)} == {0, 1, 2}
    for rotation in range(arena.ROTATIONS):
        assert sorted(arena.seat_of(p, rotation) for p in range(3)) == [0, 1, 2]


def test_recorded_rotations_share_the_deck_and_rotate_the_bots(tmp_path: Path) -> None:
    code = main(
        [
            "arena",
            "--bots",
            "strong,greedy,random",
            "--hands",
            "12",
            "--seed",
            "5",
            "--record",
            str(tmp_path),
        ]
    )
    assert code == 0
    meta = json.loads((tmp_path / "arena.json").read_text())
    seats = meta["seats"]
    for name in ("strong", "greedy", "random"):
        assert {seats[f"rot{r}"].index(name) for r in range(3)} == {0, 1, 2}
    dealers = set()
    for deal in range(4):
        records = [
            HandRecord.loads((tmp_path / f"deal{deal:06d}-rot{r}.json").read_text())
            for r in range(3)
        ]
        assert len({r.deck for r in records}) == 1
        assert len({r.dealer for r in records}) == 1
        dealers.add(records[0].dealer)
        for record in records:
            hand = record.replay()
            assert hand.result is not None and hand.result.to_dict() == record.result
    assert dealers == {0, 1, 2}


def _json_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(argv) == 0
    out = capsys.readouterr().out.strip().splitlines()
    data: dict[str, Any] = json.loads(out[-1])
    return data


def test_json_line_shape(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json_line(
        capsys, ["arena", "--bots", "greedy,random,random", "--hands", "30", "--json"]
    )
    assert data["hands"] == 30
    assert [b["name"] for b in data["bots"]] == ["greedy", "random", "random"]
    for bot in data["bots"]:
        assert set(bot["wins"]) == {"tongits", "call", "stock"}
        lo, hi = bot["ci95"]
        assert lo <= bot["chips_per_hand"] <= hi
        assert bot["ms_per_decision"] >= 0
    assert sum(b["chips_per_hand"] for b in data["bots"]) == pytest.approx(0, abs=1e-3)


def test_jobs_do_not_change_the_standings(capsys: pytest.CaptureFixture[str]) -> None:
    def standings(jobs: int) -> dict[str, Any]:
        data = _json_line(
            capsys,
            [
                "arena",
                "--bots",
                "strong,greedy,random",
                "--hands",
                "90",
                "--seed",
                "s",
                "--jobs",
                str(jobs),
                "--json",
            ],
        )
        for bot in data["bots"]:
            del bot["ms_per_decision"]
        return data

    assert standings(1) == standings(2)


def test_bad_bot_and_bad_options_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--bots", "greedy,nobody,random", "--hands", "3"]) == 2
    assert main(["arena", "--bots", "greedy,greedy,random", "--options", '{"x": 1}']) == 2
    assert "nobody" in capsys.readouterr().err


def test_table_options_reach_the_hands(tmp_path: Path) -> None:
    code = main(
        [
            "arena",
            "--bots",
            "greedy,greedy,greedy",
            "--hands",
            "3",
            "--record",
            str(tmp_path),
            "--options",
            '{"tongits_needs_discard": true}',
        ]
    )
    assert code == 0
    record = HandRecord.loads((tmp_path / "deal000000-rot0.json").read_text())
    assert record.options.tongits_needs_discard
