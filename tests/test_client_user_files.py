"""The client's one data directory and its one private-file writer: every file the client keeps
(seats, pinned certificates, account keys, play setups) goes where the platform keeps an
application's data, and is written whole and readable by its owner only."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import platformdirs
import pytest
from tongits.client import user_files
from tongits.client.accounts import AccountKeys
from tongits.client.tls import KnownServers
from tongits.client.tui.play_setup import PlaySetup, SetupStore
from tongits.client.tui.seats import SavedSeat, SeatStore
from tongits.client.user_files import data_dir, write_private
from tongits.protocol.transport import Endpoint


@pytest.mark.parametrize(
    ("platform", "environ", "expected"),
    [
        ("linux", {"XDG_DATA_HOME": "/x/data"}, "/x/data/tongits"),
        ("linux", {}, "~/.local/share/tongits"),
        ("darwin", {}, "~/Library/Application Support/tongits"),
    ],
)
def test_the_data_directory_is_the_platforms(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str, environ: dict[str, str],
    expected: str,
) -> None:
    """Linux honours ``XDG_DATA_HOME``; macOS keeps application data in Application Support
    (before, the pins and account keys went to ``~/.local/share`` there while the seats went
    to Application Support)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(platformdirs, "PlatformDirs", _dirs_class(platform))
    assert data_dir() == Path(expected.replace("~", str(tmp_path)))


def test_the_data_directory_on_windows_is_local_app_data(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Windows keeps it in the local (not roaming) application data, under no author.

    ``data_dir`` moves the old directory's files in: with the real home that moved the
    developer's own files into a folder named ``C:\\Users\\...`` under the working directory,
    since a Windows path is relative on POSIX; so home and working directory are the test's."""
    from platformdirs.windows import Windows

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(platformdirs, "PlatformDirs", Windows)
    monkeypatch.setattr("platformdirs.windows.get_win_folder",
                        lambda name: {"CSIDL_LOCAL_APPDATA": r"C:\Users\ana\AppData\Local"}[name])
    assert str(data_dir()).replace("\\", "/").endswith("C:/Users/ana/AppData/Local/tongits")


def _dirs_class(platform: str) -> type[platformdirs.PlatformDirsABC]:
    if platform == "darwin":
        from platformdirs.macos import MacOS

        return MacOS
    from platformdirs.unix import Unix

    return Unix


def test_every_store_defaults_to_the_one_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(user_files, "data_dir", lambda: tmp_path)
    from tongits.client import accounts, tls
    from tongits.client.tui import seats

    for module in (accounts, tls, seats):
        monkeypatch.setattr(module, "data_dir", lambda: tmp_path)
    assert SeatStore().folder == tmp_path / "seats"
    assert KnownServers().path == tmp_path / "known_servers"
    assert AccountKeys().path == tmp_path / "ladder_keys.json"


def test_a_private_file_is_owner_only_in_an_owner_only_folder(tmp_path: Path) -> None:
    path = tmp_path / "new" / "secret.json"
    write_private(path, '{"token": "t"}')
    assert path.read_text(encoding="utf-8") == '{"token": "t"}'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    write_private(path, "second")
    assert path.read_text(encoding="utf-8") == "second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret.json"]


def test_a_write_that_fails_keeps_the_old_file_whole_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between writing and renaming (here: the disk full at ``fsync``) keeps the old
    file as it was, and no temporary file is left in the folder."""
    path = tmp_path / "known_servers"
    write_private(path, "old\n")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        write_private(path, "new and much longer\n")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["known_servers"]


def test_a_write_interrupted_by_the_user_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_private(tmp_path / "seat.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_every_store_writes_its_file_owner_only(tmp_path: Path) -> None:
    """The seats, the pins, the account keys and the play setups all hold what seats or signs
    in whoever reads them (or says which game a token resumes): each file is ``0600``."""
    SeatStore(tmp_path / "seats").save(SavedSeat("h:1", "Ana", "token"))
    KnownServers(tmp_path / "known_servers").pin(Endpoint("h", 1, tls=True), "SHA256:x")
    AccountKeys(tmp_path / "ladder_keys.json").save("h:1", "Ana", "key")
    SetupStore(tmp_path / "play-setups.json").save("Ana", PlaySetup(bots=1))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 4
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), files
    assert KnownServers(tmp_path / "known_servers").get(Endpoint("h", 1, tls=True)) == "SHA256:x"
    assert AccountKeys(tmp_path / "ladder_keys.json").get("h:1", "Ana") == "key"
    setup = SetupStore(tmp_path / "play-setups.json").load("Ana")
    assert setup is not None and setup.bots == 1


def _old_files(home: Path) -> Path:
    """The old data directory of a client that kept its files in ``~/.local/share/tongits``
    on every platform: a seat, the pins, an account key, a game, a hand record."""
    old = home / ".local" / "share" / "tongits"
    for name, text in [("seats/h_1-Ana.json", '{"token": "seat"}'),
                       ("known_servers", "h:1 SHA256:old\n"),
                       ("ladder_keys.json", '{"h:1": {"Ana": "key"}}'),
                       ("hands/t1-1.json", "{}")]:
        path = old / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)
    (old / "play.db").write_bytes(b"SQLite format 3\x00\xff")
    return old


def _on_platform(monkeypatch: pytest.MonkeyPatch, home: Path, platform: str) -> Path:
    """Pretend to run on ``platform`` with ``home`` as the home directory; the data directory
    platformdirs names there."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(sys, "platform", platform)
    if platform == "win32":
        from platformdirs.windows import Windows

        monkeypatch.setattr(platformdirs, "PlatformDirs", Windows)
        monkeypatch.setattr("platformdirs.windows.get_win_folder",
                            lambda name: {"CSIDL_LOCAL_APPDATA": str(home / "Local")}[name])
        return home / "Local" / "tongits"
    monkeypatch.setattr(platformdirs, "PlatformDirs", _dirs_class(platform))
    if platform == "darwin":
        return home / "Library" / "Application Support" / "tongits"
    return home / ".local" / "share" / "tongits"


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_the_old_data_directory_moves_into_the_platforms_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str
) -> None:
    """On macOS and Windows the first run after the move finds its seats, pins, account keys,
    game and hand records where it now looks, each readable by its owner only; a file the new
    directory already holds in a newer version is kept; and a later run copies nothing again
    (the old directory is left as it was)."""
    old = _old_files(tmp_path)
    new = _on_platform(monkeypatch, tmp_path, platform)
    newer = new / "known_servers"
    write_private(newer, "h:1 SHA256:new\n")
    os.utime(old / "known_servers", (1_000_000, 1_000_000))
    older = new / "ladder_keys.json"
    write_private(older, '{"h:1": {"Ana": "stale"}}')
    os.utime(older, (1_000_000, 1_000_000))

    assert data_dir() == new
    assert SeatStore().folder == new / "seats"
    assert (new / "seats" / "h_1-Ana.json").read_text(encoding="utf-8") == '{"token": "seat"}'
    assert KnownServers(new / "known_servers").get(Endpoint("h", 1, tls=True)) == "SHA256:new"
    assert AccountKeys(new / "ladder_keys.json").get("h:1", "Ana") == "key"
    assert (new / "play.db").read_bytes() == b"SQLite format 3\x00\xff"
    assert (new / "hands" / "t1-1.json").exists()
    files = [p for p in new.rglob("*") if p.is_file()]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), files
    folders = [new, *(p for p in new.rglob("*") if p.is_dir())]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in folders), folders
    assert (old / "known_servers").read_text(encoding="utf-8") == "h:1 SHA256:old\n"

    (new / "seats" / "h_1-Ana.json").unlink()
    assert user_files.migrate(old, new) == []
    assert not (new / "seats" / "h_1-Ana.json").exists()


def test_on_linux_the_old_data_directory_is_the_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Linux always kept its files where platformdirs looks: nothing is copied or marked."""
    old = _old_files(tmp_path)
    assert _on_platform(monkeypatch, tmp_path, "linux") == old
    assert data_dir() == old
    assert user_files.migrate(user_files.old_data_dir(), data_dir()) == []
    assert not (old / user_files.MIGRATED).exists()


def test_a_migration_that_fails_is_logged_and_tried_again_next_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file that cannot be read leaves the client working without it, unmarked: the next run
    tries again, and copies what it did not have."""
    old = _old_files(tmp_path)
    new = _on_platform(monkeypatch, tmp_path, "darwin")
    unreadable = old / "ladder_keys.json"
    read_bytes = Path.read_bytes

    def refused(path: Path) -> bytes:
        if path == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", refused)
    assert data_dir() == new
    assert "could not move" in caplog.text and "Permission denied" in caplog.text
    assert not (new / user_files.MIGRATED).exists()
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    copied = user_files.migrate(old, new)
    assert new / "ladder_keys.json" in copied
    assert (new / user_files.MIGRATED).read_text(encoding="utf-8") == f"{old}\n"
