"""``tongits replay FILE``: replay a hand record, print a trace or one JSON line, or walk
through it position by position with the review's marks (``--step``, ``replay_step``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from tongits.engine import Hand, HandRecord, RecordError, ReplayError, Step
from tongits.protocol.phrases import chip_words, paid_to


def _trace_line(index: int, step: Step, record: HandRecord) -> str:
    """``index`` is the action's place in the record; automatic folds are not in it. The seat
    is named by its player when the record has names."""
    if step.auto:
        return f"  -  {record.name(step.seat)}  {step.move} (automatic)"
    return f"{index:3d}  {record.name(step.seat)}  {step.move}"


def run(
    path: str,
    *,
    as_json: bool,
    step: bool = False,
    review: bool = True,
    budget: int = 96,
    interactive: bool | None = None,
) -> int:
    """Replay ``path`` (a bare file name not in the working directory: the one the terminal
    client saved under that name); exit status 0 when it replays cleanly and matches any
    stored result. ``step``: walk through it instead (interactively when ``interactive``, by
    default when standard input and output are a terminal), marked by a review of ``budget``
    rollouts per move unless ``review`` is false."""
    from .tui.records import find_record
    from .user_files import data_dir

    try:
        record = HandRecord.loads(find_record(path, data_dir() / "hands").read_text(
            encoding="utf-8"))
        hand = record.replay()
    except OSError as exc:
        return _fail(as_json, None, "bad_file", f"cannot read {path}: {exc.strerror}")
    except UnicodeDecodeError:
        return _fail(as_json, None, "bad_json", f"{path} is not UTF-8 text")
    except ReplayError as exc:
        return _fail(as_json, exc.index, exc.code, exc.message)
    except RecordError as exc:
        return _fail(as_json, None, exc.code, exc.message)
    result = hand.result.to_dict() if hand.result else None
    mismatch = record.result is not None and _normal(record.result) != _normal(result)
    if step and budget < 1:
        return _fail(as_json, None, "bad_budget", "--budget must be at least 1")
    if step:
        _step(record, review=review, budget=budget, interactive=interactive)
    elif as_json:
        _print_json(hand, result, record.result if mismatch else None)
    else:
        _print_trace(record, hand, result, record.result if mismatch else None)
    return 1 if mismatch else 0


def _step(record: HandRecord, *, review: bool, budget: int,
          interactive: bool | None) -> None:
    """``--step``: the review's marks (a progress bar on stderr meanwhile), then the walk."""
    from tongits.engine.review import decision_points, review_seat

    from .replay_step import KEYS, every_frame, marks_of, walk
    from .review import Bar

    reviews = []
    if review:
        for seat in (s for s in range(3) if decision_points(record, s)):
            bar = Bar(f"reviewing {record.name(seat)}") if sys.stderr.isatty() else None
            reviews.append(review_seat(record, seat, budget=budget, progress=bar))
    marks = marks_of(reviews)
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive:
        print(every_frame(record, marks))
        return

    def answers() -> Iterator[str]:
        while True:
            try:
                yield input(f"[{KEYS}] ")
            except (EOFError, KeyboardInterrupt):  # ^D or ^C: the walk ends, no traceback
                print()
                return

    walk(record, marks, answers(), print)


def _print_json(hand: Hand, result: Mapping[str, Any] | None, differs: Any) -> None:
    """One JSON object: the result (or who is to act), and the stored result that ``differs``."""
    out: dict[str, Any] = {"result": result}
    if result is None:
        out.update(to_act=hand.to_act, phase=hand.phase.value)
    if differs is not None:
        out["error"] = {
            "index": None,
            "code": "result_differs",
            "message": f"stored result {json.dumps(differs)} differs",
        }
    print(json.dumps(out))


def _print_trace(
    record: HandRecord, hand: Hand, result: Mapping[str, Any] | None, differs: Any
) -> None:
    """One line per step, then the result and why each seat's chips are what they are; the
    stored result that ``differs`` on stderr."""
    index = 0
    for step in hand.steps:
        print(_trace_line(index, step, record))
        index += 0 if step.auto else 1
    if result is None:
        print(f"unfinished: {record.name(hand.to_act)} to act ({hand.phase.value})")
    else:
        print("result:", json.dumps(result))
        for seat, seat_items in enumerate(hand.settlement):  # why each seat's chips
            items = [item.to_dict() for item in seat_items]
            to = paid_to(items)
            lead = record.name(seat) + ("" if to is None else f" to {record.name(to)}")
            if items:
                print(f"  {lead}: {chip_words(items)}")
    if differs is not None:
        print(f"the stored result differs: {json.dumps(differs)}", file=sys.stderr)


def _normal(result: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A result with its seat lists sorted: ``burned`` and ``challengers`` are sets."""
    if result is None:
        return None
    out = dict(result)
    for key in ("burned", "challengers"):
        if isinstance(out.get(key), list):
            out[key] = sorted(out[key], key=repr)
    return out


def _fail(as_json: bool, index: int | None, code: str, message: str) -> int:
    if as_json:
        print(json.dumps({"error": {"index": index, "code": code, "message": message}}))
    else:
        print(f"tongits replay: {message}", file=sys.stderr)
    return 1
