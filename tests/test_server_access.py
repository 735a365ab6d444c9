"""Who may sit down: the server password, invite links, and the host's admin socket."""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import socket
import stat
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from server_support import TIME_CAP, capped, next_of, quick_config
from tongits.client.connection import Connection, ConnectionClosed, ServerError, connect_stream
from tongits.protocol import ErrorCode, ProtocolError, SeatUpdate, State
from tongits.protocol.discovery import QUERY as DISCOVERY_QUERY
from tongits.protocol.discovery import answer as discovery_answer
from tongits.protocol.discovery import read_answer
from tongits.protocol.transport import Endpoint, Invite
from tongits.server import MemoryJournal, Server
from tongits.server.admin import AdminError, answer, request, serve_admin
from tongits.server.cli import main as cli_main
from tongits.server.config import ServerConfig
from tongits.server.net.access import (
    FREE_FAILURES,
    MAX_DELAY,
    MAX_TRACKED,
    PasswordGate,
    load_password,
)
from tongits.server.net.lan import lan_address
from tongits.server.net.transport import TransportWrapper
from tongits.server.net.web import browser_address

PASSWORD = "correct horse battery"


class Room:
    """A server with a password on in-memory streams; ``hello`` from any address string."""

    def __init__(self, nursery: trio.Nursery, **changes: object) -> None:
        self.server = Server(quick_config(**changes), MemoryJournal(), password=PASSWORD)
        self.nursery = nursery

    def connect(
        self, name: str, address: str = "198.51.100.7:4000", **kw: Any
    ) -> AbstractAsyncContextManager[Connection]:
        client, server_side = trio.testing.memory_stream_pair()
        self.nursery.start_soon(self.server.handle_stream, server_side, address)
        return connect_stream(client, name=name, **kw)

    async def attempt(self, password: str | None, address: str = "198.51.100.7:4000") -> str:
        """The outcome of one hello: ``welcome`` or the error code."""
        try:
            async with self.connect("Eve", address, password=password):
                return "welcome"
        except ServerError as error:
            return error.code


async def start_room(nursery: trio.Nursery, **changes: object) -> Room:
    room = Room(nursery, **changes)
    await nursery.start(lambda task_status: room.server.serve(listen=False,
                                                              task_status=task_status))
    return room


@capped
async def test_wrong_or_missing_password_is_refused_and_the_right_one_welcomed(
    autojump_clock: object,
) -> None:
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery)
        assert await room.attempt(None) == ErrorCode.BAD_PASSWORD
        assert await room.attempt("correct horse") == ErrorCode.BAD_PASSWORD
        assert await room.attempt(PASSWORD) == "welcome"
        nursery.cancel_scope.cancel()


@capped
async def test_a_flood_of_wrong_passwords_is_slowed_down_for_that_address_only(
    autojump_clock: object,
) -> None:
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery, handshake_timeout=60.0)
        waits = []
        for guess in range(FREE_FAILURES + 5):
            started = trio.current_time()
            assert await room.attempt(f"guess {guess}") == ErrorCode.BAD_PASSWORD
            waits.append(trio.current_time() - started)
        assert all(w < 0.1 for w in waits[:FREE_FAILURES])
        slowed = waits[FREE_FAILURES:]
        assert slowed == sorted(slowed) and slowed[0] >= 0.5 and slowed[-1] >= MAX_DELAY
        # Another address is not slowed.
        started = trio.current_time()
        assert await room.attempt("wrong", "203.0.113.9:5000") == ErrorCode.BAD_PASSWORD
        assert trio.current_time() - started < 0.1
        # A player behind the same address (a proxy, a NAT) who knows the password is welcomed
        # at once, and that does not wipe the stranger's failures.
        started = trio.current_time()
        assert await room.attempt(PASSWORD) == "welcome"
        assert trio.current_time() - started < 0.1
        started = trio.current_time()
        assert await room.attempt("wrong") == ErrorCode.BAD_PASSWORD
        assert trio.current_time() - started >= MAX_DELAY
        nursery.cancel_scope.cancel()


@capped
async def test_parallel_guesses_from_one_address_each_wait_for_their_refusal(
    autojump_clock: object,
) -> None:
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery, handshake_timeout=60.0)
        refused_at: list[float] = []

        async def guess(n: int) -> None:
            assert await room.attempt(f"guess {n}") == ErrorCode.BAD_PASSWORD
            refused_at.append(trio.current_time())

        started = trio.current_time()
        async with trio.open_nursery() as guesses:
            for n in range(FREE_FAILURES + 10):
                guesses.start_soon(guess, n)
        assert sum(t - started >= MAX_DELAY for t in refused_at) >= 6
        nursery.cancel_scope.cancel()


def test_ten_thousand_wrong_passwords_leave_the_gate_bounded() -> None:
    """``0.5 * 2**n`` is no float beyond about 1,027 failures (``OverflowError``, so every
    later hello got ``internal_error``). Driven directly, on a virtual clock: 10,000 wrong
    passwords from one address, each refused with ``bad_password`` within ``MAX_DELAY``."""

    async def flood() -> None:
        gate = PasswordGate(PASSWORD)
        for n in range(10_000):
            started = trio.current_time()
            with pytest.raises(ProtocolError) as refused:
                await gate.check("198.51.100.7", f"guess {n}")
            assert refused.value.code == ErrorCode.BAD_PASSWORD
            assert trio.current_time() - started <= MAX_DELAY
        assert gate.delay("198.51.100.7") == MAX_DELAY
        started = trio.current_time()
        await gate.check("198.51.100.7", PASSWORD)
        assert trio.current_time() == started

    trio.run(flood, clock=trio.testing.MockClock(autojump_threshold=0))


@capped
async def test_a_server_refuses_ten_thousand_wrong_passwords_from_one_address_and_no_more(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    """The same through a server: every wrong hello gets ``bad_password`` (after
    ``MAX_DELAY`` once the address is slowed), none ``internal_error``; the right password is
    still welcomed at once."""
    caplog.set_level(logging.ERROR)
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery, handshake_timeout=60.0)
        for n in range(10_000):
            assert await room.attempt(f"guess {n}") == ErrorCode.BAD_PASSWORD
        started = trio.current_time()
        assert await room.attempt("one more") == ErrorCode.BAD_PASSWORD
        assert trio.current_time() - started == pytest.approx(MAX_DELAY, abs=0.1)
        started = trio.current_time()
        assert await room.attempt(PASSWORD) == "welcome"
        assert trio.current_time() - started < 0.1
        nursery.cancel_scope.cancel()
    assert not caplog.records  # no internal error, no traceback


@given(st.integers(min_value=0, max_value=10**7))
def test_the_delay_is_bounded_whatever_the_count(count: int) -> None:
    async def delay_after_failures() -> float:
        gate = PasswordGate(PASSWORD)
        gate._failed("198.51.100.7")
        gate._failures["198.51.100.7"].count = count
        return gate.delay("198.51.100.7")

    wait = trio.run(delay_after_failures)
    assert 0.0 <= wait <= MAX_DELAY
    assert (wait == 0.0) == (count < FREE_FAILURES)


def test_addresses_forgotten_beyond_the_limit_are_the_longest_quiet() -> None:
    async def remembered() -> list[str]:
        gate = PasswordGate(PASSWORD)
        for n in range(MAX_TRACKED + 2):
            gate._failed(f"10.0.{n // 256}.{n % 256}")
            if n == 0:
                gate._failed("192.0.2.1")
        gate._failed("10.0.0.1")
        return list(gate._failures)

    kept = trio.run(remembered)
    assert len(kept) == MAX_TRACKED
    assert "10.0.0.0" not in kept and "192.0.2.1" not in kept and kept[-1] == "10.0.0.1"


@capped
async def test_the_password_is_never_logged(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery)
        for given_password in (PASSWORD, "my-wrong-guess", None):
            await room.attempt(given_password)
        nursery.cancel_scope.cancel()
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "wrong or missing server password" in text
    assert PASSWORD not in text and "my-wrong-guess" not in text


def test_the_password_comes_from_a_file_or_the_environment(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("from the file\nignored\n")
    assert load_password(str(secret), {"TONGITS_PASSWORD": "env"}) == "from the file"
    assert load_password(None, {"TONGITS_PASSWORD": "env"}) == "env"
    assert load_password(None, {}) is None
    with pytest.raises(ValueError, match="empty"):
        load_password(None, {"TONGITS_PASSWORD": " "})


def test_the_password_is_no_command_line_option() -> None:
    """No option takes a password: ``--password`` is there only to refuse one in words (as a
    prefix of ``--password-file`` it read a file named as the password)."""
    from tongits.server.cli import build_parser

    parser = build_parser()
    options = {a for action in parser._actions for a in action.option_strings}
    assert "--password-file" in options
    assert {o for o in options if o.startswith("--password")} == {"--password-file",
                                                                  "--password"}
    with pytest.raises(SystemExit):
        parser.parse_args(["--password", "pw"])


@capped
async def test_the_creator_of_a_private_table_gets_an_invite_that_seats_a_friend(
    autojump_clock: object,
) -> None:
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery, public_address="play.example.com:7000")
        async with room.connect("Ana", password=PASSWORD) as ana:
            joined = await ana.create_table("Friday", private=True)
            assert joined.invite is not None and ana.invite == joined.invite
            invite = Invite.parse(joined.invite)
            assert invite == Invite(Endpoint("play.example.com", 7000), joined.table,
                                    joined.code, None)
            async with room.connect("Ben", password=PASSWORD) as ben:
                seated = await ben.join(invite.table, code=invite.code)
                assert seated.seat == 1 and seated.invite is None
                async with room.connect("Cai", password=PASSWORD) as cai:
                    with pytest.raises(ServerError) as caught:
                        await cai.join(invite.table, code="000000")
                assert caught.value.code == ErrorCode.BAD_JOIN_CODE
        nursery.cancel_scope.cancel()


async def test_a_host_playing_on_the_servers_machine_invites_to_its_lan_address() -> None:
    """The host of a LAN server (``--host 0.0.0.0``) who plays on that machine connects to
    127.0.0.1; the link pasted in the group chat must name an address the friends' machines
    reach (the machine's LAN address, else its name), never 127.0.0.1. A server that listens
    on loopback alone is for this machine only, and its links say so."""
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    async with listener, await trio.open_tcp_stream("127.0.0.1", port), \
            await listener.accept() as came_in:
        lan = TransportWrapper(ServerConfig(host="0.0.0.0", port=port), None)
        host = lan.invite_for(came_in).endpoint.host
        assert host == (lan_address() or socket.gethostname()) and host != "127.0.0.1"
        alone = TransportWrapper(ServerConfig(host="127.0.0.1", port=port), None)
        assert alone.invite_for(came_in).endpoint.host == "127.0.0.1"
        assert browser_address("0.0.0.0", port, False) == f"http://{host}:{port}/"


def test_the_lan_address_is_one_of_this_machines_own() -> None:
    """What ``lan_address`` names is an address of this machine, not loopback: a socket can
    be bound to it."""
    address = lan_address()
    if address is not None:
        assert not ipaddress.ip_address(address).is_loopback
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind((address, 0))


def test_a_lan_with_no_route_out_still_gets_an_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a LAN with no route out (a switch with no uplink; the namespaces of this suite's LAN
    tests) the server named itself by machine name, which a phone cannot open: the address of
    an interface that is up is named instead, the same one the route out leaves from here."""
    from tongits.server.net import lan

    routed = lan.lan_address()
    found = list(lan._interface_addresses())
    assert routed is None or routed in found

    def unreachable(self: socket.socket, address: object) -> None:
        raise OSError(101, "Network is unreachable")

    monkeypatch.setattr(socket.socket, "connect", unreachable)
    assert lan.lan_address() == (found[0] if found else None)
    assert lan.friends_host("0.0.0.0") == (found[0] if found else socket.gethostname())


@capped
async def test_the_password_rides_in_the_invite_only_if_the_host_asks(
    autojump_clock: object,
) -> None:
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery, invite_password=True)
        async with room.connect("Ana", password=PASSWORD) as ana:
            joined = await ana.create_table("Friday", private=True)
            assert joined.invite is not None
            assert Invite.parse(joined.invite).password == PASSWORD
            await ana.leave()
            public = await ana.create_table("Open")
            assert public.invite is None and public.code is None
        nursery.cancel_scope.cancel()


@capped
async def test_the_invite_of_a_table_left_is_not_offered_at_the_next_one(
    autojump_clock: object,
) -> None:
    """``tongits connect`` shows ``Connection.invite`` on sitting down: after a private table
    of ours, left for another table, it must not name the old table's link (seen: "invite
    friends: .../t/t3" at t2, a table that no longer existed)."""
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery)
        async with room.connect("Ana", password=PASSWORD) as ana:
            first = await ana.create_table("Friday", private=True)
            assert ana.invite == first.invite is not None
            await ana.leave()
            assert ana.invite is None
            await ana.create_table("Open")
            assert ana.invite is None
        nursery.cancel_scope.cancel()


hosts = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,6}){0,2}", fullmatch=True),
    st.ip_addresses().map(str),
)
texts = st.text(st.characters(codec="utf-8"), min_size=1, max_size=20)


@given(hosts, st.integers(1, 65535), st.booleans(), st.from_regex(r"t[0-9]{1,4}", fullmatch=True),
       st.none() | st.from_regex(r"[0-9a-f]{6}", fullmatch=True), st.none() | texts)
def test_invite_links_round_trip(host: str, port: int, tls: bool, table: str, code: str | None,
                                 password: str | None) -> None:
    invite = Invite(Endpoint(host, port, tls), table, code, password)
    assert Invite.parse(str(invite)) == invite
    assert Invite.looks_like(str(invite))
    assert Endpoint.parse(str(invite.endpoint)) == invite.endpoint


@pytest.mark.parametrize(
    ("text", "endpoint"),
    [
        ("example.org", Endpoint("example.org")),
        ("10.0.0.2:7000", Endpoint("10.0.0.2", 7000)),
        ("tls://example.org", Endpoint("example.org", tls=True)),
        ("TLS://[::1]:7001", Endpoint("::1", 7001, True)),
        ("::1", Endpoint("::1")),
    ],
)
def test_addresses(text: str, endpoint: Endpoint) -> None:
    assert Endpoint.parse(text) == endpoint


@pytest.mark.parametrize("text", ["http://x", "host:port", "host:0", "[::1"])
def test_bad_addresses(text: str) -> None:
    with pytest.raises(ValueError):
        Endpoint.parse(text)


@capped
async def test_the_host_sees_the_server_and_removes_a_player_and_closes_a_table(
    autojump_clock: object,
) -> None:
    async with trio.open_nursery() as nursery:
        room = await start_room(nursery)
        async with room.connect("Ana", password=PASSWORD) as ana, \
                room.connect("Ben", password=PASSWORD) as ben:
            joined = await ana.create_table("Friday", bots=1)
            ben_seat = (await ben.join(joined.table)).seat
            await next_of(ana, State)
            status = await answer(room.server, {"command": "status"})
            assert status["ok"] and status["connections"] == 2 and status["password"]
            (table,) = status["tables"]
            assert table["table"] == joined.table and table["started"]
            assert {(p["name"], p["table"], p["seat"]) for p in status["players"]} == {
                ("Ana", joined.table, 0), ("Ben", joined.table, ben_seat)}
            assert PASSWORD not in repr(status)

            removed = await answer(room.server, {"command": "remove", "player": "Ben"})
            assert removed["ok"]
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await ben.receive()
            assert closed.value.error is not None
            assert closed.value.error.code == ErrorCode.REMOVED_BY_HOST
            update = await next_of(ana, SeatUpdate, lambda u: u.change is not None)
            assert update.change == {"seat": ben_seat, "change": "stand_in"}

            assert not (await answer(room.server, {"command": "close", "table": "t99"}))["ok"]
            assert (await answer(room.server, {"command": "close", "table": joined.table}))["ok"]
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await ana.receive()
            assert closed.value.error is not None
            assert closed.value.error.code == ErrorCode.CLOSED_BY_HOST
            assert joined.table not in room.server.lobby.tables
        nursery.cancel_scope.cancel()


async def test_the_admin_socket_is_private_to_its_owner(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server(quick_config(), MemoryJournal())
    directory = tmp_path / "data"
    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            await nursery.start(lambda task_status: server.serve(listen=False,
                                                                 task_status=task_status))
            path = await nursery.start(serve_admin, server, directory)
            assert path == directory / "admin.sock"
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
            assert stat.S_IMODE(directory.stat().st_mode) == 0o700
            reply = await trio.to_thread.run_sync(request, directory, {"command": "status"})
            assert reply["connections"] == 0 and reply["tables"] == []
            with pytest.raises(AdminError, match="unknown command"):
                await trio.to_thread.run_sync(request, directory, {"command": "reboot"})
            # A second server with the same data directory leaves the socket to the first; its
            # probe (connect, hang up) once stopped the first server, as did a client that
            # hung up before the answer.
            other = Server(quick_config(), MemoryJournal())
            assert await nursery.start(serve_admin, other, directory) is None
            # and its host is told how to manage both
            assert "start this one with a --data-dir of its own" in caplog.text
            for sent in (b"", b'{"command": "status"}\n'):
                probe = await trio.open_unix_socket(str(path))
                await probe.send_all(sent)
                await probe.aclose()
            await trio.testing.wait_all_tasks_blocked()
            # Its probe hung up unanswered: the first still answers.
            reply = await trio.to_thread.run_sync(request, directory, {"command": "status"})
            assert reply["ok"]
            nursery.cancel_scope.cancel()
    assert not path.exists()
    with pytest.raises(AdminError) as refused:
        request(directory, {"command": "status"})
    assert str(refused.value) == (
        f"cannot reach {path}: No such file or directory: "
        "is tongits-server running with this --data-dir (or --config)?")


@pytest.mark.parametrize("mode", ["optional", "required", None])
def test_discovery_says_whether_the_server_speaks_tls(mode: str | None) -> None:
    reply = discovery_answer(DISCOVERY_QUERY, name="Barkada", port=7777, tables=1, tls=mode)
    assert reply is not None
    found = read_answer(reply, "192.0.2.5")
    assert found is not None and found.tls == mode
    assert found.address == ("tls://" if mode else "") + "192.0.2.5:7777"


async def test_the_host_commands_find_the_server_through_its_settings_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tongits-server --config /etc/tongits/server.toml status``: the data directory (and
    so the admin socket) is the one the service's settings name."""
    directory = tmp_path / "data"
    settings = tmp_path / "server.toml"
    settings.write_text(f'name = "Barkada"\ndata_dir = "{directory}"\n')
    server = Server(quick_config(name="Barkada"), MemoryJournal())
    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            await nursery.start(lambda task_status: server.serve(listen=False,
                                                                 task_status=task_status))
            await nursery.start(serve_admin, server, directory)
            code = await trio.to_thread.run_sync(
                cli_main, ["--config", str(settings), "status", "--json"])
            elsewhere = await trio.to_thread.run_sync(
                cli_main, [f"--config={settings}", "--data-dir", str(tmp_path / "x"), "status"])
            nursery.cancel_scope.cancel()
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["server"] == "Barkada"
    assert elsewhere == 1 and "cannot reach" in err  # --data-dir wins over the file
