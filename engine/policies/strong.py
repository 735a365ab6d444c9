"""The ``strong`` bot: card reading, live-card discards, concealed melds and Monte-Carlo calls.

It reads only its ``SeatView``:

* **Where the cards are.** ``public_knowledge`` replays the public history: the cards it cannot
  place (``unseen``: the other hands, the stock, other seats' secret melds) and what each seat
  threw.
* **Melds.** Concealed melds count nothing (RULES.md §7), so it places only the meld that opens
  its hand (a four-of-a-kind face down) and keeps the others in hand, where nobody can lay off on
  them (which would block its calls, §5) and where they may still take the discard top; it puts
  everything down once that empties its hand (Tongits). It lays off every card it can spare,
  onto the other seats' melds first (blocking their calls).
* **Discards.** Each legal discard is scored by the count left, minus the expected gain of the
  next draws from *live* cards (unseen cards that would meld with what is kept), plus the risk of
  feeding the next seat a pick (both other cards of some meld with the discard unseen, weighted
  by how many cards that seat holds; dearer if the pick would open it). It picks the discard
  whenever that makes a meld.
* **Calls and challenges.** Determinized Monte-Carlo: the other hands are dealt from the unseen
  cards (a four-of-a-kind set aside for each hidden secret meld; cards above the last card a
  seat threw are less likely in its hand, since players throw high cards). It calls when no
  opened seat can challenge, or when in at least ``call_min_win`` of the deals no opened seat
  counts as low as it does; it challenges when the chips it expects from challenging beat
  folding, and always once the call is challenged already (the stake is then 3 chips whatever it
  does). The caller's count is read from deals of its hand (its hand size, its throws), a deal
  where it counts more than ``caller_cap`` weighing ``bluff_weight`` of one where it counts less:
  a seat holding many cards that calls is challenged on a middling count.

Deterministic: each decision draws from a ``random.Random`` seeded with the position as the seat
sees it (``common.position_key``: its place after the dealer, its cards, the moves so far by
their movers' places), and samples the other seats in their order after the dealer, so the
same position always gets the same move, whatever the seats' numbers and wherever the bot runs;
the seed it is built with changes nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..cards import DECK, POINTS, indices_of, mask_of
from ..count import Arrangement, best_arrangement
from ..hand import Phase
from ..melds import fits
from ..moves import Action, Move
from ..options import CallTie
from ..view import SeatView
from .common import (
    NEIGHBOURS,
    Choice,
    PublicKnowledge,
    SeatRef,
    Stakes,
    best_pick,
    count_of,
    find,
    melded_aces,
    of_action,
    place,
    plan_melds,
    position_key,
    public_knowledge,
    useful_lay_off,
    view_count,
)


@dataclass(frozen=True, slots=True)
class StrongParams:
    """The strong bot's knobs (tuned with the arena)."""

    samples: int = 96  # determinizations per call or challenge decision
    call_min_win: float = 0.45  # call when the estimated chance that nobody beats us reaches this
    call_max_count: int = 25  # never consider calling above this count
    high_card_weight: float = 0.3  # relative chance of a card above a seat's last throw
    potential_weight: float = 2.5  # weight of the expected gain from live cards
    draws_horizon: float = 2.0  # at most this many future draws count towards that gain
    feed_cost: float = 3.0  # cost, in count points, of feeding an opened next seat a pick
    feed_cost_unopened: float = 6.0  # ... and of feeding one that has not opened
    caller_cap: int = 10  # a seat calls at this count or less, mostly...
    bluff_weight: float = 0.1  # ... and at a higher count this much less often
    secret_fours: bool = True  # place a four-of-a-kind face down
    hold_melds: bool = True  # expose only the meld that opens the hand, until going out


def _partner_pairs(card: int) -> tuple[tuple[int, int], ...]:
    """The pairs of cards that make a three-card meld with ``card``."""
    suit, rank0 = divmod(card, 13)
    same_rank = [s * 13 + rank0 for s in range(4) if s != suit]
    pairs = [(same_rank[i], same_rank[j]) for i in range(3) for j in range(i + 1, 3)]
    for a, b in ((rank0 - 2, rank0 - 1), (rank0 - 1, rank0 + 1), (rank0 + 1, rank0 + 2)):
        if a >= 0 and b < 13:
            pairs.append((suit * 13 + a, suit * 13 + b))
    return tuple(pairs)


_PARTNER_PAIRS: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    _partner_pairs(c) for c in range(52)
)


class StrongPolicy:
    """See the module docstring."""

    name = "strong"

    def __init__(self, seed: int | str | None = None, params: StrongParams | None = None):
        """``seed``: taken, as every policy takes one, and not used (see the module's
        docstring)."""
        self.params = params or StrongParams()

    def __call__(self, view: SeatView) -> Move:
        return self.decide(view).move

    def decide(self, view: SeatView) -> Choice:
        """The move for ``view`` with the reason for it (the client's ``hint`` shows both)."""
        legal = view.legal
        if len(legal) == 1:
            return Choice(legal[0], "the only legal move")
        know = public_knowledge(view)
        if view.phase is Phase.ANSWER:
            return self._answer(view, know)
        if view.phase is Phase.START:
            call = find(legal, Action.CALL)
            chosen = self._call(view, know, call) if call is not None else None
            return chosen or self._acquire(view)
        return self._meld(view, know) or self._lay_off(view) or self._discard(view, know)

    def _acquire(self, view: SeatView) -> Choice:
        pick = best_pick(view)
        if pick is not None:
            if pick.meld is not None:
                return Choice(pick, "the {} on the pile goes onto meld {}", (view.top, pick.meld))
            left = view_count(view, mask_of(view.hand) & ~mask_of(pick.cards))
            return Choice(
                pick, "the {} on the pile melds with your {}: count {} left",
                (view.top, pick.cards, left),
            )
        draw = find(view.legal, Action.DRAW) or view.legal[0]
        if view.top is None:
            return Choice(draw, "the discard pile is empty")
        return Choice(draw, "the {} on the pile makes no meld with your cards", (view.top,))

    # ----- melding ---------------------------------------------------------------------------

    def _meld(self, view: SeatView, know: PublicKnowledge) -> Choice | None:
        """The next meld to place. Concealed melds count nothing (RULES.md §7), so with
        ``hold_melds`` the bot places only the one meld that opens its hand (face down if it is
        a four-of-a-kind, else the one fewest unseen cards could be laid off on) and keeps the
        others for flexibility and out of the others' reach, until it can go out."""
        p = self.params
        if not p.hold_melds or view.options.concealed_melds_count:
            planned = plan_melds(view, secret_fours=p.secret_fours)
            if planned is None:
                return None
            if view.options.concealed_melds_count:
                return _placed(planned, "melds kept in hand count at this table")
            return _placed(planned, "a meld of your best arrangement")
        arrangement = best_arrangement(view.hand)
        assert view.seat is not None
        if len(arrangement.deadwood) <= 1:
            planned = plan_melds(view, secret_fours=p.secret_fours)
            if planned is None:
                return None
            return _placed(planned, "lay down every meld: at most one loose card is left")
        if view.opened[view.seat]:
            return None
        return self._opening_meld(view, know, arrangement)

    def _opening_meld(
        self, view: SeatView, know: PublicKnowledge, arrangement: Arrangement
    ) -> Choice | None:
        """The one meld that opens the hand: a four-of-a-kind face down, else the meld the
        fewest unseen cards fit."""
        p = self.params
        legal = set(view.legal)
        best: tuple[int, Move] | None = None
        for meld in arrangement.melds:
            if p.secret_fours and len(meld) == 4 and meld[0].rank == meld[1].rank:
                move = Move(Action.SECRET, meld)
                if move in legal:
                    return _placed(move, "it opens your hand")
            move = Move(Action.MELD, meld)
            if move in legal:
                exposure = sum(1 for c in indices_of(know.unseen) if fits(meld, DECK[c]))
                if best is None or exposure < best[0]:
                    best = (exposure, move)
        if best is None:
            return None
        return Choice(
            best[1],
            "it opens your hand (an unopened hand is burned), and of your melds the fewest "
            "unseen cards ({}) fit it; keep the others in hand, where they count nothing and "
            "take no lay-offs",
            (best[0],),
        )

    def _lay_off(self, view: SeatView) -> Choice | None:
        move = useful_lay_off(view)
        if move is None:
            return None
        owner = next((m.owner for m in view.melds if m.id == move.meld), None)
        if owner is not None and owner != view.seat:
            return Choice(
                move, "{} leaves your hand without raising your count, and blocks {}'s next "
                "call", (move.card, SeatRef(owner)),
            )
        return Choice(move, "{} leaves your hand without raising your count", (move.card,))

    # ----- randomness and sampling ----------------------------------------------------------

    def _rng(self, view: SeatView) -> random.Random:
        """A decision's randomness: the position as the seat sees it (``position_key``), so
        that the same position gets the same move in-process, behind the protocol or at a
        server's table. Not the seed, which only an in-process bot is given per hand."""
        return random.Random(f"strong/{position_key(view)}")

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
            cards = indices_of(pool)
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

    def _call(self, view: SeatView, know: PublicKnowledge, call: Move) -> Choice | None:
        """``call`` with its reason when calling is right now, else None."""
        me = know.seat
        rivals = sorted((s for s in range(3) if s != me and view.opened[s]),
                        key=lambda s: place(view, s))
        if not rivals:
            return Choice(call, "no other seat has opened, so nobody may challenge: the call wins")
        mine = count_of(
            mask_of(view.hand), concealed_melds_count=view.options.concealed_melds_count
        )
        if mine > self.params.call_max_count:
            return None
        tie_to_caller = view.options.call_tie is CallTie.CALLER
        samples = self._sample_counts(view, know, rivals, self._rng(view))
        wins = sum(
            1
            for counts in samples
            if all(c > mine or (tie_to_caller and c == mine) for c in counts)
        )
        if wins < self.params.call_min_win * len(samples):
            return None
        return Choice(
            call, "your count is {}: in {}% of the ways the unseen cards may lie, no opened seat "
            "counts as low", (mine, round(100 * wins / len(samples))),
        )

    # ----- answering a call ------------------------------------------------------------------

    def _answer(self, view: SeatView, know: PublicKnowledge) -> Choice:
        legal = view.legal
        challenge = find(legal, Action.CHALLENGE)
        fold = find(legal, Action.FOLD) or legal[0]
        if challenge is None or view.caller is None:
            return Choice(fold, "there is nothing to challenge")
        answers = [step.seat for step in view.history if step.move.action is Action.CHALLENGE]
        if answers:
            return Choice(challenge, "the call is challenged already: you pay 3 chips anyway")
        mine = count_of(
            mask_of(view.hand), concealed_melds_count=view.options.concealed_melds_count
        )
        caller = view.caller
        p_win = self._beat_chance(view, know, caller, mine)
        stakes = Stakes(
            gain=2 * (3 + melded_aces(view, know.seat) + sum(c.rank == 1 for c in view.hand)),
            caller_aces=melded_aces(view, caller),
        )
        odds = (mine, round(100 * p_win))
        if stakes.challenge_pays(p_win):
            return Choice(challenge, "your count {} beats the caller's about {}% of the time: "
                          "worth more than folding", odds)
        return Choice(fold, "your count {} beats the caller's only about {}% of the time: "
                      "folding costs less", odds)

    def _beat_chance(
        self, view: SeatView, know: PublicKnowledge, caller: int, mine: int
    ) -> float:
        """The chance that ``mine`` wins the showdown against the caller: over deals of the
        caller's hand from what the table has seen (its hand size, its throws), each weighted
        by how likely a seat holding it is to call: 1 at ``caller_cap`` or less, else
        ``bluff_weight``, whatever the caller did before. A caller of 9 cards seldom counts 10
        or less, so most of the weight is then on deals where it counts high, and the bot
        challenges it with a middling count. Believing every caller, it folded to almost any
        call (a seat calling at every chance won 2.1 chips a hand from two of it); believing
        a caller that had let a chance to call go by, it paid a seat that passed once and then
        called at every chance, whatever its count, 1.25 chips a hand (``bench/exploiters.py``)."""
        p = self.params
        strict = view.options.call_tie is CallTie.CALLER
        total = beat = 0.0
        for (count,) in self._sample_counts(view, know, [caller], self._rng(view)):
            weight = 1.0 if count <= p.caller_cap else p.bluff_weight
            total += weight
            if count > mine or (not strict and count == mine):
                beat += weight
        return beat / total if total else 0.0

    # ----- discarding -----------------------------------------------------------------------

    def _hand_value(self, view: SeatView, know: PublicKnowledge, kept: int) -> float:
        """The count of ``kept`` less the expected gain of the coming draws: each of the next
        ``draws_horizon`` draws is a uniform unseen card, worth what it would meld away."""
        p = self.params
        concealed = view.options.concealed_melds_count
        now = count_of(kept, concealed_melds_count=concealed)
        draws = min(p.draws_horizon, view.stock / 3)
        if draws <= 0:
            return float(now)
        gain = 0
        for u in indices_of(know.unseen & _reach(kept)):
            gain += max(0, now - count_of(kept | 1 << u, concealed_melds_count=concealed))
        return now - p.potential_weight * draws * gain / max(1, know.unseen.bit_count())

    def _discard(self, view: SeatView, know: PublicKnowledge) -> Choice:
        discards = of_action(view.legal, Action.DISCARD)
        if not discards:
            return Choice(view.legal[0], "no discard is legal")
        p = self.params
        hand = mask_of(view.hand)
        unseen = know.unseen
        n_unseen = max(1, unseen.bit_count())
        nxt = (know.seat + 1) % 3
        k = view.hand_sizes[nxt]
        pair_p = (k / n_unseen) * (max(0, k - 1) / max(1, n_unseen - 1))
        feed = p.feed_cost if view.opened[nxt] else p.feed_cost_unopened
        last_turn = view.stock == 0

        def feeding(card: int) -> float:
            """The chance that the next seat holds two cards that meld with ``card``."""
            if last_turn:
                return 0.0
            miss = 1.0
            for a, b in _PARTNER_PAIRS[card]:
                if unseen >> a & 1 and unseen >> b & 1:
                    miss *= 1 - pair_p
            return 1 - miss

        def score(move: Move) -> tuple[float, int]:
            card = move.card
            assert card is not None
            value = self._hand_value(view, know, hand & ~card.bit) + feed * feeding(card)
            return (value, -POINTS[card])

        move = min(discards, key=score)
        card = move.card
        assert card is not None
        left = count_of(hand & ~card.bit, concealed_melds_count=view.options.concealed_melds_count)
        risk = round(100 * feeding(card))
        if risk:
            return Choice(move, "it leaves count {} and the cards most likely to meld, with a {}% "
                          "chance of feeding the next seat a pick", (left, risk))
        return Choice(move, "it leaves count {} and the cards most likely to meld; the next "
                      "seat cannot pick it into a meld", (left,))


def _placed(move: Move, why: str) -> Choice:
    """A meld or secret placed for ``why``; a four of a kind goes face down."""
    if move.action is Action.SECRET:
        return Choice(move, why + "; a four of a kind face down takes no lay-offs and keeps its "
                      "bonus (a face-up meld would forfeit it)")
    return Choice(move, why)


def _reach(mask: int) -> int:
    out = 0
    for c in indices_of(mask):
        out |= NEIGHBOURS[c]
    return out
