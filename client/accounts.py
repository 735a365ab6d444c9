"""The ladder account keys this user holds, by server and name.

A server shows an account's key once, in ``registered``, and keeps only its digest: losing the
key loses the account. The keys are kept in ``$XDG_DATA_HOME/tongits/ladder_keys.json``
(default ``~/.local/share/tongits/``), readable by the user only: ``{"HOST:PORT": {"NAME":
"KEY"}}``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .tls import data_dir


class AccountKeys:
    """The key file (``path``, default ``ladder_keys.json`` in the user's data directory)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "ladder_keys.json"

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            server: {n: k for n, k in names.items() if isinstance(k, str)}
            for server, names in data.items() if isinstance(names, dict)
        }

    def get(self, server: str, name: str) -> str | None:
        """The key of account ``name`` at ``server`` (``HOST:PORT``), if this user has it."""
        return self._read().get(server, {}).get(name)

    def save(self, server: str, name: str, key: str) -> None:
        """Keep ``key`` for account ``name`` at ``server`` (the file made user-only)."""
        data = self._read()
        data.setdefault(server, {})[name] = key
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        temporary.replace(self.path)
