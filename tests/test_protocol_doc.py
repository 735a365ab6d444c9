"""What docs/PROTOCOL.md tells a bot author about messages a client meets without asking: a
``seat_update`` with no ``change``, a second ``hello``, and a ``state`` whose ``history`` grew
by more than its ``event``. Each is pinned against the server and looked up in the page."""

from __future__ import annotations

import itertools
import json
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from server_support import TIME_CAP, capped, memory_server, next_of, play_hands, quick_config
from tongits.client.connection import ServerError
from tongits.protocol import PROTOCOL_MINOR, MatchOver, Pong, SeatUpdate, State
from tongits.server import MemoryJournal, Server
from tongits.server.handshake import SERVER_VERSION
from tongits.server.net.tls import ServerTLS
from tongits.server.table.bots import policy_names

DOC = (Path(__file__).parents[1] / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return DOC.split(title, 1)[1].split("\n### ", 1)[0]


@capped
async def test_a_spectator_arriving_pushes_a_seat_update_without_change(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(bot_delay=1.0) as (_server, connect), connect("Ana") as ana:
        joined = await ana.create_table("Watched", bots=2, timer=0)
        before = await next_of(ana, SeatUpdate)  # the seats create_table filled
        await next_of(ana, State)  # the match has begun
        async with connect("Sam") as sam:
            await sam.spectate(joined.table)
            update = await next_of(ana, SeatUpdate)
            assert update.change is None and update.seats == before.seats
    assert "whenever a spectator\narrives or leaves" in _section("### `seat_update`")


@capped
async def test_a_second_hello_is_refused_with_bad_field_as_documented(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server() as (_server, connect), connect("Ana") as ana:
        with pytest.raises(ServerError) as refused:
            await ana.request({"type": "hello", "version": 1, "name": "Ana", "kind": "human"})
        assert refused.value.code == "bad_field"
        assert isinstance(await ana.request({"type": "ping"}), Pong)  # still open
    assert "`bad_field` for a second `hello`" in _section("### `hello`")


def test_the_view_section_says_an_automatic_fold_has_no_state_of_its_own() -> None:
    view = _section("### `view` (in `state`)")
    assert "the automatic fold has no `state` of its own" in view


@capped
async def test_a_catching_up_state_after_a_hand_result_is_one_seq_below_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A client that drops every state whose ``seq`` it has passed (as a careful one might,
    reading "seq increases by one per state") would drop this one: the page says to take it."""
    async with memory_server(bot_delay=1.0) as (_server, connect), connect("Ana") as ana:
        await ana.create_table("Caught", bots=2, timer=0)
        (result,) = await play_hands(ana, 1)
        await ana.request({"type": "sync"})
        synced = await next_of(ana, State)
        assert synced.seq == result.seq - 1 and synced.view["phase"] == "over"
    state = _section("### `state`")
    assert "do not drop it as old or as a duplicate" in state
    assert "below your `seq` if you last had a `hand_result`" in _section("### Resuming a seat")


def test_the_welcome_row_says_the_minor_version_the_server_sends() -> None:
    """The row said `3` while the page's title, its examples and the server said 1.4: a bot
    author reading the table would take a server's `4` for a newer protocol than the page."""
    row = next(line for line in _section("### `welcome`").splitlines()
               if line.startswith("| `minor?`"))
    assert f"minor version, `{PROTOCOL_MINOR}`" in row, row
    assert DOC.startswith(f"# Tongits wire protocol, version 1.{PROTOCOL_MINOR}\n")


def test_the_seat_entry_names_every_policy_a_server_bot_may_have() -> None:
    """The seat entries' ``policy`` row named three policies; a table may seat ``expert`` too
    (``add_bot`` takes it, ``welcome`` lists ``bot:expert``)."""
    row = next(line for line in _section("### Seat entries").splitlines()
               if line.startswith("| `policy?`"))
    assert all(f"`{name}`" in row for name in policy_names()), row


@capped
async def test_a_remote_bot_alone_with_server_bots_keeps_its_table_open(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The page said a table closes when "no human" holds a seat, while a remote bot's seat
    reads ``player: "bot"``: a bot author could not tell whether such a table lasts."""
    async with memory_server(bot_delay=1.0) as (_server, connect), \
            connect("Robo", kind="bot") as robo:
        await robo.create_table("Bots only", bots=2, timer=0)
        (result,) = await play_hands(robo, 1)
        assert result.standings["hands"] == 1
        (entry,) = await robo.list_tables()
        assert entry["humans"] == 0 and entry["seats"][0]["remote"] is True
    assert 'client that said `kind: "bot"` counts as a human' in DOC


@capped
async def test_the_last_hand_result_of_a_match_says_so_and_next_hand_after_it_is_refused(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A bot following the page's loop sent ``next_hand`` after every ``hand_result`` and got
    ``not_seated`` at every match end: ``last`` says which one ends the match."""
    async with memory_server(bot_delay=1.0) as (_server, connect), connect("Robo") as robo:
        await robo.create_table("Two hands", bots=2, timer=0, hands=2)
        first, second = await play_hands(robo, 2)
        assert first.last is None and second.last is True
        over = await next_of(robo, MatchOver)
        assert over.standings["hands"] == 2
        with pytest.raises(ServerError) as refused:
            await robo.next_hand()
        assert refused.value.code == "not_seated"
    hand_result = _section("### `hand_result`")
    assert '| `last?` | bool |' in hand_result and '"last": true' in hand_result
    assert 'unless it says `"last": true`' in DOC
    assert 'the one with `"last": true`' in _section("### `next_hand`")


@capped
async def test_a_resume_after_the_match_ended_gets_bad_token_saying_so(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with memory_server(bot_delay=1.0) as (_server, connect):
        async with connect("Ana") as ana:
            await ana.create_table("One hand", bots=2, timer=0, hands=1)
            token = ana.token
            await play_hands(ana, 1)
            await next_of(ana, MatchOver)
        with pytest.raises(ServerError) as refused:
            async with connect("Ana", token=token):
                pass
        assert refused.value.code == "bad_token"
        assert "is over" in refused.value.message
        with pytest.raises(ServerError) as unknown:
            async with connect("Ana", token="no-such-token"):
                pass
        assert unknown.value.code == "bad_token" and "over" not in unknown.value.message
    assert "the match at table ID is over" in _section("### Resuming a seat")


@capped
async def test_a_lone_client_away_past_the_grace_period_finds_its_table_waiting(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A bot alone with two server bots, away 5 s past a 2 s grace, got ``bad_token``: its
    table had closed with nobody at it, as a phone friend's did after a minute with the screen
    locked. The table waits now, as the page says where it promises the seat: nothing moved
    while the bot was away, and it plays on once back."""
    async with memory_server(bot_delay=1.0, grace=2.0) as (_server, connect):
        async with connect("Robo", kind="bot") as robo:
            await robo.create_table("Alone", bots=2, timer=0)
            await next_of(robo, State)
            token = robo.token
        await trio.sleep(3600)
        async with connect("Robo", kind="bot", token=token) as back:
            again = await next_of(back, State)
            moved = len(again.view["history"])
            assert moved <= 2  # the bots' moves of the grace period (1 s each), none since
            if not again.legal:  # a bot to act: and on it goes
                await next_of(back, State, lambda s: len(s.view["history"]) > moved)
    section = _section("### Resuming a seat")
    assert "the table **waits** for them: its bots and stand-ins make no move" in section


async def _resume_raw(server: Server, token: str, seq: int | None = None) -> list[dict[str, Any]]:
    """Resume ``token`` over raw JSON lines: every message until the server has been quiet for
    a (virtual) second; the connection then closes (the seat is away again)."""
    client, server_side = trio.testing.memory_stream_pair()
    hello: dict[str, Any] = {"type": "hello", "id": 1, "version": 1, "name": "Ana",
                             "kind": "human", "token": token}
    if seq is not None:
        hello["seq"] = seq
    got: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, server_side, "memory")
        await client.send_all(json.dumps(hello).encode() + b"\n")
        lines = LineReader(client)
        while True:
            with trio.move_on_after(1):
                msg = await lines.next()
                assert msg is not None
                got.append(msg)
                continue
            break
        await client.aclose()
    return got


@capped
async def test_a_resume_is_answered_in_the_documented_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A bot author reading "The server answers, in order" met a ``seat_update`` after the
    listed messages (the table telling everyone, the resumer too, that the seat is back) and,
    before the match, no ``state`` at all: the list now says both."""
    async with memory_server(bot_delay=1.0, pregame_grace=600.0) as (server, connect):
        async with connect("Ana") as ana:
            await ana.create_table("Early", bots=1, timer=0)  # a seat free: not started
            early = ana.token
        assert early is not None
        got = await _resume_raw(server, early)
        assert [m["type"] for m in got] == ["welcome", "joined", "seat_update"]
        assert got[2]["change"] == {"seat": 0, "change": "back"}
        async with connect("Ana") as ana:
            await ana.create_table("Midway", bots=2, timer=0)
            first = await next_of(ana, State, lambda s: bool(s.legal))
            midway = ana.token
        assert midway is not None
        got = await _resume_raw(server, midway, first.seq)
        assert [m["type"] for m in got] == ["welcome", "joined", "state", "seat_update"]
        assert got[3]["change"] == {"seat": 0, "change": "back"}
    section = _section("### Resuming a seat")
    assert "5. the `seat_update` that tells everyone at the table, you included" in section
    assert "`welcome`, `joined` and\nthat `seat_update`, with no `state`" in section


def _transcript_line(prefix: str) -> dict[str, Any]:
    """The session transcript's first line starting with ``prefix``, as a map (its shortened
    ``{…}`` and ``[…]`` read as empty)."""
    section = DOC.split("## Session transcript", 1)[1]
    line = next(line for line in section.splitlines() if line.startswith(prefix))
    parsed: dict[str, Any] = json.loads(line[2:].replace("{…}", "{}").replace("[…]", "[]"))
    return parsed


@capped
async def test_the_session_transcript_shows_the_fields_its_server_sends(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The transcript's table has a 30 s timer: its ``hand_result`` lacked ``next_deal`` and
    ``record``, its state in full the view's ``count``, and the page's other ``welcome``s a
    ``server`` of another form than the one every server sends. Replayed from the same
    requests, every message has the transcript's fields."""
    server = Server(quick_config(name="demo", bot_delay=0.2, timer=30.0), MemoryJournal())
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))
        client, server_side = trio.testing.memory_stream_pair()
        nursery.start_soon(server.handle_stream, server_side, "memory")
        await client.send_all(
            b'{"type":"hello","id":1,"version":1,"name":"Ana","kind":"human"}\n'
            b'{"type":"create_table","id":3,"name":"Friday","bots":2,"timer":30}\n')
        lines = LineReader(client)
        welcome = after_draw = hand_result = None
        ref = 10
        while hand_result is None:
            msg = await lines.next()
            assert msg is not None
            if msg["type"] == "welcome":
                welcome = msg
            elif msg["type"] == "hand_result":
                hand_result = msg
            elif msg["type"] == "state" and msg.get("legal"):
                if msg.get("event") == {"seat": 0, "action": "draw"}:
                    after_draw = after_draw or msg
                legal = msg["legal"]
                move = next((m for m in legal if m["action"] in ("draw", "fold", "discard")),
                            legal[0])
                ref += 1
                await client.send_all(json.dumps({"type": "move", "id": ref, "move": move})
                                      .encode() + b"\n")
        await client.aclose()
        nursery.cancel_scope.cancel()
    assert welcome is not None and after_draw is not None
    assert welcome["server"] == _transcript_line('< {"type":"welcome"')["server"]
    assert set(hand_result) == set(_transcript_line('< {"type":"hand_result"'))
    in_full = json.loads(_code_block("The `state` with `seq` 8, in full", "json"))
    assert set(after_draw) == set(in_full)
    assert set(after_draw["view"]) == set(in_full["view"])
    servers = re.findall(r'"server": ?"([^"]*)"', DOC)
    assert len(servers) >= 4
    form = rf".+ \({re.escape(SERVER_VERSION)}\)"  # NAME (tongits/0.1), as handshake.py writes it
    assert all(re.fullmatch(form, name) for name in servers), servers


@capped
async def test_with_no_seat_connected_a_table_without_timer_waits_to_deal(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """"Dealt once every connected seat has asked" holds at once when no seat is connected
    (its player away past the grace period, a stand-in playing), yet the table deals nothing
    then: only a timer would. A bot that came back expecting the match to have gone on found
    the hand it left; the page says so now."""
    async with memory_server(bot_delay=1.0, grace=5.0) as (_server, connect), \
            connect("Sam") as sam:
        async with connect("Ana") as ana:
            joined = await ana.create_table("Waiting", bots=2, timer=0)
            token = ana.token
            await sam.spectate(joined.table)
            (result,) = await play_hands(ana, 1)  # and no next_hand
        stood_in = await next_of(sam, SeatUpdate, lambda u: u.change is not None
                                 and u.change["change"] == "stand_in")
        assert stood_in.change is not None and stood_in.change["seat"] == 0
        with trio.move_on_after(3600):
            while True:
                msg = await sam.receive()
                assert not isinstance(msg, State), msg  # no deal in an hour
        async with connect("Ana", token=token, seq=result.seq) as back:
            snapshot = await next_of(back, State)
            assert snapshot.hand == 1 and snapshot.view["phase"] == "over"
            await back.next_hand()
            assert (await next_of(back, State)).hand == 2
    assert "only the timer deals:\nat a table without one the next hand waits" in DOC
    assert "only the timer deals (without a timer the table waits for a player)" in DOC


async def _flood(server: Server, address: str, pings: int) -> tuple[int, str]:
    """``pings`` pings in one write after ``hello``, from ``address``: the pongs and the error
    code (or "") that came back before the server closed or went quiet."""
    client, server_side = trio.testing.memory_stream_pair()
    data = b'{"type":"hello","id":0,"version":1,"name":"Ana","kind":"bot"}\n' + b"".join(
        b'{"type":"ping","id":%d}\n' % n for n in range(1, pings + 1))
    pongs, code = 0, ""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_stream, server_side, address)
        await client.send_all(data)
        lines = LineReader(client)
        with trio.move_on_after(5):
            while (msg := await lines.next()) is not None:
                pongs += msg["type"] == "pong"
                code = msg.get("code", code)
        await client.aclose()
    return pongs, code


@capped
async def test_a_loopback_client_is_not_rate_limited_unless_the_server_says_so(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A bot flooding a local server with 200 pings got 200 pongs where the page's token bucket
    (bursts of 60) would have closed it: loopback is exempt by default (HOSTING.md's
    ``limit_loopback``), which the page did not tell a bot author testing locally."""
    cut = (59, "rate_limited")  # the hello and 59 pings: the burst of 60
    for limit_loopback, local in ((False, (200, "")), (True, cut)):
        server = Server(quick_config(rate=20.0, burst=60, limit_loopback=limit_loopback),
                        MemoryJournal())
        async with trio.open_nursery() as nursery:
            await nursery.start(lambda task_status, s=server: s.serve(listen=False,
                                                                      task_status=task_status))
            assert await _flood(server, "127.0.0.1:40000", 200) == local
            assert await _flood(server, "192.0.2.1:40000", 200) == cut
            nursery.cancel_scope.cancel()
    assert "(127.0.0.1, ::1) is not counted" in DOC and "`--limit-loopback`" in DOC


async def _sync_after_every_move_of_a_one_hand_match(server: Server, nursery: trio.Nursery) -> str:
    """Play a one-hand match over raw JSON lines, each move sent in one write with a ``sync``
    behind it (as a client that lost track might); the error the last ``sync`` met, if any."""
    client, server_side = trio.testing.memory_stream_pair()
    nursery.start_soon(server.handle_stream, server_side, "memory")
    lines = LineReader(client)
    await client.send_all(
        b'{"type":"hello","id":0,"version":1,"name":"Ana","kind":"human"}\n'
        b'{"type":"create_table","id":1,"name":"Last","bots":2,"timer":0,"hands":1}\n')
    syncs: set[int] = set()
    refused = ""
    while (msg := await lines.next()) is not None:
        if msg["type"] == "state" and msg.get("legal"):
            move = next((m for m in msg["legal"] if m["action"] != "call"), msg["legal"][0])
            ref = 2 * len(syncs) + 10
            await client.send_all(json.dumps({"type": "move", "id": ref, "move": move}).encode()
                                  + b"\n" + json.dumps({"type": "sync", "id": ref + 1}).encode()
                                  + b"\n")
            syncs.add(ref + 1)
        elif msg["type"] == "error" and msg.get("ref") in syncs:
            refused = msg["code"]
        elif msg["type"] == "match_over":
            with trio.move_on_after(1):
                while (msg := await lines.next()) is not None:
                    if msg["type"] == "error" and msg.get("ref") in syncs:
                        refused = msg["code"]
            break
    await client.aclose()
    return refused


@capped
async def test_a_sync_behind_the_move_that_ends_the_match_gets_not_seated(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the player's own move ends the match, a ``sync`` right behind it finds the player
    back in the lobby (the table let it go in the step that ended the match): ``not_seated``,
    as documented. Decks are seeded 0, 1, 2, … so the run is the same every time."""
    seeds = itertools.count()
    monkeypatch.setattr(secrets, "randbits", lambda _bits: next(seeds))  # the decks
    seen: set[str] = set()
    async with trio.open_nursery() as nursery:
        server = Server(quick_config(bot_delay=1.0), MemoryJournal())
        await nursery.start(lambda task_status: server.serve(listen=False,
                                                             task_status=task_status))
        for _ in range(200):
            seen.add(await _sync_after_every_move_of_a_one_hand_match(server, nursery))
            if "not_seated" in seen:
                break
        nursery.cancel_scope.cancel()
    assert "not_seated" in seen
    assert seen <= {"", "no_such_table", "not_seated"}  # both documented, nothing else
    sync = _section("### `sync`")
    assert ("`not_seated` (at no\ntable, which includes a table that has closed, e.g. a `sync` "
            "sent right behind the move that\nended the match)") in sync
    assert "`no_such_table` (the table closed while the\nrequest was on its way" in sync


class LineReader:
    """JSON lines from a stream, one object at a time."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream, self.buffer = stream, b""

    async def next(self) -> dict[str, Any] | None:
        while b"\n" not in self.buffer:
            data = await self.stream.receive_some()
            if not data:
                return None
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        parsed: dict[str, Any] = json.loads(line)
        return parsed


def _code_block(after: str, language: str) -> str:
    """The first ``language`` code block of the page after the text ``after``."""
    rest = DOC.split(after, 1)[1]
    return rest.split(f"```{language}\n", 1)[1].split("```", 1)[0]


async def _run_snippet(command: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Run a snippet of the page (``_localised``), for 10 s at most."""
    with trio.fail_after(10):
        return await trio.run_process(command, capture_stdout=True, capture_stderr=True,
                                      check=False)


def _localised(snippet: str, pin: str, port: int) -> str:
    """A TLS snippet of the page with its example address, port, pin and password replaced
    by the test server's."""
    for example, real in (("192.0.2.10", "127.0.0.1"), ("7777", str(port)),
                          ("correct horse", PASSWORD)):
        assert example in snippet
        snippet = snippet.replace(example, real)
    return snippet.replace('"AB:12:..."', f'"{pin}"').replace('"AB12..."', f'"{pin}"')


PASSWORD = "correct horse battery"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
async def test_the_node_tls_snippet_pins_a_self_signed_certificate_before_the_password(
    tmp_path: Path,
) -> None:
    """The snippet's comment said to check the pin in ``checkServerIdentity``, which Node
    never calls for a self-signed certificate. Run as printed against a real server: with the
    right pin it is welcomed (its password too); with a wrong one it stops before ``hello``."""
    snippet = _code_block("Node.js (`tls.connect`):", "js")
    assert "checkServerIdentity: Node calls" in snippet and "password:" in snippet
    tls = ServerTLS.self_signed(tmp_path / "server")
    server = Server(quick_config(), MemoryJournal(), tls=tls, password=PASSWORD)
    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            (listener, *_) = await nursery.start(server.serve)
            port = listener.socket.getsockname()[1]
            pin = tls.fingerprint.removeprefix("SHA256:")
            stop = '\nsocket.once("data", () => socket.end());\n'
            right = await _run_snippet(
                ["node", "-e", _localised(snippet, pin, port) + stop])
            assert right.returncode == 0, right.stderr
            assert b'"welcome"' in right.stdout
            wrong = await _run_snippet(
                ["node", "-e", _localised(snippet, "00:" + pin[3:], port) + stop])
            assert wrong.returncode == 1 and b"certificate changed" in wrong.stderr
            assert wrong.stdout == b""
            assert not server.gate._failures  # no hello, so no password, ever came
            nursery.cancel_scope.cancel()


async def test_the_python_pinning_snippet_is_welcomed_with_its_password(tmp_path: Path) -> None:
    snippet = _code_block("Python, pinning a self-signed certificate:", "python")
    tls = ServerTLS.self_signed(tmp_path / "server")
    server = Server(quick_config(), MemoryJournal(), tls=tls, password=PASSWORD)
    with trio.fail_after(TIME_CAP):
        async with trio.open_nursery() as nursery:
            (listener, *_) = await nursery.start(server.serve)
            port = listener.socket.getsockname()[1]
            pin = tls.fingerprint.removeprefix("SHA256:").replace(":", "")
            ran = await _run_snippet(
                [sys.executable, "-c", _localised(snippet, pin, port)])
            assert ran.returncode == 0, ran.stderr
            assert b'"welcome"' in ran.stdout
            nursery.cancel_scope.cancel()
