"""A table's ledger: the only way its state changes.

Every part that changes a table (``progression.Progression`` playing a move or dealing,
``seating.Seating`` seating someone, a ``Dealing`` of its own) commits its entry here, below
the table, instead of calling back up to it: ``Ledger.commit`` applies the entry (the engine
refuses an illegal move before anything changes), then journals it, with the hand record if it
ended the hand. Both happen before the table's task yields, so before anyone hears of the
change.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tongits.engine import hand_record
from tongits.engine.wire import RecordMap

from ..storage.journal import FinishedHand
from .entries import Entry, MoveEntry

if TYPE_CHECKING:
    from ..storage.commit import GroupCommit
    from .table import TableLogState

log = logging.getLogger("tongits.server")


class Ledger:
    """Commits the entries of the table ``table_id``, whose state is ``state``, to
    ``journal``. ``broken``: an entry could not be journaled (the table must close).
    ``record``: the record of the hand the last move ended, as it was journaled (the
    ``hand_result`` of that hand carries the same map: made once, not twice)."""

    __slots__ = ("table_id", "state", "journal", "broken", "record")

    def __init__(self, table_id: str, state: TableLogState, journal: GroupCommit) -> None:
        self.table_id = table_id
        self.state = state
        self.journal = journal
        self.broken = False
        self.record: RecordMap | None = None

    def commit(self, entry: Entry) -> None:
        """Apply ``entry``, then journal it; raises what the engine or the journal raised
        (a journal that cannot write leaves the ledger ``broken``)."""
        state = self.state
        state.apply(entry)
        finished: FinishedHand | None = None
        hand = state.hand
        if isinstance(entry, MoveEntry) and hand is not None and hand.over:
            assert state.match is not None
            names = state.seat_names()
            self.record = hand_record(hand, names)
            finished = {"hand": state.match.hands_played, "names": names,
                        "record": self.record}
        try:
            self.journal.append(self.table_id, entry, finished)
        except Exception:
            log.exception("table %s: cannot journal %s; closing the table", self.table_id,
                          type(entry).__name__)
            self.broken = True
            raise
