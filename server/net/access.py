"""Who may sit down: the server password.

The password comes from ``--password-file FILE`` or the ``TONGITS_PASSWORD`` variable, never
from the command line (``ps`` shows every process's arguments to every user). ``hello`` carries
it; a wrong or missing one is refused with ``bad_password`` and the connection is closed.

Guessing is made slow per address, wrong guesses only: the right password is welcomed at
once, so a stranger guessing from behind the same proxy or NAT as the players (one address for
all of them) never locks them out. After ``FREE_FAILURES`` failures within ``FORGET_AFTER``
seconds, each further wrong or missing password from that address is refused only after
``BASE_DELAY × 2^(n - FREE_FAILURES)`` seconds, at most ``MAX_DELAY``; the connection is held
meanwhile, so parallel connections do not get around it (the per-address connection limit
bounds those: ``max_per_address / MAX_DELAY`` guesses a second at most). The count stops at
``MAX_COUNTED`` and the doubling at ``MAX_DELAY``, so no number of failures breaks the
arithmetic. Passwords are compared as SHA-256 digests with ``hmac.compare_digest``: the time
taken tells nothing about the password, not even its length. The password is never logged,
nor the one given.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

import trio
from tongits.protocol import ErrorCode, ProtocolError

log = logging.getLogger("tongits.server")

ENV_VARIABLE = "TONGITS_PASSWORD"
FREE_FAILURES = 3
BASE_DELAY = 0.5
MAX_DELAY = 8.0
#: Doublings after which ``BASE_DELAY`` has reached ``MAX_DELAY``: the exponent never exceeds it
#: (``0.5 * 2**1100`` is no float).
_DOUBLINGS = math.ceil(math.log2(MAX_DELAY / BASE_DELAY))
#: Failures counted per address at most (the log says "at least" beyond it).
MAX_COUNTED = 1_000_000
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
        """Seconds the next wrong password from ``host`` waits for its refusal."""
        seen = self._failures.get(host)
        if seen is None or trio.current_time() - seen.last > FORGET_AFTER:
            return 0.0
        extra = seen.count - FREE_FAILURES
        return 0.0 if extra < 0 else min(MAX_DELAY, BASE_DELAY * 2 ** min(extra, _DOUBLINGS))

    async def check(self, host: str, given: str | None) -> None:
        """Return at once if ``given`` is the password; otherwise count the failure and raise
        ``bad_password`` after the address's delay."""
        if self._digest is None:
            return
        if given is not None and hmac.compare_digest(_digest(given), self._digest):
            return
        wait = self.delay(host)
        self._failed(host)
        if wait:
            await trio.sleep(wait)
        if given is None:
            raise ProtocolError(ErrorCode.BAD_PASSWORD,
                                "this server needs a password: give it in hello.password")
        raise ProtocolError(ErrorCode.BAD_PASSWORD, "wrong server password")

    def _failed(self, host: str) -> None:
        now = trio.current_time()
        seen = self._failures.pop(host, None)
        if seen is None or now - seen.last > FORGET_AFTER:
            seen = _Failures(0, now)
        seen.count = min(seen.count + 1, MAX_COUNTED)
        seen.last = now
        self._failures[host] = seen  # last in the dict: the dict is in order of last failure
        log.info("wrong or missing server password from %s (%s%d in a row)", host,
                 "at least " if seen.count == MAX_COUNTED else "", seen.count)
        if len(self._failures) > MAX_TRACKED:
            del self._failures[next(iter(self._failures))]


def _digest(password: str) -> bytes:
    return hashlib.sha256(password.encode("utf-8")).digest()
