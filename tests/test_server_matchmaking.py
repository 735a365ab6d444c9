"""The ladder's matchmaking rule and its ratings: tables by rating and waiting time, and a
ladder of built-in bots ordered by strength."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from ladder_support import policy_order, simulate_ladder
from tongits.server.ladder.matchmaker import BASE_WINDOW, WIDEN_PER_SECOND, Contender, form_groups

ANCHORS = [Contender("anchor-greedy", 25.0, anchor="greedy"),
           Contender("anchor-strong", 30.0, anchor="strong")]


def test_players_far_apart_wait_until_their_windows_meet() -> None:
    far = 2 * BASE_WINDOW
    waiting = [Contender("a", 20.0), Contender("b", 20.0 + far), Contender("c", 20.0 + far / 2)]
    assert form_groups(waiting, [], now=0.0, anchor_wait=math.inf) == []
    later = (far - BASE_WINDOW) / WIDEN_PER_SECOND
    ((first, *rest),) = form_groups(waiting, [], now=later, anchor_wait=math.inf)
    assert first.account == "a" and {c.account for c in rest} == {"b", "c"}


def test_the_nearest_ratings_sit_together() -> None:
    waiting = [Contender("a", 25.0), Contender("b", 25.5), Contender("c", 24.0),
               Contender("d", 27.0, since=1.0)]
    ((first, *rest),) = form_groups(waiting, [], now=1.0, anchor_wait=math.inf)
    assert first.account == "a" and {c.account for c in rest} == {"b", "c"}


def test_a_lone_player_gets_the_nearest_anchors_only_after_the_wait() -> None:
    alone = [Contender("a", 29.0)]
    assert form_groups(alone, ANCHORS, now=9.0, anchor_wait=10.0) == []
    ((first, second, third),) = form_groups(alone, ANCHORS, now=10.0, anchor_wait=10.0)
    assert (first.account, second.account, third.account) == (
        "a", "anchor-strong", "anchor-greedy")


@given(st.lists(st.tuples(st.sampled_from("abcdefg"), st.floats(0, 50), st.floats(0, 100)),
                max_size=12), st.floats(0, 200))
def test_groups_are_three_accounts_each_queued_player_in_one_group(
    entries: list[tuple[str, float, float]], now: float
) -> None:
    waiting = [Contender(name, mu, since) for name, mu, since in entries]
    groups = form_groups(waiting, ANCHORS, now=now + 100, anchor_wait=10.0)
    seated = [c for g in groups for c in g if c.anchor is None]
    assert len(seated) == len({id(c) for c in seated})
    for group in groups:
        assert len({c.account for c in group}) == 3
        assert group[0].anchor is None


def test_a_ladder_of_built_in_bots_orders_them_by_strength() -> None:
    accounts = {f"{p}-{k}": p for p in ("random", "greedy", "strong") for k in (1, 2)}
    ladder = simulate_ladder(accounts, 60, hands=2, seed="test")
    mean = {p: sum(ladder.account(n).mu for n in accounts if accounts[n] == p) / 2
            for p in ("random", "greedy", "strong")}
    assert mean["strong"] > mean["greedy"] > mean["random"]
    order = policy_order(ladder, accounts)
    assert order[:2] == ["strong", "strong"] and order[-1] == "random"
    assert all(ladder.account(n).matches >= 20 for n in accounts)
