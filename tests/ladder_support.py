"""A ladder played offline: accounts of built-in policies queued for ever, tables formed by the
server's matchmaking rule (``matchmaker.form_groups``), matches played by the engine and rated
by the server's ``Ladder``; for the ladder's tests and ``bench/ladder.py``.

No test lives here; the tests import it (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tongits.engine import Options, seat_view
from tongits.engine.match import Match
from tongits.engine.policies import get_policy
from tongits.server.ladder.ladder import Ladder
from tongits.server.ladder.matchmaker import Contender, form_groups

#: Seconds of the matchmaker's clock a round of matches takes.
ROUND_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Played:
    """One rated match: its accounts by seat and their match chips."""

    seats: tuple[str, str, str]
    chips: tuple[int, int, int]


def play_match(policies: list[str], seed: str, hands: int) -> tuple[int, int, int]:
    """The chips of a match of ``hands`` hands, ``policies[s]`` in seat ``s``, each deciding
    from its own view; antes, pot and dealer as the server's ``Match`` books them."""
    match = Match(Options(), seed)
    bots = [get_policy(p, seed=f"{seed}/{s}") for s, p in enumerate(policies)]
    for _ in range(hands):
        hand = match.deal()
        while not hand.over:
            seat = hand.to_act
            hand.apply(seat, bots[seat](seat_view(hand, seat)))
        assert hand.result is not None
        match.settle(hand.result)
    a, b, c = match.ledger
    return a, b, c


def simulate_ladder(
    accounts: Mapping[str, str],
    matches: int,
    *,
    hands: int = 3,
    seed: str = "ladder",
    after: Callable[[int, Ladder], None] | None = None,
) -> Ladder:
    """Rate ``matches`` matches among ``accounts`` (name -> policy), every account queued
    again as soon as its match ends; ``after(n, ladder)`` after the ``n``-th."""
    ladder = Ladder()
    for name in accounts:
        ladder.register(name)
    since = dict.fromkeys(accounts, 0.0)
    now, played = 0.0, 0
    while played < matches:
        waiting = [Contender(n, ladder.account(n).mu, since[n]) for n in accounts]
        groups = form_groups(waiting, [], now, anchor_wait=math.inf)
        now += ROUND_SECONDS
        for group in groups:
            if played == matches:
                break
            names = [c.account for c in group]
            table = f"m{played}"
            ladder.match_formed(table, names)
            chips = play_match([accounts[n] for n in names], f"{seed}/{played}", hands)
            ladder.table_ended(table, chips, complete=True)
            for n in names:
                since[n] = now
            played += 1
            if after is not None:
                after(played, ladder)
    return ladder


def policy_order(ladder: Ladder, accounts: Mapping[str, str], by: str = "mu") -> list[str]:
    """The accounts' policies, best first, by ``mu`` or by the standings' ``rating``."""
    rated = [ladder.account(n) for n in accounts]
    rated.sort(key=lambda a: -(a.mu if by == "mu" else a.rating))
    return [accounts[a.name] for a in rated]
