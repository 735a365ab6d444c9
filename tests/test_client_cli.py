"""``tongits play`` and ``tongits connect`` refuse bad arguments before any screen opens: one
line on stderr and exit status 2, as argparse does; without a terminal, one line too."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from tongits.client.cli import main


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["play", "--bots", "3"], "--bots must be 0, 1 or 2"),
        (["play", "--bots", "-1"], "--bots must be 0, 1 or 2"),
        (["play", "--timer", "-5"], "--timer must be a number of seconds ≥ 0"),
        (["play", "--timer", "nan"], "--timer must be a number of seconds ≥ 0"),
        (["play", "--bot-delay", "-1"], "--bot-delay must be"),
        (["play", "--policy", "smart"], "--policy must be one of"),
        (["play", "--hands", "0"], "--hands must be 1 to 10000"),
        (["play", "--option", "pick_to_sapaw"], "is not KEY=VALUE"),
        (["play", "--option", "nonsense=1"], "--option:"),
        (["play", "--name", ""], "--name must be 1 to 32"),
        (["play", "--name", "x" * 33], "--name must be 1 to 32"),
        (["connect", "example.org:http", "--name", "Ana"], "bad port"),
        (["connect", "example.org", "--name", "a\tb"], "--name must be"),
        (["connect", "example.org", "--name", "Eve", "--watch"], "--watch takes an invite link"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"tongits {argv[0]}: error: ") and says in err


def test_play_without_a_terminal_is_one_line_not_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tongits.client.cli", "play"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "needs a terminal" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_play_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    out = capsys.readouterr().out
    assert "(default: 60.0)" in out and "(default: greedy)" in out and "(default: 2)" in out


def test_a_resumed_play_names_the_typed_flags_it_did_not_apply(tmp_path: Path) -> None:
    """A match keeps its bots, timer, bot policy and rules: ``tongits play`` run again with
    other ones resumes the saved game and says which flags were not applied and that ``--new``
    starts a new game; flags left out (``None``) are never reported, whatever their default."""
    from tongits.client.tui.launch import resume_notice
    from tongits.client.tui.play_setup import PlaySetup, SetupStore

    store = SetupStore(tmp_path / "play-setups.json")
    assert store.load("Ana") is None
    store.save("Ana", PlaySetup(bots=1, timer=0.0, options={"pick_to_sapaw": True}))
    store.save("Ben", PlaySetup())
    saved = store.load("Ana")
    assert saved == PlaySetup(bots=1, timer=0.0, options={"pick_to_sapaw": True})
    plain = {"bots": None, "timer": None, "policy": None, "options": None}
    assert resume_notice(saved, plain) == [
        "back in your saved game · tongits play --new starts a new one"
    ]
    assert resume_notice(saved, {**plain, "bots": 1, "timer": 0.0}) == resume_notice(saved, plain)
    changed = resume_notice(saved, {**plain, "bots": 2, "policy": "expert",
                                    "options": {"ante": 1}, "hands": 4})
    assert changed == [
        "back in your saved game: a match keeps its settings; not applied:",
        "  --bots 2 (this game: 1)",
        "  --policy expert (this game: greedy)",
        "  --option ante=1 (this game: pick_to_sapaw=true)",
        "  --hands 4 (this game: none)",
        "tongits play --new with these flags gives it up and starts a new game",
    ]
    (tmp_path / "play-setups.json").write_text("{not json", encoding="utf-8")
    assert store.load("Ana") is None
    assert resume_notice(None, {**plain, "bots": 0}) == resume_notice(saved, plain)


def test_play_help_offers_a_new_game(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--new give up the saved game (if any) and start a new one with these flags" in out
    assert "resumes the saved game" in out


def test_offline_play_has_the_bots_asked_for_and_no_turn_timer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``tongits play --offline`` showed a turn timer that counted down to 0:00 with nothing
    to play for the seat (no server), and its bots were greedy whatever ``--policy`` said."""
    from tongits.client.tui import launch
    from tongits.client.tui.session import FakeSession
    from tongits.client.tui.state import StateUpdate, Update
    from tongits.engine.policies.strong import StrongPolicy

    sessions: list[FakeSession] = []

    def screen(session: FakeSession) -> int:
        sessions.append(session)
        return 0

    monkeypatch.setattr(launch, "run_screen", screen)
    assert launch.play(launch.PlayOptions(timer=30.0, bot_policy="strong", bot_delay=0.0,
                                          offline=True, seed=3)) == 0
    (session,) = sessions
    updates: list[Update] = []
    session.start(updates.append)
    states = [u for u in updates if isinstance(u, StateUpdate)]
    assert states and all(state.deadline is None for state in states)
    assert isinstance(session.policy, StrongPolicy)


@pytest.mark.parametrize("bots", [1, 2])
def test_play_with_a_free_seat_says_where_a_friend_connects(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bots: int
) -> None:
    """``tongits play --bots 1`` waited for a friend who could not come: the embedded server
    listens on 127.0.0.1 at a port of the moment, which nothing said (only ``--listen`` for
    the LAN named an address). With a seat to fill, the screen says the port."""
    import asyncio

    from screen_support import settle
    from tongits.client.tui import launch
    from tongits.client.tui.lobby import LobbyJoin
    from tongits.client.tui.state import Notice, StateUpdate, Update

    said: list[str] = []

    def screen(session: launch.PlaySession, lobby: object = None) -> int:
        # `leave` and `lobby` go to the embedded server's lobby, as at any server.
        assert isinstance(lobby, LobbyJoin) and lobby.session is session is not None
        assert session.options.lobby is lobby
        updates: list[Update] = []

        async def main() -> None:
            session.start(updates.append)
            try:
                await settle(lambda: any(isinstance(u, StateUpdate) for u in updates) or (
                    session.table != "" and any(isinstance(u, Notice) for u in updates)))
            finally:
                session.close()
                await session.wait_closed()

        asyncio.run(main())
        said.extend(u.text for u in updates if isinstance(u, Notice))
        return 0

    monkeypatch.setattr(launch, "run_screen", screen)
    assert launch.play(launch.PlayOptions(bots=bots, bot_delay=0.0, home=tmp_path)) == 0
    friends = [line for line in said if line.startswith("friends")]
    if bots == 2:
        assert friends == []
    else:
        (line,) = friends
        assert re.fullmatch(r"friends on this computer join: tongits connect 127\.0\.0\.1:\d+ "
                            r"--name NAME", line) and len(line) < 80


@pytest.mark.parametrize("listen", ["0.0.0.0", "10.1.2.3", "fd00::5"])
def test_play_on_the_lan_names_the_address_friends_connect_to(listen: str) -> None:
    """``tongits play --listen ADDRESS`` tells friends where to connect: the address it listens
    on, or for every address of the machine the one the server's own invite page gives (the
    terminal named the default route's address even when told to listen on another)."""
    from tongits.client.tui.launch import _friends_join
    from tongits.server.net.web import browser_address

    notice = _friends_join(listen, 7777, 1)
    assert notice is not None
    host = browser_address(listen, 7777, tls=False).removeprefix("http://").removesuffix("/")
    assert notice.text == (f"friends join: tongits connect {host} --name NAME "
                           "(or tongits discover)")
    if listen != "0.0.0.0":
        assert listen in host


@pytest.mark.parametrize("argv", [
    ["connect", "127.0.0.1:7777", "--name", "Ana", "--password", "pw"],
    ["bot", "greedy", "--connect", "127.0.0.1:7777", "--password", "pw"],
    ["ladder", "127.0.0.1:7777", "--password", "pw"],
])
def test_a_password_on_the_command_line_is_refused_in_words(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--password pw`` was taken for ``--password-file pw`` (argparse takes a prefix of an
    option for it): "[Errno 2] No such file or directory: 'pw'", or, from ``tongits bot``,
    only "tongits bot: 2"."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "never given on the command line" in err and "--password-file FILE" in err
    assert "Errno" not in err


def test_a_password_file_that_is_not_there_is_named_by_tongits_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An OSError's first argument is its errno: the bot said "tongits bot: 2"."""
    missing = tmp_path / "password"
    assert main(["bot", "greedy", "--connect", "127.0.0.1:7777",
                 "--password-file", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tongits bot: ") and "No such file or directory" in err
    assert str(missing) in err
