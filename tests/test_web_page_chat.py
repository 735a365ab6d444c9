"""The table's recent talk on the page: the server tells it again (``chat.earlier``, protocol
1.5) to a phone that comes back or reopens the page, whose tab may still show some of it (the
tab keeps its log over a reload). Run in Node with a fake DOM and a session store that
survives the "reload"."""

from __future__ import annotations

from pathlib import Path

from web_support import FAKE_DOCUMENT, run_page

#: The page's ``chat`` handler over ``input.steps``: a chat message, or ``"reload"`` (the log
#: is read back from the session store as a reopened tab does). The log's chat lines after
#: each step.
TALK = FAKE_DOCUMENT + r"""
const kept = {};
globalThis.sessionStorage = {
  getItem: (k) => (k in kept ? kept[k] : null),
  setItem: (k, v) => { kept[k] = v; },
  removeItem: (k) => { delete kept[k]; },
};
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
