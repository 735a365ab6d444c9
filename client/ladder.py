"""``tongits ladder HOST``: a server's ladder standings; ``--register NAME`` makes an account.

The standings are one ``standings`` request (docs/PROTOCOL.md, "The ladder"), printed as a
table best first (``--json``: the reply's players as one JSON line). ``--register NAME`` asks for
an account and keeps its key in the user's key file (``client/accounts.py``), where
``tongits bot --ladder`` and the SDK find it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import trio
from tongits.protocol import LadderStandings
from tongits.protocol.transport import AddressError, Endpoint

from .accounts import AccountKeys
from .cli_options import add_transport_options
from .connection import ConnectionClosed, ServerError, open_connection
from .sdk import read_password, sole_error
from .tls import TrustError

#: Seconds to reach the server.
CONNECT_TIMEOUT = 10.0


def format_standings(page: LadderStandings) -> str:
    """The page as a table, one account a line, best first."""
    lines = [f"{'rank':>4}  {'name':<32}{'rating':>8}{'mu':>8}{'sigma':>7}{'matches':>9}"]
    for p in page.players:
        anchor = f"  (server bot: {p['anchor']})" if p.get("anchor") else ""
        lines.append(
            f"{p['rank']:>4}  {p['name']:<32}{p['rating']:>8.2f}"
            f"{p['mu']:>8.2f}{p['sigma']:>7.2f}{p['matches']:>9}{anchor}"
        )
    shown = f"{page.offset + 1}-{page.offset + len(page.players)}" if page.players else "none"
    more = f"; --offset {page.next} for more" if page.next is not None else ""
    lines.append(f"{shown} of {page.total} accounts{more}")
    return "\n".join(lines)


async def fetch_standings(endpoint: Endpoint, offset: int, limit: int | None,
                          password: str | None) -> LadderStandings:
    try:
        async with open_connection(endpoint.host, endpoint.port, name="ladder",
                                   tls=endpoint.tls, password=password,
                                   connect_timeout=CONNECT_TIMEOUT) as conn:
            return await conn.standings(offset, limit)
    except BaseExceptionGroup as group:  # the connection's nursery wraps what it raises
        raise sole_error(group) from None


async def register_account(endpoint: Endpoint, name: str, password: str | None,
                           keys: AccountKeys) -> str:
    """Register ``name`` at ``endpoint`` and keep its key in ``keys``; the key."""
    try:
        async with open_connection(endpoint.host, endpoint.port, name=name, tls=endpoint.tls,
                                   password=password, connect_timeout=CONNECT_TIMEOUT) as conn:
            registered = await conn.register(name)
    except BaseExceptionGroup as group:
        raise sole_error(group) from None
    keys.save(endpoint.hostport, registered.name, registered.key)
    return registered.key


def run(args: argparse.Namespace) -> int:
    """The ``tongits ladder`` command."""
    try:
        endpoint = Endpoint.parse(args.host)
        if args.tls:
            endpoint = Endpoint(endpoint.host, endpoint.port, tls=True)
        password = read_password(args.password_file)
    except (AddressError, ValueError, OSError) as exc:
        print(f"tongits ladder: {exc}", file=sys.stderr)
        return 2
    try:
        if args.register:
            keys = AccountKeys()
            trio.run(register_account, endpoint, args.register, password, keys)
            print(f"account {args.register} registered at {endpoint.hostport}; its key is kept "
                  f"in {keys.path} (tongits bot --ladder --name {args.register} uses it)")
            return 0
        page = trio.run(fetch_standings, endpoint, args.offset, args.limit, password)
    except ServerError as exc:
        print(f"tongits ladder: the server refused: {exc}", file=sys.stderr)
        return 1
    except (OSError, ConnectionClosed, TrustError, trio.TooSlowError) as exc:
        print(f"tongits ladder: cannot reach {endpoint.hostport}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        out: dict[str, Any] = {"players": page.players, "total": page.total}
        print(json.dumps(out))
    else:
        print(format_standings(page))
    return 0


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ladder = sub.add_parser("ladder", help="a server's ladder standings, or --register NAME")
    ladder.add_argument("host", metavar="HOST[:PORT]", help="the server (tls://HOST for TLS)")
    ladder.add_argument("--register", metavar="NAME", help="make a ladder account, keep its key")
    ladder.add_argument("--offset", type=int, default=0, help="first rank shown, from 0")
    ladder.add_argument("--limit", type=int, help="accounts shown (the server shows 100 at most)")
    ladder.add_argument("--json", action="store_true", help="one JSON line")
    add_transport_options(ladder)
