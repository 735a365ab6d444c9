"""Seat tokens kept on disk, one file per server and player name, so that a client started
again (after a crash, a closed terminal or a laptop that slept) takes its seat back at once.

A token is a secret that seats whoever holds it: the folder is made ``0700`` and every file
``0600`` (``user_files.write_private``: no other user can ever read one, nor anyone a
half-written one). A token the server no longer knows is forgotten when the server
says so (``bad_token``); files older than ``MAX_AGE`` are removed on every open, since no server
keeps a table that long.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..user_files import data_dir, write_private

#: Seconds after which a saved seat is removed unread (a week).
MAX_AGE = 7 * 24 * 3600.0


@dataclass(frozen=True, slots=True)
class SavedSeat:
    """A seat this player held at ``server``: ``token`` resumes it."""

    server: str
    name: str
    token: str
    table: str = ""
    saved_at: float = 0.0
    #: the invite link of the private table we made there, said again when we come back
    #: (a resume does not get the ``joined`` that gave it)
    invite: str = ""


class SeatStore:
    """The saved seats in ``folder`` (default: ``data_dir() / "seats"``)."""

    def __init__(self, folder: Path | None = None, *, now: float | None = None) -> None:
        self.folder = folder if folder is not None else data_dir() / "seats"
        self._prune(time.time() if now is None else now)

    def _path(self, server: str, name: str) -> Path:
        key = hashlib.sha256(f"{server}\n{name}".encode()).hexdigest()[:32]
        return self.folder / f"{key}.json"

    def load(self, server: str, name: str) -> SavedSeat | None:
        """The seat saved for ``name`` at ``server``, if any (an unreadable file is none)."""
        try:
            data = json.loads(self._path(server, name).read_text(encoding="utf-8"))
            seat = SavedSeat(
                server=str(data["server"]),
                name=str(data["name"]),
                token=str(data["token"]),
                table=str(data.get("table", "")),
                saved_at=float(data.get("saved_at", 0.0)),
                invite=str(data.get("invite", "")),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return seat if (seat.server, seat.name) == (server, name) else None

    def save(self, seat: SavedSeat) -> None:
        """Keep ``seat`` (replacing any older one for its server and name). A folder that
        cannot be written is not an error: the game goes on, only a restart will not resume."""
        path = self._path(seat.server, seat.name)
        data = {
            "server": seat.server,
            "name": seat.name,
            "token": seat.token,
            "table": seat.table,
            "saved_at": seat.saved_at or time.time(),
            "invite": seat.invite,
        }
        with contextlib.suppress(OSError):
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.folder, 0o700)
            write_private(path, json.dumps(data))

    def forget(self, server: str, name: str) -> None:
        with contextlib.suppress(OSError):
            self._path(server, name).unlink(missing_ok=True)

    def _prune(self, now: float) -> None:
        try:
            files = list(self.folder.glob("*.json"))
        except OSError:
            return
        for path in files:
            try:
                if now - path.stat().st_mtime > MAX_AGE:
                    path.unlink()
            except OSError:
                continue
