"""TLS on the server's one port: the certificate, its reload, the self-signed fallback.

A connection whose first byte is ``0x16`` (a TLS record, protocol/transport.py) is wrapped in
a ``trio.SSLStream`` with the current context; the bytes already read for the sniffing are
replayed into it first (``Replayed``). The context is rebuilt by ``reload`` (on SIGHUP): a
renewed certificate (Let's Encrypt renews every 60-90 days) is served to new connections
without a restart, and open ones keep theirs.

``--tls-self-signed`` makes an ECDSA P-256 key and a ten-year certificate in
``DATA_DIR/tls/`` on first start (directory 0700, key 0600) and reuses them afterwards, so the
fingerprint clients pinned on first use stays valid across restarts.
"""

from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

import trio
from tongits.protocol.transport import fingerprint

log = logging.getLogger("tongits.server")


class TLSSetupError(Exception):
    """The certificate or key cannot be loaded or made; ``str()`` says which file and why."""


@dataclass(slots=True)
class ServerTLS:
    """The certificate files and the context made from them; ``fingerprint`` is the
    certificate's (``SHA256:…``), for the log and for clients that pin it."""

    cert: Path
    key: Path
    context: ssl.SSLContext
    fingerprint: str

    @classmethod
    def from_files(cls, cert: str | Path, key: str | Path) -> ServerTLS:
        cert, key = Path(cert), Path(key)
        context, print_ = _load(cert, key)
        return cls(cert, key, context, print_)

    @classmethod
    def self_signed(cls, data_dir: str | Path, common_name: str = "tongits") -> ServerTLS:
        """The certificate kept in ``data_dir/tls`` (made on first use)."""
        cert, key = ensure_self_signed(Path(data_dir) / "tls", common_name)
        return cls.from_files(cert, key)

    def reload(self) -> bool:
        """Read the files again; True if the certificate changed. A broken renewal (a missing
        or mismatched file) is logged and the old certificate kept."""
        try:
            context, print_ = _load(self.cert, self.key)
        except TLSSetupError as error:
            log.error("TLS reload failed, keeping the old certificate: %s", error)
            return False
        changed = print_ != self.fingerprint
        self.context, self.fingerprint = context, print_
        log.info("TLS certificate %s (%s): %s", "reloaded" if changed else "unchanged",
                 self.cert, print_)
        return changed

    def wrap(
        self, stream: trio.abc.Stream, head: bytes | bytearray
    ) -> trio.SSLStream[trio.abc.Stream]:
        """The server side of TLS over ``stream``, whose first bytes ``head`` were already
        read."""
        return trio.SSLStream(Replayed(stream, head), self.context, server_side=True)


def _load(cert: Path, key: Path) -> tuple[ssl.SSLContext, str]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
        der = ssl.PEM_cert_to_DER_cert(cert.read_text())
    except (OSError, ssl.SSLError, ValueError) as error:
        raise TLSSetupError(f"cannot load certificate {cert} with key {key}: {error}") from None
    return context, fingerprint(der)


def ensure_self_signed(directory: Path, common_name: str) -> tuple[Path, Path]:
    """``(cert.pem, key.pem)`` in ``directory``, made if absent; the key is readable by its
    owner only."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    if cert.exists() and key.exists():
        return cert, key
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    try:
        # the data directory too: mkdir's mode is the last folder's only (the others umask's)
        directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise TLSSetupError(f"cannot make {directory}: {error}") from None
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64] or "tongits")])
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    hostname = socket.gethostname()
    if hostname and hostname != "localhost":
        names.append(x509.DNSName(hostname))
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    key_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key_pem)
        cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    except OSError as error:
        raise TLSSetupError(f"cannot write the self-signed certificate: {error}") from None
    log.info("made a self-signed certificate in %s", directory)
    return cert, key


class Replayed(trio.abc.Stream):
    """``stream`` with ``head`` put back in front of what it receives: the server reads a
    connection's first bytes to tell TLS from plain before anything owns the stream."""

    def __init__(self, stream: trio.abc.Stream, head: bytes | bytearray) -> None:
        self.stream = stream
        self._head = bytes(head)

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if self._head:
            size = len(self._head) if max_bytes is None else max_bytes
            data, self._head = self._head[:size], self._head[size:]
            await trio.lowlevel.checkpoint()
            return data
        return await self.stream.receive_some(max_bytes)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.stream.aclose()
