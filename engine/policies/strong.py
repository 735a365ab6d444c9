"""The ``strong`` bot: greedy's melding, plus card reading and Monte-Carlo timing of calls.

It reads only its ``SeatView``:

* **Where the cards are.** ``public_knowledge`` replays the public history: the cards it cannot
  place (``unseen``: the other hands, the stock, other seats' secret melds), what each seat
  threw, and which discard tops each seat drew past.
* **Discards.** Each legal discard is scored by the count left, minus the expected gain of the
  next draws from *live* cards (unseen cards that would meld with what is kept), plus the risk of
  feeding the next seat a pick (both other cards of some meld with the discard unseen, weighted
  by how many cards that seat holds; dearer if the pick would open it).
* **Calls and challenges.** Determinized Monte-Carlo: the other hands are dealt from the unseen
  cards (a four-of-a-kind set aside for each hidden secret meld; cards above the last card a
  seat threw are less likely in its hand, since players throw high cards), and the call or the
  challenge is taken when its estimated chance of winning, turned into chips, beats the
  alternative.

Deterministic for a given seed: each decision draws from a ``random.Random`` seeded with the
policy's seed and the position in the hand, so the same view always gets the same move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..cards import POINTS, mask_of
from ..hand import Phase
from ..moves import Action, Move
from ..options import CallTie
from ..view import SeatView
from .common import (
    PublicKnowledge,
    best_pick,
    count_of,
    find,
    of_action,
    plan_melds,
    public_knowledge,
    useful_lay_off,
)


@dataclass(frozen=True, slots=True)
class StrongParams:
    """The strong bot's knobs (tuned with the arena)."""

    samples: int = 96  # determinizations per call or challenge decision
    call_min_win: float = 0.6  # call when the estimated chance that nobody beats us reaches this
    call_max_count: int = 25  # never consider calling above this count
    high_card_weight: float = 0.3  # relative chance of a card above a seat's last throw
    potential_weight: float = 1.0  # weight of the expected gain from live cards
    draws_horizon: float = 2.0  # at most this many future draws count towards that gain
    feed_cost: float = 10.0  # cost, in count points, of feeding an opened next seat a pick
    feed_cost_unopened: float = 18.0  # ... and of feeding one that has not opened
    caller_cap: int = 10  # a caller's count is assumed to be at most this
    secret_fours: bool = True  # place a four-of-a-kind face down


def _neighbours(card: int) -> int:
    """Cards that can share a meld with ``card``: same rank, or same suit within two ranks."""
    suit, rank0 = divmod(card, 13)
    mask = 0
    for s in range(4):
        if s != suit:
            mask |= 1 << (s * 13 + rank0)
    for d in (-2, -1, 1, 2):
        if 0 <= rank0 + d < 13:
            mask |= 1 << (suit * 13 + rank0 + d)
    return mask


_NEIGHBOURS: tuple[int, ...] = tuple(_neighbours(c) for c in range(52))


def _partner_pairs(card: int) -> tuple[tuple[int, int], ...]:
    """The pairs of cards that make a three-card meld with ``card``."""
    suit, rank0 = divmod(card, 13)
    same_rank = [s * 13 + rank0 for s in range(4) if s != suit]
    pairs = [(same_rank[i], same_rank[j]) for i in range(3) for j in range(i + 1, 3)]
    for a, b in ((rank0 - 2, rank0 - 1), (rank0 - 1, rank0 + 1), (rank0 + 1, rank0 + 2)):
        if 0 <= a and b < 13:
            pairs.append((suit * 13 + a, suit * 13 + b))
    return tuple(pairs)


_PARTNER_PAIRS: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    _partner_pairs(c) for c in range(52)
)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class StrongPolicy:
    """See the module docstring."""

    name = "strong"

    def __init__(self, seed: int | str | None = None, params: StrongParams | None = None):
        self.seed = seed
        self.params = params or StrongParams()

    def __call__(self, view: SeatView) -> Move:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        know = public_knowledge(view)
        if view.phase is Phase.ANSWER:
            return self._answer(view, know)
        if view.phase is Phase.START:
            call = find(legal, Action.CALL)
            if call is not None and self._should_call(view, know):
                return call
            return best_pick(view) or find(legal, Action.DRAW) or legal[0]
        return (
            plan_melds(view, secret_fours=self.params.secret_fours)
            or useful_lay_off(view)
            or self._discard(view, know)
        )

    # ----- randomness and sampling ----------------------------------------------------------

    def _rng(self, view: SeatView) -> random.Random:
        return random.Random(f"strong/{self.seed}/{view.seat}/{view.dealer}/{len(view.history)}")

    def _sample_counts(
        self, view: SeatView, know: PublicKnowledge, seats: list[int], rng: random.Random
    ) -> list[tuple[int, ...]]:
        """Counts of ``seats`` over determinizations of the hidden cards."""
        p = self.params
        concealed = view.options.concealed_melds_count
        pool_all = know.unseen
        secret_holders = [
            s for s in range(3) if s != know.seat for _ in range(know.hidden_secrets[s])
        ]
        four_ranks = [r for r in range(13) if all(pool_all >> (s * 13 + r) & 1 for s in range(4))]
        caps = {s: POINTS[know.thrown[s][-1]] if know.thrown[s] else 10 for s in seats}
        out: list[tuple[int, ...]] = []
        for _ in range(p.samples):
            pool = pool_all
            if secret_holders and four_ranks:
                for r in rng.sample(four_ranks, min(len(four_ranks), len(secret_holders))):
                    for s in range(4):
                        pool &= ~(1 << (s * 13 + r))
            cards = _bits(pool)
            counts = []
            for seat in seats:
                k = view.hand_sizes[seat]
                cap = caps[seat]
                keyed = sorted(
                    cards,
                    key=lambda c: (
                        rng.random() ** (1.0 if POINTS[c] <= cap else 1 / p.high_card_weight)
                    ),
                    reverse=True,
                )
                chosen = keyed[:k]
                hand = mask_of(chosen)
                cards = keyed[k:]
                counts.append(count_of(hand, concealed_melds_count=concealed))
            out.append(tuple(counts))
        return out

    # ----- start of turn: call ---------------------------------------------------------------

    def _should_call(self, view: SeatView, know: PublicKnowledge) -> bool:
        me = know.seat
        rivals = [s for s in range(3) if s != me and view.opened[s]]
        if not rivals:
            return True  # nobody may challenge: the call wins outright
        mine = count_of(
            mask_of(view.hand), concealed_melds_count=view.options.concealed_melds_count
        )
        if mine > self.params.call_max_count:
            return False
        tie_to_caller = view.options.call_tie is CallTie.CALLER
        samples = self._sample_counts(view, know, rivals, self._rng(view))
        wins = sum(
            1
            for counts in samples
            if all(c > mine or (tie_to_caller and c == mine) for c in counts)
        )
        return wins >= self.params.call_min_win * len(samples)

    # ----- answering a call ------------------------------------------------------------------

    def _answer(self, view: SeatView, know: PublicKnowledge) -> Move:
        legal = view.legal
        challenge = find(legal, Action.CHALLENGE)
        fold = find(legal, Action.FOLD) or legal[0]
        if challenge is None or view.caller is None:
            return fold
        answers = [step["seat"] for step in view.history if step["action"] == "challenge"]
        if answers:
            return challenge  # the call is challenged already: we pay 3 anyway, so compete
        mine = count_of(
            mask_of(view.hand), concealed_melds_count=view.options.concealed_melds_count
        )
        caller = view.caller
        samples = self._sample_counts(view, know, [caller], self._rng(view))
        cap = self.params.caller_cap
        plausible = [c[0] for c in samples if c[0] <= cap]
        strict = view.options.call_tie is CallTie.CALLER
        if len(plausible) >= 8:
            beat = sum(1 for c in plausible if c > mine or (not strict and c == mine))
            p_win = beat / len(plausible)
        else:
            p_win = max(0.0, min(1.0, (cap - mine + (0 if strict else 1)) / (cap + 1)))
        my_aces = sum(1 for c in view.hand if c.rank == 1) + sum(
            1 for m in view.melds if m.owner == know.seat for c in m.cards if c.rank == 1
        )
        caller_aces = sum(
            1 for m in view.melds if m.owner == caller for c in m.cards if c.rank == 1
        )
        gain = 2 * (3 + my_aces)
        loss_challenged = 3 + caller_aces
        loss_folded = 1 + caller_aces
        if p_win * gain - (1 - p_win) * loss_challenged > -loss_folded:
            return challenge
        return fold

    # ----- discarding -----------------------------------------------------------------------

    def _discard(self, view: SeatView, know: PublicKnowledge) -> Move:
        discards = of_action(view.legal, Action.DISCARD)
        if not discards:
            return view.legal[0]
        p = self.params
        concealed = view.options.concealed_melds_count
        hand = mask_of(view.hand)
        unseen = know.unseen
        n_unseen = max(1, unseen.bit_count())
        draws = min(p.draws_horizon, view.stock / 3)
        nxt = (know.seat + 1) % 3
        k = view.hand_sizes[nxt]
        pair_p = (k / n_unseen) * (max(0, k - 1) / max(1, n_unseen - 1))
        feed = p.feed_cost if view.opened[nxt] else p.feed_cost_unopened
        last_turn = view.stock == 0

        def score(move: Move) -> tuple[float, int]:
            card = move.card
            assert card is not None
            kept = hand & ~card.bit
            now = count_of(kept, concealed_melds_count=concealed)
            value = float(now)
            if not last_turn:
                if draws > 0:
                    gain = 0
                    for u in _bits(unseen & _reach(kept)):
                        gain += max(
                            0, now - count_of(kept | 1 << u, concealed_melds_count=concealed)
                        )
                    value -= p.potential_weight * draws * gain / n_unseen
                miss = 1.0
                for a, b in _PARTNER_PAIRS[card]:
                    if unseen >> a & 1 and unseen >> b & 1:
                        miss *= 1 - pair_p
                value += feed * (1 - miss)
            return (value, -POINTS[card])

        return min(discards, key=score)


def _reach(mask: int) -> int:
    out = 0
    for c in _bits(mask):
        out |= _NEIGHBOURS[c]
    return out
