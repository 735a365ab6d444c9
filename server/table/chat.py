"""What was said at a table, kept for whoever sits down, watches or comes back later.

A friend whose Wi-Fi dropped for a minute, or who reopened the page, missed what was said
meanwhile; a spectator who arrives late sees the game's events (the hand's history) but heard
none of its talk. The table keeps its last ``KEPT`` lines and sends them to a connection that
joins, watches or resumes a seat, right after its state, each marked ``earlier`` (since 1.5),
so that a client tells them from what is said now. Each line carries its number at the table
(``n``), from 1: a client that already shows a line (it stayed connected to the screen while
its connection came back) skips it. The lines live as long as the server: a restart starts
the table's talk afresh.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from tongits.protocol import ChatLine, to_dict
from tongits.protocol.message_maps import ChatLineMap

if TYPE_CHECKING:
    from ..net.peer import Peer

#: Lines a table keeps for those who come later: a few minutes of lively talk.
KEPT = 30


class TableChat:
    """A table's recent talk (module docstring)."""

    __slots__ = ("table_id", "tell", "_kept", "_said")

    def __init__(self, table_id: str, tell: Callable[[ChatLineMap], None]) -> None:
        """``tell`` sends a line to everyone at the table (``Audience.tell``)."""
        self.table_id, self.tell = table_id, tell
        self._kept: deque[ChatLineMap] = deque(maxlen=KEPT)
        self._said = 0

    def say(self, seat: int | None, name: str, text: str) -> None:
        """``name`` (at ``seat``, None: watching) says ``text``: everyone at the table hears it."""
        self._said += 1
        line = to_dict(ChatLine(table=self.table_id, seat=seat, name=name, text=text,
                                n=self._said))
        self._kept.append(line)
        self.tell(line)

    def retell(self, peer: Peer) -> None:
        """Send ``peer`` (who just joined, began watching or came back) the lines kept."""
        for line in self._kept:
            peer.send({**line, "earlier": True})
