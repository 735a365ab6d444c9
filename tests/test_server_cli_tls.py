"""``tongits-server`` as a host runs it: TLS flags, the password from the environment, the
fingerprint in the log, SIGHUP, and ``tongits-server status`` on the admin socket."""

from __future__ import annotations

import os
import re
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trio
import trustme
from tongits.client.connection import open_connection
from tongits.client.tls import ClientTLS, KnownServers, open_stream
from tongits.protocol.transport import Endpoint, fingerprint
from tongits.server.net.tls import ServerTLS

CAP = 60.0
PASSWORD = "friday-night"


def wait_for(path: Path, pattern: str, timeout: float = CAP) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text(errors="replace"))
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} never appeared in:\n{path.read_text()}")


@contextmanager
def server(tmp_path: Path, *flags: str) -> Iterator[tuple[int, Path, subprocess.Popen[bytes]]]:
    log = tmp_path / "server.log"
    env = {**os.environ, "TONGITS_PASSWORD": PASSWORD}
    with open(log, "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "tongits.server.cli", "--port", "0", "--db", ":memory:",
             "--discovery", "false", "--data-dir", str(tmp_path / "data"), *flags],
            stdout=err, stderr=subprocess.STDOUT, env=env,
        )
    try:
        port = int(wait_for(log, r"listening on 127\.0\.0\.1:(\d+)").group(1))
        yield port, log, process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(CAP)


def admin(tmp_path: Path, *words: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tongits.server.cli", "--data-dir", str(tmp_path / "data"),
         *words], capture_output=True, text=True, timeout=CAP,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_self_signed_server_logs_its_fingerprint_and_keeps_the_key_private(
    tmp_path: Path,
) -> None:
    with server(tmp_path, "--tls-self-signed", "--tls-required") as (port, log, _):
        logged = wait_for(log, r"fingerprint (SHA256:[0-9A-F:]{95})").group(1)
        key = tmp_path / "data" / "tls" / "key.pem"
        assert oct(key.stat().st_mode & 0o777) == "0o600"
        assert oct((tmp_path / "data").stat().st_mode & 0o777) == "0o700"  # made for the key
        assert ServerTLS.self_signed(tmp_path / "data").fingerprint == logged
        known = KnownServers(tmp_path / "known")
        endpoint = Endpoint("127.0.0.1", port, tls=True)
        known.pin(endpoint, logged)

        async def play() -> list[str]:
            with trio.fail_after(CAP):
                async with open_connection("127.0.0.1", port, name="Ana", password=PASSWORD,
                                           tls=ClientTLS(known=known)) as ana:
                    joined = await ana.create_table("Friday", private=True, bots=0)
                    assert joined.invite is not None
                    return [joined.invite, joined.table]

        invite, table = trio.run(play)
        assert invite.startswith(f"tongits+tls://127.0.0.1:{port}/t/{table}?code=")
        status = admin(tmp_path, "status")
        assert "tls        SHA256:" in status and "(required)" in status
        assert "password   yes" in status
    assert PASSWORD not in log.read_text()


def test_sighup_reloads_a_renewed_certificate(tmp_path: Path) -> None:
    ca = trustme.CA()
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"

    def renew() -> str:
        issued = ca.issue_cert("127.0.0.1")
        issued.cert_chain_pems[0].write_to_path(str(cert))
        issued.private_key_pem.write_to_path(str(key))
        return fingerprint(ssl.PEM_cert_to_DER_cert(cert.read_text()))

    first = renew()
    context = ssl.create_default_context()
    ca.configure_trust(context)
    client = ClientTLS(context=context, known=KnownServers(tmp_path / "known"))

    async def served(port: int) -> str:
        with trio.fail_after(CAP):
            stream = await open_stream(Endpoint("127.0.0.1", port, tls=True), client)
            assert isinstance(stream, trio.SSLStream)
            der = stream.getpeercert(binary_form=True)
            await stream.aclose()
            return fingerprint(der)

    flags = ("--tls-cert", str(cert), "--tls-key", str(key))
    with server(tmp_path, *flags) as (port, log, process):
        assert trio.run(served, port) == first
        second = renew()
        process.send_signal(signal.SIGHUP)
        wait_for(log, "TLS certificate reloaded")
        assert trio.run(served, port) == second != first
