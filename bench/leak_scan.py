"""Scan every frame every connection receives for something it may not know yet.

Written from docs/PROTOCOL.md and RULES.md alone, as a stranger auditing the server would: it
imports nothing of tongits. It starts a ``tongits-server`` (a child process on loopback, its
files under ``--dir``), then plays matches on several tables at once over raw connections, the
three encodings in turn (binary msgpack, JSON lines, the page's WebSocket at ``/ws``): at each
table three players at random legal moves and two spectators (one from the start, one who comes
and goes), plus a lobby reader and ladder accounts queued against the server's anchors.

On the way through it makes every kind of moment happen: calls and their answers, secret melds
(random table options, ``pick_to_sapaw`` among them), turns that time out (a player that lets
its timer run), seats dropped and resumed by token (after a short absence and after the stand-in
bot took over), seats taken back from a private table's invite code under the same name (the
old token must then be refused), chat, probes (a discard of a card another seat holds must be
refused in the same words as one of a card nobody holds), ``sync`` (a catching-up state), hand
ends, match ends.

What a frame may hold is judged from the hand's own record, which ``hand_result`` gives once
the hand is over: replaying its deck and actions says where every card was after each action,
so a frame received when ``k`` actions had been played (the ``history`` of the last ``state``
the connection had) may hold no card then in another seat's hand, in the stock, or in another
seat's secret meld (for a spectator: in any hand or secret meld). Once the hand is over
everything is revealed (RULES.md §11). Besides the cards, every frame is checked for:

* another connection's seat token or ladder key, anywhere in it, and a join code in the lobby;
* a spectator's view with a hand or a count;
* before the hand is over: a ``result`` or ``revealed`` in the view, another seat's secret
  meld with cards, a ``draw`` that names its card, another seat's ``secret`` with cards;
* a ``seed`` anywhere.

    python bench/leak_scan.py --hands 3000

It prints a line per hundred hands, then one JSON object: the hands and frames scanned, the
moments seen, every leak (none is the expected figure) and every other surprise. The frames of
the hands still being played when the scan stops have no record to be judged by: they are
counted (``frames_of_hands_without_a_record``), not checked.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Request, TextMessage

Frame = dict[str, Any]

CARD = re.compile(r"^[A2-9TJQK][cdhs]$")
#: A card named inside a longer string (an error message, a name): two characters standing
#: alone, or the lenient spellings RULES.md §1 allows.
CARD_IN_TEXT = re.compile(r"(?<![\w-])(?:10|[A2-9TJQK])[cdhs♣♦♥♠](?![\w-])")
#: A word that may be a seat token, a ladder key or a join code, inside any string.
WORD = re.compile(r"[A-Za-z0-9_-]{6,}")
SPECTATOR = 3


# -- connections ---------------------------------------------------------------------------


class Link:
    """One connection in one of the three encodings: ``send`` a message map, ``receive`` the
    next one (None once the connection is closed), ``buffered``: another whole message is
    already read and waiting (so the one just received is not the newest)."""

    kind = ""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.ready: list[Frame] = []
        self.closed = False

    async def send(self, message: Frame) -> None:
        try:
            await self.stream.send_all(self.encode(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.closed = True

    def encode(self, message: Frame) -> bytes:
        raise NotImplementedError

    def decode(self) -> None:
        """Move every whole message of ``buffer`` to ``ready``."""
        raise NotImplementedError

    def buffered(self) -> bool:
        self.decode()
        return bool(self.ready)

    async def receive(self) -> Frame | None:
        while True:
            self.decode()
            if self.ready:
                return self.ready.pop(0)
            if self.closed:
                return None
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self.closed = True
                self.decode()
                return self.ready.pop(0) if self.ready else None
            self.buffer += data

    async def close(self) -> None:
        self.closed = True
        await self.stream.aclose()


class BinaryLink(Link):
    kind = "binary"

    def encode(self, message: Frame) -> bytes:
        payload: bytes = msgpack.packb(message, use_bin_type=True)
        return len(payload).to_bytes(4, "big") + payload

    def decode(self) -> None:
        while len(self.buffer) >= 4:
            size = int.from_bytes(self.buffer[:4], "big")
            if len(self.buffer) < 4 + size:
                return
            self.ready.append(msgpack.unpackb(self.buffer[4:4 + size], raw=False))
            self.buffer = self.buffer[4 + size:]


class TextLink(Link):
    kind = "text"

    def encode(self, message: Frame) -> bytes:
        return json.dumps(message).encode() + b"\n"

    def decode(self) -> None:
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.strip():
                self.ready.append(json.loads(line))


class WebSocketLink(Link):
    kind = "websocket"

    def __init__(self, stream: trio.SocketStream) -> None:
        super().__init__(stream)
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.text = ""

    async def upgrade(self, port: int) -> None:
        await self.stream.send_all(self.ws.send(Request(host=f"127.0.0.1:{port}", target="/ws")))
        while True:
            data = await self.stream.receive_some(65536)
            if not data:
                raise ConnectionError("closed before the upgrade")
            self.ws.receive_data(data)
            for event in self.ws.events():
                if isinstance(event, AcceptConnection):
                    return
                raise ConnectionError(f"upgrade refused: {event}")

    def encode(self, message: Frame) -> bytes:
        return self.ws.send(TextMessage(json.dumps(message)))

    def decode(self) -> None:
        if self.buffer:
            self.ws.receive_data(self.buffer)
            self.buffer = b""
        for event in self.ws.events():
            if isinstance(event, TextMessage):
                self.text += event.data
                if event.message_finished:
                    self.ready.append(json.loads(self.text))
                    self.text = ""
            elif isinstance(event, CloseConnection):
                self.closed = True


async def open_link(port: int, kind: str) -> Link:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    if kind == "binary":
        return BinaryLink(stream)
    if kind == "text":
        return TextLink(stream)
    link = WebSocketLink(stream)
    await link.upgrade(port)
    return link


# -- where the cards were --------------------------------------------------------------------


@dataclass
class Table:
    """Where the cards of one hand are, action after action (no rule is checked)."""

    hands: list[set[str]]
    stock: list[str]
    secrets: list[set[str]] = field(default_factory=lambda: [set(), set(), set()])

    def play(self, action: Frame) -> None:
        seat, name = action["seat"], action["action"]
        cards = set(action.get("cards") or [])
        if "card" in action:
            cards.add(action["card"])
        if name == "draw":
            self.hands[seat].add(self.stock.pop(0))
        if name == "secret":
            self.secrets[seat] |= cards
        self.hands[seat] -= cards

    def hidden(self) -> list[frozenset[str]]:
        """What each viewer (seats 0-2, then a spectator) may not know now."""
        out = []
        for viewer in range(4):
            unseen = set(self.stock)
            for seat in range(3):
                if seat != viewer:
                    unseen |= self.hands[seat] | self.secrets[seat]
            out.append(frozenset(unseen))
        return out


def hidden_sets(record: Frame) -> list[list[frozenset[str]]]:
    """For each number of recorded actions played (0 to all), the cards each viewer (seats 0-2,
    then a spectator) may not know then: the other seats' hands, the stock, the other seats'
    secret melds. Replays the record's deck and actions."""
    deck: list[str] = list(record["deck"])
    dealer: int = record["dealer"]
    hands: list[set[str]] = [set(), set(), set()]
    for i in range(37):
        hands[(dealer + i) % 3].add(deck[i])
    table = Table(hands, deck[37:])
    sets = [table.hidden()]
    for action in record["actions"]:
        table.play(action)
        sets.append(table.hidden())
    return sets


def strings(value: Any) -> Iterator[str]:
    """Every string in a message: its values and its keys."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def cards_in(frame: Frame) -> set[str]:
    found = set()
    for text in strings(frame):
        if CARD.match(text):
            found.add(text)
        elif len(text) > 2:
            for hit in CARD_IN_TEXT.findall(text):
                rank, suit = hit[:-1], hit[-1]
                rank = "T" if rank == "10" else rank
                suit = {"♣": "c", "♦": "d", "♥": "h", "♠": "s"}.get(suit, suit)
                found.add(rank + suit)
    return found


def has_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(has_key(item, key) for item in value.values())
    if isinstance(value, list):
        return any(has_key(item, key) for item in value)
    return False


# -- the scan --------------------------------------------------------------------------------


@dataclass
class Seen:
    """One frame as a connection received it: where its hand stood then."""

    player: str
    viewer: int
    actions: int
    frame: Frame
    allowed: frozenset[str] = frozenset()


@dataclass
class Scan:
    """Every frame goes through ``receive``; the card check waits for the hand's record."""

    leaks: list[str] = field(default_factory=list)
    surprises: list[str] = field(default_factory=list)
    moments: Counter[str] = field(default_factory=Counter)
    frames: Counter[str] = field(default_factory=Counter)
    secrets: dict[str, str] = field(default_factory=dict)
    codes: set[str] = field(default_factory=set)
    pending: dict[tuple[str, int], list[Seen]] = field(default_factory=dict)
    records: dict[tuple[str, int], list[list[frozenset[str]]]] = field(default_factory=dict)
    checked_cards: int = 0

    def leak(self, text: str) -> None:
        if len(self.leaks) < 200:
            self.leaks.append(text)
        self.moments["leaks"] += 1

    def surprise(self, text: str) -> None:
        if len(self.surprises) < 200:
            self.surprises.append(text)
        self.moments["surprises"] += 1

    def secret(self, value: str, owner: str) -> None:
        self.secrets[value] = owner

    def receive(self, player: Player, frame: Frame) -> None:
        self.frames[player.link_kind] += 1
        kind = frame.get("type")
        self.moments[f"frame {kind}"] += 1
        where = f"{player.name} ({player.link_kind}) got {kind}"
        self.words(player, frame, where)
        if kind == "error" and frame.get("number", 0) >= 5000:
            self.surprise(f"{where}: a server failure: {frame}")
        if has_key(frame, "seed"):
            self.leak(f"{where}: a seed: {_short(frame)}")
        if kind == "state":
            self.state(player, frame, where)
        if kind == "hand_result" and player.table is not None:
            record = frame.get("record")
            if record is None:
                self.surprise(f"{where}: no record in hand_result")
            else:
                self.settle(player.table, player.hand, record)
            player.over = True
            return
        if player.table is None or player.over or player.hand == 0:
            return
        entry = Seen(player.name, player.viewer, player.actions, frame, player.allowance)
        key = (player.table, player.hand)
        if key in self.records:
            self.check(key, entry)
        else:
            self.pending.setdefault(key, []).append(entry)

    def words(self, player: Player, frame: Frame, where: str) -> None:
        """Another's token or key anywhere; a join code in the lobby."""
        for text in strings(frame):
            for word in WORD.findall(text):
                owner = self.secrets.get(word)
                if owner is not None and owner != player.name:
                    self.leak(f"{where}: the secret of {owner} ({word[:4]}…): {_short(frame)}")
                if frame["type"] == "tables" and word in self.codes:
                    self.leak(f"{where}: a join code in the lobby: {_short(frame)}")

    def state(self, player: Player, frame: Frame, where: str) -> None:
        view = frame["view"]
        player.hand = frame.get("hand", player.hand)
        player.actions = sum(1 for step in view["history"] if not step.get("auto"))
        player.over = view["phase"] == "over"
        if frame.get("missed") is not None:
            self.moments["resume state with missed"] += 1
        if player.viewer == SPECTATOR and (view["hand"] or view.get("count") is not None):
            self.leak(f"{where}: a spectator's view with a hand: {_short(view)}")
        if player.over:
            return
        if "result" in view or "revealed" in view:
            self.leak(f"{where}: the result before the hand is over: {_short(view)}")
        for meld in view["melds"]:
            if meld["secret"] and meld["owner"] != player.viewer and meld.get("cards"):
                self.leak(f"{where}: another seat's secret meld shown: {meld}")
        for step in view["history"]:
            if step["action"] == "draw" and ("card" in step or "cards" in step) \
                    and step["seat"] != player.viewer:
                self.leak(f"{where}: a draw names its card: {step}")
            if step["action"] == "secret" and step.get("cards") and step["seat"] != player.viewer:
                self.leak(f"{where}: another seat's secret with cards: {step}")

    def settle(self, table: str, hand: int, record: Frame) -> None:
        key = (table, hand)
        if key in self.records:
            return
        try:
            self.records[key] = hidden_sets(record)
        except (KeyError, IndexError, TypeError) as error:
            self.surprise(f"{table} hand {hand}: a record this scan cannot replay ({error!r})")
            self.records[key] = []
            return
        self.moments["hands"] += 1
        for entry in self.pending.pop(key, []):
            self.check(key, entry)

    def check(self, key: tuple[str, int], entry: Seen) -> None:
        sets = self.records[key]
        if not sets:
            return
        if entry.actions >= len(sets):
            self.surprise(f"{entry.player} at {key}: a frame after {entry.actions} actions of "
                          f"a hand of {len(sets) - 1}")
            return
        hidden = sets[entry.actions][entry.viewer] - entry.allowed
        found = cards_in(entry.frame)
        self.checked_cards += len(found)
        leaked = found & hidden
        if leaked:
            self.leak(f"{entry.player} (viewer {entry.viewer}) at {key} after {entry.actions} "
                      f"actions got {sorted(leaked)} in {_short(entry.frame)}")


def _short(value: Any, width: int = 400) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width] + "…"


@dataclass
class Match:
    """What the people at one table learn together: that its match is over."""

    hands: int
    over: trio.Event = field(default_factory=trio.Event)


@dataclass
class Player:
    """One person (or spectator) at a table across the connections they open."""

    name: str
    link_kind: str
    viewer: int = SPECTATOR
    table: str | None = None
    hand: int = 1
    actions: int = 0
    over: bool = False
    token: str | None = None
    seq: int | None = None
    match: Match | None = None
    link: Link | None = None
    allowance: frozenset[str] = frozenset()
    view_hand: list[str] = field(default_factory=list)


@dataclass
class Settings:
    port: int
    grace: float
    timer: float
    rng: random.Random
    scan: Scan
    hands_wanted: int
    stall: float = 0.03
    drop: float = 0.012
    probe: float = 0.02
    chat: float = 0.01
    sync: float = 0.01


KINDS = ("binary", "text", "websocket")


async def say_hello(settings: Settings, player: Player, **extra: Any) -> Frame:
    """A new connection for ``player`` with its hello; every frame it gets is scanned."""
    player.link = await open_link(settings.port, player.link_kind)
    await player.link.send({"type": "hello", "version": 1, "name": player.name,
                            "kind": "bot", **extra})
    return await expect(settings, player, ("welcome", "error"))


async def expect(settings: Settings, player: Player, kinds: tuple[str, ...],
                 ref: int | None = None) -> Frame:
    """The next frame of one of ``kinds`` (the answer to the request ``ref``, if given)."""
    assert player.link is not None
    while True:
        frame = await player.link.receive()
        if frame is None:
            raise ConnectionError(f"{player.name}: closed while waiting for {kinds}")
        note(settings, player, frame)
        if frame["type"] in kinds and (ref is None or ref in (frame.get("id"), frame.get("ref"))):
            return frame


def note(settings: Settings, player: Player, frame: Frame) -> None:
    """Scan one frame and keep what the player learns from it."""
    kind = frame["type"]
    if kind == "joined":
        player.table = frame["table"]
        player.hand = 0
        player.viewer = frame.get("seat", SPECTATOR)
        if frame.get("token"):
            player.token = frame["token"]
            settings.scan.secret(frame["token"], player.name)
        if frame.get("code"):
            settings.scan.codes.add(frame["code"])
    if kind in ("state", "hand_result"):
        player.seq = max(player.seq or 0, frame["seq"])
    if kind == "state":
        player.view_hand = list(frame["view"]["hand"])
    if kind == "match_over" and player.match is not None:
        player.match.over.set()
    count(settings.scan.moments, frame)
    settings.scan.receive(player, frame)


def count(moments: Counter[str], frame: Frame) -> None:
    """The moments a frame tells of: seat changes, moves, moves played for a seat, chat, errors
    by code."""
    kind, event = frame["type"], frame.get("event") or {}
    if kind == "seat_update" and frame.get("change"):
        moments[f"seat {frame['change']['change']}"] += 1
    if kind == "state" and event:
        moments[f"event {event['action']}"] += 1
        moments["moves played for a seat"] += bool(event.get("timeout"))
    if kind == "chat":
        moments["chat lines"] += 1
    if kind == "error":
        moments[f"error {frame['code']}"] += 1


async def play_table(settings: Settings, number: int, options: list[Frame]) -> None:
    """One match of random length at one table: three players, two spectators."""
    rng = settings.rng
    private = rng.random() < 0.5
    chosen: Frame = {}
    for option in options:
        if "values" in option and rng.random() < 0.4:
            chosen[option["name"]] = rng.choice(option["values"])
    if rng.random() < 0.2:
        chosen["ante"] = rng.randint(1, 3)
    kinds = [KINDS[(number + i) % 3] for i in range(5)]
    hands = rng.randint(2, 8)
    match = Match(hands)
    players = [Player(f"p{number}-{i}", kinds[i], match=match) for i in range(3)]
    watchers = [Player(f"w{number}-{i}", kinds[3 + i], match=match) for i in range(2)]
    await say_hello(settings, players[0])
    assert players[0].link is not None
    await players[0].link.send({"type": "create_table", "id": 1, "name": f"scan {number}",
                                "options": chosen, "timer": settings.timer,
                                "private": private, "hands": hands})
    joined = await expect(settings, players[0], ("joined", "error"))
    if joined["type"] == "error":
        settings.scan.surprise(f"create_table refused: {joined}")
        return
    table, code = joined["table"], joined.get("code")
    await say_hello(settings, watchers[0])
    assert watchers[0].link is not None
    await watchers[0].link.send({"type": "spectate", "table": table, "code": code})
    for player in players[1:]:
        await say_hello(settings, player)
        assert player.link is not None
        await player.link.send({"type": "join", "table": table, "code": code})
    finished = trio.Event()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch, settings, watchers[0], finished)
            nursery.start_soon(come_and_go, settings, watchers[1], table, code, finished)
            with trio.move_on_after(60 + 60 * hands) as late:
                async with trio.open_nursery() as seats:
                    for player in players:
                        seats.start_soon(play_seat, settings, player, players, code)
            if late.cancelled_caught:
                settings.scan.surprise(f"table {table}: its match of {hands} hands did not "
                                       f"end in {60 + 60 * hands} s")
            finished.set()
            nursery.cancel_scope.cancel()
    finally:
        for person in players + watchers:
            if person.link is not None:
                await person.link.close()


async def watch(settings: Settings, watcher: Player, finished: trio.Event) -> None:
    assert watcher.link is not None
    while (frame := await watcher.link.receive()) is not None:
        note(settings, watcher, frame)
        if frame["type"] == "match_over":
            return
    if not finished.is_set():
        settings.scan.surprise(f"{watcher.name}: the spectator's connection closed mid-match")


async def come_and_go(settings: Settings, watcher: Player, table: str, code: str | None,
                      finished: trio.Event) -> None:
    """A spectator who arrives mid-hand (a catching-up state), leaves, and comes back."""
    rng = settings.rng
    await say_hello(settings, watcher)
    assert watcher.link is not None
    while not finished.is_set():
        await trio.sleep(rng.uniform(0.5, 4.0))
        watcher.over = False
        await watcher.link.send({"type": "spectate", "table": table, "code": code})
        with trio.move_on_after(rng.uniform(1.0, 6.0)):
            while (frame := await watcher.link.receive()) is not None:
                note(settings, watcher, frame)
                if frame["type"] == "error" and frame["code"] == "no_such_table":
                    return
        await watcher.link.send({"type": "leave"})
        watcher.table = None


async def play_seat(settings: Settings, player: Player, players: list[Player],
                    code: str | None) -> None:
    """Random legal moves, with the moments the scan must go through on the way."""
    while True:
        assert player.link is not None
        frame = await player.link.receive()
        if frame is None:
            settings.scan.surprise(f"{player.name}: connection closed by the server mid-match")
            if not await resume(settings, player):
                return
            continue
        note(settings, player, frame)
        kind = frame["type"]
        if kind == "match_over":
            return
        if kind == "hand_result" and not frame.get("last"):
            await player.link.send({"type": "next_hand"})
        if kind == "state" and frame["view"]["phase"] == "over" and frame.get("missed") is not None:
            await player.link.send({"type": "next_hand"})
        if kind == "state" and frame.get("legal") and not player.link.buffered() \
                and not await decide(settings, player, players, code, frame):
            return


async def decide(settings: Settings, player: Player, players: list[Player], code: str | None,
                 frame: Frame) -> bool:
    """One decision: a random legal move, or let the timer run, or drop (False: the match
    ended meanwhile), sometimes with a probe or a chat line first."""
    assert player.link is not None
    rng, scan = settings.rng, settings.scan
    roll = rng.random()
    if roll < settings.stall:
        scan.moments["stalls (timer runs out)"] += 1
        return True
    roll -= settings.stall
    if roll < settings.drop:
        return await drop(settings, player, code)
    roll -= settings.drop
    if roll < settings.probe:
        await probe(settings, player, players, frame)
    if rng.random() < settings.chat:
        await player.link.send({"type": "chat", "text": f"hello from {player.name}"})
    if rng.random() < settings.sync:
        await player.link.send({"type": "sync"})
        scan.moments["syncs"] += 1
        return True  # the catching-up state offers the decision again
    await player.link.send({"type": "move", "move": rng.choice(frame["legal"])})
    return True


async def probe(settings: Settings, player: Player, players: list[Player], frame: Frame) -> None:
    """A discard of a card another seat holds must be refused as one of a public card is.
    Both are asked at the same ``seq``, of the other seats' hands as of that ``seq``; a probe
    that a move overtook (the hand moved on, or ended, between the two answers) is not
    compared."""
    assert player.link is not None
    seq = player.seq
    others = [card for other in players if other is not player and other.seq == seq
              for card in other.view_hand if card not in player.view_hand]
    public = [card for card in frame["view"]["discards"] if card not in player.view_hand]
    if not others or not public:
        return
    held, shown = settings.rng.choice(others), public[-1]
    player.allowance = frozenset({held})
    answers = []
    for number, card in ((9001, held), (9002, shown)):
        await player.link.send({"type": "move", "id": number,
                                "move": {"action": "discard", "card": card}})
        answer = await expect(settings, player, ("error", "ok"), number)
        answers.append((answer.get("code"), str(answer.get("message", "")).replace(card, "XX")))
    player.allowance = frozenset()
    if player.seq != seq:
        settings.scan.moments["probes overtaken by a move"] += 1
        return
    settings.scan.moments["probes"] += 1
    if answers[0] != answers[1]:
        settings.scan.leak(f"{player.name}: a discard of another seat's card answered "
                           f"{answers[0]}, of a public card {answers[1]}")


async def drop(settings: Settings, player: Player, code: str | None) -> bool:
    """Close the connection without a word; come back after a moment or after the stand-in
    took the seat, by token or (at a private table) by the invite code and the same name.
    False when the match ended meanwhile (the seat is gone with its table)."""
    assert player.link is not None
    rng, scan = settings.rng, settings.scan
    await player.link.close()
    long = rng.random() < 0.5
    scan.moments["drops, back after the grace" if long else "drops, back within the grace"] += 1
    await trio.sleep(settings.grace + 0.8 if long else rng.uniform(0.05, 0.5))
    if code is not None and rng.random() < 0.5:
        return await reclaim(settings, player, code)
    return await resume(settings, player)


async def match_ended(settings: Settings, player: Player, refusal: Frame, code: str) -> None:
    """Whether ``refusal`` is what PROTOCOL.md says a seat dropped in the match's last hand
    meets when the match ends before it is back (``bad_token`` to a resume, the table gone,
    ``no_such_table``, to a join): the others at the table got ``match_over``. Anything else
    is a surprise."""
    assert player.match is not None
    with trio.move_on_after(3):
        await player.match.over.wait()
    if refusal.get("code") == code and player.match.over.is_set():
        settings.scan.moments["back after the match ended"] += 1
        return
    settings.scan.surprise(f"{player.name} in hand {player.hand} of {player.match.hands}: "
                           f"refused its seat: {refusal}")


async def resume(settings: Settings, player: Player) -> bool:
    welcome = await say_hello(settings, player, token=player.token, seq=player.seq)
    if welcome["type"] == "error":
        await match_ended(settings, player, welcome, "bad_token")
        return False
    player.over = False
    settings.scan.moments["resumes by token"] += 1
    return True


async def reclaim(settings: Settings, player: Player, code: str) -> bool:
    old, table = player.token, player.table
    await say_hello(settings, player)
    assert player.link is not None
    player.table = None
    await player.link.send({"type": "join", "id": 7, "table": table, "code": code})
    answer = await expect(settings, player, ("joined", "error"), 7)
    if answer["type"] == "error":
        await match_ended(settings, player, answer, "no_such_table")
        return False
    player.over = False
    settings.scan.moments["seats taken back by the invite code"] += 1
    probe_link = await open_link(settings.port, "text")
    await probe_link.send({"type": "hello", "version": 1, "name": player.name, "kind": "bot",
                           "token": old})
    reply = await probe_link.receive()
    await probe_link.close()
    if reply is None or reply.get("code") != "bad_token":
        settings.scan.leak(f"{player.name}: the token given up by the invite code still "
                           f"works: {reply}")
    return True


async def lobby(settings: Settings) -> None:
    """A stranger reading the lobby and the ladder's standings, over and over."""
    reader = Player("lobby", "text")
    await say_hello(settings, reader)
    assert reader.link is not None
    while True:
        await reader.link.send({"type": "list_tables", "offset": settings.rng.randint(0, 8)})
        tables = await expect(settings, reader, ("tables", "error"))
        for entry in tables.get("tables", [])[:1]:
            await reader.link.send({"type": "list_tables", "table": entry["table"]})
            await expect(settings, reader, ("tables", "error"))
        await reader.link.send({"type": "standings"})
        await expect(settings, reader, ("standings", "error"))
        await trio.sleep(0.5)


async def ladder(settings: Settings, number: int) -> None:
    """An account queued again and again; anchors (server bots) fill its tables."""
    player = Player(f"acct{number}-{os.getpid()}", KINDS[number % 3])
    await say_hello(settings, player)
    assert player.link is not None
    await player.link.send({"type": "register", "name": player.name})
    registered = await expect(settings, player, ("registered", "error"))
    if registered["type"] == "error":
        settings.scan.surprise(f"register refused: {registered}")
        return
    settings.scan.secret(registered["key"], player.name)
    await player.link.close()
    await say_hello(settings, player, account=registered["key"], auto_next=True)
    while True:
        assert player.link is not None
        await player.link.send({"type": "queue"})
        while (frame := await player.link.receive()) is not None:
            note(settings, player, frame)
            if frame["type"] == "match_over":
                settings.scan.moments["ladder matches"] += 1
                player.table = None
                break
            if frame["type"] == "state" and frame.get("legal") and not player.link.buffered():
                await player.link.send({"type": "move",
                                        "move": settings.rng.choice(frame["legal"])})
        else:
            settings.scan.surprise(f"{player.name}: ladder connection closed")
            return


async def run(settings: Settings, tables: int, ladders: int) -> None:
    probe_player = Player("options", "text")
    welcome = await say_hello(settings, probe_player)
    assert probe_player.link is not None
    await probe_player.link.close()
    options = welcome.get("options", [])
    numbers = iter(range(10**9))
    started = time.monotonic()
    shown = 0

    async def keep_playing() -> None:
        while settings.scan.moments["hands"] < settings.hands_wanted:
            try:
                await play_table(settings, next(numbers), options)
            except* (ConnectionError, OSError) as group:
                settings.scan.surprise(f"a table's connection failed: {group.exceptions}")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(lobby, settings)
        for number in range(ladders):
            nursery.start_soon(ladder, settings, number)
        for _ in range(tables):
            nursery.start_soon(keep_playing)
        while settings.scan.moments["hands"] < settings.hands_wanted:
            await trio.sleep(1)
            if settings.scan.moments["hands"] >= shown + 100:
                shown = settings.scan.moments["hands"] // 100 * 100
                print(f"{settings.scan.moments['hands']} hands, "
                      f"{sum(settings.scan.frames.values())} frames, "
                      f"{settings.scan.moments['leaks']} leaks, "
                      f"{time.monotonic() - started:.0f} s", flush=True)
        nursery.cancel_scope.cancel()


@contextmanager
def server(port: int, grace: float, directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    log = (directory / "server.log").open("w")
    env = dict(os.environ, HOME=str(directory))
    process = subprocess.Popen(
        ["tongits-server", "--port", str(port), "--db", str(directory / "scan.db"),
         "--data-dir", str(directory / "data"), "--grace", str(grace), "--bot-delay", "0",
         "--discovery", "false", "--ladder-anchor-wait", "1", "--ladder-hands", "2",
         "--max-tables-per-address", "2000", "--log-level", "warning"],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(10)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=500, help="hands to scan")
    parser.add_argument("--tables", type=int, default=6, help="tables played at once")
    parser.add_argument("--ladder", type=int, default=2, help="ladder accounts queued at once")
    parser.add_argument("--port", type=int, default=28100)
    parser.add_argument("--running", action="store_true",
                        help="scan the server already listening on --port (started with a "
                             "short --grace, --bot-delay 0, --ladder-anchor-wait 1) instead "
                             "of starting one")
    parser.add_argument("--grace", type=float, default=1.5, help="the server's grace period")
    parser.add_argument("--timer", type=float, default=1.0, help="each table's turn timer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/leak_scan"),
                        help="the server's database, data directory and log")
    args = parser.parse_args()
    scan = Scan()
    settings = Settings(args.port, args.grace, args.timer, random.Random(args.seed), scan,
                        args.hands)
    started = time.monotonic()
    with nullcontext() if args.running else server(args.port, args.grace, args.dir):
        trio.run(run, settings, args.tables, args.ladder)
    unchecked = Counter({f"{table} hand {hand}": len(entries)
                         for (table, hand), entries in scan.pending.items()})
    print(json.dumps({
        "hands": scan.moments["hands"], "seconds": round(time.monotonic() - started),
        "frames": dict(scan.frames), "cards_checked": scan.checked_cards,
        "frames_of_hands_without_a_record": sum(unchecked.values()),
        "hands_without_a_record": dict(unchecked.most_common(10)),
        "moments": dict(sorted(scan.moments.items())),
        "leaks": scan.leaks, "surprises": scan.surprises}, indent=1, ensure_ascii=False))
    sys.exit(1 if scan.leaks else 0)


if __name__ == "__main__":
    main()
