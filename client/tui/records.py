"""Hand records a remote player keeps: the server sends each hand's record with its
``hand_result`` (docs/PROTOCOL.md), and ``tongits connect`` writes it where ``tongits play``
writes its own (``hands/`` in the data directory), for ``tongits replay`` and ``review``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: What may stand in a file name taken from a server's address or a table's id.
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def record_path(directory: Path, server: str, table: str, hand: int | None) -> Path:
    """``DIR/SERVER-TABLE-hand-N.json``, the server's address and the table's id made safe
    for a file name."""
    stem = "-".join(_UNSAFE.sub("_", part).strip("_") or "x" for part in (server, table))
    return directory / f"{stem}-hand-{hand if hand is not None else 0}.json"


def saved_words(path: Path, folder_said: bool) -> list[str]:
    """What the screen says of a record just written: its folder (once a session, ``~`` for
    the home directory), then ``tongits replay NAME`` for the file, which ``tongits replay``
    finds in the records' folder. The whole path in one line was cut off in the log (about
    46 columns at 80), so the file's name could not be read."""
    folder = str(path.parent)
    home = str(Path.home())
    if folder == home or folder.startswith(home + "/"):
        folder = "~" + folder[len(home):]
    said = [] if folder_said else [f"hand records are kept in {folder}/"]
    return [*said, f"saved: tongits replay {path.name}"]


def find_record(name: str, folder: Path) -> Path:
    """The record ``name`` names: a path as given, else (a bare file name that is not in the
    working directory) the file of that name in ``folder``, where the screen saves them."""
    given = Path(name)
    if given.exists() or given.name != name or not (folder / name).is_file():
        return given
    return folder / name


def save_record(directory: Path, server: str, table: str, hand: int | None,
                record: Mapping[str, Any]) -> Path:
    """Write ``record`` and return its path. The same record again (a resumed connection is
    sent the last ``hand_result`` again) lands on the same file; another record that would
    take an existing name (a restarted server counts its tables from ``t1`` again) gets a
    name of its own (``…-hand-1.2.json``), so no kept hand is overwritten."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    text = json.dumps(record, indent=1) + "\n"
    path = first = record_path(directory, server, table, hand)
    again = 1
    while path.exists() and path.read_text(encoding="utf-8") != text:
        again += 1
        path = first.with_name(f"{first.stem}.{again}.json")
    path.write_text(text, encoding="utf-8")
    return path
