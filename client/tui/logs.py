"""Logging while a full screen is up: log lines must not draw over it."""

from __future__ import annotations

import logging
import os


def quiet_logging() -> None:
    """Keep log lines off the full screen: to the file $TONGITS_LOG if set, else nowhere."""
    path = os.environ.get("TONGITS_LOG")
    handler: logging.Handler = logging.FileHandler(path) if path else logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if path else logging.CRITICAL)
