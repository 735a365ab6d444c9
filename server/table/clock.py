"""A table's clock: when its task must act on its own.

A bot seat to act is played after ``bot_delay``; a human seat that lets the turn timer run out
is played for; after a hand the next one is dealt when the timer runs out; a disconnected
human's grace period ends. What the table does then is ``Progression.wake``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from ..config import ServerConfig
    from .table import TableLogState


class Clock:
    """The timers of one table: the turn (or bot, or deal) timer ``turn_at`` and the grace
    periods of disconnected humans ``away_until``, in ``trio.current_time()`` seconds."""

    __slots__ = ("state", "config", "paused", "turn_at", "away_until", "autoplaying", "_timed")

    def __init__(self, state: TableLogState, config: ServerConfig,
                 paused: Callable[[], bool] = lambda: False) -> None:
        self.state, self.config = state, config
        #: whether the table waits for its players (``Dealing.paused``): nothing is timed
        self.paused = paused
        self.turn_at = math.inf
        #: the turn ``turn_at`` times (``schedule``): a timer running for it is not started again
        self._timed: tuple[object, ...] | None = None
        #: seats whose human is disconnected, and when their grace period ends
        self.away_until: dict[int, float] = {}
        #: the seat whose timed-out turn the server is playing, during that step
        self.autoplaying: int | None = None

    @property
    def wake_at(self) -> float:
        """When the task must wake up on its own: a turn, a bot, a deal or a grace period."""
        if self.away_until:
            return min(self.turn_at, min(self.away_until.values()))
        return self.turn_at

    def grace(self) -> float:
        """How long a disconnected human keeps the seat: ``grace`` once the match has begun,
        at most ``pregame_grace`` before (a table abandoned before its match closes soon, and
        its creator's address gets its table back)."""
        config = self.config
        if self.state.started:
            return config.grace
        return min(config.grace, config.pregame_grace)

    def schedule(self) -> None:
        """When the task must act on its own: a bot's move, a turn timer, the next deal. Before
        the first deal there is nothing to time: whatever is set stays (the arena's dealing
        looks for its programs meanwhile). A timer already running for the same turn, played
        by the same kind of player, runs on: a seat that drops or comes back while another is
        to act changes nothing for that turn (everyone was shown its deadline; a timer started
        again at each drop let a player who drops again and again hold the table up)."""
        state = self.state
        hand = state.hand
        timer = state.timer
        if hand is None:
            return
        if self.paused():
            self.turn_at, self._timed = math.inf, None
            return
        over = hand.over
        seat = None if over else state.seats[hand.to_act]
        bot = seat is not None and seat.is_bot
        # What a timer is for: the hand and its step (or its end), and whether a bot plays
        # the seat to act (a human back from a stand-in starts a turn of their own).
        turn = (hand, len(hand.steps), over, bot)
        if turn == self._timed and math.isfinite(self.turn_at):
            return
        self._timed = turn
        if bot:
            self.turn_at = trio.current_time() + self.config.bot_delay
            return
        self.turn_at = trio.current_time() + timer if timer > 0 else math.inf
