"""``tongits replay FILE``: replay a hand record, print a trace or one JSON line."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tongits.engine import Hand, HandRecord, RecordError, ReplayError, Step


def _trace_line(index: int, step: Step) -> str:
    """``index`` is the action's place in the record; automatic folds are not in it."""
    if step.auto:
        return f"  -  seat {step.seat}  {step.move} (automatic)"
    return f"{index:3d}  seat {step.seat}  {step.move}"


def run(path: str, *, as_json: bool) -> int:
    """Replay ``path``; exit status 0 when it replays cleanly and matches any stored result."""
    try:
        record = HandRecord.loads(Path(path).read_text(encoding="utf-8"))
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
    (_print_json if as_json else _print_trace)(hand, result, record.result if mismatch else None)
    return 1 if mismatch else 0


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


def _print_trace(hand: Hand, result: Mapping[str, Any] | None, differs: Any) -> None:
    """One line per step, then the result; the stored result that ``differs`` on stderr."""
    index = 0
    for step in hand.steps:
        print(_trace_line(index, step))
        index += 0 if step.auto else 1
    if result is None:
        print(f"unfinished: seat {hand.to_act} to act ({hand.phase.value})")
    else:
        print("result:", json.dumps(result))
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
