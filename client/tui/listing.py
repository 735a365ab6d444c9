"""The words of the lobby screen: its one-line help and one line per table of the list. Apart
from ``lobby`` (which runs the lobby) so that ``render`` can show them without knowing it."""

from __future__ import annotations

from collections.abc import Mapping

from tongits.protocol import PlayerKind
from tongits.protocol.maps import TableInfoMap

#: The form of the lobby's ``create`` (bots 0 by default: a table for friends, who ``join`` it).
CREATE_FORM = "create NAME [bots N] [timer S] [hands N] [private]"
LOBBY_HELP = (f"{CREATE_FORM} · join TABLE [SEAT] [CODE] · join INVITE-LINK · "
              "watch TABLE [CODE] · watch INVITE-LINK · queue (a rated ladder match) · quit")
#: The lobby's commands in one message line (their full forms stand on the lobby screen).
LOBBY_COMMANDS = "create NAME · join TABLE · watch TABLE · quit"
#: TABLE is a table's id (t3) or its name.


def match_length_words(length: Mapping[str, int]) -> str:
    """A table entry's ``match_length`` in words: "3 hands", "±50 chips", "8 hands or ±50
    chips", or "" for an open-ended match."""
    hands, target = length.get("hands"), length.get("target")
    words = []
    if hands is not None:
        words.append(f"{hands} hand{'s' if hands != 1 else ''}")
    if target is not None:
        words.append(f"±{target} chips")
    return " or ".join(words)


def describe(table: TableInfoMap) -> str:
    """One line of the table list."""
    names = ", ".join(f"{name}{'*' if s['player'] == PlayerKind.BOT else ''}"
                      for s in table["seats"] if (name := s.get("name")))
    flags = [f"playing, hand {table['hands'] + 1}" if table["started"] else "waiting"]
    length = match_length_words(table.get("match_length", {}))
    if length:
        flags.append(length)
    if table["private"]:
        flags.append("private")
    if table["timer"]:
        flags.append(f"{table['timer']:g}s")
    return (
        f"{table['table']:<5} {table['name'][:14]:<14} {table['players']}/3  "
        f"{' · '.join(flags):<22} {names}"
    )
