"""Options several ``tongits`` commands share: how to reach a server (``--tls``) and where its
password comes from (``--password-file``, else ``$TONGITS_PASSWORD``)."""

from __future__ import annotations

import argparse


def add_transport_options(parser: argparse.ArgumentParser) -> None:
    """``--tls`` and ``--password-file``, and ``--password`` refused in words: argparse took
    ``--password pw`` for ``--password-file pw`` (a prefix of it) and said only "[Errno 2] No
    such file or directory: 'pw'"."""
    parser.add_argument("--tls", action="store_true", help="speak TLS (same as tls://HOST)")
    parser.add_argument(
        "--password-file",
        metavar="FILE",
        help="file holding the server password (default: $TONGITS_PASSWORD; never give a "
        "password on the command line)",
    )
    parser.add_argument("--password", type=refuse_password, help=argparse.SUPPRESS)


def refuse_password(_text: str) -> str:
    """``--password``'s value is never taken: ``ps`` shows a command line to every user."""
    raise argparse.ArgumentTypeError(
        "a password is never given on the command line (every user of the machine can read "
        "it there): put it in a file and give --password-file FILE, or set TONGITS_PASSWORD")
