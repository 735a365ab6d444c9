"""The client's side of TLS: verified certificates, and trust on first use for self-signed ones.

``open_stream`` opens a TCP connection to an ``Endpoint`` and, for ``tls://`` addresses, runs
the TLS handshake:

1. A server already pinned in the known-servers file must show the pinned certificate: the
   same SHA-256 fingerprint, or the connection is refused with ``CertificateChanged``, whose
   message is the warning to show (it says how to accept a certificate the host changed on
   purpose: ``tongits trust tls://HOST:PORT``).
2. Otherwise the certificate is verified as usual (public authorities, host name). That is
   the whole check for a server with, say, a Let's Encrypt certificate.
3. A certificate that fails verification (self-signed, typically) is shown by its fingerprint
   to ``ask``; if ``ask`` accepts, it is pinned, as SSH does with host keys. Without ``ask``
   (bots, scripts) it is refused with ``CertificateUnknown``.

Pins live in ``known_servers`` of the user's data directory (``user_files.data_dir``:
``~/.local/share/tongits/known_servers`` on Linux), one ``HOST:PORT SHA256:…`` line per
server, the file readable by its owner only.
"""

from __future__ import annotations

import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio
from tongits.protocol.transport import Endpoint, fingerprint

from .user_files import data_dir, write_private

#: Decides about an unverified certificate: (server, fingerprint, why verification failed).
Ask = Callable[[Endpoint, str, str], bool]


class TrustError(Exception):
    """The server's certificate is not trusted; ``str()`` is the message for the user."""


class CertificateUnknown(TrustError):
    """A certificate no authority vouches for, and nobody accepted it."""

    def __init__(self, endpoint: Endpoint, offered: str, reason: str) -> None:
        super().__init__(
            f"the certificate of {endpoint} is not verified ({reason}); its fingerprint is "
            f"{offered}. If the host confirms that fingerprint, accept it with: "
            f"tongits trust {endpoint}"
        )
        self.endpoint, self.offered = endpoint, offered


class CertificateChanged(TrustError):
    """The server shows another certificate than the one pinned for it."""

    def __init__(self, endpoint: Endpoint, pinned: str, offered: str, where: Path) -> None:
        super().__init__(
            f"WARNING: the TLS certificate of {endpoint} has CHANGED.\n"
            f"  trusted: {pinned}\n"
            f"  offered: {offered}\n"
            "Someone may be intercepting the connection, or the host made a new certificate.\n"
            "The connection was refused. If the host changed it on purpose, check the new\n"
            "fingerprint with them (the server logs it at start), then accept it with:\n"
            f"  tongits trust {endpoint}\n"
            f"(pins are kept in {where})"
        )
        self.endpoint, self.pinned, self.offered = endpoint, pinned, offered


class KnownServers:
    """The pinned fingerprints of self-signed servers, by ``HOST:PORT``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "known_servers"

    def _read(self) -> dict[str, str]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        pins: dict[str, str] = {}
        for line in text.splitlines():
            words = line.split()
            if len(words) >= 2 and not line.startswith("#"):
                pins[words[0]] = words[1]
        return pins

    def get(self, endpoint: Endpoint) -> str | None:
        return self._read().get(endpoint.hostport)

    def pin(self, endpoint: Endpoint, print_: str) -> None:
        """Trust ``print_`` for ``endpoint`` from now on (replacing an older pin)."""
        pins = self._read()
        pins[endpoint.hostport] = print_
        write_private(self.path, "".join(f"{key} {value}\n"
                                         for key, value in sorted(pins.items())))


@dataclass(slots=True)
class ClientTLS:
    """How to trust servers. ``context`` verifies certificates (default: the system's
    authorities; a test passes one that trusts its own CA); ``known`` holds the pins; ``ask``
    decides about an unverified certificate (None refuses it)."""

    context: ssl.SSLContext | None = None
    known: KnownServers = field(default_factory=KnownServers)
    ask: Ask | None = None


async def open_stream(
    endpoint: Endpoint, tls: ClientTLS | None = None
) -> trio.abc.Stream:
    """A connected stream to ``endpoint``: plain TCP, or TLS checked as the module says.
    Raises ``TrustError`` for a certificate that is not trusted, ``OSError`` or
    ``trio.BrokenResourceError`` when the server cannot be reached or the handshake fails."""
    if not endpoint.tls:
        return await trio.open_tcp_stream(endpoint.host, endpoint.port)
    tls = tls or ClientTLS()
    pinned = tls.known.get(endpoint)
    reason = "pinned"
    if pinned is None:
        verified = tls.context or ssl.create_default_context()
        try:
            return await _handshake(endpoint, verified)
        except trio.BrokenResourceError as error:
            cause = error.__cause__
            if not isinstance(cause, ssl.SSLCertVerificationError):
                raise
            reason = cause.verify_message or str(cause)
    stream = await _handshake(endpoint, _unverified())
    der: bytes = stream.getpeercert(binary_form=True) or b""
    offered = fingerprint(der)
    if pinned is not None:
        if offered == pinned:
            return stream
        await trio.aclose_forcefully(stream)
        raise CertificateChanged(endpoint, pinned, offered, tls.known.path)
    try:
        trusted = tls.ask is not None and tls.ask(endpoint, offered, reason)
    except BaseException:  # the person left the question (Ctrl-C, Ctrl-D)
        await trio.aclose_forcefully(stream)
        raise
    if trusted:
        tls.known.pin(endpoint, offered)
        return stream
    await trio.aclose_forcefully(stream)
    raise CertificateUnknown(endpoint, offered, reason)


async def _handshake(
    endpoint: Endpoint, context: ssl.SSLContext
) -> trio.SSLStream[trio.SocketStream]:
    tcp = await trio.open_tcp_stream(endpoint.host, endpoint.port)
    stream = trio.SSLStream(tcp, context, server_hostname=endpoint.host)
    try:
        await stream.do_handshake()
    except BaseException:
        await trio.aclose_forcefully(tcp)
        raise
    return stream


def _unverified() -> ssl.SSLContext:
    """A context that accepts any certificate: the caller checks its fingerprint instead."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


#: Seconds ``offers_tls`` waits for a TLS handshake before it takes the answer as no.
TLS_PROBE_WAIT = 5.0


async def offers_tls(endpoint: Endpoint) -> bool:
    """Whether the server at ``endpoint`` (a plain address) also speaks TLS on its port: a
    TLS handshake is tried, trusting nothing and sending nothing after it. A tongits server
    without a certificate closes a connection that starts with a TLS record."""
    with trio.move_on_after(TLS_PROBE_WAIT):
        try:
            stream = await _handshake(endpoint, _unverified())
        except (OSError, trio.BrokenResourceError):
            return False
        await trio.aclose_forcefully(stream)
        return True
    return False


async def offered_fingerprint(endpoint: Endpoint) -> str:
    """The fingerprint of the certificate ``endpoint`` shows now (``tongits trust``)."""
    stream = await _handshake(endpoint, _unverified())
    der: bytes = stream.getpeercert(binary_form=True) or b""
    await trio.aclose_forcefully(stream)
    return fingerprint(der)


def ask_on_terminal(endpoint: Endpoint, offered: str, reason: str,
                    question: str = "Trust this certificate and connect?") -> bool:
    """Ask the person at the terminal whether to trust a certificate (False without one);
    ``question`` says what a yes does (``tongits trust`` only pins, it connects nowhere).
    Ctrl-C and Ctrl-D (``KeyboardInterrupt``, ``EOFError``) leave the question: the caller
    ends what it was doing (``tui/dial.py`` says "cancelled")."""
    if not sys.stdin.isatty():
        return False
    print(
        f"The certificate of {endpoint} is not verified by any authority ({reason}).\n"
        f"Its fingerprint is\n  {offered}\n"
        "Compare it with the one the host sees (tongits-server logs it at start).",
        file=sys.stderr,
    )
    answer = input(f"{question} [y/N] ")  # Ctrl-D: EOFError, a cancel
    while (trusted := read_trust(answer, offered)) is None:
        answer = input("Please type y, n, or the fingerprint the host sent you: ")
    return trusted


def read_trust(answer: str, offered: str) -> bool | None:
    """What an answer to the trust question says: y or yes (or the fingerprint itself, pasted
    from the host's message, as SSH takes it) trusts; n, no or nothing does not; anything else
    (``yes please``, a typo, another fingerprint) is no answer, and the question is asked again
    rather than taken for a no that ends the program."""
    said = answer.strip().lower()
    if said in ("y", "yes") or said == offered.lower():
        return True
    if said in ("", "n", "no"):
        return False
    return None
