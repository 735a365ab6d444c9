"""LAN discovery: ``tongits-server`` answers the UDP query that ``tongits discover`` sends."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
import trio
from tongits.client.tui.discovery import discover
from tongits.protocol.discovery import QUERY, ServerAnnouncement, answer, read_answer
from tongits.server.app import Server
from tongits.server.config import ServerConfig


@pytest.mark.parametrize("data", [b"", b"\xff", b"[]", b'{"type": "hello"}', b"TONGITS?"])
def test_other_datagrams_get_no_answer(data: bytes) -> None:
    assert answer(data, name="x", port=1) is None


def test_answer_names_the_tcp_port_and_reads_back() -> None:
    reply = answer(QUERY, name="Friday", port=7777, tables=2) or b""
    assert json.loads(reply) == {
        "type": "server",
        "version": 1,
        "name": "Friday",
        "port": 7777,
        "tables": 2,
    }
    assert read_answer(reply, "10.0.0.5") == ServerAnnouncement("10.0.0.5", 7777, "Friday", 2)


@pytest.mark.parametrize(
    "data", [b"{}", b'{"type": "server"}', b'{"type": "server", "port": true}', b"\x00"]
)
def test_malformed_answers_are_ignored(data: bytes) -> None:
    assert read_answer(data, "h") is None


async def _discover(port: int) -> list[ServerAnnouncement]:
    return await trio.to_thread.run_sync(
        lambda: discover(port, timeout=0.5, targets=("127.0.0.1",))
    )


def _free_tcp_and_udp_port() -> int:
    """A port number free on loopback for TCP and UDP alike (the server answers discovery on
    the UDP port with its TCP port's number; port 0 alone does not promise the UDP one)."""
    while True:
        with socket.socket() as tcp, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            tcp.bind(("127.0.0.1", 0))
            port: int = tcp.getsockname()[1]
            try:
                udp.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


async def test_a_running_server_is_found_with_its_tables() -> None:
    port = _free_tcp_and_udp_port()
    config = ServerConfig(host="127.0.0.1", port=port, name="Friday night", bot_delay=0)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(Server(config).serve)
            found = await _discover(port)
            nursery.cancel_scope.cancel()
    assert found == [ServerAnnouncement("127.0.0.1", port, "Friday night", 0)]


async def test_discovery_can_be_turned_off() -> None:
    config = ServerConfig(host="127.0.0.1", port=0, discovery=False)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(Server(config).serve)
            assert await _discover(listeners[0].socket.getsockname()[1]) == []
            nursery.cancel_scope.cancel()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def two_machines() -> Iterator[tuple[str, str]]:
    """Two network namespaces joined by a cable (a veth pair), 10.97.0.1/24 and 10.97.0.2/24,
    with no default route: a LAN without a gateway. Skipped where namespaces cannot be made
    (not root, no ``ip``)."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("network namespaces need root and iproute2")
    tag = f"tgd{os.getpid() % 100000}"
    made: list[str] = []
    try:
        for host in ("a", "b"):
            _ip("netns", "add", f"{tag}{host}")
            made.append(f"{tag}{host}")
        _ip("link", "add", f"{tag}va", "type", "veth", "peer", "name", f"{tag}vb")
        for number, host in enumerate(("a", "b"), 1):
            ns, link = f"{tag}{host}", f"{tag}v{host}"
            _ip("link", "set", link, "netns", ns)
            _ip("-n", ns, "addr", "add", f"10.97.0.{number}/24", "dev", link)
            _ip("-n", ns, "link", "set", link, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
    except (OSError, subprocess.CalledProcessError) as exc:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        pytest.skip(f"cannot make network namespaces here: {exc}")
    yield made[0], made[1]
    for ns in made:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_discover_finds_a_server_on_a_lan_without_a_gateway(
    two_machines: tuple[str, str],
) -> None:
    """Machine A runs ``tongits-server --host 0.0.0.0``; ``tongits discover`` on machine B,
    whose only network has no gateway, finds it: the limited broadcast 255.255.255.255 has
    no route there ("network is unreachable"), the network's own broadcast address has."""
    server_ns, client_ns = two_machines
    port = "7781"
    server = subprocess.Popen(
        ["ip", "netns", "exec", server_ns, sys.executable, "-m", "tongits.server.cli",
         "--host", "0.0.0.0", "--port", port, "--db", ":memory:", "--name", "lan-a"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    watchdog = threading.Timer(60, server.kill)  # (a server that never starts: no hang)
    watchdog.start()
    try:
        assert server.stdout is not None
        assert "listening on" in server.stdout.readline()
        found = subprocess.run(
            ["ip", "netns", "exec", client_ns, sys.executable, "-m", "tongits.client.cli",
             "discover", "--port", port], capture_output=True, text=True, timeout=60)
        assert found.stdout.startswith("10.97.0.1:7781 "), (found.stdout, found.stderr)
        assert "lan-a" in found.stdout
    finally:
        watchdog.cancel()
        server.terminate()
        server.wait(timeout=30)
