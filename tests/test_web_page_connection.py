"""The page's connection on a network that drops without a word (Wi-Fi out of reach, a phone
between networks), run in Node with a fake WebSocket and a fake clock. In three network
namespaces, a phone whose link went down for a minute showed "connected" all along (the
browser said nothing until the network came back), offered moves that went nowhere, and began
connections that waited for the network for minutes."""

from __future__ import annotations

from pathlib import Path

from web_support import run_page

#: A fake clock, timers, DOM and WebSocket around the page's ``connect``; ``input.steps`` say
#: what happens: ``at`` a time (ms), ``open`` the newest socket, ``hear`` a message on socket
#: ``n``, ``beat`` the heartbeat's tick, ``sleep`` and ``wake`` the page (a locked screen),
#: ``close`` socket ``n`` closed. Each step's result: the sockets' states, what each
#: sent, the page's status line, and when the page takes the link to have been lost.
NETWORK = r"""
let now = 0;
Date.now = () => now;
const timers = [];
globalThis.setTimeout = (f, ms) => { timers.push({ at: now + ms, f }); return timers.length; };
globalThis.setInterval = () => 0;
globalThis.clearInterval = () => {};
const elements = {};
globalThis.document = {
  getElementById: (id) => (elements[id] = elements[id] || { textContent: "" }),
};
globalThis.location = { protocol: "http:", host: "phone.test" };
const sockets = [];
class FakeSocket {
  constructor() {
    this.readyState = 0; this.sent = []; this.on = {}; this.closed = false;
    sockets.push(this);
  }
  addEventListener(kind, f) { this.on[kind] = f; }
  send(data) { this.sent.push(JSON.parse(data).type); }
  close() { this.closed = true; }
}
FakeSocket.CONNECTING = 0; FakeSocket.OPEN = 1;
globalThis.WebSocket = FakeSocket;
S.name = "Mia";
connect();
return input.steps.map((step) => {
  for (;;) {  // the timers due by then, each at its time
    timers.sort((a, b) => a.at - b.at);
    if (!timers.length || timers[0].at > step.at) break;
    const timer = timers.shift();
    now = timer.at;
    timer.f();
  }
  now = step.at;
  const ws = sockets[sockets.length - 1];
  if (step.do === "open") { ws.readyState = 1; ws.on.open(); }
  if (step.do === "hear") sockets[step.socket].on.message({ data: '{"type":"pong"}' });
  if (step.do === "beat") beat();
  if (step.do === "sleep") asleep();
  if (step.do === "wake") awake();
  if (step.do === "close") sockets[step.socket].on.close();
  return { sockets: sockets.map((s) => ({ sent: [...s.sent], closed: s.closed })),
           current: sockets.indexOf(S.ws),
           status: elements.status ? elements.status.textContent : "", lostAt: S.lostAt };
});
"""


def _run(steps: list[dict[str, object]], tmp: Path) -> list[dict[str, object]]:
    told: list[dict[str, object]] = run_page(NETWORK, {"steps": steps}, tmp)
    return told


def test_a_ping_unanswered_for_two_periods_gives_the_connection_up(tmp_path: Path) -> None:
    told = _run([
        {"at": 0, "do": "open"},
        {"at": 10_000, "do": "beat"},                     # a ping
        {"at": 10_050, "do": "hear", "socket": 0},        # its pong
        {"at": 20_000, "do": "beat"},                     # a ping: the network is gone
        {"at": 30_000, "do": "beat"},                     # 10 s unanswered: another ping
        {"at": 40_001, "do": "beat"},                     # 20 s: lost
        {"at": 40_002, "do": "hear", "socket": 0},        # the old one heard late: ignored
        {"at": 42_000},                                   # the next connection is begun
    ], tmp_path)
    assert told[0]["sockets"] == [{"sent": ["hello"], "closed": False}]
    assert told[4]["sockets"] == [{"sent": ["hello", "ping", "ping", "ping"], "closed": False}]
    assert told[4]["status"] != "connection lost, reconnecting…"
    lost = told[5]
    assert lost["sockets"] == [{"sent": ["hello", "ping", "ping", "ping"], "closed": True}]
    assert lost["current"] == -1 and lost["status"] == "connection lost, reconnecting…"
    # lost since its ping went unanswered, not since the page noticed (the log's "connection
    # back after N s" counted from 40 s: a 71 s outage read 47 s)
    assert lost["lostAt"] == 20_000
    assert told[6]["current"] == -1
    assert len(told[7]["sockets"]) == 2 and told[7]["current"] == 1  # type: ignore[arg-type]


def test_a_tab_whose_timers_slow_to_once_a_minute_is_not_taken_for_lost(tmp_path: Path) -> None:
    steps: list[dict[str, object]] = [{"at": 0, "do": "open"}]
    for minute in range(1, 6):
        steps += [{"at": minute * 60_000, "do": "beat"},
                  {"at": minute * 60_000 + 80, "do": "hear", "socket": 0}]
    told = _run(steps, tmp_path)
    assert told[-1]["sockets"] == [{"sent": ["hello"] + ["ping"] * 5, "closed": False}]
    assert told[-1]["current"] == 0


def test_a_connection_that_does_not_open_is_begun_again(tmp_path: Path) -> None:
    """Begun while the network is gone, a connection waits for it as long as the browser
    lets it; another is begun after 10 s, once, so the page is back soon after the network
    and does not open two connections that take the seat from each other."""
    told = _run([
        {"at": 9_000},
        {"at": 10_001},                                   # still connecting: begun again
        {"at": 19_000},
        {"at": 30_000},
        {"at": 30_500, "do": "open"},                     # the network is back
        {"at": 60_000},
    ], tmp_path)
    assert [len(t["sockets"]) for t in told] == [1, 1, 2, 3, 3, 3]  # type: ignore[arg-type]
    assert told[1]["sockets"][0]["closed"] is True  # type: ignore[index]
    assert told[-1]["current"] == 2 and told[-1]["sockets"][2]["sent"] == ["hello"]  # type: ignore[index]


def test_a_loss_noticed_on_waking_is_counted_from_the_sleep(tmp_path: Path) -> None:
    """A phone locked for 90 s: the page is frozen, the server closes the silent connection,
    and the page hears of it only once unlocked; "connection back after 1 s" was logged. A loss
    noticed as the page wakes counts from when it went to sleep; one long after, from itself."""
    locked = _run([
        {"at": 0, "do": "open"},
        {"at": 10_000, "do": "sleep"},                    # the screen locks
        {"at": 100_000, "do": "wake"},                    # unlocked 90 s later
        {"at": 100_050, "do": "close", "socket": 0},      # the close the server sent meanwhile
    ], tmp_path)
    assert locked[-1]["lostAt"] == 10_000
    glanced = _run([
        {"at": 0, "do": "open"},
        {"at": 10_000, "do": "sleep"},                    # locked for a moment, the link fine
        {"at": 11_000, "do": "wake"},
        {"at": 100_000, "do": "close", "socket": 0},      # lost later, awake
    ], tmp_path)
    assert glanced[-1]["lostAt"] == 100_000


def test_a_connection_closed_for_its_silence_is_no_error_on_the_page(tmp_path: Path) -> None:
    """Unlocked after 90 s, a phone showed the server's "nothing heard for 60 s (heartbeat 20
    s)" in the error's colour above the table, while the status already said "connection lost,
    reconnecting…"; another error is still shown."""
    noticed = run_page(r"""
const shown = [];
notice = (text) => { shown.push(text); };
HANDLERS.error({ type: "error", code: "idle_timeout",
                 message: "nothing heard for 60 s (heartbeat 20 s)" });
HANDLERS.error({ type: "error", code: "bad_move", message: "not your turn" });
return shown;
""", None, tmp_path)
    assert noticed == ["not your turn"]
