"""The ``state`` messages of one change of a table, one per recipient, made from shared parts.

A change goes to three seats and any spectators. Their messages differ only in the seat's own
entries (``seat``, ``hand``, its ``legal`` moves when it is to act, and while a secret meld is on
the table its ``melds``, ``history`` and ``event``), so the rest is built once per change and
encoded once per codec mode; what stays the same from one change to the next (the seats, the
hand's options, each step of the history, a seat's cards, the moves it may be offered) is
encoded once per hand. A frame is then mostly encoded parts put end to end
(``Codec.join_map``). Decoded, each frame is the message ``Audience.state_message`` builds whole
for the same recipient (tests check every frame of whole matches against it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from tongits.engine import Hand, Move
from tongits.engine.view import ViewParts, view_parts
from tongits.engine.wire import StepMap
from tongits.protocol import Codec, ItemCache, Mode
from tongits.protocol.maps import SeatMap, StateHead

#: Who sees a history: a seat, the spectators (None), or everyone alike.
_ALL = "all"


#: Bound on the moves whose encodings ``MoveEncodings`` keeps (cleared when reached).
_MOVES_MAX = 50_000


class MoveEncodings:
    """Each move offered, encoded alone once per codec mode, for every table: the engine's
    legal moves are shared objects (the same draw, discard of a card or lay-off, state after
    state and table after table), so the ``legal`` entry of a state is put together from the
    encodings of its moves, looked up by their ids in C (``map``), not encoded again. A list
    of discards and melds is new at nearly every card drawn; encoded whole (its maps made,
    then packed) it cost a paced action more than any other part of its frames. The moves
    are held while their encodings are kept, so that no other object takes their ids."""

    __slots__ = ("_encoded", "_held")

    def __init__(self) -> None:
        #: per mode: each move's encoding by the move's id
        self._encoded: dict[Mode | None, dict[int, bytes]] = {}
        self._held: dict[int, Move] = {}

    def legal_entry(self, codec: Codec, hand: Hand) -> bytes:
        """The ``legal`` entry of the seat to act in ``hand`` (b"" when it has no move)."""
        moves = hand.legal()
        if not moves:
            return b""
        known = self._encoded.get(codec.mode)
        if known is None:
            known = self._encoded[codec.mode] = {}
        encoded = list(map(known.get, map(id, moves)))
        if None in encoded:
            if len(self._held) >= _MOVES_MAX:
                self._held.clear()
                self._encoded = {codec.mode: known}
                known.clear()
                encoded = [None] * len(moves)
            for i, move in enumerate(moves):
                if encoded[i] is None:
                    encoded[i] = known[id(move)] = codec.value(move.to_dict())
                    self._held[id(move)] = move
        return codec.list_entry("legal", encoded)  # type: ignore[arg-type]


#: The moves' encodings every table's states share.
MOVE_ENCODINGS = MoveEncodings()


class HandCache:
    """What the states of one hand encode once, per codec mode: the history as each seat sees
    it (an ``ItemCache`` each: every seat alike, or each seat and the spectators apart while a
    secret meld is on the table), the steps played for a timed-out seat as they are shown,
    marked ``timeout`` (one copy per step, so that the caches know them from one state to the
    next), and values that stay the same over many states (the seats, the hand's fixed view
    entries, each recipient's own view entries) until they are other objects."""

    __slots__ = ("_items", "_marked", "_kept", "_own")

    def __init__(self) -> None:
        self._items: dict[int | str | None, ItemCache] = {}
        self._marked: dict[int, tuple[StepMap, StepMap]] = {}
        self._kept: dict[tuple[Mode | None, str], tuple[Any, bytes]] = {}
        #: per mode and recipient: the steps the seat had played and its melds (while a secret
        #: meld is out) when its own entries were encoded, and those entries
        self._own: dict[tuple[Mode | None, int | None], tuple[int, Any, bytes]] = {}

    def items(self, list_of: int | str | None) -> ItemCache:
        """The cache of one kind of list: a history as a seat (or None: the spectators, or
        ``_ALL``) sees it."""
        cache = self._items.get(list_of)
        if cache is None:
            cache = self._items[list_of] = ItemCache()
        return cache

    def told(self, history: list[StepMap], marked: list[int]) -> list[StepMap]:
        """``history`` as the table tells it: the steps in ``marked`` (played for a seat whose
        turn timed out) carry ``timeout``."""
        if not marked:
            return history
        told = list(history)
        for step in marked:
            item = told[step]
            copy = self._marked.get(id(item))
            if copy is None or copy[0] is not item:
                copy = self._marked[id(item)] = (item, {**item, "timeout": True})
            told[step] = copy[1]
        return told

    def own_entries(self, codec: Codec, seat: int | None, parts: ViewParts) -> bytes:
        """``codec.entries(parts.own(seat))``, made again only when the seat has played a step
        since (only its own steps change its cards) or, while a secret meld is out, its melds
        are another list than last time (made once per state)."""
        key = (codec.mode, seat)
        acted = 0 if seat is None else parts.acted[seat]
        melds = None if parts.history is not None else parts.own_melds(seat)
        known = self._own.get(key)
        if known is None or known[0] != acted or known[1] is not melds:
            known = self._own[key] = (acted, melds, codec.entries(parts.own(seat)))
        return known[2]

    def entries(self, codec: Codec, name: str, items: Mapping[str, Any], value: Any) -> bytes:
        """``codec.entries(items)``, kept under ``name`` and made again only when ``value``
        (the object ``items`` holds, which never changes) is another object than last time."""
        key = (codec.mode, name)
        known = self._kept.get(key)
        if known is None or known[0] is not value:
            known = self._kept[key] = (value, codec.entries(items))
        return known[1]


class _Encoded(NamedTuple):
    """One change's parts that every recipient shares, in one codec mode."""

    head: bytes  # the message's entries but the view, ``event`` (per seat) and ``legal``
    heads: int  # how many
    view: list[bytes]  # the view's entries but the recipient's own and ``history``
    views: int  # how many in all, the recipient's own and ``history`` too
    #: the ``history`` entry and the frame, but the recipient's own view entries
    #: (``Codec.fill``), of recipients offered no moves; None while each seat has its own
    history: bytes | None
    common: tuple[bytes, bytes] | None


class StateFrames:
    """The ``state`` frames of one change of ``hand``: ``frame(codec, seat)`` for each
    recipient, while the hand is in that state.

    ``head`` holds the message's entries but the view, ``event`` and ``legal``; ``index`` is
    the step that caused the change (None: a deal), ``timeout`` whether the server played it
    for a seat whose turn timed out; ``to_offer`` the seat offered its legal moves (None: no
    seat); ``marked`` the steps of the hand played for timed-out seats."""

    __slots__ = ("hand", "parts", "head", "index", "timeout", "_to_offer", "_marked", "_cache",
                 "_common", "_encoded")

    def __init__(self, hand: Hand, head: StateHead, index: int | None,
                 timeout: bool, to_offer: int | None, marked: list[int],
                 cache: HandCache) -> None:
        self.hand = hand
        parts = self.parts = view_parts(hand)
        self.head = head
        self.index: int | None = index
        self.timeout: bool = timeout
        self._to_offer, self._marked, self._cache = to_offer, marked, cache
        common = parts.history
        #: the history every recipient sees alike, as told (None: each seat its own)
        self._common = None if common is None else cache.told(common, marked)
        self._encoded: dict[Mode | None, _Encoded] = {}

    @property
    def seats(self) -> list[SeatMap]:
        return self.head["seats"]

    def _event(self, history: list[StepMap]) -> StepMap:
        assert self.index is not None
        event = history[self.index]
        return {**event, "timeout": True} if self.timeout else event

    def _encode(self, codec: Codec) -> _Encoded:
        """The parts every recipient shares, in ``codec``'s mode."""
        cache, parts = self._cache, self.parts
        head = dict(self.head)
        seats = head.pop("seats")
        if self._common is not None and self.index is not None:
            head["event"] = self._event(self._common)
        head_entries = codec.join_entries([
            codec.entries(head), cache.entries(codec, "seats", {"seats": seats}, seats)])
        heads = len(head) + 1
        view = [cache.entries(codec, "fixed", parts.fixed, parts.fixed),
                codec.entries(parts.base)]
        views = len(parts.fixed) + len(parts.base) + parts.own_count + 1
        if parts.melds is not None:
            view.append(cache.entries(codec, "melds", {"melds": parts.melds}, parts.melds))
            views += 1
        history = common = None
        if self._common is not None:
            history = codec.entry("history", codec.encode_list(self._common,
                                                               cache.items(_ALL)))
            common = codec.template([head_entries], heads, "view", view, views, history)
        encoded = self._encoded[codec.mode] = _Encoded(head_entries, heads, view, views,
                                                       history, common)
        return encoded

    def frame(self, codec: Codec, seat: int | None) -> bytes:
        """The ``state`` frame for ``seat`` (None: a spectator) in ``codec``'s mode."""
        parts, cache = self.parts, self._cache
        encoded = self._encoded.get(codec.mode) or self._encode(codec)
        template = encoded.common
        offered = seat is not None and seat == self._to_offer
        if template is None:  # a secret meld on the table: each seat's own history, event
            outer = [encoded.head]
            count = encoded.heads
            seen = parts.history_of(seat)
            if self.index is not None:
                outer.append(codec.entries({"event": self._event(seen)}))
                count += 1
            history = codec.entry("history", codec.encode_list(
                cache.told(seen, self._marked), cache.items(seat)))
            legal = MOVE_ENCODINGS.legal_entry(codec, self.hand) if offered else b""
            if legal:
                outer.append(legal)
                count += 1
            template = codec.template(outer, count, "view", encoded.view, encoded.views,
                                      history)
        elif offered:
            legal = MOVE_ENCODINGS.legal_entry(codec, self.hand)
            if legal:
                template = codec.extend(template, encoded.heads + 1, legal)
        return codec.fill(template, cache.own_entries(codec, seat, parts))
