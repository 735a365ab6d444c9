"""Who may sit down: the server password.

The password comes from ``--password-file FILE`` or the ``TONGITS_PASSWORD`` variable, never
from the command line (``ps`` shows every process's arguments to every user). ``hello`` carries
it; a wrong or missing one is refused with ``bad_password`` and the connection is closed.

Guessing is made slow per address: after ``FREE_FAILURES`` failures within ``FORGET_AFTER``
seconds, every further ``hello`` from that address waits ``0.5 s × 2^(n - FREE_FAILURES)``
(at most ``MAX_DELAY``) before its password is even looked at, right or wrong, so parallel
connections do not get around it (the per-address connection limit bounds those). Passwords
are compared as SHA-256 digests with ``hmac.compare_digest``: the time taken tells nothing
about the password, not even its length. The password is never logged, nor the one given.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import trio
from tongits.protocol import ErrorCode, ProtocolError

log = logging.getLogger("tongits.server")

ENV_VARIABLE = "TONGITS_PASSWORD"
FREE_FAILURES = 3
MAX_DELAY = 8.0
FORGET_AFTER = 600.0
#: Addresses remembered at most (the oldest failures are forgotten first beyond that).
MAX_TRACKED = 10_000


def load_password(path: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The server password: the first line of ``path`` if given, else ``$TONGITS_PASSWORD``,
    else None (no password). An empty password is refused as a mistake."""
    env = os.environ if environ is None else environ
    if path:
        text = Path(path).read_text(encoding="utf-8")
        password = text.splitlines()[0] if text else ""
        where = path
    elif env.get(ENV_VARIABLE) is not None:
        password, where = env[ENV_VARIABLE], ENV_VARIABLE
    else:
        return None
    if not password.strip():
        raise ValueError(f"the server password in {where} is empty")
    return password


@dataclass(slots=True)
class _Failures:
    count: int
    last: float


class PasswordGate:
    """Checks ``hello``'s password; ``password`` None lets everyone in."""

    def __init__(self, password: str | None) -> None:
        self._digest = _digest(password) if password is not None else None
        self._failures: dict[str, _Failures] = {}

    @property
    def required(self) -> bool:
        return self._digest is not None

    def delay(self, host: str) -> float:
        """Seconds the next attempt from ``host`` waits."""
        seen = self._failures.get(host)
        if seen is None or trio.current_time() - seen.last > FORGET_AFTER:
            return 0.0
        extra = seen.count - FREE_FAILURES
        return 0.0 if extra < 0 else min(MAX_DELAY, 0.5 * 2**extra)

    async def check(self, host: str, given: str | None) -> None:
        """Return if ``given`` is the password; raise ``bad_password`` after the address's
        delay otherwise."""
        if self._digest is None:
            return
        wait = self.delay(host)
        if wait:
            await trio.sleep(wait)
        if given is not None and hmac.compare_digest(_digest(given), self._digest):
            self._failures.pop(host, None)
            return
        self._failed(host)
        if given is None:
            raise ProtocolError(ErrorCode.BAD_PASSWORD,
                                "this server needs a password: give it in hello.password")
        raise ProtocolError(ErrorCode.BAD_PASSWORD, "wrong server password")

    def _failed(self, host: str) -> None:
        now = trio.current_time()
        seen = self._failures.get(host)
        if seen is None or now - seen.last > FORGET_AFTER:
            seen = self._failures[host] = _Failures(0, now)
        seen.count += 1
        seen.last = now
        log.info("wrong or missing server password from %s (%d in a row)", host, seen.count)
        if len(self._failures) > MAX_TRACKED:
            oldest = min(self._failures, key=lambda h: self._failures[h].last)
            del self._failures[oldest]


def _digest(password: str) -> bytes:
    return hashlib.sha256(password.encode("utf-8")).digest()
