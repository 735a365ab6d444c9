"""How fast one address may do something that every connection may do at its own rate.

A connection may send ``rate`` messages a second (``Peer.take_token``), but an address may
hold ``max_per_address`` connections (64), and some requests cost the server, or the people
at a table, far more than one message:

* a chat line goes to everyone at the table: sixty connections of one stranger watching a
  public table and chatting at their rate put 1,100 lines a second on every player's screen
  and slowed the table's moves (p50 0.7 -> 10 ms, p99 9 -> 320 ms). A table's lines from one
  address share a bucket (``chat_rate``, ``chat_burst``), refused ``chat_too_fast``;
* a lobby page (``list_tables``) is up to a frame (64 KiB) answering a line of 30 bytes:
  sixty connections of one address asking as fast as their rate allows took 7.6 MB a
  second of the server's uplink with 800 tables open (16 MB at most). The pages of one
  address share a bucket of half one connection's ``rate`` and ``burst``
  (``routes.LOBBY_PAGE_SHARE``), refused ``rate_limited``.

An address is ``Peer.quota`` (an IPv4 address, an IPv6 /64); clients the per-address limits
exempt (``quota`` None: loopback, unless ``limit_loopback``) are not counted, as for those
limits.
"""

from __future__ import annotations

import math

#: Addresses remembered before those whose bucket is full again are forgotten.
PRUNE_AT = 64


class AddressPace:
    """A bucket of ``burst`` per address, refilled at ``rate`` a second (``rate`` 0: no
    limit)."""

    __slots__ = ("rate", "burst", "prune_at", "_buckets")

    def __init__(self, rate: float, burst: float, prune_at: int = PRUNE_AT) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.prune_at = prune_at
        #: address -> (what it may still do, when that was counted)
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, quota: str | None, now: float) -> int:
        """One more for ``quota``'s address at ``now``: 0 if it may (and it is counted), else
        the whole seconds until it may."""
        if quota is None or self.rate <= 0:
            return 0
        left, at = self._buckets.get(quota, (self.burst, now))
        left = min(self.burst, left + (now - at) * self.rate)
        if left < 1.0:
            return max(1, math.ceil((1.0 - left) / self.rate))
        self._buckets[quota] = (left - 1.0, now)
        if len(self._buckets) > self.prune_at:
            full = self.burst - 1.0
            self._buckets = {q: (n, t) for q, (n, t) in self._buckets.items()
                             if n + (now - t) * self.rate < full}
        return 0
