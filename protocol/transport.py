"""Where a server is and how to reach it, as text: addresses, invite links, certificate
fingerprints (sans-IO, like the rest of the protocol).

* An address is ``HOST``, ``HOST:PORT``, ``[V6]:PORT``, or any of these after ``tls://`` (the
  connection then starts with a TLS handshake on the same port, docs/PROTOCOL.md "Transport").
* An invite link, ``tongits://HOST:PORT/t/TABLE?code=CODE``, or ``tongits+tls://…`` for a
  server that speaks TLS, names a private table and its join code; the server password rides in
  ``&password=…`` only when the host asked for it (``tongits-server --invite-password``). The
  same link in browser form, ``http://HOST:PORT/t/TABLE?code=CODE`` (``https://`` for TLS), is
  the address of the page that opens into the table (server/net/web.py), and means the same;
  its password rides in the fragment, ``#password=…``, which a browser never sends.
* A certificate's fingerprint is ``SHA256:`` and the SHA-256 of its DER bytes in hex pairs, the
  form the server logs and the client shows before trusting a self-signed certificate.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlencode, urlsplit

DEFAULT_PORT = 7777
#: The first byte of every TLS record, so of a ClientHello: a server tells a TLS connection
#: from a plain one by it (a binary frame starts with 0x00, text mode with a printable byte).
TLS_RECORD = 0x16

INVITE_SCHEME = "tongits"
INVITE_TLS_SCHEME = "tongits+tls"
#: The browser form of an invite link: scheme -> (TLS, the port when the link names none).
WEB_SCHEMES = {"http": (False, 80), "https": (True, 443)}


class AddressError(ValueError):
    """An address or invite link that cannot be read; ``str()`` names it."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A server: ``host``, ``port`` and whether the connection speaks TLS."""

    host: str
    port: int = DEFAULT_PORT
    tls: bool = False

    @classmethod
    def parse(cls, text: str, default_port: int = DEFAULT_PORT, *, tls: bool = False) -> Endpoint:
        """``[tls://]HOST[:PORT]``; ``tls`` True forces TLS (the ``--tls`` flag)."""
        rest = text.strip()
        if rest.lower().startswith("tls://"):
            tls, rest = True, rest[len("tls://"):]
        elif "://" in rest:
            raise AddressError(f"not a server address: {text!r} (use HOST:PORT or tls://HOST)")
        rest = rest.rstrip("/")
        if rest.startswith("["):
            host, sep, tail = rest[1:].partition("]")
            if not sep or (tail and not tail.startswith(":")):
                raise AddressError(f"not a server address: {text!r}")
            port_text = tail[1:]
        elif rest.count(":") == 1:
            host, _, port_text = rest.partition(":")
        else:  # a bare host, or a bare IPv6 address
            host, port_text = rest, ""
        if port_text and (not port_text.isdigit() or not 0 < int(port_text) < 65536):
            raise AddressError(f"bad port in {text!r}")
        return cls(host or "127.0.0.1", int(port_text) if port_text else default_port, tls)

    @property
    def hostport(self) -> str:
        """``HOST:PORT`` (``[V6]:PORT``): the key of a trusted certificate."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"tls://{self.hostport}" if self.tls else self.hostport


@dataclass(frozen=True, slots=True)
class Invite:
    """An invite link: the server, a table and its join code (and the password if given)."""

    endpoint: Endpoint
    table: str
    code: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, link: str) -> Invite:
        try:
            parts = urlsplit(link.strip())
            port = parts.port
        except ValueError as error:
            raise AddressError(f"not an invite link: {link!r} ({error})") from None
        scheme = parts.scheme.lower()
        web_tls, default_port = WEB_SCHEMES.get(scheme, (False, DEFAULT_PORT))
        if (scheme not in (INVITE_SCHEME, INVITE_TLS_SCHEME, *WEB_SCHEMES)
                or not parts.hostname):
            raise AddressError(f"not an invite link: {link!r}")
        segments = [s for s in parts.path.split("/") if s]
        if len(segments) != 2 or segments[0] != "t":
            raise AddressError(f"an invite link ends in /t/TABLE: {link!r}")
        query = parse_qs(parts.query)
        # the password: in the browser form's fragment, or in the query of either form
        passwords = parse_qs(parts.fragment).get("password") or query.get("password") or []
        tls = (scheme == INVITE_TLS_SCHEME or web_tls
               or query.get("tls", [""])[0] in ("1", "true", "yes"))
        return cls(
            Endpoint(parts.hostname, port or default_port, tls),
            segments[1],
            query.get("code", [None])[0],
            passwords[0] if passwords else None,
        )

    @staticmethod
    def looks_like(text: str) -> bool:
        """Whether ``text`` is meant as an invite link (rather than an address)."""
        return text.strip().lower().startswith(
            (INVITE_SCHEME + "://", INVITE_TLS_SCHEME + "://", "http://", "https://"))

    def browser(self) -> str:
        """The same link for a browser, ``https://`` over TLS (else ``http://``): the page the
        server serves on the same port opens into the table. The password, if the link has
        one, goes in the fragment (``#password=…``): a browser sends no fragment to the server
        (nor to a proxy's log), and the page takes it out of the address as soon as it has
        read it, so the address bar and the history keep none; a friend with only the link on
        a phone gets in without asking the host for it."""
        tail = f"?{urlencode({'code': self.code}, quote_via=quote)}" if self.code else ""
        if self.password:
            tail += f"#{urlencode({'password': self.password}, quote_via=quote)}"
        scheme = "https" if self.endpoint.tls else "http"
        return f"{scheme}://{self.endpoint.hostport}/t/{quote(self.table, safe='')}{tail}"

    def __str__(self) -> str:
        scheme = INVITE_TLS_SCHEME if self.endpoint.tls else INVITE_SCHEME
        query = {k: v for k, v in (("code", self.code), ("password", self.password)) if v}
        tail = f"?{urlencode(query, quote_via=quote)}" if query else ""
        return f"{scheme}://{self.endpoint.hostport}/t/{quote(self.table, safe='')}{tail}"


def fingerprint(der: bytes) -> str:
    """``SHA256:AB:CD:…`` of a certificate's DER bytes."""
    digest = hashlib.sha256(der).hexdigest().upper()
    return "SHA256:" + ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))
