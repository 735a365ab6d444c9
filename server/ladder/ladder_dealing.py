"""A rated ladder match's table: a lobby table (``MatchDealing``) whose seats are accounts.

It differs from a lobby table in exactly three points, each a hook of ``Dealing``:

* **a seat left before the start** (its human left, or stayed away past the grace period,
  before the first deal): nobody else could take it, since the matchmaker chose every seat, and
  the table would wait for its third player for ever. A server bot sits in under the account's
  name, and the seat forfeits, as a matched client gone before its seat was filled does
  (``matchmaker``);
* **a seat lost during the match** (left, or away past the grace period) forfeits
  (``Ladder.forfeit``);
* **the end**: the match is rated (``Ladder.table_ended``), or void when the table closed before
  its first deal.

The matchmaker opens these tables (``ladder_table``), and a server restarted during a match
opens the table it restores from the journal the same way (``Matchmaker.dealing_for``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..table.dealing import MatchDealing, MatchHost
from .ladder import Ladder

if TYPE_CHECKING:
    from ..lobby import TableFactory
    from ..table.actor import Table
    from ..table.dealing import Dealing
    from ..table.parts import TableParts


class _SitsBots(Protocol):
    def sit_bot(self, seat: int, policy: str | None, shown: str | None = None) -> None: ...


class LadderHost(MatchHost, Protocol):
    """What ``LadderDealing`` asks of its table besides a ``MatchDealing``'s: a seat to sit a
    bot in."""

    @property
    def seating(self) -> _SitsBots: ...


class LadderDealing(MatchDealing):
    """The ``Dealing`` of a table playing the ladder's pending match of its id."""

    __slots__ = ("ladder",)

    table: LadderHost

    #: a rated match does not wait: an account away too long forfeits, a bot plays its seat
    waits = False

    def __init__(self, parts: TableParts, table: LadderHost, ladder: Ladder) -> None:
        super().__init__(parts, table)
        self.ladder = ladder

    def listed(self) -> bool:
        """A ladder table is private to its three accounts: not in ``list_tables``."""
        return False

    def forfeits(self) -> list[int]:
        match = self.ladder.pending.get(self.parts.id)
        return sorted(match.forfeits) if match is not None else []

    def vacated(self, seat: int, name: str) -> bool:
        """A server bot sits in for the account ``name``, which forfeits."""
        self.table.seating.sit_bot(seat, None, name)
        self.forfeited(seat)
        return True

    def forfeited(self, seat: int) -> None:
        self.ladder.forfeit(self.parts.id, seat)

    def ended(self) -> None:
        """Rate the match from the chips of the table's standings (``complete`` if it played
        every hand), or void it if it never started."""
        parts = self.parts
        if not parts.state.started:
            self.ladder.void(parts.id, "its table closed before the match started")
            return
        self.ladder.table_ended(parts.id, parts.state.standings()["chips"],
                                complete=parts.state.match_over is not None)


def ladder_dealing(ladder: Ladder) -> Callable[[TableParts, Table], Dealing]:
    """What ``Table`` takes as its ``dealing``: a ``LadderDealing`` of ``ladder``."""
    return lambda parts, table: LadderDealing(parts, table, ladder)


def ladder_table(ladder: Ladder) -> TableFactory:
    """A table of ``ladder``'s (``Lobby.open``'s ``make``, as ``arena.arena_table``)."""
    from ..table.actor import Table

    dealing = ladder_dealing(ladder)
    return lambda state, config, lobby, journal: Table(state, config, lobby, journal,
                                                       dealing=dealing)
