"""The bounds every value a client sends must keep, checked once at the edge (``parse_client``).

A request that decodes is still not trusted: JSON can spell a lone surrogate (``"\\ud800"``),
which no encoder can send back; JSON and msgpack carry integers far beyond what the other
encoding (or a JavaScript client) can hold; and both nest without end. Whatever the server
echoes or stores came through here, so what it sends can always be encoded. The numbers are
documented in docs/PROTOCOL.md ("Limits"); a request outside them is refused with
``bad_field`` and the connection stays open.
"""

from __future__ import annotations

import math
from itertools import repeat
from typing import Any, TypeGuard

from .errors import ErrorCode, ProtocolError

#: The largest integer anywhere in a request, in absolute value: the largest that JSON readers
#: (JavaScript numbers) and msgpack both hold exactly.
MAX_INT = 2**53 - 1
#: The deepest nesting of maps and lists; the request's own map is level 1.
MAX_DEPTH = 8
#: The most entries in any one map or list.
MAX_ITEMS = 64
#: The longest string anywhere in a request, in characters (names and chat have smaller limits
#: of their own, set by the server).
MAX_STRING = 1024
#: The longest string request ``id``.
MAX_ID = 64


def is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text UTF-8 can carry (no lone surrogates)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_request_id(value: object) -> TypeGuard[int | str]:
    """Whether ``value`` may be a request ``id`` (and so be echoed in the reply): an integer
    within ``MAX_INT`` or a text of at most ``MAX_ID`` characters."""
    if type(value) is int:
        return -MAX_INT <= value <= MAX_INT
    return type(value) is str and len(value) <= MAX_ID and is_text(value)


def check_request(raw: dict[Any, Any]) -> None:
    """Raise ``ProtocolError(bad_field)`` unless every value in ``raw`` keeps the limits:
    maps, lists, strings, finite numbers, booleans and null, nothing else (a map key is one of
    the scalars: a key that is no field name is ignored like any unknown field), and an ``id``
    that its reply may echo (``is_request_id``)."""
    problem = _problem(raw, 1)
    ref = raw.get("id")
    if problem is None and ref is not None and not is_request_id(ref):
        problem = (f"id must be an integer within ±{MAX_INT} or a string of at most "
                   f"{MAX_ID} characters")
    if problem is not None:
        raise ProtocolError(ErrorCode.BAD_FIELD, problem,
                            ref if is_request_id(ref) else None)


def _problem(value: Any, depth: int) -> str | None:
    """What is wrong with ``value`` at nesting level ``depth``, or None."""
    kind = type(value)
    if kind is str:
        if len(value) > MAX_STRING:
            return f"a string is longer than {MAX_STRING} characters"
        return None if is_text(value) else "a string is not valid Unicode (lone surrogate)"
    if kind is int:
        return None if -MAX_INT <= value <= MAX_INT else f"an integer is beyond ±{MAX_INT}"
    if kind is float:
        return None if math.isfinite(value) else "a number is not finite"
    if value is None or kind is bool:
        return None
    if kind is dict or kind is list:
        return _container_problem(value, depth)
    return f"a value of type {kind.__name__} is not allowed"


def _container_problem(value: dict[Any, Any] | list[Any], depth: int) -> str | None:
    """``_problem`` of a map or a list: its depth, its size, then every key and item."""
    if depth > MAX_DEPTH:
        return f"maps and lists nest deeper than {MAX_DEPTH} levels"
    if len(value) > MAX_ITEMS:
        return f"a map or list has more than {MAX_ITEMS} entries"
    # A list's items are checked as a map's values, each under the key "" (which passes).
    pairs = value.items() if isinstance(value, dict) else zip(repeat(""), value)
    # ASCII strings within MAX_STRING and integers within MAX_INT (nearly every key and value
    # of a request) pass here without a call; anything else is for ``_problem``, which says
    # what is wrong.
    for key, item in pairs:
        if not (type(key) is str and len(key) <= MAX_STRING and key.isascii()):
            problem = _problem(key, MAX_DEPTH + 1)
            if problem is not None:
                return problem
        kind = type(item)
        if ((kind is str and len(item) <= MAX_STRING and item.isascii())
                or (kind is int and -MAX_INT <= item <= MAX_INT)):
            continue
        problem = _problem(item, depth + 1)
        if problem is not None:
            return problem
    return None
