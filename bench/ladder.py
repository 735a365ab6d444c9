"""Does the ladder order bots by strength? Accounts of the built-in policies play rated matches.

    python bench/ladder.py --matches 300 --copies 2 --hands 3

Every account (``--copies`` of each of random, greedy, strong, expert) is queued again as soon
as its match ends; tables are formed by the server's matchmaking rule and the matches rated by
the server's ``Ladder`` (openskill Plackett-Luce, ranked by match chips), played offline by the
engine (``tests/ladder_support.py``): the server's ladder without its sockets. At checkpoints it
prints the pairs of accounts whose order by ``mu`` contradicts their policies' known order
(``STRENGTH``), then the final standings.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ladder_support import policy_order, simulate_ladder  # noqa: E402
from tongits.server.ladder.ladder import Ladder  # noqa: E402

#: The policies, weakest first, as the arena's tournament orders them (docs/BOTS.md: seed 7,
#: 300 hands a triple, expert 35.0, strong 33.2, greedy 29.6, random 5.8). The expert's and
#: strong's intervals overlap there; the expert has the most chips in every triple it plays.
STRENGTH = ("random", "greedy", "strong", "expert")


def misordered(ladder: Ladder, accounts: dict[str, str]) -> int:
    """Pairs of accounts of different policies whose ``mu`` order contradicts the policies'."""
    names = list(accounts)
    wrong = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            sa, sb = STRENGTH.index(accounts[a]), STRENGTH.index(accounts[b])
            if sa != sb and (sa < sb) != (ladder.account(a).mu < ladder.account(b).mu):
                wrong += 1
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--hands", type=int, default=3, help="hands per match")
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--policies", default=",".join(STRENGTH))
    args = parser.parse_args()
    accounts = {f"{p}-{k}": p for p in args.policies.split(",")
                for k in range(1, args.copies + 1)}
    pairs = sum(1 for i, a in enumerate(accounts) for b in list(accounts)[i + 1:]
                if accounts[a] != accounts[b])
    checkpoints = {m for m in (25, 50, 100, 150, 200, 300, 500, 1000) if m < args.matches}
    checkpoints.add(args.matches)
    started = time.perf_counter()

    def report(played: int, ladder: Ladder) -> None:
        if played in checkpoints:
            print(f"after {played:4d} matches: {misordered(ladder, accounts):2d} of {pairs} "
                  f"pairs out of order; by mu: {' > '.join(policy_order(ladder, accounts))} "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)

    ladder = simulate_ladder(accounts, args.matches, hands=args.hands, seed=args.seed,
                             after=report)
    page, _ = ladder.standings()
    print(f"\n{'rank':>4}  {'account':<12}{'rating':>8}{'mu':>8}{'sigma':>7}{'matches':>9}")
    for rank, a in enumerate(page, 1):
        print(f"{rank:>4}  {a.name:<12}{a.rating:>8.2f}{a.mu:>8.2f}{a.sigma:>7.2f}{a.matches:>9}")
    order_ok = policy_order(ladder, accounts) == sorted(
        accounts.values(), key=lambda p: -STRENGTH.index(p))
    print(f"\npolicies ordered by mu: {'yes' if order_ok else 'NO'}; "
          f"by rating (mu - 3 sigma): "
          f"{' > '.join(policy_order(ladder, accounts, by='rating'))}")


if __name__ == "__main__":
    main()
