"""What ``tongits connect`` settles on the plain terminal before its screen opens: a password
is not sent in clear to a server that speaks TLS unless the person says so, and Ctrl-C or
Ctrl-D at a question ends the command with one line, no traceback.

``dial.settle`` runs its own ``trio.run``, so the server runs in a thread of its own, on
127.0.0.1 (port 0)."""

from __future__ import annotations

import builtins
import getpass
import logging
import shlex
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from server_support import quick_config
from tongits.client.tls import offers_tls
from tongits.client.tui import dial
from tongits.client.tui.dial import DialError, Target, settle
from tongits.client.tui.lobby import connect
from tongits.client.tui.net import invite_words
from tongits.protocol.transport import Endpoint, Invite
from tongits.server import MemoryJournal, Server
from tongits.server.net.tls import ServerTLS

PASSWORD = "sesame"


@contextmanager
def running_server(tls: ServerTLS | None, password: str | None = PASSWORD) -> Iterator[Server]:
    """A server on 127.0.0.1 in a thread; ``server.config.port`` is the port it has bound."""
    started = threading.Event()
    box: dict[str, Any] = {}

    async def serve() -> None:
        server = Server(quick_config(), MemoryJournal(), tls=tls, password=password)
        async with trio.open_nursery() as nursery:
            (listener, *_) = await nursery.start(server.serve)
            box.update(server=server, port=listener.socket.getsockname()[1],
                       token=trio.lowlevel.current_trio_token(), scope=nursery.cancel_scope)
            started.set()

    thread = threading.Thread(target=trio.run, args=(serve,), daemon=True)
    thread.start()
    assert started.wait(30)
    box["server"].config = quick_config(port=box["port"])  # it asked for port 0
    try:
        yield box["server"]
    finally:
        trio.from_thread.run_sync(box["scope"].cancel, trio_token=box["token"])
        thread.join(30)


@pytest.fixture
def self_signed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServerTLS:
    """A self-signed certificate for the server; the client keeps its pins under tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "client"))
    monkeypatch.delenv("TONGITS_PASSWORD", raising=False)
    return ServerTLS.self_signed(tmp_path / "server")


def answers(monkeypatch: pytest.MonkeyPatch, *replies: str | type[BaseException]) -> list[str]:
    """The person at the terminal: ``input`` and ``getpass`` give ``replies`` in order (an
    exception class is raised: ``KeyboardInterrupt`` for Ctrl-C, ``EOFError`` for Ctrl-D);
    returns the questions asked."""
    asked: list[str] = []
    queue = list(replies)

    def reply(question: str = "") -> str:
        asked.append(question)
        answer = queue.pop(0)
        if isinstance(answer, type):
            raise answer()
        return answer

    monkeypatch.setattr(builtins, "input", reply)
    monkeypatch.setattr(getpass, "getpass", reply)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    return asked


def plain(server: Server) -> Target:
    return Target(Endpoint("127.0.0.1", server.config.port))


def test_the_probe_tells_a_tls_server_from_a_plain_one(
    self_signed: ServerTLS, caplog: pytest.LogCaptureFixture,
) -> None:
    """The plain server's log says why a handshake came: each friend's terminal asks before
    a password goes in clear (the line said only "start it with --tls-cert…", a mistake to
    the host at every arrival)."""
    with running_server(self_signed) as tls_server, running_server(None) as plain_server:
        assert trio.run(offers_tls, plain(tls_server).endpoint)
        with caplog.at_level(logging.INFO, logger="tongits.server"):
            assert not trio.run(offers_tls, plain(plain_server).endpoint)
    said = [r.getMessage() for r in caplog.records if "TLS handshake" in r.getMessage()]
    assert len(said) == 1 and "tongits connect tries one before it sends a password" in said[0]


def test_a_password_is_not_sent_in_clear_to_a_tls_server_unless_the_person_says_so(
    self_signed: ServerTLS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TONGITS_PASSWORD", "a wrong guess")  # counted by the server if sent
    with running_server(self_signed) as server:
        asked = answers(monkeypatch, "")
        with pytest.raises(DialError, match="password not sent; connect with TLS: tongits "
                           f"connect tls://127.0.0.1:{server.config.port}"):
            settle(plain(server), "Ana", None)
        assert asked == ["Send the password in clear anyway? [y/N] "]
        assert not server.gate._failures  # nothing reached the server

        monkeypatch.setenv("TONGITS_PASSWORD", PASSWORD)
        answers(monkeypatch, "y")
        assert settle(plain(server), "Ana", None) == PASSWORD


def test_a_typed_password_is_warned_about_before_it_is_typed(
    self_signed: ServerTLS, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running_server(self_signed) as server:
        asked = answers(monkeypatch, "yes", PASSWORD)
        assert settle(plain(server), "Ana", None) == PASSWORD
        assert asked == ["Send the password in clear anyway? [y/N] ",
                         f"password of 127.0.0.1:{server.config.port}: "]


def test_no_question_for_a_server_without_tls_or_over_tls(
    self_signed: ServerTLS, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TONGITS_PASSWORD", PASSWORD)
    asked = answers(monkeypatch, "y")  # the trust question only
    with running_server(None) as plain_server:
        assert settle(plain(plain_server), "Ana", None) == PASSWORD
    with running_server(self_signed) as tls_server:
        endpoint = Endpoint("127.0.0.1", tls_server.config.port, tls=True)
        assert settle(Target(endpoint), "Ana", None) == PASSWORD
    assert asked == ["Trust this certificate and connect? [y/N] "]


@pytest.mark.parametrize(("key", "status"), [(KeyboardInterrupt, 130), (EOFError, 1)])
@pytest.mark.parametrize("question", ["trust", "password", "in clear"])
def test_ctrl_c_or_ctrl_d_at_a_question_ends_connect_with_one_line(
    self_signed: ServerTLS, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], key: type[BaseException], status: int, question: str,
) -> None:
    with running_server(self_signed) as server:
        tls_target = Target(Endpoint("127.0.0.1", server.config.port, tls=True))
        cases: dict[str, tuple[Target, list[str | type[BaseException]]]] = {
            "trust": (tls_target, [key]),
            "password": (tls_target, ["y", key]),  # trusted, then the password asked
            "in clear": (plain(server), [key]),
        }
        target, replies = cases[question]
        answers(monkeypatch, *replies)
        assert connect(target, "Ana") == status
    err = capsys.readouterr().err
    assert err.endswith("tongits connect: cancelled\n") and "Traceback" not in err


def test_the_trust_command_asks_only_to_trust(
    self_signed: ServerTLS, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tongits trust`` pins and connects nowhere: its question promised a connection."""
    with running_server(self_signed) as server:
        asked = answers(monkeypatch, "y")
        assert dial.trust(f"tls://127.0.0.1:{server.config.port}", None) == 0
    assert asked == ["Trust this certificate? [y/N] "]
    assert capsys.readouterr().out.startswith(f"trusted tls://127.0.0.1:{server.config.port}: ")


def test_ctrl_c_at_the_trust_command_is_one_line(
    self_signed: ServerTLS, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_server(self_signed) as server:
        answers(monkeypatch, KeyboardInterrupt)
        assert dial.trust(f"tls://127.0.0.1:{server.config.port}", None) == 130
    assert capsys.readouterr().err.endswith("tongits trust: cancelled\n")


def test_an_invite_is_handed_out_with_its_browser_form() -> None:
    """The terminal prints a private table's link for ``tongits connect`` and, beside it, the
    same link for a friend's browser: ``https://`` when the server speaks TLS; the password
    (``--invite-password``) in its fragment, which no request carries and the page takes out
    of the address, so that a friend who has only a phone and the link gets in without asking
    the host for it."""
    link = "tongits+tls://play.example.com:7777/t/t3?code=k2pefvcpmq&password=p%2Fw"
    words = invite_words(link)
    # the command to paste into a shell, the link quoted: bare, bash ran 'tongits connect
    # tongits+tls://…?code=…' in the background at its '&' and said '--name: command not found'
    command = words.removeprefix("invite friends: ").partition(" (in a browser")[0]
    assert shlex.split(command) == ["tongits", "connect", link, "--name", "NAME"]
    web = "https://play.example.com:7777/t/t3?code=k2pefvcpmq#password=p%2Fw"
    assert f"(in a browser: {web})" in words
    assert Invite.parse(web) == Invite.parse(
        "tongits+tls://play.example.com:7777/t/t3?code=k2pefvcpmq&password=p%2Fw")
    assert Invite.parse(web).password == "p/w"
    plain = invite_words("tongits://10.0.0.5:7777/t/t1?code=abc")
    assert "(in a browser: http://10.0.0.5:7777/t/t1?code=abc)" in plain
    assert invite_words("garbage") == "invite friends: garbage"
