"""The reinforcement-learning environment's speed (a benchmark, not a test), beside RLCard's
gin rummy environment in the same run, and the vector path for long runs:

    pip install '.[rl]' rlcard      # rlcard for this comparison only: no dependency of ours
    python bench/rl.py [--seconds S] [--rounds N] [--envs N]
    python bench/rl.py --digest N   # the environment's output, hashed: a speed-up must keep it

Printed, each the best of ``--rounds`` rounds, in CPU seconds of this process (on a shared
machine other work does not inflate them; the two environments' rounds alternate as well):

* ``tongits``: decisions per second of ``TongitsEnv`` (tongits.client.rl) in the usual AEC
  loop, ``env.last()`` (the observation and its action mask from the seat's view) then
  ``env.step(action)``, the action drawn uniformly from the mask; ``tongits (wrapped)`` the
  same through PettingZoo's wrappers (``tongits.client.rl.env()``);
* ``rlcard gin-rummy``: decisions per second of ``rlcard.make("gin-rummy")``, whose
  ``env.step(action)`` returns the next state (observation and legal actions), the action
  drawn uniformly from the legal ones; and the ratio.

Both loops do the same work per hand: a reset (a new deal), then per decision the state of
the player to act (observation and legal actions), a uniform draw among the legal actions and
the step, then every player's final state and the hand's rewards: ours with the last steps
(``last()`` of each finished agent, an observation and a ``step(None)`` each), RLCard's as its
own ``env.run`` takes them (``get_state`` of each player, then ``get_payoffs()``). Only
decisions are counted, resets and ends of hands included in the time. Each side reads its
legal actions in its own form, the cheapest way it offers: our int8 mask's ones through a
bool view of the same bytes (numpy's ``nonzero`` takes a generic path on int8: 14,800
instructions against 6,700 with the view; a trainer that masks its logits calls neither),
RLCard's list of ids.
* ``vector``: learner decisions per second of ``vector_env(--envs)`` (``SeatEnv`` against two
  ``random`` bots, whose moves are not counted), stepped together in this process and with a
  worker process per environment (Gymnasium's ``SyncVectorEnv`` and ``AsyncVectorEnv``); in
  wall-clock seconds, since the work is in other processes (so it is only as good as the
  cores that are free).

The last line is one JSON object for scripts.

``--digest N`` times nothing: it prints a SHA-256 of everything ``TongitsEnv`` hands out in
N decisions of the raw loop under each of four sets of options (seeds 0 to 3): every agent
``agent_iter`` names, its observation, mask, reward, termination, truncation and infos, and
each hand's result. A change that only makes the environment faster must print the same
digest before and after (``--digest 20000``: 80,000 decisions, a few seconds).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from tongits.client.rl import TongitsEnv, env, vector_env
from tongits.engine import CallTie, Options, SapawBlock, Scoring, StockoutNoneOpen

#: The mask's dtype as the loop reads it (its bytes are 0 or 1).
BOOL = np.dtype(np.bool_)
#: ``--digest``'s sets of options: the classic rules, then every house option on in one set
#: or another.
DIGEST_OPTIONS = (
    Options(),
    Options(pick_to_sapaw=True, scoring=Scoring.TALLY),
    Options(sapaw_block=SapawBlock.HAND, self_sapaw_blocks_call=True, tongits_needs_discard=True,
            call_tie=CallTie.CALLER, stockout_none_open=StockoutNoneOpen.VOID,
            no_sapawable_discard=True),
    Options(concealed_melds_count=True, pick_to_sapaw=True),
)


def tongits_steps(game: AECEnv, seconds: float, rng: random.Random) -> float:
    """Decisions per second of the AEC loop over whole hands for ``seconds``."""
    decisions = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        game.reset()
        for _ in game.agent_iter():
            obs, _, done, _, _ = game.last()
            if done:
                game.step(None)
                continue
            legal = obs["action_mask"].view(BOOL).nonzero()[0]  # (np.flatnonzero: 4 us slower)
            game.step(legal.item(rng.randrange(len(legal))))  # (``item``: a Python int at once)
            decisions += 1
    return decisions / elapsed


def digest(decisions: int) -> str:
    """The SHA-256 of what ``TongitsEnv`` hands out over ``decisions`` decisions of the raw
    loop (the action drawn uniformly from the mask) under each of ``DIGEST_OPTIONS``."""
    sha = hashlib.sha256()
    for number, options in enumerate(DIGEST_OPTIONS):
        rng = random.Random(number)
        game = TongitsEnv(options, seed=number)
        made = 0
        while made < decisions:
            game.reset()
            for agent in game.agent_iter():
                obs, reward, done, truncated, info = game.last()
                assert obs is not None  # (``last()`` observes)
                sha.update(agent.encode())
                sha.update(obs["observation"].tobytes())
                sha.update(obs["action_mask"].tobytes())
                sha.update(repr((reward, done, truncated, info)).encode())
                if done:
                    game.step(None)
                    continue
                legal = obs["action_mask"].nonzero()[0]
                game.step(int(legal[rng.randrange(len(legal))]))
                made += 1
            sha.update(repr(game.hand.result).encode())
    return sha.hexdigest()


def rlcard_steps(seconds: float, rng: random.Random) -> float:
    """Decisions per second of RLCard's gin rummy over whole games for ``seconds``."""
    import rlcard

    game = rlcard.make("gin-rummy", config={"seed": 0})
    decisions = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        state, _ = game.reset()
        while not game.is_over():
            legal = list(state["legal_actions"])
            state, _ = game.step(legal[rng.randrange(len(legal))])
            decisions += 1
        for player in range(game.num_players):
            game.get_state(player)
        game.get_payoffs()
    return decisions / elapsed


def vector_steps(n: int, processes: bool, seconds: float, rng: random.Random) -> float:
    """Learner decisions per second of ``vector_env(n)`` against two random bots."""
    envs = vector_env(n, processes=processes, opponents=("random", "random"), seed="bench")
    try:
        obs, _ = envs.reset(seed=0)
        decisions = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            actions = []
            for mask in obs["action_mask"]:
                legal = np.flatnonzero(mask)
                actions.append(int(legal[rng.randrange(len(legal))]) if len(legal) else 0)
                decisions += bool(len(legal))
            obs, *_ = envs.step(np.array(actions))
        return decisions / elapsed
    finally:
        envs.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best one counts")
    parser.add_argument("--envs", type=int, default=4, help="environments of the vector path")
    parser.add_argument("--digest", type=int, metavar="N",
                        help="print the digest of N decisions under each of four sets of options"
                        " instead of timing anything")
    args = parser.parse_args()
    if args.digest is not None:
        print(digest(args.digest))
        return
    # Python's own generator in every loop: numpy's Generator.integers costs about as much
    # per call as a tenth of a tongits step, the same in each loop, and it is no part of
    # either environment
    rng = random.Random(0)
    has_rlcard = importlib.util.find_spec("rlcard") is not None
    raw, wrapped = TongitsEnv(seed=0), env(seed=0)
    figures: dict[str, Any] = {}
    measures: dict[str, Callable[[], float]] = {
        "tongits": lambda: tongits_steps(raw, args.seconds, rng),
        "tongits_wrapped": lambda: tongits_steps(wrapped, args.seconds, rng),
    }
    if has_rlcard:
        measures["rlcard_gin_rummy"] = lambda: rlcard_steps(args.seconds, rng)
    for _ in range(args.rounds):
        for name, measure in measures.items():
            figures[name] = max(figures.get(name, 0.0), measure())
    for name, rate in figures.items():
        print(f"{name:18s} {rate:9,.0f} decisions/s")
    if has_rlcard:
        figures["ratio"] = figures["tongits"] / figures["rlcard_gin_rummy"]
        print(f"tongits / rlcard gin-rummy: {figures['ratio']:.1f}x")
    else:
        print("rlcard is not installed (pip install rlcard): no comparison")
    for processes in (False, True):
        key = f"vector_{args.envs}_{'processes' if processes else 'in_process'}"
        figures[key] = max(vector_steps(args.envs, processes, args.seconds, rng)
                           for _ in range(args.rounds))
        print(f"vector of {args.envs}, {'a process each' if processes else 'in this process'}:"
              f" {figures[key]:,.0f} learner decisions/s (cores: {os.cpu_count()})")
    print(json.dumps({k: round(v, 2) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
