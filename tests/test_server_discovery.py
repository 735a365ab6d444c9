"""LAN discovery: ``tongits-server`` answers the UDP query that ``tongits discover`` sends."""

from __future__ import annotations

import json
import socket

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
