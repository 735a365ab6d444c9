"""Hand records carry the seats' names and reach every player: the server sends each hand's
record with its ``hand_result``, ``tongits connect`` keeps it, ``replay`` and ``review`` say
names, and ``replay --step`` walks a hand with the review's marks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from server_support import memory_server, play_hands
from test_review import missed_tongits_record
from tongits.client.cli import main
from tongits.client.replay_step import every_frame, marks_of, walk
from tongits.client.tui.records import save_record
from tongits.engine import HandRecord, RecordError
from tongits.engine.review import review_seat
from tongits.server import MemoryJournal

NAMES = ["Ana", "Ben", "greedy-bot-2"]


def named_record() -> dict[str, Any]:
    record = missed_tongits_record()
    return {"format": "tongits-hand/1", "options": {}, "dealer": record.dealer,
            "deck": list(record.deck), "actions": list(record.actions), "names": NAMES}


def test_a_record_keeps_its_names_and_refuses_bad_ones() -> None:
    record = HandRecord.from_dict(named_record())
    assert record.names == tuple(NAMES) and record.name(1) == "Ben"
    assert HandRecord.from_dict({**named_record(), "names": None}).name(1) == "seat 1"
    for bad in (["Ana"], "Ana Ben Cai", ["Ana", "Ben", 3]):
        with pytest.raises(RecordError, match="names must be a list of 3 strings"):
            HandRecord.from_dict({**named_record(), "names": bad})


async def test_every_seat_gets_the_hands_record_with_names_and_the_journal_keeps_them(
    autojump_clock: object,
) -> None:
    journal = MemoryJournal()
    async with memory_server(journal) as (_server, connect), connect("Ana") as ana:
        await ana.create_table("records", timer=0, bots=2, hands=1)
        [result] = await play_hands(ana, 1)
    assert result.record is not None
    record = HandRecord.from_dict(result.record)
    assert record.names == ("Ana", "greedy-bot-1", "greedy-bot-2")
    assert record.replay().result is not None
    assert record.replay().result.to_dict() == record.result  # type: ignore[union-attr]
    [kept] = journal.hands["t1"]  # what export writes for tongits replay
    assert kept["record"] == result.record


def test_a_kept_record_is_never_overwritten_by_another(tmp_path: Path) -> None:
    """A resumed connection is sent the last ``hand_result`` again: the same file; a server
    started again counts its tables from t1 again: another file."""
    record = named_record()
    first = save_record(tmp_path, "127.0.0.1:7777", "t1", 1, record)
    assert first.name == "127.0.0.1_7777-t1-hand-1.json"
    assert save_record(tmp_path, "127.0.0.1:7777", "t1", 1, record) == first
    other = save_record(tmp_path, "127.0.0.1:7777", "t1", 1, {**record, "dealer": 1})
    assert other.name == "127.0.0.1_7777-t1-hand-1.2.json"
    assert json.loads(first.read_text()) == record
    assert save_record(tmp_path, "../x:1", "t/../2", None, record).parent == tmp_path


def test_replay_and_review_say_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(named_record()))
    assert main(["replay", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["0", "Ana", "meld"]
    assert not any(" seat " in line for line in lines)
    # after the result, why each seat's chips are what they are, by name
    assert lines[-4].startswith('result: {"end": "stock", "winner": 0,')
    assert lines[-3:] == ["  Ana: win +2 · ace ×2 +4", "  Ben to Ana: win -1 · ace ×2 -2",
                          "  greedy-bot-2 to Ana: win -1 · ace ×2 -2"]
    assert main(["review", str(path), "--seat", "0", "--budget", "4", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("Ana (seat 0): ")


def test_replay_steps_through_the_hand_with_the_reviews_marks() -> None:
    """The walk shows each position with the review's mark on the action just played: the
    Kh thrown where a Tongits was available is marked ``!`` with the better move; ``p`` goes
    back, a number goes to that action, ``q`` quits."""
    record = HandRecord.from_dict(named_record())
    marks = marks_of([review_seat(record, 0, budget=4)])
    shown: list[str] = []
    walk(record, marks, iter(["", "n", "n", "p", "4", "q", "never read"]), shown.append)
    heads = [frame.splitlines()[0] for frame in shown]
    total = len(record.actions)
    assert heads == [f"deal: Ana deals · action 0/{total}",
                     f"action 1/{total}: Ana meld Ac 2c 3c 4c",
                     f"action 2/{total}: Ana meld 5d 6d 7d",
                     f"action 3/{total}: Ana meld 9s Ts Js",
                     f"action 2/{total}: Ana meld 5d 6d 7d",
                     f"action 4/{total}: Ana discard Kh"]
    assert shown[-1].splitlines()[1].startswith("  review: ! -")
    assert "meld Jh Qh Kh was better (a Tongits was available" in shown[-1]
    assert "  Ana  " in shown[0] and "greedy-bot-2" in shown[0]


def test_replay_step_without_a_terminal_prints_every_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(named_record()))
    assert main(["replay", str(path), "--step", "--no-review"]) == 0
    out = capsys.readouterr().out
    record = HandRecord.from_dict(named_record())
    assert out.strip() == every_frame(record, {}).strip()
    assert out.count("\n\naction ") == len(record.actions) and "review:" not in out
    assert out.rstrip().splitlines()[-1].startswith("  over: ")
