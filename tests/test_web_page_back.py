"""What a phone finds when it comes back (its connection back, or the page reopened): the table's
recent talk, which the server tells again (``chat.earlier``, protocol 1.5) while the tab may
still show some of it (it keeps its log over a reload), and "Again" after a match that ended
before the reload. Run in Node with a fake DOM and stores that survive the "reload"."""

from __future__ import annotations

from pathlib import Path

from web_support import FAKE_DOCUMENT, run_page

#: The page's ``chat`` handler over ``input.steps``: a chat message, or ``"reload"`` (the log
#: is read back from the session store as a reopened tab does). The log's chat lines after
#: each step.
TALK = FAKE_DOCUMENT + r"""
globalThis.sessionStorage = memoryStore();
S.table = "t1"; S.seats = [{ seat: 0, name: "Ana" }, { seat: 1, name: "Ben" }];
return input.steps.map((step) => {
  if (step === "reload") { S.log = []; S.heard = []; restoreLog("t1"); }
  else HANDLERS.chat(step);
  return nodes.log.children.filter((li) => li.className === "chat-line")
    .map((li) => li.textContent);
});
"""


def _line(n: int, name: str, text: str, earlier: bool = False) -> dict[str, object]:
    line: dict[str, object] = {"type": "chat", "table": "t1", "seat": 0 if name == "Ana" else 1,
                               "name": name, "text": text, "n": n}
    if earlier:
        line["earlier"] = True
    return line


def test_a_reopened_page_shows_what_was_said_meanwhile_once(tmp_path: Path) -> None:
    steps = [_line(1, "Ana", "hi"), "reload", _line(1, "Ana", "hi", earlier=True),
             _line(2, "Ben", "where did you go?", earlier=True), _line(3, "Ana", "hi")]
    shown = run_page(TALK, {"steps": steps}, tmp_path)
    assert shown[0] == ["Ana: hi"]
    assert shown[1] == ["Ana: hi"]  # the log kept by the tab
    assert shown[2] == ["Ana: hi"]  # told again: shown already
    assert shown[-1] == ["Ana: hi", "Ben: where did you go?", "Ana: hi"]


def test_an_older_server_s_lines_without_numbers_are_all_shown(tmp_path: Path) -> None:
    steps = [{"type": "chat", "table": "t1", "seat": 1, "name": "Ben", "text": "gg"}] * 2
    assert run_page(TALK, {"steps": steps}, tmp_path)[-1] == ["Ben: gg", "Ben: gg"]


#: A match played to its end (``match_over``), the page reloaded (``S`` as a new page has it),
#: then the lobby shown: the offer's words and what tapping "Again" sends.
AGAIN = FAKE_DOCUMENT + r"""
globalThis.localStorage = memoryStore();
globalThis.setInterval = () => 0; globalThis.clearInterval = () => {};
globalThis.history = { replaceState() {} };
globalThis.WebSocket = { OPEN: 1 };
const sent = [];
const socket = { readyState: 1, send: (data) => sent.push(JSON.parse(data)) };
S.ws = socket; S.table = "t4"; S.tableName = "Friday"; S.seat = 1; S.spectator = false;
S.seats = [{ seat: 0, name: "Ana" }, { seat: 1, name: "Ben" }, { seat: 2, name: "Cara" }];
localStorage.setItem(SEAT_KEY, JSON.stringify({ token: "tok-1", table: "t4", name: "Friday" }));
const standings = { hands: 2, chips: [3, -1, -2], wins: [1, 1, 0], pot: 0 };
try { HANDLERS.match_over({ type: "match_over", table: "t4", reason: "hands", standings }); }
catch (e) { /* drawing the match-over screen needs more of a document than this one */ }
// the reload: a new page's state, the same localStorage
S.table = null; S.rematch = null; S.tableName = ""; S.ws = socket;
show("lobby");
const offer = nodes["again-offer"];
const text = (node) => node.textContent || node.children.join("");
const shown = { hidden: offer.hidden, text: offer.children.map(text) };
offer.children[1].on.click();
const after = (() => { show("lobby"); return nodes["again-offer"].hidden; })();
return { shown, sent: sent.filter((m) => m.type === "create_table"), after };
"""


def test_a_page_reloaded_at_a_match_s_end_still_offers_again(tmp_path: Path) -> None:
    """A phone reloaded on the match-over screen landed in the lobby with no "Again": the page
    forgot the seat's token at ``match_over``. The lobby now offers it, once."""
    told = run_page(AGAIN, {}, tmp_path)
    assert told["shown"] == {"hidden": False, "text": [
        "Your match at Friday is over.", "Again: another match, same players", "Dismiss"]}
    (create,) = told["sent"]
    assert (create["rematch"], create["token"], create["name"]) == ("t4", "tok-1", "Friday")
    assert told["after"] is True
