"""What a stranger starts from: ``examples/bot.js``, the Node.js bot of docs/PROTOCOL.md, run as
its README line says against a real server, plays a whole match to ``match_over``.

(``test_arena_external`` runs the same program hosted by ``tongits arena``, where it joins a
seat it is given; here it does the rest of the walk-through: ``list_tables``, ``create_table``
with ``hands``, ``next_hand`` after each hand, and the end of the match.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trio
from server_support import TIME_CAP, tcp_server

BOT_JS = Path(__file__).resolve().parent.parent / "examples" / "bot.js"
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
async def test_the_node_example_plays_a_match_to_match_over() -> None:
    assert NODE is not None
    with trio.fail_after(TIME_CAP * 2):
        async with tcp_server() as (server, port):
            done = await trio.run_process(
                [NODE, str(BOT_JS), f"127.0.0.1:{port}", "--hands", "3", "--name", "node"],
                capture_stdout=True, capture_stderr=True, check=False)
            assert not server.lobby.tables  # the table closed at match_over
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err
    assert "seated at table t1, seat 0" in out
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("hand ")] == [
        "hand 1 over", "hand 2 over", "hand 3 over"]
    assert "match over (hands) after 3 hands" in out
    assert "error" not in err and "refused" not in err
