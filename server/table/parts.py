"""What a table's parts share: its state, the ledger that changes it, its clock, its bots and
who asked for the next hand.

A ``Table`` makes one ``TableParts`` and hands it to each of its parts (``Seating``,
``Progression``, its ``Dealing``) when it makes them: the parts work on these values, which
nobody replaces during the table's life, instead of reaching up to the table for them. What a
part must ask of the table itself (a part made after it, or the lobby) it names as a small
Protocol of its own (``SeatingHost``, ``MatchHost``, ``ArenaHost``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import bots
    from .clock import Clock
    from .ledger import Ledger
    from .table import TableLogState


@dataclass(frozen=True, slots=True)
class TableParts:
    """The values one table's parts share (module docstring)."""

    #: the table's id (``tN``)
    id: str
    #: the table's state; only ``ledger`` changes it
    state: TableLogState
    ledger: Ledger
    clock: Clock
    #: the policy of each seat a server bot plays (a stand-in's too)
    policies: dict[int, bots.Policy]
    #: the seats whose player asked for the next hand
    ready: set[int]
