"""``tongits review FILE``: grade each decision of a hand record with the expert's search;
``tongits review DIR``: the hands a bot lost in a folder of hand records (an arena run,
``tongits arena --record DIR``, or records that name their players: ``tongits export``, a
ladder bot's hands among them), worst first, the worst of them graded at that bot's seat.

Plain output: per seat, a table of its decisions (the loss, its noise, the costly ones marked
``!``) and a summary (total expected loss, the three worst decisions, what would have been
better and why). With ``--json``, one JSON object per reviewed seat, one per line (the last
line is the last seat's): ``{"seat": S, "decisions": [{"index", "played", "best", "loss",
"margin", "costly", "tongits", "values"}, ...], "total_loss": x}``. A progress bar goes to
stderr while the search runs, when stderr is a terminal.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TextIO

from tongits.engine import HandRecord, RecordError, Result
from tongits.engine.policies.expert import DEFAULT_BUDGET
from tongits.engine.review import COSTLY, Decision, SeatReview, decision_points, review_seat
from tongits.protocol.phrases import say


class Bar:
    """A one-line progress bar on stderr (``tongits review`` draws it only on a terminal)."""

    def __init__(self, label: str, stream: TextIO | None = None):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        width = 24
        filled = int(width * done / total) if total else width
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'-' * (width - filled)}] {done}/{total} decisions "
            f"{time.monotonic() - self.start:5.1f}s"
        )
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def render(review: SeatReview, heading: str | None = None, chips: int | None = None) -> str:
    """The plain table and summary of one seat's review, under ``heading`` (by default the
    seat's number and its count of decisions); ``chips``, the seat's in the hand: a lost hand
    is said to be lost to the deal or to the decisions (``SeatReview.blame``)."""
    lines = [heading or f"seat {review.seat}: {len(review.decisions)} decisions"]
    lines.append(f"  {'#':>3} {'turn':>4}  {'played':<26} {'best':<26} {'loss':>6} {'noise':>6}")
    for d in review.decisions:
        mark = "!" if d.costly else " "
        best = "" if d.best == d.played else _best(d)
        noise = f"±{d.margin:.2f}" if d.best != d.played and math.isfinite(d.margin) else ""
        row = f"{mark} {d.index:>3} {d.turn:>4}  {str(d.played):<26} {best:<26} {d.loss:>6.2f}"
        lines.append(f"{row} {noise}".rstrip())
    lines.append(f"total expected loss: {review.total_loss:.2f} chips")
    if chips is not None and (blame := review.blame(chips)) is not None:
        lines.append(say(f"review.{blame.value}", loss=f"{review.total_loss:.1f}", chips=-chips))
    worst = review.worst(3)
    if worst:
        lines.append("worst decisions:")
        for d in worst:
            lines.append(
                f"  #{d.index} {d.played} -> {_best(d)}: -{d.loss:.2f} chips, {_why(d)}"
            )
    else:
        lines.append("no decision lost anything against the search")
    return "\n".join(lines)


def _why(decision: Decision) -> str:
    """The reason of a costly decision; a loss inside its noise is said to be one, not given a
    reason: "-0.01 chips, calling would likely have won the hand now" (noise ±0.63) told a bot's
    author of a likely win the search did not see. A loss past its noise by less than a mark
    needs (``COSTLY``) is said to be that ("-0.26 chips, within the noise (±0.24)" was not)."""
    if decision.costly or decision.tongits:
        return decision.reason
    if not math.isfinite(decision.margin):
        return "too few worlds to tell it from noise"
    if decision.loss <= decision.margin:
        return f"within the noise (±{decision.margin:.2f}): not marked"
    return (f"beyond the noise (±{decision.margin:.2f}) by less than the {COSTLY:.2f} chips "
            "a mark needs: not marked")


def _best(decision: Decision) -> str:
    """The better move as the table shows it: a Tongits is named as one."""
    return f"Tongits: {decision.best}" if decision.tongits else str(decision.best)


def run(
    path: str,
    *,
    seat: int | None = None,
    as_json: bool = False,
    budget: int = DEFAULT_BUDGET,
    progress: bool = True,
) -> int:
    """The command: exit status 0, or 2 for a file or record that cannot be reviewed."""
    try:
        record = HandRecord.loads(Path(path).read_text(encoding="utf-8"))
        seats = [seat] if seat is not None else [s for s in range(3) if decision_points(record, s)]
        result = record.replay().result
    except OSError as exc:
        print(f"tongits review: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"tongits review: {path} is not UTF-8 text", file=sys.stderr)
        return 2
    except RecordError as exc:
        print(f"tongits review: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    if seat is not None and seat not in (0, 1, 2):
        print(f"tongits review: --seat must be 0, 1 or 2, not {seat}", file=sys.stderr)
        return 2
    if budget < 1:
        print("tongits review: --budget must be at least 1", file=sys.stderr)
        return 2
    for s in seats:
        who = record.name(s) if record.names is None else f"{record.name(s)} (seat {s})"
        bar = Bar(who) if progress else None
        review = review_seat(record, s, budget=budget, progress=bar)
        if as_json:
            print(json.dumps(review.to_dict()), flush=True)
        else:
            print(render(review, f"{who}: {len(review.decisions)} decisions",
                         result.chips[s] if result is not None else None), flush=True)
    return 0


def run_lost(
    directory: str,
    *,
    bot: str | None = None,
    worst: int = 3,
    as_json: bool = False,
    budget: int = DEFAULT_BUDGET,
    progress: bool = True,
) -> int:
    """``tongits review DIR``: the hands ``bot`` lost in a folder of hand records, by the chips
    each lost (the engine's settlement, replayed), and a review of the ``worst`` of them at
    that bot's seat. The folder is an arena run (``tongits arena --record DIR``: its
    ``arena.json`` says who sat where in each rotation; ``bot`` defaults to the first of its
    bots) or records that name their players (``tongits export`` of a server's hands, a
    ladder bot's among them, or a client's ``hands/``; ``bot`` defaults to the name that
    played most of them). Exit status 0, or 2 for a directory that holds no such hands or a
    bot it does not name."""
    folder = Path(directory)
    hands = _arena_run(folder) or _named_hands(folder)
    if hands is None:
        print(f"tongits review: {directory} holds no arena run (arena.json) and no hand "
              "records that name their players (tongits export)", file=sys.stderr)
        return 2
    bots, seated = hands
    if bot is None and len(bots) > 1 and _played(seated, bots[0]) == _played(seated, bots[1]):
        print(f"tongits review: whose hands? {', '.join(bots)} played as many of them: say "
              "--bot NAME", file=sys.stderr)
        return 2
    name = bot if bot is not None else bots[0]
    if name not in bots:
        print(f"tongits review: no bot {name!r} in this run; its bots: {', '.join(bots)}",
              file=sys.stderr)
        return 2
    if budget < 1 or worst < 0:
        print("tongits review: --budget must be at least 1 and --worst at least 0",
              file=sys.stderr)
        return 2
    losses, played = _lost_hands(seated, name)
    if not as_json:
        print(f"{name} lost chips in {len(losses)} of {played} hands in {directory}"
              + (f"; the {min(worst, len(losses))} worst, reviewed:" if losses and worst else ""),
              flush=True)
    for chips, file, seat, record, result, sat in losses[:worst]:
        bar = Bar(f"{file} seat {seat}") if progress else None
        review = review_seat(record, seat, budget=budget, progress=bar)
        if as_json:
            print(json.dumps({"file": file, "chips": chips, **review.to_dict()}), flush=True)
        else:
            won = "no winner" if result.winner is None else \
                f"won by {sat[result.winner]} (seat {result.winner})"
            print(f"\n{file}, seat {seat}: {chips:+d} chips ({result.end}, {won})", flush=True)
            print(render(review, f"{name} (seat {seat}): {len(review.decisions)} decisions",
                         chips), flush=True)
    return 0


#: Each hand record of a folder, read, with who sat in seats 0, 1 and 2.
Seated = list[tuple[Path, HandRecord, list[str]]]


def _arena_run(folder: Path) -> tuple[list[str], Seated] | None:
    """The bots of an arena run and its records, each with the bots of its rotation; None
    when ``folder`` holds no ``arena.json``."""
    try:
        meta = json.loads((folder / "arena.json").read_text(encoding="utf-8"))
        bots, seats = list(meta["bots"]), dict(meta["seats"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    seated = [(path, record, list(seats.get(f"rot{path.stem.rpartition('-rot')[2]}", [])))
              for path, record in _records(folder, "deal*-rot*.json")]
    return bots, seated


def _named_hands(folder: Path) -> tuple[list[str], Seated] | None:
    """The records of ``folder`` that name their players, with those names, and the names by
    how many hands each played, most first; None when there is none."""
    seated = [(path, record, list(record.names))
              for path, record in _records(folder, "*.json", quiet=True)
              if record.names is not None]
    played = Counter(name for _, _, names in seated for name in set(names) if name)
    return ([name for name, _ in played.most_common()], seated) if played else None


def _played(seated: Seated, name: str) -> int:
    return sum(1 for _, _, sat in seated if name in sat)


def _records(folder: Path, pattern: str, quiet: bool = False) -> list[tuple[Path, HandRecord]]:
    """The hand records of ``folder`` whose names match ``pattern``, sorted by name; one that
    cannot be read is skipped, saying so (``quiet``: a JSON file that is not a hand record,
    such as the standings ``tongits export`` writes beside them, is skipped without a word)."""
    found = []
    for path in sorted(folder.glob(pattern)):
        try:
            found.append((path, HandRecord.loads(path.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, RecordError) as exc:
            if not quiet:
                print(f"tongits review: {path.name} skipped: {exc}", file=sys.stderr)
    return found


def _lost_hands(seated: Seated, name: str) -> tuple[
        list[tuple[int, str, int, HandRecord, Result, list[str]]], int]:
    """The hands that ``name`` lost chips in, worst first: its chips, the record's file name,
    its seat, the record, its result (replayed) and who sat where; and how many hands it
    played. A record that cannot be replayed is skipped, saying so."""
    losses = []
    played = 0
    for path, record, sat in seated:
        try:
            result = record.replay().result
        except RecordError as exc:
            print(f"tongits review: {path.name} skipped: {exc}", file=sys.stderr)
            continue
        for seat in (s for s in range(3) if s < len(sat) and sat[s] == name):
            played += 1
            if result is not None and result.chips[seat] < 0:
                losses.append((result.chips[seat], path.name, seat, record, result, sat))
    losses.sort(key=lambda lost: (lost[0], lost[1]))
    return losses, played
