"""Before the screen opens: where ``tongits connect`` goes, whether its certificate is trusted,
and the server password, all settled on the plain terminal where a person can answer.

``tongits connect`` takes ``HOST[:PORT]``, ``tls://HOST[:PORT]`` or an invite link. It first
opens one connection outside the full screen: a self-signed certificate met for the first time
is shown by its fingerprint and accepted or not (client/tls.py); a changed one is refused with
its warning; a server that wants a password that was not given (in the link, in
``--password-file`` or ``$TONGITS_PASSWORD``) gets it typed, hidden, up to three times. The
screen's session then connects with what was settled.
"""

from __future__ import annotations

import getpass
import sys
from dataclasses import dataclass

import trio
from tongits.protocol import ErrorCode
from tongits.protocol.transport import AddressError, Endpoint, Invite

from ..connection import ServerError, open_connection
from ..sdk import read_password
from ..tls import ClientTLS, TrustError, ask_on_terminal, offered_fingerprint

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
    the password to use."""
    password = (target.invite.password if target.invite else None) or read_password(
        password_file
    )
    tls = ClientTLS(ask=ask_on_terminal)
    for _ in range(PASSWORD_TRIES + 1):
        try:
            trio.run(_probe, target.endpoint, name, tls, password)
            return password
        except ServerError as error:
            if error.code == ErrorCode.TLS_REQUIRED:
                raise DialError(f"{target.endpoint} accepts TLS only: connect to "
                                f"tls://{target.endpoint.hostport}") from None
            if error.code != ErrorCode.BAD_PASSWORD:
                raise DialError(f"{target.endpoint} refused: {error.message}") from None
            if not sys.stdin.isatty():
                raise DialError(f"{target.endpoint}: {error.message} (set TONGITS_PASSWORD "
                                "or give --password-file)") from None
            if password is not None:
                print(f"{target.endpoint}: {error.message}", file=sys.stderr)
            password = getpass.getpass(f"password of {target.endpoint}: ")
        except TrustError as error:
            raise DialError(str(error)) from None
        except (OSError, trio.BrokenResourceError, trio.TooSlowError) as error:
            raise DialError(f"cannot reach {target.endpoint}: {error}") from None
    raise DialError(f"{target.endpoint}: no valid password after {PASSWORD_TRIES} tries")


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
        if not ask_on_terminal(endpoint, offered, "you asked to trust it"):
            print("not trusted", file=sys.stderr)
            return 1
    tls.known.pin(endpoint, offered)
    print(f"trusted {endpoint}: {offered} (kept in {tls.known.path})")
    return 0
