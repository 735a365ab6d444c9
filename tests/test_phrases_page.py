"""The page and the terminal tell a hand in the same words: each event of its history and its
headline, put together from the phrasebook (protocol/phrases.py) by the terminal's Python and
by the page's JavaScript, run here in Node on the same hands. A hand told differently at the
two ends (a word, a card's notation, a meld's number, who lost a call, what the reader's own
seat is called) fails here."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from screen_support import finished
from tongits.client.tui.render import result_head
from tongits.client.tui.state import LogKind, event_lines
from tongits.engine.view import seat_view_dict
from tongits.protocol.phrases import PHRASES

APP_JS = Path(__file__).resolve().parent.parent / "server" / "net" / "page" / "app.js"
NAMES = ("Ana", "Bob", "Cara")

#: Loads app.js without starting it (its last line, ``start();``, opens the connection) and tells
#: each hand of stdin as the page does: the headline and the events for the seat that played it
#: (its own moves are "You"'s), then the events as a spectator reads them (every seat by name).
NODE_SCRIPT = r"""
const fs = require("fs");
const vm = require("vm");
const appPath = process.argv[process.argv.length - 1];
const source = fs.readFileSync(appPath, "utf8").replace(/\nstart\(\);\s*$/, "\n");
const store = { getItem: () => null, setItem: () => {}, removeItem: () => {} };
const context = vm.createContext({ localStorage: store, sessionStorage: store, console });
const page = vm.runInContext(source + "\n;({ S, handHeadline, narrate, answers });", context);
const input = JSON.parse(fs.readFileSync(0, "utf8"));
page.S.phrases = input.phrases;
const told = input.hands.map((hand) => {
  page.S.seats = hand.names.map((name, seat) => ({ seat, name }));
  page.S.view = hand.view;
  page.S.seat = hand.seat; page.S.spectator = false;
  const call = hand.result.end === "call" ? page.answers(hand.view.history) : null;
  const headline = page.handHeadline(hand.result, call);
  const events = page.narrate(hand.view.history);
  page.S.seat = null; page.S.spectator = true;
  return { headline, events, watched: page.narrate(hand.view.history) };
});
process.stdout.write(JSON.stringify(told));
"""


def _page(hands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    done = subprocess.run([node, "-e", NODE_SCRIPT, str(APP_JS)], check=True, text=True,
                          capture_output=True, timeout=120,
                          input=json.dumps({"phrases": dict(PHRASES), "hands": hands}))
    told: list[dict[str, Any]] = json.loads(done.stdout)
    return told


def test_the_page_and_the_terminal_tell_a_hand_in_the_same_words() -> None:
    terminal, hands, kinds = [], [], set()
    for seed in range(80):
        state, session = finished(seed, NAMES)
        result, view = state.result, state.view
        assert result is not None and view is not None and view.seat is not None
        head = " ".join(result_head(state, result)).rstrip()
        terminal.append({"headline": head,
                         "events": [line.text for line in state.log()
                                    if line.kind is LogKind.EVENT],
                         "watched": [line.text for line in event_lines(view.history, NAMES)]})
        hands.append({"names": list(NAMES), "seat": view.seat,
                      "view": seat_view_dict(session.hand, view.seat),
                      "result": result.to_dict()})
        kinds.add(result.end.value + (" lost" if "challenging" in head else ""))
    assert {"tongits", "call", "call lost", "stock"} <= kinds  # every kind of headline is told
    assert any(line.startswith("You ") for hand in terminal for line in hand["events"])
    page = _page(hands)
    for seed, (ours, theirs) in enumerate(zip(terminal, page, strict=True)):
        assert theirs == ours, f"seed {seed}"
