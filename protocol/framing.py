"""Sans-IO framing: bytes in, message maps out, and back.

Two encodings share one port. Binary frames are a 4-byte big-endian payload length followed by
one msgpack map. Text mode is newline-delimited JSON, one object per line, both ways. A server
codec picks the mode from the first byte the peer sends (``sniff``: a binary frame is at most
64 KiB, so its first byte is always 0x00; anything else is text, which tolerates leading
whitespace and a UTF-8 byte order mark); a client codec is told its mode.

The codec owns no socket, in the style of h11: feed what arrives to ``receive_data`` and then
call ``next_message`` until it returns None. Draining after every chunk keeps the buffer below
the maximum frame size plus one chunk, because an oversized frame is refused as soon as its
length is known (binary header, or a text line that outgrows the limit), before its body is
read. After a ``FramingError`` the codec is dead: it raises that error again on any input, while
``encode`` still works so the caller can send an error frame before closing. A text line that
is not a JSON object is only that line's fault (lines are self-delimiting): it raises
``BadLine`` and the codec reads on.
"""

from __future__ import annotations

import json
import operator
import re
import struct
from collections.abc import Mapping
from enum import Enum
from typing import Any

import msgpack
import orjson

from .errors import BadLine, ErrorCode, FrameTooLarge, FramingError, MalformedFrame

DEFAULT_MAX_FRAME_SIZE = 64 * 1024

_HEADER = struct.Struct(">I")
_BOM = "\ufeff"
_BOM_BYTES = _BOM.encode()


class Mode(Enum):
    BINARY = "binary"
    TEXT = "text"

    #: A member is its only instance, so its identity is its hash: ``Enum``'s own hashes the
    #: name in Python (0.45 µs), and the server looks up the encoded parts of every frame by
    #: mode.
    __hash__ = object.__hash__


#: ``Mode.TEXT``, read as a module global: an attribute of an ``Enum`` class is looked up
#: through ``EnumType.__getattr__``'s hook (a call of ``type.__getattribute__`` each time,
#: ~800 instructions), and every encoding and decoding call of a codec asks its mode.
_TEXT = Mode.TEXT


def sniff(first: int) -> Mode:
    """The mode a connection announces with its first byte. A binary frame's length is at most
    ``DEFAULT_MAX_FRAME_SIZE`` (64 KiB, below 2**24), so its first byte is 0x00; anything else is
    a person or a program typing JSON lines. (0x16 would open a TLS handshake: a server that
    offers TLS must look for it before the codec sees any byte.)"""
    return Mode.BINARY if first == 0 else Mode.TEXT


#: Text mode's JSON: compact, UTF-8 as is.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
#: What orjson leaves to ``default`` (and so, here, to the standard library's encoder): the
#: types ``json`` refuses too.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _json(value: Any) -> bytes:
    """``value`` as text mode's JSON, in UTF-8. orjson writes it (the browser seat's states
    are text: the standard library's encoder took 20 times as long, and most of the fan-out's
    time); what orjson refuses (a key that is no string, an integer beyond 64 bits, a type
    ``json`` refuses too) the standard library writes, as before, or refuses as before. Both
    write the same JSON but for the exponent of a float (``5e-05`` and ``0.00005``), which
    reads back as the same number."""
    try:
        return orjson.dumps(value, option=_ORJSON_OPTIONS)
    except TypeError:
        return _JSON.encode(value).encode("utf-8")


class ItemCache:
    """Items of lists that grow from message to message (a hand's history, one step more in
    each state), each encoded once per mode: ``Codec.encode_list`` then encodes only the new
    ones, after the encoding of the list given last when ``items`` starts with the same
    objects. Items are known by
    identity and must not change; the cache holds them (an id names an object only while it
    lives) until ``clear``. Give each growing list a cache of its own."""

    __slots__ = ("_binary", "_text", "_prefix")

    def __init__(self) -> None:
        self._binary: dict[int, tuple[Any, bytes]] = {}
        self._text: dict[int, tuple[Any, bytes]] = {}
        #: per mode (text or not): the items of the list encoded last and their encodings
        #: one after the other (in text, comma-separated)
        self._prefix: dict[bool, tuple[list[Any], bytes]] = {}

    def clear(self) -> None:
        self._binary.clear()
        self._text.clear()
        self._prefix.clear()


def _msgpack_map_header_size(count: int) -> int:
    return 1 if count < 16 else 3 if count < 0x10000 else 5


class Codec:
    """Frames one connection's messages.

    ``mode`` None (a server codec) detects the mode from the peer's first byte; until then
    ``encode`` writes binary frames. ``max_frame_size`` bounds a payload in bytes (a text line
    without its newline).
    """

    def __init__(
        self, mode: Mode | None = None, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    ) -> None:
        #: the connection's mode (None until a server codec has seen the peer's first byte);
        #: an attribute, not a property: the fan-out reads it several times per recipient
        self.mode = mode
        self._max_frame_size = max_frame_size
        self._buffer = bytearray()
        self._error: FramingError | None = None
        # One packer per codec: ``msgpack.packb`` builds a new one for every message.
        self._packer = msgpack.Packer(use_bin_type=True)

    @property
    def buffered(self) -> int:
        """Bytes received that do not make a whole message yet (the start of a frame)."""
        return len(self._buffer)

    def receive_data(self, data: bytes | bytearray) -> None:
        """Buffer bytes from the peer; raises the earlier error if the codec is dead."""
        if self._error is not None:
            raise self._error
        self._buffer += data
        if self.mode is None and self._buffer:
            self.mode = sniff(self._buffer[0])

    def next_message(self) -> dict[Any, Any] | None:
        """The next complete message, or None until more data arrives.

        Raises ``FrameTooLarge`` or ``MalformedFrame`` (both ``FramingError``), after which the
        codec is dead; in text mode, ``BadLine`` for a line that is no JSON object, after which
        it reads the next line.
        """
        if self._error is not None:
            raise self._error
        try:
            if self.mode is _TEXT:
                return self._next_line()
            return self._next_frame()
        except FramingError as error:
            self._error = error
            self._buffer.clear()
            raise

    def encode(self, msg: Mapping[str, Any]) -> bytes:
        """The bytes that carry ``msg`` to the peer in this connection's mode."""
        if self.mode is _TEXT:
            return _json(msg) + b"\n"
        payload: bytes = self._packer.pack(msg)
        return _HEADER.pack(len(payload)) + payload

    def entries(self, items: Mapping[str, Any]) -> bytes:
        """The entries of ``items`` (not empty) for ``join_map``."""
        if self.mode is _TEXT:  # the members of a JSON object, without its braces
            return _json(items)[1:-1]
        packed: bytes = self._packer.pack(items)  # the map, less its header
        return packed[_msgpack_map_header_size(len(items)):]

    def value(self, value: Any) -> bytes:
        """``value`` encoded alone, as it appears inside a message (for ``entry``)."""
        if self.mode is _TEXT:
            return _json(value)
        packed: bytes = self._packer.pack(value)
        return packed

    def entry(self, key: str, value: bytes) -> bytes:
        """One entry for ``join_map`` whose ``value`` is already encoded (``value``,
        ``encode_list``, ``join_map``)."""
        if self.mode is _TEXT:
            return _json(key) + b":" + value
        key_bytes: bytes = self._packer.pack(key)
        return key_bytes + value

    def list_entry(self, key: str, items: list[bytes]) -> bytes:
        """One entry for ``join_map``: ``key`` and the list of ``items``, each one value
        already encoded alone (``value``): what ``entry(key, value(the list))`` gives."""
        if self.mode is _TEXT:
            return _json(key) + b":[" + b",".join(items) + b"]"
        packer = self._packer
        return b"".join([packer.pack(key), packer.pack_array_header(len(items)), *items])

    def join_map(self, count: int, parts: list[bytes]) -> bytes:
        """A map in this connection's mode, unframed, of ``count`` entries given as groups of
        encoded entries (``entries``, ``entry``) that have no key in common: parts encoded
        once serve many messages. ``frame`` makes it a message."""
        if self.mode is _TEXT:
            return b"{" + b",".join([p for p in parts if p]) + b"}"
        header: bytes = self._packer.pack_map_header(count)
        return header + b"".join(parts)

    def template(self, outer: list[bytes], outer_count: int, key: str, inner: list[bytes],
                 inner_count: int, tail: bytes) -> tuple[bytes, bytes]:
        """A message that many recipients get alike but for a few entries of one nested map,
        as the bytes before those entries and after them (``fill`` puts them in): a map of the
        ``outer`` entries (``outer_count`` of them, groups as ``join_map`` takes them) and,
        under ``key``, a map of the ``inner`` entries, the recipient's, and ``tail`` (one
        group); ``inner_count`` counts the recipient's entries too."""
        if self.mode is _TEXT:
            head = self.join_entries([*outer, _json(key) + b":{"])
            inside = self.join_entries(inner)
            return (b"{" + head + inside + (b"," if inside else b""),
                    (b"," + tail if tail else b"") + b"}}\n")
        packer = self._packer
        before = b"".join([packer.pack_map_header(outer_count + 1), *outer, packer.pack(key),
                           packer.pack_map_header(inner_count), *inner])
        return before, tail

    def extend(self, template: tuple[bytes, bytes], outer_count: int,
               entry: bytes) -> tuple[bytes, bytes]:
        """``template`` (of ``outer_count`` outer entries, the nested map's included) with
        ``entry`` (``entry``, ``entries``) one more outer entry, after the nested map: the
        message of one recipient of many that alone gets one more entry, without building
        the rest again."""
        before, after = template
        if self.mode is _TEXT:
            return before, after[:-2] + b"," + entry + b"}\n"
        header = _msgpack_map_header_size(outer_count)
        return self._packer.pack_map_header(outer_count + 1) + before[header:], after + entry

    def fill(self, template: tuple[bytes, bytes], entries: bytes) -> bytes:
        """The frame of a ``template`` with ``entries`` (encoded entries, not empty) in it."""
        before, after = template
        if self.mode is _TEXT:
            return before + entries + after
        return b"".join((_HEADER.pack(len(before) + len(entries) + len(after)), before,
                         entries, after))

    def join_entries(self, parts: list[bytes]) -> bytes:
        """Groups of encoded entries (as ``join_map`` takes them) as one group."""
        if self.mode is _TEXT:
            return b",".join([p for p in parts if p])
        return b"".join(parts)

    def encode_list(self, items: list[Any], cache: ItemCache) -> bytes:
        """The list ``items`` as a value in this connection's mode (for ``entry``): what the
        cache holds of the list encoded before when it is a prefix of ``items``, and each further
        item taken from the cache if it was encoded before."""
        text = self.mode is _TEXT
        done, body = cache._prefix.get(text, ((), b""))
        count = len(done)
        if count and (len(items) < count or not all(map(operator.is_, items, done))):
            count, body = 0, b""
        if len(items) > count:
            known = cache._text if text else cache._binary
            packer = self._packer
            parts = [body] if count else []
            for item in items[count:]:
                hit = known.get(id(item))
                if hit is None or hit[0] is not item:
                    encoded = _json(item) if text else packer.pack(item)
                    hit = known[id(item)] = (item, encoded)
                parts.append(hit[1])
            body = (b"," if text else b"").join(parts)
        cache._prefix[text] = (list(items), body)
        if text:
            return b"[" + body + b"]"
        header: bytes = self._packer.pack_array_header(len(items))
        return header + body

    def frame(self, encoded: bytes) -> bytes:
        """The bytes that carry a map made by ``join_map`` to the peer: what ``encode`` gives
        for the same map."""
        if self.mode is _TEXT:
            return encoded + b"\n"
        return _HEADER.pack(len(encoded)) + encoded
    def encode_spliced(self, msg: Mapping[str, Any], key: str, items: list[bytes]) -> bytes:
        """The bytes of ``msg`` with ``key`` set to the list of ``items``, each one value
        already encoded alone for this connection's mode (``encode_value``): a reply made of
        parts that are each encoded once and sent many times (the lobby's table entries)."""
        if self.mode is _TEXT:
            head = _json(msg)
            tail = _json(key) + b":[" + b",".join(items) + b"]}"
            return head[:-1] + (b"," if msg else b"") + tail + b"\n"
        packer = self._packer
        parts = [packer.pack_map_header(len(msg) + 1)]
        for name, value in msg.items():
            parts += (packer.pack(name), packer.pack(value))
        parts += (packer.pack(key), packer.pack_array_header(len(items)), *items)
        payload = b"".join(parts)
        return _HEADER.pack(len(payload)) + payload

    def _next_frame(self) -> dict[Any, Any] | None:
        if len(self._buffer) < _HEADER.size:
            return None
        (length,) = _HEADER.unpack_from(self._buffer)
        if length > self._max_frame_size:
            raise FrameTooLarge(f"frame of {length} bytes exceeds {self._max_frame_size}")
        end = _HEADER.size + length
        if len(self._buffer) < end:
            return None
        payload = bytes(self._buffer[_HEADER.size : end])
        del self._buffer[:end]
        try:
            decoded = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        except (ValueError, TypeError, msgpack.UnpackException) as error:
            raise MalformedFrame(f"invalid msgpack: {_reason(error)}") from None
        return _as_map(decoded)

    def _next_line(self) -> dict[Any, Any] | None:
        while True:
            newline = self._buffer.find(b"\n")
            if newline < 0:
                if len(self._buffer) > self._max_frame_size:
                    raise FrameTooLarge(f"line exceeds {self._max_frame_size} bytes")
                return None
            if newline > self._max_frame_size:
                raise FrameTooLarge(f"line of {newline} bytes exceeds {self._max_frame_size}")
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            if line.strip().lstrip(_BOM_BYTES):
                break
        try:
            decoded = _read_json(line)
        except (ValueError, RecursionError) as error:
            raise BadLine(f"invalid JSON line: {_reason(error)}") from None
        if not isinstance(decoded, dict):
            raise BadLine(f"line holds a JSON {type(decoded).__name__}, not an object",
                          code=ErrorCode.NOT_A_MAP)
        return decoded


#: A run of digits orjson may read otherwise than the standard library: an integer beyond
#: 64 bits (read as a float), or near it.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _read_json(line: bytes) -> Any:
    """The value of a JSON text line, as the standard library's ``json.loads`` reads it (or
    its error). orjson reads it when it can, in a fifth of the time (a browser seat's every
    request is a line): for every text both accept it gives the same value, but for an
    integer of 19 digits or more (orjson reads one beyond 64 bits as a float), which is left
    to the standard library, as is whatever orjson refuses (a byte order mark, a lone
    surrogate, ``NaN``, a number too large for a float, nesting past orjson's limit), read
    or refused there as before."""
    if not _LONG_DIGITS.search(line):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line.decode("utf-8").lstrip(_BOM))


#: Maps and lists deeper than a decoder reads (msgpack's stack, Python's recursion: about a
#: thousand levels, where the protocol allows eight).
_TOO_DEEP = "maps and lists nested too deeply to read"

#: msgpack's refusals that carry no words of their own (``str`` is empty), in words.
_UNWORDED = ((msgpack.exceptions.FormatError, "a byte that begins no msgpack value"),
             (msgpack.exceptions.StackError, _TOO_DEEP))


def _reason(error: BaseException) -> str:
    """Why a decoder refused the peer's bytes, quoted as JSON quotes (errors never show the
    client Python's spelling): bytes that are not UTF-8 by their value and position, nesting
    too deep by what it is, and words for msgpack's silent refusals (a bare "invalid msgpack: "
    tells a bot author nothing)."""
    if isinstance(error, UnicodeDecodeError):
        return (f"text that is not UTF-8 (byte 0x{error.object[error.start]:02x} at "
                f"position {error.start})")
    if isinstance(error, RecursionError):  # json's words name Python's recursion
        return _TOO_DEEP
    for kind, words in _UNWORDED:
        if isinstance(error, kind) and not str(error):
            return words
    return str(error).replace("'", '"')


def encode_value(value: Any, mode: Mode) -> bytes:
    """``value`` encoded alone as it appears inside a message of ``mode`` (for
    ``Codec.encode_spliced``)."""
    if mode is _TEXT:
        return _json(value)
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def _as_map(decoded: object) -> dict[Any, Any]:
    if not isinstance(decoded, dict):
        raise MalformedFrame(
            f"payload is {type(decoded).__name__}, not a map", code=ErrorCode.NOT_A_MAP
        )
    return decoded
