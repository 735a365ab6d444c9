"""How fast one address may chat at one table.

A connection may send ``rate`` messages a second, and an address may hold ``max_per_address``
connections; a chat line goes to everyone at the table. So one stranger with sixty
connections watching a public table put 1,100 lines a second on every player's screen (each
line also to the other fifty-nine) and slowed the table's moves (p50 0.7 -> 10 ms, p99 9 ->
320 ms). The lines said at a table from one address (``Peer.quota``: an IPv4 address, an IPv6
/64) therefore share one bucket of ``burst`` lines refilled at ``rate`` a second, whatever
connection says them; a line beyond it is refused ``chat_too_fast`` and the connection stays,
so a person who pasted a few lines only waits. Clients the per-address limits exempt
(``quota`` None: loopback, unless ``limit_loopback``) are not counted, as for those limits.
"""

from __future__ import annotations

import math

from tongits.protocol import ErrorCode, ProtocolError

#: Addresses a table remembers before it forgets those whose bucket is full again.
PRUNE_AT = 64


class ChatPace:
    """The chat buckets of one table's addresses (``rate`` 0: no limit)."""

    __slots__ = ("rate", "burst", "_buckets")

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        #: address -> (lines it may still say, when that was counted)
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, quota: str | None, now: float) -> None:
        """One line from ``quota``'s address at ``now``, or ``chat_too_fast`` saying how long
        to wait for the next."""
        if quota is None or self.rate <= 0:
            return
        left, at = self._buckets.get(quota, (self.burst, now))
        left = min(self.burst, left + (now - at) * self.rate)
        if left < 1.0:
            wait = math.ceil((1.0 - left) / self.rate)
            raise ProtocolError(ErrorCode.CHAT_TOO_FAST,
                                f"too many chat lines from your address at this table: "
                                f"say the next in {wait} s")
        self._buckets[quota] = (left - 1.0, now)
        if len(self._buckets) > PRUNE_AT:
            full = self.burst - 1.0
            self._buckets = {q: (n, t) for q, (n, t) in self._buckets.items()
                             if n + (now - t) * self.rate < full}
