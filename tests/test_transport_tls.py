"""TLS on the server's one port, with real certificates: a test CA (trustme) for verified
connections, the server's own self-signed certificate for trust on first use."""

from __future__ import annotations

import json
import logging
import ssl
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio
import trustme
from server_support import TIME_CAP, quick_config
from tongits.client.connection import Connection, ServerError, open_connection
from tongits.client.sdk import Bot, BotError, parse_address
from tongits.client.tls import (
    CertificateChanged,
    CertificateUnknown,
    ClientTLS,
    KnownServers,
    ask_on_terminal,
    open_stream,
)
from tongits.client.tui.net import UNTRUSTED, NetSession, SessionOptions
from tongits.client.tui.state import ConnectionChanged, LinkStatus, Update
from tongits.engine.policies import get_policy
from tongits.protocol import ErrorCode
from tongits.protocol.transport import Endpoint, fingerprint
from tongits.server import MemoryJournal, Server
from tongits.server.net.tls import ServerTLS


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


def issue(ca: trustme.CA, directory: Path) -> ServerTLS:
    """A certificate of ``ca`` for 127.0.0.1, as PEM files in ``directory``."""
    cert = ca.issue_cert("127.0.0.1", "localhost")
    directory.mkdir(parents=True, exist_ok=True)
    cert.cert_chain_pems[0].write_to_path(str(directory / "cert.pem"))
    cert.private_key_pem.write_to_path(str(directory / "key.pem"))
    return ServerTLS.from_files(directory / "cert.pem", directory / "key.pem")


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


@asynccontextmanager
async def tls_server(
    tls: ServerTLS | None, *, password: str | None = None, **changes: Any
) -> AsyncIterator[tuple[Server, int]]:
    server = Server(quick_config(**changes), MemoryJournal(), tls=tls, password=password)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(server.serve)
        yield server, listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


def refusing(endpoint: Endpoint, offered: str, reason: str) -> bool:
    raise AssertionError(f"asked about {endpoint} ({offered}) although it is trusted")


async def test_a_certificate_of_a_known_authority_is_verified_without_pinning(
    ca: trustme.CA, tmp_path: Path
) -> None:
    known = KnownServers(tmp_path / "known_servers")
    with trio.fail_after(TIME_CAP):
        async with tls_server(issue(ca, tmp_path / "srv")) as (server, port):
            client = ClientTLS(context=trusting(ca), known=known, ask=refusing)
            async with open_connection("127.0.0.1", port, name="Ana", tls=client) as ana:
                assert ana.welcome is not None and "tls" in ana.welcome.capabilities
                joined = await ana.create_table("Friday", bots=2)
                assert joined.seat == 0
                (peer,) = server.peers
                assert peer.secure
    assert not known.path.exists()


async def test_an_unknown_authority_without_anyone_to_ask_is_refused(
    ca: trustme.CA, tmp_path: Path
) -> None:
    known = KnownServers(tmp_path / "known_servers")
    tls = issue(ca, tmp_path / "srv")
    with trio.fail_after(TIME_CAP):
        async with tls_server(tls) as (_server, port):
            with pytest.raises(CertificateUnknown) as caught:
                await open_stream(Endpoint("127.0.0.1", port, tls=True), ClientTLS(known=known))
    assert tls.fingerprint in str(caught.value)
    assert f"tongits trust tls://127.0.0.1:{port}" in str(caught.value)
    assert not known.path.exists()


async def test_self_signed_first_use_then_pinned_then_a_changed_certificate_is_refused(
    tmp_path: Path,
) -> None:
    known = KnownServers(tmp_path / "client" / "known_servers")
    first = ServerTLS.self_signed(tmp_path / "server")
    asked: list[tuple[str, str]] = []

    def accept(endpoint: Endpoint, offered: str, reason: str) -> bool:
        asked.append((str(endpoint), offered))
        return True

    with trio.fail_after(TIME_CAP):
        async with tls_server(first) as (server, port):
            endpoint = Endpoint("127.0.0.1", port, tls=True)
            async with open_connection("127.0.0.1", port, name="Ana",
                                       tls=ClientTLS(known=known, ask=accept)) as ana:
                await ana.ping()
            assert asked == [(f"tls://127.0.0.1:{port}", first.fingerprint)]
            assert known.get(endpoint) == first.fingerprint
            assert stat.S_IMODE(known.path.stat().st_mode) == 0o600
            # Pinned: no question the second time.
            async with open_connection("127.0.0.1", port, name="Ana",
                                       tls=ClientTLS(known=known, ask=refusing)) as ana:
                await ana.ping()
            # The host makes a new certificate: refused, with the way to accept it.
            second = ServerTLS.self_signed(tmp_path / "other")
            assert second.fingerprint != first.fingerprint
            server.tls = second
            with pytest.raises(CertificateChanged) as caught:
                await open_stream(endpoint, ClientTLS(known=known, ask=refusing))
    warning = str(caught.value)
    assert "CHANGED" in warning and first.fingerprint in warning
    assert second.fingerprint in warning
    assert f"tongits trust tls://127.0.0.1:{port}" in warning
    assert known.get(endpoint) == first.fingerprint


def test_the_self_signed_certificate_is_kept_private_and_reused(tmp_path: Path) -> None:
    first = ServerTLS.self_signed(tmp_path / "data")
    again = ServerTLS.self_signed(tmp_path / "data")
    assert again.fingerprint == first.fingerprint
    assert stat.S_IMODE((tmp_path / "data" / "tls").stat().st_mode) == 0o700
    assert stat.S_IMODE(first.key.stat().st_mode) == 0o600
    der = ssl.PEM_cert_to_DER_cert(first.cert.read_text())
    assert fingerprint(der) == first.fingerprint


async def test_reload_serves_a_renewed_certificate_to_new_connections(
    ca: trustme.CA, tmp_path: Path
) -> None:
    tls = issue(ca, tmp_path / "srv")
    old = tls.fingerprint
    with trio.fail_after(TIME_CAP):
        async with tls_server(tls) as (_server, port):
            endpoint = Endpoint("127.0.0.1", port, tls=True)
            client = ClientTLS(context=trusting(ca), known=KnownServers(tmp_path / "k"))
            before = await open_stream(endpoint, client)
            issue(ca, tmp_path / "srv")  # the renewal overwrites the files
            assert tls.reload()
            after = await open_stream(endpoint, client)
            assert isinstance(before, trio.SSLStream) and isinstance(after, trio.SSLStream)
            assert fingerprint(before.getpeercert(binary_form=True)) == old
            assert fingerprint(after.getpeercert(binary_form=True)) == tls.fingerprint != old
            await before.aclose()
            await after.aclose()
            (tmp_path / "srv" / "key.pem").write_text("broken")
            assert not tls.reload()  # a broken renewal keeps the served certificate


async def _raw_reply(port: int, data: bytes) -> bytes:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(data)
        received = b""
        while chunk := await stream.receive_some(65536):
            received += chunk
        return received


async def test_tls_required_refuses_plain_text_and_binary_connections(
    ca: trustme.CA, tmp_path: Path
) -> None:
    hello = {"type": "hello", "id": 1, "version": 1, "name": "Ana", "kind": "human"}
    with trio.fail_after(TIME_CAP):
        tls = issue(ca, tmp_path / "srv")
        async with tls_server(tls, tls_required=True, tls_cert=str(tls.cert),
                              tls_key=str(tls.key)) as (_s, port):
            text = await _raw_reply(port, json.dumps(hello).encode() + b"\n")
            error = json.loads(text.splitlines()[0])
            assert error["code"] == ErrorCode.TLS_REQUIRED and error["number"] == 1020
            payload = msgpack.packb(hello)
            binary = await _raw_reply(port, len(payload).to_bytes(4, "big") + payload)
            assert msgpack.unpackb(binary[4:])["code"] == ErrorCode.TLS_REQUIRED
            with pytest.raises(ServerError) as caught:  # the client's plain hello, refused
                async with open_connection("127.0.0.1", port, name="Ana"):
                    pass
            assert caught.value.code == ErrorCode.TLS_REQUIRED
            client = ClientTLS(context=trusting(ca), known=KnownServers(tmp_path / "k"))
            async with open_connection("127.0.0.1", port, name="Ana", tls=client) as ana:
                await ana.ping()


async def test_plain_clients_are_still_welcome_when_tls_is_optional(
    ca: trustme.CA, tmp_path: Path
) -> None:
    with trio.fail_after(TIME_CAP):
        async with (
            tls_server(issue(ca, tmp_path / "srv")) as (server, port),
            open_connection("127.0.0.1", port, name="Ana") as ana,
        ):
            await ana.ping()
            (peer,) = server.peers
            assert not peer.secure


async def test_text_mode_inside_tls_as_openssl_s_client_speaks_it(
    ca: trustme.CA, tmp_path: Path
) -> None:
    with trio.fail_after(TIME_CAP):
        async with tls_server(issue(ca, tmp_path / "srv")) as (_server, port):
            tcp = await trio.open_tcp_stream("127.0.0.1", port)
            stream = trio.SSLStream(tcp, trusting(ca), server_hostname="127.0.0.1")
            hello = {"type": "hello", "id": 1, "version": 1, "name": "Ana", "kind": "human"}
            await stream.send_all(json.dumps(hello).encode() + b"\n")
            await stream.send_all(b'{"type":"list_tables","id":2}\n')
            received = b""
            while received.count(b"\n") < 2:
                received += await stream.receive_some(65536)
            welcome, tables = (json.loads(line) for line in received.splitlines()[:2])
            assert welcome["type"] == "welcome" and "tls" in welcome["capabilities"]
            assert (tables["type"], tables["id"], tables["tables"]) == ("tables", 2, [])
            await stream.aclose()


async def test_a_tls_handshake_left_halfway_is_closed_and_logged_as_such(
    ca: trustme.CA, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that starts a TLS record and says no more is closed after the handshake
    timeout, and the host's log says so (it said "TLS handshake failed: " and nothing)."""
    caplog.set_level(logging.INFO, "tongits.server")
    with trio.fail_after(TIME_CAP):
        async with tls_server(issue(ca, tmp_path / "srv"), handshake_timeout=0.3) as (_s, port):
            assert await _raw_reply(port, b"\x16\x03\x01\x00") == b""
    assert "TLS handshake failed: not finished within 0.3 s" in caplog.text


async def test_a_tls_hello_to_a_server_without_certificate_is_closed() -> None:
    with trio.fail_after(TIME_CAP):
        async with tls_server(None) as (_server, port):
            with pytest.raises(trio.BrokenResourceError):
                await open_stream(Endpoint("127.0.0.1", port, tls=True), ClientTLS(ask=None))


async def test_password_over_tls(ca: trustme.CA, tmp_path: Path) -> None:
    client = ClientTLS(context=trusting(ca), known=KnownServers(tmp_path / "k"))
    with trio.fail_after(TIME_CAP):
        async with tls_server(issue(ca, tmp_path / "srv"), password="s3cret") as (_s, port):
            for wrong in (None, "guess"):
                with pytest.raises(ServerError) as caught:
                    async with open_connection("127.0.0.1", port, name="Eve", tls=client,
                                               password=wrong):
                        pass
                assert caught.value.code == ErrorCode.BAD_PASSWORD
            async with open_connection("127.0.0.1", port, name="Ana", tls=client,
                                       password="s3cret") as ana:
                assert ana.welcome is not None and "password" in ana.welcome.capabilities


def test_a_tls_address_reaches_the_bot_through_parse_address() -> None:
    """A host that hands a bot program its server as one string (``TONGITS_SERVER``, read
    with ``parse_address``) may give ``tls://HOST:PORT``."""
    host, port = parse_address("tls://127.0.0.1:4321")
    bot = Bot(lambda view: view.legal[0], host, port)
    assert (bot.host, bot.port, bot.tls) == ("127.0.0.1", 4321, True)
    plain = Bot(lambda view: view.legal[0], *parse_address("127.0.0.1:4321"))
    assert (plain.host, plain.port, plain.tls) == ("127.0.0.1", 4321, False)


async def test_an_sdk_bot_plays_over_tls_with_the_password(ca: trustme.CA, tmp_path: Path) -> None:
    client = ClientTLS(context=trusting(ca), known=KnownServers(tmp_path / "k"))
    with trio.fail_after(TIME_CAP):
        async with tls_server(issue(ca, tmp_path / "srv"), password="s3cret") as (server, port):
            run = await Bot(get_policy("greedy", seed=1), "tls://127.0.0.1", port, name="tlsbot",
                            create=True, bots=2, hands=1, tls=client, password="s3cret").run()
            assert len(run.hands) == 1
            with pytest.raises(BotError, match="bad_password"):
                await Bot(get_policy("greedy"), "127.0.0.1", port, tls=client, create=True,
                          password="nope", retry_delays=()).run()


async def test_a_certificate_changed_between_two_connections_of_a_game_is_explained(
    tmp_path: Path,
) -> None:
    """The terminal client reconnecting meets a new certificate: it gives up (no retry can
    help), its banner says where to read more, and the whole warning, with the command that
    accepts the new certificate, is kept for the terminal once the screen is gone."""
    known = KnownServers(tmp_path / "client" / "known_servers")
    first, second = (ServerTLS.self_signed(tmp_path / d) for d in ("server", "other"))
    updates: list[Update] = []

    async def sit(conn: Connection) -> None:
        await conn.create_table("Friday", bots=2, timer=0)

    with trio.fail_after(TIME_CAP):
        async with tls_server(first) as (server, port):
            known.pin(Endpoint("127.0.0.1", port, tls=True), first.fingerprint)
            server.tls = second
            session = NetSession("127.0.0.1", port, SessionOptions(
                name="Ana", join=sit, retry_delays=(0.01,), tls=ClientTLS(known=known,
                ask=refusing)))
            session.sink = updates.append
            await session._connect_loop()
    assert updates == [ConnectionChanged(LinkStatus.CLOSED, UNTRUSTED)]
    assert session.farewell is not None and "CHANGED" in session.farewell
    assert f"tongits trust tls://127.0.0.1:{port}" in session.farewell


def test_the_trust_question_asks_again_until_it_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At "Trust this certificate and connect? [y/N]" a friend typed "yes please": it was taken
    for a no and the program ended. Now only y/yes (or the fingerprint itself, pasted from the
    host's message) trusts, only n/no/Enter refuses, and anything else asks again."""
    offered = "SHA256:3F:A1:00"

    def answers(*typed: str) -> tuple[bool, list[str]]:
        asked: list[str] = []
        replies = iter(typed)

        def fake_input(prompt: str) -> str:
            asked.append(prompt)
            return next(replies)

        monkeypatch.setattr("builtins.input", fake_input)
        monkeypatch.setattr("sys.stdin.isatty", lambda: True)
        server = Endpoint("play.example", 7777, tls=True)
        return ask_on_terminal(server, offered, "self-signed"), asked

    trusted, asked = answers("yes please", "maybe", "y")
    assert trusted and len(asked) == 3 and "fingerprint" in asked[1]
    assert answers("sha256:3f:a1:00") == (True, [asked[0]])
    assert answers("") == (False, [asked[0]])
    trusted, asked = answers("SHA256:00:00:00", "no")
    assert not trusted and len(asked) == 2

