"""Waiting for the table screen in its tests.

The screen runs on prompt_toolkit's asyncio loop and changes when a session's updates arrive
(from a server in another Trio run, in guest mode, or from a ``FakeSession``): a test has no
event of its own to await, so it waits until a condition on the screen (or on the server it
drives) holds, under one cap.

``finished`` plays a ``FakeSession``'s hand to its end for the tests that read the screen (or
the words) of a hand's end. No test lives here; the tests import it (pytest puts ``tests/`` on
``sys.path``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tongits.client.tui.hint import choose_move
from tongits.client.tui.session import FakeSession
from tongits.client.tui.state import TableState
from tongits.engine import Options

#: How long, in seconds, a screen test waits for a condition before it fails.
SETTLE_CAP = 15.0
#: How often the condition is looked at, in seconds.
SETTLE_POLL = 0.005


async def settle(done: Callable[[], bool]) -> None:
    """Return once ``done()`` holds; fail if it does not within ``SETTLE_CAP`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_CAP
    while not done():
        if loop.time() > deadline:
            raise AssertionError("the screen did not get there in time")
        await asyncio.sleep(SETTLE_POLL)


def finished(seed: int, names: tuple[str, str, str] = ("Ana", "Bob", "Cara"),
             options: Options | None = None) -> tuple[TableState, FakeSession]:
    """The hand of ``seed`` played to its end in a ``FakeSession``, every seat moving as the
    hint would (``choose_move``): the screen's state then, and the session."""
    session = FakeSession(seed=seed, names=names, options=options)
    state = TableState()
    session.start(state.apply)
    while state.view is not None and state.view.legal:
        session.send_move(choose_move(state.view))
    return state, session
