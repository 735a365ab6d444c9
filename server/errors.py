"""The one place where exceptions become ``error`` frames.

A ``ProtocolError`` keeps its code; the engine's ``IllegalMove``/``InvalidMove`` codes pass
through unchanged (numbered by ``protocol.error_number``); bad table options become
``bad_options``. Anything else is our fault: it is logged with its traceback and the peer gets
``internal_error`` with no detail.
"""

from __future__ import annotations

import logging
from typing import Any

from tongits.engine import IllegalMove, InvalidMove, RecordError
from tongits.protocol import ErrorCode, ProtocolError, error_message, is_request_id
from tongits.protocol.maps import ErrorMap

log = logging.getLogger("tongits.server")

#: Errors after which the server closes the connection.
FATAL = frozenset(
    {
        ErrorCode.FRAME_TOO_LARGE,
        ErrorCode.MALFORMED_FRAME,
        ErrorCode.NOT_A_MAP,
        ErrorCode.VERSION_UNSUPPORTED,
        ErrorCode.RATE_LIMITED,
        ErrorCode.TOO_MANY_CONNECTIONS,
        ErrorCode.HANDSHAKE_TIMEOUT,
        ErrorCode.IDLE_TIMEOUT,
        ErrorCode.FRAME_TIMEOUT,
        ErrorCode.SLOW_READER,
        ErrorCode.REPLACED,
        ErrorCode.SHUTTING_DOWN,
        ErrorCode.TLS_REQUIRED,
        ErrorCode.BAD_PASSWORD,
        ErrorCode.REMOVED_BY_HOST,
        ErrorCode.CLOSED_BY_HOST,
    }
)


def is_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` refuses a request (the peer's fault: it changed nothing and is answered
    with its own code) rather than being a failure of ours."""
    if isinstance(exc, RecordError):
        return exc.code == "bad_options"
    return isinstance(exc, ProtocolError | IllegalMove | InvalidMove)


def error_frame(exc: BaseException, ref: int | str | None = None) -> ErrorMap:
    """The ``error`` frame for ``exc`` answering the request ``ref``."""
    if isinstance(exc, ProtocolError):
        return error_message(exc.code, exc.message, exc.ref if exc.ref is not None else ref)
    if isinstance(exc, IllegalMove | InvalidMove):
        return error_message(exc.code, exc.message, ref)
    if isinstance(exc, RecordError) and exc.code == "bad_options":
        return error_message(ErrorCode.BAD_OPTIONS, exc.message, ref)
    log.error("internal error answering request %r", ref, exc_info=exc)
    return error_message(ErrorCode.INTERNAL_ERROR, "internal server error", ref)


def request_ref(raw: Any) -> int | str | None:
    """The ``id`` of a raw request map, if it is one a reply may echo."""
    if isinstance(raw, dict):
        ref = raw.get("id")
        if is_request_id(ref):
            return ref
    return None
