"""The narrow seam between the screen and the game: a ``Session`` sends our moves and chat and
delivers ``Update`` values to a sink. ``FakeSession`` plays a whole match in process against two
local bots (for development, tests and playing without a server); ``tongits.client.tui.net``
holds the networked one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from tongits.engine import Hand, IllegalMove, Match, Move, Options, SeatView, seat_view
from tongits.protocol.maps import SeatMap, standings_map

from .hint import choose_move
from .state import (
    ChatReceived,
    HandOver,
    SeatsChanged,
    ServerRefused,
    StateUpdate,
    TableLeft,
    Update,
)

Sink = Callable[[Update], None]
Policy = Callable[[SeatView], Move]


class Session(Protocol):
    """What the table screen needs from the game. All methods return at once; answers arrive
    later through the sink given to ``start``, on the screen's own thread."""

    def start(self, sink: Sink) -> None: ...

    def send_move(self, move: Move) -> None: ...

    def send_chat(self, text: str) -> None: ...

    def next_hand(self) -> None: ...

    def start_match(self) -> None:
        """As the owner of a full table made with ``auto_start`` false, have the first hand
        dealt (the server refuses anyone else)."""
        ...

    def leave(self) -> None:
        """Give the seat up for good before ``close``."""
        ...

    def again(self) -> None:
        """Once the match is over: another match with the same settings and players (or
        bots)."""
        ...

    def to_lobby(self) -> None:
        """Leave the table for the server's lobby (giving the seat up for good if the match
        goes on); only asked of a session whose screen has lobby commands."""
        ...

    #: What quitting does to our seat, in a sentence for the confirmation.
    on_quit: str

    def close(self) -> None: ...

    async def wait_closed(self) -> None: ...


def local_policy(name: str = "greedy") -> Policy:
    """A bot from ``engine.policies`` when it exists, else the hint's own simple player."""
    try:
        from tongits.engine.policies import get_policy

        policy: Policy = get_policy(name)
        return policy
    except (ImportError, KeyError, ValueError):
        return choose_move


class FakeSession:
    """A match in this process: we sit in ``seat``, bots play the other two seats.

    With ``bot_delay`` > 0 the bots' moves are spaced out on the running asyncio loop so a
    person can follow them; with 0 they are played at once, which tests rely on."""

    def __init__(
        self,
        *,
        seat: int = 0,
        names: tuple[str, str, str] = ("You", "Bot 1", "Bot 2"),
        options: Options | None = None,
        seed: int | str = 1,
        bot_delay: float = 0.0,
        timer: float | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.seat = seat
        self.names = names
        self.options, self.seed = options or Options(), seed
        self.match = Match(self.options, seed)
        self.hand: Hand = self.match.deal()
        self.bot_delay = bot_delay
        self.timer = timer
        self.policy = policy or local_policy()
        self.accepted: list[Move] = []
        self.sink: Sink = lambda update: None
        self._pending: asyncio.TimerHandle | None = None
        self._settled = False
        self.on_quit = "This game is played on this computer only: quitting ends it."

    def seats(self) -> list[SeatMap]:
        return [
            {"seat": s, "name": n, "player": "human" if s == self.seat else "bot"}
            for s, n in enumerate(self.names)
        ]

    def start(self, sink: Sink) -> None:
        self.sink = sink
        sink(SeatsChanged(self.seats()))
        self._publish()
        self._continue()

    def _publish(self) -> None:
        view = seat_view(self.hand, self.seat)
        deadline = self.timer if self.timer and view.legal else None
        self.sink(StateUpdate(view, self.seats(), deadline, table="local"))
        if self.hand.over and not self._settled:
            self._settled = True
            assert self.hand.result is not None
            taken = self.match.settle(self.hand.result)
            standings = standings_map(self.match, self.names, taken)
            why = [[item.to_dict() for item in seat] for seat in self.hand.settlement]
            self.sink(HandOver(self.hand.result.to_dict(), standings, why=why))

    def send_move(self, move: Move) -> None:
        try:
            self.hand.apply(self.seat, move)
        except IllegalMove as error:
            self.sink(ServerRefused(error.code, error.message))
            return
        self.accepted.append(move)
        self._publish()
        self._continue()

    def send_chat(self, text: str) -> None:
        self.sink(ChatReceived(self.seat, self.names[self.seat], text))

    def next_hand(self) -> None:
        if not self.hand.over:
            return
        self.hand = self.match.deal()
        self._settled = False
        self._publish()
        self._continue()

    def start_match(self) -> None:
        """Nothing to ask: this game deals at once."""

    def leave(self) -> None:
        """Nothing to give up: the match ends with the screen."""

    def again(self) -> None:
        """A new match against the same bots, dealt at once."""
        self.close()
        self.seed = f"{self.seed}/again"
        self.match = Match(self.options, self.seed)
        self.hand = self.match.deal()
        self._settled = False
        self.sink(TableLeft())
        self.sink(SeatsChanged(self.seats()))
        self._publish()
        self._continue()

    def to_lobby(self) -> None:
        """There is no lobby: the screen offers none."""

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    async def wait_closed(self) -> None:
        return None

    def _continue(self) -> None:
        """Let the bots play until it is our turn or the hand is over."""
        if self.bot_delay <= 0:
            while self._bot_to_act():
                self._bot_step()
            return
        if self._bot_to_act() and self._pending is None:
            loop = asyncio.get_running_loop()
            self._pending = loop.call_later(self.bot_delay, self._delayed_step)

    def _delayed_step(self) -> None:
        self._pending = None
        if self._bot_to_act():
            self._bot_step()
            self._continue()

    def _bot_to_act(self) -> bool:
        return not self.hand.over and self.hand.to_act != self.seat

    def _bot_step(self) -> None:
        seat = self.hand.to_act
        self.hand.apply(seat, self.policy(seat_view(self.hand, seat)))
        self._publish()
