"""Small pieces of English shared by every screen and message of the client."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 card``, ``2 cards``, ``0 tables``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
