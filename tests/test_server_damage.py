"""A damaged database is told clearly (issue #16, item 9): the server names the damaged tables
and does not start, or with ``--skip-damaged`` serves the readable ones; ``tongits export``
copies out what can be read; an empty file that stands where a database was is warned about."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
import trio
from server_support import TIME_CAP, play_hands, quick_config, tcp_connect
from tongits.client import cli as client_cli
from tongits.server import Server
from tongits.server import cli as server_cli
from tongits.server.storage.store import SQLiteJournal, StoreError, empty_file_warning


def _make_database(path: Path) -> None:
    """Three open tables (t1 with two finished hands) in a real SQLite file."""

    async def main() -> None:
        journal = SQLiteJournal(str(path))
        server = Server(quick_config(), journal)
        with trio.fail_after(TIME_CAP):
            await serve(journal, server)

    async def serve(journal: SQLiteJournal, server: Server) -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve)
            port = listeners[0].socket.getsockname()[1]
            async with tcp_connect(port, "Ana") as ana, tcp_connect(port, "Ben") as ben, \
                    tcp_connect(port, "Cy") as cy:
                await ana.create_table("Played", bots=2, timer=0)
                await play_hands(ana, 2)
                await ben.create_table("Waiting", auto_start=False)
                await cy.create_table("Other", auto_start=False)
            nursery.cancel_scope.cancel()
        journal.close()

    trio.run(main)


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """The database with one entry of t2 that is not JSON, and one hand record of t1 too."""
    path = tmp_path / "tongits.db"
    _make_database(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE entries SET entry = '{oops' WHERE table_id = 't2' AND n = 1")
    db.execute("UPDATE hands SET record = '[broken' WHERE table_id = 't1' AND hand = 2")
    db.commit()
    db.close()
    return path


def test_the_server_names_the_damage_and_does_not_start(
    damaged: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """It stopped with a traceback (a JSONDecodeError while restoring); now one error line
    naming the table and the way to start anyway, and exit status 1."""
    caplog.set_level(logging.INFO)
    assert server_cli.main(["--db", str(damaged), "--port", "0", "--discovery", "false"]) == 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    message = errors[0].getMessage()
    assert "damaged" in message and "t2" in message and "--skip-damaged" in message


def test_skip_damaged_serves_the_readable_tables(damaged: Path) -> None:
    journal = SQLiteJournal(str(damaged))
    with pytest.raises(StoreError):
        journal.load()
    skipped = journal.load(skip_damaged=True)
    assert len(skipped) == 1 and skipped[0].startswith("t2 (not valid JSON")

    async def main() -> list[str]:
        server = Server(quick_config(grace=600.0, pregame_grace=600.0), journal)
        with trio.fail_after(TIME_CAP):
            return await serve(server)

    async def serve(server: Server) -> list[str]:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve)
            port = listeners[0].socket.getsockname()[1]
            async with tcp_connect(port, "Eve") as eve:
                listed = [t["table"] for t in await eve.list_tables()]
                await eve.create_table("New", auto_start=False)
            nursery.cancel_scope.cancel()
        return listed

    listed = trio.run(main)
    journal.close()
    assert sorted(listed) == ["t1", "t3"]


def test_page_damage_is_named_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "tongits.db"
    _make_database(path)
    data = bytearray(path.read_bytes())
    # every page after the first two, whole (damage only in the middle of a page could fall in
    # its free space, unread: the test then failed about one run in ten, by the deal)
    for at in range(8192, len(data) - 4096, 4096):
        data[at : at + 4096] = b"\xde\xad" * 2048
    path.write_bytes(bytes(data))
    try:
        journal = SQLiteJournal(str(path))
        journal.load()
    except StoreError as exc:
        assert str(path) in str(exc)
    else:
        pytest.fail("damaged pages went unnoticed")


def test_export_copies_out_what_can_be_read(
    damaged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    assert client_cli.main(["export", "--db", str(damaged), "--out", str(out)]) == 0
    assert (out / "t1-hand-1.json").is_file() and not (out / "t1-hand-2.json").exists()
    standings = json.loads((out / "standings.json").read_text())
    assert set(standings["tables"]) == {"t1", "t3"}
    assert [s.split(" (")[0] for s in standings["skipped"]] == ["t1 hand 2", "t2 log"]
    assert "Traceback" not in capsys.readouterr().err


def test_an_empty_file_where_a_database_was_is_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "tongits.db"
    _make_database(path)
    assert empty_file_warning(str(path)) is None
    path.write_bytes(b"")
    warning = empty_file_warning(str(path))
    assert warning is not None and "empty" in warning and "truncated" in warning
    assert empty_file_warning(str(tmp_path / "new.db")) is None  # a new file is not warned of
    assert empty_file_warning(":memory:") is None
