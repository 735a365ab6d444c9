"""Browsers on the server's port, without a browser: the page over HTTP with its security
headers and limits, and the protocol's text mode over a WebSocket as the same ``Peer`` (same
codec, limits and password). Everything runs on in-memory streams on the virtual clock, but
for TLS (a real port and a test CA)."""

from __future__ import annotations

import gzip
import html
import json
import math
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import trio
import trio.testing
import trustme
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import TIME_CAP, capped, quick_config, until
from tongits.protocol import ErrorCode
from tongits.protocol.phrases import PHRASES
from tongits.protocol.transport import Endpoint, Invite
from tongits.server import MemoryJournal, Server
from tongits.server.net.lan import lan_address
from tongits.server.net.tls import ServerTLS
from tongits.server.net.web import (
    CONTENT_SECURITY_POLICY,
    MAX_HEAD,
    RETRY_AFTER,
    browser_address,
    http_start,
)
from tongits.server.net.websocket import WebSocketCarrier, text_frame
from web_support import WebSocketClient, WebSocketRefused, read_response
from wsproto.events import AcceptConnection, BytesMessage, Message, Ping

HELLO = {"type": "hello", "id": 1, "version": 1, "name": "Ana", "kind": "human"}


@asynccontextmanager
async def served(server: Server, address: str = "10.0.0.1:1") -> AsyncIterator[trio.abc.Stream]:
    """One in-memory connection to ``server`` from ``address``."""
    client, server_side = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, server_side, address)
        yield client
        await client.aclose()


@asynccontextmanager
async def running(password: str | None = None, **changes: Any) -> AsyncIterator[Server]:
    """A server on in-memory streams only (``served`` connects to it)."""
    server = Server(quick_config(**changes), MemoryJournal(), password=password)
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))
        yield server
        nursery.cancel_scope.cancel()


def parse(response: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of one HTTP response."""
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


async def get(server: Server, target: str, method: str = "GET", extra: str = "",
              host: str = "127.0.0.1") -> bytes:
    async with served(server) as stream:
        await stream.send_all(f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n"
                              f"Connection: close\r\n{extra}\r\n".encode())
        return await read_response(stream)


@capped
async def test_the_page_and_its_invite_address_carry_a_strict_policy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running() as server:
        for target in ("/", "/t/t3?code=abc234defg"):
            status, headers, body = parse(await get(server, target))
            assert status == 200
            assert headers["content-type"].startswith("text/html")
            assert b'<script src="/app.js"' in body and b"<script>" not in body
            policy = headers["content-security-policy"]
            assert policy == CONTENT_SECURITY_POLICY
            assert "default-src 'self'" in policy and "unsafe" not in policy
            assert headers["referrer-policy"] == "no-referrer"  # the join code stays on the page
            assert headers["x-content-type-options"] == "nosniff"
        status, headers, body = parse(await get(server, "/app.js"))
        assert status == 200 and headers["content-type"].startswith("text/javascript")
        assert "content-security-policy" in headers
        status, headers, body = parse(await get(server, "/", method="HEAD"))
        assert status == 200 and body == b"" and int(headers["content-length"]) > 1000
        assert parse(await get(server, "/etc/passwd"))[0] == 404
        assert parse(await get(server, "/../server/app.py"))[0] == 404


def _invited_to(page: bytes) -> str:
    """The table's name the page an invite link opens holds for its first form ("" none)."""
    meta = b'<meta name="invited-to" content="'
    start = page.index(meta) + len(meta)
    return html.unescape(page[start:page.index(b'"', start)].decode())


@capped
@pytest.mark.parametrize("password", [None, "pw"])
async def test_an_invite_links_page_names_its_table_to_those_it_may(
    autojump_clock: trio.testing.MockClock, password: str | None,
) -> None:
    """The form a friend who tapped an invite link meets said "You are invited to a table":
    which table, the page did not know before the friend's hello. The server puts the table's
    name in the page of ``/t/TABLE``: for a private table only with its code, and on a server
    with a password only with a code (a link without one proves nothing of its holder)."""
    async with (running(password) as server, served(server, "127.0.0.1:5") as one,
                served(server, "127.0.0.1:6") as other):
        tables = {}
        for stream, private in ((one, False), (other, True)):
            ws = await WebSocketClient.open(stream)
            await ws.send({**HELLO, **({"password": password} if password else {})})
            await ws.receive_type("welcome")
            name = f"Ana & Bo's <{'private' if private else 'open'}> table"
            await ws.send({"type": "create_table", "id": 2, "name": name, "bots": 1,
                           "private": private})
            joined = await ws.receive_type("joined")
            tables[private] = (joined["table"], joined.get("code"), name)
        public_id, _, public_name = tables[False]
        private_id, code, private_name = tables[True]
        assert code is not None
        pages = {target: parse(await get(server, target))[2] for target in (
            f"/t/{public_id}", f"/t/{public_id}?code=made1up234", f"/t/{private_id}",
            f"/t/{private_id}?code={code}",
            f"/t/{private_id}?code=wrong12345", "/t/t999", "/")}
    for public in (f"/t/{public_id}", f"/t/{public_id}?code=made1up234"):
        assert _invited_to(pages[public]) == ("" if password else public_name), public
    assert _invited_to(pages[f"/t/{private_id}?code={code}"]) == private_name
    for unnamed in (f"/t/{private_id}", f"/t/{private_id}?code=wrong12345", "/t/t999", "/"):
        assert _invited_to(pages[unnamed]) == "", unnamed
    assert b"<private>" not in pages[f"/t/{private_id}?code={code}"]  # escaped, not markup


@capped
async def test_a_page_loads_on_one_kept_alive_connection(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running() as server, served(server) as stream:
        request = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        await stream.send_all(b"".join(request % p for p in (b"/", b"/style.css", b"/app.js")))
        data = b""
        while data.count(b"HTTP/1.1 200") < 3:
            chunk = await stream.receive_some(65536)
            assert chunk, data[-200:]
            data += chunk
        assert b"text/css" in data and b"text/javascript" in data


@capped
async def test_an_oversized_request_head_is_refused(autojump_clock: trio.testing.MockClock) -> None:
    async with running() as server:
        status, _, _ = parse(await get(server, "/", extra=f"Cookie: {'x' * MAX_HEAD}\r\n"))
        assert status == 431
        status, _, _ = parse(await get(server, "/" + "a" * MAX_HEAD))
        assert status == 431


@capped
async def test_a_full_server_answers_a_browser_503_with_retry_after(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with (running(max_connections=2, max_per_address=1) as server,
                served(server, "10.0.0.9:1")):
        await until(lambda: len(server.peers) == 1)
        # the address has its one connection; a protocol client still gets the error line
        async with served(server, "10.0.0.9:2") as stream:
            await stream.send_all(json.dumps(HELLO).encode() + b"\n")
            error = json.loads((await read_response(stream)).splitlines()[0])
            assert error["code"] == ErrorCode.TOO_MANY_CONNECTIONS
        async with served(server, "10.0.0.9:3") as stream:
            await stream.send_all(b"GET / HTTP/1.1\r\nHost: 10.0.0.2\r\n\r\n")
            status, headers, body = parse(await read_response(stream))
            assert (status, headers["retry-after"]) == (503, str(RETRY_AFTER))
            assert b"too many connections from your address" in body
        async with served(server, "10.0.0.2:1"):
            await until(lambda: len(server.peers) == 2)
            # the server's two connections are taken: a page asked in two pieces
            async with served(server, "10.0.0.3:1") as stream:
                await stream.send_all(b"GE")
                await stream.send_all(b"T /t/t3 HTTP/1.1\r\nHost: 10.0.0.2\r\n\r\n")
                status, headers, body = parse(await read_response(stream))
                assert (status, headers["connection"]) == (503, "close")
                assert b"the server is full" in body


async def _trickle(stream: trio.abc.Stream, answers: list[tuple[int, float]]) -> None:
    """Open a request and send a header line every second until the server answers (the
    answer's status and when it came) or closes."""
    started = trio.current_time()
    await stream.send_all(b"GET / HTTP/1.1\r\n")
    with trio.move_on_after(120):
        while True:
            with trio.move_on_after(1):
                try:
                    response = await read_response(stream)
                except trio.BrokenResourceError:
                    response = b""
                answers.append((parse(response)[0] if response else 0,
                                trio.current_time() - started))
                return
            try:
                await stream.send_all(b"X-Slow: 1\r\n")
            except trio.BrokenResourceError:
                answers.append((0, trio.current_time() - started))
                return


@capped
async def test_refused_connections_trickling_http_neither_hold_nor_fill_the_server(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A connection refused because its address is full is answered ``503`` (or closed)
    within about two seconds however slowly its request comes, and does not count as one of
    the server's connections: a flood of them keeps no other address out."""
    async with (running(max_connections=3, max_per_address=1, handshake_timeout=10.0,
                        frame_timeout=60.0) as server,
                served(server, "10.0.0.9:1")):
        await until(lambda: len(server.peers) == 1)
        answers: list[tuple[int, float]] = []
        async with trio.open_nursery() as nursery:
            for port in range(2, 12):
                client, server_side = trio.testing.memory_stream_pair()
                nursery.start_soon(server.handle_stream, server_side, f"10.0.0.9:{port}")
                nursery.start_soon(_trickle, client, answers)
            await trio.sleep(1.5)  # the ten are being refused: another address gets in
            assert len(server.peers) == 1
            async with served(server, "10.0.0.2:1") as stream:
                await stream.send_all(json.dumps(HELLO).encode() + b"\n")
                assert json.loads((await stream.receive_some(65536)).splitlines()[0])[
                    "type"] == "welcome"
        assert len(answers) == 10
        assert all(status == 503 and held <= 3.0 for status, held in answers), answers
        async with served(server, "10.0.0.9:20") as stream:  # silent: closed as soon
            started = trio.current_time()
            assert await read_response(stream) == b""
            assert trio.current_time() - started <= 3.0


@capped
async def test_a_websocket_from_another_site_is_refused(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running() as server:
        for origin in ("http://evil.example", "http://127.0.0.1.evil.example", "null",
                       "http://127.0.0.1:8080"):
            async with served(server) as stream:
                with pytest.raises(WebSocketRefused) as refused:
                    await WebSocketClient.open(stream, host="127.0.0.1", origin=origin)
                assert refused.value.status == 403
        async with served(server) as stream:  # the page's own origin
            ws = await WebSocketClient.open(stream, host="127.0.0.1:7777",
                                            origin="http://127.0.0.1:7777")
            await ws.send(HELLO)
            assert (await ws.receive_type("welcome"))["id"] == 1


@capped
async def test_an_upgrade_with_a_wrong_key_or_version_is_refused_saying_which(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A version other than 13 is answered ``426`` naming 13 (RFC 6455 4.2.2; it was a ``400``
    "Missing header, 'Sec-WebSocket-Version'"), a key that is not 16 bytes in base64 ``400``
    (it was accepted); the right ones open the WebSocket."""
    async with running() as server:
        async def upgrade(key: str, version: str) -> tuple[int, dict[str, str], bytes]:
            extra = (f"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: {version}\r\n")
            async with served(server) as stream:
                await stream.send_all(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n"
                                      .encode())
                return parse(bytes(await stream.receive_some(65536)))

        good = "dGhlIHNhbXBsZSBub25jZQ=="
        status, headers, body = await upgrade(good, "8")
        assert status == 426 and headers["sec-websocket-version"] == "13"
        assert b"version '8': this server speaks 13" in body
        for key in ("abc", "eHh4eHh4eHh4eHh4eHh4", "!!!!!!!!!!!!!!!!!!!!!!=="):
            status, _, body = await upgrade(key, "13")
            assert status == 400 and b"not 16 bytes in base64" in body, key
        assert (await upgrade(good, "13"))[0] == 101


@capped
async def test_a_name_rebound_to_the_server_is_refused_and_its_own_names_served(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """DNS rebinding: the page of evil.example, its name rebound to this server's address,
    sends Host and Origin evil.example, which passed the Origin check. A name the server does
    not go by is refused; IP addresses, localhost, this machine's name and ``web_hosts``
    are served."""
    async with running(web_hosts="play.example.org, Other.Example.") as server:
        async with served(server) as stream:
            with pytest.raises(WebSocketRefused) as refused:
                await WebSocketClient.open(stream, host="evil.example:7777",
                                           origin="http://evil.example:7777")
            assert refused.value.status == 421
        status, _, body = parse(await get(server, "/", host="evil.example:7777"))
        assert status == 421 and b"evil.example" in body
        for host in ("127.0.0.1:7777", "[::1]:7777", "192.0.2.7", "localhost:7777",
                     "LOCALHOST", socket.gethostname(), "play.example.org:443",
                     "other.example", "other.example."):
            assert parse(await get(server, "/", host=host))[0] == 200, host
        async with served(server) as stream:
            ws = await WebSocketClient.open(stream, host="play.example.org",
                                            origin="https://play.example.org")
            await ws.send(HELLO)
            await ws.receive_type("welcome")


@capped
async def test_plain_http_to_a_tls_only_server(autojump_clock: trio.testing.MockClock) -> None:
    """The redirect to HTTPS names the server and the target's path only (``@evil.example``
    made it ``https://127.0.0.1@evil.example``); a ``HEAD`` gets its ``Location`` too; a
    ``ws://`` WebSocket, which no client redirects, is told to use ``wss://``."""
    async with running(tls_required=True, tls_self_signed=True) as server:
        status, headers, body = parse(await get(server, "/t/t1?code=x", method="HEAD",
                                                host="127.0.0.1:7777"))
        assert (status, headers["location"], body) == (
            308, "https://127.0.0.1:7777/t/t1?code=x", b"")
        for target in ("@evil.example", "//evil.example/x", "http://evil.example/"):
            status, headers, _ = parse(await get(server, target, host="127.0.0.1:7777"))
            assert status == 308
            assert urlsplit(headers["location"]).netloc == "127.0.0.1:7777", target
        assert parse(await get(server, "/", host="evil.example"))[0] == 421
        status, _, body = parse(await get(server, "/ws", host="localhost:7777",
                                          extra="Upgrade: websocket\r\n"))
        assert status == 403 and b"wss://localhost:7777/ws" in body
        async with served(server) as stream:
            with pytest.raises(WebSocketRefused) as refused:
                await WebSocketClient.open(stream, host="127.0.0.1:7777")
            assert refused.value.status == 403


@capped
async def test_slow_http_clients_are_cut(autojump_clock: trio.testing.MockClock) -> None:
    async with running(handshake_timeout=5.0, frame_timeout=20.0) as server:
        async with served(server) as stream:  # silent after the first line
            started = trio.current_time()
            await stream.send_all(b"GET / HTTP/1.1\r\n")
            status, _, _ = parse(await read_response(stream))
            assert status == 408
            assert 5.0 <= trio.current_time() - started < 6.0
        async with served(server) as stream:  # a byte now and then does not keep it open
            started = trio.current_time()
            await stream.send_all(b"GET / HTTP/1.1\r\n")
            with trio.move_on_after(60), pytest.raises(trio.BrokenResourceError):
                while True:
                    await trio.sleep(4)
                    await stream.send_all(b"X")
            assert 20.0 <= trio.current_time() - started < 25.0
        async with served(server) as stream:  # a kept-alive connection may not idle either
            await stream.send_all(b"GET /icon.svg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            started = trio.current_time()
            assert parse(await read_response(stream))[0] == 200
            assert trio.current_time() - started < 6.0


@capped
async def test_a_client_that_does_not_read_the_page_is_cut(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running(frame_timeout=20.0) as server:
        client, server_side = trio.testing.lockstep_stream_pair()  # writes wait for reads
        async with trio.open_nursery() as nursery:
            started = trio.current_time()
            nursery.start_soon(server.handle_stream, server_side, "10.0.0.1:1")
            await client.send_all(b"GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            await until(lambda: not server.peers, 0.5)  # not reading
            assert 20.0 <= trio.current_time() - started <= 23.5


@capped
async def test_a_websocket_is_an_ordinary_peer(autojump_clock: trio.testing.MockClock) -> None:
    async with running() as server, served(server, "127.0.0.1:5") as stream:
        ws = await WebSocketClient.open(stream)
        # auto_next: a first hand that a bot ends before Ana's first turn (a Tongits from the
        # deal) is followed by the next deal; without it the table waited for her next_hand
        # while the test waited for a state offering her moves (it hung once, under load)
        await ws.send({**HELLO, "auto_next": True})
        welcome = await ws.receive_type("welcome")
        assert "text_mode" in welcome["capabilities"]
        # a message spread over frames of pretty-printed JSON is one message
        await ws.send_text(json.dumps({"type": "create_table", "id": 2, "name": "Web",
                                       "bots": 2}, indent=2))
        joined = await ws.receive_type("joined")
        assert joined["seat"] == 0 and joined["token"]
        state = await ws.receive_type("state")
        while "legal" not in state:
            state = await ws.receive_type("state")
        assert len(state["view"]["hand"]) in (12, 13)
        move = state["legal"][-1]
        await ws.send({"type": "move", "id": 3, "move": move})
        assert (await ws.receive_type("ok"))["id"] == 3
        await ws.send_text("not json")
        assert (await ws.receive_type("error"))["code"] == ErrorCode.MALFORMED_FRAME
        await ws.send({"type": "ping", "id": 4})  # a bad message keeps the connection
        assert (await ws.receive_type("pong"))["id"] == 4
        # each text frame the server sent held exactly one message
        assert all(json.loads(frame)["type"] for frame in ws.frames)


@capped
async def test_websocket_limits_are_the_peers(autojump_clock: trio.testing.MockClock) -> None:
    async with running(max_frame_size=1000) as server:
        async with served(server) as stream:
            ws = await WebSocketClient.open(stream)
            await ws.send(HELLO)
            await ws.receive_type("welcome")
            await ws.send({"type": "chat", "text": "x" * 2000})
            error = await ws.receive_type("error")
            assert error["code"] == ErrorCode.FRAME_TOO_LARGE
            assert await ws.receive() is None and ws.close_code == 1000
        async with served(server) as stream:
            ws = await WebSocketClient.open(stream)
            await ws.send_raw(BytesMessage(data=b"\x00\x00\x00\x02\x80"))
            assert (await ws.receive_type("error"))["code"] == ErrorCode.MALFORMED_FRAME
            assert await ws.receive() is None
    async with running(rate=5.0, burst=10) as limited:
        async with served(limited) as stream:
            ws = await WebSocketClient.open(stream)
            await ws.send(HELLO)
            with pytest.raises(trio.BrokenResourceError):  # closed while we still send
                for _ in range(20):
                    await ws.send({"type": "ping"})
            assert (await ws.receive_type("error"))["code"] == ErrorCode.RATE_LIMITED
        async with served(server) as stream:  # no hello in time
            ws = await WebSocketClient.open(stream)
            assert (await ws.receive_type("error"))["code"] == ErrorCode.HANDSHAKE_TIMEOUT
        async with served(server) as stream:  # a message begun and never finished
            ws = await WebSocketClient.open(stream)
            await ws.send(HELLO)
            await ws.receive_type("welcome")
            started = trio.current_time()
            await ws.send_raw(Message(data='{"type": "pi', message_finished=False))
            assert (await ws.receive_type("error"))["code"] == ErrorCode.FRAME_TIMEOUT
            assert trio.current_time() - started == pytest.approx(60.0, abs=1)


@capped
async def test_websocket_pings_count_as_messages(autojump_clock: trio.testing.MockClock) -> None:
    """A ping frame costs a message of the rate limit, as a text ``ping`` does (a flood of
    them is cut, not answered for ever), and is heard by the heartbeat."""
    async with running(rate=5.0, burst=10, handshake_timeout=10.0) as server:
        async with served(server) as stream:
            ws = await WebSocketClient.open(stream)
            await ws.send(HELLO)
            await ws.receive_type("welcome")
            with pytest.raises(trio.BrokenResourceError):  # closed while we still send
                for _ in range(40):
                    await ws.send_raw(Ping(payload=b"x"))
            assert (await ws.receive_type("error"))["code"] == ErrorCode.RATE_LIMITED
        async with served(server) as stream:  # pinging with frames only keeps it open
            ws = await WebSocketClient.open(stream)
            await ws.send({**HELLO, "heartbeat": 5})
            await ws.receive_type("welcome")
            await ws.send({"type": "create_table", "id": 2, "name": "Web", "bots": 2})
            await ws.receive_type("joined")
            for _ in range(20):
                await trio.sleep(4)
                await ws.send_raw(Ping(payload=b"alive"))
            assert len(server.peers) == 1
            started = trio.current_time()  # silent now: gone after three periods
            error = await ws.receive_type("error")
            assert error["code"] == ErrorCode.IDLE_TIMEOUT
            assert 15.0 <= trio.current_time() - started <= 16.0


@capped
async def test_a_wrong_password_over_websocket(autojump_clock: trio.testing.MockClock) -> None:
    async with running(password="correct horse") as server:
        async with served(server) as stream:
            ws = await WebSocketClient.open(stream)
            await ws.send({**HELLO, "password": "wrong"})
            assert (await ws.receive_type("error"))["code"] == ErrorCode.BAD_PASSWORD
            assert await ws.receive() is None
        async with served(server) as stream:
            ws = await WebSocketClient.open(stream)
            await ws.send({**HELLO, "password": "correct horse"})
            assert "password" in (await ws.receive_type("welcome"))["capabilities"]


@capped
async def test_web_false_leaves_the_port_to_the_protocol(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running(web=False) as server:
        data = await get(server, "/")
        assert not data.startswith(b"HTTP/")
        assert json.loads(data.splitlines()[0])["code"] == ErrorCode.MALFORMED_FRAME


def test_only_get_and_head_open_http() -> None:
    assert http_start(b"GET / HTTP/1.1") and http_start(b"HEAD /")
    assert http_start(b"GE") is None and http_start(b"H") is None
    for first in (b"{", b" {", b"\x00", b"\x16", b"hello", b"GETX", b"POST /"):
        assert http_start(first) is False


def test_text_frames_are_what_a_websocket_client_reads() -> None:
    from wsproto.frame_protocol import FrameProtocol

    for size in (0, 125, 126, 65535, 65536, 70000):
        payload = b"x" * size
        reader = FrameProtocol(client=True, extensions=[])
        reader.receive_bytes(text_frame(payload))
        frame = next(iter(reader.received_frames()))
        assert frame.payload == payload.decode() and frame.message_finished


def test_browser_links_are_invite_links() -> None:
    link = Invite.parse("http://192.0.2.1:7777/t/t3?code=abc234defg")
    assert link == Invite(Endpoint("192.0.2.1", 7777), "t3", "abc234defg")
    assert Invite.looks_like("https://play.example.org/t/t3?code=x")
    secure = Invite.parse("https://play.example.org/t/t3?code=x")
    assert secure.endpoint == Endpoint("play.example.org", 443, tls=True)
    assert Invite.parse("http://example.org/t/t1").endpoint.port == 80


async def test_https_and_wss_on_the_tls_port_and_plain_http_redirected(tmp_path: Path) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    cert.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    tls = ServerTLS.from_files(tmp_path / "cert.pem", tmp_path / "key.pem")
    server = Server(quick_config(tls_required=True, tls_cert=str(tmp_path / "cert.pem"),
                                 tls_key=str(tmp_path / "key.pem")), MemoryJournal(), tls=tls)
    context = ssl.create_default_context()
    ca.configure_trust(context)
    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve)
            port = listeners[0].socket.getsockname()[1]
            stream = await trio.open_ssl_over_tcp_stream("127.0.0.1", port,
                                                         ssl_context=context)
            await stream.send_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                  b"Connection: close\r\n\r\n")
            status, headers, _ = parse(await read_response(stream))
            assert status == 200 and "content-security-policy" in headers
            plain = await trio.open_tcp_stream("127.0.0.1", port)  # TLS required: redirected
            await plain.send_all(f"GET /t/t1?code=x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                                 "\r\n".encode())
            status, headers, _ = parse(await read_response(plain))
            assert status == 308
            assert headers["location"] == f"https://127.0.0.1:{port}/t/t1?code=x"
            stream = await trio.open_ssl_over_tcp_stream("127.0.0.1", port,
                                                         ssl_context=context)
            ws = await WebSocketClient.open(stream, host=f"127.0.0.1:{port}",
                                            origin=f"https://127.0.0.1:{port}")
            await ws.send(HELLO)
            assert "tls" in (await ws.receive_type("welcome"))["capabilities"]
            await stream.aclose()
            nursery.cancel_scope.cancel()


def _client_bytes(messages: list[str], fragment: int) -> bytes:
    """``messages`` as a browser sends them: masked text frames, each message cut into
    fragments of ``fragment`` characters."""
    from wsproto.connection import Connection, ConnectionType

    client = Connection(ConnectionType.CLIENT)
    data = b""
    for text in messages:
        pieces = [text[i:i + fragment] for i in range(0, len(text), fragment)] or [""]
        for i, piece in enumerate(pieces):
            data += client.send(Message(data=piece, message_finished=i == len(pieces) - 1))
    return data


@given(st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=300),
                max_size=6),
       st.integers(1, 400), st.lists(st.integers(1, 50), min_size=1, max_size=20))
@settings(deadline=None)  # a byte at a time through wsproto: slow on a loaded machine
def test_a_carrier_turns_any_chunking_of_frames_into_the_same_lines(
    messages: list[str], fragment: int, cuts: list[int],
) -> None:
    carrier, _ = WebSocketCarrier.accept(_UPGRADE, b"/ws")
    wire = _client_bytes(messages, fragment)
    text, start, i = b"", 0, 0
    while start < len(wire):
        size = cuts[i % len(cuts)]
        got = carrier.inbound(wire[start:start + size])
        assert got.refusal is None and got.reply == b""
        text += got.text
        start, i = start + size, i + 1
    assert text == b"".join(m.encode() + b"\n" for m in messages)
    assert not carrier.ended


def _wsproto_lines(wire: bytes, cuts: list[int], budgets: list[float]) -> list[object]:
    """What wsproto alone makes of ``wire`` cut into chunks (the carrier's inbound before it
    parsed a browser's frames itself): per chunk (text, reply, controls, ended) or the
    refusal's error code, which ends the list, as does the end of the connection."""
    from wsproto import WSConnection
    from wsproto.connection import ConnectionType

    ws = WSConnection(ConnectionType.SERVER)
    ws.initiate_upgrade_connection(_UPGRADE, b"/ws")
    list(ws.events())
    ws.send(AcceptConnection())
    out: list[object] = []
    ended, start, i = False, 0, 0
    while start < len(wire) and not ended:
        chunk, budget = wire[start:start + cuts[i % len(cuts)]], budgets[i % len(budgets)]
        start, i = start + len(chunk), i + 1
        got = _wsproto_chunk(ws, chunk, budget)
        out.append(got)
        if isinstance(got, str):
            break
        ended = got[3]
    return out


def _wsproto_chunk(ws: Any, chunk: bytes, budget: float,
                   ) -> str | tuple[bytes, bytes, int, bool]:
    """One chunk through wsproto: (text, reply, controls, ended), or the refusal's code."""
    from wsproto.connection import ConnectionState
    from wsproto.events import CloseConnection, Pong, TextMessage
    from wsproto.utilities import LocalProtocolError, RemoteProtocolError

    text, reply, controls, messages, ended = b"", b"", 0, 0, False
    try:
        ws.receive_data(chunk)
        for event in ws.events():
            finished = isinstance(event, TextMessage) and event.message_finished
            messages += isinstance(event, Ping | Pong) or finished
            if isinstance(event, BytesMessage):
                return ErrorCode.MALFORMED_FRAME
            if messages > budget:
                return ErrorCode.RATE_LIMITED
            controls += isinstance(event, Ping | Pong)
            if isinstance(event, TextMessage):
                text += event.data.replace("\n", " ").replace("\r", " ").encode()
                text += b"\n" if finished else b""
            elif isinstance(event, Ping):
                reply += ws.send(event.response())
            elif isinstance(event, CloseConnection):
                if ws.state is not ConnectionState.CLOSED:
                    reply += ws.send(event.response())
                ended = True
                break
    except (RemoteProtocolError, LocalProtocolError):
        ended = True
    return (text, reply, controls, ended)


_EVENTS = st.one_of(
    st.tuples(st.just("text"), st.text(st.characters(codec="utf-8") | st.sampled_from("\n\r"),
                                        max_size=200), st.integers(1, 300)),
    st.tuples(st.just("ping"), st.binary(max_size=20), st.just(0)),
    st.tuples(st.just("bytes"), st.binary(max_size=20), st.just(0)),
    st.tuples(st.just("close"), st.just(b""), st.just(0)),
    st.tuples(st.just("raw"), st.binary(min_size=1, max_size=12), st.just(0)),
)


@given(st.lists(_EVENTS, max_size=8),
       st.lists(st.integers(1, 300), min_size=1, max_size=8) | st.just([1 << 20]),
       st.lists(st.sampled_from([0, 1, 2, 5, math.inf]), min_size=1, max_size=4),
       st.sampled_from([0, 1, 4, 0x10000]))
@settings(deadline=None, max_examples=300)
def test_a_carrier_reads_every_stream_as_wsproto_alone_does(
    events: list[tuple[str, Any, int]], cuts: list[int], budgets: list[float], big: int,
) -> None:
    """The carrier takes a browser's whole text frames itself and hands everything else to
    wsproto: whatever the frames (fragmented or whole, pings, binary, a close, bytes that are
    no frame, a text of 64 KiB), however they are cut into chunks and whatever the rate
    limit's budget, each chunk gives what wsproto alone gave."""
    from wsproto.connection import Connection, ConnectionType
    from wsproto.events import CloseConnection

    client = Connection(ConnectionType.CLIENT)
    wire = client.send(Message(data="x" * big)) if big else b""
    for kind, value, fragment in events:
        if kind == "text":
            pieces = [value[i:i + fragment] for i in range(0, len(value), fragment)] or [""]
            for j, piece in enumerate(pieces):
                wire += client.send(Message(data=piece, message_finished=j == len(pieces) - 1))
        elif kind == "ping":
            wire += client.send(Ping(payload=value))
        elif kind == "bytes":
            wire += client.send(BytesMessage(data=value))
        elif kind == "close":
            wire += client.send(CloseConnection(code=1000))
            client = Connection(ConnectionType.CLIENT)  # it may send again: the bytes still come
        else:
            wire += value
    carrier, _ = WebSocketCarrier.accept(_UPGRADE, b"/ws")
    got: list[object] = []
    start, i = 0, 0
    while start < len(wire) and not carrier.ended:
        chunk, budget = wire[start:start + cuts[i % len(cuts)]], budgets[i % len(budgets)]
        start, i = start + len(chunk), i + 1
        inbound = carrier.inbound(chunk, budget)
        if inbound.refusal is not None:
            got.append(inbound.refusal[0])
            break
        got.append((inbound.text, inbound.reply, inbound.controls, carrier.ended))
    assert got == _wsproto_lines(wire, cuts, budgets)


def test_a_carrier_answers_pings_and_the_closing_handshake() -> None:
    from wsproto.connection import Connection, ConnectionType
    from wsproto.events import CloseConnection, Ping, Pong

    carrier, _ = WebSocketCarrier.accept(_UPGRADE, b"/ws")
    client = Connection(ConnectionType.CLIENT)
    got = carrier.inbound(client.send(Ping(payload=b"hi")))
    client.receive_data(got.reply)
    assert [type(e) for e in client.events()] == [Pong] and not carrier.ended
    got = carrier.inbound(client.send(CloseConnection(code=1000)))
    assert carrier.ended
    client.receive_data(got.reply)
    assert [type(e) for e in client.events()] == [CloseConnection]
    last = carrier.last(b'{"type":"error"}\n')  # after the peer's close: no second close
    assert last == text_frame(b'{"type":"error"}')


_UPGRADE = [(b"host", b"127.0.0.1"), (b"upgrade", b"websocket"), (b"connection", b"Upgrade"),
            (b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ=="),
            (b"sec-websocket-version", b"13")]


@capped
async def test_the_pages_files_go_compressed_and_are_kept_by_their_etag(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A browser that accepts gzip gets each file compressed (the whole page under 60 KB),
    the same bytes once unpacked; asked again with the file's ``ETag`` it gets ``304`` and no
    body. The policy is on every answer, a ``304`` too."""
    async with running() as server:
        sent = 0
        for target in ("/", "/app.js", "/style.css", "/icon.svg", "/manifest.webmanifest",
                       "/phrases.json"):
            _, _, plain = parse(await get(server, target))
            status, headers, body = parse(await get(server, target,
                                                    extra="Accept-Encoding: gzip, br\r\n"))
            assert status == 200 and headers["content-encoding"] == "gzip"
            assert gzip.decompress(body) == plain and len(body) < len(plain)
            assert headers["vary"] == "accept-encoding" and headers["cache-control"] == "no-cache"
            sent += len(body)
            etag = headers["etag"]
            status, headers, body = parse(await get(server, target,
                                                    extra=f"If-None-Match: {etag}\r\n"))
            assert status == 304 and body == b"" and headers["etag"] == etag
            assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            status, _, _ = parse(await get(server, target, extra='If-None-Match: "old"\r\n'))
            assert status == 200
        assert sent <= 60_000
        refused = parse(await get(server, "/app.js", extra="Accept-Encoding: gzip;q=0\r\n"))
        assert "content-encoding" not in refused[1]


@capped
async def test_the_page_reads_the_terminals_phrasebook(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """``/phrases.json`` is the phrasebook the terminal client imports, whole; the manifest
    lets a phone install the page."""
    async with running() as server:
        status, headers, body = parse(await get(server, "/phrases.json"))
        assert status == 200 and headers["content-type"] == "application/json"
        assert json.loads(body) == dict(PHRASES)
        status, headers, body = parse(await get(server, "/manifest.webmanifest"))
        manifest = json.loads(body)
        assert manifest["start_url"] == "/" and manifest["icons"][0]["src"] == "/icon.svg"
        assert parse(await get(server, manifest["icons"][0]["src"]))[0] == 200


def test_the_browser_address_is_one_to_type() -> None:
    assert browser_address("127.0.0.1", 7777, False) == "http://127.0.0.1:7777/"
    assert browser_address("::1", 7777, True) == "https://[::1]:7777/"
    lan = lan_address() or socket.gethostname()  # (what a phone on the LAN can open)
    assert browser_address("0.0.0.0", 7777, False) == f"http://{lan}:7777/"
    # (a listener on :: takes IPv6 alone: an IPv4 address would not reach it)
    assert browser_address("::", 7777, False) == f"http://{socket.gethostname()}:7777/"
    # the host's --public-address, which the invite links give, wins (a VPS behind a NAT)
    assert browser_address("0.0.0.0", 7777, True, "games.example.org") == \
        "https://games.example.org:7777/"
    assert browser_address("0.0.0.0", 7777, True, "games.example.org:443") == \
        "https://games.example.org:443/"
