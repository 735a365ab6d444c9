"""Before the screen opens: where ``tongits connect`` goes, whether its certificate is trusted,
and the server password, all settled on the plain terminal where a person can answer.

``tongits connect`` takes ``HOST[:PORT]``, ``tls://HOST[:PORT]`` or an invite link. It first
opens one connection outside the full screen: a self-signed certificate met for the first time
is shown by its fingerprint and accepted or not (client/tls.py); a changed one is refused with
its warning; a server that wants a password that was not given (in the link, in
``--password-file`` or ``$TONGITS_PASSWORD``) gets it typed, hidden, up to three times; a
password about to go in clear to a server that also speaks TLS is sent only if the person says
so. Ctrl-C or Ctrl-D at any of these questions ends ``connect`` with "cancelled". The
screen's session then connects with what was settled.
"""

from __future__ import annotations

import contextlib
import getpass
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import trio
from tongits.protocol import ErrorCode
from tongits.protocol.transport import AddressError, Endpoint, Invite

from ..connection import ServerError, open_connection
from ..sdk import read_password
from ..tls import ClientTLS, TrustError, ask_on_terminal, offered_fingerprint, offers_tls

#: Password prompts before giving up.
PASSWORD_TRIES = 3


class DialError(Exception):
    """The server cannot be used; ``str()`` is the message for the terminal."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where to connect, and the invite's table and code if a link was given."""

    endpoint: Endpoint
    invite: Invite | None = None

    @classmethod
    def parse(cls, address: str, *, tls: bool = False) -> Target:
        try:
            if Invite.looks_like(address):
                invite = Invite.parse(address)
                endpoint = invite.endpoint
                if tls and not endpoint.tls:
                    endpoint = Endpoint(endpoint.host, endpoint.port, True)
                return cls(endpoint, invite)
            return cls(Endpoint.parse(address, tls=tls))
        except AddressError as error:
            raise DialError(str(error)) from None


def settle(target: Target, name: str, password_file: str | None) -> str | None:
    """Check the certificate and find the password (asking the person if need be); returns
    the password to use. Before a password leaves on a plain connection to a server that also
    speaks TLS, the person is warned and asked (``InClearCheck``). Ctrl-C or Ctrl-D at any
    question raises ``Cancelled``."""
    password = (target.invite.password if target.invite else None) or read_password(
        password_file
    )
    tls = ClientTLS(ask=ask_on_terminal)
    in_clear = InClearCheck(target.endpoint)
    for _ in range(PASSWORD_TRIES + 1):
        if password is not None:
            in_clear.check()
        try:
            with _cancellable():
                trio.run(_probe, target.endpoint, name, tls, password)
            return password
        except ServerError as error:
            password = _password_again(target.endpoint, error, password is not None, in_clear)
        except TrustError as error:
            raise DialError(str(error)) from None
        except (OSError, trio.BrokenResourceError, trio.TooSlowError) as error:
            raise DialError(f"cannot reach {target.endpoint}: {error}") from None
    raise DialError(f"{target.endpoint}: no valid password after {PASSWORD_TRIES} tries")


def _password_again(
    endpoint: Endpoint, error: ServerError, had_one: bool, in_clear: InClearCheck
) -> str:
    """The password typed after ``error`` refused the probe; ``DialError`` if it was refused
    for another reason, or nobody is at the terminal to type it."""
    if error.code == ErrorCode.TLS_REQUIRED:
        raise DialError(f"{endpoint} accepts TLS only: connect to tls://{endpoint.hostport}")
    if error.code != ErrorCode.BAD_PASSWORD:
        raise DialError(f"{endpoint} refused: {error.message}")
    if not sys.stdin.isatty():
        raise DialError(f"{endpoint}: {error.message} (set TONGITS_PASSWORD or give "
                        "--password-file)")
    if had_one:
        print(f"{endpoint}: {error.message}", file=sys.stderr)
    in_clear.check()  # before the person types it
    with _cancellable():
        return getpass.getpass(f"password of {endpoint}: ")


@dataclass(slots=True)
class InClearCheck:
    """Asks once, before a password first leaves on a plain connection to ``endpoint``: if
    the server also speaks TLS (a handshake is tried first, ``offers_tls``), the person is
    told and the password is sent only if they say yes (``DialError`` otherwise). Nothing is
    asked over TLS, nor for a server without TLS (there is no better way to reach it)."""

    endpoint: Endpoint
    done: bool = False

    def check(self) -> None:
        if self.done or self.endpoint.tls:
            return
        self.done = True
        endpoint = self.endpoint
        with _cancellable():
            if not trio.run(offers_tls, endpoint):
                return
            print(f"{endpoint} also speaks TLS, but this connection is plain: the server "
                  "password would cross the network in clear,\nreadable by anyone on the way. "
                  f"Safer: tongits connect tls://{endpoint.hostport}", file=sys.stderr)
            answer = input("Send the password in clear anyway? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            raise DialError(f"password not sent; connect with TLS: tongits connect "
                            f"tls://{endpoint.hostport}")


class Cancelled(DialError):
    """The person left a question with Ctrl-C (``interrupted``) or Ctrl-D."""

    def __init__(self, interrupted: bool) -> None:
        super().__init__("cancelled")
        self.interrupted = interrupted

    @property
    def exit_status(self) -> int:
        """130 after Ctrl-C, as a shell reports a process the interrupt ended; 1 after
        Ctrl-D."""
        return 130 if self.interrupted else 1


@contextlib.contextmanager
def _cancellable() -> Iterator[None]:
    """Turn Ctrl-C and Ctrl-D at a question asked inside into ``Cancelled``, on a fresh line
    (the terminal's cursor is still after the question)."""
    try:
        yield
    except (KeyboardInterrupt, EOFError) as left:
        print(file=sys.stderr)
        raise Cancelled(isinstance(left, KeyboardInterrupt)) from None


async def _probe(endpoint: Endpoint, name: str, tls: ClientTLS, password: str | None) -> None:
    async with open_connection(endpoint.host, endpoint.port, name=name, connect_timeout=10,
                               tls=tls if endpoint.tls else False, password=password) as conn:
        await conn.ping()


def trust(address: str, expected: str | None) -> int:
    """``tongits trust tls://HOST[:PORT]``: pin the certificate the server shows now, after
    the person (or ``--fingerprint``) confirms it; replaces an older pin."""
    try:
        endpoint = Endpoint.parse(address, tls=True)
        offered = trio.run(offered_fingerprint, endpoint)
    except AddressError as error:
        print(f"tongits trust: {error}", file=sys.stderr)
        return 2
    except (OSError, trio.BrokenResourceError) as error:
        print(f"tongits trust: cannot reach {address}: {error}", file=sys.stderr)
        return 1
    tls = ClientTLS()
    pinned = tls.known.get(endpoint)
    if pinned == offered:
        print(f"{endpoint} is already trusted: {offered}")
        return 0
    if expected is not None:
        if expected.strip().upper().removeprefix("SHA256:") != offered.removeprefix("SHA256:"):
            print(f"tongits trust: {endpoint} shows {offered}, not {expected}: not trusted",
                  file=sys.stderr)
            return 1
    else:
        if pinned is not None:
            print(f"{endpoint} was trusted with\n  {pinned}", file=sys.stderr)
        try:
            with _cancellable():
                trusted = ask_on_terminal(endpoint, offered, "you asked to trust it",
                                          "Trust this certificate?")
        except Cancelled as cancelled:
            print("tongits trust: cancelled", file=sys.stderr)
            return cancelled.exit_status
        if not trusted:
            print("not trusted", file=sys.stderr)
            return 1
    tls.known.pin(endpoint, offered)
    print(f"trusted {endpoint}: {offered} (kept in {tls.known.path})")
    return 0
