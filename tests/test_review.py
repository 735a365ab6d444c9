"""``tongits review``: every decision graded from the seat's own view; a missed Tongits shows."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest
from engine_support import deal_with
from tongits.client.cli import main
from tongits.client.review import render
from tongits.client.tui.state import HandOver, StateUpdate, TableState
from tongits.engine import Hand, HandRecord, Move, SeatView, deck_for, hand_record, seat_view
from tongits.engine.advice import advise
from tongits.engine.policies import explaining_policy, get_policy
from tongits.engine.policies.expert import Search
from tongits.engine.policies.worlds import InferenceParams
from tongits.engine.review import decision_points, decisions_seen, review_seat
from tongits.engine.wire import RecordMap
from tongits.protocol.maps import standings_map

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
    review = review_seat(missed_tongits_record(), 0, budget=24)
    worst = review.worst(3)[0]
    assert worst.index == 3 and str(worst.played) == "discard Kh"
    assert worst.loss >= 2 and worst.costly and worst.tongits
    assert str(worst.best) == "meld Jh Qh Kh"
    assert "Tongits" in worst.reason
    for d in review.decisions:
        assert d.loss >= 0
        assert d.loss == pytest.approx(max(0.0, d.values[str(d.best)] - d.values[str(d.played)]))


def test_review_is_deterministic_and_sees_only_the_seats_view() -> None:
    record = missed_tongits_record()
    a = review_seat(record, 1, budget=12)
    b = review_seat(record, 1, budget=12)
    assert a.to_dict() == b.to_dict()
    for (_, view, played), d in zip(decision_points(record, 1), a.decisions, strict=True):
        assert view.seat == 1 and view.revealed is None
        assert {str(d.best), str(d.played)} <= set(d.values) <= {str(m) for m in view.legal}
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


def strong_hand_record(index: int, first: str = "greedy") -> HandRecord:
    """A hand of ``first`` (seat 0) against two ``strong`` bots, deal ``index`` of "marks"."""
    bots = [get_policy(first, 0), get_policy("strong", 1), get_policy("strong", 2)]
    hand = Hand(deck_for("marks", index), index % 3)
    while not hand.over:
        seat = hand.to_act
        hand.apply(seat, bots[seat](seat_view(hand, seat)))
    return HandRecord.from_dict(hand_record(hand))


def test_the_review_names_the_hints_move_for_the_same_position() -> None:
    """The review runs the hint's search on the hint's worlds (seeded by the position): the
    better move it names is the move the hint gives for that view, and the hint's own move is
    never graded a loss. (Searched apart, each on worlds of its own, they disagreed.)"""
    hint = explaining_policy()
    record = strong_hand_record(10, first="strong")
    review = review_seat(record, 0)
    assert len(review.decisions) >= 5
    for (_, view, played), d in zip(decision_points(record, 0), review.decisions, strict=True):
        advised = advise(view, hint).steps[0].move
        assert d.best in (advised, played)
        if played == advised:
            assert d.loss == 0 and not d.costly


def test_a_costly_mark_is_a_loss_on_worlds_the_review_never_dealt() -> None:
    """A decision is marked ``!`` only when its loss, measured on fresh worlds (not the ones
    whose luck chose the better move), exceeds its noise by a quarter chip: on 400 other worlds
    of the same position the better move still gains over the move played. Measured on the
    search's own worlds, a discard was marked for one seed of the worlds and not another."""
    marked = 0
    for record in (strong_hand_record(7), missed_tongits_record()):
        review = review_seat(record, 0)
        points = decision_points(record, 0)
        for d in review.decisions:
            if not d.costly:
                continue
            marked += 1
            view = points[d.index][1]
            other = Search(view, random.Random("elsewhere"), InferenceParams())
            gains = [
                b - p
                for b, p in zip(other.chips(d.best, 400), other.chips(d.played, 400), strict=True)
            ]
            assert statistics.fmean(gains) > 0, d
    assert marked >= 1
    assert 3 in [d.index for d in review_seat(missed_tongits_record(), 0).decisions if d.costly]


def test_a_review_names_a_tongits_as_a_tongits() -> None:
    """The dealer holds a 13-card run and throws a card: the review's better move is the
    whole run, named a Tongits (the 66 shorter runs it holds tie with it in every world, and
    the first of them was named), and the hint begins the same Tongits."""
    run = "Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc"
    hand = Hand(deal_with(run, seed=2), 0)
    view = seat_view(hand, 0)
    hand.apply(0, Move.parse("discard Kc"))
    bots = [get_policy("strong", s) for s in range(3)]
    while not hand.over:
        seat = hand.to_act
        hand.apply(seat, bots[seat](seat_view(hand, seat)))
    review = review_seat(HandRecord.from_dict(hand_record(hand)), 0, budget=24)
    first = review.decisions[0]
    assert str(first.best) == "meld " + run and first.tongits and first.costly
    assert "Tongits" in first.reason
    assert "Tongits: meld Ac 2c" in render(review)
    step = advise(view).steps[0]
    assert step.move == first.best and "Tongits" in step.reason()


def test_a_client_that_came_back_mid_hand_reviews_every_decision_from_the_record() -> None:
    """A client restarted mid-hand was sent only the views from then on; with the hand's
    record (``hand_result.record``) its ``review`` still grades every decision of the hand,
    and without one (or with one that does not replay) it grades what it saw."""
    record = missed_tongits_record()
    hand = record.replay(upto=0)
    state = TableState()
    for i, action in enumerate(record.actions):
        if i >= len(record.actions) // 2:  # the client came back half-way through
            state.apply(StateUpdate(seat_view(hand, 0)), now=0.0)
        hand.apply(action["seat"], Move.from_dict(action))
    final = seat_view(hand, 0)
    state.apply(StateUpdate(final), now=0.0)
    assert hand.result is not None
    seen = len(state.decisions_to_review())
    every = decision_points(record, 0)
    assert 0 < seen < len(every)
    sent = hand_record(hand)
    state.apply(HandOver(hand.result.to_dict(), standings_map(None, []), None, sent), now=0.0)
    assert [(v.history, m) for _, v, m in state.decisions_to_review()] == [
        (v.history, m) for _, v, m in every
    ]
    broken: RecordMap = {**sent, "actions": [{"seat": 0, "action": "draw"}]}
    state.apply(HandOver(hand.result.to_dict(), standings_map(None, []), None, broken), now=0.0)
    assert len(state.decisions_to_review()) == seen


def test_review_of_an_arena_run_grades_the_hands_a_bot_lost_worst_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """``tongits arena --record DIR`` then ``tongits review DIR --bot NAME``: a bot author
    reviews the hands their bot lost. The records name who played each seat; the review picks
    that bot's hands with the most chips lost (the engine's settlement, replayed) and grades
    them at its seat."""
    assert main(["arena", "--bots", "strong,random,random", "--hands", "9", "--seed", "3",
                 "--record", str(tmp_path), "--json"]) == 0
    capsys.readouterr()
    lost = []
    for path in sorted(tmp_path.glob("deal*.json")):
        record = HandRecord.loads(path.read_text(encoding="utf-8"))
        assert record.names is not None and sorted(record.names) == ["random", "random", "strong"]
        result = record.replay().result
        assert result is not None
        lost += [(result.chips[s], path.name, s) for s in range(3)
                 if record.names[s] == "random" and result.chips[s] < 0]
    assert main(["review", str(tmp_path), "--bot", "random", "--worst", "2", "--json",
                 "--quiet", "--budget", "8"]) == 0
    graded = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(g["chips"], g["file"], g["seat"]) for g in graded] == sorted(lost)[:2]
    assert all(g["decisions"] and g["decisions"][0]["index"] == 0 for g in graded)
    assert main(["review", str(tmp_path), "--bot", "nobody"]) == 2
    assert "its bots: strong, random, random" in capsys.readouterr().err


def test_a_worst_decision_inside_its_noise_is_said_to_be_noise() -> None:
    """`tongits review rec --bot py:mybot:make` (arena seed 7, deal 4 rot 0) listed
    "#9 draw -> call: -0.01 chips, calling would likely have won the hand now" with a noise of
    ±0.63: a reason that claims a likely win for a loss the search cannot tell from luck."""
    from tongits.engine import Move
    from tongits.engine.review import Decision, SeatReview

    def decision(index: int, loss: float, margin: float, reason: str) -> Decision:
        return Decision(index, index, index, Move.draw(), Move.parse("call"), loss, margin, {},
                        reason)

    review = SeatReview(0, (decision(0, 0.01, 0.63, "calling would likely have won the hand now"),
                            decision(1, 1.5, 0.5, "calling would likely have won the hand now"),
                            decision(2, 0.26, 0.24, "calling would likely have won the hand now")))
    worst = render(review).split("worst decisions:\n")[1].splitlines()
    assert worst == [
        "  #1 draw -> call: -1.50 chips, calling would likely have won the hand now",
        # a ladder bot's review said "-0.26 chips, within the noise (±0.24)"
        "  #2 draw -> call: -0.26 chips, beyond the noise (±0.24) by less than the 0.25 chips "
        "a mark needs: not marked",
        "  #0 draw -> call: -0.01 chips, within the noise (±0.63): not marked",
    ]


def test_review_of_exported_hands_finds_a_ladder_bot_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A ladder bot's author has no arena run: its hands come from `tongits export --out DIR`
    (records named `t3-hand-1.json` that name their players, beside `standings.json`).
    `tongits review DIR --bot mybot` said "holds no arena run (arena.json: No such file...)";
    now the records' names say where the bot sat, as arena.json does for an arena run."""
    assert main(["arena", "--bots", "strong,random,random", "--hands", "9", "--seed", "3",
                 "--record", str(tmp_path / "arena"), "--json"]) == 0
    assert main(["review", str(tmp_path / "arena"), "--bot", "random", "--worst", "2",
                 "--json", "--quiet", "--budget", "8"]) == 0
    in_arena = [json.loads(line) for line in capsys.readouterr().out.splitlines()[-2:]]
    exported = tmp_path / "export"
    exported.mkdir()
    for number, path in enumerate(sorted((tmp_path / "arena").glob("deal*.json"))):
        (exported / f"t1-hand-{number + 1}.json").write_text(path.read_text(encoding="utf-8"))
    (exported / "standings.json").write_text(json.dumps({"tables": {}, "players": {}}))
    assert main(["review", str(exported), "--bot", "random", "--worst", "2", "--json",
                 "--quiet", "--budget", "8"]) == 0
    out, err = capsys.readouterr()
    graded = [json.loads(line) for line in out.splitlines()]
    assert [(g["chips"], g["seat"], g["decisions"]) for g in graded] == [
        (g["chips"], g["seat"], g["decisions"]) for g in in_arena]
    assert err == ""
    assert main(["review", str(exported), "--bot", "mybot"]) == 2
    assert "its bots: " in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["review", str(tmp_path / "empty")]) == 2
    assert "no hand records that name their players" in capsys.readouterr().err


def test_a_meld_better_kept_in_hand_is_said_why() -> None:
    """BOTS.md's 20-line bot melds everything; reviewing its worst arena hand said
    "#1 meld 5d 5h 5s -> discard Qc: -0.69 chips, discard Qc was worth 0.7 chips more", which
    tells its author nothing to change. The reason now says what keeping the meld gains."""
    from client_positions import position
    from tongits.engine import Options, Phase
    from tongits.engine.options import Scoring
    from tongits.engine.review import _reason

    def reason(hand: str, meld: str, options: Options | None = None) -> str:
        view = position(hand, phase=Phase.PLAY, options=options)
        search = Search(view, random.Random("why"), InferenceParams())
        return _reason(search, view, Move.parse(meld), Move.parse("discard Kd"), 0.7)

    assert reason("5d 5h 5s Qc Kd 9c 2h 7s", "meld 5d 5h 5s") == (
        "5♦ 5♥ 5♠ kept in hand counts nothing either; face up it takes others' lay-offs")
    assert reason("5c 5d 5h 5s Qc Kd 9c 2h", "meld 5c 5d 5h 5s") == (
        "5♣ 5♦ 5♥ 5♠ kept in hand counts nothing either and earns 3 chips from each loser if "
        "you win")
    assert reason("5c 5d 5h 5s Qc Kd 9c 2h", "meld 5c 5d 5h 5s", Options(scoring=Scoring.TALLY)
                  ).endswith("earns 3 chips")
    # where every card in hand counts, keeping the meld there is no gain of that kind
    assert "kept in hand" not in reason("5d 5h 5s Qc Kd 9c 2h 7s", "meld 5d 5h 5s",
                                        Options(concealed_melds_count=True))


def test_a_hand_lost_mostly_to_the_deal_is_said_to_be() -> None:
    """An arena hand reviewed at -10 chips with 0.79 chips of decision loss read as a table of
    small losses: a bot's author could not tell whether to change the bot. The review puts a
    lost hand down to the deal when the decisions cost less than half of it."""
    from tongits.engine.review import Blame, Decision, SeatReview

    def decision(index: int, loss: float) -> Decision:
        return Decision(index, index, index, Move.draw(), Move.parse("call"), loss, 0.1, {},
                        "calling would likely have won the hand now")

    review = SeatReview(0, (decision(0, 0.5), decision(1, 0.29)))
    assert review.blame(-10) is Blame.DEAL and review.blame(-1) is Blame.DECISIONS
    assert review.blame(0) is None and review.blame(4) is None
    assert "lost to the deal: your decisions cost 0.8 of the 10 chips" in render(review, None, -10)
    assert "lost to your decisions: they cost 0.8 chips, the hand 1" in render(review, None, -1)
    assert "lost to" not in render(review, None, 4) and "lost to" not in render(review)


def test_review_command_says_what_a_lost_hand_was_lost_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hand.json"
    record = missed_tongits_record()  # seat 0 wins 6 chips, seats 1 and 2 pay 3 each
    path.write_text(json.dumps({"format": "tongits-hand/1", "options": {}, "dealer": 0,
                                "deck": list(record.deck), "actions": list(record.actions)}))
    assert main(["review", str(path), "--budget", "4", "--quiet"]) == 0
    seats = capsys.readouterr().out.split("\nseat ")
    assert len(seats) == 3 and "lost to" not in seats[0]
    for out in seats[1:]:
        assert "lost to the deal: your decisions cost " in out and " of the 3 chips" in out \
            or "lost to your decisions: they cost " in out and " chips, the hand 3" in out
