"""The ladder account keys this user holds, by server and name.

A server shows an account's key once, in ``registered``, and keeps only its digest: losing the
key loses the account. The keys are kept in ``ladder_keys.json`` of the user's data directory
(``user_files.data_dir``: ``~/.local/share/tongits/`` on Linux), readable by the user only:
``{"HOST:PORT": {"NAME": "KEY"}}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from .user_files import data_dir, write_private


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
        write_private(self.path, json.dumps(data, indent=1))
