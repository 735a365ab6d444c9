"""The unfiltered fuzz of issue #16 against a live ``tongits-server`` process on a free loopback
port: every field of every client message, each either plausible (so requests get far: tables
are created, joined, played by bots) or wild (lone surrogates, integers past 64 bits, infinities,
``bin``, deep nesting), in both encodings, with or without ``hello``. The server must answer
every connection, never with ``internal_error``, log no traceback, and still serve at the end.
Bounded: a few hundred connections, tens of seconds on a shared machine."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tongits.protocol import CLIENT_MESSAGES, Codec, Mode

#: Seconds a connection may take to answer its last request (a shared, loaded machine).
ANSWER_TIMEOUT = 20.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """A real server process: bots play at once, a dropped player's seat goes to a bot at once
    (so the fuzz's tables close behind it), few tables."""
    log = tmp_path_factory.mktemp("fuzz") / "server.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tongits.server.cli", "--port", "0", "--db", ":memory:",
             "--discovery", "false", "--bot-delay", "0.01", "--grace", "0",
             "--max-tables", "40", "--log-level", "WARNING"],
            stdout=subprocess.PIPE, stderr=err,
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("listening on"), line
        yield int(line.rsplit(":", 1)[1]), log
        assert proc.poll() is None, f"the server died: {log.read_text()[-3000:]}"
    finally:
        proc.terminate()
        proc.wait(10)


_surrogates = st.lists(st.integers(0xD800, 0xDFFF).map(chr), min_size=1, max_size=2).map("".join)
_wild_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**80), 2**80),
    st.sampled_from([2**53, 2**63, 2**64 - 1, -(2**63), 10**30]),
    st.floats(), st.text(st.characters(codec=None, categories=None), max_size=8), _surrogates,
    st.binary(max_size=8),
)
#: the values that broke the server before: each field gets one of these a tenth of the time
_nasty = st.one_of(_surrogates, st.sampled_from([2**63, 2**64 - 1, 10**30, float("inf"),
                                                  float("nan"), b"\xff"]))
_wild = st.recursive(_wild_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=10)
_deep = st.integers(1, 300).map(lambda n: json.loads("[" * n + "]" * n))

_OPTIONS = ["pick_to_sapaw", "sapaw_block", "call_tie", "scoring", "ante", "no_such_option"]
_PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    "id": st.one_of(st.integers(0, 1000), st.text(max_size=8)),
    "version": st.just(1),
    "name": st.sampled_from(["fz", "Ana", " ", "x" * 40]),
    "kind": st.sampled_from(["human", "bot"]),
    "token": st.text(max_size=40),
    "seq": st.integers(-1, 100),
    "options": st.dictionaries(st.sampled_from(_OPTIONS), st.one_of(
        st.booleans(), st.integers(0, 10**6), st.sampled_from(["hand", "tally", "caller"]),
        _wild), max_size=3),
    "timer": st.sampled_from([0, 0.05, 1, -1, 3601]),
    "private": st.booleans(),
    "bots": st.sampled_from([0, 1, 2, 3]),
    "auto_start": st.booleans(),
    "table": st.sampled_from([f"t{n}" for n in range(1, 8)]),
    "seat": st.integers(-1, 3),
    "code": st.text(max_size=8),
    "policy": st.sampled_from(["greedy", "random", "strong", "nope"]),
    "move": st.fixed_dictionaries({"action": st.sampled_from(
        ["draw", "pick", "meld", "discard", "call", "fold", "sapaw", "x"])},
        optional={"card": st.sampled_from(["Ah", "Tc", "1x"]),
                  "cards": st.lists(st.sampled_from(["Ah", "2h", "3h", "Zz"]), max_size=3),
                  "meld": st.one_of(st.integers(-1, 5), _wild)}),
    "text": st.text(max_size=30),
}


@st.composite
def _message(draw: st.DrawFn) -> dict[str, Any]:
    """Any client message type (or an unknown one) with each of its fields plausible, one of
    the values that once stopped the server, wild, deeply nested or absent."""
    kind = draw(st.sampled_from([*sorted(CLIENT_MESSAGES), "nonsense"]))
    cls = CLIENT_MESSAGES.get(kind)
    names = [f for f in cls.__dataclass_fields__ if f != "TYPE"] if cls else ["id"]
    msg: dict[str, Any] = {"type": draw(st.one_of(st.just(kind), _wild))
                           if draw(st.integers(0, 9)) == 0 else kind}
    for name in names:
        how = draw(st.integers(0, 9))
        if how <= 4:
            msg[name] = draw(_PLAUSIBLE.get(name, _wild))
        elif how == 5:
            msg[name] = draw(_nasty)
        elif how <= 7:
            msg[name] = draw(_wild)
        elif how == 8:
            msg[name] = draw(_deep)
    return msg


_HELLO = {"type": "hello", "version": 1, "name": "fz", "kind": "human"}
_packer = msgpack.Packer(use_bin_type=True, unicode_errors="surrogatepass")


def _encode(msg: dict[str, Any], text: bool) -> bytes:
    if text:
        return json.dumps(msg, default=lambda b: b.hex()).encode("ascii") + b"\n"
    payload: bytes
    try:
        payload = _packer.pack(msg)
    except (OverflowError, ValueError):  # an integer msgpack cannot hold: send it in JSON
        payload = _packer.pack(json.loads(json.dumps(msg, default=lambda b: b.hex()),
                                          parse_int=lambda s: s))
    return struct.pack(">I", len(payload)) + payload


def _exchange(port: int, data: bytes, text: bool, sentinel: str) -> list[dict[str, Any]]:
    """Send ``data`` and then a ping with id ``sentinel``; every frame until the answer to it
    (a pong or an error) or until the server closes the connection."""
    codec = Codec(Mode.TEXT if text else Mode.BINARY)
    frames: list[dict[str, Any]] = []
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_TIMEOUT) as sock:
        # closed early (a framing error): what it said is still readable
        with suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(data + _encode({"type": "ping", "id": sentinel}, text))
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                return frames
            codec.receive_data(chunk)
            while (msg := codec.next_message()) is not None:
                frames.append(msg)
                if sentinel in (msg.get("id"), msg.get("ref")):
                    return frames
    raise AssertionError(f"no answer in {ANSWER_TIMEOUT} s: {frames[-3:]}")


_count = iter(range(10**9))


@settings(max_examples=int(os.environ.get("TONGITS_FUZZ_EXAMPLES", "300")), deadline=None,
          suppress_health_check=list(HealthCheck), derandomize=False)
@given(st.lists(_message(), min_size=1, max_size=4), st.booleans(), st.booleans())
def test_unfiltered_fuzz_against_a_live_server(
    server: tuple[int, Path], messages: list[dict[str, Any]], hello: bool, text: bool,
) -> None:
    port, log = server
    data = (_encode(_HELLO, text) if hello else b"") + b"".join(_encode(m, text)
                                                               for m in messages)
    frames = _exchange(port, data, text, f"end-{next(_count)}")
    assert frames, "the server said nothing"
    for msg in frames:
        assert not (msg.get("type") == "error" and msg.get("code") == "internal_error"), msg
    if "Traceback" in log.read_text():
        raise AssertionError(log.read_text()[-3000:])


def test_the_server_still_serves_after_the_fuzz(server: tuple[int, Path]) -> None:
    """Runs after the fuzz (same module, same process): a fresh client is answered."""
    port, _log = server
    for text in (True, False):
        frames = _exchange(port, _encode({**_HELLO, "id": 1}, text), text, "last")
        assert [f["type"] for f in frames] == ["welcome", "pong"]
