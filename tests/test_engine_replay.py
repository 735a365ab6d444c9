"""``tongits replay`` (docs/RECORD.md): readable trace, ``--json``, exit codes, and one clear line
for every malformed file, never a traceback."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tongits.client.cli import main
from tongits.engine import DECK, Hand, hand_record


def finished_record(seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    deck = list(DECK)
    rng.shuffle(deck)
    hand = Hand(deck, seed % 3)
    while not hand.over:
        hand.apply(hand.to_act, rng.choice(hand.legal_moves()))
    return dict(hand_record(hand))


def replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any, *flags: str
) -> tuple[int, str, str]:
    path = tmp_path / "hand.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    code = main(["replay", str(path), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_finished_record_replays_with_its_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = finished_record()
    code, out, _ = replay(tmp_path, capsys, record, "--json")
    assert code == 0
    assert json.loads(out) == {"result": record["result"]}
    code, out, err = replay(tmp_path, capsys, record)
    lines = out.splitlines()
    assert code == 0 and not err
    # the result, then why each seat's chips are what they are (one line a seat: a loser's
    # terms paid to the winner)
    assert lines[-4] == "result: " + json.dumps(record["result"])
    assert [line.split(":")[0] for line in lines[-3:]] == [
        "  seat 0 to seat 2", "  seat 1 to seat 2", "  seat 2"]
    assert lines[0].split()[:4] == [
        "0",
        "seat",
        str(record["dealer"]),
        record["actions"][0]["action"],
    ]


def test_record_without_result_is_checked_only_by_replaying(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = finished_record()
    del record["result"]
    code, out, _ = replay(tmp_path, capsys, record, "--json")
    assert code == 0 and json.loads(out)["result"] is not None


def test_stored_result_that_differs_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = finished_record()
    record["result"]["chips"] = [9, 9, -18]
    code, out, _ = replay(tmp_path, capsys, record, "--json")
    data = json.loads(out)
    assert code == 1 and data["error"]["code"] == "result_differs" and data["result"]
    code, _, err = replay(tmp_path, capsys, record)
    assert code == 1 and "differs" in err


def test_unfinished_record_prints_who_is_to_act(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = finished_record()
    del record["result"]
    record["actions"] = record["actions"][:1]
    code, out, _ = replay(tmp_path, capsys, record, "--json")
    seat = (
        (record["dealer"] + 1) % 3
        if record["actions"][0]["action"] == "discard"
        else record["dealer"]
    )
    expected_phase = "start" if record["actions"][0]["action"] == "discard" else "play"
    assert code == 0
    assert json.loads(out) == {"result": None, "to_act": seat, "phase": expected_phase}
    code, out, _ = replay(tmp_path, capsys, record)
    assert (
        code == 0 and out.splitlines()[-1] == f"unfinished: seat {seat} to act ({expected_phase})"
    )


def test_illegal_action_names_its_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = finished_record()
    del record["result"]
    record["actions"].insert(1, {"seat": record["dealer"], "action": "draw"})
    code, out, _ = replay(tmp_path, capsys, record, "--json")
    error = json.loads(out)["error"]
    assert code == 1 and error["index"] == 1 and error["code"] and error["message"]


def _malformed() -> list[tuple[str, Any]]:
    good = finished_record()
    cases: list[tuple[str, Any]] = [("bad JSON", "{not json"), ("empty file", ""), ("a list", "[]")]
    short = dict(good, deck=good["deck"][:51])
    dup = dict(good, deck=[good["deck"][0], *good["deck"][:51]])
    bad_card = dict(good, deck=["Xx", *good["deck"][1:]])
    cases += [("51 cards", short), ("duplicate card", dup), ("bad card", bad_card)]
    cases += [("unknown option", dict(good, options={"jokers": True}))]
    cases += [("bad option value", dict(good, options={"call_tie": "nobody"}))]
    actions = [*good["actions"][:2], {"seat": 0, "action": "jump"}]
    cases += [("unknown action", dict(good, actions=actions, result=None))]
    cases += [("bad seat", dict(good, actions=[{"seat": 5, "action": "draw"}]))]
    cases += [("bad format", dict(good, format="tongits-hand/9"))]
    cases += [("bad dealer", dict(good, dealer=3)), ("deck not a list", dict(good, deck="As"))]
    cases += [("deep JSON", "[" * 100000 + "]" * 100000)]
    return cases


@pytest.mark.parametrize(("name", "data"), _malformed(), ids=[n for n, _ in _malformed()])
def test_malformed_file_gives_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: Any
) -> None:
    code, out, err = replay(tmp_path, capsys, data)
    assert code == 1 and not out
    assert len(err.strip().splitlines()) == 1 and err.startswith("tongits replay: ")
    code, out, err = replay(tmp_path, capsys, data, "--json")
    assert code == 1 and len(out.strip().splitlines()) == 1
    error = json.loads(out)["error"]
    assert error["code"] and error["message"] and "Traceback" not in err


def test_missing_and_binary_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nothing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["replay", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "bad_json"


def test_no_traceback_from_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    good = finished_record()
    path.write_text(json.dumps(dict(good, deck=[good["deck"][0], *good["deck"][:51]])))
    run = subprocess.run(
        [sys.executable, "-m", "tongits.client.cli", "replay", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0 and "twice" in run.stderr


def test_trace_marks_automatic_folds_without_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deck = [str(c) for c in DECK]
    deck[1], deck[3] = deck[3], deck[1]
    deck[2], deck[6] = deck[6], deck[2]  # seat 0 is dealt Ac 2c 3c
    hand = Hand(deck, 0)
    first = hand.legal_moves()
    meld = next(m for m in first if m.action == "meld")
    hand.apply(0, meld)
    hand.apply(0, next(m for m in hand.legal_moves() if m.action == "discard"))
    for seat in (1, 2):
        hand.apply(seat, hand.legal_moves()[0])  # draw
        hand.apply(seat, next(m for m in hand.legal_moves() if m.action == "discard"))
    hand.apply(0, next(m for m in hand.legal_moves() if m.action == "call"))
    assert hand.over
    code, out, _ = replay(tmp_path, capsys, hand_record(hand))
    lines = out.splitlines()
    assert code == 0
    at = next(i for i, line in enumerate(lines) if line.startswith("result: "))
    assert lines[at - 2:at] == ["  -  seat 1  fold (automatic)", "  -  seat 2  fold (automatic)"]
    assert lines[at - 3].split()[:4] == ["6", "seat", "0", "call"]
