"""The user's tongits data directory, and the one way a file holding a secret is written there.

Everything the client keeps between runs lives in ``data_dir()``: the saved seats (``seats/``),
the pinned certificates (``known_servers``), the ladder account keys (``ladder_keys.json``),
the ``tongits play`` game (``play.db``, ``play-setups.json``) and the hand records
(``hands/``). It is platformdirs' user data directory: ``$XDG_DATA_HOME/tongits`` on Linux
(default ``~/.local/share/tongits``), ``~/Library/Application Support/tongits`` on macOS,
``%LOCALAPPDATA%\\tongits`` on Windows.

Seat tokens and account keys seat or sign in whoever holds them, so ``write_private`` writes a
file readable by its owner only, in a folder only its owner can enter, and never leaves a
half-written one under the real name (a crash mid-write keeps the old file whole).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import platformdirs

#: The application's name in the platform's data directory.
APP = "tongits"


def data_dir() -> Path:
    """The user's data directory for tongits, as the platform names it (module docstring)."""
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def write_private(path: Path, text: str) -> None:
    """Replace the file ``path`` with ``text`` at once: written under a temporary name with
    mode ``0600`` in the same folder (made ``0700`` if new), flushed to disk, then renamed, so a
    reader sees the old file or the new, whole. Raises ``OSError`` (the temporary file is then
    gone) when the folder cannot be written."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
