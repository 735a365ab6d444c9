"""The user's tongits data directory, and the one way a file holding a secret is written there.

Everything the client keeps between runs lives in ``data_dir()``: the saved seats (``seats/``),
the pinned certificates (``known_servers``), the ladder account keys (``ladder_keys.json``),
the ``tongits play`` game (``play.db``, ``play-setups.json``) and the hand records
(``hands/``). It is platformdirs' user data directory: ``$XDG_DATA_HOME/tongits`` on Linux
(default ``~/.local/share/tongits``), ``~/Library/Application Support/tongits`` on macOS,
``%LOCALAPPDATA%\\tongits`` on Windows.

Before, the client kept its pins, account keys, seats and play setups in
``$XDG_DATA_HOME/tongits`` (``~/.local/share/tongits``) on every platform (``old_data_dir``).
Where that is not the data directory (macOS, Windows), the first ``data_dir()`` of a run moves
it in (``migrate``): once, file by file, never over a newer file, every file written ``0600``.

Seat tokens and account keys seat or sign in whoever holds them, so ``write_private`` writes a
file readable by its owner only, in a folder only its owner can enter, and never leaves a
half-written one under the real name (a crash mid-write keeps the old file whole).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import tempfile
from pathlib import Path

import platformdirs

#: The application's name in the platform's data directory.
APP = "tongits"

#: The file in the data directory that says the old one was moved in (``migrate``); it holds
#: the old directory's path.
MIGRATED = ".migrated"

log = logging.getLogger("tongits.client")


def data_dir() -> Path:
    """The user's data directory for tongits, as the platform names it (module docstring),
    with the old directory's files moved in the first time a run asks (``migrate``)."""
    folder = Path(platformdirs.user_data_dir(APP, appauthor=False))
    _migrate_once(old_data_dir(), folder)
    return folder


def old_data_dir() -> Path:
    """Where the client kept its files before it asked the platform: ``$XDG_DATA_HOME/tongits``,
    by default ``~/.local/share/tongits``, on every platform (the data directory on Linux)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / APP


@functools.cache
def _migrate_once(old: Path, new: Path) -> None:
    """``migrate`` at most once a run; a failure is logged, never raised (the client works
    without the old files, and the next run tries again)."""
    try:
        migrate(old, new)
    except OSError as exc:
        log.warning("could not move %s into %s: %s", old, new, exc)


def migrate(old: Path, new: Path) -> list[Path]:
    """Move the files of the old data directory ``old`` into ``new``, once: each file (seats,
    pins, account keys, play setups, games, hand records) is copied unless ``new`` holds a
    file of that name as new or newer, written as ``write_private`` writes (``0600``, in
    ``0700`` folders) with its modification time kept; then ``MIGRATED`` marks ``new`` so no
    later run copies again. ``old`` is left as it was (nothing is lost if a copy fails). Nothing
    happens when ``old`` is ``new`` (Linux), is missing, or was moved in already. Returns the
    files copied; raises ``OSError`` when a file cannot be read or written (no mark then)."""
    marker = new / MIGRATED
    if old == new or not old.is_dir() or marker.exists():
        return []
    copied = []
    for source in sorted(old.rglob("*")):
        if source.is_symlink() or not source.is_file():
            continue
        target = new / source.relative_to(old)
        modified = source.stat().st_mtime
        if target.exists() and target.stat().st_mtime >= modified:
            continue
        write_private(target, source.read_bytes())
        os.utime(target, (modified, modified))
        copied.append(target)
    write_private(marker, f"{old}\n")
    log.info("moved %d files of %s into %s", len(copied), old, new)
    return copied


def write_private(path: Path, data: str | bytes) -> None:
    """Replace the file ``path`` with ``data`` (text: UTF-8) at once: written under a temporary
    name with mode ``0600`` in the same folder (made ``0700`` with its parents if new), flushed
    to disk, then renamed, so a reader sees the old file or the new, whole. Raises ``OSError``
    (the temporary file is then gone) when the folder cannot be written."""
    folder = path.parent
    _private_folder(folder)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _private_folder(folder: Path) -> None:
    """Make ``folder`` and the parents it lacks, each ``0700`` (``mkdir(parents=True)`` would
    make the parents with the default mode)."""
    if folder.is_dir():
        return
    _private_folder(folder.parent)
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
