"""Nothing a client sends stops the server (issue #16, items 1 and 2): every value is checked at
the edge against the documented limits, and behind that two walls: a failure while serving one
connection ends that connection, a failure in one table's step fails that table, never the
process."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import msgpack
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import HELLO, capped, exchange, frame, memory_server, next_of, quick_config
from tongits.client.connection import ServerError
from tongits.engine import MAX_ANTE
from tongits.protocol import (
    MAX_DEPTH,
    MAX_INT,
    Codec,
    Error,
    ErrorCode,
    HandResult,
    Mode,
    ProtocolError,
    State,
    parse_client,
)
from tongits.server import MemoryJournal, Server, routes
from tongits.server.table.progression import Progression

# ----- the edge -----------------------------------------------------------------------------

_unicode = st.text(st.characters(codec=None, categories=None), max_size=6)
_surrogates = st.lists(st.integers(0xD800, 0xDFFF).map(chr), min_size=1, max_size=3).map("".join)
_wild_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), _unicode, _surrogates,
    st.binary(max_size=6),
)
_wild = st.recursive(_wild_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(_unicode, st.integers()), inner,
                                                 max_size=4)), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_unicode, _wild, max_size=4), st.sampled_from(["ping", "chat", "join"]))
def test_whatever_passes_the_edge_can_be_sent_back(fields: dict[str, Any], kind: str) -> None:
    """The property behind item 1: a request the edge accepts holds nothing that either
    encoding cannot carry back (the server echoes ids and stores names, options, moves)."""
    raw = {**fields, "type": kind}
    try:
        parse_client(raw)
    except ProtocolError as refused:
        assert refused.code in ("bad_field", "unknown_type")
        return
    for mode in Mode:
        codec = Codec(mode)
        codec.receive_data(codec.encode(raw))
        assert codec.next_message() is not None


@pytest.mark.parametrize("raw", [
    {"type": "ping", "id": "\ud800"},
    {"type": "ping", "id": 1, "x": "a\udfffb"},
    {"type": "ping", "id": 1, "x": MAX_INT + 1},
    {"type": "ping", "id": 1, "x": -(2**63)},
    {"type": "ping", "id": 1, "x": math.inf},
    {"type": "ping", "id": 1, "x": math.nan},
    {"type": "ping", "id": 1, "x": b"bytes"},
    {"type": "ping", "id": 1, "x": "y" * 1025},
    {"type": "ping", "id": 1, "x": list(range(65))},
    {"type": "create_table", "id": 1, "name": "a", "options": {"ante": 2**63}},
])
def test_values_outside_the_limits_are_bad_fields(raw: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as refused:
        parse_client(raw)
    assert refused.value.code == "bad_field"
    assert refused.value.ref in (None, 1)


def test_nesting_is_bounded() -> None:
    nested: Any = 1
    for _ in range(MAX_DEPTH - 1):
        nested = [nested]
    parse_client({"type": "ping", "x": nested})
    with pytest.raises(ProtocolError):
        parse_client({"type": "ping", "x": [nested]})


def test_an_id_that_cannot_be_echoed_is_not() -> None:
    for bad in ("\ud800", "x" * 65, 2**60, True, 1.5):
        with pytest.raises(ProtocolError) as refused:
            parse_client({"type": "nope", "id": bad})
        assert refused.value.ref is None


@pytest.mark.parametrize("bad", ["x" * 65, "\ud800", 2**60, True, 1.5])
def test_a_request_whose_id_cannot_be_echoed_is_refused(bad: object) -> None:
    """docs/PROTOCOL.md: a request breaking a bound (an ``id`` longer than 64 characters is
    one) is refused with ``bad_field``, and such an id is never echoed; a ``ping`` with a
    65-character id was answered with a ``pong`` carrying it."""
    with pytest.raises(ProtocolError) as refused:
        parse_client({"type": "ping", "id": bad})
    assert refused.value.code == "bad_field" and refused.value.ref is None
    assert parse_client({"type": "ping", "id": "x" * 64}).id == "x" * 64


def _server() -> Server:
    return Server(quick_config(), MemoryJournal())


async def _serving(server: Server, nursery: trio.Nursery) -> None:
    await nursery.start(lambda task_status: server.serve(listen=False, task_status=task_status))


async def _still_serves(server: Server) -> None:
    frames = await exchange(server, frame(HELLO) + frame({"type": "ping", "id": 7}))
    assert {"type": "pong", "id": 7} in frames


@capped
async def test_a_lone_surrogate_in_text_mode_is_refused_not_fatal(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Item 1: ``{"type":"ping","id":"\\ud800"}`` (no hello needed) stopped the server; a join
    ``code`` of ``"\\ud800"`` got ``internal_error``."""
    server = _server()
    async with trio.open_nursery() as nursery:
        await _serving(server, nursery)
        frames = await exchange(server, b'{"type":"ping","id":"\\ud800"}\n')
        assert [f["code"] for f in frames if f["type"] == "error"][0] == "bad_field"
        hello = json.dumps(HELLO).encode() + b"\n"
        await exchange(server, hello + b'{"type":"create_table","id":1,"name":"P",'
                                        b'"private":true}\n')
        frames = await exchange(server, hello + b'{"type":"join","id":2,"table":"t1",'
                                                 b'"code":"\\ud800"}\n')
        errors = [f for f in frames if f["type"] == "error"]
        assert errors[0]["code"] == "bad_field" and errors[0]["ref"] == 2
        await _still_serves(server)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("ante", [2**63, 2**62, 10**30, MAX_ANTE + 1])
@capped
async def test_an_ante_beyond_the_bound_is_refused(
    autojump_clock: trio.testing.MockClock, ante: int,
) -> None:
    """Item 2: an ante of 2**63 stopped the server at the first ``hand_result`` (2**62 a few
    hands later, 10**30 in text mode once a binary client watched)."""
    async with memory_server(bot_delay=0.0) as (server, connect), connect("Ana") as ana:
        text = json.dumps(HELLO).encode() + b"\n" + json.dumps(
            {"type": "create_table", "id": 1, "name": "A", "bots": 2, "timer": 0.05,
             "options": {"ante": ante}}).encode() + b"\n"
        frames = await exchange(server, text)
        codes = [f["code"] for f in frames if f["type"] == "error"]
        assert codes[0] in ("bad_field", "bad_options"), codes
        assert not [f for f in frames if f["type"] == "joined"]
        if ante < 2**63:
            with pytest.raises(ServerError) as refused:
                await ana.create_table("B", bots=2, options={"ante": ante})
            assert refused.value.code in ("bad_field", "bad_options")
        await ana.create_table("C", bots=2, timer=0.05, options={"ante": MAX_ANTE})
        assert (await next_of(ana, HandResult)).standings["pot"] >= 0
        await ana.ping()


# ----- the walls ------------------------------------------------------------------------------


@capped
async def test_a_failure_in_a_table_step_fails_that_table_only(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bug in one table's step (here: the end of a hand) closes that table, tells its players
    ``table_failed``, keeps its log, is logged once; the server and other tables go on."""
    original = Progression.hand_over

    def failing(progression: Progression, hand: Any) -> None:
        if progression.parts.state.name == "Doomed":
            raise OverflowError("integer out of range")
        original(progression, hand)

    monkeypatch.setattr(Progression, "hand_over", failing)
    journal = MemoryJournal()
    async with (
        memory_server(journal, bot_delay=0.0) as (server, connect),
        connect("Ana") as ana, connect("Ben") as ben, connect("Sam") as sam,
    ):
        doomed = await ana.create_table("Doomed", bots=2, timer=0.01)
        await sam.spectate(doomed.table)
        await ben.create_table("Fine", bots=2, timer=0.01)
        for conn in (ana, sam):
            told = await next_of(conn, Error)
            assert told.code == "table_failed" and told.number == 5002
        assert doomed.table not in server.lobby.tables
        assert doomed.table in journal.closed and journal.entries[doomed.table]
        await next_of(ben, HandResult)
        await ana.ping()  # the connection stays, back in the lobby
        await ana.create_table("Again", bots=2, timer=0)
        await next_of(ana, State)
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == 1 and "failed" in failures[0].getMessage()


@capped
async def test_a_failure_while_serving_a_connection_ends_that_connection_only(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Even the error path failing (as the echo of an unencodable id did) ends one connection
    with ``internal_error``, logged once."""
    def broken(exc: BaseException, ref: Any = None) -> dict[str, Any]:
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    server = _server()
    async with trio.open_nursery() as nursery:
        await _serving(server, nursery)
        monkeypatch.setattr(routes, "error_frame", broken)
        frames = await exchange(server, frame(HELLO) + frame({"type": "nonsense", "id": 3}))
        assert frames[-1]["type"] == "error" and frames[-1]["code"] == "internal_error"
        monkeypatch.undo()
        await _still_serves(server)
        nursery.cancel_scope.cancel()
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == 1


def test_every_field_of_a_msgpack_request_is_checked_too() -> None:
    """Binary mode cannot carry a lone surrogate, but it does carry 64-bit integers and ``bin``;
    both are refused at the edge, so nothing unencodable reaches the tables."""
    codec = Codec()
    packed = msgpack.packb({"type": "ping", "id": 2**64 - 1, "x": b"\x00"})
    codec.receive_data(len(packed).to_bytes(4, "big") + packed)
    raw = codec.next_message()
    assert raw is not None
    with pytest.raises(ProtocolError) as refused:
        parse_client(raw)
    assert refused.value.code == ErrorCode.BAD_FIELD and refused.value.ref is None
