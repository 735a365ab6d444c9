"""``TongitsEnv``: one hand of Tongits as a PettingZoo AEC environment (three agents).

The agents are ``seat_0``, ``seat_1``, ``seat_2``; the engine says whose turn it is (the
answers to a call included; seats that have not opened fold on their own, RULES.md §6.2).
Each observation is ``{"observation": encode(view), "action_mask": mask}`` from that seat's
view (``observation.py``: the engine's ``LiveView``, which says what ``seat_view`` says); the
mask is its legal moves in the fixed action space of ``actions.py``, all zeros when it is not
the seat's turn. A hand is one episode: when it ends every agent gets its chips of the
RULES.md §9 settlement as its reward (the ante's pot belongs to a match, not to a hand: it is
not in the reward), and all three terminate.

Chance is input: ``reset(seed=s)`` deals hand 0 of the match seed ``s`` (``deck_for(s, 0)``,
the dealer of ``first_dealer``); a later ``reset()`` without a seed deals that match's next
hand, its dealer the next seat. The same seed and the same actions replay the same hand, and
``record()`` is its hand record (docs/RECORD.md: ``tongits replay`` plays it back).
``reset(options={"deck": [...], "dealer": d})`` deals a given deck instead; other keys of
``options`` are ignored, as Gymnasium's ``reset`` does.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from tongits.engine import (
    Card,
    Hand,
    HandRecord,
    LiveView,
    Move,
    Options,
    Phase,
    deck_for,
    hand_record,
)
from tongits.engine.hand import SHARED_LEGAL
from tongits.engine.match import first_dealer

from .actions import ACTIONS, ActionError, action_index, describe, indices_of, legal_indices
from .observation import OBSERVATION_SIZE, Encoder
from .wrappers import InBounds, InOrder

AGENTS = ("seat_0", "seat_1", "seat_2")
_SEATS = {agent: seat for seat, agent in enumerate(AGENTS)}
ObservationDict = dict[str, npt.NDArray[Any]]
_INT8 = np.dtype(np.int8)
_OVER = Phase.OVER


def observation_space() -> spaces.Dict:
    """The space of one agent's observations."""
    return spaces.Dict({
        "observation": spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32),
        "action_mask": spaces.Box(0, 1, (ACTIONS,), np.int8),
    })


def mask_of(legal: Iterable[int]) -> npt.NDArray[np.int8]:
    """The action mask of a seat's legal actions (``legal_actions``, or their indices)."""
    ones = bytearray(ACTIONS)
    for index in legal:
        ones[index] = 1
    return np.ndarray(ACTIONS, _INT8, ones)  # (``frombuffer`` takes twice as long)


#: For each tuple of legal moves that many states share (the engine's ``SHARED_LEGAL``, by
#: ``id``: a turn's start with nothing to pick, an answer to a call; about a third of a hand's
#: decisions), its ``legal_indices`` and mask, worked out once: a state's mask is then a copy.
_SHARED_MASKS = {id(moves): ((indices := [action_index(m, (), None) for m in moves], moves),
                             mask_of(indices)) for moves in SHARED_LEGAL}


class TongitsEnv(AECEnv[str, ObservationDict, int]):
    """Tongits hands under the table options ``options`` (RULES.md §10), one hand an episode.

    ``seed`` is the match seed of the first ``reset()`` that gives none (None: a random one).
    ``hand`` is the engine's hand being played (read it, never change it: the environment's
    moves go through ``step``)."""

    metadata = {"name": "tongits_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, options: Options | None = None, seed: int | str | None = None) -> None:
        super().__init__()
        self.options = options or Options()
        self.possible_agents = list(AGENTS)
        self.observation_spaces = {a: observation_space() for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(ACTIONS) for a in AGENTS}
        self.match_seed: int | str = seed if seed is not None else secrets.randbits(63)
        self.hand_number = -1
        self.hand = Hand(deck_for(self.match_seed, 0), first_dealer(self.match_seed),
                         self.options)
        #: the legal moves of the seat to act and their action indices (``legal_indices``)
        self._legal: tuple[list[int], Sequence[Move]] | None = None
        #: the match seed whose first dealer is ``_first_dealer`` (a reset asks each time)
        self._dealt: tuple[int | str, int] | None = None
        #: the observations of ``hand`` and each seat's live view of it (``_read``)
        self._encoded = self.hand
        self._encoder = Encoder()
        self._views = _live_views(self.hand)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | str | None = None,
              options: dict[str, Any] | None = None) -> None:
        deck: Sequence[Card | str] | None = None
        dealer = 0
        if options and "deck" in options:
            deck, dealer = options["deck"], options.get("dealer", 0)
        elif seed is not None:
            self.match_seed, self.hand_number = seed, 0
        else:
            self.hand_number += 1
        if deck is None:
            deck = deck_for(self.match_seed, self.hand_number)
            dealer = (self._first_dealer() + self.hand_number) % 3
        self.hand = Hand(deck, dealer, self.options)
        self._legal = None
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self.hand.to_act]

    def _first_dealer(self) -> int:
        """``first_dealer(self.match_seed)``, worked out once per seed."""
        seed = self.match_seed
        if self._dealt is None or self._dealt[0] != seed:
            self._dealt = (seed, first_dealer(seed))
        return self._dealt[1]

    def observe(self, agent: str) -> ObservationDict:
        seat = _SEATS[agent]
        hand = self.hand
        if hand is not self._encoded:
            self._read(hand)
        view = self._views[seat]
        if seat == hand.to_act and hand.phase is not _OVER:  # (no other seat has a move)
            legal = hand.legal()  # (the view's ``legal``: the moves of this seat)
            shared = _SHARED_MASKS.get(id(legal))
            if shared is None:
                indexed = self._legal = indices_of(legal, view)
                mask = mask_of(indexed[0])
            else:
                self._legal, mask = shared[0], shared[1].copy()
        else:
            mask = np.zeros(ACTIONS, _INT8)
        return {"observation": self._encoder.encode(view), "action_mask": mask}

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        """``AECEnv.agent_iter``'s agents, as a generator: its iterator's ``__next__`` is a
        Python call a step, a generator's next agent is not."""
        while self.agents and max_iter > 0:
            max_iter -= 1
            yield self.agent_selection

    def last(self, observe: bool = True) -> tuple[ObservationDict | None, float, bool, bool,
                                                  dict[str, Any]]:
        agent = self.agent_selection  # (``AECEnv.last``, less its assertion: a step a time)
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def _read(self, hand: Hand) -> None:
        """A new encoder of ``hand``'s views and the seats' live views: one each per hand,
        since the encoder reads each step once (new ones when ``hand`` is not the hand they
        read, however it came to be set)."""
        self._encoded, self._encoder, self._views = hand, Encoder(), _live_views(hand)

    def legal(self) -> dict[int, Move]:
        """The legal moves of the agent to act, by action index (the mask's ones)."""
        indices, moves = self._legal_now()
        return dict(zip(indices, moves, strict=True))

    def _legal_now(self) -> tuple[list[int], Sequence[Move]]:
        if self._legal is None:
            hand = self.hand
            if hand is not self._encoded:
                self._read(hand)
            self._legal = legal_indices(self._views[hand.to_act])
        return self._legal

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ActionError(f"{agent} is to act: None is only for a finished agent")
        indices, moves = self._legal or self._legal_now()
        try:
            move = moves[indices.index(action)]
        except ValueError:
            what = describe(int(action)) if 0 <= action < ACTIONS else "no action at all"
            raise ActionError(f"{agent} may not play action {action} ({what}) now") from None
        # One of the engine's legal moves of this very state: the check is not made twice.
        hand = self.hand
        hand.apply_legal(hand.to_act, move)
        if hand.phase is _OVER:
            self._after_move(agent)
        else:  # (``_after_move`` of a hand that goes on, without the call: once a step)
            self._legal = None
            self.agent_selection = AGENTS[hand.to_act]

    def play(self, move: Move) -> None:
        """``step`` with the move itself rather than its index (a bot's move, a scripted
        hand): ``IllegalMove`` if the seat to act may not play it, and nothing changes."""
        self.hand.apply(self.hand.to_act, move)
        self._after_move(self.agent_selection)

    def _after_move(self, agent: str) -> None:
        hand = self.hand
        self._legal = None
        self._cumulative_rewards[agent] = 0.0
        if hand.over:
            assert hand.result is not None
            self.rewards = {a: float(c) for a, c in zip(AGENTS, hand.result.chips, strict=True)}
            self.terminations = dict.fromkeys(AGENTS, True)
            self.agent_selection = AGENTS[(AGENTS.index(agent) + 1) % 3]
            self._accumulate_rewards()
        else:  # (the rewards stay the zeros of ``reset``: only the end of a hand has any)
            self.agent_selection = AGENTS[hand.to_act]

    def record(self) -> HandRecord:
        """The hand record of the hand being played (docs/RECORD.md): ``record().replay()``
        plays it again on the engine, ``json.dumps(hand_record(env.hand))`` is the file
        ``tongits replay`` reads."""
        return HandRecord.from_dict(hand_record(self.hand))


def _live_views(hand: Hand) -> tuple[LiveView, ...]:
    return (LiveView(hand, 0), LiveView(hand, 1), LiveView(hand, 2))


def env(options: Options | None = None, seed: int | str | None = None) -> AECEnv[
        str, ObservationDict, int]:
    """``TongitsEnv`` in PettingZoo's usual wrappers (an action out of the space, or a call
    out of order, is refused with the wrapper's message); ``wrappers.py`` says why they are
    subclasses of them."""
    return InOrder(InBounds(TongitsEnv(options, seed), ACTIONS))
