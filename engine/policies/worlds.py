"""Sampled worlds: complete hand states consistent with one seat's view (RULES.md §11).

A *world* deals the cards the seat cannot see — the other hands, the stock, the other seats'
secret melds — so that a search can play moves forward on an ordinary ``Hand``. Worlds are not
drawn uniformly: what the other seats did says something about what they hold (``Inference``):

* a seat that **drew** while the discard top would have melded with two of its cards would
  (usually) have picked it, so cards that meld with a discard it passed on are less likely in
  its hand;
* a seat that **threw** a card keeps few cards that meld with it, and players throw their
  highest loose card first, so cards worth more than its last throw are less likely.

A seat that called is expected to count low: while the call is answered, a deal in which the
caller counts more than ``answer_cap`` is kept only with the chance ``bluff_weight`` (how much
less often a seat calls on a high count than on a low one), else redrawn. Redrawn every time, a
caller of 9 cards and 40 points was imagined at 25, and a seat that called at every chance won
1.4 chips a hand from the expert. The cap is 25, the highest count at which a seat that calls
by its count (``strong``, ``greedy``) calls: at 10, the count ``strong`` believes of a caller
(``caller_cap``, how the table reads the seat's own call in ``doubt.py``), 43 % of the worlds
had a ``strong`` caller counting more than 25 (19 % at 25; no such caller did, at 245 answers
in 150 deals of three ``strong``), and the expert challenged calls it could not beat: folding
more with the cap at 25 won it 0.043 and 0.027 chips a hand against two ``strong`` (seeds e1
and e2, 1,500 hands each; docs/BOTS.md).

Each unseen card gets a weight per seat; hands are dealt by weighted sampling without
replacement (Efraimidis-Spirakis keys), the rest of the unseen cards make the stock in a
uniformly random order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..cards import DECK, POINTS, Card, indices_of, mask_of
from ..hand import Hand, Phase
from ..melds import TableMeld
from ..moves import Action
from ..view import SeatView
from .common import NEIGHBOURS, count_of, public_knowledge


@dataclass(frozen=True, slots=True)
class InferenceParams:
    """How strongly each public action shifts the weight of the cards it concerns."""

    passed: float = 0.35  # a card that would have melded with a discard the seat drew over
    thrown_near: float = 0.6  # a card that melds with a card the seat threw
    above_throw: float = 0.45  # a card worth more than the seat's last throw
    caller_cap: int = 10  # how the table reads the seat's own call: a caller counts at most
    # this, mostly (``doubt.py``)
    answer_cap: int = 25  # a seat that called counts at most this (deals are redrawn until so)...
    bluff_weight: float = 0.1  # ... but a deal where it counts more is kept this often
    caller_tries: int = 30
    enabled: bool = True


@dataclass(slots=True)
class Inference:
    """Per other seat, a weight for each unseen card (1.0: no evidence either way)."""

    seat: int
    unseen: int
    weights: dict[int, list[float]]
    secret_ranks: list[int]  # ranks whose four cards are all unseen (candidates for secrets)
    secret_owners: list[int]  # one entry per hidden secret meld: its owner


def infer(view: SeatView, params: InferenceParams) -> Inference:
    """Read the view's public history into card weights for the other two seats."""
    know = public_knowledge(view)
    seat = know.seat
    others = [(seat + 1) % 3, (seat + 2) % 3]  # in play order: no seat numbers in the dealing
    weights = {s: [1.0] * 52 for s in others}
    if params.enabled:
        _weigh_throws_and_passes(view, weights, params)
        for s in others:
            if know.thrown[s]:
                cap = POINTS[know.thrown[s][-1]]
                w = weights[s]
                for c in range(52):
                    if POINTS[c] > cap:
                        w[c] *= params.above_throw
    unseen = know.unseen
    four_ranks = [r for r in range(13) if all(unseen >> (s * 13 + r) & 1 for s in range(4))]
    owners = [s for s in others for _ in range(know.hidden_secrets[s])]
    return Inference(seat, unseen, weights, four_ranks, owners)


def _weigh_throws_and_passes(
    view: SeatView, weights: dict[int, list[float]], params: InferenceParams
) -> None:
    """Lower the weights of the cards near what each other seat threw (``thrown_near``) and
    near a discard it drew past instead of picking (``passed``)."""
    top: int | None = None
    for step in view.history:
        action, who = step.move.action, step.seat
        if action is Action.DISCARD and step.move.card is not None:
            card = int(step.move.card)
            top = card
            if who in weights:
                w = weights[who]
                for c in indices_of(NEIGHBOURS[card]):
                    w[c] *= params.thrown_near
        elif action is Action.DRAW:
            if who in weights and top is not None:
                w = weights[who]
                for c in indices_of(NEIGHBOURS[top]):
                    w[c] *= params.passed
            top = None
        elif action is Action.PICK:
            top = None


def _block_turns(view: SeatView) -> list[int | None]:
    """The turn of the lay-off that blocks each seat's call now (``None``: not blocked),
    read from the history: turns advance with every discard."""
    owners = {m.id: m.owner for m in view.melds}
    turn = 0
    last: list[int | None] = [None, None, None]
    self_blocks = view.options.self_sapaw_blocks_call
    for step in view.history:
        action, meld = step.move.action, step.move.meld
        if (action is Action.SAPAW or action is Action.PICK) and meld is not None:
            owner = owners.get(meld)
            if owner is not None and (owner != step.seat or self_blocks):
                last[owner] = turn
        elif action is Action.DISCARD:
            turn += 1
    out: list[int | None] = [None, None, None]
    for s in range(3):
        if view.blocked[s]:
            out[s] = last[s] if last[s] is not None else view.turn
    return out


def _answers(view: SeatView) -> dict[int, Action]:
    if view.phase is not Phase.ANSWER:
        return {}
    out: dict[int, Action] = {}
    for step in reversed(view.history):
        action = step.move.action
        if action is Action.CALL:
            break
        if action is Action.CHALLENGE or action is Action.FOLD:
            out[step.seat] = action
    return out


Deal = tuple[list[set[Card]], list[Card], list[list[Card]]]
"""The hidden cards of one world: each seat's hand, the stock bottom first, and the cards of each
secret meld the seat cannot see, in the order of the view's melds."""


class WorldMaker:
    """Samples worlds for one decision; everything independent of the sample is read once."""

    def __init__(self, view: SeatView, params: InferenceParams):
        assert view.seat is not None and view.to_act is not None
        self.view = view
        self.params = params
        self.to_act: int = view.to_act
        self.inference = infer(view, params)
        self.block = _block_turns(view)
        self.answers = _answers(view)
        self.mine = set(view.hand)
        #: per other seat, each card's sampling exponent (the inverse of its weight)
        self.powers = {s: [1.0 / x for x in w] for s, w in self.inference.weights.items()}

    def sample(self, rng: random.Random) -> Hand:
        """One world: a ``Hand`` in the view's exact public state, hidden cards dealt.

        While a call is being answered, a seat called because its count was low, mostly: of
        up to ``caller_tries`` deals, the first in which the caller counts at most
        ``answer_cap``, or that is kept with the chance ``bluff_weight``, is taken (else the
        one where it counts least)."""
        caller = self.view.caller if self.view.phase is Phase.ANSWER else None
        if caller is None or caller == self.inference.seat:
            return self._deal(rng)
        best: tuple[int, Deal] | None = None
        concealed = self.view.options.concealed_melds_count
        for _ in range(self.params.caller_tries):
            deal = self._cards(rng)
            count = count_of(mask_of(deal[0][caller]), concealed_melds_count=concealed)
            if count <= self.params.answer_cap or rng.random() < self.params.bluff_weight:
                return self.world(deal)
            if best is None or count < best[0]:
                best = (count, deal)
        assert best is not None
        return self.world(best[1])

    def _deal(self, rng: random.Random) -> Hand:
        return self.world(self._cards(rng))

    def _cards(self, rng: random.Random) -> Deal:
        """The hidden cards dealt: every seat's hand, the stock, the secret melds' cards."""
        view, inf = self.view, self.inference
        pool = inf.unseen
        secret_cards: list[list[Card]] = []
        if inf.secret_owners:
            ranks = rng.sample(inf.secret_ranks, min(len(inf.secret_ranks), len(inf.secret_owners)))
            for r in ranks:
                four = [DECK[s * 13 + r] for s in range(4)]
                secret_cards.append(four)
                for c in four:
                    pool &= ~(1 << c)
        cards = indices_of(pool)
        hands: list[set[Card]] = [set(), set(), set()]
        hands[inf.seat] = set(self.mine)
        others = [(inf.seat + 1) % 3, (inf.seat + 2) % 3]
        rand = rng.random
        for s in others:
            k = view.hand_sizes[s]
            power = self.powers[s]
            keyed = sorted(cards, key=lambda c: rand() ** power[c], reverse=True)
            hands[s] = {DECK[c] for c in keyed[:k]}
            cards = keyed[k:]
        rng.shuffle(cards)
        return hands, [DECK[c] for c in cards[: view.stock]], secret_cards

    def world(self, deal: Deal) -> Hand:
        """The world of a deal: a ``Hand`` in the view's public state. A sampler that deals
        otherwise (bench/expert_bound.py deals the true cards) builds its worlds here too."""
        view = self.view
        hands, stock, secret_cards = deal
        secrets = iter(secret_cards)
        melds = []
        for m in view.melds:
            cards_of_meld = list(m.cards)
            if not cards_of_meld:
                cards_of_meld = next(secrets, [])
            melds.append(TableMeld(m.id, m.owner, cards_of_meld, m.secret, dict(m.laid_off)))
        return Hand.restore(
            options=view.options, dealer=view.dealer, hands=hands, stock=stock,
            discards=view.discards, melds=melds, to_act=self.to_act, phase=view.phase,
            turn=view.turn, caller=view.caller, answers=self.answers, opened=view.opened,
            block_turns=self.block,
        )
