"""The arena: duplicate deals, the --json line, and --jobs giving the same standings."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from tongits.client.arena import runner as arena
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


def without_timings(data: dict[str, Any]) -> dict[str, Any]:
    """The standings without the fields that measure time (they differ from run to run)."""
    for bot in data["bots"]:
        del bot["ms_per_decision"], bot["ms"]
    return data


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
        return without_timings(data)

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


MYBOT = '''
from tongits.engine import Action


class Highest:
    """Melds what it can, throws its highest card, never calls."""

    name = "highest"

    def __call__(self, view):
        moves = {}
        for move in view.legal:
            moves.setdefault(move.action, []).append(move)
        for action in (Action.PICK, Action.MELD, Action.SAPAW, Action.DRAW):
            if action in moves:
                return moves[action][0]
        if Action.DISCARD in moves:
            return max(moves[Action.DISCARD], key=lambda move: move.card.points)
        return next((m for m in view.legal if m.action is not Action.CALL), view.legal[0])


def make(seed):
    return Highest()
'''


def test_a_python_bot_file_outside_the_repository_plays_300_hands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "mybot.py"
    bot.write_text(MYBOT)
    data = _json_line(
        capsys,
        ["arena", "--bots", f"py:{bot}:make,strong,greedy", "--hands", "300", "--json"],
    )
    assert data["hands"] == 300 and data["deals"] == 100
    mine, strong, greedy = data["bots"]
    assert mine["name"] == f"py:{bot}:make"
    assert mine["hands"] == strong["hands"] == greedy["hands"] == 300
    assert mine["decisions"] > 300 and mine["ms"]["max"] >= mine["ms"]["p50"]
    assert mine["calls"] == 0  # it never calls: the arena really played it
    pairs = {(h["a"], h["b"]): h for h in data["head_to_head"]}
    assert set(pairs) == {(0, 1), (0, 2), (1, 2)}
    diff = pairs[(0, 1)]
    assert diff["chips_per_hand"] == pytest.approx(
        mine["chips_per_hand"] - strong["chips_per_hand"], abs=1e-3
    )
    lo, hi = diff["ci95"]
    assert lo <= diff["chips_per_hand"] <= hi


def test_a_python_module_is_found_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "arenabot_mod.py").write_text(MYBOT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    data = _json_line(
        capsys, ["arena", "--bots", "py:arenabot_mod:make,random,greedy", "--hands", "9", "--json"]
    )
    assert data["bots"][0]["hands"] == 9 and data["bots"][0]["calls"] == 0


@pytest.mark.parametrize(
    ("bots", "says"),
    [
        ("py:no_such_module_xyz:make,greedy,greedy", "cannot import"),
        ("py:json:nothing_here,greedy,greedy", "no callable"),
        ("py:,greedy,greedy", "nothing after"),
        ("cmd:,greedy,greedy", "nothing after"),
        ("greedy,greedy", "three bots"),
    ],
)
def test_bad_bot_entries_exit_2_and_say_why(
    bots: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["arena", "--bots", bots, "--hands", "3"]) == 2
    assert says in capsys.readouterr().err


DYING_BOT = """
import os
from pathlib import Path

from tongits.engine.policies import get_policy

MARKER = Path({marker!r})


def make(seed):
    # The first time deal 7 is played, the process playing it dies (a worker lost mid-run).
    if str(seed).split("/")[1] == "7" and not MARKER.exists():
        MARKER.write_text("died")
        os._exit(1)
    return get_policy("greedy", seed)
"""


def test_a_local_dask_cluster_gives_the_standings_of_one_job_despite_a_lost_worker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A LocalCluster of two workers, one of which dies in the middle of a chunk: Dask runs the
    chunk again and the standings equal those of ``--jobs 1``. (The test extra installs Dask,
    so CI runs this.)"""
    marker = tmp_path / "died"
    bot = tmp_path / "dying.py"
    bot.write_text(DYING_BOT.format(marker=str(marker)))
    argv = ["arena", "--bots", f"py:{bot}:make,random,greedy", "--hands", "90", "--seed", "c",
            "--json"]
    clustered = without_timings(_json_line(capsys, [*argv, "--cluster", "local:2"]))
    assert marker.exists()  # a worker did die
    assert clustered == without_timings(_json_line(capsys, argv))
    assert clustered["hands"] == 90 and clustered["bots"][0]["hands"] == 90


def test_a_bad_local_cluster_size_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["arena", "--bots", "greedy,random,greedy", "--hands", "3", "--cluster", "local:x"]
    assert main(argv) == 1
    assert "local:N" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_one_line_in_a_log_file_and_redrawn_on_a_terminal() -> None:
    """`tongits arena ... 2> arena.log` wrote every redraw of the bar, joined by carriage
    returns; a log file now gets the bar's last state, on one line of its own."""
    log, terminal = io.StringIO(), _Terminal()
    for stream in (log, terminal):
        bar = arena.Progress(3, stream)
        for done in range(4):
            bar.shown = -1.0  # as if 0.2 s had passed since the last redraw
            bar.update(done)
    assert log.getvalue().startswith("[######") and log.getvalue().count("\n") == 1
    assert "\r" not in log.getvalue() and " 100.0% 9/9 hands " in log.getvalue()
    assert terminal.getvalue().count("\r") == 4 and terminal.getvalue().endswith("\n")
