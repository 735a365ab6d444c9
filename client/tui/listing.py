"""The words of the lobby screen: its one-line help and one line per table of the list. Apart
from ``lobby`` (which runs the lobby) so that ``render`` can show them without knowing it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The form of the lobby's ``create`` (bots 0 by default: a table for friends, who ``join`` it).
CREATE_FORM = "create NAME [bots N] [timer S] [hands N] [private]"
LOBBY_HELP = (f"{CREATE_FORM} · join TABLE [SEAT] [CODE] · join INVITE-LINK · "
              "watch TABLE [CODE] · watch INVITE-LINK · queue (a rated ladder match) · quit")
#: The lobby's commands in one message line (their full forms stand on the lobby screen).
LOBBY_COMMANDS = "create NAME · join TABLE · watch TABLE · quit"
#: TABLE is a table's id (t3) or its name.


def match_length_words(length: object) -> str:
    """A table entry's ``match_length`` in words: "3 hands", "±50 chips", "8 hands or ±50
    chips", or "" for an open-ended match (or a length that cannot be read)."""
    if not isinstance(length, dict):
        return ""
    hands, target = length.get("hands"), length.get("target")
    words = []
    if isinstance(hands, int) and not isinstance(hands, bool):
        words.append(f"{hands} hand{'s' if hands != 1 else ''}")
    if isinstance(target, int) and not isinstance(target, bool):
        words.append(f"±{target} chips")
    return " or ".join(words)


def describe(table: Mapping[str, Any]) -> str:
    """One line of the table list."""
    seats = [s for s in table.get("seats") or [] if isinstance(s, dict)]
    names = ", ".join(
        f"{s.get('name')}{'*' if s.get('player') == 'bot' else ''}" for s in seats if s.get("name")
    )
    players = table.get("players", len([s for s in seats if s.get("name")]))
    flags = []
    if table.get("started"):
        flags.append(f"playing, hand {int(table.get('hands', 0)) + 1}")
    else:
        flags.append("waiting")
    length = match_length_words(table.get("match_length"))
    if length:
        flags.append(length)
    if table.get("private"):
        flags.append("private")
    timer = table.get("timer")
    if timer:
        flags.append(f"{timer:g}s")
    return (
        f"{table.get('table', '?'):<5} {str(table.get('name', ''))[:14]:<14} {players}/3  "
        f"{' · '.join(flags):<22} {names}"
    )
