"""The sans-IO codec: frames split anywhere, several per chunk, oversize and garbage input."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tongits.protocol import (
    DEFAULT_MAX_FRAME_SIZE,
    BadLine,
    Codec,
    ErrorCode,
    FrameTooLarge,
    FramingError,
    ItemCache,
    MalformedFrame,
    Mode,
    sniff,
)

json_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text()
json_values = st.recursive(
    json_scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
json_maps = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


def drain(codec: Codec) -> list[dict[Any, Any]]:
    messages = []
    while (message := codec.next_message()) is not None:
        messages.append(message)
    return messages


def feed_in_pieces(codec: Codec, data: bytes, cuts: list[int]) -> list[dict[Any, Any]]:
    received = []
    start = 0
    for end in [*sorted(cuts), len(data)]:
        codec.receive_data(data[start:end])
        received += drain(codec)
        start = end
    return received


@pytest.mark.parametrize("mode", [Mode.BINARY, Mode.TEXT])
def test_byte_by_byte(mode: Mode) -> None:
    messages: list[dict[str, Any]] = [
        {"type": "ping", "id": 1},
        {"type": "chat", "text": "Mabuhay ✓"},
    ]
    data = b"".join(Codec(mode).encode(m) for m in messages)
    server = Codec()
    received = []
    for byte in data:
        server.receive_data(bytes([byte]))
        received += drain(server)
    assert received == messages
    assert server.mode is mode


@pytest.mark.parametrize("mode", [Mode.BINARY, Mode.TEXT])
@given(messages=st.lists(json_maps, min_size=1, max_size=5), data=st.data())
def test_split_anywhere(mode: Mode, messages: list[dict[str, Any]], data: st.DataObject) -> None:
    wire = b"".join(Codec(mode).encode(m) for m in messages)
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=8))
    assert feed_in_pieces(Codec(), wire, cuts) == messages


@pytest.mark.parametrize("mode", [Mode.BINARY, Mode.TEXT])
def test_several_frames_in_one_chunk(mode: Mode) -> None:
    messages = [{"type": "ping", "id": n} for n in range(5)]
    server = Codec()
    server.receive_data(b"".join(Codec(mode).encode(m) for m in messages))
    assert drain(server) == messages
    assert server.next_message() is None


def test_binary_frame_bytes() -> None:
    assert Codec(Mode.BINARY).encode({"type": "ping"}) == b"\x00\x00\x00\x0b\x81\xa4type\xa4ping"


def test_text_line_bytes() -> None:
    assert Codec(Mode.TEXT).encode({"type": "ping", "id": 1}) == b'{"type":"ping","id":1}\n'


def test_mode_detected_from_first_byte_only() -> None:
    server = Codec()
    server.receive_data(b"")
    assert server.mode is None
    server.receive_data(b'{"type":"ping"}\n')
    assert server.mode is Mode.TEXT
    assert server.encode({"type": "pong"}) == b'{"type":"pong"}\n'


@pytest.mark.parametrize("opening", [b" ", b"\n", b"\r\n", b"\t", b"\xef\xbb\xbf", b"x\n"])
def test_anything_but_a_zero_byte_first_means_text(opening: bytes) -> None:
    """A binary frame is at most 64 KiB, so its length's first byte is 0x00; leading
    whitespace and a UTF-8 byte order mark are text (a person at ``nc``)."""
    assert sniff(opening[0]) is Mode.TEXT
    server = Codec()
    server.receive_data(opening + b'{"type":"ping"}\n')
    assert server.mode is Mode.TEXT
    if opening == b"x\n":
        with pytest.raises(BadLine):
            server.next_message()
    assert server.next_message() == {"type": "ping"}


def test_a_zero_byte_first_means_binary() -> None:
    assert sniff(0) is Mode.BINARY
    server = Codec()
    server.receive_data(b"\x00")
    assert server.mode is Mode.BINARY


def test_encode_before_detection_is_binary() -> None:
    assert Codec().encode({"type": "ok"}) == Codec(Mode.BINARY).encode({"type": "ok"})


def test_text_blank_lines_and_crlf() -> None:
    server = Codec()
    server.receive_data(b'{"type":"ping"}\r\n\n  \r\n{"type":"leave"}\n')
    assert drain(server) == [{"type": "ping"}, {"type": "leave"}]


def test_oversize_header_rejected_before_body() -> None:
    server = Codec(Mode.BINARY)
    server.receive_data(struct.pack(">I", DEFAULT_MAX_FRAME_SIZE + 1))
    with pytest.raises(FrameTooLarge) as raised:
        server.next_message()
    assert raised.value.code == ErrorCode.FRAME_TOO_LARGE


def test_max_frame_size_is_configurable() -> None:
    payload = msgpack.packb({"text": "x" * 90})
    frame = struct.pack(">I", len(payload)) + payload
    assert len(payload) == 98
    exact = Codec(max_frame_size=98)
    exact.receive_data(frame)
    assert exact.next_message() == {"text": "x" * 90}
    small = Codec(max_frame_size=97)
    small.receive_data(frame[:4])
    with pytest.raises(FrameTooLarge):
        small.next_message()


def test_text_line_limit() -> None:
    line = b'{"t":"' + b"x" * 92 + b'"}'
    assert len(line) == 100
    exact = Codec(max_frame_size=100)
    exact.receive_data(line + b"\n")
    assert exact.next_message() == {"t": "x" * 92}

    growing = Codec(max_frame_size=100)
    growing.receive_data(line)
    assert growing.next_message() is None
    growing.receive_data(b" ")
    with pytest.raises(FrameTooLarge):
        growing.next_message()

    whole = Codec(max_frame_size=100)
    whole.receive_data(line + b" \n")
    with pytest.raises(FrameTooLarge):
        whole.next_message()


def test_codec_is_dead_after_error_but_can_still_encode() -> None:
    server = Codec(Mode.BINARY)
    server.receive_data(b"\x00\x00\x00\x01\xc1")
    with pytest.raises(MalformedFrame) as raised:
        server.next_message()
    assert raised.value.code == ErrorCode.MALFORMED_FRAME
    with pytest.raises(MalformedFrame):
        server.next_message()
    with pytest.raises(MalformedFrame):
        server.receive_data(b"\x00")
    assert server.encode({"type": "error"})[4:] == msgpack.packb({"type": "error"})


def test_a_bad_text_line_spoils_only_itself() -> None:
    """Text lines are self-delimiting: after a bad line the next one reads as usual."""
    server = Codec()
    server.receive_data(b'{"type":"ping"}\nnot json\n{"type":"ping"}\n')
    assert server.next_message() == {"type": "ping"}
    with pytest.raises(BadLine) as raised:
        server.next_message()
    assert raised.value.code == ErrorCode.MALFORMED_FRAME
    assert not isinstance(raised.value, FramingError)
    assert server.next_message() == {"type": "ping"}
    assert server.encode({"type": "error"}) == b'{"type":"error"}\n'


@pytest.mark.parametrize(
    "payload",
    [msgpack.packb([1, 2]), msgpack.packb("hello"), msgpack.packb(None), msgpack.packb(b"x")],
)
def test_binary_payload_must_be_a_map(payload: bytes) -> None:
    server = Codec()
    server.receive_data(struct.pack(">I", len(payload)) + payload)
    with pytest.raises(MalformedFrame) as raised:
        server.next_message()
    assert raised.value.code == ErrorCode.NOT_A_MAP


@pytest.mark.parametrize("line", [b"[1]", b'"x"', b"3", b"null"])
def test_text_payload_must_be_an_object(line: bytes) -> None:
    server = Codec()
    server.receive_data(b'{"type":"ping"}\n' + line + b"\n")
    assert server.next_message() == {"type": "ping"}
    with pytest.raises(BadLine) as raised:
        server.next_message()
    assert raised.value.code == ErrorCode.NOT_A_MAP


@pytest.mark.parametrize(
    "frame",
    [
        b"\x00\x00\x00\x00",
        b"\x00\x00\x00\x01\xc1",
        b"\x00\x00\x00\x02\x80\x80",
        b"\x00\x00\x00\x02\x81\x91",
        b"\x00\x00\x00\x04\x81\x91\x01\x02",
        struct.pack(">I", 5001) + b"\x91" * 5000 + b"\x01",
    ],
    ids=["empty", "never-used-byte", "extra-data", "truncated", "unhashable-key", "deep-nesting"],
)
def test_malformed_binary(frame: bytes) -> None:
    """Each refusal says why: msgpack's own words, or ours where it has none (a byte no value
    begins with, nesting too deep to read), never a bare "invalid msgpack: "."""
    server = Codec()
    server.receive_data(frame)
    with pytest.raises(MalformedFrame) as raised:
        server.next_message()
    assert not str(raised.value).endswith(": "), str(raised.value)


@pytest.mark.parametrize(
    "line",
    [b'{"a":\xff}', b'{"a":1', b'{"a":' + b"[" * 100_000 + b"}"],
    ids=["bad-utf8", "truncated", "deep-nesting"],
)
def test_malformed_text(line: bytes) -> None:
    server = Codec(Mode.TEXT, max_frame_size=200_000)
    server.receive_data(line + b"\n")
    with pytest.raises(BadLine):
        server.next_message()


@pytest.mark.parametrize("mode", [Mode.TEXT, Mode.BINARY])
def test_nesting_past_the_decoder_is_malformed_and_says_so(mode: Mode) -> None:
    """A request nested 5,000 deep is well formed but past what the decoders read (about a
    thousand levels; the protocol allows eight): ``malformed_frame`` as docs/PROTOCOL.md's
    limits say, in words a bot author reads, not Python's "maximum recursion depth"."""
    depth = 5000
    if mode is Mode.TEXT:
        data = b'{"type":"ping","x":' + b"[" * depth + b"1" + b"]" * depth + b"}\n"
    else:
        payload = b"\x82\xa4type\xa4ping\xa1x" + b"\x91" * depth + b"\x01"
        data = struct.pack(">I", len(payload)) + payload
    server = Codec(mode)
    server.receive_data(data)
    with pytest.raises((BadLine, MalformedFrame)) as raised:
        server.next_message()
    assert raised.value.code == ErrorCode.MALFORMED_FRAME
    assert str(raised.value).endswith("maps and lists nested too deeply to read")
    doc = (Path(__file__).parents[1] / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    assert "past about a thousand levels the decoder cannot read the frame at all" in doc


@given(chunks=st.lists(st.binary(max_size=64), max_size=10))
def test_garbage_raises_only_framing_errors(chunks: list[bytes]) -> None:
    server = Codec(Mode.BINARY, max_frame_size=256)
    try:
        for chunk in chunks:
            server.receive_data(chunk)
            drain(server)
    except FramingError:
        with pytest.raises(FramingError):
            server.receive_data(b"\x00")


@given(chunks=st.lists(st.binary(max_size=64), max_size=10))
def test_garbage_text_raises_only_protocol_errors(chunks: list[bytes]) -> None:
    """Bad lines raise ``BadLine`` and reading goes on; only an overlong line kills the
    codec."""
    server = Codec(max_frame_size=256)
    server.receive_data(b"{")
    try:
        for chunk in chunks:
            server.receive_data(chunk.replace(b"\x00", b"\n"))
            while True:
                try:
                    if server.next_message() is None:
                        break
                except BadLine:
                    continue
    except FramingError:
        with pytest.raises(FramingError):
            server.next_message()


def _split(data: st.DataObject, items: dict[str, Any]) -> list[dict[str, Any]]:
    """``items`` cut into groups (some empty), in order."""
    keys = list(items)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(keys)), max_size=3)))
    bounds = [0, *cuts, len(keys)]
    return [{k: items[k] for k in keys[a:b]} for a, b in zip(bounds, bounds[1:], strict=False)]


@given(st.sampled_from(list(Mode)), st.dictionaries(st.text(max_size=8), json_values, max_size=20),
       st.dictionaries(st.text(max_size=8), json_values, max_size=20),
       st.dictionaries(st.text(max_size=8), json_values, max_size=3), st.data())
def test_a_map_encoded_from_shared_parts_is_the_map(
    mode: Mode, shared: dict[str, Any], own: dict[str, Any], inner: dict[str, Any],
    data: st.DataObject,
) -> None:
    """A map joined from groups of entries encoded apart (``Codec.entries``, ``entry``,
    ``join_map``; empty groups too), the shared ones made once for many messages, with a
    nested map made the same way, reads back as the whole map, in either mode, whether the
    maps have fewer or more than 16 entries (msgpack's header changes)."""
    own = {k: v for k, v in own.items() if k not in shared}
    key = data.draw(st.text(max_size=8).filter(lambda k: k not in shared and k not in own))
    inner_own = data.draw(st.dictionaries(st.text(max_size=8), json_values, max_size=18))
    inner_own = {k: v for k, v in inner_own.items() if k not in inner}
    sender = Codec(mode)

    def groups(items: dict[str, Any]) -> list[bytes]:
        return [sender.entries(group) if group else b"" for group in _split(data, items)]

    common = groups(shared)
    nested = sender.join_map(len(inner) + len(inner_own), groups(inner) + groups(inner_own))
    first, again = (sender.frame(sender.join_map(
        len(shared) + len(own) + 1, [*common, *groups(own), sender.entry(key, nested)]))
        for _ in range(2))
    whole = {**shared, **own, key: {**inner, **inner_own}}
    assert first == again
    receiver = Codec(mode)
    receiver.receive_data(first + sender.encode(whole))
    assert drain(receiver) == [whole, whole]


@given(st.sampled_from(list(Mode)), st.dictionaries(st.text(max_size=8), json_values, max_size=20),
       st.dictionaries(st.text(max_size=8), json_values, max_size=20),
       st.lists(st.text(max_size=8), min_size=1, max_size=18, unique=True), st.data())
def test_a_template_filled_for_each_recipient_is_the_whole_map(
    mode: Mode, outer: dict[str, Any], inner: dict[str, Any], own_keys: list[str],
    data: st.DataObject,
) -> None:
    """A message many recipients get alike but for a few entries of a nested map
    (``Codec.template``), filled with each recipient's entries (``Codec.fill``), reads back as
    the whole map for each, in either mode, with the shared entries given in groups (empty
    ones too), across msgpack's header sizes."""
    key = data.draw(st.text(max_size=8).filter(lambda k: k not in outer))
    tail = data.draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2))
    tail = {k: v for k, v in tail.items() if k not in own_keys}
    inner = {k: v for k, v in inner.items() if k not in own_keys and k not in tail}
    fills = data.draw(st.lists(st.fixed_dictionaries({k: json_values for k in own_keys}),
                               min_size=1, max_size=3))
    sender, receiver = Codec(mode), Codec(mode)
    template = sender.template(
        [sender.entries(group) if group else b"" for group in _split(data, outer)], len(outer),
        key, [sender.entries(group) if group else b"" for group in _split(data, inner)],
        len(inner) + len(own_keys) + len(tail), sender.entries(tail) if tail else b"")
    for fill in fills:
        receiver.receive_data(sender.fill(template, sender.entries(fill)))
    assert drain(receiver) == [{**outer, key: {**inner, **fill, **tail}} for fill in fills]


@given(st.sampled_from(list(Mode)), st.integers(0, 20), st.integers(0, 3), json_values,
       json_values)
def test_a_template_extended_for_one_recipient_is_the_whole_map(
    mode: Mode, outer_count: int, inner_count: int, value: Any, extra: Any,
) -> None:
    """A template (``Codec.template``) with one more entry after its nested map
    (``Codec.extend``: the seat offered its legal moves gets the others' frame and its
    ``legal``) reads back as the whole map, in either mode, across msgpack's header sizes (15
    entries and 16 take headers of different lengths)."""
    outer = {f"o{i}": i for i in range(outer_count)}
    inner = {f"i{i}": i for i in range(inner_count)}
    sender, receiver = Codec(mode), Codec(mode)
    template = sender.template([sender.entries(outer) if outer else b""], outer_count, "view",
                               [sender.entries(inner) if inner else b""], inner_count + 1, b"")
    extended = sender.extend(template, outer_count + 1, sender.entries({"legal": extra}))
    receiver.receive_data(sender.fill(extended, sender.entries({"own": value})))
    receiver.receive_data(sender.fill(template, sender.entries({"own": value})))
    whole = {**outer, "view": {**inner, "own": value}}
    assert drain(receiver) == [{**whole, "legal": extra}, whole]


@given(st.recursive(
    json_scalars | st.integers(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.text(max_size=4) | st.integers(-9, 9) | st.booleans() | st.none(), children,
        max_size=3),
    max_leaves=8))
def test_text_mode_writes_what_the_standard_library_writes(value: Any) -> None:
    """Text mode's JSON reads back as the standard library's JSON of the same message, keys
    that are no strings and integers beyond 64 bits included (orjson refuses those: the
    standard library writes them)."""
    message = {"value": value}
    receiver = Codec(Mode.TEXT)
    receiver.receive_data(Codec(Mode.TEXT).encode(message))
    assert drain(receiver) == [json.loads(json.dumps(message))]


@given(st.sampled_from(list(Mode)), st.lists(json_maps, max_size=40), st.data())
def test_a_growing_list_encoded_item_by_item_is_the_list(
    mode: Mode, items: list[dict[str, Any]], data: st.DataObject
) -> None:
    """A list that grows from message to message (a hand's history), its items encoded once
    (``ItemCache``): prefixes in any order, a list where an item was replaced by a changed copy
    (or by an equal one), and that list grown, read back as those lists, in either mode,
    across msgpack's array header sizes."""
    sender, cache = Codec(mode), ItemCache()
    cuts = data.draw(st.lists(st.integers(0, len(items)), max_size=4))
    lists = [items[:cut] for cut in cuts] + [items]
    if items:
        at = data.draw(st.integers(0, len(items) - 1))
        for copy in ({**items[at], "timeout": True}, {**items[at]}):
            changed = list(items)
            changed[at] = copy
            lists += [changed[: at + 1], changed, [*changed, copy]]
    receiver = Codec(mode)
    for value in lists:
        nested = sender.join_map(1, [sender.entry("history", sender.encode_list(value, cache))])
        receiver.receive_data(sender.frame(nested))
    assert drain(receiver) == [{"history": value} for value in lists]


@pytest.mark.parametrize(("data", "said"), [
    (b"\x80\n", "invalid JSON line: text that is not UTF-8 (byte 0x80 at position 0)"),
    (b'{"a" 1}\n', 'invalid JSON line: Expecting ":" delimiter: line 1 column 6 (char 5)'),
])
def test_a_bad_line_is_explained_with_json_quotes(data: bytes, said: str) -> None:
    """What the codec says about a line it cannot read never quotes the Python way (the
    fuzzed errors of test_server_hostile found both)."""
    codec = Codec(Mode.TEXT)
    codec.receive_data(data)
    with pytest.raises(BadLine) as bad:
        codec.next_message()
    assert bad.value.message == said


@given(st.recursive(
    json_scalars | st.integers() | st.floats() | st.text(st.characters(codec="utf-16")),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.text(max_size=4), children, max_size=3),
    max_leaves=8), st.booleans())
def test_a_text_line_reads_as_the_standard_library_reads_it(value: Any, bom: bool) -> None:
    """A request line is read as ``json.loads`` reads it, every type included: an integer
    beyond 64 bits stays an integer (the limits then refuse it; orjson, which reads most
    lines, would make it a float that passes), and NaN, infinities, lone surrogates and a
    byte order mark read as before."""
    line = (b"\xef\xbb\xbf" if bom else b"") + json.dumps({"value": value}).encode() + b"\n"
    receiver = Codec(Mode.TEXT)
    receiver.receive_data(line)
    assert repr(drain(receiver)) == repr([json.loads(line.decode().lstrip("\ufeff"))])
