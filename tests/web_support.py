"""A browser's side of the server's port without a browser: raw HTTP requests and a WebSocket
client (wsproto) speaking the protocol's text mode, over any Trio stream.

No test lives here; the tests (and bench/web.py) import these helpers.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Message,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)

APP_JS = Path(__file__).resolve().parent.parent / "server" / "net" / "page" / "app.js"

#: A fake document for the scripts ``run_page`` runs: ``nodes`` holds each element by its id
#: (made when first asked for); an element keeps its children, class, text, attributes and
#: listeners (``on.click()`` taps it); ``memoryStore()`` makes a storage that keeps what is set.
FAKE_DOCUMENT = r"""
class Node {
  constructor(tag) {
    this.tag = tag; this.children = []; this.className = ""; this.textContent = "";
    this.attributes = {}; this.on = {}; this.scrollTop = 0; this.scrollHeight = 0;
    this.classList = { toggle() {}, add() {}, remove() {} };
  }
  append(...nodes) { this.children.push(...nodes); }
  replaceChildren(...nodes) { this.children = nodes; }
  setAttribute(key, value) { this.attributes[key] = value; }
  addEventListener(kind, listener) { this.on[kind] = listener; }
  get firstChild() { const self = this; return { remove: () => self.children.shift() }; }
}
/** A storage that keeps what is set (the page's stores are no-ops otherwise). */
const memoryStore = () => {
  const kept = {};
  return { getItem: (k) => (k in kept ? kept[k] : null), setItem: (k, v) => { kept[k] = v; },
           removeItem: (k) => { delete kept[k]; } };
};
const nodes = {};
globalThis.document = {
  getElementById: (id) => (nodes[id] = nodes[id] || new Node("div")),
  createElement: (tag) => new Node(tag),
};
"""

#: Runs app.js in Node without starting it (its last line, ``start();``, opens the connection),
#: then the test's script in the same scope (the page's ``S`` and functions), with the test's
#: data as ``input``; the script's value is printed as JSON.
_NODE_PAGE = r"""
const fs = require("fs");
const vm = require("vm");
const [appPath, scriptPath] = process.argv.slice(-2);
const source = fs.readFileSync(appPath, "utf8").replace(/\nstart\(\);\s*$/, "\n");
const store = { getItem: () => null, setItem: () => {}, removeItem: () => {} };
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const context = vm.createContext({ localStorage: store, sessionStorage: store, console, input });
const script = fs.readFileSync(scriptPath, "utf8");
const value = vm.runInContext(source + "\n;(() => {" + script + "})();", context);
process.stdout.write(JSON.stringify(value));
"""


def run_page(script: str, data: Any, tmp: Path) -> Any:
    """The value of ``script`` (a function body that ``return``s) run beside the page's own
    JavaScript in Node, with ``data`` as ``input``; skipped where Node.js is not installed."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    path = tmp / "page-test.js"
    path.write_text(script)
    done = subprocess.run([node, "-e", _NODE_PAGE, str(APP_JS), str(path)], check=True,
                          text=True, capture_output=True, timeout=120, input=json.dumps(data))
    return json.loads(done.stdout)


class WebSocketRefused(Exception):
    """The server answered the upgrade with an HTTP status (``status``) instead of 101."""

    def __init__(self, status: int) -> None:
        super().__init__(f"upgrade refused with {status}")
        self.status = status


async def read_response(stream: trio.abc.Stream) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data


class WebSocketClient:
    """The protocol's text mode over a WebSocket: ``send`` a message map, ``receive`` the next
    one (None once the server closed); ``frames`` keeps every text frame received."""

    def __init__(self, stream: trio.abc.Stream, ws: WSConnection) -> None:
        self.stream = stream
        self._ws = ws
        self._inbox: list[str] = []
        self._partial = ""
        self.closed = False
        self.close_code: int | None = None
        self.frames: list[str] = []

    @classmethod
    async def open(cls, stream: trio.abc.Stream, host: str = "127.0.0.1",
                   origin: str | None = None, path: str = "/ws") -> WebSocketClient:
        ws = WSConnection(ConnectionType.CLIENT)
        extra = [(b"Origin", origin.encode())] if origin is not None else []
        await stream.send_all(ws.send(Request(host=host, target=path, extra_headers=extra)))
        client = cls(stream, ws)
        while True:
            data = await stream.receive_some(65536)
            if not data:
                raise WebSocketRefused(0)
            ws.receive_data(bytes(data))
            for event in ws.events():
                if isinstance(event, AcceptConnection):
                    return client
                if isinstance(event, RejectConnection):
                    raise WebSocketRefused(event.status_code)
                if isinstance(event, RejectData):
                    continue
                client._take(event)

    def _take(self, event: object) -> None:
        if isinstance(event, TextMessage):
            self._partial += event.data
            if event.message_finished:
                self.frames.append(self._partial)
                self._inbox.append(self._partial)
                self._partial = ""
        elif isinstance(event, CloseConnection):
            self.closed = True
            self.close_code = event.code

    async def send(self, msg: dict[str, Any]) -> None:
        await self.send_text(json.dumps(msg))

    async def send_text(self, text: str) -> None:
        await self.stream.send_all(self._ws.send(Message(data=text)))

    async def send_raw(self, event: object) -> None:
        """Any wsproto event (a binary message, a ping)."""
        await self.stream.send_all(self._ws.send(event))  # type: ignore[arg-type]

    async def receive(self) -> dict[str, Any] | None:
        while not self._inbox:
            if self.closed:
                return None
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self.closed = True
                return None
            self._ws.receive_data(bytes(data))
            for event in self._ws.events():
                self._take(event)
        msg: dict[str, Any] = json.loads(self._inbox.pop(0))
        return msg

    async def receive_type(self, kind: str) -> dict[str, Any]:
        """Skip messages until one of ``type`` ``kind``; AssertionError if the server closes
        first."""
        while True:
            msg = await self.receive()
            assert msg is not None, f"closed before a {kind}"
            if msg["type"] == kind:
                return msg
