"""External bots in the arena (``cmd:``): real programs over the public protocol, on the arena's
own loopback server, including ones that crash, hang or cheat; and the environment that seats
them (``TONGITS_SERVER`` …) as the SDK reads it."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tongits.client.cli import main
from tongits.client.sdk import seat_from_env
from tongits.engine import HandRecord

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

#: An SDK bot as a bot author writes it: it opens its own table and leaves after 3 hands when
#: run by hand; in the arena the environment seats it and it plays every hand.
SDK_BOT = """
import sys
from tongits.client.sdk import run_bot
from tongits.engine import Action


def policy(view):
    moves = [m for m in view.legal if m.action is not Action.CALL]
    return (moves or view.legal)[0]


run = run_bot(policy, port=7777, name="mybot", create=True, bots=2, hands=3)
print(len(run.hands), "hands")
"""

#: Plays first legal moves, but dies with status 3 at its 20th decision, once (the marker file
#: remembers): the arena restarts it and it plays on.
CRASHING_BOT = """
import os, sys
from pathlib import Path
from tongits.client.sdk import run_bot

marker = Path(sys.argv[1])
decisions = 0


def policy(view):
    global decisions
    decisions += 1
    if decisions == 20 and not marker.exists():
        marker.write_text("crashed")
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    return view.legal[0]


run_bot(policy)
"""

#: Stops answering (for good) at its 10th decision.
HANGING_BOT = """
import time
from tongits.client.sdk import run_bot

decisions = 0


def policy(view):
    global decisions
    decisions += 1
    if decisions >= 10:
        time.sleep(3600)
    return view.legal[0]


run_bot(policy)
"""

#: Speaks the text protocol by hand and answers every turn with a meld of two cards; it dies if
#: it is ever offered moves while a stand-in plays its seat.
CHEATING_BOT = """
import json, os, socket

host, port = os.environ["TONGITS_SERVER"].rsplit(":", 1)
sock = socket.create_connection((host, int(port)))
# Two files: writing to one "rw" text file drops what it had read ahead.
reader = sock.makefile("r", encoding="utf-8")
writer = sock.makefile("w", encoding="utf-8")
ids = iter(range(1, 10**9))


def send(msg):
    writer.write(json.dumps({**msg, "id": next(ids)}) + "\\n")
    writer.flush()


send({"type": "hello", "version": 1, "name": "cheat", "kind": "bot"})
send({"type": "join", "table": os.environ["TONGITS_TABLE"],
      "seat": int(os.environ["TONGITS_SEAT"]), "code": os.environ["TONGITS_CODE"]})
for line in reader:
    msg = json.loads(line)
    if msg.get("type") == "state" and msg.get("legal"):
        send({"type": "move", "move": {"action": "meld", "cards": ["Ah", "2h"]}})
    elif msg.get("type") == "hand_result":
        send({"type": "next_hand"})
    elif msg.get("code") == "not_your_turn":
        raise SystemExit("offered moves while a stand-in played my seat")
"""


def arena_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["arena", *argv, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return data


def counts(data: dict[str, Any]) -> dict[str, Any]:
    """An arena's report less what differs between in-process and hosted runs of the same
    bots: their names and their times."""
    for bot in data["bots"]:
        del bot["name"], bot["ms"], bot["ms_per_decision"]
    for pair in data["head_to_head"]:
        del pair["names"]
    return data


def script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_node_example_plays_300_hands_against_strong_and_greedy(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    data = arena_json(
        capsys, "--bots", "cmd:node examples/bot.js,strong,greedy", "--hands", "300"
    )
    node, strong, greedy = data["bots"]
    assert data["hands"] == 300 and node["name"] == "cmd:node examples/bot.js"
    assert node["hands"] == strong["hands"] == greedy["hands"] == 300
    assert node["calls"] == 0  # it never calls: the program, not a stand-in, played
    assert node["decisions"] > 300 and node["stand_in_hands"] == 0
    assert node["timeouts"] == node["illegal_moves"] == node["crashes"] == 0
    assert 0 < node["ms"]["p50"] <= node["ms"]["p99"] <= node["ms"]["max"]
    assert sum(b["chips_per_hand"] for b in data["bots"]) == pytest.approx(0, abs=1e-3)
    assert len(data["head_to_head"]) == 3


def test_an_sdk_bot_plays_the_arena_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = script(tmp_path, "mybot.py", SDK_BOT)
    data = arena_json(
        capsys, "--bots", f"random,cmd:{PYTHON} {bot},greedy", "--hands", "30",
        "--record", str(tmp_path / "records"),
    )
    mine = data["bots"][1]
    assert mine["hands"] == 30 and mine["stand_in_hands"] == 0 and mine["crashes"] == 0
    assert mine["calls"] == 0 and mine["decisions"] > 30
    # The rotations of a deal share the deck; the dealer moves round instead of the programs.
    for deal in range(10):
        records = [
            HandRecord.loads((tmp_path / "records" / f"deal{deal:06d}-rot{r}.json").read_text())
            for r in range(3)
        ]
        assert len({r.deck for r in records}) == 1
        assert sorted(r.dealer for r in records) == [0, 1, 2]


def test_a_bot_behind_the_protocol_plays_exactly_as_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``greedy`` run as a program (``tongits bot greedy``) against in-process ``strong`` and
    ``random``: the arena's server deals the same duplicate deals (the dealer turns instead of
    the seats) and seeds the in-process bots alike, so every count equals the in-process run."""
    argv = ["--hands", "30", "--seed", "7"]
    inproc = arena_json(capsys, "--bots", "strong,random,greedy", *argv)
    hosted = arena_json(
        capsys, "--bots", f"strong,random,cmd:{PYTHON} -m tongits.client.cli bot greedy", *argv
    )
    assert counts(hosted) == counts(inproc)


def test_strong_behind_the_protocol_plays_exactly_as_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``strong`` draws its randomness from the position as its seat sees it (its place after
    the dealer, its cards, the history), not from seat numbers or a seed only the in-process
    bot is given: as a program it plays every rotation as in-process ``strong`` does, though
    there the bots change seats and here the dealer goes round."""
    assert_plays_as_in_process(capsys, "strong", hands=300)


def test_the_expert_behind_the_protocol_plays_exactly_as_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The expert deals its worlds from the position as its seat sees it (``world_rng``: its
    place after the dealer, its cards, the history), never from seat numbers or the per-hand
    seed only an in-process bot is given: as a program it searches the same worlds and plays
    every rotation as the in-process expert does. Seeded with seat numbers, it chose other
    moves where its search was close."""
    assert_plays_as_in_process(capsys, "expert", hands=12)


def assert_plays_as_in_process(capsys: pytest.CaptureFixture[str], bot: str, *,
                               hands: int) -> None:
    """``bot`` in the third seat beside strong and greedy, run in process and as a ``cmd:``
    program behind the protocol: both arenas count the same chips hand for hand."""
    argv = ["--hands", str(hands), "--seed", "7"]
    inproc = arena_json(capsys, "--bots", f"strong,greedy,{bot}", *argv)
    hosted = arena_json(
        capsys, "--bots",
        f"strong,greedy,cmd:{PYTHON} -m tongits.client.cli bot {bot} --name {bot[0]}2", *argv,
    )
    assert counts(hosted) == counts(inproc)


def test_a_crashing_bot_is_restarted_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = script(tmp_path, "crash.py", CRASHING_BOT)
    marker = tmp_path / "crashed"
    data = arena_json(
        capsys, "--bots", f"cmd:{PYTHON} {bot} {marker},greedy,random", "--hands", "60",
        "--timer", "2",
    )
    crashy = data["bots"][0]
    assert marker.exists()
    assert crashy["hands"] == 60 and crashy["crashes"] == 1
    assert 1 <= crashy["stand_in_hands"] < 60  # back after the restart
    assert crashy["decisions"] > 20
    assert any("exited with status 3" in n and "crashing on purpose" in n for n in data["notes"])


def test_a_hanging_bot_times_out_is_stopped_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = script(tmp_path, "hang.py", HANGING_BOT)
    data = arena_json(
        capsys, "--bots", f"greedy,cmd:{PYTHON} {bot},random", "--hands", "45",
        "--timer", "0.3",
    )
    hung = data["bots"][1]
    assert hung["hands"] == 45
    assert hung["timeouts"] >= 3 and hung["crashes"] >= 1 and hung["stand_in_hands"] >= 3
    assert hung["ms"]["max"] < 300  # a timed-out turn is not a decision
    assert any("hung (stopped)" in n for n in data["notes"])


def test_a_bot_sending_illegal_moves_is_replaced_for_the_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = script(tmp_path, "cheat.py", CHEATING_BOT)
    data = arena_json(
        capsys, "--bots", f"greedy,random,cmd:{PYTHON} {bot}", "--hands", "15", "--timer", "2"
    )
    cheat = data["bots"][2]
    assert cheat["hands"] == 15 and cheat["illegal_moves"] == 15  # one a hand, then no offers
    assert cheat["stand_in_hands"] == 15 and cheat["decisions"] == 0
    assert cheat["timeouts"] == cheat["crashes"] == 0


def test_a_program_that_cannot_start_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    data = arena_json(
        capsys, "--bots", "cmd:/nonexistent/tongits-bot,greedy,greedy", "--hands", "3",
    )
    assert data["bots"][0]["crashes"] == 1 and data["bots"][0]["stand_in_hands"] == 3
    assert any("cannot start" in n for n in data["notes"])


def test_the_environment_assigns_the_seat() -> None:
    env = {"TONGITS_SERVER": "127.0.0.1:4321", "TONGITS_TABLE": "t7", "TONGITS_CODE": "c0de",
           "TONGITS_SEAT": "2"}
    assert seat_from_env(env) == {
        "host": "127.0.0.1", "port": 4321, "table": "t7", "code": "c0de", "seat": 2,
        "create": False, "bots": 0, "hands": None,
    }
    assert seat_from_env({}) is None
    with pytest.raises(ValueError):
        seat_from_env({**env, "TONGITS_SEAT": "left"})
    with pytest.raises(ValueError):
        seat_from_env({**env, "TONGITS_SERVER": "127.0.0.1:notaport"})
