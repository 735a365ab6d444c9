"""LAN discovery: ``tongits-server`` answers the UDP query that ``tongits discover`` sends."""

from __future__ import annotations

import json

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


async def test_a_running_server_is_found_with_its_tables() -> None:
    config = ServerConfig(host="127.0.0.1", port=0, name="Friday night", bot_delay=0)
    server = Server(config)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve)
            port = listeners[0].socket.getsockname()[1]
            assert await _discover(port) == [
                ServerAnnouncement("127.0.0.1", port, "Friday night", 0)
            ]
            nursery.cancel_scope.cancel()


async def test_discovery_can_be_turned_off() -> None:
    config = ServerConfig(host="127.0.0.1", port=0, discovery=False)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(Server(config).serve)
            assert await _discover(listeners[0].socket.getsockname()[1]) == []
            nursery.cancel_scope.cancel()
