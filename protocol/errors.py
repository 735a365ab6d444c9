"""Error codes sent on the wire and the exceptions that carry them.

Every error frame names a stable snake_case ``code`` and its ``number``; numbers fall in ranges
so a peer that does not know a code can still tell whose fault it was:

* 1xxx framing and protocol: the peer sent something unreadable or out of order;
* 2xxx session and lobby: the request was well formed but cannot be honoured;
* 3xxx game: the engine refused a move. The engine's codes (``tongits.engine.RuleCode``, a
  closed set) pass through unchanged, each with its own number here;
* 5xxx server: our fault, or the server is going away. Details are logged, never sent.
"""

from __future__ import annotations

from enum import StrEnum, unique

from .maps import ErrorMap


@unique
class ErrorCode(StrEnum):
    """A wire error code: the member is its string code, with ``number`` and ``meaning``."""

    number: int
    meaning: str

    def __new__(cls, code: str, number: int, meaning: str) -> ErrorCode:
        member = str.__new__(cls, code)
        member._value_ = code
        member.number = number
        member.meaning = meaning
        return member

    FRAME_TOO_LARGE = "frame_too_large", 1001, "A frame or line is longer than the maximum size."
    MALFORMED_FRAME = "malformed_frame", 1002, "A frame is not valid msgpack, JSON or UTF-8."
    NOT_A_MAP = "not_a_map", 1003, "A frame holds something other than a map/object."
    UNKNOWN_TYPE = "unknown_type", 1004, "The message `type` is unknown in this direction."
    BAD_FIELD = "bad_field", 1005, "A field is missing or has the wrong type."
    HELLO_REQUIRED = "hello_required", 1006, "The first message must be `hello`."
    VERSION_UNSUPPORTED = "version_unsupported", 1007, "The server does not speak this version."
    RATE_LIMITED = "rate_limited", 1008, "Too many messages in too short a time."
    TOO_MANY_CONNECTIONS = "too_many_connections", 1009, "The server or address is at its limit."
    HANDSHAKE_TIMEOUT = "handshake_timeout", 1010, "No `hello` arrived in time."
    IDLE_TIMEOUT = "idle_timeout", 1011, "The connection was silent for too long."
    SLOW_READER = "slow_reader", 1012, "The peer read its messages too slowly to keep up."
    FRAME_TIMEOUT = "frame_timeout", 1013, "A frame or line was begun and not finished in time."
    TLS_REQUIRED = "tls_required", 1020, "The server accepts TLS connections only (tls://)."

    BAD_TOKEN = "bad_token", 2001, "The session token is unknown or expired."
    REPLACED = "replaced", 2002, "A new connection resumed this session with the same token."
    NO_SUCH_TABLE = "no_such_table", 2003, "No table has this id."
    TABLE_FULL = "table_full", 2004, "Every seat at the table is taken."
    SEAT_TAKEN = "seat_taken", 2005, "The requested seat is taken."
    BAD_JOIN_CODE = "bad_join_code", 2006, "The private table's join code is wrong or missing."
    NOT_SEATED = "not_seated", 2007, "The request needs a seat at a table."
    ALREADY_SEATED = "already_seated", 2008, "The connection already sits or watches a table."
    TABLE_STARTED = "table_started", 2009, "The table's match has already started."
    TOO_MANY_TABLES = "too_many_tables", 2010, ("The server or player has too many open tables, "
                                                "or the player made tables too fast.")
    BAD_OPTIONS = "bad_options", 2011, "The table options, timer or bot count are not valid."
    NOT_TABLE_OWNER = "not_table_owner", 2012, "Only the table's owner may do this."
    CHAT_TOO_LONG = "chat_too_long", 2013, "The chat text is too long."
    BAD_NAME = "bad_name", 2014, "The player or table name is empty, too long or not allowed."
    NOT_READY = "not_ready", 2015, "Not now: the match or hand has not begun, or is not over."
    CHAT_TOO_FAST = "chat_too_fast", 2016, "Too many chat lines from one address at the table."
    BAD_PASSWORD = "bad_password", 2020, "The server password is wrong or missing."
    REMOVED_BY_HOST = "removed_by_host", 2021, "The server's host removed this player."
    CLOSED_BY_HOST = "closed_by_host", 2022, "The server's host closed this table."
    NAME_TAKEN = "name_taken", 2030, ("A ladder account, or a player at the table joined, "
                                      "already has this name.")
    BAD_ACCOUNT = "bad_account", 2031, "The ladder account key is unknown."
    NEEDS_ACCOUNT = "needs_account", 2032, "The request needs a ladder account (hello.account)."
    TOO_MANY_ACCOUNTS = "too_many_accounts", 2033, "The address or server has made its accounts."

    ILLEGAL_MOVE = "illegal_move", 3000, "The move is not legal now (generic game error)."
    NOT_YOUR_TURN = "not_your_turn", 3001, "Another seat is to act."
    CARD_NOT_IN_HAND = "card_not_in_hand", 3002, "A named card is not in the player's hand."
    NOT_A_MELD = "not_a_meld", 3003, "The cards do not form a meld."
    PICK_NEEDS_MELD = "pick_needs_meld", 3004, "Picking the discard requires melding it at once."
    CALL_BLOCKED = "call_blocked", 3005, "The player may not call a draw now."
    MUST_ACQUIRE = "must_acquire", 3006, "The player must draw or pick before anything else."
    MUST_DISCARD = "must_discard", 3007, "The player must discard to end the turn."
    NO_SUCH_MELD = "no_such_meld", 3008, "No meld on the table has this index."
    CANNOT_SAPAW = "cannot_sapaw", 3009, "The card does not extend that meld."
    HAND_OVER = "hand_over", 3010, "The hand has ended; no more moves."
    BAD_MOVE = "bad_move", 3011, "The move is malformed: unknown action or missing field."
    BAD_CARD = "bad_card", 3012, "A card is not in the notation of RULES.md."
    MUST_ANSWER = "must_answer", 3013, "A call is pending: challenge or fold."
    NO_CALL = "no_call", 3014, "There is no call to challenge or fold."
    DEALER_FIRST_TURN = "dealer_first_turn", 3015, "Not on the dealer's first turn."
    CALL_AT_START = "call_at_start", 3016, "A call is only allowed at the start of a turn."
    ALREADY_ACQUIRED = "already_acquired", 3017, "Already drew or picked this turn."
    NOT_OPENED = "not_opened", 3018, "Calling needs a meld of one's own on the table."
    EMPTY_DISCARD = "empty_discard", 3019, "The discard pile is empty."
    MUST_KEEP_CARD = "must_keep_card", 3020, "The last card must leave the hand by a discard."
    SAPAWABLE_DISCARD = "sapawable_discard", 3021, "That card could be laid off; discard another."
    NOT_FOUR_OF_A_KIND = "not_four_of_a_kind", 3022, "A secret meld is four cards of one rank."
    MALFORMED_MOVE = "malformed_move", 3023, "The move has fields its action does not take."
    DUPLICATE_CARD = "duplicate_card", 3024, "A card is named twice in one move."

    INTERNAL_ERROR = "internal_error", 5000, "The server failed; the incident is logged."
    SHUTTING_DOWN = "shutting_down", 5001, "The server is shutting down."
    TABLE_FAILED = "table_failed", 5002, "The table failed and is closed; the incident is logged."


_NUMBERS = {member.value: member.number for member in ErrorCode}


def error_number(code: str) -> int:
    """The number of ``code``; a code not in the table is a game code passed through: 3000."""
    return _NUMBERS.get(code, ErrorCode.ILLEGAL_MOVE.number)


class ProtocolError(Exception):
    """A request the server refuses; becomes one ``error`` frame via ``error_message``.

    ``ref`` is the ``id`` of the request at fault when it is known.
    """

    def __init__(self, code: str, message: str, ref: int | str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = str(code)
        self.message = message
        self.ref = ref

    @property
    def number(self) -> int:
        return error_number(self.code)


class FramingError(ProtocolError):
    """The byte stream cannot be split into messages; the connection must be closed."""


class FrameTooLarge(FramingError):
    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.FRAME_TOO_LARGE, message)


class BadLine(ProtocolError):
    """A text-mode line that is not one JSON object (code ``malformed_frame`` or
    ``not_a_map``). Unlike a ``FramingError`` it spoils only its line: the connection stays."""

    def __init__(self, message: str, code: ErrorCode = ErrorCode.MALFORMED_FRAME) -> None:
        super().__init__(code, message)


class MalformedFrame(FramingError):
    """A frame's payload cannot be decoded (code ``malformed_frame``) or is no map
    (code ``not_a_map``)."""

    def __init__(self, message: str, code: ErrorCode = ErrorCode.MALFORMED_FRAME) -> None:
        super().__init__(code, message)


def error_message(code: str, message: str, ref: int | str | None = None) -> ErrorMap:
    """The ``error`` frame for ``code``; ``ref`` (the failed request's ``id``) is omitted when
    None, like every absent optional field."""
    frame: ErrorMap = {
        "type": "error",
        "code": str(code),
        "number": error_number(code),
        "message": message,
    }
    if ref is not None:
        frame["ref"] = ref
    return frame
