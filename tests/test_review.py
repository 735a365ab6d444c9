"""``tongits review``: every decision graded from the seat's own view; a missed Tongits shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import deal_with
from tongits.client.cli import main
from tongits.engine import Hand, HandRecord, Move, SeatView, hand_record, seat_view
from tongits.engine.policies import get_policy
from tongits.engine.review import decision_points, decisions_seen, review_seat

TONGITS_HAND = "Ac 2c 3c 4c 5d 6d 7d 9s Ts Js Jh Qh Kh"


def missed_tongits_record() -> HandRecord:
    """The dealer (seat 0) melds three of its four melds, then throws the Kh of ``Jh Qh Kh``
    where melding it would have emptied its hand (Tongits); strong bots finish the hand."""
    hand = Hand(deal_with(TONGITS_HAND, seed=5), 0)
    for move in ("meld Ac 2c 3c 4c", "meld 5d 6d 7d", "meld 9s Ts Js", "discard Kh"):
        hand.apply(0, Move.parse(move))
    bots = [get_policy("strong", s) for s in range(3)]
    while not hand.over:
        seat = hand.to_act
        hand.apply(seat, bots[seat](seat_view(hand, seat)))
    return HandRecord.from_dict(hand_record(hand))


def test_review_names_the_missed_tongits_as_the_costliest_decision() -> None:
    review = review_seat(missed_tongits_record(), 0, worlds=6, seed=3)
    worst = review.worst(3)[0]
    assert worst.index == 3 and str(worst.played) == "discard Kh"
    assert worst.loss >= 2
    assert str(worst.best) == "meld Jh Qh Kh"
    assert "Tongits" in worst.reason
    for d in review.decisions:
        assert d.loss >= 0
        assert d.values[str(d.best)] == max(d.values.values())
        assert d.loss == pytest.approx(d.values[str(d.best)] - d.values[str(d.played)])


def test_review_is_deterministic_for_a_seed_and_sees_only_the_seats_view() -> None:
    record = missed_tongits_record()
    a = review_seat(record, 1, worlds=3, seed="x")
    b = review_seat(record, 1, worlds=3, seed="x")
    assert a.to_dict() == b.to_dict()
    for (_, view, played), d in zip(decision_points(record, 1), a.decisions, strict=True):
        assert view.seat == 1 and view.revealed is None
        assert set(d.values) == {str(m) for m in view.legal}
        assert d.played == played


def test_review_command_prints_a_table_and_a_json_last_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hand.json"
    record = missed_tongits_record()
    path.write_text(json.dumps({"format": "tongits-hand/1", "options": {}, "dealer": 0,
                                "deck": list(record.deck), "actions": list(record.actions)}))
    assert main(["review", str(path), "--seat", "0", "--budget", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "a Tongits was available" in out and "total expected loss" in out
    assert main(["review", str(path), "--seat", "0", "--json", "--budget", "4", "--quiet"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["seat"] == 0 and set(last) == {"seat", "decisions", "total_loss"}
    third = last["decisions"][3]
    assert third["index"] == 3
    assert third["played"] == {"action": "discard", "card": "Kh"}
    assert third["best"] == {"action": "meld", "cards": ["Jh", "Qh", "Kh"]}
    assert third["loss"] >= 2
    assert last["total_loss"] == pytest.approx(sum(d["loss"] for d in last["decisions"]), abs=0.01)


@pytest.mark.parametrize("text", ["", "{}", "not json", '{"format": "tongits-hand/1"}'])
def test_review_of_a_bad_file_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert main(["review", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tongits review:") and err.count("\n") == 1
    assert main(["review", str(tmp_path / "missing.json"), "--quiet"]) == 2


def test_a_client_reviews_from_the_views_it_was_sent() -> None:
    """The views a seat received during a hand, with the final view, give the same decision
    points as the hand record (the terminal client's ``review`` needs no record)."""
    record = missed_tongits_record()
    hand = record.replay(upto=0)
    sent: list[SeatView] = []
    for action in record.actions:
        sent.append(seat_view(hand, 2))
        hand.apply(action["seat"], Move.from_dict(action))
    final = seat_view(hand, 2)
    from_views = [(v.history, m) for _, v, m in decisions_seen(sent, final)]
    from_record = [(v.history, m) for _, v, m in decision_points(record, 2)]
    assert from_views == from_record and from_views
