"""What a ``tongits play`` game was started with, kept beside its saved seat.

A match under way cannot change its bots, timer or rules, so ``tongits play`` run again resumes
the saved game whatever the flags say. It must not do that silently: the flags typed this time
are compared with the saved game's setup, and the screen says which were not applied and that
``--new`` starts a new game with them (``launch.play``).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..user_files import write_private

#: Each setting's flag on the command line.
FLAGS = {
    "bots": "--bots",
    "timer": "--timer",
    "policy": "--policy",
    "options": "--option",
    "hands": "--hands",
}


@dataclass(frozen=True, slots=True)
class PlaySetup:
    """The settings a ``tongits play`` game keeps for its whole match (the defaults are the
    command's). ``--bot-delay`` is not one: the embedded server paces every bot by the flag
    of the run, a resumed game too."""

    bots: int = 2
    timer: float = 60.0
    policy: str = "greedy"
    options: dict[str, Any] = field(default_factory=dict)
    hands: int | None = None  # the match's length (None: open-ended)

    @classmethod
    def given(cls, typed: dict[str, Any]) -> PlaySetup:
        """The setup of the flags ``typed`` (``None`` or absent: not typed, the default)."""
        return cls(**{k: v for k, v in typed.items() if k in FLAGS and v is not None})

    def not_applied(self, typed: dict[str, Any]) -> list[str]:
        """The flags in ``typed`` whose value differs from this (saved) game's, each with what
        the game has instead: ``--bots 1 (this game: 2)``."""
        out = []
        for name, flag in FLAGS.items():
            value = typed.get(name)
            if value is None or value == getattr(self, name):
                continue
            if name == "options":
                if not value:
                    continue
                wanted = " ".join(f"{flag} {k}={_word(v)}" for k, v in value.items())
                have = ", ".join(f"{k}={_word(v)}" for k, v in self.options.items()) or "standard"
                out.append(f"{wanted} (this game: {have})")
            else:
                out.append(f"{flag} {_word(value)} (this game: {_word(getattr(self, name))})")
        return out


def _word(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class SetupStore:
    """The setup of each player's saved game, in one JSON file (by name, as the seats are)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def load(self, name: str) -> PlaySetup | None:
        """The saved game's setup for ``name``; ``None`` if unknown or unreadable."""
        entry = self._read().get(name)
        if not isinstance(entry, dict):
            return None
        known = {f.name for f in fields(PlaySetup)}
        try:
            return PlaySetup(**{k: v for k, v in entry.items() if k in known})
        except TypeError:
            return None

    def save(self, name: str, setup: PlaySetup) -> None:
        """Keep ``setup`` for ``name``; a file that cannot be written only loses the check."""
        data = self._read()
        data[name] = asdict(setup)
        with contextlib.suppress(OSError):
            write_private(self.path, json.dumps(data))
