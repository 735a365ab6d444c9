"""LAN discovery on loopback: the Trio responder answers the client's broadcast query."""

from __future__ import annotations

import json

import pytest
import trio
from tongits.client.tui.discovery import QUERY, Found, answer, discover, serve_discovery


@pytest.mark.parametrize("data", [b"", b"\xff", b"[]", b'{"type": "hello"}', b"TONGITS?"])
def test_other_datagrams_get_no_answer(data: bytes) -> None:
    assert answer(data, name="x", port=1) is None


def test_answer_names_the_tcp_port() -> None:
    reply = json.loads(answer(QUERY, name="Friday", port=7777, tables=2) or b"")
    assert reply == {"type": "server", "version": 1, "name": "Friday", "port": 7777, "tables": 2}


async def test_discover_on_loopback() -> None:
    async with trio.open_nursery() as nursery:
        udp = await nursery.start(
            lambda task_status: serve_discovery(
                name="test server",
                port=4321,
                host="127.0.0.1",
                udp_port=0,
                tables=lambda: 3,
                task_status=task_status,
            )
        )
        found = await trio.to_thread.run_sync(
            lambda: discover(udp, timeout=0.5, targets=("127.0.0.1",))
        )
        nursery.cancel_scope.cancel()
    assert found == [Found("127.0.0.1", 4321, "test server", 3)]


def test_nothing_found_is_an_empty_list() -> None:
    assert discover(9, timeout=0.1, targets=("127.0.0.1",)) == []
